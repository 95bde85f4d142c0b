// The unified diff of a patched file, from the replacements the patch made rather than from a
// whole-file diff: only each replaced span is diffed (a few lines), then the hunks are laid out
// with three lines of context as `diff -u` does. A whole-file diff of 20 files cost more than
// locating all their hunks.
import { diffArrays } from "diff";
import type { Edit } from "../replacer/index.ts";
import { formatDiff, lineChangesPatch, type Diff, type LineChange } from "../core/diff.ts";

const CONTEXT = 3;

type Change = LineChange;

/**
 * diffArrays(a, b), without running it when its answer is certain: past the lines both start
 * with and those both end with, no line of what is left of `a` is in what is left of `b` or
 * in the common end, and no line left of `b` is in the common end. Then the only shortest
 * edit keeps the start and the end and replaces the rest, and diffArrays (which takes the
 * common start first) writes it as the common start, the removed lines, the added lines, the
 * common end. A hunk's span is mostly such a case; Myers on each of them was most of the
 * cost of the diff. (test/patch.diff.test.ts holds the two to the same answers.)
 */
export function spanParts(a: readonly string[], b: readonly string[]): { value: string[]; added?: boolean; removed?: boolean }[] {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const removed = a.slice(head, a.length - tail);
  const added = b.slice(head, b.length - tail);
  const end = a.slice(a.length - tail);
  if (removed.length > 0 || added.length > 0) {
    const inEnd = new Set(end);
    const inAdded = new Set(added);
    if (removed.some((l) => inAdded.has(l) || inEnd.has(l)) || added.some((l) => inEnd.has(l))) return diffArrays(a as string[], b as string[]);
  }
  const parts: { value: string[]; added?: boolean; removed?: boolean }[] = [];
  if (removed.length === 0 && added.length === 0) {
    if (a.length > 0) parts.push({ value: [...a] });
    return parts;
  }
  if (head > 0) parts.push({ value: a.slice(0, head) });
  if (removed.length > 0) parts.push({ value: removed, removed: true });
  if (added.length > 0) parts.push({ value: added, added: true });
  if (tail > 0) parts.push({ value: end });
  return parts;
}

/** The lines of `text`, a last line break ending the last line (not starting an empty one). */
export function lines(text: string): string[] {
  if (text === "") return [];
  return (text.endsWith("\n") ? text.slice(0, -1) : text).split("\n");
}

/**
 * `work` is the old LF text ending in "\n" (or empty); `edits` replace whole lines of it, sorted
 * and disjoint. Both sides must end in a newline: the caller diffs other files the usual way.
 * `editLines`, when the caller knows them, are the 0-based lines the edits start on (else
 * they are counted here).
 */
export function editsDiff(path: string, work: string, edits: readonly Edit[], editLines?: readonly number[], from?: string): Diff {
  const changes: Change[] = [];
  // Where each edit starts and ends, as line and offset: the context lines are found from there.
  const known: { line: number; at: number }[] = [];
  let line = 0;
  let at = 0;
  for (const [k, e] of edits.entries()) {
    if (editLines) line = editLines[k]!;
    else for (let i = work.indexOf("\n", at); i !== -1 && i < e.start; i = work.indexOf("\n", i + 1)) line++;
    at = e.start;
    const span = lines(work.slice(e.start, e.end));
    known.push({ line, at: e.start }, { line: line + span.length, at: e.end });
    let o = line;
    for (const part of spanParts(span, lines(e.text))) {
      if (part.added) {
        const last = changes[changes.length - 1];
        if (last && last.at + last.removed.length === o) last.added.push(...part.value);
        else changes.push({ at: o, removed: [], added: [...part.value] });
      } else if (part.removed) {
        changes.push({ at: o, removed: [...part.value], added: [] });
        o += part.value.length;
      } else o += part.value.length;
    }
  }

  let additions = 0;
  let deletions = 0;
  for (const c of changes) {
    additions += c.added.length;
    deletions += c.removed.length;
  }
  // Whole lines edited: the old lines are read around them, not split from the whole file.
  const whole = known.every((p) => p.at === 0 || p.at === work.length || work.charCodeAt(p.at - 1) === 10);
  const old = whole && work.endsWith("\n") ? new LinesNear(work, known) : lines(work);
  return { patch: formatDiff(lineChangesPatch(path, old, changes), "update", from), additions, deletions };
}

/**
 * The lines of `text` (ending in "\n") as far as a diff's context needs them: each found by
 * walking from the nearest line whose start is known, a few lines at most. Answers `slice`
 * as the array of every line would.
 */
class LinesNear {
  constructor(
    private readonly text: string,
    /** Lines and the offsets they start at (an offset of text.length: just past the last line). */
    private readonly known: readonly { line: number; at: number }[],
  ) {}

  slice(start: number, end: number): string[] {
    const out: string[] = [];
    if (end <= start) return out;
    let at = this.startOf(Math.max(0, start));
    for (let i = Math.max(0, start); i < end && at !== -1 && at < this.text.length; i++) {
      const nl = this.text.indexOf("\n", at);
      out.push(this.text.slice(at, nl));
      at = nl + 1;
    }
    return out;
  }

  /** Offset where line `i` starts, or -1 past the text. */
  private startOf(i: number): number {
    let best = this.known[0] ?? { line: 0, at: 0 };
    for (const p of this.known) if (Math.abs(p.line - i) < Math.abs(best.line - i)) best = p;
    if (Math.abs(i) < Math.abs(best.line - i)) best = { line: 0, at: 0 };
    let { line, at } = best;
    for (; line > i; line--) at = at <= 1 ? 0 : this.text.lastIndexOf("\n", at - 2) + 1;
    for (; line < i; line++) {
      if (at >= this.text.length) return -1;
      at = this.text.indexOf("\n", at) + 1;
    }
    return at;
  }
}
