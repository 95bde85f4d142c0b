// The closest region to an old_string that matched nowhere, and its first differing line —
// cheap by construction: scored blocks the cascade already has, else lines voting for where
// old_string would start, else one bounded similarity scan for old_string's longest line.
import type { Haystack } from "./_haystack.ts";
import type { Candidate, NearMiss } from "./types.ts";
import { commonPrefix, looseKey, similarity, splitModel, squeezeKey, withoutWs } from "./_text.ts";

/** A line occurring more often than this says nothing about where old_string is. */
const COMMON_LINE = 64;
/** At least this share of old_string's non-blank lines must agree on a region. */
const MIN_VOTES = 0.3;
const MIN_SIMILARITY = 0.6;

export interface Hint {
  source: "trimmed-boundary" | "block-anchor" | "context-aware";
  candidate: Candidate;
  /** Lines of old_string before the one the candidate starts at (boundary blank lines the file lacks). */
  shift?: number;
}

export function nearMiss(hay: Haystack, find: string, hints: readonly Hint[]): NearMiss | undefined {
  const { lines } = splitModel(find);
  if (lines.length === 0) return undefined;
  for (const { source, candidate, shift } of hints) {
    const found = describe(hay, lines, candidate.startLine - 1 - (shift ?? 0), candidate.pairs, source, candidate.score ?? 0);
    // The quoted text is there verbatim: point at where it starts, glued onto its neighbour.
    if (found && source === "trimmed-boundary" && found.line === candidate.startLine) {
      return { ...found, column: candidate.start - hay.starts[found.line - 1]! + 1, whitespaceOnly: false };
    }
    if (found) return found;
  }
  const voted = byVotes(hay, lines);
  if (voted) return describe(hay, lines, voted.start, undefined, "line-votes", voted.score);
  const similar = bySimilarity(hay, lines);
  if (similar) return describe(hay, lines, similar.start, undefined, "line-similarity", similar.score);
  return undefined;
}

/** The first line of old_string that differs from the file's, with the file's region placed at `start`. */
export function describe(
  hay: Haystack,
  lines: readonly string[],
  start: number,
  pairs: readonly number[] | undefined,
  source: NearMiss["source"],
  score: number,
): NearMiss | undefined {
  const startLine = Math.max(1, start + 1);
  const endLine = Math.min(hay.lineCount, start + (pairs ? Math.max(...pairs) + 1 : lines.length));
  for (let i = 0; i < lines.length; i++) {
    const paired = pairs ? pairs[i]! : i;
    const f = start + (paired >= 0 ? paired : i);
    if (f < 0 || f >= hay.lineCount) continue;
    const actual = hay.line(f);
    const expected = lines[i]!;
    if (actual === expected) continue;
    return {
      startLine,
      endLine: Math.max(startLine, endLine),
      line: f + 1,
      ...difference(expected, actual),
      expected,
      actual,
      source,
      score: Math.round(score * 100) / 100,
    };
  }
  return undefined;
}

export function focus(hay: Haystack, region: { startLine: number; endLine: number }, line: number, expected: string, source: NearMiss["source"], score: number): NearMiss {
  const actual = hay.line(line - 1);
  return {
    ...region,
    line,
    ...difference(expected, actual),
    expected,
    actual,
    source,
    score: Math.round(score * 100) / 100,
  };
}

/**
 * Where two versions of a line first differ, as a 1-based column of the file's line. When they
 * differ in more than whitespace, a difference in indentation alone is not the one to point at.
 */
export function difference(expected: string, actual: string): { column: number; whitespaceOnly: boolean } {
  if (withoutWs(expected) === withoutWs(actual)) return { column: commonPrefix(expected, actual) + 1, whitespaceOnly: true };
  const e = expected.trimStart();
  const a = actual.trimStart();
  return { column: actual.length - a.length + commonPrefix(e, a) + 1, whitespaceOnly: false };
}

/** Where old_string would start if its lines that occur (up to spacing) in the file are right. */
function byVotes(hay: Haystack, lines: readonly string[]): { start: number; score: number } | undefined {
  const index = hay.squeezed();
  const votes = new Map<number, number>();
  let solid = 0;
  for (let i = 0; i < lines.length; i++) {
    const key = squeezeKey(lines[i]!);
    if (key === "") continue;
    solid++;
    const at = index.get(key);
    if (!at || at.length > COMMON_LINE) continue;
    for (const f of at) votes.set(f - i, (votes.get(f - i) ?? 0) + 1);
  }
  let start = 0;
  let best = 0;
  for (const [s, n] of votes) if (n > best || (n === best && s < start)) [start, best] = [s, n];
  if (best === 0 || best < Math.ceil(solid * MIN_VOTES)) return undefined;
  return { start, score: best / solid };
}

/** The file line most similar to old_string's longest line, by one scan over lines of a fitting length. */
function bySimilarity(hay: Haystack, lines: readonly string[]): { start: number; score: number } | undefined {
  let pick = -1;
  for (let i = 0; i < lines.length; i++) {
    if (pick === -1 || lines[i]!.trim().length > lines[pick]!.trim().length) pick = i;
  }
  const key = looseKey(lines[pick]!).slice(0, 300);
  if (key.length < 4) return undefined;
  let best = 0;
  let at = -1;
  for (let f = 0; f < hay.lineCount; f++) {
    const raw = hay.lineEnd(f) - hay.starts[f]!;
    if (raw < key.length * 0.5) continue;
    // Not cached: one pass, and a key per line of the file would double the memory held.
    const other = looseKey(hay.line(f));
    if (other.length < key.length * 0.5 || other.length > key.length * 2) continue;
    const s = similarity(key, other.slice(0, 600));
    if (s > best) [best, at] = [s, f];
  }
  if (best < MIN_SIMILARITY) return undefined;
  return { start: at - pick, score: best };
}
