// "Change only what the model meant to change": a three-way merge with old_string as the base,
// the file's matched span as one side and new_string as the other. The model's quote differs
// from the file only by imprecision (indentation, spacing, typography, a misremembered line),
// so every line the model left alone is written as the file has it, and every line it changed
// carries the model's change applied onto the file's own indentation, spacing and characters.
import { diffArrays, diffChars } from "diff";
import type { DoubtKind } from "./types.ts";
import { fold, isBlank, isWs, leadOf, looseKey, similarity, splitLine, splitLines, withoutWs } from "./_text.ts";

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
}

export type MergeResult =
  | { text: string }
  | { doubt: DoubtKind; fileLine: number; expected: string; actual: string };

/** The unguarded merge, for strategies whose alignment is certain (every line equivalent). */
export function mergeLoose(file: string, old: string, neu: string): string {
  const merged = merge({ file, old, neu, guard: false });
  return "text" in merged ? merged.text : neu;
}

export function merge(input: MergeInput): MergeResult {
  const S = splitLines(input.file);
  const O = splitLines(input.old);
  const N = splitLines(input.neu);
  const pairs = input.pairs ?? O.lines.map((_, i) => (i < S.lines.length ? i : -1));
  const units = { model: detectUnit([...O.lines, ...N.lines]), file: detectUnit(S.lines) };

  const out: string[] = [];
  let cursor = 0;
  const flush = (j: number) => {
    while (cursor < j) out.push(S.lines[cursor++]!);
  };

  type Op = { kind: "common"; o: number; n: number } | { kind: "hunk"; removed: number[]; added: number[] };
  const ops: Op[] = [];
  let oi = 0;
  let ni = 0;
  for (const part of diffArrays(O.lines, N.lines)) {
    const count = part.value.length;
    if (part.added || part.removed) {
      let last = ops[ops.length - 1];
      if (!last || last.kind !== "hunk") ops.push((last = { kind: "hunk", removed: [], added: [] }));
      for (let k = 0; k < count; k++) (part.added ? last.added.push(ni++) : last.removed.push(oi++));
    } else {
      for (let k = 0; k < count; k++) ops.push({ kind: "common", o: oi++, n: ni++ });
    }
  }

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
    const partner = pairHunk(op.removed, op.added, O.lines, N.lines);
    for (let k = 0; k < op.added.length; k++) {
      const n = op.added[k]!;
      const line = N.lines[n]!;
      const o = partner[k]!;
      if (o >= 0 && pairs[o]! >= 0) {
        out.push(mergeLine(O.lines[o]!, S.lines[pairs[o]!]!, line, units));
        continue;
      }
      const ref = reference(ops, index, op.removed, pairs, O.lines);
      out.push(ref < 0 ? line : shiftLine(line, O.lines[ref]!, S.lines[pairs[ref]!]!, units));
    }
  }
  flush(S.lines.length);

  const trail = Number(S.trail) + Number(N.trail) - Number(O.trail) > 0;
  return { text: out.join("\n") + (trail ? "\n" : "") };
}

/** For each added line of a hunk, the removed line it rewrites, or -1 for a pure insertion. */
function pairHunk(removed: number[], added: number[], oldLines: string[], newLines: string[]): number[] {
  if (removed.length === added.length) return removed.slice();
  const partner = added.map(() => -1);
  if (removed.length === 0) return partner;
  if (removed.length * added.length > 2500) {
    for (let k = 0; k < Math.min(removed.length, added.length); k++) partner[k] = removed[k]!;
    return partner;
  }
  // Monotone pairing that maximizes total similarity; pairs under 0.5 are not rewrites.
  const R = removed.length;
  const A = added.length;
  const sim = (r: number, a: number) => {
    const s = similarity(looseKey(oldLines[removed[r]!]!), looseKey(newLines[added[a]!]!));
    return s >= 0.5 ? s : 0;
  };
  const best: number[][] = Array.from({ length: R + 1 }, () => new Array<number>(A + 1).fill(0));
  for (let r = 1; r <= R; r++) {
    for (let a = 1; a <= A; a++) {
      best[r]![a] = Math.max(best[r - 1]![a]!, best[r]![a - 1]!, best[r - 1]![a - 1]! + sim(r - 1, a - 1));
    }
  }
  for (let r = R, a = A; r > 0 && a > 0; ) {
    if (best[r]![a] === best[r - 1]![a]) r--;
    else if (best[r]![a] === best[r]![a - 1]) a--;
    else {
      partner[a - 1] = removed[r - 1]!;
      r--;
      a--;
    }
  }
  return partner;
}

/** The nearest old line with a file partner, preferring non-blank ones: the indentation reference. */
function reference(ops: readonly { kind: string; o?: number }[], index: number, removed: number[], pairs: number[], oldLines: string[]): number {
  const usable = (o: number, blankOk: boolean) => pairs[o]! >= 0 && (blankOk || !isBlank(oldLines[o]!));
  for (const blankOk of [false, true]) {
    for (const o of removed) if (usable(o, blankOk)) return o;
    for (let k = index - 1; k >= 0; k--) {
      const o = ops[k]!.o;
      if (o !== undefined && usable(o, blankOk)) return o;
    }
    for (let k = index + 1; k < ops.length; k++) {
      const o = ops[k]!.o;
      if (o !== undefined && usable(o, blankOk)) return o;
    }
  }
  return -1;
}

/** A changed line: the model's edit of `o` applied onto the file's version `f` of that line. */
function mergeLine(o: string, f: string, n: string, units: Units): string {
  if (isBlank(n)) return "";
  const [ol, ob, ot] = splitLine(o);
  const [fl, fb, ft] = splitLine(f);
  const [nl, nb, nt] = splitLine(n);
  if (isBlank(o) || isBlank(f)) return shiftLine(n, o, f, units);
  const lead = reindent(nl, ol, fl, units);
  const trail = nt === ot ? ft : nt;
  const body = nb === ob ? fb : ob === fb ? nb : mergeBody(ob, fb, nb);
  return lead + body + trail;
}

/** A new line: the model's indentation delta against its reference line, applied to the file's. */
function shiftLine(n: string, refOld: string, refFile: string, units: Units): string {
  if (isBlank(n)) return "";
  const [nl, nb, nt] = splitLine(n);
  const [ol, , ot] = splitLine(refOld);
  const [fl, , ft] = splitLine(refFile);
  return reindent(nl, ol, fl, units) + nb + (nt !== "" && nt === ot ? ft : nt);
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

interface Unit {
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
    else if (lead.length > 0) spaces++;
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

function render(cols: number, unit: Unit): string {
  if (cols <= 0) return "";
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
