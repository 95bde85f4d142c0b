// What block-anchor and context-aware share: anchor lines, the blocks they bound, and the
// choice among scored blocks, which refuses rather than guesses.
import type { Haystack } from "./_haystack.ts";
import type { Candidate, Finding, Rewrite, ScoredRange } from "./types.ts";
import { isBlank, splitModel } from "./_text.ts";
import { asRewrite, merge } from "./_merge.ts";

/** More blocks than this between the anchors means the anchors say too little to judge. */
export const MAX_BLOCKS = 100;
/** Two blocks whose scores are closer than this cannot be told apart. */
export const MARGIN = 0.1;

export interface Anchored {
  lines: string[];
  trail: boolean;
  firstId: number;
  lastId: number;
}

/** old_string's anchors, or why it has none worth trusting. */
export function anchors(hay: Haystack, find: string): Anchored | { note: string } {
  const { lines, trail } = splitModel(find);
  if (lines.length < 3) return { note: "old_string has fewer than 3 lines: no block between anchors" };
  if (isBlank(lines[0]!) || isBlank(lines[lines.length - 1]!)) return { note: "the first or last line of old_string is blank: no anchor" };
  if (lines.slice(1, -1).every(isBlank)) return { note: "old_string has no non-blank line between its anchors" };
  const firstId = hay.idOf(lines[0]!.trim());
  const lastId = hay.idOf(lines[lines.length - 1]!.trim());
  if (firstId < 0) return { note: "the first line of old_string occurs nowhere in the file" };
  if (lastId < 0) return { note: "the last line of old_string occurs nowhere in the file" };
  return { lines, trail, firstId, lastId };
}

/** Blocks [first, last] (0-based lines) with the anchors at both ends and a length in [minLen, maxLen]. */
function blocks(hay: Haystack, a: Anchored, minLen: number, maxLen: number): { list: [number, number][]; total: number } {
  const starts = hay.linesWithId(a.firstId);
  const ends = hay.linesWithId(a.lastId);
  const list: [number, number][] = [];
  let total = 0;
  for (const s of starts) {
    let lo = 0;
    let hi = ends.length;
    const from = s + minLen - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (ends[mid]! < from) lo = mid + 1;
      else hi = mid;
    }
    for (let k = lo; k < ends.length && ends[k]! <= s + maxLen - 1; k++) {
      if (ends[k]! <= s) continue;
      if (total++ < MAX_BLOCKS) list.push([s, ends[k]!]);
    }
  }
  return { list, total };
}

const overlaps = (x: Candidate, y: Candidate) => x.start < y.end && y.start < x.end;

export function ranged(c: Candidate): ScoredRange {
  return { startLine: c.startLine, endLine: c.endLine, score: c.score ?? 0 };
}

/**
 * The best block when it is trustworthy. Several blocks passing the threshold within the
 * margin of each other are all returned (the cascade reports them as ambiguous); a rival that
 * is close below the threshold, or that passes the threshold at all, makes the best doubtful.
 */
export function choose(scored: Candidate[], threshold: number, what: string): Finding {
  scored.sort((x, y) => y.score! - x.score! || x.start - y.start);
  const best = scored[0];
  if (!best || best.score! < threshold) {
    return {
      matches: [],
      rejected: scored.slice(0, 20),
      note: best ? `best ${what} scores ${best.score!.toFixed(2)}, below ${threshold}` : `no block between the anchors has the right length`,
    };
  }
  const rivals: Candidate[] = [];
  // Blocks that overlap the best but start at another anchor: another reading of much the same
  // lines, a doubt only when it scores as well (a quote of lines 745–753 also fitting 741–749,
  // since "}" opens both). One with the same start is the same block read to another end.
  const shifted: Candidate[] = [];
  for (const c of scored) {
    if (c === best || (overlaps(c, best) && c.start === best.start)) continue;
    if (overlaps(c, best)) {
      if (!shifted.some((r) => r.start === c.start)) shifted.push(c);
      continue;
    }
    if (rivals.some((r) => overlaps(c, r))) continue;
    rivals.push(c);
  }
  const close = [...rivals, ...shifted].filter((c) => c.score! >= best.score! - MARGIN).sort((x, y) => y.score! - x.score! || x.start - y.start);
  const tied = close.filter((c) => c.score! >= threshold);
  if (tied.length > 0) {
    return { matches: [best, ...tied], rejected: scored.filter((c) => c !== best && !tied.includes(c)).slice(0, 20) };
  }
  if (close.length > 0) {
    return {
      matches: [],
      rejected: scored.slice(0, 20),
      refusal: { reason: "doubtful", doubt: "close-scores", candidates: [best, ...close].map(ranged) },
    };
  }
  const passing = rivals.filter((c) => c.score! >= threshold);
  if (passing.length > 0) {
    return {
      matches: [],
      rejected: scored.slice(0, 20),
      refusal: { reason: "doubtful", doubt: "rival-block", candidates: [best, ...passing].map(ranged) },
    };
  }
  return { matches: [best], rejected: scored.slice(1, 20) };
}

/**
 * old_string's anchors and the blocks they bound, with a length in lines within the range
 * `lengths(k)` gives for old_string's k lines — or the Finding that ends the strategy.
 */
export function anchoredBlocks(hay: Haystack, find: string, lengths: (k: number) => [number, number]): { a: Anchored; list: [number, number][] } | Finding {
  const a = anchors(hay, find);
  if ("note" in a) return { matches: [], note: a.note };
  const [min, max] = lengths(a.lines.length);
  const { list, total } = blocks(hay, a, min, max);
  if (total > list.length) return tooManyBlocks(total);
  return { a, list };
}

/** No verdict when the anchors bound more blocks than can be judged: the near-miss takes over. */
function tooManyBlocks(total: number): Finding {
  return {
    matches: [],
    note: `the anchor lines bound ${total} blocks of a fitting length; too common to locate old_string by them`,
  };
}

/** The merge along the block's alignment, refusing where applying it would be a guess. */
export function guardedRewrite(hay: Haystack, match: Candidate, old: string, neu: string): Rewrite {
  return asRewrite(merge({ file: hay.content.slice(match.start, match.end), old, neu, pairs: match.pairs, guard: true, context: hay.context(match.start, match.end) }), match);
}
