// 7 · block-anchor: old_string has ≥3 lines; its first and last lines (trimmed, not blank) bound
// a block of the file within ±25% of its line count whose middle lines are, on average, at least
// 0.65 similar (Levenshtein) to old_string's. Tolerates misremembered middle lines. Must never
// accept on the anchors alone (the threshold holds for a single candidate too), pick one of
// several close blocks, or let the model change a line it did not quote correctly.
import type { Haystack } from "./_haystack.ts";
import type { Candidate, Finding, Strategy } from "./types.ts";
import { looseKey, similarity } from "./_text.ts";
import { lineCandidate } from "./_span.ts";
import { anchoredBlocks, choose, guardedRewrite } from "./_anchors.ts";

export const BLOCK_THRESHOLD = 0.65;

/**
 * Mean similarity of old_string's middle lines to the block's, over the best monotone
 * alignment (a line with no partner counts 0; the longer side is the denominator), and that
 * alignment. The alignment is searched in a band around the diagonal: blocks differ in length
 * by at most 25%.
 */
function scoreBlock(hay: Haystack, keys: string[], first: number, last: number, memo: Map<number, number>): { score: number; pairs: number[] } {
  const m = keys.length - 2;
  const n = last - first - 1;
  const band = Math.abs(m - n) + 2;
  const sim = (i: number, j: number) => {
    const line = first + 1 + j;
    const key = (i + 1) * hay.lineCount + line;
    let s = memo.get(key);
    if (s === undefined) memo.set(key, (s = similarity(keys[i + 1]!, hay.looseKey(line))));
    return s;
  };
  const width = n + 1;
  const dp = new Float64Array((m + 1) * width);
  for (let i = 1; i <= m; i++) {
    for (let j = Math.max(1, i - band); j <= Math.min(n, i + band); j++) {
      dp[i * width + j] = Math.max(dp[(i - 1) * width + j]!, dp[i * width + j - 1]!, dp[(i - 1) * width + j - 1]! + sim(i - 1, j - 1));
    }
  }
  const pairs = new Array<number>(keys.length).fill(-1);
  pairs[0] = 0;
  pairs[keys.length - 1] = n + 1;
  for (let i = m, j = n; i > 0 && j > 0; ) {
    const here = dp[i * width + j]!;
    if (here === dp[(i - 1) * width + j]) i--;
    else if (here === dp[i * width + j - 1]) j--;
    else {
      pairs[i] = j;
      i--;
      j--;
    }
  }
  return { score: m === 0 && n === 0 ? 1 : dp[m * width + n]! / Math.max(m, n), pairs };
}

export const blockAnchor: Strategy = {
  name: "block-anchor",
  fuzzy: true,
  scored: true,
  find(hay, find): Finding {
    const found = anchoredBlocks(hay, find, (k) => [Math.max(3, Math.ceil(k * 0.75)), Math.floor(k * 1.25)]);
    if ("matches" in found) return found;
    const { a, list } = found;
    const keys = a.lines.map(looseKey);
    const memo = new Map<number, number>();
    const scored: Candidate[] = list.map(([first, last]) => {
      const { score, pairs } = scoreBlock(hay, keys, first, last, memo);
      return { ...lineCandidate(hay, first, last, a.trail), score, pairs };
    });
    return choose(scored, BLOCK_THRESHOLD, "block");
  },
  rewrite: guardedRewrite,
};
