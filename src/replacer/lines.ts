// Line numbers of offsets: one pass to find line starts, then a binary search per lookup.

/** Offset at which each line of `text` starts; line i (0-based) is `starts[i]`. */
export function lineStarts(text: string): Int32Array {
  // Counted by the regex engine: one native pass instead of a call per line.
  const starts = new Int32Array(1 + (text.match(NEWLINES)?.length ?? 0));
  let k = 1;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) starts[k++] = i + 1;
  return starts;
}

const NEWLINES = /\n/g;

/** 1-based line that holds `offset` (an offset at a line's end belongs to that line). */
export function lineOfOffset(starts: Int32Array, offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

/** 1-based line of `offset` in `text`, without building an index (for one-off lookups). */
export function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) line++;
  return line;
}

/** 1-based inclusive line range of the span `[start, end)`; an empty span sits on one line. */
export function rangeOfSpan(starts: Int32Array, start: number, end: number): { startLine: number; endLine: number } {
  const startLine = lineOfOffset(starts, start);
  const last = end > start ? end - 1 : start;
  return { startLine, endLine: Math.max(startLine, lineOfOffset(starts, last)) };
}
