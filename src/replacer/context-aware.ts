// 8 · context-aware: a block of exactly old_string's line count whose first and last lines equal
// old_string's (trimmed, not blank) and at least half of whose middle lines are equal trimmed,
// one of them not blank. The last resort for a quote with some lines wrong. Must never accept
// on the anchors and blank lines alone, nor let the model change a line that is not the file's.
import type { Candidate, Finding, Strategy } from "./types.ts";
import { isBlank } from "./_text.ts";
import { lineCandidate } from "./_span.ts";
import { anchoredBlocks, choose, guardedRewrite } from "./_anchors.ts";

export const CONTEXT_THRESHOLD = 0.5;

export const contextAware: Strategy = {
  name: "context-aware",
  fuzzy: true,
  scored: true,
  find(hay, find): Finding {
    const found = anchoredBlocks(hay, find, (k) => [k, k]);
    if ("matches" in found) return found;
    const { a, list } = found;
    const k = a.lines.length;
    const ids = hay.trimmedIds();
    const want = a.lines.map((line) => hay.idOf(line.trim()));
    const scored: Candidate[] = [];
    for (const [first, last] of list) {
      let equal = 0;
      let solid = 0;
      for (let i = 1; i < k - 1; i++) {
        if (want[i] !== ids[first + i]) continue;
        equal++;
        if (!isBlank(a.lines[i]!)) solid++;
      }
      // Blank lines alone are no evidence that this is the block.
      const score = solid === 0 ? 0 : equal / (k - 2);
      scored.push({ ...lineCandidate(hay, first, last, a.trail), score, pairs: a.lines.map((_, i) => i) });
    }
    return choose(scored, CONTEXT_THRESHOLD, "block");
  },
  rewrite: guardedRewrite,
};
