// The unified diff of a patched file, from the replacements the patch made rather than from a
// whole-file diff: only each replaced span is diffed (a few lines), then the hunks are laid out
// with three lines of context as `diff -u` does. A whole-file diff of 20 files cost more than
// locating all their hunks.
import { diffArrays } from "diff";
import { certainParts, lines, type Part } from "../replacer/parts.ts";
import type { Edit } from "../replacer/index.ts";
import { formatDiff, lineChangesPatch, type Diff, type LineChange } from "../core/diff.ts";

const CONTEXT = 3;

type Change = LineChange;

/** diffArrays(a, b), without running it when its answer is certain (replacer/parts.ts). */
export function spanParts(a: readonly string[], b: readonly string[]): Part[] {
  return certainParts(a, b) ?? diffArrays(a as string[], b as string[]);
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
