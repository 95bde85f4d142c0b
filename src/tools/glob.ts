// glob (SPEC §4.5): files below a directory whose path (relative to it) matches a
// picomatch pattern, newest first. Same walk and ignore rules as grep.
import { p } from "./params.ts";
import { join } from "node:path";
import { distance } from "fastest-levenshtein";
import { toolText } from "./_text.ts" with { type: "macro" };
import { defineTool, type ToolContext, type ToolOutput } from "./tool.ts";
import { spillFile } from "../core/truncate.ts";
import { count, makePlan, pathShower, quoted, shownPath, timeLimitMs, type SearchPlan } from "../search/plan.ts";
import { plainName, scanGlob, type Seen } from "../search/globscan.ts";
import { suggestions } from "../core/suggest.ts";
import { summarize, type Pruned } from "../search/skipped.ts";
import { grouped } from "../core/text.ts";

const description = toolText("glob");

/** Paths shown; the rest go to the spill file. */
export const MAX_SHOWN = 100;

export const Parameters = p.object({
  pattern: p.string({ minLength: 1, description: 'Glob pattern to match file paths against, relative to path (e.g. "**/*.ts").' }),
  path: p.optional(p.string({ description: "Directory to search in. Defaults to the working directory." })),
  head_limit: p.optional(p.int({ minimum: 1, description: "Show at most this many paths: a page. Default 100." })),
  offset: p.optional(p.int({ minimum: 0, description: "Skip this many paths before the page (with head_limit: page through the results)." })),
  no_ignore: p.optional(p.boolean({ description: "Also list what is skipped by default: files ignore files exclude, and noise directories (node_modules, .git, __pycache__, virtualenvs, caches)." })),
});

export default defineTool({
  name: "glob",
  description: description.trim(),
  parameters: Parameters,
  primary: "pattern",
  positionals: ["pattern", "path"],
  examples: ["kt glob 'src/**/*.ts'", "kt glob '*.{json,yaml}' config", "kt glob 'node_modules/zod/**/package.json'"],
  annotations: { readOnlyHint: true, destructiveHint: false },
  async execute(input, ctx) {
    const plan = makePlan(ctx, { tool: "glob", path: input.path, glob: input.pattern, basename: false, noIgnore: input.no_ignore });
    if (plan.missing) return noFiles(ctx, plan, quoted(input.pattern), { deeper: 0, near: new Map(), all: new Map(), names: [] }, [], false, 1, []);
    const found = await scanGlob({
      real: plan.real,
      walkRoot: plan.walkRoot,
      walkRel: plan.walkRel,
      glob: plan.glob!,
      hidden: plan.hidden,
      noise: [...plan.noise],
      evidence: plan.evidence,
      exempt: [...plan.exempt],
      ignores: plan.ignores,
      deadline: Date.now() + (plan.deadline - performance.now()),
      statRelative: plan.walkRoot === process.cwd(),
      confine: plan.confine,
    });
    if (found.rels.length === 0) return noFiles(ctx, plan, quoted(input.pattern), found.seen, found.unreadable, found.timedOut, found.threads, found.pruned);
    const skipped = summarize(found.pruned, (rel) => shownPath(ctx, plan, rel));
    const out =
      input.head_limit !== undefined || input.offset !== undefined
        ? paged(ctx, plan, quoted(input.pattern), found.rels, found.unreadable, found.timedOut, found.threads, input.offset ?? 0, input.head_limit ?? MAX_SHOWN)
        : render(ctx, plan, quoted(input.pattern), found.rels, found.unreadable, found.timedOut, found.threads);
    return { ...out, skipped };
  },
});

function notes(ctx: ToolContext, plan: SearchPlan, unreadable: string[], timedOut: boolean): string[] {
  const out: string[] = [];
  if (unreadable.length > 0) {
    const paths = unreadable.map((rel) => shownPath(ctx, plan, rel)).sort();
    const listed = paths.slice(0, 5).join(", ") + (paths.length > 5 ? ` and ${paths.length - 5} more` : "");
    out.push(`[${count(paths.length, "directory", "directories")} could not be read (permission denied) and ${paths.length === 1 ? "was" : "were"} not searched: ${listed}.]`);
  }
  if (timedOut) {
    out.push(`[The walk stopped at the ${Math.round(timeLimitMs() / 100) / 10} s time limit, so this list is partial. Narrow the pattern or path to search fewer directories.]`);
  }
  return out;
}

/** What the shown paths may take, well under the 64 KB backstop. */
const SHOWN_BYTES = 56 * 1024;

function render(ctx: ToolContext, plan: SearchPlan, pattern: string, rels: string[], unreadable: string[], timedOut: boolean, threads: number): ToolOutput {
  const show = pathShower(ctx, plan);
  const n = rels.length;
  const partial = timedOut ? " (partial)" : "";
  const header = n === 1 ? `1 file matches "${pattern}"${partial}:` : `${count(n, "file", "files")} match "${pattern}" (newest first)${partial}:`;
  const paths = rels.map(show);
  const after = notes(ctx, plan, unreadable, timedOut);
  const title = `Glob ${pattern} · ${count(n, "file", "files")}`;
  let shown = 0;
  for (let bytes = 0; shown < Math.min(n, MAX_SHOWN); shown++) {
    bytes += Buffer.byteLength(paths[shown]!) + 1;
    if (bytes > SHOWN_BYTES && shown > 0) break;
  }
  if (shown === n) return { content: [header, ...paths, ...after].join("\n"), title, files: n, paths, extra: { partial: timedOut, threads } };
  const full = [header, ...paths].join("\n");
  const spillPath = spillFile(ctx, "glob", `${full}\n`);
  const tail = spillPath
    ? `[Showing ${shown} of ${grouped(n)}. Full list: ${spillPath} — or narrow the pattern.]`
    : `[Showing ${shown} of ${grouped(n)} (the full list could not be saved). Narrow the pattern.]`;
  return {
    content: [header, ...paths.slice(0, shown), ...after, tail].join("\n"),
    title: `${title} (showing ${shown})`,
    files: n,
    paths: paths.slice(0, shown),
    truncation: {
      originalBytes: Buffer.byteLength(full),
      originalLines: n + 1,
      shownHeadLines: shown + 1,
      shownTailLines: 0,
      omittedLines: n - shown,
      ...(spillPath ? { spillPath } : {}),
    },
    extra: { partial: timedOut, threads },
  };
}

/** A page of the list: paths [offset, offset + limit), fewer if they would not fit. */
function paged(ctx: ToolContext, plan: SearchPlan, pattern: string, rels: string[], unreadable: string[], timedOut: boolean, threads: number, offset: number, limit: number): ToolOutput {
  const show = pathShower(ctx, plan);
  const n = rels.length;
  const partial = timedOut ? " (partial)" : "";
  const header = n === 1 ? `1 file matches "${pattern}"${partial}:` : `${count(n, "file", "files")} match "${pattern}" (newest first)${partial}:`;
  const paths: string[] = [];
  for (let i = offset, bytes = 0; i < Math.min(n, offset + limit); i++) {
    const path = show(rels[i]!);
    bytes += Buffer.byteLength(path) + 1;
    if (bytes > SHOWN_BYTES && paths.length > 0) break;
    paths.push(path);
  }
  const first = offset + 1;
  const last = offset + paths.length;
  const tail: string[] = [];
  if (paths.length === 0) tail.push(`[offset ${offset} is past the last of ${count(n, "file", "files")}. Use a smaller offset.]`);
  else if (last < n) tail.push(`[Showing ${first === last ? `file ${first}` : `files ${first}–${last}`} of ${grouped(n)}. Use offset=${last} for the next page.]`);
  return {
    content: [header, ...paths, ...notes(ctx, plan, unreadable, timedOut), ...tail].join("\n"),
    title: `Glob ${pattern} · ${count(n, "file", "files")} (showing ${first}–${last})`,
    files: n,
    paths,
    extra: { partial: timedOut, threads },
  };
}

function wantedExtension(glob: string): string | null {
  const m = /\.([A-Za-z0-9_-]+)$/.exec(glob);
  return m ? `.${m[1]}` : null;
}

function noFiles(ctx: ToolContext, plan: SearchPlan, pattern: string, seen: Seen, unreadable: string[], timedOut: boolean, threads: number, pruned: Pruned): ToolOutput {
  const head = `No files match "${pattern}" under ${plan.abs}`;
  let text: string;
  if (plan.missing) {
    const near = suggestions(ctx, join(plan.abs, plan.walkRel));
    text = `${head}: ${plan.walkRel} is not a directory there.${near.length ? ` Did you mean one of these? ${near.join(", ")}` : " Check the pattern's directories, or glob a wider pattern first."}`;
  } else if (timedOut) {
    text = `${head} before the ${Math.round(timeLimitMs() / 100) / 10} s time limit, so the search is partial. Narrow the pattern or path to search fewer directories.`;
  } else if (seen.deeper > 0) {
    text = `${head} at the top level ("*" does not cross directories). "**/${plan.glob}" matches ${count(seen.deeper, "file", "files")} at any depth.`;
  } else if (plainName(plan.glob!)) {
    const show = pathShower(ctx, plan);
    const near = seen.names.map((n) => show(n.rel));
    text = `${head}.${near.length ? ` Files with a similar name: ${near.join(", ")}.` : ` No file here has a name like ${plainName(plan.glob!)}; check the name, or search a wider path.`}`;
  } else {
    text = `${head}.${extensionHint(plan.glob!, seen)}`;
  }
  const skipped = summarize(pruned, (rel) => shownPath(ctx, plan, rel));
  return {
    content: [text, ...(skipped.line ? [skipped.line] : []), ...notes(ctx, plan, unreadable, false)].join("\n"),
    title: `Glob ${pattern} · no files`,
    files: 0,
    paths: [],
    skipped,
    extra: { partial: timedOut, threads },
  };
}

function extensionHint(glob: string, seen: Seen): string {
  const wanted = wantedExtension(glob);
  const pool = seen.near.size > 0 ? seen.near : seen.all;
  if (!wanted || pool.size === 0) return " Check the pattern, or search a wider path.";
  const byCount = [...pool.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  let best: [string, number, number] | null = null;
  for (const [ext, n] of byCount) {
    const d = distance(ext.toLowerCase(), wanted.toLowerCase());
    if (!best || d < best[2]) best = [ext, n, d];
  }
  // Near means a typo or a sibling (.tsx/.ts, .yml/.yaml), not any two-letter extension.
  if (best && (best[2] <= 1 || (best[2] <= 2 && best[0][1] === wanted[1]))) {
    return ` Nearest existing extension: ${best[0]} (${count(best[1], "file", "files")}).`;
  }
  const common = byCount.slice(0, 3).map(([ext, n]) => `${ext} (${count(n, "file", "files")})`).join(", ");
  return ` No file here has the extension ${wanted}; the most common are ${common}.`;
}
