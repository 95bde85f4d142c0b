// One file's hunks → its new text, pure. Every hunk is located in the original text before
// any is applied, each searched after the previous one (or after its `@@ <line>` anchor),
// with only the tolerances SPEC §7.1 allows; the replacements are spans of the original, so
// every byte outside them stays as it was (line endings of untouched lines included).
import { applyEdits, findLine, Haystack, locate, type Candidate, type Edit, type NearMiss, type TraceStep } from "../replacer/index.ts";
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
  const hay = new Haystack(work);
  const edits: Edit[] = [];
  const editLines: number[] = [];
  const placements: HunkPlacement[] = [];
  let cursor = 0;
  let delta = 0;
  let finalNewline = hadNewline;

  for (let index = 0; index < hunks.length; index++) {
    const hunk = hunks[index]!;
    const { oldText, newText } = sides(hunk);
    let from = cursor;
    if (hunk.anchor !== undefined) {
      const at = findLine(hay, hunk.anchor, cursor);
      if (at.length === 0) {
        const above = cursor > 0 ? findLine(hay, hunk.anchor, 0) : [];
        return { ok: false, index, hunk, failure: { kind: "anchor-not-found", anchor: hunk.anchor, ...(above.length > 0 ? { earlier: above[0]! + 1 } : {}) } };
      }
      // A hunk whose first line repeats its anchor starts at the anchor itself.
      const first = hunk.lines[0]!;
      from = first.kind !== "+" && first.text.trim() === hunk.anchor.trim() ? at[0]! : at[0]! + 1;
    }
    let edit: Edit;
    let placed: Omit<HunkPlacement, "written" | "index" | "patchLine">;
    if (oldText === "") {
      // Nothing to find: the new lines go after the anchor, at the header's line for a
      // zero-context unified hunk, else at the end of the file.
      let line = hunk.anchor !== undefined ? from : hay.lineCount - (work.endsWith("\n") ? 1 : 0);
      if (hunk.anchor === undefined && hunk.hint && !hunk.endOfFile) line = Math.min(Math.max(hunk.hint.oldStart, cursor), line);
      const offset = line < hay.lineCount ? hay.starts[line]! : work.length;
      edit = { start: offset, end: offset, text: newText };
      placed = { strategy: "insertion", startLine: line + 1, endLine: line, trace: [] };
    } else {
      const found = locate(hay, { tiers: PATCH_TIERS, oldText, newText, fromLine: from, atEnd: hunk.endOfFile, accept });
      if (found.kind === "ambiguous") return { ok: false, index, hunk, failure: { kind: "ambiguous", lines: found.lines, strategy: found.strategy, trace: found.trace } };
      if (found.kind === "not-found") {
        const above = from > 0 ? locate(hay, { tiers: PATCH_TIERS, oldText, newText, fromLine: 0, atEnd: hunk.endOfFile, accept }) : undefined;
        return {
          ok: false,
          index,
          hunk,
          failure: {
            kind: "not-found",
            ...(found.nearMiss ? { nearMiss: found.nearMiss } : {}),
            ...alreadyApplied(hay, oldText, newText, from),
            ...(above?.kind === "ok" ? { earlier: above.startLine } : {}),
            trace: found.trace,
          },
        };
      }
      edit = found.edit;
      placed = { strategy: found.strategy, ...(found.variant ? { variant: found.variant } : {}), startLine: found.startLine, endLine: found.endLine, trace: found.trace };
    }
    const newCount = countBreaks(edit.text);
    const oldCount = countBreaks(work.slice(edit.start, edit.end));
    const writtenStart = placed.startLine + delta;
    placements.push({ index, patchLine: hunk.patchLine, ...placed, written: { startLine: writtenStart, endLine: writtenStart + Math.max(0, newCount - 1) } });
    delta += newCount - oldCount;
    edits.push(edit);
    editLines.push(hay.lineOf(edit.start) - 1);
    // Spans are whole lines, so `edit.end` starts the first line after the hunk.
    cursor = hay.lineOf(edit.end) - 1;
    if (hunk.newNoNewline) finalNewline = false;
    else if (hunk.oldNoNewline) finalNewline = true;
  }
  let out = applyEdits(work, edits);
  if (!finalNewline && out.endsWith("\n")) out = out.slice(0, -1);
  return { ok: true, lf: out, edits, editLines, placements, finalNewline };
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

function countBreaks(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

/** The hunk's new lines already stand, once, where its old lines would: it was applied before. */
function alreadyApplied(hay: Haystack, oldText: string, newText: string, from: number): { alreadyApplied?: number } {
  if (newText.trim() === "" || newText === oldText || oldText.includes(newText)) return {};
  const found = locate(hay, { tiers: ["exact"], oldText: newText, newText, fromLine: from, atEnd: false });
  return found.kind === "ok" ? { alreadyApplied: found.startLine } : {};
}
