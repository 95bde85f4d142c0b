// 2 · line-trimmed: the same number of whole lines, each equal once trimmed at both ends.
// Tolerates indentation and trailing-whitespace drift on any line. Must never match a window
// of another line count, nor change bytes of the lines it matched that the model kept.
import type { Haystack } from "./_haystack.ts";
import type { Candidate, Finding, Strategy } from "./types.ts";
import { splitModel } from "./_text.ts";
import { lineCandidate } from "./_span.ts";
import { mergeLoose } from "./_merge.ts";

/**
 * Windows of whole lines whose ids (one per line of old_string) all agree with the file's,
 * found from the occurrences of old_string's rarest line. `ids[i] === -1` means "any line".
 */
export function lineWindows(hay: Haystack, ids: number[], lineOk: (oldLine: number, fileLine: number) => boolean): number[] {
  const fileIds = hay.trimmedIds();
  let pivot = -1;
  for (let i = 0; i < ids.length; i++) {
    if (ids[i] === -1) continue;
    if (pivot === -1 || hay.linesWithId(ids[i]!).length < hay.linesWithId(ids[pivot]!).length) pivot = i;
  }
  const starts: number[] = [];
  if (pivot === -1) return starts;
  for (const at of hay.linesWithId(ids[pivot]!)) {
    const s = at - pivot;
    if (s < 0 || s + ids.length > hay.lineCount) continue;
    let ok = true;
    for (let i = 0; i < ids.length && ok; i++) {
      ok = (ids[i] === -1 || fileIds[s + i] === ids[i]) && lineOk(i, s + i);
    }
    if (ok) starts.push(s);
  }
  return starts;
}

export const lineTrimmed: Strategy = {
  name: "line-trimmed",
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
  rewrite: (hay, match, old, neu) => ({ text: mergeLoose(hay.content.slice(match.start, match.end), old, neu) }),
};
