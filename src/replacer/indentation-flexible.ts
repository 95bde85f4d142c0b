// 3 · indentation-flexible: the same number of whole lines, each equal once trimmed at both ends.
// Tolerates a block quoted at another depth, in other units (tabs for spaces), or with lines
// at a depth of their own, and trailing-whitespace drift as in 2. Must never match a window of
// another line count, nor change bytes of the lines it matched that the model kept.
import type { Candidate, Finding, Strategy } from "./types.ts";
import { splitModel } from "./_text.ts";
import { lineCandidate } from "./_span.ts";
import { lineWindows } from "./_windows.ts";
import { looseRewrite } from "./_merge.ts";

export const indentationFlexible: Strategy = {
  name: "indentation-flexible",
  fuzzy: true,
  scored: false,
  find(hay, find): Finding {
    const { lines, trail } = splitModel(find);
    if (lines.length === 0) return { matches: [], note: "old_string has no lines" };
    const ids = lines.map((line) => hay.idOf(line.trim()));
    const missing = ids.indexOf(-1);
    if (missing !== -1) return { matches: [], note: `line ${missing + 1} of old_string occurs nowhere in the file, even trimmed` };
    const matches: Candidate[] = lineWindows(hay, ids, () => true).map((s) => lineCandidate(hay, s, s + lines.length - 1, trail));
    return { matches, note: matches.length === 0 ? "no run of lines equals old_string line by line once trimmed" : undefined };
  },
  rewrite: (hay, match, old, neu) => looseRewrite(hay, match, old, neu),
};
