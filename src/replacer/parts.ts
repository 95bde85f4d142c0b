// A line diff's answer where it is certain without running one (no dependency: search
// threads count a replace's lines with it, and load no diff library).

/** A run of lines a diff keeps, removes or adds, as jsdiff's diffArrays writes one. */
export interface Part {
  value: string[];
  added?: boolean;
  removed?: boolean;
}

/**
 * diffArrays(a, b) where its answer is certain, else null: past the lines both start with
 * and those both end with, no line of what is left of `a` is in what is left of `b` or in
 * the common end, and no line left of `b` is in the common end. Then the only shortest edit
 * keeps the start and the end and replaces the rest, and diffArrays (which takes the common
 * start first) writes it as the common start, the removed lines, the added lines, the common
 * end. A hunk's span is mostly such a case; Myers on each of them was most of the cost of the
 * diff. (test/patch.diff.test.ts holds the two to the same answers.)
 */
export function certainParts(a: readonly string[], b: readonly string[]): Part[] | null {
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
    if (removed.some((l) => inAdded.has(l) || inEnd.has(l)) || added.some((l) => inEnd.has(l))) return null;
  }
  const parts: Part[] = [];
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
