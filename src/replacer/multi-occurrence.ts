// 9 · multi-occurrence (replace_all only): every exact, non-overlapping occurrence; new_string as given.
// Tolerates nothing. Must never reach for a fuzzy strategy: no exact occurrence means not found.
import type { Finding, Strategy } from "./types.ts";
import { spanCandidate } from "./_span.ts";

export const multiOccurrence: Strategy = {
  name: "multi-occurrence",
  fuzzy: false,
  scored: false,
  find(hay, find): Finding {
    const matches = [];
    if (find !== "") {
      for (let i = hay.content.indexOf(find); i !== -1; i = hay.content.indexOf(find, i + find.length)) {
        matches.push(spanCandidate(hay, i, i + find.length));
      }
    }
    return { matches, note: matches.length === 0 ? "old_string does not occur verbatim" : undefined };
  },
  rewrite: (_hay, _match, _old, neu) => ({ text: neu }),
};
