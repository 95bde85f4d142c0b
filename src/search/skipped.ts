// What a search did not look at (SPEC §8.4): the directories pruned at the walk's boundary
// (noise, or excluded by an ignore file), gathered by whichever walk decided them — the
// built-in engine's and glob's own, or, beside rg, a walk of directories alone that makes
// the same decisions — and the one place that writes the "Not searched" line from them.
import { walk, type PruneReason } from "./walk.ts";
import { count } from "./plan.ts";
import type { SearchPlan } from "./plan.ts";
import type { ToolMetadata } from "../core/result.ts";

/** Pruned directories as "rel\0reason" strings (rel relative to plan.real): cheap to send
 * between threads and to sort. */
export type Pruned = string[];

export function pruneRecorder(into: Pruned, walkRel: string): (rel: string, why: PruneReason) => void {
  return walkRel === "" ? (rel, why) => into.push(`${rel}\0${why}`) : (rel, why) => into.push(`${walkRel}/${rel}\0${why}`);
}

/** The walk's boundary beside rg: the directories rg prunes itself (ignore files, noise
 * names) and those only kt's rule prunes (noise by evidence), from a walk of directories
 * alone; `evidence`: the latter's paths relative to plan.real, whose files rg reports and
 * kt drops. A directory .ktignore excludes is reported too, and its files dropped by the
 * rg engine's PathChecker as before. */
export interface Boundary {
  pruned: Pruned;
  evidence: Set<string>;
}

export function walkBoundary(plan: SearchPlan): Boundary {
  const pruned: Pruned = [];
  const evidence = new Set<string>();
  const record = pruneRecorder(pruned, plan.walkRel);
  walk(
    {
      root: plan.walkRoot,
      hidden: plan.hidden,
      noise: plan.noise,
      evidence: plan.evidence,
      exempt: plan.exempt,
      ignores: plan.ignores,
      dirsOnly: true,
      deadline: plan.deadline,
      onPrune: (rel, why) => {
        record(rel, why);
        // A noise name rg knows (its -g globs); any other noise directory is one by evidence.
        if (why === "noise" && !plan.noise.has(rel.slice(rel.lastIndexOf("/") + 1))) evidence.add(plan.walkRel ? `${plan.walkRel}/${rel}` : rel);
      },
      ...(plan.confine === null ? {} : { confine: plan.confine }),
    },
    () => undefined,
  );
  return { pruned, evidence };
}

/** What metadata.skipped holds: counts, the first paths (as shown) with why, and the "Not
 * searched" line ("" when nothing was left out). */
export type SkippedMeta = NonNullable<ToolMetadata["skipped"]>;

/** Paths listed in metadata.skipped; the counts go on. */
const MAX_META_PATHS = 100;
/** Paths named in the line, per group. */
const NAMED = 2;
/** The ignore files in the order the line names them. */
const FILE_ORDER = [".gitignore", ".ignore", ".rgignore", ".ktignore", ".git/info/exclude"];

/** Shallow first (the likeliest to be named as a path), then by path. */
function byDepth(a: string, b: string): number {
  const da = a.split("/").length;
  const db = b.split("/").length;
  return da - db || (a < b ? -1 : a > b ? 1 : 0);
}

function andList(items: string[]): string {
  return items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}`;
}

/** The pruned directories as metadata.skipped and the line; `show` turns a path relative to
 * plan.real into the path the model sees. Duplicates (two threads, two walks) count once. */
export function summarize(pruned: Pruned, show: (rel: string) => string): SkippedMeta {
  const reasons = new Map<string, string>();
  for (const entry of pruned) {
    const cut = entry.indexOf("\0");
    reasons.set(entry.slice(0, cut), entry.slice(cut + 1));
  }
  const rels = [...reasons.keys()].sort(byDepth);
  const ignored = rels.filter((r) => reasons.get(r) !== "noise");
  const noise = rels.filter((r) => reasons.get(r) === "noise");
  const shown = (r: string) => `${show(r)}/`;
  const parts: string[] = [];
  if (ignored.length > 0) {
    const files = new Set(ignored.map((r) => reasons.get(r)!));
    const by = andList(FILE_ORDER.filter((f) => files.has(f)));
    const names = ignored.slice(0, NAMED).map(shown).join(", ") + (ignored.length > NAMED ? ", …" : "");
    parts.push(`${count(ignored.length, "directory", "directories")} ignored by ${by} (${names})`);
  }
  if (noise.length === 1) parts.push(shown(noise[0]!));
  else if (noise.length > 1) {
    const names = noise.slice(0, NAMED).map(shown).join(", ") + (noise.length > NAMED ? ", …" : "");
    parts.push(`${count(noise.length, "dependency or cache directory", "dependency and cache directories")} (${names})`);
  }
  const total = rels.length;
  const line = total === 0 ? "" : `Not searched: ${parts.join(" and ")}. Name ${total === 1 ? "it" : "one"} as path, or set no_ignore.`;
  return {
    directories: total,
    ignored: ignored.length,
    noise: noise.length,
    paths: rels.slice(0, MAX_META_PATHS).map((r) => ({ path: shown(r), reason: reasons.get(r)! })),
    line,
  };
}
