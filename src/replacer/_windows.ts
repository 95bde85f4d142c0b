// Windows of whole lines that agree with old_string line by line: the search that
// trailing-whitespace (2) and indentation-flexible (3) share, each with its own notion of a
// line's agreement. The trimmed-line index finds the windows; the predicate decides them.
import type { Haystack } from "./_haystack.ts";

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
