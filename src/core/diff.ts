// Unified diffs for metadata.diff (write, edit), on LF-normalized text. A diff is metadata:
// it must never decide whether (or how slowly) a write completes. Only the lines between
// the common head and tail are diffed; the precise line diff (package `diff`, Myers) runs
// there under a budget of edit length and time, and past it the diff is a coarse one that
// is still a correct patch. Past the budget, lines that occur once in each text and keep their
// order (patience diff's anchors) split the changed lines into gaps, each diffed precisely
// under a share of the budget or else replaced whole: two edits at the ends of a large file
// stay two small hunks. Only texts without such anchors get the one coarse hunk: everything
// between the common head and tail replaced.
import { diffArrays, structuredPatch, type StructuredPatch } from "diff";
import { isAbsolute, relative } from "node:path";
import { onOneLine } from "./paths.ts";

export interface Diff {
  patch: string;
  additions: number;
  deletions: number;
}

/** Myers costs about (lines of both sides) × (edit length): the product is bounded by this. */
const WORK = 4_000_000;
const MAX_MS = 100;
/** Below this edit length a precise diff is not worth trying: a large rewrite goes coarse at once. */
const MIN_EDIT_LENGTH = 64;
const CONTEXT = 3;

/** What a diff does to its file: git writes a created file's old side, and a removed file's new side, as /dev/null. */
export type DiffChange = "update" | "create" | "remove";

/**
 * The path a diff names a file by (SPEC §8.6, as git writes it): relative to the root, or to
 * the working directory without one, so that `git apply` and `patch -p1` take the diff there;
 * absolute when the file lies outside that directory. On one line: a newline in a name must
 * not forge a header.
 */
export function diffPath(ctx: { cwd: string; root?: string }, abs: string): string {
  const rel = relative(ctx.root ?? ctx.cwd, abs);
  return onOneLine(rel === "" || rel === ".." || rel.startsWith("../") || isAbsolute(rel) ? abs : rel);
}

/**
 * A structured patch as git writes one: "--- a/PATH" and "+++ b/PATH" (/dev/null for the
 * side that does not exist), then the hunks; `from` names the old side of a move, with git's
 * rename lines. No hunks and no move: no diff at all.
 */
export function formatDiff(patch: StructuredPatch, change: DiffChange = "update", from?: string): string {
  const moved = from !== undefined && from !== patch.newFileName;
  if (patch.hunks.length === 0 && !moved) return "";
  const hunks = hunksText(patch.hunks);
  const side = (prefix: string, path: string) => (isAbsolute(path) ? path : `${prefix}${path}`);
  const old = from ?? patch.oldFileName ?? "";
  const neu = patch.newFileName ?? old;
  const rename = moved ? `diff --git ${side("a/", old)} ${side("b/", neu)}\nrename from ${old}\nrename to ${neu}\n` : "";
  if (hunks === "") return rename;
  const a = change === "create" ? "/dev/null" : side("a/", old);
  const b = change === "remove" ? "/dev/null" : side("b/", neu);
  return `${rename}--- ${a}\n+++ ${b}\n${hunks}`;
}

/**
 * The hunks as jsdiff's formatPatch writes them after its file headers: "@@ -a,b +c,d @@" (an
 * empty side's start one lower, as diff -u writes it), then the hunk's lines.
 */
export function hunksText(hunks: StructuredPatch["hunks"]): string {
  let out = "";
  for (const h of hunks) {
    out += `@@ -${h.oldLines === 0 ? h.oldStart - 1 : h.oldStart},${h.oldLines} +${h.newLines === 0 ? h.newStart - 1 : h.newStart},${h.newLines} @@\n`;
    if (h.lines.length > 0) out += `${h.lines.join("\n")}\n`;
  }
  return out;
}

/** `path`: the file as diffPath names it. */
export function unifiedDiff(path: string, before: string, after: string, opts: { precise?: boolean; change?: DiffChange; from?: string } = {}): Diff {
  const a = before.replace(/\r\n/g, "\n");
  const b = after.replace(/\r\n/g, "\n");
  const span = changedSpan(a, b);
  const precise = opts.precise === false ? undefined : preciseDiff(path, a, b, span);
  const patch = precise ?? (opts.precise === false ? undefined : anchoredDiff(path, a, b, span)) ?? coarseDiff(path, a, b, span);
  let additions = 0;
  let deletions = 0;
  for (const hunk of patch.hunks) {
    for (const line of hunk.lines) {
      if (line.startsWith("+")) additions++;
      else if (line.startsWith("-")) deletions++;
    }
  }
  return { patch: formatDiff(patch, opts.change, opts.from), additions, deletions };
}

/**
 * Where two texts differ, in whole lines, with CONTEXT lines around: character offsets of
 * the context's start (the same in both), of the changed lines in each, and of the
 * context's end in each; `line` is the 0-based line number of the context's start.
 */
interface Span {
  from: number;
  line: number;
  headEnd: number;
  tailA: number;
  tailB: number;
  endA: number;
  endB: number;
}

function changedSpan(a: string, b: string): Span {
  const min = Math.min(a.length, b.length);
  let i = 0;
  while (i < min && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  // The common head ends at the start of the line holding the first difference. A last line
  // without "\n" differs from the same line with one, as a patch needs.
  const headEnd = i === a.length && i === b.length ? i : lineStartBefore(a, i);
  let j = 0;
  while (j < min - headEnd && a.charCodeAt(a.length - 1 - j) === b.charCodeAt(b.length - 1 - j)) j++;
  let tailA = a.length - j;
  let tailB = b.length - j;
  // The common tail starts where a line starts in both texts.
  while (tailA < a.length && !(atLineStart(a, tailA) && atLineStart(b, tailB))) {
    const nl = a.indexOf("\n", tailA);
    const step = (nl === -1 ? a.length : nl + 1) - tailA;
    tailA += step;
    tailB += step;
  }
  let from = headEnd;
  for (let k = 0; k < CONTEXT && from > 0; k++) from = lineStartBefore(a, from - 1);
  return { from, line: countNewlines(a, from), headEnd, tailA, tailB, endA: linesAfter(a, tailA), endB: linesAfter(b, tailB) };
}

/** The start of the line holding offset `at` (for a line start, that line itself). */
function lineStartBefore(text: string, at: number): number {
  return at <= 0 ? 0 : text.lastIndexOf("\n", at - 1) + 1;
}

function atLineStart(text: string, at: number): boolean {
  return at === 0 || at === text.length || text.charCodeAt(at - 1) === 10;
}

function linesAfter(text: string, at: number): number {
  let end = at;
  for (let k = 0; k < CONTEXT && end < text.length; k++) {
    const nl = text.indexOf("\n", end);
    end = nl === -1 ? text.length : nl + 1;
  }
  return end;
}

function countNewlines(text: string, end: number): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1 && i < end; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

/** Myers on the changed lines and their context, within the budget; undefined past it. */
function preciseDiff(path: string, a: string, b: string, s: Span): StructuredPatch | undefined {
  const size = countNewlines(a.slice(s.headEnd, s.tailA), Infinity) + countNewlines(b.slice(s.headEnd, s.tailB), Infinity) + 2;
  const maxEditLength = Math.floor(WORK / size);
  if (maxEditLength < MIN_EDIT_LENGTH) return undefined;
  const patch = structuredPatch(path, path, a.slice(s.from, s.endA), b.slice(s.from, s.endB), "", "", { context: CONTEXT, maxEditLength, timeout: MAX_MS });
  if (!patch) return undefined;
  for (const hunk of patch.hunks) {
    hunk.oldStart += s.line;
    hunk.newStart += s.line;
  }
  return patch;
}

/** Lines with their "\n" (the last one may lack it). */
function lineTokens(text: string): string[] {
  if (text === "") return [];
  const out = text.split("\n").map((line) => `${line}\n`);
  const last = out.pop()!;
  if (last !== "\n") out.push(last.slice(0, -1));
  return out;
}

/** One hunk: the context before, every old line between as removed, every new one as added, the context after. */
function coarseDiff(path: string, a: string, b: string, s: Span): StructuredPatch {
  const hunks: StructuredPatch["hunks"] = [];
  if (s.headEnd !== s.tailA || s.headEnd !== s.tailB) {
    const before = lineTokens(a.slice(s.from, s.headEnd));
    const removed = lineTokens(a.slice(s.headEnd, s.tailA));
    const added = lineTokens(b.slice(s.headEnd, s.tailB));
    const after = lineTokens(a.slice(s.tailA, s.endA));
    const lines: string[] = [];
    const put = (mark: string, token: string) => {
      if (token.endsWith("\n")) lines.push(mark + token.slice(0, -1));
      else lines.push(mark + token, "\\ No newline at end of file");
    };
    for (const t of before) put(" ", t);
    for (const t of removed) put("-", t);
    for (const t of added) put("+", t);
    for (const t of after) put(" ", t);
    const context = before.length + after.length;
    // formatPatch writes an empty side's start as the line before the hunk, as diff -u does.
    hunks.push({ oldStart: s.line + 1, oldLines: context + removed.length, newStart: s.line + 1, newLines: context + added.length, lines });
  }
  return { oldFileName: path, newFileName: path, oldHeader: "", newHeader: "", hunks };
}

/** A run of old lines replaced by new ones; `at` is the 0-based old line where it starts. */
export interface LineChange {
  at: number;
  removed: string[];
  added: string[];
}

/** Budget of the gaps between anchors, all together (Myers work, as WORK). */
const GAP_WORK = 8_000_000;

/**
 * The changed lines between the common head and tail, split at their anchors: lines found
 * exactly once in each side, in an order both keep (the longest increasing run). Linear in
 * the lines but for the runs (n log n). Only for texts ending in a newline (both); undefined
 * when nothing anchors them, so that the caller's coarse hunk says the same more cheaply.
 */
function anchoredDiff(path: string, a: string, b: string, s: Span): StructuredPatch | undefined {
  if (!(a.endsWith("\n") && b.endsWith("\n"))) return undefined;
  const oldLines = splitLines(a.slice(s.headEnd, s.tailA));
  const newLines = splitLines(b.slice(s.headEnd, s.tailB));
  const seen = new Map<string, { a: number; b: number; at: number; bt: number }>();
  oldLines.forEach((l, i) => {
    const e = seen.get(l);
    if (e) e.a++;
    else seen.set(l, { a: 1, b: 0, at: i, bt: -1 });
  });
  newLines.forEach((l, j) => {
    const e = seen.get(l);
    if (e) {
      e.b++;
      e.bt = j;
    }
  });
  const pairs: [number, number][] = [];
  for (const e of seen.values()) if (e.a === 1 && e.b === 1) pairs.push([e.at, e.bt]);
  if (pairs.length === 0) return undefined;
  pairs.sort((x, y) => x[0] - y[0]);
  const anchors = increasingRun(pairs);

  const changes: LineChange[] = [];
  const put = (at: number, removed: string[], added: string[]) => {
    if (removed.length === 0 && added.length === 0) return;
    const last = changes[changes.length - 1];
    if (last && last.at + last.removed.length === at) {
      last.removed.push(...removed);
      last.added.push(...added);
    } else changes.push({ at, removed, added });
  };
  // The gaps share one budget of work and of time; past either, a gap is replaced whole.
  let budget = GAP_WORK;
  const deadline = Date.now() + MAX_MS;
  let i = 0;
  let j = 0;
  for (const [ai, bj] of [...anchors, [oldLines.length, newLines.length] as [number, number]]) {
    // The gap before this anchor, less the lines it starts and ends with in both.
    let i0 = i;
    let j0 = j;
    while (i0 < ai && j0 < bj && oldLines[i0] === newLines[j0]) [i0, j0] = [i0 + 1, j0 + 1];
    let i1 = ai;
    let j1 = bj;
    while (i1 > i0 && j1 > j0 && oldLines[i1 - 1] === newLines[j1 - 1]) [i1, j1] = [i1 - 1, j1 - 1];
    const ga = oldLines.slice(i0, i1);
    const gb = newLines.slice(j0, j1);
    const size = ga.length + gb.length;
    const maxEditLength = Math.min(size, Math.floor(budget / Math.max(1, size)));
    const left = deadline - Date.now();
    // One line for one (after the trimming, they differ): nothing for Myers to find.
    const plain = ga.length === 0 || gb.length === 0 || (ga.length === 1 && gb.length === 1);
    const parts = plain || maxEditLength < 1 || left <= 0 ? undefined : diffArrays(ga, gb, { maxEditLength, timeout: left });
    if (!plain) {
      // Myers costs about the gap's lines times its edit length (or the most it was allowed).
      const edits = parts ? parts.reduce((n, p) => n + (p.added || p.removed ? p.value.length : 0), 0) : maxEditLength;
      budget -= size * Math.max(1, edits);
    }
    if (parts) {
      let o = i0;
      for (const part of parts) {
        if (part.added) put(o, [], [...part.value]);
        else if (part.removed) {
          put(o, [...part.value], []);
          o += part.value.length;
        } else o += part.value.length;
      }
    } else put(i0, ga, gb);
    i = ai + 1;
    j = bj + 1;
  }
  const head = countNewlines(a, s.headEnd);
  return lineChangesPatch(path, splitLines(a), changes.map((c) => ({ ...c, at: c.at + head })));
}

/** The longest run of pairs (sorted by their first) whose seconds increase: patience sorting. */
function increasingRun(pairs: readonly [number, number][]): [number, number][] {
  const tails: number[] = [];
  const back: number[] = new Array(pairs.length);
  for (let k = 0; k < pairs.length; k++) {
    const v = pairs[k]![1];
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (pairs[tails[mid]!]![1] < v) lo = mid + 1;
      else hi = mid;
    }
    back[k] = lo > 0 ? tails[lo - 1]! : -1;
    tails[lo] = k;
  }
  const out: [number, number][] = [];
  for (let k = tails.length > 0 ? tails[tails.length - 1]! : -1; k !== -1; k = back[k]!) out.push(pairs[k]!);
  return out.reverse();
}

/** The lines of a text ending in "\n" (or empty), without their "\n". */
function splitLines(text: string): string[] {
  return text === "" ? [] : text.slice(0, -1).split("\n");
}

/**
 * Hunks as diff -u lays them out, with CONTEXT lines around each change; changes closer
 * than twice the context share a hunk. `old` is every line of the old text (ending in a
 * newline), or what answers its `slice` alike; `changes` are sorted and disjoint.
 */
export function lineChangesPatch(path: string, old: { slice(start: number, end: number): readonly string[] }, changes: readonly LineChange[]): StructuredPatch {
  const hunks: StructuredPatch["hunks"] = [];
  let delta = 0;
  for (let k = 0; k < changes.length; ) {
    const from = Math.max(0, changes[k]!.at - CONTEXT);
    const body: string[] = old.slice(from, changes[k]!.at).map((l) => ` ${l}`);
    let oldCount = body.length;
    let newCount = body.length;
    let end = changes[k]!.at;
    for (; k < changes.length; k++) {
      const c = changes[k]!;
      if (c.at - end > 2 * CONTEXT) break;
      for (const l of old.slice(end, c.at)) body.push(` ${l}`);
      oldCount += c.at - end;
      newCount += c.at - end;
      for (const l of c.removed) body.push(`-${l}`);
      for (const l of c.added) body.push(`+${l}`);
      oldCount += c.removed.length;
      newCount += c.added.length;
      end = c.at + c.removed.length;
    }
    const tail = old.slice(end, end + CONTEXT);
    for (const l of tail) body.push(` ${l}`);
    oldCount += tail.length;
    newCount += tail.length;
    hunks.push({
      oldStart: oldCount === 0 ? from : from + 1,
      oldLines: oldCount,
      newStart: newCount === 0 ? from + delta : from + delta + 1,
      newLines: newCount,
      lines: body,
    });
    delta += newCount - oldCount;
  }
  return { oldFileName: path, newFileName: path, oldHeader: "", newHeader: "", hunks };
}
