// One file's hunks → its new text, pure. Every hunk is located in the original text before
// any is applied, each searched after the previous one (or after its `@@ <line>` anchor),
// with only the tolerances SPEC §7.1 allows; the replacements are spans of the original, so
// every byte outside them stays as it was (line endings of untouched lines included).
import { applyEdits, findLine, Haystack, locate, MAX_LISTED, type Candidate, type Edit, type Located, type LocateRequest, type NearMiss, type TraceStep } from "../replacer/index.ts";
import type { Hunk } from "./parse.ts";

/**
 * Edit strategies 2, 3 and 5 (SPEC §7.1): trailing whitespace, indentation, typographic
 * look-alikes, by name (the cascade's order is not this list's concern).
 */
export const PATCH_TIERS = ["exact", "trailing-whitespace", "indentation-flexible", "escape-normalized"] as const;

/** A patch's lines are literal text: of escape-normalized, only the typographic fold applies (verbatim). */
function accept(strategy: string, c: Candidate): boolean {
  return strategy !== "escape-normalized" || (c.variant === "typographic" && c.via === undefined);
}

export interface HunkPlacement {
  index: number;
  patchLine: number;
  /** How it was found: a strategy name, or "insertion" for a hunk without old lines. */
  strategy: string;
  variant?: string;
  /** Where its old lines were (1-based, inclusive) and where its new lines are in the result. */
  startLine: number;
  endLine: number;
  written: { startLine: number; endLine: number };
  trace: TraceStep[];
}

export type HunkFailure =
  | { kind: "not-found"; nearMiss?: NearMiss; alreadyApplied?: number; earlier?: number; trace: TraceStep[] }
  | { kind: "ambiguous"; lines: number[]; strategy: string; trace: TraceStep[] }
  /** `earlier`: the line is in the file, but above where the hunk may start (hunks out of order). */
  | { kind: "anchor-not-found"; anchor: string; earlier?: number };

export type Applied =
  /** `editLines`: the 0-based line of the searched text on which each edit starts. */
  | { ok: true; lf: string; edits: Edit[]; editLines: number[]; placements: HunkPlacement[]; finalNewline: boolean }
  | { ok: false; index: number; hunk: Hunk; failure: HunkFailure };

/** `lf` is the file's text with LF line breaks and no BOM. */
export function applyHunks(lf: string, hunks: readonly Hunk[]): Applied {
  const hadNewline = lf === "" || lf.endsWith("\n");
  // Matching works on whole lines, so a last line without "\n" gets one for the search; the
  // file keeps its lack of a final newline unless the diff says otherwise.
  const work = hadNewline ? lf : `${lf}\n`;
  // The file's line starts, made only for what needs them (an anchor, an insertion, a hunk
  // exact does not take): a hunk found verbatim once is counted in lines from the last one.
  let full: Haystack | undefined;
  const hay = () => (full ??= new Haystack(work));
  const counter = new LineCounter(work);
  const lineOf = (offset: number) => (full ? full.lineOf(offset) : counter.lineOf(offset));
  const edits: Edit[] = [];
  const editLines: number[] = [];
  const placements: HunkPlacement[] = [];
  let cursor = 0;
  /** Where line `cursor` starts. */
  let cursorAt = 0;
  let delta = 0;
  let finalNewline = hadNewline;

  for (let index = 0; index < hunks.length; index++) {
    const hunk = hunks[index]!;
    const { oldText, newText } = sides(hunk);
    let from = cursor;
    let fromAt: number | undefined = cursorAt;
    if (hunk.anchor !== undefined) {
      const at = findLine(hay(), hunk.anchor, cursor);
      if (at.length === 0) {
        const above = cursor > 0 ? findLine(hay(), hunk.anchor, 0) : [];
        return { ok: false, index, hunk, failure: { kind: "anchor-not-found", anchor: hunk.anchor, ...(above.length > 0 ? { earlier: above[0]! + 1 } : {}) } };
      }
      // A hunk whose first line repeats its anchor starts at the anchor itself.
      const first = hunk.lines[0]!;
      from = first.kind !== "+" && first.text.trim() === hunk.anchor.trim() ? at[0]! : at[0]! + 1;
      fromAt = undefined;
    }
    let edit: Edit;
    let placed: Omit<HunkPlacement, "written" | "index" | "patchLine">;
    if (oldText === "") {
      // Nothing to find: the new lines go after the anchor, at the header's line for a
      // zero-context unified hunk, else at the end of the file.
      const h = hay();
      let line = hunk.anchor !== undefined ? from : h.lineCount - (work.endsWith("\n") ? 1 : 0);
      if (hunk.anchor === undefined && hunk.hint && !hunk.endOfFile) line = Math.min(Math.max(hunk.hint.oldStart, cursor), line);
      const offset = line < h.lineCount ? h.starts[line]! : work.length;
      edit = { start: offset, end: offset, text: newText };
      placed = { strategy: "insertion", startLine: line + 1, endLine: line, trace: [] };
    } else {
      const req = { tiers: PATCH_TIERS, oldText, newText, fromLine: from, atEnd: hunk.endOfFile, accept };
      const found = (fromAt !== undefined ? exactOnce(work, fromAt, from, lineOf, req) : undefined) ?? locate(hay(), req);
      if (found.kind === "ambiguous") return { ok: false, index, hunk, failure: { kind: "ambiguous", lines: found.lines, strategy: found.strategy, trace: found.trace } };
      if (found.kind === "not-found") {
        const above = from > 0 ? locate(hay(), { tiers: PATCH_TIERS, oldText, newText, fromLine: 0, atEnd: hunk.endOfFile, accept }) : undefined;
        return {
          ok: false,
          index,
          hunk,
          failure: {
            kind: "not-found",
            ...(found.nearMiss ? { nearMiss: found.nearMiss } : {}),
            ...alreadyApplied(hay(), oldText, newText, from),
            ...(above?.kind === "ok" ? { earlier: above.startLine } : {}),
            trace: found.trace,
          },
        };
      }
      edit = found.edit;
      placed = { strategy: found.strategy, ...(found.variant ? { variant: found.variant } : {}), startLine: found.startLine, endLine: found.endLine, trace: found.trace };
    }
    const newCount = countBreaks(edit.text, 0, edit.text.length);
    const oldCount = countBreaks(work, edit.start, edit.end);
    const writtenStart = placed.startLine + delta;
    placements.push({ index, patchLine: hunk.patchLine, ...placed, written: { startLine: writtenStart, endLine: writtenStart + Math.max(0, newCount - 1) } });
    delta += newCount - oldCount;
    edits.push(edit);
    editLines.push(lineOf(edit.start) - 1);
    // Spans are whole lines, so `edit.end` starts the first line after the hunk.
    cursor = lineOf(edit.end) - 1;
    cursorAt = edit.end === 0 || work.charCodeAt(edit.end - 1) === 10 ? edit.end : hay().starts[cursor]!;
    if (hunk.newNoNewline) finalNewline = false;
    else if (hunk.oldNoNewline) finalNewline = true;
  }
  let out = applyEdits(work, edits);
  if (!finalNewline && out.endsWith("\n")) out = out.slice(0, -1);
  return { ok: true, lf: out, edits, editLines, placements, finalNewline };
}

/**
 * 1-based line of an offset, as Haystack.lineOf answers, counted from the offset asked
 * before (hunks go down the file): the file's newlines are counted about once, and only
 * up to the last hunk.
 */
class LineCounter {
  #at = 0;
  #line = 1;
  constructor(private readonly text: string) {}

  lineOf(offset: number): number {
    if (offset < this.#at) this.#line -= countBreaks(this.text, offset, this.#at);
    else this.#line += countBreaks(this.text, this.#at, offset);
    this.#at = offset;
    return this.#line;
  }
}

/**
 * locate's answer when its first tier, exact, takes the block: it stands, verbatim and from a
 * line start, exactly once from line `from` (which starts at offset `base` of `text`) on,
 * and ends the text when it must. Undefined otherwise — no match, two, or more occurrences
 * than exact lists — and locate decides. A hunk is nearly always this case: one native search
 * of the rest of the file, where locate copies the file's line starts and makes a candidate
 * of every occurrence. `lineOf` is Haystack.lineOf of `text`. (test/patch.locate.test.ts
 * holds the two to the same answers.)
 */
export function exactOnce(text: string, base: number, from: number, lineOf: (offset: number) => number, req: LocateRequest): Located | undefined {
  if (req.tiers[0] !== "exact" || req.oldText === "" || req.fromLine !== from) return undefined;
  const find = req.oldText;
  let found = -1;
  let seen = 0;
  // The occurrences exact lists (overlapping ones too, at most MAX_LISTED), as it finds them.
  for (let i = text.indexOf(find, base); i !== -1 && seen < MAX_LISTED; i = text.indexOf(find, i + 1)) {
    seen++;
    if (i !== base && text.charCodeAt(i - 1) !== 10) continue;
    if (req.atEnd && i + find.length !== text.length) continue;
    if (found !== -1) return undefined;
    found = i;
  }
  if (found === -1) return undefined;
  const end = found + find.length;
  const startLine = lineOf(found);
  const endLine = Math.max(startLine, lineOf(end - 1));
  // As locate shows it a candidate: in the part of the text searched.
  if (req.accept && !req.accept("exact", { start: found - base, end: end - base, startLine: startLine - from, endLine: endLine - from })) return undefined;
  const at = startLine === endLine ? `line ${startLine}` : `lines ${startLine}–${endLine}`;
  return {
    kind: "ok",
    strategy: "exact",
    edit: { start: found, end, text: req.newText },
    startLine,
    endLine,
    trace: [{ strategy: "exact", decision: "taken", reason: `1 match at ${at}`, candidates: [{ startLine, endLine, accepted: true }], candidateCount: 1 }],
  };
}

/** The hunk's old lines (context and removed) and new lines (context and added), each with its "\n". */
function sides(hunk: Hunk): { oldText: string; newText: string } {
  let oldText = "";
  let newText = "";
  for (const l of hunk.lines) {
    if (l.kind !== "+") oldText += `${l.text}\n`;
    if (l.kind !== "-") newText += `${l.text}\n`;
  }
  return { oldText, newText };
}

/** The "\n"s of text[from, to). */
function countBreaks(text: string, from: number, to: number): number {
  if (to <= from) return 0;
  // A few lines: a search per line; more: one native count.
  if (to - from < 512) {
    let n = 0;
    for (let i = text.indexOf("\n", from); i !== -1 && i < to; i = text.indexOf("\n", i + 1)) n++;
    return n;
  }
  return text.slice(from, to).match(NEWLINES)?.length ?? 0;
}

const NEWLINES = /\n/g;

/** The hunk's new lines already stand, once, where its old lines would: it was applied before. */
function alreadyApplied(hay: Haystack, oldText: string, newText: string, from: number): { alreadyApplied?: number } {
  if (newText.trim() === "" || newText === oldText || oldText.includes(newText)) return {};
  const found = locate(hay, { tiers: ["exact"], oldText: newText, newText, fromLine: from, atEnd: false });
  return found.kind === "ok" ? { alreadyApplied: found.startLine } : {};
}
