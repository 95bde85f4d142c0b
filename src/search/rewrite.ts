// A replace's work on one file (SPEC §8.6), shared by the replace tool and the threads of
// grep's built-in search: the matcher a replace's input makes, and a file's new content, the
// lines it adds and removes and the hashes of both contents, from the file's bytes. A search
// thread that finds the pattern in a file works out its change there and then (the file is
// in the page cache, and every thread does its share), so the tool neither reads the file
// again nor matches, encodes and hashes every file on one thread once the search is done.
// A replace that will be written (not a dry run) has the thread write each change's temp file
// too (core/temp.ts), beside the file, as the commit would: creating files is most of a
// replace's writing on some file systems, and the threads create theirs at once. The commit
// takes a temp file only as the very file the thread made, found in the directory it has
// opened and verified (core/commit.ts adopt); the tool removes those it does not take
// (takeStaged). Pure but for work(), which reads the file and may write its temp file: plain
// data in and out, as it crosses between threads.
import { closeSync, fstatSync, openSync, type Stats } from "node:fs";
import { compilePattern, escapeLiteral, type Cases } from "./regex.ts";
import { applySpans, findLiteral, findReplacements, parseTemplate, type Span } from "../replacer/substitute.ts";
import { certainParts, lines as textLines } from "../replacer/parts.ts";
import { BOM_BYTES, decodeUtf8, hasBom, MAX_FILE_BYTES } from "../core/text.ts";
import { openedBelow, readOpened, READ_NONBLOCKING } from "../core/paths.ts";
import { sha256 } from "../core/hash.ts";
import { discard, tempPathFor, writeTempFile, type StagedTemp } from "../core/temp.ts";

/** What a replace asks for, as plain data (it crosses to search threads). */
export interface ReplaceSpec {
  pattern: string;
  replacement: string;
  regex: boolean;
  word: boolean;
  ignoreCase: boolean;
}

/** Every match of the replace in a text, with what each becomes. */
export type Matcher = (text: string) => Span[];

/** The regular expression a replace searches for, and its case rule (grep's search and the matcher both compile it). */
export function patternOf(spec: ReplaceSpec): { source: string; cases: Cases } {
  return { source: spec.regex ? spec.pattern : escapeLiteral(spec.pattern), cases: spec.ignoreCase ? "insensitive" : "sensitive" };
}

/** How matches are found in a file's text: plain indexOf for exact literal text, else the regex. */
export function matcherOf(spec: ReplaceSpec): Matcher {
  const { source, cases } = patternOf(spec);
  if (!spec.regex && !spec.word && cases === "sensitive") return (text) => findLiteral(text, spec.pattern, spec.replacement);
  const compiled = compilePattern(source, cases, false, true);
  const re = compiled.jsValid;
  // Whole words as rg -w takes them: no word character just before or just after.
  const js = spec.word ? new RegExp(`(?<![0-9A-Za-z_])(?:${re.source})(?![0-9A-Za-z_])`, re.flags) : re;
  const replacement = spec.regex ? { parts: parseTemplate(spec.replacement) } : { literal: spec.replacement };
  const prefilter = compiled.prefilter;
  if (prefilter) return (text) => findByLines(text, prefilter, js, replacement);
  return (text) => findReplacements(text, js, replacement);
}

/**
 * findReplacements over the lines holding the literal text every match holds (the pattern's
 * prefilter), each line searched alone, as grep's searcher does: a pattern starting with a
 * repetition (`(\w+)\.startswith\(`) is tried at every position of the file otherwise, a
 * quarter of a stdlib replace. Matches never span lines, so the spans are the same.
 */
export function findByLines(text: string, prefilter: RegExp, re: RegExp, replacement: Parameters<typeof findReplacements>[2]): Span[] {
  const spans: Span[] = [];
  prefilter.lastIndex = 0;
  for (let m = prefilter.exec(text); m !== null; m = prefilter.exec(text)) {
    const start = text.lastIndexOf("\n", m.index - 1) + 1;
    let end = text.indexOf("\n", m.index);
    if (end === -1) end = text.length;
    for (const s of findReplacements(text.slice(start, end), re, replacement)) spans.push({ start: s.start + start, end: s.end + start, replacement: s.replacement });
    if (end >= text.length) break;
    prefilter.lastIndex = end + 1;
  }
  return spans;
}

/** A file's change worked out from its text: the spans replaced, the text they make, and the bytes written. */
export interface Replaced {
  after: string;
  spans: Span[];
  next: Uint8Array;
}

/** The change of a file of UTF-8 `bytes` (decoded already: `text`), or null when no match changes it. */
export function replaceText(bytes: Uint8Array, text: string, matcher: Matcher): Replaced | null {
  const spans = matcher(text);
  if (spans.length === 0) return null;
  const after = applySpans(text, spans);
  if (after === text) return null;
  const out = Buffer.from(after, "utf8");
  return { after, spans, next: hasBom(bytes) ? Buffer.concat([BOM_BYTES, out]) : out };
}

/** Why a file is left out of a replace (a note names it), or that no match changes it. */
export type Left = "binary" | "notUtf8" | "tooLarge" | "unchanged";

/** What is left of a file's bytes as a replace takes them: a reason to leave it out, or its UTF-8 text. */
export function textOf(bytes: Uint8Array): { left: Exclude<Left, "unchanged"> } | { text: string } {
  if (bytes.length > MAX_FILE_BYTES) return { left: "tooLarge" };
  // UTF-16 text (grep searches it, decoded): not UTF-8, which replace writes.
  if (bytes.length >= 2 && ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff))) return { left: "notUtf8" };
  // Binary as grep means it: a NUL byte anywhere.
  if (bytes.indexOf(0) !== -1) return { left: "binary" };
  const text = decodeUtf8(bytes);
  return text === null ? { left: "notUtf8" } : { text };
}

/** A file's change as a search thread worked it out. */
export interface Worked {
  /** The file as the search named it (its collector's rel) and the path it was read at. */
  rel: string;
  abs: string;
  change:
    | { left: Left }
    | {
        previous: Uint8Array;
        next: Uint8Array;
        replacements: number;
        /** Lines added and removed as the diff counts them; undefined where only the diff can tell (countsOf). */
        counts: { added: number; removed: number } | undefined;
        previousSha: string;
        nextSha: string;
        /** The temp file of `next` the thread wrote, when the search was asked to (SearchPlan.stage). */
        temp?: StagedTemp;
      };
}

/**
 * The temp files this thread's walks wrote for the replace `token` (work's `stage`), as this
 * thread knows them: a walk on this thread whose helpers failed is made again on it alone,
 * and what the first try wrote is in no answer. The tool removes every one it does not take.
 */
const staged = new Map<string, string[]>();

/** The temp files written for `token` on this thread, forgotten here (the caller removes those it does not take). */
export function takeStaged(token: string): string[] {
  const list = staged.get(token) ?? [];
  staged.delete(token);
  return list;
}

/**
 * Writes the temp file of a change beside `abs` with the mode and owner of the file as read
 * (`st`); undefined when it cannot be written (the commit then writes its own, and names
 * whatever goes wrong in its words).
 */
function stageTemp(abs: string, bytes: Uint8Array, st: Stats, token: string): StagedTemp | undefined {
  const path = tempPathFor(abs);
  const mode = st.mode & 0o7777;
  let written: ReturnType<typeof writeTempFile>;
  try {
    written = writeTempFile(path, bytes, { mode, uid: st.uid, gid: st.gid }, mode);
  } catch (error) {
    // A name that exists is not this thread's to remove.
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") discard(path);
    return undefined;
  }
  closeSync(written.fd);
  let list = staged.get(token);
  if (!list) staged.set(token, (list = []));
  list.push(path);
  return { path, dev: written.st.dev, ino: written.st.ino, mtimeMs: written.st.mtimeMs, size: written.st.size };
}

/**
 * The change of the file at `abs`, read whole; null when the tool must look at it itself
 * (gone, unreadable, not a regular file, outside `confine`): its own read then says why in
 * the tool's words.
 */
export function work(abs: string, rel: string, matcher: Matcher, confine: string | null, stage: string | null = null): Worked | null {
  let fd: number;
  try {
    fd = openSync(abs, READ_NONBLOCKING);
  } catch {
    return null;
  }
  let bytes: Uint8Array;
  let st: Stats;
  try {
    st = fstatSync(fd);
    if (!st.isFile() || (confine !== null && !openedBelow(fd, confine))) return null;
    if (st.size > MAX_FILE_BYTES) return { rel, abs, change: { left: "tooLarge" } };
    bytes = readOpened(fd, st.size);
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
  const read = textOf(bytes);
  if ("left" in read) return { rel, abs, change: read };
  const done = replaceText(bytes, read.text, matcher);
  if (done === null) return { rel, abs, change: { left: "unchanged" } };
  return {
    rel,
    abs,
    change: {
      previous: bytes,
      next: done.next,
      replacements: done.spans.length,
      counts: countsOf(read.text, done.after, done.spans),
      previousSha: sha256(bytes),
      nextSha: sha256(done.next),
      ...(stage === null ? {} : withTemp(stageTemp(abs, done.next, st, stage))),
    },
  };
}

function withTemp(temp: StagedTemp | undefined): { temp?: StagedTemp } {
  return temp ? { temp } : {};
}

/**
 * The lines a replace's diff adds and removes, without the diff: the same whole-line edits
 * spanDiff makes, each compared as editsDiff compares them (spanParts). Undefined where the
 * diff is not a span diff of text ending in a line break (CRLF, no final line break, or one
 * added or removed), or an edit's lines need a diff to be counted (a replacement that moves
 * lines): those counts come from the diff itself.
 */
export function countsOf(before: string, after: string, spans: readonly Span[]): { added: number; removed: number } | undefined {
  if (before.includes("\r") || !before.endsWith("\n") || !after.endsWith("\n")) return undefined;
  let added = 0;
  let removed = 0;
  for (const e of spanEdits(before, spans)) {
    const parts = certainParts(textLines(before.slice(e.start, e.end)), textLines(e.text));
    if (parts === null) return undefined;
    for (const part of parts) {
      if (part.added) added += part.value.length;
      else if (part.removed) removed += part.value.length;
    }
  }
  return { added, removed };
}

/**
 * A replace's spans as edits of whole lines (sorted, disjoint): the lines each touches, spans
 * on the same or adjacent lines in one edit. `lines`, when given, gets the 0-based line each
 * edit starts on.
 */
export function spanEdits(before: string, spans: readonly Span[], lines?: number[]): { start: number; end: number; text: string }[] {
  const edits: ({ start: number; end: number; text: string } & { spans: Span[] })[] = [];
  let line = 0;
  let counted = 0;
  for (const s of spans) {
    const start = before.lastIndexOf("\n", s.start - 1) + 1;
    // A match never holds a line break: its line ends at the next one.
    const end = before.indexOf("\n", s.end) + 1 || before.length;
    const last = edits[edits.length - 1];
    if (last && start <= last.end) {
      // The same or an adjacent line run: one edit.
      last.end = Math.max(last.end, end);
      last.spans.push(s);
      continue;
    }
    if (lines) {
      for (let i = before.indexOf("\n", counted); i !== -1 && i < start; i = before.indexOf("\n", i + 1)) line++;
      counted = start;
      lines.push(line);
    }
    edits.push({ start, end, text: "", spans: [s] });
  }
  for (const e of edits) {
    let text = "";
    let at = e.start;
    for (const s of e.spans) {
      text += before.slice(at, s.start) + s.replacement;
      at = s.end;
    }
    e.text = text + before.slice(at, e.end);
  }
  return edits;
}
