// "Change only what the model meant to change": a three-way merge with old_string as the base,
// the file's matched span as one side and new_string as the other. The model's quote differs
// from the file only by imprecision (indentation, spacing, typography, a misremembered line),
// so every line the model left alone is written as the file has it, and every line it changed
// carries the model's change applied onto the file's own indentation, spacing and characters.
import { diffArrays, diffChars } from "diff";
import type { Candidate, DoubtKind, Rewrite } from "./types.ts";
import type { Haystack } from "./_haystack.ts";
import { atEdges } from "./_edges.ts";
import { fold, isBlank, isWs, leadOf, looseKey, similarity, splitLine, splitLines, splitModel, withoutWs } from "./_text.ts";

export interface MergeInput {
  /** The matched span of the file. */
  file: string;
  /** old_string as the strategy read it, and new_string read the same way. */
  old: string;
  neu: string;
  /** `pairs[i]`: the line of `file` (0-based, within the span) that old line i stands for, or -1. Default 1:1. */
  pairs?: number[];
  /**
   * Refuse when a changed or deleted line is not the file's line up to whitespace and
   * typography, or when the change would swallow a line the model never quoted. Needed only
   * where the alignment is itself a guess (block-anchor, context-aware).
   */
  guard: boolean;
  /** What the file says beyond the span, for placing a line the model's indentation cannot place. */
  context?: MergeContext;
}

export interface MergeContext {
  /** The file's first non-blank line after the span, if any. */
  after?: string;
  /** The indentation unit of the file around the span (a span is often too short to show it); asked only when needed. */
  unit?: () => Unit;
}

export type MergeResult =
  | { text: string; guessed?: number[] }
  | { doubt: DoubtKind; fileLine: number; expected: string; actual: string };

/** The unguarded merge, for strategies whose alignment is certain (every line equivalent). */
export function mergeLoose(file: string, old: string, neu: string, context?: MergeContext): string {
  const merged = merge({ file, old, neu, guard: false, context });
  if ("text" in merged) return merged.text;
  throw new Error(`merge doubt ${merged.doubt}: use looseRewrite where a doubt can arise`);
}

/**
 * The unguarded merge of a strategy's match as the strategy's rewrite: its text, or why writing it
 * would be a guess. A separator at a mid-line edge of the span is no line's indentation: set aside.
 */
export function looseRewrite(hay: Haystack, match: Candidate, old: string, neu: string, file = hay.content.slice(match.start, match.end)): Rewrite {
  return atEdges(hay.content, match, file, old, neu, (m, f, o, n) => asRewrite(merge({ file: f, old: o, neu: n, guard: false, context: hay.context(m.start, m.end) }), m));
}

export function asRewrite(merged: MergeResult, match: Candidate): Rewrite {
  if ("text" in merged) return merged;
  return {
    refusal: {
      reason: "doubtful",
      doubt: merged.doubt,
      candidates: [{ startLine: match.startLine, endLine: match.endLine, score: match.score ?? 0 }],
      line: merged.fileLine >= 0 ? match.startLine + merged.fileLine : undefined,
      expected: merged.expected,
      actual: merged.actual,
    },
  };
}

/**
 * A line deleted next to a line the model quoted identically but the file has differently
 * (two "}" at different depths, quoted without indentation): which of them the model meant to
 * delete cannot be told, so the deleted one is returned (-1 when there is no such doubt).
 */
function indistinct(op: Extract<Op, { kind: "hunk" }>, O: readonly string[], S: readonly string[], pairs: readonly number[]): number {
  const rewritten = new Set(op.partner.filter((o) => o >= 0));
  for (const o of op.removed) {
    if (rewritten.has(o) || pairs[o]! < 0) continue;
    for (const k of [o - 1, o + 1]) {
      // A neighbour the model rewrites is as good as kept: which of the two it deletes is still unknown.
      if (k < 0 || k >= O.length || O[k] !== O[o] || (op.removed.includes(k) && !rewritten.has(k)) || pairs[k]! < 0) continue;
      if (S[pairs[k]!] !== S[pairs[o]!]) return o;
    }
  }
  return -1;
}

export function merge(input: MergeInput): MergeResult {
  const S = splitLines(input.file);
  const N = splitModel(input.neu);
  const quoted = splitModel(input.old);
  const pairs = input.pairs ?? quoted.lines.map((_, i) => (i < S.lines.length ? i : -1));
  const fileUnit = () => input.context?.unit?.() ?? detectUnit(S.lines);
  const O = { ...quoted, lines: indentedAsNew(quoted.lines, N.lines, S.lines, pairs, fileUnit) };
  let units: Units | undefined;
  const style: Style = {
    // Units matter only where indentation drifted; most merges never ask.
    get units() {
      return (units ??= { model: detectUnit([...O.lines, ...N.lines]), file: input.context?.unit?.() ?? detectUnit(S.lines) });
    },
    drift: indentDrift(O.lines, S.lines, pairs),
    shift: uniformShift(O.lines, S.lines, pairs),
    strayTrail: trailAdded(O.lines, S.lines, pairs),
  };

  const out: string[] = [];
  /** Indices in `out` of lines inserted by the model (not the file's, not a change of one). */
  const placed = new Set<number>();
  /** Those of them whose depth the model's indentation did not give. */
  const guessed: number[] = [];
  let cursor = 0;
  const flush = (j: number) => {
    while (cursor < j) out.push(S.lines[cursor++]!);
  };

  const ops = lineOps(O.lines, N.lines);

  for (let index = 0; index < ops.length; index++) {
    const op = ops[index]!;
    if (op.kind === "common") {
      const j = pairs[op.o]!;
      if (j >= 0) {
        flush(j);
        out.push(S.lines[j]!);
        cursor = j + 1;
      }
      continue;
    }
    if (input.guard) {
      for (const o of op.removed) {
        const j = pairs[o]!;
        if (j < 0) return { doubt: "changed-line-differs", fileLine: -1, expected: O.lines[o]!, actual: "" };
        if (looseKey(O.lines[o]!) !== looseKey(S.lines[j]!)) {
          return { doubt: "changed-line-differs", fileLine: j, expected: O.lines[o]!, actual: S.lines[j]! };
        }
      }
    }
    const twin = indistinct(op, O.lines, S.lines, pairs);
    if (twin >= 0) return { doubt: "indistinct-lines", fileLine: pairs[twin]!, expected: O.lines[twin]!, actual: S.lines[pairs[twin]!]! };
    let dropped = false;
    for (const o of op.removed) {
      const j = pairs[o]!;
      if (j < 0) continue;
      if (input.guard && dropped && cursor < j) {
        return { doubt: "unquoted-line", fileLine: cursor, expected: "", actual: S.lines[cursor]! };
      }
      flush(j);
      cursor = j + 1;
      dropped = true;
    }
    for (let k = 0; k < op.added.length; k++) {
      const n = op.added[k]!;
      const line = N.lines[n]!;
      const o = op.partner[k]!;
      if (o >= 0 && pairs[o]! >= 0) {
        out.push(mergeLine(O.lines[o]!, S.lines[pairs[o]!]!, line, style));
        continue;
      }
      const inserted = op.removed.every((r) => pairs[r]! < 0);
      if (inserted) {
        const near = neighbours(ops, index, pairs, O.lines, S.lines, input.context?.after);
        // A blank line between this one and the following neighbour: the file's, or one the model adds after it.
        const blankAfter = near.blankAfter || op.added.slice(k + 1).some((a) => isBlank(N.lines[a]!));
        const at = placeLine(line, { ...near, blankAfter }, out, placed, style);
        out.push(at.line);
        placed.add(out.length - 1);
        if (at.guessed) guessed.push(out.length - 1);
        continue;
      }
      const ref = reference(ops, index, op.removed, pairs, O.lines);
      out.push(ref < 0 ? keepTrail(line, style) : shiftLine(line, O.lines[ref]!, S.lines[pairs[ref]!]!, style));
    }
  }
  flush(S.lines.length);

  const trail = Number(S.trail) + Number(N.trail) - Number(O.trail) > 0;
  return { text: out.join("\n") + (trail ? "\n" : ""), ...(guessed.length > 0 ? { guessed } : {}) };
}

/** How the model's indentation in new_string maps onto the file's, and back (undefined: does not map). */
interface Relation {
  map(model: string): string | undefined;
  back(file: string): string | undefined;
}

/** The file's indentation with `add` in front instead of `drop` (both suffix-aligned, as uniformShift). */
function shiftRelation(model: string, file: string): Relation | undefined {
  let add = "";
  let drop = "";
  if (file.endsWith(model)) add = file.slice(0, file.length - model.length);
  else if (model.endsWith(file)) drop = model.slice(0, model.length - file.length);
  else return undefined;
  return {
    map: (m) => (m.startsWith(drop) ? add + m.slice(drop.length) : undefined),
    back: (f) => (f.startsWith(add) ? drop + f.slice(add.length) : undefined),
  };
}

/** Tabs in the model's indentation where the file has `width` spaces per tab, or the reverse. */
function unitRelation(modelTabs: boolean, width: number): Relation {
  const spaces = " ".repeat(width);
  const toSpaces = (lead: string) => lead.replace(/\t/g, spaces);
  // Each run of `width` spaces a tab; spaces left over (alignment) stay spaces.
  const toTabs = (lead: string) => lead.replace(new RegExp(spaces, "g"), "\t");
  return modelTabs ? { map: toSpaces, back: toTabs } : { map: toTabs, back: toSpaces };
}

/**
 * old_string's lines re-indented in new_string's own style, when new_string shows that the model
 * wrote it in another indentation than it quoted old_string in — above all old_string quoted
 * without indentation and new_string written with the file's (issue 26). Re-indenting the model's
 * new lines by old_string's drift would then push them too far. The evidence, all of it needed:
 *   - a line of new_string that keeps or rewrites one of old_string's (aligned on their trimmed
 *     text) stands at its file line's depth through one relation: the file's own indentation
 *     (where a line at a depth of its own is the model moving it and says nothing, but one at
 *     old_string's says the model wrote in the quote's style), or one uniform shift, or tabs for
 *     the file's spaces (or the reverse) — every such line for these two;
 *   - at least one of those lines stands at its depth where old_string's does not, and at least
 *     one of them is a line new_string keeps (a rewritten line alone may have moved on purpose);
 *   - no line of new_string lands left of every line of the span in the file (a model nesting its
 *     quote in a new block writes the new opener at the quote's depth, left of it).
 * Otherwise old_string as quoted.
 */
function indentedAsNew(O: readonly string[], N: readonly string[], S: readonly string[], pairs: readonly number[], unit: () => Unit): string[] {
  const quoted = pairs.filter((j) => j >= 0).map((j) => S[j]!);
  if (quoted.every(isBlank)) return [...O];
  const ops = lineOps(O.map((l) => l.trim()), N.map((l) => l.trim()));
  const aligned: { o: string; n: string; f: string; kept: boolean }[] = [];
  const take = (o: number, n: number, kept: boolean) => {
    const j = pairs[o]!;
    if (j >= 0 && !isBlank(O[o]!) && !isBlank(N[n]!) && !isBlank(S[j]!)) aligned.push({ o: leadOf(O[o]!), n: leadOf(N[n]!), f: leadOf(S[j]!), kept });
  };
  for (const op of ops) {
    if (op.kind === "common") take(op.o, op.n, true);
    else op.partner.forEach((o, k) => o >= 0 && take(o, op.added[k]!, false));
  }
  if (aligned.length === 0) return [...O];
  const width = unit().width;
  const cols = (lead: string) => columns(lead, { tabs: false, width });
  const fileMin = Math.min(...quoted.filter((l) => !isBlank(l)).map((l) => cols(leadOf(l))));
  const identity: Relation = { map: (m) => m, back: (f) => f };
  // The strict relations first: a line the lenient identity lets pass as moved on purpose may be
  // one in tabs for the file's spaces.
  const candidates: [Relation, boolean][] = [];
  const first = aligned.find((a) => a.n !== a.f);
  const shift = first && shiftRelation(first.n, first.f);
  if (shift) candidates.push([shift, false]);
  // The model's width for a tab is its own: the file's unit first, then the common ones.
  for (const w of new Set([width, 2, 4, 8])) candidates.push([unitRelation(true, w), false], [unitRelation(false, w), false]);
  candidates.push([identity, true]);
  for (const [rel, lenient] of candidates) {
    let differs = false;
    let kept = false;
    let fits = true;
    for (const a of aligned) {
      const mapped = rel.map(a.n);
      const oFits = rel.map(a.o) === a.f;
      if (mapped === a.f) {
        if (!oFits) differs = true;
        if (a.kept) kept = true;
      } else if (!lenient || (a.n === a.o && !oFits)) {
        fits = false;
        break;
      }
    }
    // A rewritten line may move on purpose: a kept line must stand where the relation puts it too.
    if (!fits || !differs || !kept) continue;
    // Tabs for spaces only where new_string has some to convert: else it is the identity, below.
    if (rel !== identity && aligned.every((a) => rel.map(a.n) === a.n)) continue;
    if (N.some((line) => !isBlank(line) && cols(rel.map(leadOf(line)) ?? "") < fileMin)) continue;
    const lines = O.map((line, o) => {
      const j = pairs[o]!;
      if (j < 0 || isBlank(line) || isBlank(S[j]!)) return line;
      const lead = rel.back(leadOf(S[j]!));
      return lead === undefined ? undefined : lead + line.slice(leadOf(line).length);
    });
    if (lines.every((l) => l !== undefined)) return lines as string[];
  }
  return [...O];
}

type Op =
  | { kind: "common"; o: number; n: number }
  /** `partner[k]`: the removed line that added line k rewrites, or -1 for a pure insertion. */
  | { kind: "hunk"; removed: number[]; added: number[]; partner: number[] };

/** Beyond this many cells the middle of a diff is aligned by Myers' diff instead of the weighted one. */
const WEIGHTED_CELLS = 10_000;

/**
 * The model's edit as a line alignment of old_string to new_string. Equal lines at both ends
 * are common; the middle is aligned so that rewriting a similar line is cheaper than deleting
 * it and inserting another. Where old_string repeats a line ("}" twice), this ties the change
 * to the line in the same position rather than to whichever copy a diff happens to pick.
 */
function lineOps(O: readonly string[], N: readonly string[]): Op[] {
  let head = 0;
  while (head < O.length && head < N.length && O[head] === N[head]) head++;
  let tail = 0;
  while (tail < O.length - head && tail < N.length - head && O[O.length - 1 - tail] === N[N.length - 1 - tail]) tail++;
  const ops: Op[] = [];
  for (let k = 0; k < head; k++) ops.push({ kind: "common", o: k, n: k });
  const mid = { o: O.slice(head, O.length - tail), n: N.slice(head, N.length - tail) };
  const push = (step: { kind: "common" | "sub" | "del" | "ins"; o: number; n: number }) => {
    if (step.kind === "common") return void ops.push({ kind: "common", o: head + step.o, n: head + step.n });
    let last = ops[ops.length - 1];
    if (!last || last.kind !== "hunk") ops.push((last = { kind: "hunk", removed: [], added: [], partner: [] }));
    if (step.kind !== "ins") last.removed.push(head + step.o);
    if (step.kind !== "del") {
      last.added.push(head + step.n);
      last.partner.push(step.kind === "sub" ? head + step.o : -1);
    }
  };
  const steps = mid.o.length * mid.n.length <= WEIGHTED_CELLS ? weighted(mid.o, mid.n) : myers(mid.o, mid.n);
  for (const step of steps) push(step);
  for (let k = tail; k > 0; k--) ops.push({ kind: "common", o: O.length - k, n: N.length - k });
  return ops;
}

type Step = { kind: "common" | "sub" | "del" | "ins"; o: number; n: number };

/** Minimum-cost alignment: equal 0, insert or delete 1, rewrite 1–1.9 by dissimilarity. */
function weighted(O: readonly string[], N: readonly string[]): Step[] {
  const m = O.length;
  const n = N.length;
  const w = n + 1;
  const cost = new Float64Array((m + 1) * w);
  for (let i = 0; i <= m; i++) cost[i * w] = i;
  for (let j = 0; j <= n; j++) cost[j] = j;
  const sub = (i: number, j: number) => (O[i] === N[j] ? 0 : 1 + 0.9 * (1 - similarity(looseKey(O[i]!), looseKey(N[j]!))));
  const subs = new Float64Array((m + 1) * w);
  for (let i = 1; i <= m; i++) {
    for (let j = 1; j <= n; j++) {
      subs[i * w + j] = sub(i - 1, j - 1);
      cost[i * w + j] = Math.min(cost[(i - 1) * w + j]! + 1, cost[i * w + j - 1]! + 1, cost[(i - 1) * w + j - 1]! + subs[i * w + j]!);
    }
  }
  const steps: Step[] = [];
  for (let i = m, j = n; i > 0 || j > 0; ) {
    const here = cost[i * w + j]!;
    if (i > 0 && j > 0 && here === cost[(i - 1) * w + j - 1]! + subs[i * w + j]!) {
      steps.push({ kind: subs[i * w + j] === 0 ? "common" : "sub", o: i - 1, n: j - 1 });
      i--;
      j--;
    } else if (i > 0 && here === cost[(i - 1) * w + j]! + 1) steps.push({ kind: "del", o: --i, n: j });
    else steps.push({ kind: "ins", o: i, n: --j });
  }
  return steps.reverse();
}

/** Myers' diff for large middles; a removed and an added line at the same place pair up in order. */
function myers(O: readonly string[], N: readonly string[]): Step[] {
  const steps: Step[] = [];
  let o = 0;
  let n = 0;
  let removed: number[] = [];
  let added: number[] = [];
  const flush = () => {
    for (let k = 0; k < Math.max(removed.length, added.length); k++) {
      if (k < removed.length && k < added.length) steps.push({ kind: "sub", o: removed[k]!, n: added[k]! });
      else if (k < removed.length) steps.push({ kind: "del", o: removed[k]!, n: -1 });
      else steps.push({ kind: "ins", o: -1, n: added[k]! });
    }
    removed = [];
    added = [];
  };
  for (const part of diffArrays(O as string[], N as string[])) {
    for (let k = 0; k < part.value.length; k++) {
      if (part.removed) removed.push(o++);
      else if (part.added) added.push(n++);
      else {
        flush();
        steps.push({ kind: "common", o: o++, n: n++ });
      }
    }
  }
  flush();
  return steps;
}

/** The nearest old line with a file partner, preferring non-blank ones: the indentation reference. */
function reference(ops: readonly Op[], index: number, removed: number[], pairs: number[], oldLines: string[]): number {
  const usable = (o: number, blankOk: boolean) => pairs[o]! >= 0 && (blankOk || !isBlank(oldLines[o]!));
  for (const blankOk of [false, true]) {
    for (const o of removed) if (usable(o, blankOk)) return o;
    for (let k = index - 1; k >= 0; k--) {
      const op = ops[k]!;
      if (op.kind === "common" && usable(op.o, blankOk)) return op.o;
    }
    for (let k = index + 1; k < ops.length; k++) {
      const op = ops[k]!;
      if (op.kind === "common" && usable(op.o, blankOk)) return op.o;
    }
  }
  return -1;
}

/** How the model's quote relates to the file's lines, for writing the lines it changed or added. */
interface Style {
  units: Units;
  /** Some line the model quoted (and the file has) is indented differently in the file. */
  drift: boolean;
  /** The model quoted trailing whitespace that the file's line does not have. */
  strayTrail: boolean;
  /** Every quoted line's indentation is the file's with `drop` in front instead of `add`: a block quoted at another depth. */
  shift?: { add: string; drop: string };
}

/**
 * The one change that turns the model's indentation into the file's on every quoted line, if
 * there is one: then a new line's indentation is changed the same way, character for character
 * (levels guessed from two indentation units could round a depth the model gave exactly).
 */
function uniformShift(O: readonly string[], S: readonly string[], pairs: readonly number[]): { add: string; drop: string } | undefined {
  let shift: { add: string; drop: string } | undefined;
  for (let o = 0; o < O.length; o++) {
    const j = pairs[o]!;
    if (j < 0 || isBlank(O[o]!) || isBlank(S[j]!)) continue;
    const mo = leadOf(O[o]!);
    const fo = leadOf(S[j]!);
    if (!shift) {
      if (fo.endsWith(mo)) shift = { add: fo.slice(0, fo.length - mo.length), drop: "" };
      else if (mo.endsWith(fo)) shift = { add: "", drop: mo.slice(0, mo.length - fo.length) };
      else return undefined;
    }
    if (!mo.startsWith(shift.drop) || fo !== shift.add + mo.slice(shift.drop.length)) return undefined;
  }
  return shift;
}

/** The file-side indentation of a changed or new line the model indented `nl`, against its reference line. */
function leadFor(nl: string, refOld: string, refFile: string, style: Style): string {
  if (!style.drift) return nl;
  const s = style.shift;
  if (s && nl.startsWith(s.drop)) {
    // Character for character only in the file's own kind of indentation; a tab the model typed
    // into a file indented with spaces (or the reverse) goes through the units instead.
    const rest = nl.slice(s.drop.length);
    const foreign = style.units.file.tabs ? / {2,}/.test(rest) && !rest.includes("\t") : rest.includes("\t");
    if (!foreign) return s.add + rest;
  }
  return reindent(nl, refOld, refFile, style.units);
}

/** Whether any quoted non-blank line's indentation differs from its file line's. */
function indentDrift(O: readonly string[], S: readonly string[], pairs: readonly number[]): boolean {
  for (let o = 0; o < O.length; o++) {
    const j = pairs[o]!;
    if (j < 0 || isBlank(O[o]!) || isBlank(S[j]!)) continue;
    if (leadOf(O[o]!) !== leadOf(S[j]!)) return true;
  }
  return false;
}

/** Whether the model quoted trailing whitespace on a line where the file has none. */
function trailAdded(O: readonly string[], S: readonly string[], pairs: readonly number[]): boolean {
  for (let o = 0; o < O.length; o++) {
    const j = pairs[o]!;
    if (j < 0) continue;
    const ot = isBlank(O[o]!) ? O[o]! : splitLine(O[o]!)[2];
    const ft = isBlank(S[j]!) ? S[j]! : splitLine(S[j]!)[2];
    if (ot.length > ft.length && !ot.endsWith(ft)) return true;
    if (ft === "" && ot !== "") return true;
  }
  return false;
}

/** A new or changed line's trailing whitespace: none where the model's quote showed it adds stray spaces. */
function trailOf(nt: string, style: Style): string {
  return style.strayTrail ? "" : nt;
}

function keepTrail(n: string, style: Style): string {
  if (isBlank(n)) return "";
  const [nl, nb, nt] = splitLine(n);
  return nl + nb + trailOf(nt, style);
}

/** A changed line: the model's edit of `o` applied onto the file's version `f` of that line. */
function mergeLine(o: string, f: string, n: string, style: Style): string {
  if (isBlank(n)) return "";
  const [ol, ob, ot] = splitLine(o);
  const [fl, fb, ft] = splitLine(f);
  const [nl, nb, nt] = splitLine(n);
  if (isBlank(o) || isBlank(f)) return shiftLine(n, o, f, style);
  const lead = leadFor(nl, ol, fl, style);
  const trail = nt === ot ? ft : trailOf(nt, style);
  const body = nb === ob ? fb : ob === fb ? nb : mergeBody(ob, fb, nb);
  return lead + body + trail;
}

/** A new line: the model's indentation delta against its reference line, applied to the file's. */
function shiftLine(n: string, refOld: string, refFile: string, style: Style): string {
  if (isBlank(n)) return "";
  const [nl, nb, nt] = splitLine(n);
  const [ol, , ot] = splitLine(refOld);
  const [fl, , ft] = splitLine(refFile);
  return leadFor(nl, ol, fl, style) + nb + (nt !== "" && nt === ot ? ft : trailOf(nt, style));
}

/** An unchanged line next to an insertion: as the model quoted it and as the file has it. */
interface Neighbour {
  old: string;
  file: string;
}

/**
 * The nearest unchanged non-blank lines before and after an insertion. Past the end of the
 * quote the file's next line stands in for the following one, known only as the file has it.
 */
function neighbours(
  ops: readonly Op[], index: number, pairs: readonly number[], O: readonly string[], S: readonly string[], after: string | undefined,
): Near {
  const at = (k: number): Neighbour | undefined => {
    const op = ops[k]!;
    if (op.kind !== "common" || pairs[op.o]! < 0 || isBlank(O[op.o]!) || isBlank(S[pairs[op.o]!]!)) return undefined;
    return { old: O[op.o]!, file: S[pairs[op.o]!]! };
  };
  let prev: Neighbour | undefined;
  for (let k = index - 1; k >= 0 && !prev; k--) prev = at(k);
  let next: Neighbour | undefined;
  let blankAfter = false;
  for (let k = index + 1; k < ops.length && !next; k++) {
    next = at(k);
    const op = ops[k]!;
    if (!next && op.kind === "common" && pairs[op.o]! >= 0 && isBlank(S[pairs[op.o]!]!)) blankAfter = true;
  }
  return { prev, next, beyond: next ? undefined : after, blankAfter };
}

interface Near {
  prev?: Neighbour;
  next?: Neighbour;
  /** The file's next non-blank line past the end of the quote, when the quote has no following neighbour. */
  beyond?: string;
  /** A blank line lies between the insertion and its following neighbour. */
  blankAfter: boolean;
}

/** A line ending like this opens a block: the line after it belongs inside. */
const OPENER = /(?:[:{([]|=>|\bdo|\bthen)$/;

/**
 * An inserted line. Without indentation drift, exactly as the model wrote it. Otherwise the
 * model's delta against whichever unchanged neighbour it indented most alike — and never at or
 * left of a block opener just above it when the block's body is deeper: a Python file must not
 * stop parsing. Where the model's indentation cannot tell (it ties with both neighbours, as when
 * all of it was stripped, and they stand at different depths in the file) the depth is a guess,
 * said in the result, and the guess is the one a careful engineer makes from the blank lines:
 * a line written straight after a block's last line, with the blank line that closes the block
 * still after it, continues that block (the preceding neighbour's depth); any other line —
 * straight before a line, or between two lines with no blank either side — takes the depth of
 * the line it precedes, the statement it is most often put in front of.
 */
function placeLine(n: string, near: Near, out: readonly string[], placed: ReadonlySet<number>, style: Style): { line: string; guessed: boolean } {
  if (isBlank(n)) return { line: "", guessed: false };
  const [nl, nb, nt] = splitLine(n);
  const trail = trailOf(nt, style);
  if (!style.drift) return { line: nl + nb + trail, guessed: false };
  const { units } = style;
  const cols = columns(nl, units.model);
  const dist = (x?: Neighbour) => (x ? Math.abs(columns(leadOf(x.old), units.model) - cols) : Infinity);
  // The neighbour indented exactly alike first (a quote mixing tabs and spaces makes columns a guess).
  const same = (x?: Neighbour) => x !== undefined && leadOf(x.old) === nl;
  const { prev, next } = near;
  const leadBy = (x: Neighbour) => leadFor(nl, leadOf(x.old), leadOf(x.file), style);
  let ref: Neighbour | undefined;
  let guessed = false;
  if (same(next) !== same(prev)) ref = same(next) ? next : prev;
  else if (!same(next) && dist(next) !== dist(prev)) ref = dist(next) < dist(prev) ? next : prev;
  else if (!prev || !next) ref = next ?? prev;
  else {
    const blankBefore = out.length > 0 && isBlank(out[out.length - 1]!);
    ref = near.blankAfter && !blankBefore ? prev : next;
    guessed = leadBy(prev) !== leadBy(next);
  }
  const k = lastSolid(out);
  const above = k < 0 ? undefined : out[k]!;
  const inside = (lead: string): string => {
    if (above === undefined || !OPENER.test(above.trimEnd())) return lead;
    const openerCols = columns(leadOf(above), units.file);
    if (columns(lead, units.file) > openerCols) return lead;
    // The file's own block body, when the opener is the file's; a block the model opened has none yet.
    const body = placed.has(k) ? undefined : (next?.file ?? near.beyond);
    if (body === undefined) return render(openerCols + units.file.width, units.file, leadOf(above));
    return columns(leadOf(body), units.file) > openerCols ? leadOf(body) : lead;
  };
  const lead = inside(ref ? leadBy(ref) : nl);
  // A guess only where the two readings end at different depths (after an opener both land in its body).
  if (guessed) guessed = inside(leadBy(prev!)) !== inside(leadBy(next!));
  return { line: lead + nb + trail, guessed };
}

function lastSolid(out: readonly string[]): number {
  for (let k = out.length - 1; k >= 0; k--) if (!isBlank(out[k]!)) return k;
  return -1;
}

/**
 * The model's body `nb` with every character it kept from `ob` written as the file's `fb` has
 * it. `ob` and `fb` must agree up to whitespace runs and typography; otherwise `nb` as given.
 */
function mergeBody(ob: string, fb: string, nb: string): string {
  if (ob.length + nb.length > 4000) return nb;
  const map = alignBodies(ob, fb);
  if (!map) return nb;
  const parts = diffChars(ob, nb);
  // A line the model mostly rewrote is its own text: characters it happens to share with the
  // old line are coincidence, not a quote of the file.
  let kept = 0;
  for (const part of parts) if (!part.added && !part.removed) kept += withoutWs(part.value).length;
  if (kept * 2 < withoutWs(ob).length) return nb;
  let out = "";
  let at = 0;
  for (const part of parts) {
    if (part.added) out += part.value;
    else if (part.removed) at += part.value.length;
    else for (let k = 0; k < part.value.length; k++) out += map[at++]!;
  }
  return out;
}

/** For each character of `ob`, the text of `fb` it stands for (a whitespace run maps as a whole). */
function alignBodies(ob: string, fb: string): string[] | null {
  const map = new Array<string>(ob.length);
  let i = 0;
  let j = 0;
  while (i < ob.length && j < fb.length) {
    const oWs = isWs(ob.charCodeAt(i));
    if (oWs !== isWs(fb.charCodeAt(j))) return null;
    if (oWs) {
      let i2 = i;
      let j2 = j;
      while (i2 < ob.length && isWs(ob.charCodeAt(i2))) i2++;
      while (j2 < fb.length && isWs(fb.charCodeAt(j2))) j2++;
      map[i] = fb.slice(j, j2);
      for (let k = i + 1; k < i2; k++) map[k] = "";
      i = i2;
      j = j2;
    } else {
      if (fold(ob[i]!) !== fold(fb[j]!)) return null;
      map[i++] = fb[j++]!;
    }
  }
  return i === ob.length && j === fb.length ? map : null;
}

export interface Unit {
  tabs: boolean;
  /** Columns per indentation level. */
  width: number;
}
interface Units {
  model: Unit;
  file: Unit;
}

/** Tabs or spaces, and how many columns a level is: the commonest step between indentations. */
export function detectUnit(lines: readonly string[]): Unit {
  let tabs = 0;
  let spaces = 0;
  const steps = new Map<number, number>();
  let prev = -1;
  for (const line of lines) {
    if (isBlank(line)) continue;
    const lead = leadOf(line);
    if (lead.startsWith("\t")) tabs++;
    // One space is alignment (a doc comment's " * "), not a level of indentation.
    else if (lead.length > 1) spaces++;
    const width = lead.startsWith("\t") ? -1 : lead.length;
    if (prev >= 0 && width > prev && width - prev >= 2 && width - prev <= 8) {
      steps.set(width - prev, (steps.get(width - prev) ?? 0) + 1);
    }
    prev = width;
  }
  if (tabs > spaces) return { tabs: true, width: 4 };
  let width = 0;
  let seen = 0;
  for (const [step, count] of steps) if (count > seen || (count === seen && step < width)) [width, seen] = [step, count];
  return { tabs: false, width: width || 2 };
}

function columns(lead: string, unit: Unit): number {
  let cols = 0;
  for (const c of lead) cols += c === "\t" ? unit.width : 1;
  return cols;
}

function render(cols: number, unit: Unit, like?: string): string {
  if (cols <= 0) return "";
  if (like !== undefined && cols > columns(like, unit)) {
    const extra = cols - columns(like, unit);
    return like + (unit.tabs && extra % unit.width === 0 ? "\t".repeat(extra / unit.width) : " ".repeat(extra));
  }
  if (!unit.tabs) return " ".repeat(cols);
  return "\t".repeat(Math.floor(cols / unit.width)) + " ".repeat(cols % unit.width);
}

/**
 * The file-side indentation for a line the model indented `ni`, when its reference line is
 * indented `mi` by the model and `fi` in the file: the model's delta, in the file's units.
 */
export function reindent(ni: string, mi: string, fi: string, units: Units): string {
  if (ni === mi) return fi;
  const same = units.model.tabs === units.file.tabs && (units.model.tabs || units.model.width === units.file.width);
  if (same && ni.startsWith(mi)) return fi + ni.slice(mi.length);
  if (same && mi.startsWith(ni) && fi.endsWith(mi.slice(ni.length))) return fi.slice(0, fi.length - (mi.length - ni.length));
  const levels = (columns(ni, units.model) - columns(mi, units.model)) / units.model.width;
  const cols = columns(fi, units.file) + Math.round(levels * units.file.width);
  return render(cols, units.file);
}
