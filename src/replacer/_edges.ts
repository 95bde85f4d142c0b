// The separator at an edge of a match that falls inside a line. There the whitespace between the
// span and the rest of its line separates two tokens: it is neither indentation nor a line's
// trailing whitespace, so a merge must not re-indent it nor drop it as stray (issue 26: old_string
// "  cond else b", new_string " flag else b" on `y = a if cond else b` wrote `ifflag`). It is set
// aside before a strategy rewrites the span and written back by one rule, the same for every
// strategy and both edges:
//   - old_string quoted no separator there: the file's stays and new_string's is added (it asks for one);
//   - old_string quoted exactly the file's: new_string's (a change there is meant, as an exact match takes it);
//   - old_string quoted another: the file's (the quote's spacing there was a slip like the rest of it).
// So a separator new_string asks for is never dropped, and a slip never removes the file's.
import type { Candidate, Rewrite } from "./types.ts";
import { isWs } from "./_text.ts";

const isSpace = (c: number) => c !== 10 && isWs(c);

function leadLength(s: string, from = 0, to = s.length): number {
  let i = from;
  while (i < to && isSpace(s.charCodeAt(i))) i++;
  return i - from;
}

function trailLength(s: string, from = 0, to = s.length): number {
  let i = to;
  while (i > from && isSpace(s.charCodeAt(i - 1))) i--;
  return to - i;
}

/** Whether text other than whitespace sits on the line before `at` (dir -1) or after it (dir 1). */
function inLine(content: string, at: number, dir: 1 | -1): boolean {
  // A span that ends with its line break ends no line in the middle: what follows is the next line.
  if (dir === 1 && at > 0 && content.charCodeAt(at - 1) === 10) return false;
  for (let i = dir === 1 ? at : at - 1; i >= 0 && i < content.length; i += dir) {
    const c = content.charCodeAt(i);
    if (c === 10) return false;
    if (!isWs(c)) return true;
  }
  return false;
}

function separator(covered: string, quoted: string, asked: string, edge: "start" | "end"): string {
  if (quoted === "") return edge === "start" ? covered + asked : asked + covered;
  return quoted === covered ? asked : covered;
}

export type SpanRewrite = (match: Candidate, file: string, old: string, neu: string) => Rewrite;

/**
 * `rewrite` of the match with its mid-line edges' separators set aside: `file` is the span's
 * text, `old` and `neu` as the strategy reads them (unescaped, for instance).
 */
export function atEdges(content: string, match: Candidate, file: string, old: string, neu: string, rewrite: SpanRewrite): Rewrite {
  const start = inLine(content, match.start, -1);
  const end = inLine(content, match.end, 1);
  if (!start && !end) return rewrite(match, file, old, neu);
  const f = [0, 0];
  const o = [0, 0];
  const n = [0, 0];
  if (start) [f[0], o[0], n[0]] = [leadLength(file), leadLength(old), leadLength(neu)];
  if (end) [f[1], o[1], n[1]] = [trailLength(file, f[0]), trailLength(old, o[0]), trailLength(neu, n[0])];
  const cut = (s: string, k: number[]) => [s.slice(0, k[0]), s.slice(k[0], s.length - k[1]!), s.slice(s.length - k[1]!)] as const;
  const [fl, fm, ft] = cut(file, f);
  const [ol, om, ot] = cut(old, o);
  const [nl, nm, nt] = cut(neu, n);
  const inner = rewrite({ ...match, start: match.start + f[0]!, end: match.end - f[1]! }, fm, om, nm);
  if ("refusal" in inner) return inner;
  return { ...inner, text: separator(fl, ol, nl, "start") + inner.text + separator(ft, ot, nt, "end") };
}
