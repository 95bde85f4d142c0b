// The "did you mean" of a grep with no matches: one cheap re-probe over the same files
// with the pattern made case-insensitive and, for a plain-text pattern, widened to every
// text within one edit (a character dropped, added, changed, or two swapped). The hint is
// the found text closest to the pattern, chosen from the collected lines alone, so both
// engines give the same hint. "Closest" counts two swapped letters as one edit, as the
// probe does: "licnese" must suggest "license", not some rarer word one letter shorter.
import { compilePattern, escapeLiteral, NEVER_INVALID, NEVER_VALID, type Compiled } from "./regex.ts";
import { anchorsOf } from "./anchor.ts";
import type { Collector } from "./collect.ts";
import { search, type Engine, type Run } from "./engine.ts";
import type { SearchPlan } from "./plan.ts";

/**
 * The probe policy. The built-in engine searches for the probe in the search's own pass,
 * and so does rg for a case-insensitive pattern (then the probe, case-insensitive too,
 * costs rg little more than the search); either retires it once the pattern has a hit.
 * For a case-sensitive pattern a case-insensitive rg pass would cost every search
 * 20–40% more, so rg gets no probe here, and nearMissHint makes a second pass, only when
 * nothing matched. A multiline search gets no probe at all: the probe is line by line.
 */
export function samePassProbe(engine: Engine, compiled: Compiled): Compiled | null {
  if (compiled.multiline) return null;
  return engine.name === "builtin" || compiled.caseInsensitive ? probeFor(compiled) : null;
}

/** The hint for a search (`first`) that matched nothing: what its pass found of the
 * probe, or a second pass for the probe alone when the first carried none. */
export async function nearMissHint(engine: Engine, plan: SearchPlan, compiled: Compiled, first: Run): Promise<string | null> {
  if (first.probed) return first.probed.found.lines === 0 ? null : nearest(compiled, first.probed.probe, first.probed.found);
  if (compiled.multiline || samePassProbe(engine, compiled) !== null) return null;
  const probe = probeFor(compiled);
  if (!probe) return null;
  const run = await search(engine, plan, probe, { warn: () => {} });
  if (run.outcome.timedOut || run.collector.lines === 0) return null;
  return nearest(compiled, probe, run.collector);
}

const MIN_FUZZY = 4;
const MAX_FUZZY = 64;

/**
 * The probe pattern, or null when no variant is worth searching for. The edit-distance
 * probe is searched for through a necessary condition both engines find fast: three
 * literals, the two halves of the text and the text with its middle pair swapped, one of
 * which every variant contains (an edit touches one half, or swaps across the middle).
 * Lines holding one of them are then checked with a trie of the variants, which
 * JavaScript runs about 7× faster than the flat alternation of the same strings.
 */
export function probeFor(compiled: Compiled): Compiled | null {
  const text = compiled.literal;
  const chars = text === null ? [] : [...text];
  if (chars.length >= MIN_FUZZY && chars.length <= MAX_FUZZY) {
    const lit = (cs: string[]) => escapeLiteral(cs.join(""));
    const mid = Math.floor(chars.length / 2);
    const swapped = [...chars.slice(0, mid - 1), chars[mid]!, chars[mid - 1]!, ...chars.slice(mid + 1)];
    const parts = compilePattern([lit(chars.slice(0, mid)), lit(chars.slice(mid)), lit(swapped)].join("|"), "insensitive");
    const spellings = [chars.slice(0, mid), chars.slice(mid), swapped].map((cs) => anchorsOf(cs.join(""), true));
    const anchors = spellings.every((a) => a !== null) ? spellings.flatMap((a) => a!) : null;
    const fixed = [chars.slice(0, mid), chars.slice(mid), swapped].map((cs) => cs.join(""));
    // The trie is written straight as JavaScript (it holds only escaped text and "."):
    // through the pattern parser it cost a few milliseconds on every search.
    const trie = (never: string) => new RegExp(trieOf(chars, 0, `[^${never}]`), "giu");
    return {
      pattern: parts.pattern,
      js: trie(NEVER_INVALID),
      jsValid: trie(NEVER_VALID),
      rust: parts.rust,
      caseInsensitive: true,
      literal: null,
      prefilter: parts.js,
      anchors,
      verify: true,
      fixed,
    };
  }
  if (compiled.caseInsensitive) return null;
  return compilePattern(compiled.pattern, "insensitive");
}

/** The strings within one edit of chars[i..], given chars[..i] matched exactly; `any`
 * stands for one character. */
function trieOf(chars: string[], i: number, any: string): string {
  const lit = (cs: string[]) => escapeLiteral(cs.join(""));
  if (i === chars.length) return `${any}??`;
  const rest = chars.slice(i + 1);
  const alternatives = [`${lit([chars[i]!])}${trieOf(chars, i + 1, any)}`, lit(rest), `${any}${lit(rest)}`, `${any}${lit(chars.slice(i))}`];
  if (i + 1 < chars.length) alternatives.push(lit([chars[i + 1]!, chars[i]!, ...chars.slice(i + 2)]));
  return `(?:${alternatives.join("|")})`;
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
    const key = [edits(text.toLowerCase(), target.toLowerCase()), edits(text, target), -n];
    if (!best || less(key, text, best.key, best.text)) best = { text, key };
  }
  if (!best) return null;
  return escapeLiteral(best.text);
}

/**
 * Edits between a and b, a swap of two neighbours counting as one (optimal string
 * alignment). The strings are short (a pattern of at most 64 characters and what
 * matched it), so the table is small.
 */
export function edits(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  const width = y.length + 1;
  const d = new Uint16Array((x.length + 1) * width);
  for (let j = 0; j <= y.length; j++) d[j] = j;
  for (let i = 1; i <= x.length; i++) {
    d[i * width] = i;
    for (let j = 1; j <= y.length; j++) {
      const same = x[i - 1] === y[j - 1] ? 0 : 1;
      let best = Math.min(d[(i - 1) * width + j]! + 1, d[i * width + j - 1]! + 1, d[(i - 1) * width + j - 1]! + same);
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) best = Math.min(best, d[(i - 2) * width + j - 2]! + 1);
      d[i * width + j] = best;
    }
  }
  return d[x.length * width + y.length]!;
}

function less(a: number[], at: string, b: number[], bt: string): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! < b[i]!;
  return at < bt;
}
