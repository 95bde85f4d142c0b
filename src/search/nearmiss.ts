// The "did you mean" of a grep with no matches: one cheap re-probe over the same files
// with the pattern made case-insensitive and, for a plain-text pattern, widened to every
// text within one edit (a character dropped, added, changed, or two swapped). The hint is
// the found text closest to the pattern, chosen from the collected lines alone, so both
// engines give the same hint.
import { distance } from "fastest-levenshtein";
import { compilePattern, escapeLiteral, withPrefilter, type Compiled } from "./regex.ts";
import type { Collector } from "./collect.ts";

const MIN_FUZZY = 4;
const MAX_FUZZY = 64;

/** The probe pattern, or null when no variant is worth a second pass. */
export function probeFor(compiled: Compiled): Compiled | null {
  const text = compiled.literal;
  if (text !== null && [...text].length >= MIN_FUZZY && [...text].length <= MAX_FUZZY) {
    const chars = [...text];
    const variants = new Set<string>([escapeLiteral(text)]);
    const lit = (cs: string[]) => escapeLiteral(cs.join(""));
    for (let i = 0; i < chars.length; i++) {
      variants.add(lit(chars.filter((_, j) => j !== i)));
      variants.add(`${lit(chars.slice(0, i))}.${lit(chars.slice(i + 1))}`);
      variants.add(`${lit(chars.slice(0, i))}.${lit(chars.slice(i))}`);
      if (i + 1 < chars.length) variants.add(lit([...chars.slice(0, i), chars[i + 1]!, chars[i]!, ...chars.slice(i + 2)]));
    }
    variants.add(`${lit(chars)}.`);
    // One edit touches at most two of three consecutive parts, so every variant
    // contains one part intact: a cheap test before the slow alternation.
    const third = Math.ceil(chars.length / 3);
    const parts = [0, 1, 2].map((k) => lit(chars.slice(k * third, (k + 1) * third))).filter((p) => p !== "");
    return withPrefilter(compilePattern([...variants].join("|"), true), compilePattern(parts.join("|"), true));
  }
  if (compiled.caseInsensitive) return null;
  return compilePattern(compiled.pattern, true);
}

/** The matched text nearest the pattern, written as a pattern; null when nothing matched. */
export function nearest(compiled: Compiled, probe: Compiled, found: Collector): string | null {
  const counts = new Map<string, number>();
  const re = probe.js;
  for (const file of found.files) {
    for (const hit of file.hits) {
      // Overlapping: a variant matching one character early must not hide a closer one.
      re.lastIndex = 0;
      for (let m = re.exec(hit.text); m; m = re.exec(hit.text)) {
        if (m[0] !== "") counts.set(m[0], (counts.get(m[0]) ?? 0) + 1);
        // One whole code point on: inside a surrogate pair the engine would back up.
        re.lastIndex = m.index + ((hit.text.codePointAt(m.index) ?? 0) > 0xffff ? 2 : 1);
      }
    }
  }
  re.lastIndex = 0;
  const target = compiled.literal ?? compiled.pattern;
  let best: { text: string; key: number[] } | null = null;
  for (const [text, n] of counts) {
    const key = [distance(text.toLowerCase(), target.toLowerCase()), distance(text, target), -n];
    if (!best || less(key, text, best.key, best.text)) best = { text, key };
  }
  if (!best) return null;
  return escapeLiteral(best.text);
}

function less(a: number[], at: string, b: number[], bt: string): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! < b[i]!;
  return at < bt;
}
