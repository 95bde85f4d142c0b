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

/**
 * The directories shallow first (the likeliest to be named as a path), then by path, each
 * with why. Sorted as strings, without a comparator: each is keyed once by its depth (one
 * character in front) and its reason (behind a NUL, which sorts before any character of a
 * path), so that the order is that of (depth, path). A comparator splitting both paths at
 * each comparison took 19 ms, after the search and on every thread count, for the 3,119
 * directories a search of the Python standard library prunes; this takes about 2.
 */
function byDepth(reasons: ReadonlyMap<string, string>): { rel: string; why: string }[] {
  const keys: string[] = [];
  for (const [rel, why] of reasons) {
    let depth = 1;
    for (let at = rel.indexOf("/"); at !== -1; at = rel.indexOf("/", at + 1)) depth++;
    keys.push(`${String.fromCharCode(depth)}${rel}\0${why}`);
  }
  keys.sort();
  const out: { rel: string; why: string }[] = [];
  for (const key of keys) {
    const cut = key.indexOf("\0");
    out.push({ rel: key.slice(1, cut), why: key.slice(cut + 1) });
  }
  return out;
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
  const rels = byDepth(reasons);
  const ignored: string[] = [];
  const files = new Set<string>();
  let noise = 0;
  const firstNoise: string[] = [];
  for (const { rel, why } of rels) {
    if (why === "noise") {
      if (++noise <= NAMED) firstNoise.push(rel);
    } else {
      ignored.push(rel);
      files.add(why);
    }
  }
  const shown = (r: string) => `${show(r)}/`;
  const parts: string[] = [];
  if (ignored.length > 0) {
    const by = andList(FILE_ORDER.filter((f) => files.has(f)));
    const names = ignored.slice(0, NAMED).map(shown).join(", ") + (ignored.length > NAMED ? ", …" : "");
    parts.push(`${count(ignored.length, "directory", "directories")} ignored by ${by} (${names})`);
  }
  if (noise === 1) parts.push(shown(firstNoise[0]!));
  else if (noise > 1) {
    const names = firstNoise.map(shown).join(", ") + (noise > NAMED ? ", …" : "");
    parts.push(`${count(noise, "dependency or cache directory", "dependency and cache directories")} (${names})`);
  }
  const total = rels.length;
  const line = total === 0 ? "" : `Not searched: ${parts.join(" and ")}. Name ${total === 1 ? "it" : "one"} as path, or set no_ignore.`;
  return {
    directories: total,
    ignored: ignored.length,
    noise,
    paths: rels.slice(0, MAX_META_PATHS).map(({ rel, why }) => ({ path: shown(rel), reason: why })),
    line,
  };
}
