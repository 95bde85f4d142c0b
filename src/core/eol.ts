// Line endings kept line by line (SPEC §8.3). Edits are worked out on text with LF breaks;
// this gives each break of the new text the ending the file's own lines call for, so that a
// file mixing CRLF and LF keeps every line's ending and added lines take their neighbours'.
import { diffArrays } from "diff";

export type Eol = "\r\n" | "\n";

export interface Splice {
  /** Offsets into the original text (its own endings). */
  start: number;
  end: number;
  /** The replacement, with LF line breaks. */
  text: string;
}

/** Past this many changed lines in one span, lines are paired by position instead of by a line diff. */
const MAX_EDIT_LENGTH = 2000;

/**
 * `original` with each splice (ascending, not overlapping) applied, every break of a splice's
 * text given an ending by these rules, in order:
 * 1. a line the splice keeps (equal in its span and in its text, by a line diff of the two)
 *    keeps its own ending;
 * 2. a changed line takes the ending of the original line it replaces: in a run of changed
 *    lines, one new line for one old line are paired; otherwise each new line is paired, in
 *    order, with the old line it resembles (their common head and tail at least half the
 *    longer line), so that a line added next to an edited one does not take the edited one's
 *    place; when no new line resembles an old one, they are paired by position. A span that ends
 *    inside a line is that line, whose ending is where it ends in the file, and an edit
 *    inside one line gives every break it adds that line's ending;
 * 3. any other added line takes the ending of the line above it in the result: the break
 *    before it in the new text, else the one before the span in the file; at the very top of
 *    the file, the first break below; in a file without any, "\n".
 * A file with one kind of ending only gives it to every new break, without a diff.
 */
export function spliceKeepingEndings(original: string, splices: readonly Splice[]): string {
  const crlf = original.includes("\r\n");
  const uniform: Eol | null = !crlf ? "\n" : /(?:^|[^\r])\n/.test(original) ? null : "\r\n";
  let out = "";
  let at = 0;
  for (const s of splices) {
    out += original.slice(at, s.start);
    if (uniform === "\n" || !s.text.includes("\n")) out += s.text;
    else if (uniform === "\r\n") out += s.text.replace(/\n/g, "\r\n");
    else out += endings(original, s);
    at = s.end;
  }
  return out + original.slice(at);
}

function eolAt(text: string, nl: number): Eol {
  return nl > 0 && text.charCodeAt(nl - 1) === 13 ? "\r\n" : "\n";
}

/** Lines with their "\n" (the last may lack one), LF only; `eols` their endings in `text`, null for a last line without one. */
function pieces(text: string): { keys: string[]; eols: (Eol | null)[] } {
  const keys: string[] = [];
  const eols: (Eol | null)[] = [];
  let from = 0;
  for (let nl = text.indexOf("\n"); nl !== -1; nl = text.indexOf("\n", from)) {
    const crlf = nl > from && text.charCodeAt(nl - 1) === 13;
    keys.push(`${text.slice(from, crlf ? nl - 1 : nl)}\n`);
    eols.push(crlf ? "\r\n" : "\n");
    from = nl + 1;
  }
  if (from < text.length) {
    keys.push(text.slice(from));
    eols.push(null);
  }
  return { keys, eols };
}

function endings(original: string, s: Splice): string {
  const old = pieces(original.slice(s.start, s.end));
  // A span ending inside a line: its last piece ends where that line ends in the file.
  if (old.eols.length > 0 && old.eols[old.eols.length - 1] === null) {
    const nl = original.indexOf("\n", s.end);
    old.eols[old.eols.length - 1] = nl === -1 ? null : eolAt(original, nl);
  }
  const before = s.start > 0 ? original.lastIndexOf("\n", s.start - 1) : -1;
  const above: Eol | null = before === -1 ? null : eolAt(original, before);
  const firstBelow = original.indexOf("\n", s.start);
  const top: Eol = firstBelow === -1 ? "\n" : eolAt(original, firstBelow);
  const next = pieces(s.text).keys;
  // An edit inside one line: every break it adds splits that line, and takes its ending.
  if (old.keys.length <= 1 && !old.keys[0]?.endsWith("\n")) {
    const eol = old.eols[0] ?? above ?? top;
    return eol === "\n" ? s.text : s.text.replace(/\n/g, "\r\n");
  }

  const assigned: (Eol | null)[] = new Array(next.length).fill(null);
  // Lines equal at the head and the tail are the same lines (a patch's context): kept as they
  // are before the diff, which could otherwise pair a repeated line (a blank one) elsewhere.
  let head = 0;
  while (head < old.keys.length && head < next.length && old.keys[head] === next[head]) {
    assigned[head] = old.eols[head]!;
    head++;
  }
  let tail = 0;
  while (tail < old.keys.length - head && tail < next.length - head && old.keys[old.keys.length - 1 - tail] === next[next.length - 1 - tail]) {
    assigned[next.length - 1 - tail] = old.eols[old.keys.length - 1 - tail]!;
    tail++;
  }
  const parts = diffArrays(old.keys.slice(head, old.keys.length - tail), next.slice(head, next.length - tail), { maxEditLength: MAX_EDIT_LENGTH });
  if (parts) {
    let i = head;
    let j = head;
    /** Old-line indexes of the removed lines of the current change run. */
    let removed: number[] = [];
    for (const part of parts) {
      const n = part.count ?? part.value.length;
      if (part.removed) {
        for (let k = 0; k < n; k++) removed.push(i + k);
        i += n;
      } else if (part.added) {
        const paired = pair(removed.map((r) => old.keys[r]!), next.slice(j, j + n));
        for (let k = 0; k < n; k++) assigned[j + k] = paired[k]! === -1 ? null : old.eols[removed[paired[k]!]!]!;
        removed = [];
        j += n;
      } else {
        for (let k = 0; k < n; k++) assigned[j + k] = old.eols[i + k] ?? null;
        removed = [];
        i += n;
        j += n;
      }
    }
  } else {
    for (let k = head; k < next.length - tail; k++) assigned[k] = old.eols[Math.min(k, old.eols.length - 1 - tail)] ?? null;
  }
  let out = "";
  let prev = above;
  for (let k = 0; k < next.length; k++) {
    const piece = next[k]!;
    if (!piece.endsWith("\n")) {
      out += piece;
      continue;
    }
    const eol = assigned[k] ?? prev ?? top;
    out += eol === "\n" ? piece : `${piece.slice(0, -1)}\r\n`;
    prev = eol;
  }
  return out;
}

/** How alike two lines are: their common head and tail against the longer one, 0 to 1. */
function alike(a: string, b: string): number {
  const x = a.endsWith("\n") ? a.slice(0, -1) : a;
  const y = b.endsWith("\n") ? b.slice(0, -1) : b;
  const n = Math.max(x.length, y.length);
  if (n === 0) return 1;
  let head = 0;
  while (head < x.length && head < y.length && x[head] === y[head]) head++;
  let tail = 0;
  while (tail < x.length - head && tail < y.length - head && x[x.length - 1 - tail] === y[y.length - 1 - tail]) tail++;
  return (head + tail) / n;
}

const ALIKE = 0.5;
/** Past this many pairs to weigh, lines are paired by position. */
const MAX_PAIRING = 10_000;

/**
 * For each added line of a change run, the removed line it replaces (an index into `removed`),
 * or -1: one for one, or the order-keeping pairing of most resemblance (a small alignment).
 */
function pair(removed: readonly string[], added: readonly string[]): number[] {
  if (removed.length === 0) return added.map(() => -1);
  if (removed.length === 1 && added.length === 1) return [0];
  const byPosition = () => added.map((_, k) => (k < removed.length ? k : -1));
  if (removed.length * added.length > MAX_PAIRING) return byPosition();
  const R = removed.length;
  const A = added.length;
  // best[r][a]: the most resemblance pairing removed[0..r) with added[0..a) can reach.
  const best: number[][] = Array.from({ length: R + 1 }, () => new Array<number>(A + 1).fill(0));
  for (let r = 1; r <= R; r++) {
    for (let a = 1; a <= A; a++) {
      const s = alike(removed[r - 1]!, added[a - 1]!);
      best[r]![a] = Math.max(best[r - 1]![a]!, best[r]![a - 1]!, s >= ALIKE ? best[r - 1]![a - 1]! + s : 0);
    }
  }
  const out = added.map(() => -1);
  for (let r = R, a = A; r > 0 && a > 0; ) {
    const s = alike(removed[r - 1]!, added[a - 1]!);
    if (s >= ALIKE && best[r]![a] === best[r - 1]![a - 1]! + s) {
      out[a - 1] = r - 1;
      r--;
      a--;
    } else if (best[r]![a] === best[r - 1]![a]) r--;
    else a--;
  }
  // Lines rewritten beyond resemblance: paired by position, the k-th new with the k-th old.
  return out.every((k) => k === -1) ? byPosition() : out;
}
