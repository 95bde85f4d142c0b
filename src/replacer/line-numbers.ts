// Line numbers pasted into a quote: old_string copied from read's output (`   435→` before each
// line) or from `cat -n` (`   435<TAB>`). They are the display, not the file's text, and a quote
// that carries them is found nowhere. Taken off only on evidence that they are that display:
//   - every line carries one, in one format: a quote with some lines numbered and some not is
//     no copy of either display, and its numbered lines may be the file's own text;
//   - the numbers run consecutively: both displays number every line of a contiguous region, so
//     a gap or a repeat means the digits belong to the text (a numbered list, a table) or the
//     quote was pieced together, and either way no single region of the file is quoted;
//   - cat -n's numbers stand right-aligned in six columns, as cat -n prints them: a digit and a
//     tab alone are common in data (`1\tfoo`), cat -n's exact padding is not; read's arrow is
//     distinctive enough that a quote which lost some of the padding still counts;
//   - there is text left once they are off.
// The caller looks for the quote as given first (a file may hold such text literally), and takes
// the bare quote only where it starts a line, as the text after a display's number does.
import { isBlank } from "./_text.ts";

export type Numbering = "read" | "cat-n";

/** Read's display: the number in at least six columns, then "→". */
const READ = /^( *)(\d+)→/;
/** cat -n's: the number right-aligned in six columns, then a tab (none left on a blank line whose tab was trimmed). */
const CAT = /^( *)(\d+)(?:\t|$)/;

export interface Unnumbered {
  numbering: Numbering;
  /** The first line's prefix as the model wrote it, for the note. */
  prefix: string;
  old: string;
  neu: string;
}

function lines(text: string): { lines: string[]; trail: boolean } {
  const trail = text.endsWith("\n");
  return { lines: (trail ? text.slice(0, -1) : text).split("\n"), trail };
}

/** The prefix of `line` in this display, when it is one: the number and how long the prefix is. */
function prefixOf(line: string, numbering: Numbering): { n: number; length: number } | undefined {
  const m = (numbering === "read" ? READ : CAT).exec(line);
  if (!m) return undefined;
  const pad = Math.max(0, 6 - m[2]!.length);
  if (numbering === "read" ? m[1]!.length > pad : m[1]!.length !== pad) return undefined;
  return { n: Number(m[2]), length: m[0].length };
}

/** old_string and new_string without a display's line numbers, when old_string's every line carries them. */
export function unnumbered(old: string, neu: string): Unnumbered | undefined {
  const o = lines(old);
  for (const numbering of ["read", "cat-n"] as const) {
    const found = o.lines.map((line) => prefixOf(line, numbering));
    if (found.some((p) => p === undefined)) continue;
    const first = found[0]!.n;
    if (found.some((p, i) => p!.n !== first + i)) continue;
    const bare = o.lines.map((line, i) => line.slice(found[i]!.length));
    if (bare.every(isBlank)) continue;
    // new_string's lines carry the numbers where the model copied them and none where it wrote
    // a line of its own; a line numbered in the same display is a copied one.
    const n = lines(neu);
    const neuBare = n.lines.map((line) => {
      const p = prefixOf(line, numbering);
      return p ? line.slice(p.length) : line;
    });
    return {
      numbering,
      prefix: o.lines[0]!.slice(0, found[0]!.length),
      old: bare.join("\n") + (o.trail ? "\n" : ""),
      neu: neuBare.join("\n") + (n.trail ? "\n" : ""),
    };
  }
  return undefined;
}

/** The first line of old_string that carries a display's number, when not all do: the failure says so. */
export function someNumbered(old: string): { numbering: Numbering; prefix: string } | undefined {
  for (const line of lines(old).lines) {
    for (const numbering of ["read", "cat-n"] as const) {
      const p = prefixOf(line, numbering);
      // A bare number with its padding is a cat -n blank line only among numbered lines.
      if (p && (numbering === "read" || line.length > p.length)) return { numbering, prefix: line.slice(0, p.length) };
    }
  }
  return undefined;
}
