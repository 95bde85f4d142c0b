// 1 · exact: old_string occurs verbatim; new_string is inserted as given.
// Tolerates nothing. Must never report one match where the text occurs twice, even overlapping.
import type { Finding, Strategy } from "./types.ts";
import { occurrences } from "./_text.ts";
import { spanCandidate } from "./_span.ts";

/** Matches beyond this many are counted but not listed (a one-letter old_string in a large file). */
export const MAX_LISTED = 1000;

export const exact: Strategy = {
  name: "exact",
  fuzzy: false,
  scored: false,
  find(hay, find): Finding {
    const { offsets, total } = occurrences(hay.content, find, MAX_LISTED);
    return {
      matches: offsets.map((at) => spanCandidate(hay, at, at + find.length)),
      total,
      note: total === 0 ? "old_string does not occur verbatim" : undefined,
    };
  },
  rewrite: (_hay, _match, _old, neu) => ({ text: neu }),
};
