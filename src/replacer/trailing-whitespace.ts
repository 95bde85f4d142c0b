// 2 · trailing-whitespace: the same number of whole lines, each equal once the whitespace at its
// end is removed. Tolerates spaces or tabs the model added or dropped at line ends. Must never
// match a line whose indentation or inner text differs, nor write onto a new or changed line
// the trailing whitespace the model added where the file has none.
import type { Candidate, Finding, Strategy } from "./types.ts";
import { splitModel } from "./_text.ts";
import { lineCandidate } from "./_span.ts";
import { lineWindows } from "./_windows.ts";
import { looseRewrite } from "./_merge.ts";

export const trailingWhitespace: Strategy = {
  name: "trailing-whitespace",
  fuzzy: true,
  scored: false,
  find(hay, find): Finding {
    const { lines, trail } = splitModel(find);
    if (lines.length === 0) return { matches: [], note: "old_string has no lines" };
    const ids = lines.map((line) => hay.idOf(line.trim()));
    const missing = ids.indexOf(-1);
    if (missing !== -1) return { matches: [], note: `line ${missing + 1} of old_string occurs nowhere in the file, even trimmed` };
    const wanted = lines.map((line) => line.trimEnd());
    const matches: Candidate[] = lineWindows(hay, ids, (i, f) => hay.line(f).trimEnd() === wanted[i])
      .map((s) => lineCandidate(hay, s, s + lines.length - 1, trail));
    return { matches, note: matches.length === 0 ? "no run of lines equals old_string line by line once trailing whitespace is removed" : undefined };
  },
  rewrite: (hay, match, old, neu) => looseRewrite(hay, match, old, neu),
};
