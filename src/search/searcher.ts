// One file searched for the built-in grep engine (by whichever thread walked it), read
// in chunks of whole lines and searched as one string. A file with a NUL byte anywhere
// is binary and skipped (rg stops at the first NUL and reports it; the rg engine drops
// such files too). A UTF-8 BOM is dropped and UTF-16 with a BOM is decoded, as rg does.
// A chunk that is not valid UTF-8 is searched with the regex whose classes skip U+FFFD.
import { closeSync, openSync, readSync } from "node:fs";
import { isUtf8 } from "node:buffer";
import type { Compiled } from "./regex.ts";
import { holds } from "./anchor.ts";
import { Collector, displayLine, garbage, MAX_KEPT, type Hit } from "./collect.ts";
import { openedBelow, READ_NONBLOCKING } from "../core/paths.ts";
import { belowTopTier } from "./tiers.ts";

const CHUNK = 256 * 1024;
let shared = Buffer.allocUnsafe(CHUNK);

type Source = [source: string, flags: string];

/** A Matcher as it crosses to a thread (regular expressions do not). */
export interface MatcherSpec {
  js: Source;
  jsValid: Source;
  prefilter: Source | null;
  anchors: { bytes: Uint8Array; word: string | null; at: number }[] | null;
  multiline?: boolean;
  nested?: boolean;
}

const source = (re: RegExp): Source => [re.source, re.flags];

export function matcherSpec(m: Matcher): MatcherSpec {
  return { js: source(m.js), jsValid: source(m.jsValid), prefilter: m.prefilter ? source(m.prefilter) : null, anchors: m.anchors, multiline: m.multiline, nested: m.nested };
}

export function reviveMatcher(spec: MatcherSpec): Matcher {
  return {
    js: new RegExp(...spec.js),
    jsValid: new RegExp(...spec.jsValid),
    prefilter: spec.prefilter ? new RegExp(...spec.prefilter) : null,
    anchors: spec.anchors ? spec.anchors.map((a) => ({ ...a, bytes: Buffer.from(a.bytes) })) : null,
    multiline: spec.multiline,
    nested: spec.nested,
  };
}


/** Files a search could not cover: unreadable (permission denied), or skipped (reading
 * failed, or the pattern gave up on a line: see SLOW_MS) — the result is then partial. */
export interface Lost {
  unreadable: string[];
  skipped: string[];
  /** Binary files the pattern matches, when they are to be named (SearchPlan.noteBinary). */
  binary?: string[];
}

/**
 * Searches one file for `matchers` (the pattern, then maybe the probe) and adds what it
 * found: the pattern's lines to `collector`, else the probe's to `probed`; a file not
 * covered to `lost`. True when the pattern matched (the probe is then of no more use).
 * The main thread and the worker threads search each file with this; `confine` as in
 * searchFile.
 */
export function searchInto(abs: string, rel: string, matchers: readonly Matcher[], collector: Collector, probed: Collector | null, lost: Lost, confine: string | null = null): boolean {
  const results = searchFile(abs, matchers, confine, lost.binary !== undefined);
  if (results === "binary") {
    lost.binary!.push(rel);
    return false;
  }
  if (results === "unreadable") lost.unreadable.push(rel);
  if (results === "skipped") lost.skipped.push(rel);
  if (results === "unreadable" || results === "skipped" || results === null) return false;
  const [found, near] = results;
  if (found!.incomplete) lost.skipped.push(rel);
  if (found!.count > 0) {
    collector.add(rel, abs, found!.hits, found!.count, found!.cut);
    return true;
  }
  if (probed && near && near.count > 0) probed.add(rel, abs, near.hits, near.count, near.cut);
  return false;
}

interface FileResult {
  hits: Hit[];
  count: number;
  cut: boolean;
  /** The pattern gave up on a line (see SLOW_MS): lines after it were not searched. */
  incomplete?: boolean;
}

/** What searching needs of a compiled pattern. */
export type Matcher = Pick<Compiled, "js" | "jsValid" | "prefilter" | "anchors" | "multiline" | "nested">;

/**
 * The matching lines of one file for each matcher, from one read (no matcher: only the
 * binary check); null when the file is binary or gone; "unreadable" when permission is
 * denied; "skipped" when searching it failed otherwise (an I/O error, a line too long
 * for a string): never silently, for the result is then partial. With `confine` (a root
 * is set), the opened file must be at or below that real path, else it is treated as
 * gone: a directory on its path was swapped for a link to elsewhere after the walk.
 */
export function searchFile(abs: string, matchers: readonly Matcher[], confine: string | null = null, noteBinary = false): FileResult[] | null | "unreadable" | "skipped" | "binary" {
  let fd: number;
  try {
    // Non-blocking: a file that waits for data (/proc/kmsg) fails at once instead of hanging the search.
    fd = openSync(abs, READ_NONBLOCKING);
  } catch (error) {
    return failure(error);
  }
  try {
    if (confine !== null && !openedBelow(fd, confine)) return null;
    const results = scan(fd, matchers, noteBinary);
    if (results === BINARY_MATCH) return "binary";
    return results === BINARY ? null : results;
  } catch (error) {
    return failure(error);
  } finally {
    closeSync(fd);
  }
}

function failure(error: unknown): null | "unreadable" | "skipped" {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "EACCES" || code === "EPERM") return "unreadable";
  // Gone since the walk saw it, or not a file any more: nothing was there to search.
  if (code === "ENOENT" || code === "EISDIR" || code === "ELOOP") return null;
  return "skipped";
}

interface Job {
  matcher: Matcher;
  out: FileResult;
}

/** Searches `text` (whole lines, the first numbered `line`) for every job; returns the
 * number of the line after it. */
function searchAll(jobs: Job[], text: string, valid: boolean, line: number): number {
  let next = line;
  for (const job of jobs) {
    const re = valid ? job.matcher.jsValid : job.matcher.js;
    next = job.matcher.nested ? lineByLine(text, re, 0, line, job.out) : searchText(text, re, line, job.out, job.matcher.prefilter);
  }
  return next;
}

/**
 * A chunk that is not all valid UTF-8, searched in runs of lines that are (where U+FFFD
 * is a real character) and runs that are not (where it stands for bytes no class
 * matches), as rg decides line by line; returns the number of the line after it.
 */
function searchMixed(jobs: Job[], bytes: Buffer, line: number): number {
  let runStart = 0;
  let runValid: boolean | null = null;
  for (let start = 0; start < bytes.length; ) {
    const nl = bytes.indexOf(10, start);
    const end = nl === -1 ? bytes.length : nl + 1;
    const valid = isUtf8(bytes.subarray(start, end));
    if (runValid !== null && valid !== runValid) {
      line = searchAll(jobs, bytes.toString("utf8", runStart, start), runValid, line);
      runStart = start;
    }
    runValid = valid;
    start = end;
  }
  return searchAll(jobs, bytes.toString("utf8", runStart), runValid ?? true, line);
}

let scratch = Buffer.allocUnsafe(0);

/** Newlines in the file's bytes [from, to), read again: chunks skipped undecoded are
 * counted only when a later chunk turns out to have matches. */
function newlinesIn(fd: number, from: number, to: number): number {
  if (scratch.length === 0) scratch = Buffer.allocUnsafe(CHUNK);
  let lines = 0;
  for (let at = from; at < to; ) {
    const n = readSync(fd, scratch, 0, Math.min(scratch.length, to - at), at);
    if (n === 0) break;
    for (let nl = scratch.indexOf(10); nl !== -1 && nl < n; nl = scratch.indexOf(10, nl + 1)) lines++;
    at += n;
  }
  return lines;
}

/** What scan returns for a binary file; with noteBinary, for one whose bytes read so far hold the pattern. */
const BINARY = Symbol("binary");
const BINARY_MATCH = Symbol("binary match");

/**
 * A binary file: BINARY_MATCH when it is to be named and the pattern matches the bytes
 * read so far (the block that held the NUL and what came before it, read as UTF-8: what
 * costs no further read), else BINARY. Not the rest of the file: a large binary is named
 * only for what its first block (or the text before its first NUL) holds.
 */
function binaryVerdict(read: Buffer, matcher: Matcher | undefined, noteBinary: boolean): typeof BINARY | typeof BINARY_MATCH {
  if (!noteBinary || matcher === undefined) return BINARY;
  if (matcher.anchors !== null) {
    let held = false;
    for (const anchor of matcher.anchors) held ||= holds(read, anchor);
    if (!held) return BINARY;
  }
  const re = matcher.js;
  re.lastIndex = 0;
  const found = re.test(read.toString("utf8"));
  re.lastIndex = 0;
  return found ? BINARY_MATCH : BINARY;
}

function scan(fd: number, matchers: readonly Matcher[], noteBinary = false): FileResult[] | null | typeof BINARY | typeof BINARY_MATCH {
  if (matchers.length === 1 && matchers[0]!.multiline) return scanWhole(fd, matchers[0]!, noteBinary);
  // Loops, not map and some: a builtin called with a closure is compiled with it, at
  // the top tier (tiers.ts).
  const jobs: Job[] = [];
  const results: FileResult[] = [];
  for (const matcher of matchers) {
    const out: FileResult = { hits: [], count: 0, cut: false };
    jobs.push({ matcher, out });
    results.push(out);
  }
  let buf = shared;
  let filled = 0;
  let first = true;
  let skip = 0;
  /** File offset of buf[0]. */
  let offset = 0;
  /** Lines are counted up to this file offset, and `line` is the number of the next one. */
  let counted = 0;
  let line = 1;
  for (;;) {
    const n = readSync(fd, buf, filled, buf.length - filled, null);
    const eof = n === 0;
    const start = filled;
    filled += n;
    if (first) {
      first = false;
      if (filled >= 2 && ((buf[0] === 0xff && buf[1] === 0xfe) || (buf[0] === 0xfe && buf[1] === 0xff))) {
        return utf16(fd, buf.subarray(0, filled), jobs) ? results : BINARY;
      }
      if (filled >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) skip = counted = 3;
    }
    // Lines before this block were searched already: a match there is in results.
    if (n > 0 && buf.subarray(start, filled).indexOf(0) !== -1) return noteBinary && (results[0]?.count ?? 0) > 0 ? BINARY_MATCH : binaryVerdict(buf.subarray(0, filled), matchers[0], noteBinary);
    if (filled === 0) return results;
    let end: number;
    if (eof) end = filled;
    else {
      const nl = buf.lastIndexOf(10, filled - 1);
      if (nl < skip) {
        // One line longer than the buffer: grow it and read on.
        if (filled === buf.length) {
          const bigger = Buffer.allocUnsafe(buf.length * 2);
          buf.copy(bigger, 0, 0, filled);
          buf = bigger;
          if (bigger.length <= 16 * CHUNK) shared = bigger;
        }
        continue;
      }
      end = nl + 1;
    }
    const bytes = buf.subarray(skip, end);
    // A chunk without the bytes every match needs is not decoded.
    if (end > skip && worthDecoding(jobs, bytes)) {
      if (counted < offset + skip) line += newlinesIn(fd, counted, offset + skip);
      line = isUtf8(bytes) ? searchAll(jobs, bytes.toString("utf8"), true, line) : searchMixed(jobs, bytes, line);
      counted = offset + end;
      garbage(bytes.length);
    }
    if (eof) return results;
    buf.copy(buf, 0, end, filled);
    filled -= end;
    offset += end;
    skip = 0;
  }
}

/** Whether some job may match in `bytes`: it has no anchors, or the bytes hold one. */
function worthDecoding(jobs: readonly Job[], bytes: Buffer): boolean {
  for (const job of jobs) {
    const anchors = job.matcher.anchors;
    if (anchors === null) return true;
    for (const anchor of anchors) if (holds(bytes, anchor)) return true;
  }
  return false;
}

/**
 * Finds the matching lines of `text` (whole lines; the last may lack its "\n"), numbered
 * from `line`; returns the number of the line after the text. With a prefilter (a global
 * regex every matching line matches), candidates are found with it and each candidate
 * line is then checked with `re` alone.
 */
export function searchText(text: string, re: RegExp, line: number, out: FileResult, prefilter: RegExp | null = null): number {
  const finder = prefilter ?? re;
  let counted = 0;
  finder.lastIndex = 0;
  for (;;) {
    const started = performance.now();
    const m = finder.exec(text);
    if (!m) {
      // JavaScriptCore's regex gives up past a backtracking limit and answers "no match"
      // for the whole rest of the text: slowly. The rest is searched again line by line.
      if (performance.now() - started > SLOW_MS) return lineByLine(text, re, counted, line, out);
      break;
    }
    const at = m.index;
    if (at >= text.length && (text.length === 0 || text.charCodeAt(text.length - 1) === 10)) break;
    for (let nl = text.indexOf("\n", counted); nl !== -1 && nl < at; nl = text.indexOf("\n", counted)) {
      line++;
      counted = nl + 1;
    }
    const lineStart = counted;
    let lineEnd = text.indexOf("\n", at);
    if (lineEnd === -1) lineEnd = text.length;
    const lineText = text.slice(lineStart, lineEnd);
    // Where the line's first match starts, for showing a long line around it.
    let first: number | null = at - lineStart;
    if (prefilter !== null) {
      re.lastIndex = 0;
      first = re.exec(lineText)?.index ?? null;
    }
    if (first !== null) {
      out.count++;
      if (out.hits.length < MAX_KEPT) out.hits.push({ line, text: displayLine(lineText, re, false, first) });
      else out.cut = true;
    }
    // The last line, without a "\n": nothing follows it.
    if (lineEnd >= text.length) return done(finder, re, line);
    line++;
    counted = lineEnd + 1;
    finder.lastIndex = counted;
  }
  for (let nl = text.indexOf("\n", counted); nl !== -1; nl = text.indexOf("\n", nl + 1)) line++;
  return done(finder, re, line);
}

/** An exec slower than this that found nothing may have given up (see searchText). */
const SLOW_MS = 200;
const MAX_GIVE_UPS = 3;

/**
 * searchText from `from` (a line start, numbered `line`) one line at a time, so that a
 * line where the pattern gives up costs only that line: its file is then marked
 * incomplete, and after MAX_GIVE_UPS such lines the rest of it is left (each costs as
 * long as the first).
 */
function lineByLine(text: string, re: RegExp, from: number, line: number, out: FileResult): number {
  let gaveUp = 0;
  let after = line;
  for (let nl = text.indexOf("\n", from); nl !== -1; nl = text.indexOf("\n", nl + 1)) after++;
  for (let start = from; start < text.length; line++) {
    let end = text.indexOf("\n", start);
    if (end === -1) end = text.length;
    const lineText = text.slice(start, end);
    re.lastIndex = 0;
    const began = performance.now();
    const m = re.exec(lineText);
    if (m) {
      out.count++;
      if (out.hits.length < MAX_KEPT) out.hits.push({ line, text: displayLine(lineText, re, false, m.index) });
      else out.cut = true;
    } else if (performance.now() - began > SLOW_MS) {
      // That line is lost; the next ones are still searched, up to a few more losses.
      out.incomplete = true;
      if (++gaveUp >= MAX_GIVE_UPS) break;
    }
    start = end + 1;
  }
  re.lastIndex = 0;
  return after;
}

function done(finder: RegExp, re: RegExp, line: number): number {
  finder.lastIndex = 0;
  re.lastIndex = 0;
  return line;
}

/** A multiline search: the file read and searched whole (a match may span chunks). */
function scanWhole(fd: number, matcher: Matcher, noteBinary: boolean): FileResult[] | null | typeof BINARY | typeof BINARY_MATCH {
  const parts: Buffer[] = [];
  const chunk = Buffer.allocUnsafe(CHUNK);
  for (let n = readSync(fd, chunk, 0, chunk.length, null); n > 0; n = readSync(fd, chunk, 0, chunk.length, null)) {
    const part = Buffer.from(chunk.subarray(0, n));
    if (part.indexOf(0) !== -1 && !(parts.length === 0 && utf16Bom(part))) return binaryVerdict(Buffer.concat([...parts, part]), matcher, noteBinary);
    parts.push(part);
  }
  const bytes = Buffer.concat(parts);
  const out: FileResult = { hits: [], count: 0, cut: false };
  let text: string;
  let valid = true;
  if (utf16Bom(bytes)) {
    text = new TextDecoder(bytes[0] === 0xff ? "utf-16le" : "utf-16be").decode(bytes);
    if (text.includes("\0")) return BINARY;
  } else {
    const skip = bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
    valid = isUtf8(bytes.subarray(skip));
    text = bytes.toString("utf8", skip);
  }
  searchMultiline(text, valid ? matcher.jsValid : matcher.js, out);
  return [out];
}

function utf16Bom(bytes: Buffer): boolean {
  return bytes.length >= 2 && ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff));
}

/**
 * The lines of `text` (a whole file) that matches of `re` touch, each once, as rg -U
 * reports them: from the line a match starts on to the line of its last character (an
 * empty match: its own line). The search goes on from where a match ends.
 */
export function searchMultiline(text: string, re: RegExp, out: FileResult): void {
  let line = 1;
  /** Where line `line` starts. */
  let pos = 0;
  let reported = 0;
  re.lastIndex = 0;
  for (;;) {
    const m = re.exec(text);
    if (!m) break;
    const start = m.index;
    const end = start + m[0].length;
    if (start >= text.length && (text.length === 0 || text.charCodeAt(text.length - 1) === 10)) break;
    for (let nl = text.indexOf("\n", pos); nl !== -1 && nl < start; nl = text.indexOf("\n", pos)) {
      pos = nl + 1;
      line++;
    }
    const lastChar = end > start ? end - 1 : start;
    for (;;) {
      let lineEnd = text.indexOf("\n", pos);
      if (lineEnd === -1) lineEnd = text.length;
      if (line > reported) {
        reported = line;
        out.count++;
        if (out.hits.length < MAX_KEPT) out.hits.push({ line, text: displayLine(text.slice(pos, lineEnd), re) });
        else out.cut = true;
      }
      if (lineEnd >= lastChar || lineEnd >= text.length) break;
      pos = lineEnd + 1;
      line++;
    }
    // displayLine may have run `re` on the line: the search goes on from the match's end.
    re.lastIndex = end > start ? end : end + 1;
    if (re.lastIndex > text.length) break;
  }
  re.lastIndex = 0;
}

/** UTF-16 with a BOM: decoded whole, as rg transcodes it; false when binary. */
function utf16(fd: number, head: Buffer, jobs: Job[]): boolean {
  const parts: Buffer[] = [Buffer.from(head)];
  const chunk = Buffer.allocUnsafe(CHUNK);
  for (;;) {
    const n = readSync(fd, chunk, 0, chunk.length, null);
    if (n === 0) break;
    parts.push(Buffer.from(chunk.subarray(0, n)));
  }
  const bytes = Buffer.concat(parts);
  const text = new TextDecoder(bytes[0] === 0xff ? "utf-16le" : "utf-16be").decode(bytes);
  if (text.includes("\0")) return false;
  searchAll(jobs, text, true, 1);
  return true;
}

belowTopTier(searchInto, searchFile, scan, worthDecoding, searchAll, searchMixed, newlinesIn, searchText, lineByLine);
// node:fs's own readSync, called for every chunk of every file: its FTL compile was made
// again on each thread, 1-6 ms each.
belowTopTier(readSync);
