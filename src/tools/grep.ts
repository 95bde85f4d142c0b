// grep (SPEC §4.4, §7.3): regex search over the files below a path, grouped by file,
// newest files first. Two engines, one output: the built-in engine and ripgrep
// (search/engine.ts) feed the same collector, and the text is written from it in
// exactly one place, below; the no-match hint comes from search/nearmiss.ts.
import { p, type Infer } from "./params.ts";
import { toolText } from "./_text.ts" with { type: "macro" };
import { defineTool, type ToolContext, type ToolOutput } from "./tool.ts";
import { spillFile } from "../core/truncate.ts";
import { join } from "node:path";
import { compilePattern, escapeLiteral, type Cases, type Compiled } from "../search/regex.ts";
import { count, makePlan, pathShower, quoted, shownPath, timeLimitMs, type SearchOutcome, type SearchPlan } from "../search/plan.ts";
import { displayLine, type FileHits, type Hit } from "../search/collect.ts";
import { rawLines, withContext } from "../search/context.ts";
import { summarize } from "../search/skipped.ts";
import { searchFile } from "../search/searcher.ts";
import { chooseEngine, search, type Engine, type Run } from "../search/engine.ts";
import { nearMissHint, samePassProbe } from "../search/nearmiss.ts";
import { grouped } from "../core/text.ts";

const description = toolText("grep");

/** Matching lines shown; the rest go to the spill file. */
export const MAX_SHOWN = 100;

const count0 = (what: string) => p.optional(p.int({ minimum: 0, description: what }));

export const Parameters = p.object({
  pattern: p.string({ minLength: 1, description: "Regular expression to search for (the syntax ripgrep and JavaScript share). Case-insensitive unless it contains an uppercase letter." }),
  path: p.optional(p.string({ description: "Directory or file to search in. Defaults to the working directory." })),
  include: p.optional(p.string({ description: 'Glob filter for file names, e.g. "*.ts" or "src/**/*.py". A glob without "/" matches file names at any depth.' })),
  output_mode: p.optional(
    p.enum(["content", "files_with_matches", "count"], { description: '"content" (default): matching lines grouped by file; "files_with_matches": only the paths; "count": each path with its number of matching lines.' }),
  ),
  context: count0("Lines of context to show before and after each matching line (content mode)."),
  before: count0("Lines of context to show before each matching line (content mode)."),
  after: count0("Lines of context to show after each matching line (content mode)."),
  case_sensitive: p.optional(p.boolean({ description: "true: match case exactly; false: ignore case. Omit for smart case." })),
  fixed_strings: p.optional(p.boolean({ description: "Treat pattern as literal text, not a regular expression." })),
  multiline: p.optional(p.boolean({ description: 'Let matches span lines: "." also matches a newline, and \\n matches one.' })),
  type: p.optional(p.string({ description: 'File type to search, as ripgrep names them: "py", "js", "ts", "rust", "go", "java", "md", …' })),
  head_limit: p.optional(p.int({ minimum: 1, description: "Show at most this many entries (matching lines, or files): a page. Default 100." })),
  offset: count0("Skip this many entries before the page (with head_limit: page through the results)."),
  no_ignore: p.optional(p.boolean({ description: "Also search what is skipped by default: files ignore files exclude, and noise directories (node_modules, .git, __pycache__, virtualenvs, caches)." })),
});

/** Claude Code's Grep spellings: plain renames here; "-i" and "-n" in normalize. */
const ALIASES = { glob: "include", "-A": "after", "-B": "before", "-C": "context" } as const;

/** "-i": true is case_sensitive: false; "-n" (line numbers) is always on in content mode. */
function normalize(input: Record<string, unknown>): string | null {
  if (typeof input["-i"] === "boolean") {
    if (input["-i"]) {
      if (input.case_sensitive === true) return 'parameters "case_sensitive" and "-i" say opposite things. Please rewrite the input with only "case_sensitive"';
      input.case_sensitive = false;
    }
    delete input["-i"];
  }
  if (typeof input["-n"] === "boolean") delete input["-n"];
  return null;
}

export default defineTool({
  name: "grep",
  description: description.trim(),
  parameters: Parameters,
  primary: "pattern",
  positionals: ["pattern", "path"],
  examples: [
    "kt grep 'TODO|FIXME' src",
    "kt grep createServer --include '*.ts'",
    "kt grep 'def main' --type py --output-mode files_with_matches",
    "kt grep 'fn parse' --context 3 --head-limit 20",
    "KT_GREP_ENGINE=builtin kt grep 'fn [a-z_]+' src",
  ],
  aliases: ALIASES,
  normalize,
  annotations: { readOnlyHint: true, destructiveHint: false },
  async execute(input, ctx) {
    const started = performance.now();
    const cases: Cases = input.case_sensitive === undefined ? "smart" : input.case_sensitive ? "sensitive" : "insensitive";
    const compiled = compilePattern(input.fixed_strings ? escapeLiteral(input.pattern) : input.pattern, cases, input.multiline ?? false);
    const plan = makePlan(ctx, { tool: "grep", path: input.path, glob: input.include, basename: true, type: input.type, noIgnore: input.no_ignore }, started);
    const view = viewOf(input);
    const engine = chooseEngine(ctx);
    const run = await search(engine, plan, compiled, ctx, samePassProbe(engine, compiled));
    if (run.collector.lines === 0) return await noMatches(ctx, plan, compiled, input.pattern, input.include, engine, run);
    return render(ctx, plan, quoted(input.pattern), run, view, compiled);
  },
});

/** How the matches are shown: grep's output options. */
interface View {
  mode: "content" | "files_with_matches" | "count";
  before: number;
  after: number;
  /** Entries per page; paging (head_limit or offset given) replaces the spill file. */
  limit: number;
  offset: number;
  paging: boolean;
}

function viewOf(input: Infer<typeof Parameters>): View {
  const paging = input.head_limit !== undefined || input.offset !== undefined;
  return {
    mode: input.output_mode ?? "content",
    before: input.before ?? input.context ?? 0,
    after: input.after ?? input.context ?? 0,
    limit: input.head_limit ?? MAX_SHOWN,
    offset: input.offset ?? 0,
    paging,
  };
}

function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

/** One entry of the listing (a matching line in content mode, a file in the others): the
 * unit head_limit, offset and the 100-entry cap count. */
interface Entry {
  file: FileHits;
  /** The matching line, in content mode. */
  hit?: Hit;
}

function entriesOf(files: FileHits[], view: View): Entry[] {
  const out: Entry[] = [];
  if (view.mode !== "content") {
    // Past the kept lines (a file left with none of its lines), which files are still
    // listed depends on the order the search found them in, so on its threads: the
    // listing ends where the kept lines do, which is the same in any order.
    for (const file of files) {
      if (file.cut && file.hits.length === 0) break;
      out.push({ file });
    }
    return out;
  }
  for (const file of files) {
    for (const hit of file.hits) out.push({ file, hit });
    // A file cut short (too many matches kept) ends what can be listed in order.
    if (file.cut) break;
  }
  return out;
}

/** The lines showing `entries` (in display order). */
function linesOf(ctx: ToolContext, plan: SearchPlan, entries: Entry[], view: View, re: RegExp): string[] {
  const lines: string[] = [];
  if (view.mode === "files_with_matches") return entries.map((e) => shownPath(ctx, plan, e.file.rel));
  if (view.mode === "count") return entries.map((e) => `${shownPath(ctx, plan, e.file.rel)}: ${e.file.count}`);
  for (let i = 0; i < entries.length; ) {
    const file = entries[i]!.file;
    const hits: Hit[] = [];
    for (; i < entries.length && entries[i]!.file === file; i++) hits.push(entries[i]!.hit!);
    lines.push(shownPath(ctx, plan, file.rel));
    if (view.before === 0 && view.after === 0) {
      for (const hit of hits) lines.push(`  ${hit.line}: ${hit.text}`);
      continue;
    }
    const abs = plan.file ? plan.real : join(plan.real, file.rel);
    for (const l of withContext(abs, hits, view.before, view.after, (raw) => displayLine(raw, re, true), plan.confine)) {
      lines.push(l === null ? "--" : `  ${l.line}${l.match ? ":" : "-"} ${l.text}`);
    }
  }
  return lines;
}

function notes(ctx: ToolContext, plan: SearchPlan, outcome: SearchOutcome): string[] {
  const out: string[] = [];
  if (outcome.unreadable.length > 0) {
    const paths = outcome.unreadable.map((rel) => shownPath(ctx, plan, rel)).sort();
    const listed = paths.slice(0, 5).join(", ") + (paths.length > 5 ? ` and ${paths.length - 5} more` : "");
    out.push(`[${count(paths.length, "path", "paths")} could not be read (permission denied) and ${paths.length === 1 ? "was" : "were"} not searched: ${listed}.]`);
  }
  const skipped = outcome.skipped ?? [];
  if (skipped.length > 0) {
    const paths = skipped.map((rel) => shownPath(ctx, plan, rel)).sort();
    const listed = paths.slice(0, 5).join(", ") + (paths.length > 5 ? ` and ${paths.length - 5} more` : "");
    out.push(
      `[${count(paths.length, "file", "files")} could not be searched completely (the pattern backtracked too long on a line, or reading failed), so these results are partial: ${listed}. Simplify the pattern (no nested repetition such as (a+)+), or search ${paths.length === 1 ? "that file" : "those files"} with rg through bash.]`,
    );
  }
  if (outcome.timedOut) {
    out.push(`[The search stopped at the ${seconds(timeLimitMs())} time limit, so these results are partial. Narrow path or include to search fewer files.]`);
  }
  return out;
}

/** metadata.extra: `partial` when the time limit stopped the search or a file was skipped. */
function extraOf(run: Run): Record<string, unknown> {
  const { outcome } = run;
  const skipped = outcome.skipped?.length ?? 0;
  return {
    engine: run.engine,
    partial: outcome.timedOut || skipped > 0,
    unreadable: outcome.unreadable.length,
    ...(skipped > 0 ? { skipped } : {}),
    ...(run.threads ? { threads: run.threads } : {}),
  };
}

/** What the shown lines may take, well under the 64 KB backstop (which would cut the
 * middle out of the results): 100 lines of 250 wide characters would not fit. */
const SHOWN_BYTES = 56 * 1024;

/** The lines of entries[from, from + max), fewer entries if they would not fit in
 * SHOWN_BYTES. */
function page(ctx: ToolContext, plan: SearchPlan, entries: Entry[], from: number, max: number, view: View, re: RegExp): { lines: string[]; shown: number } {
  for (let limit = max; ; limit = Math.floor(limit * 0.8)) {
    const slice = entries.slice(from, from + limit);
    const lines = linesOf(ctx, plan, slice, view, re);
    if (limit <= 10 || lines.reduce((n, line) => n + Buffer.byteLength(line) + 1, 0) <= SHOWN_BYTES) return { lines, shown: slice.length };
  }
}

/** metadata.paths (and counts, or lines) for the entries shown. */
function shownMeta(ctx: ToolContext, plan: SearchPlan, shown: Entry[], view: View, re: RegExp): Pick<ToolOutput, "paths" | "counts" | "lines"> {
  const show = pathShower(ctx, plan);
  const files: FileHits[] = [];
  for (const e of shown) if (files[files.length - 1] !== e.file) files.push(e.file);
  const paths = files.map((f) => show(f.rel));
  if (view.mode === "count") return { paths, counts: files.map((f) => f.count) };
  if (view.mode !== "content") return { paths };
  // A line cut at its start for display is read again to place its match.
  const raws = new Map<FileHits, Map<number, string> | null>();
  for (const file of files) {
    const cut = shown.filter((e) => e.file === file && e.hit!.text.startsWith("…")).map((e) => e.hit!.line);
    if (cut.length > 0) raws.set(file, rawLines(plan.file ? plan.real : join(plan.real, file.rel), cut, plan.confine));
  }
  const lines = shown.map(({ file, hit }) => {
    const raw = hit!.text.startsWith("…") ? raws.get(file)?.get(hit!.line) : hit!.text;
    return { path: show(file.rel), line: hit!.line, column: raw === undefined ? null : columnOf(raw, re), text: hit!.text };
  });
  return { paths, lines };
}

/** The 1-based byte column of `re`'s first match in `line`, as rg --column counts. */
function columnOf(line: string, re: RegExp): number | null {
  re.lastIndex = 0;
  const m = re.exec(line);
  re.lastIndex = 0;
  return m ? Buffer.byteLength(line.slice(0, m.index)) + 1 : null;
}

function render(ctx: ToolContext, plan: SearchPlan, pattern: string, run: Run, view: View, compiled: Compiled): ToolOutput {
  const { collector, outcome } = run;
  const skipped = summarize(outcome.pruned ?? [], (rel) => shownPath(ctx, plan, rel));
  const files = collector.sorted();
  const total = collector.lines;
  const fileCount = collector.fileCount;
  const partial = outcome.timedOut ? ` (partial: stopped at the ${seconds(timeLimitMs())} limit)` : "";
  const summary = `${count(total, "match", "matches")} in ${count(fileCount, "file", "files")} for "${pattern}"${partial}:`;
  const title = `Search "${pattern}" · ${count(total, "match", "matches")} in ${count(fileCount, "file", "files")}`;
  const extra = extraOf(run);
  const after = notes(ctx, plan, outcome);
  const re = compiled.jsValid;
  const entries = entriesOf(files, view);
  // What the entries count: every matching line, or every file with one.
  const all = view.mode === "content" ? total : fileCount;
  const unit = view.mode === "content" ? (["matching line", "matching lines"] as const) : (["file", "files"] as const);
  if (view.paging) {
    const shown = page(ctx, plan, entries, view.offset, view.limit, view, re);
    const first = view.offset + 1;
    const last = view.offset + shown.shown;
    const tail: string[] = [];
    if (shown.shown === 0) tail.push(`[offset ${view.offset} is past the last of ${count(all, unit[0], unit[1])}. Use a smaller offset.]`);
    else if (last < all) {
      const saved = entries.length < all ? ` (${count(entries.length, unit[0], unit[1])} can be paged; narrow the search for the rest)` : "";
      const range = first === last ? `${unit[0]} ${first}` : `${unit[1]} ${first}–${last}`;
      tail.push(`[Showing ${range} of ${grouped(all)}${saved}. Use offset=${last} for the next page.]`);
    }
    const meta = shownMeta(ctx, plan, entries.slice(view.offset, last), view, re);
    return { content: [summary, "", ...shown.lines, ...after, ...tail].join("\n"), title: `${title} (showing ${first}–${last})`, matches: total, files: fileCount, ...meta, skipped, extra };
  }
  const shown = page(ctx, plan, entries, 0, MAX_SHOWN, view, re);
  const meta = shownMeta(ctx, plan, entries.slice(0, shown.shown), view, re);
  if (shown.shown === all) {
    return { content: [summary, "", ...shown.lines, ...after].join("\n"), title, matches: total, files: fileCount, ...meta, skipped, extra };
  }
  const unsaved = all - entries.length;
  const full = [summary, "", ...linesOf(ctx, plan, entries, view, re)];
  if (unsaved > 0) full.push(`[… ${count(unsaved, `more ${unit[0]}`, `more ${unit[1]}`)} not saved: too many results. Narrow the pattern, path or include to see them.]`);
  const fullText = full.join("\n");
  const spillPath = spillFile(ctx, "grep", `${fullText}\n`);
  const header =
    view.mode === "content"
      ? `Showing first ${shown.shown} of ${grouped(total)} matching lines (${count(fileCount, "file", "files")}) for "${pattern}"${partial}:`
      : `Showing first ${shown.shown} of ${grouped(fileCount)} files (${count(total, "match", "matches")}) for "${pattern}"${partial}:`;
  const tail = spillPath
    ? `[Results truncated. Full results: ${spillPath} — or use a more specific pattern, path, or include filter.]`
    : "[Results truncated (the full results could not be saved). Use a more specific pattern, path, or include filter.]";
  const fullLines = full.length;
  return {
    content: [header, "", ...shown.lines, ...after, tail].join("\n"),
    title: `${title} (showing ${shown.shown})`,
    matches: total,
    files: fileCount,
    ...meta,
    skipped,
    truncation: {
      originalBytes: Buffer.byteLength(fullText),
      originalLines: fullLines,
      shownHeadLines: shown.lines.length + 2,
      shownTailLines: 0,
      omittedLines: fullLines - shown.lines.length - 2,
      ...(spillPath ? { spillPath } : {}),
    },
    extra,
  };
}

async function noMatches(ctx: ToolContext, plan: SearchPlan, compiled: Compiled, given: string, include: string | undefined, engine: Engine, run: Run): Promise<ToolOutput> {
  const pattern = quoted(given);
  const scope = `${plan.abs}${include !== undefined && !plan.file ? ` (include "${include}")` : ""}`;
  let text: string;
  if (plan.missing) {
    text = `No matches for "${pattern}" in ${plan.abs}: the include "${include}" starts with ${plan.walkRel}, which is not a directory there. Check the include or the path.`;
  } else if (plan.file && searchFile(plan.real, []) === null) {
    text = `No matches for "${pattern}" in ${plan.abs}: it is a binary file, and grep skips binary files. Use bash with a suitable tool (e.g. strings FILE | grep) to search it.`;
  } else if (run.outcome.timedOut) {
    text = `No matches for "${pattern}" in ${scope} before the ${seconds(timeLimitMs())} time limit, so the search is partial. Narrow path or include to search fewer files.`;
  } else {
    const hint = await nearMissHint(engine, plan, compiled, run);
    text = `No matches for "${pattern}" in ${scope}. Check the regex${hint === null ? "" : ` (did you mean "${hint}"?)`} or broaden the scope.`;
  }
  const after = notes(ctx, plan, { ...run.outcome, timedOut: false });
  const skipped = summarize(run.outcome.pruned ?? [], (rel) => shownPath(ctx, plan, rel));
  return {
    content: [text, ...(skipped.line ? [skipped.line] : []), ...after].join("\n"),
    title: `Search "${pattern}" · no matches`,
    matches: 0,
    files: 0,
    paths: [],
    lines: [],
    skipped,
    extra: extraOf(run),
  };
}
