// 6 · trimmed-boundary: old_string without its leading and trailing whitespace occurs verbatim;
// the same boundary whitespace is dropped from new_string. Tolerates blank lines or spaces
// quoted around the text that the file does not have there (at the start or end of the file,
// or fewer line breaks than quoted). Must never match on whitespace alone, alter a byte between
// the first and last non-space characters, or glue the text onto a neighbouring token: where
// old_string had boundary whitespace, the file must have whitespace or its own start or end.
import type { Finding, Strategy } from "./types.ts";
import { commonPrefix, commonSuffix, isWs, occurrences } from "./_text.ts";
import { spanCandidate } from "./_span.ts";
import { MAX_LISTED } from "./exact.ts";

/** Whether the file has a separator at `at` (before it, dir -1; after it, dir 1): spaces between the span and other text on its line. */
function separated(text: string, at: number, dir: 1 | -1): boolean {
  let i = dir === 1 ? at : at - 1;
  if (i < 0 || i >= text.length || text.charCodeAt(i) === 10 || !isWs(text.charCodeAt(i))) return false;
  while (i >= 0 && i < text.length && text.charCodeAt(i) !== 10 && isWs(text.charCodeAt(i))) i += dir;
  return i >= 0 && i < text.length && text.charCodeAt(i) !== 10;
}

export const trimmedBoundary: Strategy = {
  name: "trimmed-boundary",
  fuzzy: true,
  scored: false,
  find(hay, find): Finding {
    const core = find.trim();
    if (core === "") return { matches: [], note: "old_string is only whitespace" };
    if (core === find) return { matches: [], note: "old_string has no boundary whitespace to drop" };
    const text = hay.content;
    const lead = find.length - find.trimStart().length > 0;
    const trail = find.length - find.trimEnd().length > 0;
    const all = occurrences(text, core).offsets;
    const glues = (at: number) =>
      (lead && at > 0 && !isWs(text.charCodeAt(at - 1))) || (trail && at + core.length < text.length && !isWs(text.charCodeAt(at + core.length)));
    const offsets = all.filter((at) => !glues(at));
    // Refused occurrences are the near-miss: the model's text is there, glued onto a neighbouring token.
    const refused = offsets.length === 0 ? all.slice(0, 20).map((at) => spanCandidate(hay, at, at + core.length)) : [];
    return {
      matches: offsets.slice(0, MAX_LISTED).map((at) => spanCandidate(hay, at, at + core.length)),
      ...(refused.length > 0 ? { rejected: refused } : {}),
      total: offsets.length,
      note: refused.length > 0
        ? "without its boundary whitespace old_string occurs only glued onto a neighbouring token, where it had whitespace"
        : offsets.length === 0 ? "old_string does not occur even without its boundary whitespace" : undefined,
    };
  },
  rewrite(hay, match, old, neu) {
    const lead = old.slice(0, old.length - old.trimStart().length);
    const trail = old.slice(old.trimEnd().length);
    const neuLead = neu.slice(0, neu.length - neu.trimStart().length);
    const neuTrail = neu.slice(neu.trimEnd().length);
    const drop = commonPrefix(lead, neuLead);
    let text = neu.slice(drop);
    const keep = text.length - Math.min(commonSuffix(trail, neuTrail), text.length);
    text = text.slice(0, keep);
    // Inside a line the file's separator stays next to the span: old_string's boundary was not
    // it (else an earlier strategy matched), so new_string's spaces there would only double it
    // (_edges.ts's rule: a separator quoted otherwise than the file has it is the file's).
    const content = hay.content;
    if (lead !== "" && separated(content, match.start, -1)) text = text.replace(/^[^\S\n]+/, "");
    if (trail !== "" && separated(content, match.end, 1)) text = text.replace(/[^\S\n]+$/, "");
    return { text };
  },
};
