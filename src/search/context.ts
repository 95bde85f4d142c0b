// Lines around grep's matches (context, before, after), read from each file after the
// search, only for the matches shown or saved: both engines report matching lines alike,
// so the context added here is the same bytes whichever engine searched.
import { closeSync, openSync, readSync } from "node:fs";
import type { Hit } from "./collect.ts";
import { openedBelow, READ_NONBLOCKING } from "../core/paths.ts";

/** One line of a file's block: a match (":" after its number) or context ("-"); null
 * stands for "--", the break between two groups that do not touch. */
export type BlockLine = { line: number; text: string; match: boolean } | null;

const CHUNK = 256 * 1024;

/**
 * The block of `hits` (a file's matching lines, in order, their text already cut for
 * display) with `before` and `after` lines of context each; `show` cuts a context line's
 * raw text for display. A context line that is itself a matching line keeps its ":".
 * With `confine` (a root is set), the file opened again must be at or below it, or no
 * context is shown.
 */
export function withContext(abs: string, hits: readonly Hit[], before: number, after: number, show: (raw: string) => string, confine: string | null = null): BlockLine[] {
  if (hits.length === 0) return [];
  // The line ranges wanted, merged where they touch.
  const ranges: [number, number][] = [];
  for (const hit of hits) {
    const from = Math.max(1, hit.line - before);
    const to = hit.line + after;
    const last = ranges[ranges.length - 1];
    if (last && from <= last[1] + 1) last[1] = Math.max(last[1], to);
    else ranges.push([from, to]);
  }
  const texts = readLines(abs, ranges, confine);
  // Opened somewhere else than the search found it: the matches alone, without context.
  if (texts === null) return hits.map((hit) => ({ line: hit.line, text: hit.text, match: true }));
  const matches = new Map(hits.map((h) => [h.line, h.text]));
  const out: BlockLine[] = [];
  for (const [i, [from, to]] of ranges.entries()) {
    if (i > 0) out.push(null);
    for (let line = from; line <= to; line++) {
      const matched = matches.get(line);
      if (matched !== undefined) out.push({ line, text: matched, match: true });
      else {
        const raw = texts.get(line);
        // Past the end of the file (or the file shrank since it was searched).
        if (raw === undefined) break;
        out.push({ line, text: show(raw), match: false });
      }
    }
  }
  return out;
}

/** The raw text of some lines of a file (e.g. to place a match in a line cut for
 * display), decoded as the engines decode them; null when it opened outside `confine`. */
export function rawLines(abs: string, lines: readonly number[], confine: string | null = null): Map<number, string> | null {
  if (lines.length === 0) return new Map();
  const sorted = [...new Set(lines)].sort((a, b) => a - b);
  return readLines(abs, sorted.map((l) => [l, l] as [number, number]), confine);
}

/** The raw text of the lines in `ranges` (sorted, disjoint), decoded as the engines
 * decode them: a UTF-8 BOM dropped, UTF-16 with a BOM transcoded. */
function readLines(abs: string, ranges: readonly [number, number][], confine: string | null): Map<number, string> | null {
  const out = new Map<number, string>();
  let fd: number;
  try {
    // Non-blocking: a file that waits for data (/proc/kmsg) fails at once instead of hanging the search.
    fd = openSync(abs, READ_NONBLOCKING);
  } catch {
    return out;
  }
  try {
    if (confine !== null && !openedBelow(fd, confine)) return null;
    const want = (line: number): boolean => {
      for (const [from, to] of ranges) if (line >= from && line <= to) return true;
      return false;
    };
    const lastWanted = ranges[ranges.length - 1]![1];
    const buf = Buffer.allocUnsafe(CHUNK);
    let carry: Buffer = Buffer.alloc(0);
    let line = 1;
    let first = true;
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      let bytes: Buffer = carry.length > 0 ? Buffer.concat([carry, buf.subarray(0, n)]) : buf.subarray(0, n);
      if (first) {
        first = false;
        if (bytes.length >= 2 && ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff))) return utf16Lines(fd, Buffer.from(bytes), want);
        if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) bytes = bytes.subarray(3);
      }
      let start = 0;
      for (let nl = bytes.indexOf(10); nl !== -1; nl = bytes.indexOf(10, start)) {
        if (want(line)) out.set(line, bytes.toString("utf8", start, nl));
        line++;
        start = nl + 1;
        if (line > lastWanted) return out;
      }
      if (n === 0) {
        if (start < bytes.length && want(line)) out.set(line, bytes.toString("utf8", start));
        return out;
      }
      carry = Buffer.from(bytes.subarray(start));
    }
  } catch {
    return out;
  } finally {
    closeSync(fd);
  }
}

function utf16Lines(fd: number, head: Buffer, want: (line: number) => boolean): Map<number, string> {
  const parts = [head];
  const chunk = Buffer.allocUnsafe(CHUNK);
  for (let n = readSync(fd, chunk, 0, chunk.length, null); n > 0; n = readSync(fd, chunk, 0, chunk.length, null)) parts.push(Buffer.from(chunk.subarray(0, n)));
  const bytes = Buffer.concat(parts);
  const text = new TextDecoder(bytes[0] === 0xff ? "utf-16le" : "utf-16be").decode(bytes);
  const out = new Map<number, string>();
  text.split("\n").forEach((raw, i) => {
    if (want(i + 1)) out.set(i + 1, raw);
  });
  // A final newline ends the last line; it does not start another.
  if (text.endsWith("\n")) out.delete(text.split("\n").length);
  return out;
}
