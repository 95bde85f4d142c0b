// Character-level facts the strategies share: what counts as whitespace, the typographic
// fold, unescaping, line splitting and a bounded Levenshtein similarity.
import { distance } from "fastest-levenshtein";

/** Exactly the set JavaScript's `\s` and `String.prototype.trim` treat as whitespace. */
export function isWs(code: number): boolean {
  return (
    code === 32 || (code >= 9 && code <= 13) || code === 0xa0 || code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) || code === 0x2028 || code === 0x2029 ||
    code === 0x202f || code === 0x205f || code === 0x3000 || code === 0xfeff
  );
}

export function isBlank(line: string): boolean {
  for (let i = 0; i < line.length; i++) if (!isWs(line.charCodeAt(i))) return false;
  return true;
}

/**
 * Typographic look-alikes → ASCII, one UTF-16 unit to one, so that offsets in a folded text are
 * offsets in the original.
 */
const FOLD: Record<string, string> = {
  "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
  "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"',
  "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2015": "-", "\u2212": "-",
  "\u00a0": " ", "\u1680": " ", "\u2000": " ", "\u2001": " ", "\u2002": " ", "\u2003": " ",
  "\u2004": " ", "\u2005": " ", "\u2006": " ", "\u2007": " ", "\u2008": " ", "\u2009": " ",
  "\u200a": " ", "\u202f": " ", "\u205f": " ", "\u3000": " ",
};
const FOLDABLE = new RegExp(`[${Object.keys(FOLD).join("")}]`, "g");

export function hasFoldable(text: string): boolean {
  FOLDABLE.lastIndex = 0;
  return FOLDABLE.test(text);
}

export function fold(text: string): string {
  return text.replace(FOLDABLE, (c) => FOLD[c]!);
}

export function foldChar(c: string): string {
  return FOLD[c] ?? c;
}

const ESCAPES: Record<string, string> = { n: "\n", t: "\t", '"': '"', "'": "'", "\\": "\\", $: "$", "`": "`" };

/**
 * Literal `\n \t \" \' \\ \$ \`` → the characters they stand for, left to right in one pass
 * (`\$` and `\`` are a model escaping a template literal it quotes).
 */
export function unescape(text: string): string {
  return text.replace(/\\([nt"'\\$`])/g, (_, c: string) => ESCAPES[c]!);
}

/** Lines of `text` without a final empty line; `trail` says whether the text ended in "\n". */
export interface Lines {
  lines: string[];
  trail: boolean;
}

export function splitLines(text: string): Lines {
  if (text === "") return { lines: [], trail: false };
  if (text.endsWith("\n")) return { lines: text.slice(0, -1).split("\n"), trail: true };
  return { lines: text.split("\n"), trail: false };
}

/**
 * Lines of old_string or new_string as the model meant them: a final line of spaces after the
 * last line break is the next line's indentation caught in the quote, so it counts as the break.
 */
export function splitModel(text: string): Lines {
  const split = splitLines(text);
  const last = split.lines[split.lines.length - 1];
  if (split.lines.length > 1 && !split.trail && last !== undefined && last !== "" && isBlank(last)) {
    return { lines: split.lines.slice(0, -1), trail: true };
  }
  return split;
}

export function leadOf(line: string): string {
  let i = 0;
  while (i < line.length && isWs(line.charCodeAt(i))) i++;
  return line.slice(0, i);
}

/** A line as leading whitespace, body and trailing whitespace (a blank line is all lead). */
export function splitLine(line: string): [lead: string, body: string, trail: string] {
  let i = 0;
  while (i < line.length && isWs(line.charCodeAt(i))) i++;
  if (i === line.length) return [line, "", ""];
  let j = line.length;
  while (j > i && isWs(line.charCodeAt(j - 1))) j--;
  return [line.slice(0, i), line.slice(i, j), line.slice(j)];
}

/** Trimmed, inner whitespace runs collapsed to one space, typographic look-alikes folded. */
export function looseKey(line: string): string {
  return fold(line.trim().replace(/\s+/g, " "));
}

/** All whitespace removed and typographic look-alikes folded: lines that differ only in spacing agree. */
export function squeezeKey(line: string): string {
  return fold(line).replace(/\s+/g, "");
}

export function withoutWs(line: string): string {
  return line.replace(/\s+/g, "");
}

const LONG_LINE = 1000;

/**
 * 1 − Levenshtein distance / longer length. Two empty strings are identical. Lines longer than
 * 1000 characters are compared on their first 1000 (a minified line must not stall the cascade).
 */
export function similarity(a: string, b: string): number {
  if (a === b) return 1;
  const longer = Math.max(a.length, b.length);
  const shorter = Math.min(a.length, b.length);
  if (shorter === 0) return 0;
  // No alignment can do better than matching every character of the shorter string.
  if (shorter / longer < 0.5) return shorter / longer;
  if (longer > LONG_LINE) {
    const x = a.slice(0, LONG_LINE);
    const y = b.slice(0, LONG_LINE);
    return Math.min(1 - distance(x, y) / Math.max(x.length, y.length), shorter / longer);
  }
  return 1 - distance(a, b) / longer;
}

/** Every start offset of `needle` in `hay`, overlapping ones included, at most `cap` of them. */
export function occurrences(hay: string, needle: string, cap = Infinity): { offsets: number[]; total: number } {
  const offsets: number[] = [];
  let total = 0;
  if (needle === "") return { offsets, total };
  for (let i = hay.indexOf(needle); i !== -1; i = hay.indexOf(needle, i + 1)) {
    if (total < cap) offsets.push(i);
    total++;
  }
  return { offsets, total };
}

export function commonPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

export function commonSuffix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[a.length - 1 - i] === b[b.length - 1 - i]) i++;
  return i;
}
