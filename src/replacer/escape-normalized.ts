// 5 · escape-normalized: equal once literal \n \t \" \' \\ \$ \` in old_string are unescaped, or once
// typographic look-alikes (curly quotes, dashes, the minus sign, odd spaces) are folded to ASCII
// on both sides, or both. new_string is read the same way; lines the model kept stay the file's.
// Must never fold anything outside the matched span, nor leave new_string's escapes literal
// when old_string's had to be unescaped to match.
import type { Haystack } from "./_haystack.ts";
import type { Candidate, Finding, Strategy } from "./types.ts";
import { fold, hasFoldable, occurrences, unescape } from "./_text.ts";
import { spanCandidate } from "./_span.ts";
import { looseRewrite } from "./_merge.ts";
import { MAX_LISTED } from "./exact.ts";

type Variant = "unescape" | "typographic" | "unescape+typographic";

/** old_string under each reading, in the order they are tried; readings that change nothing are skipped. */
function readings(hay: Haystack, find: string): { variant: Variant; needle: string; hay: string }[] {
  const out: { variant: Variant; needle: string; hay: string }[] = [];
  const unescaped = unescape(find);
  if (unescaped !== find) out.push({ variant: "unescape", needle: unescaped, hay: hay.content });
  const folded = hay.folded();
  if (folded !== hay.content || hasFoldable(find)) {
    out.push({ variant: "typographic", needle: fold(find), hay: folded });
    if (unescaped !== find) out.push({ variant: "unescape+typographic", needle: fold(unescaped), hay: folded });
  }
  return out;
}

export const escapeNormalized: Strategy = {
  name: "escape-normalized",
  fuzzy: true,
  scored: false,
  find(hay, find): Finding {
    const tried = readings(hay, find);
    if (tried.length === 0) return { matches: [], note: "old_string has no escapes to unescape and nothing to fold" };
    for (const { variant, needle, hay: text } of tried) {
      const { offsets, total } = occurrences(text, needle, MAX_LISTED);
      if (total === 0) continue;
      const matches: Candidate[] = offsets.map((at) => ({ ...spanCandidate(hay, at, at + needle.length), variant }));
      return { matches, total };
    }
    return { matches: [], note: `no match after ${tried.map((t) => t.variant).join(", ")}` };
  },
  rewrite(hay, match, old, neu) {
    const file = hay.content.slice(match.start, match.end);
    const unescaping = match.variant !== "typographic";
    if (match.variant === "unescape") return { text: unescape(neu) };
    return unescaping ? looseRewrite(hay, match, unescape(old), unescape(neu), file) : looseRewrite(hay, match, old, neu, file);
  },
};
