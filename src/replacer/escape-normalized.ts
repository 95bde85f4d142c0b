// 5 · escape-normalized: equal once literal \n \t \" \' \\ \$ \` in old_string are unescaped, or once
// typographic look-alikes (curly quotes, dashes, the minus sign, odd spaces) are folded to ASCII
// on both sides, or both. new_string is read the same way; lines the model kept stay the file's.
// When no reading occurs verbatim, each is tried line by line (trailing whitespace, indentation,
// spacing), for a quote with two slips at once. Must never fold anything outside the matched
// span, nor leave new_string's escapes literal when old_string's had to be unescaped to match.
import type { Haystack } from "./_haystack.ts";
import type { Candidate, Finding, Strategy } from "./types.ts";
import { fold, hasFoldable, occurrences, unescape } from "./_text.ts";
import { spanCandidate } from "./_span.ts";
import { looseRewrite } from "./_merge.ts";
import { MAX_LISTED } from "./exact.ts";
import { Haystack as HaystackClass } from "./_haystack.ts";
import { trailingWhitespace } from "./trailing-whitespace.ts";
import { indentationFlexible } from "./indentation-flexible.ts";
import { whitespaceNormalized } from "./whitespace-normalized.ts";

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

/** The line strategies a reading is tried with when it occurs nowhere verbatim, strictest first. */
const LINE_STRATEGIES: readonly Strategy[] = [trailingWhitespace, indentationFlexible, whitespaceNormalized];

/** The content folded as a haystack of its own (same length, same lines), once per haystack. */
const foldedHays = new WeakMap<Haystack, Haystack>();
function foldedHay(hay: Haystack): Haystack {
  const folded = hay.folded();
  if (folded === hay.content) return hay;
  let h = foldedHays.get(hay);
  if (!h) foldedHays.set(hay, (h = new HaystackClass(folded, hay.starts)));
  return h;
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
    // Two slips at once: the quote over-escaped or typographic and also re-indented, spaced or
    // trailing-spaced. Each reading through the line strategies, which tolerate the second slip.
    for (const { variant, needle } of tried) {
      const over = variant === "unescape" ? hay : foldedHay(hay);
      for (const line of LINE_STRATEGIES) {
        const found = line.find(over, needle);
        if (found.matches.length === 0) continue;
        const matches: Candidate[] = found.matches.map((m) => ({ ...m, variant, via: line.name }));
        return { matches, ...(found.total === undefined ? {} : { total: found.total }) };
      }
    }
    return { matches: [], note: `no match after ${tried.map((t) => t.variant).join(", ")}, verbatim or line by line` };
  },
  rewrite(hay, match, old, neu) {
    const file = hay.content.slice(match.start, match.end);
    const unescaping = match.variant !== "typographic";
    const [o, n] = unescaping ? [unescape(old), unescape(neu)] : [old, neu];
    // A reading found line by line is rewritten as that strategy rewrites its matches (lines the
    // model kept are the file's; the merge folds typography where it compares).
    const via = match.via && LINE_STRATEGIES.find((s) => s.name === match.via);
    if (via) return via.rewrite(hay, match, o, n);
    if (match.variant === "unescape") return { text: n };
    return looseRewrite(hay, match, o, n, file);
  },
};
