// Candidates from offsets or from whole lines, with their 1-based line range.
import type { Haystack } from "./_haystack.ts";
import type { Candidate } from "./types.ts";

export function spanCandidate(hay: Haystack, start: number, end: number): Candidate {
  const startLine = hay.lineOf(start);
  return { start, end, startLine, endLine: Math.max(startLine, hay.lineOf(end > start ? end - 1 : start)) };
}

/** Lines [first, last] (0-based); with `newline`, the "\n" after `last` belongs to the span. */
export function lineCandidate(hay: Haystack, first: number, last: number, newline: boolean): Candidate {
  const { start, end } = hay.span(first, last, newline);
  return { start, end, startLine: first + 1, endLine: last + 1 };
}
