// replace (SPEC §8.6): one change across every file grep would search. grep's own search
// (search/engine.ts: rg or the built-in engine, its walk, ignore rules, include and type)
// finds the files; the pure matcher (replacer/substitute.ts) works out each file's new
// content; the multi-file commit of apply_patch (core/commit.ts) installs them all or none,
// as one history entry. All model-facing replace prose is here.
//
// Read-before-write: a file the session has read must not have changed since (STALE_FILE,
// as for patch); a file it never read may be changed. The pattern names the change and the
// new content is computed from the file as it is on disk, so no content the caller has not
// seen is overwritten — that is what NOT_READ guards against for write and edit. A script's
// replace across files it never opened is the point of the command, and the model's replace
// tool is held to the same rule as its apply_patch (SPEC §7.1); every change is in history
// (`kt undo --last` reverts all its files) and --dry-run shows the diff first.
import { p, type Infer } from "./params.ts";
import { join } from "node:path";
import { toolText } from "./_text.ts" with { type: "macro" };
import { defineTool, KtError, type ToolContext, type ToolOutput } from "./tool.ts";
import { onOneLine, realPath } from "../core/paths.ts";
import { getStamps, sha256, type Stamp } from "../core/stamps.ts";
import { decodeUtf8, grouped } from "../core/text.ts";
import type { LineCounts } from "../core/history.ts";
import { freshContent, readIfExists, stateFilesGuard } from "../core/writer.ts";
import { commitChanges, type Change } from "../core/commit.ts";
import { diffPath, unifiedDiff } from "../core/diff.ts";
import { editsDiff } from "../patch/diff.ts";
import { compilePattern } from "../search/regex.ts";
import { count, makePlan, pathShower, quoted, shownPath, timeLimitMs } from "../search/plan.ts";
import { chooseEngine, search, type Engine } from "../search/engine.ts";
import { withDiagnostics } from "./diagnostics.ts";
import type { Span } from "../replacer/substitute.ts";
import { discard, type StagedTemp } from "../core/temp.ts";
import { countsOf, matcherOf, patternOf, replaceText, spanEdits, takeStaged, textOf, type Matcher, type ReplaceSpec, type Worked } from "../search/rewrite.ts";

const description = toolText("replace");

export const Parameters = p.object({
  pattern: p.string({ minLength: 1, description: "The text to find: literal text, or with regex: true a regular expression (the syntax ripgrep and JavaScript share). Matches never span lines." }),
  replacement: p.string({ description: 'What each match becomes (may be empty). With regex: true, $1 or ${1} inserts a group by number, $name or ${name} a named group, $$ a dollar sign; without regex it is inserted as written.' }),
  paths: p.optional(p.array(p.string(), { description: "Files or directories to change. Defaults to the working directory." })),
  include: p.optional(p.string({ description: 'Glob filter for file names, e.g. "*.ts" or "src/**/*.py", as grep\'s include.' })),
  type: p.optional(p.string({ description: 'File type, as ripgrep names them: "py", "js", "ts", "rust", "go", …' })),
  regex: p.optional(p.boolean({ description: "Treat pattern as a regular expression (default: literal text)." })),
  word: p.optional(p.boolean({ description: "Match only whole words: no letter, digit or _ just before or after a match." })),
  ignore_case: p.optional(p.boolean({ description: "Match letters in either case (default: exact case)." })),
});

type Input = Infer<typeof Parameters>;

/** Files listed by name in the answer; the rest are counted. */
const MAX_LISTED = 100;

/** Changed files the language servers are asked about (SPEC §8.1), the first by path. */
export const MAX_DIAGNOSED = 20;

/** A single path may be given as "path" (grep's name for it). */
function normalize(input: Record<string, unknown>): string | null {
  if (!("path" in input)) return null;
  if ("paths" in input) return 'parameters "paths" and "path" are the same field. Please rewrite the input with only "paths"';
  const path = input.path;
  delete input.path;
  input.paths = typeof path === "string" ? [path] : path;
  return null;
}

export default defineTool({
  name: "replace",
  description: description.trim(),
  parameters: Parameters,
  primary: "pattern",
  positionals: (args) => ({ pattern: args[0]!, ...(args.length > 1 ? { replacement: args[1]! } : {}), ...(args.length > 2 ? { paths: args.slice(2) } : {}) }),
  examples: [
    "kt replace oldName newName src --word --dry-run",
    "kt replace 'fetch\\((\\w+)\\)' 'get($1)' --regex --include '*.ts'",
    "kt replace 'Copyright 2024' 'Copyright 2025' --type py",
  ],
  aliases: { glob: "include" },
  normalize,
  annotations: { readOnlyHint: false, destructiveHint: true },
  async execute(input, ctx) {
    // The temp files the search threads write (search/rewrite.ts): each is taken by the
    // commit or removed here, whatever the outcome.
    const stage = `${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
    const written: string[] = [];
    const adopted = new Set<string>();
    try {
      return await replace(input, ctx, stage, written, adopted);
    } finally {
      for (const path of new Set([...written, ...takeStaged(stage)])) if (!adopted.has(path)) discard(path);
    }
  },
});

/**
 * The replace itself; `written` gets the temp files the search threads wrote for it (by
 * `stage`), `adopted` those of them the commit took (installed, or removed on a failure).
 */
async function replace(input: Input, ctx: ToolContext, stage: string, written: string[], adopted: Set<string>): Promise<ToolOutput> {
  const started = performance.now();
  const spec: ReplaceSpec = { pattern: input.pattern, replacement: input.replacement, regex: input.regex === true, word: input.word === true, ignoreCase: input.ignore_case === true };
  const { source, cases } = patternOf(spec);
  const compiled = compilePattern(source, cases);
  // Made when a file is first worked out on this thread: the search threads work out
  // those they find the pattern in (search/rewrite.ts).
  let made: Matcher | undefined;
  const matcher: Matcher = (text) => (made ??= matcherOf(spec))(text);
  const engine = replaceEngine(ctx);
  const found = new Map<string, Candidate>();
  const unreadable: string[] = [];
  const scopes: string[] = [];
  const binaries: string[] = [];
  /** The most threads any path's search used (the built-in engine's; grep's metadata names it too). */
  let threads = 0;
  for (const path of input.paths?.length ? input.paths : ["."]) {
    const plan = makePlan(ctx, { tool: "grep", path, glob: input.include, basename: true, type: input.type }, started);
    scopes.push(onOneLine(plan.abs));
    // The binary files of a walk that hold the pattern are named in a note, not silently dropped.
    plan.noteBinary = !plan.file;
    // A dry run's answer is its diff, made from the text on this thread: nothing to work out
    // there. A replace that writes has the threads write the temp files too.
    if (!ctx.flags.dryRun) {
      plan.replace = spec;
      plan.stage = stage;
    }
    const run = await search(engine, plan, compiled, ctx);
    threads = Math.max(threads, run.threads ?? 0);
    if (run.outcome.timedOut) {
      throw new KtError("CANCELLED", `Nothing was changed: finding the files to change stopped at the ${Math.round(timeLimitMs() / 100) / 10} s time limit in ${plan.abs}, and a replace is made whole or not at all. Narrow the paths, include or type to search fewer files.`);
    }
    const skipped = run.outcome.skipped ?? [];
    if (skipped.length > 0) {
      const list = listed(skipped.map((rel) => shownPath(ctx, plan, rel)));
      throw new KtError("INVALID_REGEX", `Nothing was changed: ${list} could not be searched completely (the pattern backtracked too long on a line, or reading failed), so the replace could miss matches there. Simplify the pattern (no nested repetition such as (a+)+), or leave those files out with paths or include.`);
    }
    if (run.collector.fileCount > run.collector.files.length) {
      throw new KtError(
        "INVALID_ARGS",
        `Nothing was changed: "${quoted(input.pattern)}" matches ${grouped(run.collector.lines)} lines in ${count(run.collector.fileCount, "file", "files")} under ${plan.abs}, more than one replace can list. Replace in parts: narrow the paths, include or type.`,
      );
    }
    unreadable.push(...run.outcome.unreadable.map((rel) => shownPath(ctx, plan, rel)));
    // A file named as a path is looked at whatever grep says of it: a binary one gets its note.
    const rels = plan.file ? [""] : run.collector.files.map((f) => f.rel);
    const show = pathShower(ctx, plan);
    for (const rel of run.outcome.binary ?? []) binaries.push(show(rel));
    for (const w of run.worked?.values() ?? []) if ("temp" in w.change && w.change.temp) written.push(w.change.temp.path);
    for (const rel of rels) {
      const abs = plan.file ? plan.real : join(plan.real, rel);
      // A walk follows no symbolic links and lists only regular files, below a real
      // directory: what it found is its own real path (three system calls each, saved).
      const real = plan.file ? realPath(ctx, abs) : abs;
      // What a search thread worked out of the file it read at this same path.
      const worked = plan.file ? undefined : run.worked?.get(rel);
      if (!found.has(real)) found.set(real, { real, abs, display: show(rel), worked: worked?.abs === abs ? worked : undefined });
    }
  }
  const candidates = [...found.values()].sort((a, b) => (a.display < b.display ? -1 : a.display > b.display ? 1 : 0));
  const skipped: Skipped = { binary: binaries, notUtf8: [], tooLarge: [] };
  const done: Done[] = [];
  const refuse = stateFilesGuard(ctx);
  const stamps = getStamps(ctx, candidates.map((c) => c.real));
  for (const c of candidates) {
    const d = compute(ctx, c, matcher, skipped, refuse, stamps);
    if (d) done.push(d);
  }
  // A binary file both named and met in a walk is one file.
  skipped.binary = [...new Set(skipped.binary)];
  const notes = notesOf(skipped, unreadable);
  const total = done.reduce((n, d) => n + d.replacements, 0);
  const shownPattern = quoted(input.pattern);
  if (done.length === 0) {
    const scope = scopes.join(", ");
    const filter = [input.include !== undefined ? `include "${input.include}"` : "", input.type !== undefined ? `type ${input.type}` : ""].filter(Boolean).join(", ");
    return {
      content: [`No matches for "${shownPattern}" in ${scope}${filter ? ` (${filter})` : ""}; nothing was changed.`, ...notes].join("\n"),
      title: `Replace "${shownPattern}" · no matches`,
      matches: 0,
      files: 0,
      extra: extraOf(done, skipped, ctx.flags.dryRun, threads),
    };
  }
  pauseForTests();
  if (!ctx.flags.dryRun) await commitChanges(ctx, done.map((d) => d.change), { tool: "replace", verb: "change", adopted });
  // The diff text is made when first asked for (a dry run's answer, --json, an MCP client):
  // a plain answer never shows it, and its lines were counted without it.
  let diff: string | undefined;
  const diffText = () => (diff ??= done.map((d) => d.diff.patch).join(""));
  const additions = done.reduce((n, d) => n + d.change.counts!.added, 0);
  const deletions = done.reduce((n, d) => n + d.change.counts!.removed, 0);
  const what = `${count(total, "replacement", "replacements")} in ${count(done.length, "file", "files")}`;
  const head = ctx.flags.dryRun ? `Dry run: ${what} for "${shownPattern}"; nothing was written:` : `Replaced "${shownPattern}": ${what}:`;
  const lines = done.slice(0, MAX_LISTED).map((d) => `M ${d.display} (${d.replacements})`);
  if (done.length > MAX_LISTED) lines.push(`… and ${count(done.length - MAX_LISTED, "more file", "more files")} (metadata.extra.files lists all).`);
  const body = [head, ...lines, ...notes].join("\n");
  const output: ToolOutput = {
    content: ctx.flags.dryRun ? `${body}\n\n${diffText().trimEnd()}` : body,
    title: `Replace "${shownPattern}" · ${what} · +${additions} −${deletions}`,
    get diff() {
      return diffText();
    },
    additions,
    deletions,
    matches: total,
    files: done.length,
    extra: extraOf(done, skipped, ctx.flags.dryRun, threads),
  };
  return withDiagnostics(ctx, output, done.map((d) => ({ display: d.display, real: d.change.real, before: d.change.previous, after: d.change.bytes })), MAX_DIAGNOSED);
}

interface Candidate {
  real: string;
  abs: string;
  display: string;
  /** The change a search thread worked out, when one did. */
  worked?: Worked;
}

interface Done {
  display: string;
  replacements: number;
  change: Change;
  diff: ReturnType<typeof unifiedDiff>;
}

interface Skipped {
  binary: string[];
  notUtf8: string[];
  tooLarge: string[];
}

/**
 * The built-in engine unless KT_GREP_ENGINE=rg asks for rg: both find the files grep
 * would search, but only the built-in engine names the binary files that hold the pattern
 * at no cost (it tests the block it read when it met the NUL; a larger binary is named for
 * what that block and the text before it hold). rg names them only under --binary, which
 * reads every binary file whole: twice rg's time over a node_modules with its executables.
 */
function replaceEngine(ctx: ToolContext): Engine {
  const chosen = chooseEngine(ctx);
  return chosen.name === "rg" && (process.env.KT_GREP_ENGINE ?? "").trim().toLowerCase() !== "rg" ? { name: "builtin" } : chosen;
}

/** One file's change, or null when it has no match (or is skipped, with a note). */
function compute(ctx: ToolContext, c: Candidate, matcher: Matcher, skipped: Skipped, refuse: (real: string, display: string) => void, stamps: ReadonlyMap<string, Stamp>): Done | null {
  // kt's own state (a state directory inside the tree) is never changed, nor worth a note.
  try {
    refuse(c.real, onOneLine(c.abs));
  } catch (error) {
    if (error instanceof KtError && error.code === "PERMISSION_DENIED") return null;
    throw error;
  }
  let once: Done | null;
  let bytes: Uint8Array;
  const worked = c.worked?.change;
  if (worked && "left" in worked) {
    if (worked.left !== "unchanged") skipped[worked.left].push(c.display);
    return null;
  }
  if (worked) {
    bytes = worked.previous;
    once = fromWorked(ctx, c, worked, matcher);
  } else {
    const read = readIfExists(c.real, onOneLine(c.abs), ctx);
    if (read === null) return null;
    bytes = read;
    const text = textOf(bytes);
    if ("left" in text) {
      skipped[text.left].push(c.display);
      return null;
    }
    once = fromBytes(ctx, c, bytes, matcher, text.text);
    if (once === null) return null;
  }
  // A file the session has read must not have changed since (SPEC §3.4, as for patch); one
  // the change leaves alone is not asked. A stamp that lags a parallel kt write of this
  // session gives the file as that write left it: the change is worked out from that.
  const stamp = stamps.get(c.real);
  if (stamp) {
    const fresh = freshContent(ctx, onOneLine(c.abs), c.real, bytes, "change", { stamp, sha: once.change.baseSha! });
    if (fresh !== bytes) once = fromBytes(ctx, c, fresh, matcher);
    if (once === null) return null;
  }
  // Worked out again from the file a parallel kt call of this session left (SPEC §7.5).
  once.change.redo = (now: Uint8Array) => fromBytes(ctx, c, now, matcher)?.change.bytes ?? now;
  return once;
}

function fromBytes(ctx: ToolContext, c: Candidate, bytes: Uint8Array, matcher: Matcher, decoded?: string): Done | null {
  const text = decoded ?? decodeUtf8(bytes);
  if (text === null) return null;
  const replaced = replaceText(bytes, text, matcher);
  if (replaced === null) return null;
  const { after, spans, next } = replaced;
  return doneOf(ctx, c, bytes, next, spans.length, { counts: () => countsOf(text, after, spans) }, () => diffOf(diffPath(ctx, c.abs), text, after, spans));
}

/** The change a search thread worked out (search/rewrite.ts): its hashes and counts known, its diff made again from its bytes when asked for. */
function fromWorked(ctx: ToolContext, c: Candidate, w: Extract<Worked["change"], { previous: Uint8Array }>, matcher: Matcher): Done {
  // The same matcher on the same bytes finds the same spans, so the change is the same.
  const diffed = () => fromBytes(ctx, c, w.previous, matcher)!.diff;
  return doneOf(ctx, c, w.previous, w.next, w.replacements, { sha: w.previousSha, nextSha: w.nextSha, counts: () => w.counts, temp: w.temp }, diffed);
}

type Diff = ReturnType<typeof unifiedDiff>;

/**
 * A file's change as the commit and the answer take it. The hash of the file as it was, its
 * lines added and removed (unless `known` has them) and its diff are worked out when first
 * asked for: a commit asks for them while the disk writes the new files (commitChanges), a
 * dry run for its answer.
 */
function doneOf(ctx: ToolContext, c: Candidate, previous: Uint8Array, next: Uint8Array, replacements: number, known: { sha?: string; nextSha?: string; counts: () => LineCounts | undefined; temp?: StagedTemp }, diffOfFile: () => Diff): Done {
  let diff: Diff | undefined;
  let sha = known.sha;
  let counted: LineCounts | undefined;
  const diffed = () => (diff ??= diffOfFile());
  return {
    display: c.display,
    replacements,
    // Named absolutely in history and in the commit's prose, as patch names its files; its
    // lines added and removed are the diff's, not counted again.
    change: {
      display: onOneLine(c.abs),
      real: c.real,
      get baseSha() {
        return (sha ??= sha256(previous));
      },
      previous,
      bytes: next,
      bytesSha: known.nextSha,
      ...(known.temp ? { staged: known.temp } : {}),
      get counts() {
        if (counted) return counted;
        const quick = diff === undefined ? known.counts() : undefined;
        if (quick) return (counted = quick);
        const d = diffed();
        return (counted = { added: d.additions, removed: d.deletions });
      },
    },
    get diff() {
      return diffed();
    },
  };
}

/**
 * The diff of a replace, from its spans: the lines they touch are diffed, not the whole
 * file (a whole-file diff of every file cost more than the rest of a replace). Text without
 * a final newline is diffed with one added, then marked (noFinalNewline); text with CRLF line
 * endings, or whose replacement adds or removes the final newline, gets the whole-file diff.
 */
export function diffOf(path: string, before: string, after: string, spans: readonly Span[]): ReturnType<typeof unifiedDiff> {
  if (before.includes("\r")) return unifiedDiff(path, before, after);
  // A file without a line break at its end (most of a node_modules: 1,795 of 2,914 files a
  // replace changed there, each diffed whole before): diffed with one added, then marked.
  const open = !before.endsWith("\n");
  if (open !== !after.endsWith("\n")) return unifiedDiff(path, before, after);
  if (open) {
    const diff = spanDiff(path, `${before}\n`, spans);
    const marked = noFinalNewline(diff.patch, lineCount(before), lineCount(after));
    return { patch: marked.patch, additions: diff.additions + marked.split, deletions: diff.deletions + marked.split };
  }
  return spanDiff(path, before, spans);
}

function lineCount(text: string): number {
  let n = 1;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

const NO_NEWLINE = "\\ No newline at end of file";

/**
 * A diff of two texts that each had a line break added at the end, made the diff of the texts
 * themselves: the last line of each side marked "\ No newline at end of file" where the diff
 * shows it, and a line shown as context that is the last of one side only shown removed and
 * added (it ends the one side, and not the other; `split` counts those). The hunks' counts
 * stay as they are.
 */
function noFinalNewline(patch: string, oldCount: number, newCount: number): { patch: string; split: number } {
  if (patch === "") return { patch, split: 0 };
  let split = 0;
  const lines = patch.split("\n");
  lines.pop();
  // The two file headers, then the hunks.
  const out = lines.slice(0, 2);
  let o = 0;
  let n = 0;
  for (let i = 2; i < lines.length; i++) {
    const line = lines[i]!;
    const head = /^@@ -(\d+),(\d+) \+(\d+),(\d+) @@$/.exec(line);
    if (head) {
      // An empty side's start is written one lower (hunksText); o and n count the lines before the next one.
      o = Number(head[1]) - (head[2] === "0" ? 0 : 1);
      n = Number(head[3]) - (head[4] === "0" ? 0 : 1);
      out.push(line);
      continue;
    }
    const mark = line[0];
    if (mark === "-") {
      out.push(line);
      if (++o === oldCount) out.push(NO_NEWLINE);
    } else if (mark === "+") {
      out.push(line);
      if (++n === newCount) out.push(NO_NEWLINE);
    } else {
      const lastOld = ++o === oldCount;
      const lastNew = ++n === newCount;
      const text = line.slice(1);
      if (lastOld === lastNew) out.push(line, ...(lastOld ? [NO_NEWLINE] : []));
      else {
        split++;
        if (lastOld) out.push(`-${text}`, NO_NEWLINE, `+${text}`);
        else out.push(`-${text}`, `+${text}`, NO_NEWLINE);
      }
    }
  }
  return { patch: `${out.join("\n")}\n`, split };
}

/** The diff of a replace from its spans, for `before` ending in a line break (the spans may end before it). */
function spanDiff(path: string, before: string, spans: readonly Span[]): ReturnType<typeof unifiedDiff> {
  const lines: number[] = [];
  const edits = spanEdits(before, spans, lines);
  return editsDiff(path, before, edits, lines);
}

function listed(paths: readonly string[]): string {
  const sorted = [...paths].sort();
  return sorted.slice(0, 5).join(", ") + (sorted.length > 5 ? ` and ${sorted.length - 5} more` : "");
}

function notesOf(skipped: Skipped, unreadable: readonly string[]): string[] {
  const out: string[] = [];
  const { binary, notUtf8, tooLarge } = skipped;
  if (binary.length > 0) out.push(`[Left alone: ${count(binary.length, "binary file", "binary files")} (a NUL byte): ${listed(binary)}.]`);
  if (notUtf8.length > 0) {
    out.push(`[Left alone: ${count(notUtf8.length, "file", "files")} not valid UTF-8 text, which replace would corrupt: ${listed(notUtf8)}. Convert ${notUtf8.length === 1 ? "it" : "them"} to UTF-8 first (e.g. iconv).]`);
  }
  if (tooLarge.length > 0) out.push(`[Left alone: ${count(tooLarge.length, "file", "files")} over the 10 MB limit: ${listed(tooLarge)}. Change ${tooLarge.length === 1 ? "it" : "them"} with bash (e.g. sed).]`);
  if (unreadable.length > 0) out.push(`[Not searched: ${count(unreadable.length, "path", "paths")} could not be read (permission denied): ${listed(unreadable)}.]`);
  return out;
}

function extraOf(done: readonly Done[], skipped: Skipped, dryRun: boolean, threads: number): Record<string, unknown> {
  return {
    files: done.map((d) => ({ path: d.display, replacements: d.replacements, additions: d.change.counts!.added, deletions: d.change.counts!.removed })),
    skipped,
    dryRun,
    ...(threads > 0 ? { threads } : {}),
  };
}

/** Test seam: KT_REPLACE_PAUSE_MS waits between working out the change and committing it,
 * so that a test can change a file in between (the commit must then refuse it whole). */
function pauseForTests(): void {
  const ms = Number(process.env.KT_REPLACE_PAUSE_MS);
  if (Number.isFinite(ms) && ms > 0) Bun.sleepSync(ms);
}

