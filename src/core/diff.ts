// Unified diffs for metadata.diff (write, edit, patch), on LF-normalized text. The differ
// runs with a budget: past MAX_EDIT_LENGTH lines of edit distance (a rewrite of a large
// file, where Myers' diff is quadratic: 3,400 changed lines took 8.5 s), the diff is one
// hunk from the first changed line to the last — valid and exact, only not minimal.
import { structuredPatch, formatPatch, type StructuredPatch } from "diff";

export interface Diff {
  patch: string;
  additions: number;
  deletions: number;
}

const MAX_EDIT_LENGTH = 500;
const CONTEXT = 3;

export function unifiedDiff(path: string, before: string, after: string): Diff {
  const a = before.replace(/\r\n/g, "\n");
  const b = after.replace(/\r\n/g, "\n");
  const patch = structuredPatch(path, path, a, b, "", "", { context: CONTEXT, maxEditLength: MAX_EDIT_LENGTH }) ?? oneHunk(path, a, b);
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

/** Everything between the common first and last lines, as removed and added (a missing final newline is not marked). */
function oneHunk(path: string, a: string, b: string): StructuredPatch {
  const split = (t: string) => (t === "" ? [] : t.endsWith("\n") ? t.slice(0, -1).split("\n") : t.split("\n"));
  const A = split(a);
  const B = split(b);
  let head = 0;
  while (head < A.length && head < B.length && A[head] === B[head]) head++;
  let tail = 0;
  while (tail < A.length - head && tail < B.length - head && A[A.length - 1 - tail] === B[B.length - 1 - tail]) tail++;
  const from = Math.max(0, head - CONTEXT);
  const after = Math.min(tail, CONTEXT);
  const lines = [
    ...A.slice(from, head).map((l) => ` ${l}`),
    ...A.slice(head, A.length - tail).map((l) => `-${l}`),
    ...B.slice(head, B.length - tail).map((l) => `+${l}`),
    ...A.slice(A.length - tail, A.length - tail + after).map((l) => ` ${l}`),
  ];
  const oldLines = A.length - tail + after - from;
  const newLines = B.length - tail + after - from;
  return {
    oldFileName: path,
    newFileName: path,
    oldHeader: "",
    newHeader: "",
    hunks: [{ oldStart: oldLines === 0 ? from : from + 1, oldLines, newStart: newLines === 0 ? from : from + 1, newLines, lines }],
  };
}
