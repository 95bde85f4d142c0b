// Unified diffs for metadata.diff (write, edit), on LF-normalized text. A diff is metadata:
// it must never decide whether (or how slowly) a write completes. Only the lines between
// the common head and tail are diffed; the precise line diff (package `diff`, Myers) runs
// there under a budget of edit length and time, and past it the diff is a coarse one that
// is still a correct patch: everything between the common head and tail replaced in one hunk.
import { formatPatch, structuredPatch, type StructuredPatch } from "diff";

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

export function unifiedDiff(path: string, before: string, after: string, opts: { precise?: boolean } = {}): Diff {
  const a = before.replace(/\r\n/g, "\n");
  const b = after.replace(/\r\n/g, "\n");
  const span = changedSpan(a, b);
  const patch = (opts.precise === false ? undefined : preciseDiff(path, a, b, span)) ?? coarseDiff(path, a, b, span);
  let additions = 0;
  let deletions = 0;
  for (const hunk of patch.hunks) {
    for (const line of hunk.lines) {
      if (line.startsWith("+")) additions++;
      else if (line.startsWith("-")) deletions++;
    }
  }
  return { patch: formatPatch(patch), additions, deletions };
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
