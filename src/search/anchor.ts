// What a buffer must contain for a line of it to match: the chunk test that lets the
// built-in grep engine skip text without decoding it. Kept apart from regex.ts so that
// the search threads load no more than they need.
import { belowTopTier } from "./tiers.ts";

/** No ASCII letter outside these has a non-ASCII case partner (K: U+212A, S: U+017F). */
const FOLDS_OUTSIDE_ASCII = new Set("kKsS");

/** Letters from commonest to rarest in English text and code; a window of rare ones
 * (or of digits and punctuation, which have one case) rules out more of the text. */
const COMMON = "etaoinsrhldcumfpgwybvkxjqz";

/** How common a window's characters are: lower is rarer. */
function commonness(window: readonly string[]): number {
  let score = 0;
  for (const c of window) {
    const at = COMMON.indexOf(c.toLowerCase());
    score += at === -1 ? 0 : COMMON.length - at;
  }
  return score;
}

/**
 * A byte string a buffer must hold for a line of it to match, with, when case is
 * ignored, the ASCII word around it (lowercase) that must be there too: an occurrence of
 * the three letters is then checked against the whole word, so that a rare word anchored
 * on common letters ("readFileSync" on "ync") does not make every "async" chunk count.
 */
export interface Anchor {
  bytes: Buffer;
  /** Lowercase ASCII text around the anchor (null: the bytes alone are the test). */
  word: string | null;
  /** Where the anchor's bytes start in `word`. */
  at: number;
}

/**
 * Anchors, one of which occurs wherever `text` does (case-insensitively when
 * `insensitive`): the text itself; or, ignoring case, every case spelling of the rarest
 * three-character ASCII window of it whose letters fold only within ASCII, each with
 * the run of ASCII text around the window. Null when there is no such window.
 */
export function anchorsOf(text: string, insensitive: boolean): Anchor[] | null {
  if (text.length < 2) return null;
  if (!insensitive) return [{ bytes: Buffer.from(text, "utf8"), word: null, at: 0 }];
  const chars = [...text];
  let best = -1;
  for (let at = 0; at + 3 <= chars.length; at++) {
    const window = chars.slice(at, at + 3);
    if (!window.every((c) => c.charCodeAt(0) < 128 && !FOLDS_OUTSIDE_ASCII.has(c))) continue;
    if (best === -1 || commonness(window) < commonness(chars.slice(best, best + 3))) best = at;
  }
  if (best === -1) return null;
  let from = best;
  let to = best + 3;
  while (from > 0 && chars[from - 1]!.charCodeAt(0) < 128) from--;
  while (to < chars.length && chars[to]!.charCodeAt(0) < 128) to++;
  const word = chars.slice(from, to).join("").toLowerCase();
  let spellings = [""];
  for (const c of chars.slice(best, best + 3)) {
    const cases = new Set([c.toLowerCase(), c.toUpperCase()]);
    spellings = spellings.flatMap((s) => [...cases].map((v) => s + v));
  }
  return spellings.map((s) => ({ bytes: Buffer.from(s, "latin1"), word, at: best - from }));
}

/** For each lowercase ASCII character, the UTF-8 byte strings that match it ignoring
 * case: itself, its uppercase, and for k and s the Kelvin sign and the long s. */
const SPELLINGS: readonly (readonly number[])[][] = Array.from({ length: 128 }, (_, c) => {
  const out: number[][] = [[c]];
  if (c >= 97 && c <= 122) out.push([c - 32]);
  if (c === 107) out.push([0xe2, 0x84, 0xaa]);
  if (c === 115) out.push([0xc5, 0xbf]);
  return out;
});

/** The length of a spelling of `c` in `buf` starting at `i` (or, `backward`, ending just
 * before it); 0 when there is none. */
function spelled(buf: Uint8Array, i: number, c: number, backward: boolean): number {
  for (const bytes of SPELLINGS[c]!) {
    const from = backward ? i - bytes.length : i;
    if (from < 0 || from + bytes.length > buf.length) continue;
    let k = 0;
    while (k < bytes.length && buf[from + k] === bytes[k]) k++;
    if (k === bytes.length) return k;
  }
  return 0;
}

/** Whether `buf` holds the anchor (with its whole word, when it has one). */
export function holds(buf: Uint8Array & { indexOf(value: Uint8Array, from?: number): number }, anchor: Anchor): boolean {
  const { bytes, word, at } = anchor;
  for (let p = buf.indexOf(bytes); p !== -1; p = buf.indexOf(bytes, p + 1)) {
    if (word === null) return true;
    let ok = true;
    let i = p + bytes.length;
    for (let j = at + bytes.length; ok && j < word.length; j++) {
      const n = spelled(buf, i, word.charCodeAt(j), false);
      ok = n > 0;
      i += n;
    }
    let e = p;
    for (let j = at - 1; ok && j >= 0; j--) {
      const n = spelled(buf, e, word.charCodeAt(j), true);
      ok = n > 0;
      e -= n;
    }
    if (ok) return true;
  }
  return false;
}

belowTopTier(holds, spelled);
