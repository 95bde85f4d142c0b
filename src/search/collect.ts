// The matches of one grep, whichever engine found them: lines grouped by file, files
// ordered newest first (ties by path), every line's text already cut for display. Memory
// is bounded: past MAX_KEPT lines the oldest files keep only their counts, so the kept
// lines are always a prefix of the full result in display order, and a file too old to
// keep any line is not even listed, only counted.
import { statSync } from "node:fs";
import { belowTopTier } from "./tiers.ts";

export const MAX_LINE_CHARS = 250;
/** Matching lines kept for the spill file; counting goes on past it. */
export const MAX_KEPT = 20_000;

export interface Hit {
  line: number;
  text: string;
}

export interface FileHits {
  /** Relative to the search root, "/" separators. */
  rel: string;
  mtimeMs: number;
  count: number;
  /** A prefix of the file's matching lines; all of them unless `cut`. */
  hits: Hit[];
  cut: boolean;
}

export class Collector {
  /** The files with matches, but not those past the frontier (see beyond), which are
   * only counted: they would keep no lines, and many matching files would otherwise
   * each hold an entry. */
  readonly files: FileHits[] = [];
  /** Files with matches only counted. */
  private counted = 0;
  lines = 0;
  private kept = 0;
  private evicted = false;
  /** The files that still keep lines: only they take part in an eviction. */
  private live: FileHits[] = [];
  /** After an eviction, the oldest file that kept lines (see beyond). */
  private frontier: FileHits | null = null;

  /** Adds one file's matches; `abs` is stat'ed for its mtime unless it is given. */
  add(rel: string, abs: string, hits: Hit[], count: number, cut: boolean, mtimeMs = mtimeOf(abs)): void {
    this.lines += count;
    if (this.beyond(mtimeMs, rel)) {
      this.counted++;
      return;
    }
    const file = { rel: own(rel), mtimeMs, count, hits, cut };
    this.files.push(file);
    if (hits.length > 0) this.live.push(file);
    this.kept += hits.length;
    if (this.kept > MAX_KEPT) this.evict();
  }

  /** Files with at least one matching line. */
  get fileCount(): number {
    return this.files.length + this.counted;
  }

  /** Forgets everything collected: the search starts again. */
  reset(): void {
    this.files.length = 0;
    this.counted = 0;
    this.live = [];
    this.lines = 0;
    this.kept = 0;
    this.evicted = false;
    this.frontier = null;
  }

  /** What another thread's collector hands over (see merge). */
  snapshot(): Snapshot {
    return { files: this.files, counted: this.counted, lines: this.lines, evicted: this.evicted };
  }

  /**
   * Takes in another collector's files. An eviction in either, or one that the merge
   * itself makes, leaves the same first MAX_KEPT / 2 lines as one collector given every
   * file would: each kept at least that prefix of its own files.
   */
  merge(other: Snapshot): void {
    this.counted += other.counted;
    for (const file of other.files) {
      if (this.beyond(file.mtimeMs, file.rel)) {
        this.counted++;
        continue;
      }
      this.files.push(file);
      if (file.hits.length > 0) this.live.push(file);
      this.kept += file.hits.length;
    }
    this.lines += other.lines;
    if (other.evicted) this.evicted = true;
    if (this.kept > MAX_KEPT) this.evict();
  }

  /**
   * Files in display order. After an eviction, what was kept depends on the order files
   * arrived in (rg's is not the walk's), so the kept lines are cut back to what any order
   * keeps: the first MAX_KEPT / 2 lines in display order, which no eviction can have
   * touched (each one kept at least that prefix of the files then present).
   */
  sorted(): FileHits[] {
    this.files.sort(byRecency);
    if (this.evicted) this.trim(this.files);
    return this.files;
  }

  /**
   * Whether a file with this mtime and path would keep none of its lines: after an
   * eviction, a file older than the oldest that kept lines comes after at least
   * MAX_KEPT / 2 kept lines in display order, and so does it at the end. Its lines need
   * only be counted, not read. (`trimming`: there is such a frontier.)
   */
  get trimming(): boolean {
    return this.frontier !== null;
  }

  beyond(mtimeMs: number, rel: string): boolean {
    return this.frontier !== null && newestFirst(mtimeMs, rel, this.frontier.mtimeMs, this.frontier.rel) > 0;
  }

  private evict(): void {
    this.evicted = true;
    this.live.sort(byRecency);
    this.trim(this.live);
    this.live = this.live.filter((file) => file.hits.length > 0);
    if (this.kept >= MAX_KEPT / 2) this.frontier = this.live[this.live.length - 1] ?? null;
  }

  /** Keeps the first MAX_KEPT / 2 lines of `files` (in display order; files without
   * lines change nothing, so the live ones stand for all). */
  private trim(files: FileHits[]): void {
    let kept = 0;
    for (const file of files) {
      if (kept >= MAX_KEPT / 2) {
        if (file.hits.length > 0) {
          file.hits = [];
          file.cut = true;
        }
        continue;
      }
      if (kept + file.hits.length > MAX_KEPT / 2) {
        file.hits = file.hits.slice(0, MAX_KEPT / 2 - kept);
        file.cut = true;
      }
      kept += file.hits.length;
    }
    this.kept = kept;
  }
}

/** A file's mtime; 0 when it vanished since it was read (it still had its matches). */
export function mtimeOf(abs: string): number {
  try {
    return statSync(abs).mtimeMs;
  } catch {
    return 0;
  }
}

/** Decoded text since the last collection. Each chunk's string is garbage once searched,
 * and left to itself the heap grows with the tree; a full collection every 32 MB keeps
 * the peak flat for a few percent of the time. */
const GC_EVERY = 32 * 1024 * 1024;
let sinceGc = 0;

/** Counts `bytes` of text decoded and dropped; collects when enough has piled up. */
export function garbage(bytes: number): void {
  sinceGc += bytes;
  if (sinceGc < GC_EVERY) return;
  sinceGc = 0;
  Bun.gc(true);
}

export interface Snapshot {
  files: FileHits[];
  counted: number;
  lines: number;
  evicted: boolean;
}

export function byRecency(a: FileHits, b: FileHits): number {
  return newestFirst(a.mtimeMs, a.rel, b.mtimeMs, b.rel);
}

/** The order grep and glob list files in: newest first, ties by path (a comparator). */
export function newestFirst(aTime: number, aRel: string, bTime: number, bRel: string): number {
  return bTime - aTime || (aRel < bRel ? -1 : aRel > bRel ? 1 : 0);
}

/**
 * A matched line as shown: without its trailing "\r"s, at most MAX_LINE_CHARS characters with "…"
 * where it was cut; a long line whose first match lies past the cut is shown around it.
 * `fresh`: `raw` is a string of its own, not a slice of a larger one. `at`: where the
 * first match starts, when known.
 */
export function displayLine(raw: string, re: RegExp, fresh = false, at?: number): string {
  const shown = cutLine(raw, re, at);
  // A short line of a fresh string is returned as is; anything cut from a bigger string
  // is copied out of it.
  return fresh && shown.length === raw.length ? shown : own(shown);
}

/**
 * A copy of `s` that shares no storage: a slice of a string keeps the whole string it
 * was cut from alive (a 256 KB chunk per kept line), and kept lines must cost only
 * their own length for memory to stay bounded.
 */
export function own(s: string): string {
  return Buffer.from(s, "utf16le").toString("utf16le");
}

/** Sticky copies of the patterns, to match at a known position. */
const stickies = new WeakMap<RegExp, RegExp>();

/** The first match of `re` in `line`; `at`, when given, is where it starts (found by
 * whoever found the line), so that a long line is not searched again from its start: a
 * pattern like \w+Error\( backtracks over every word of a minified line. */
function firstMatch(line: string, re: RegExp, at: number | undefined): RegExpExecArray | null {
  if (at !== undefined && at < line.length) {
    let sticky = stickies.get(re);
    if (!sticky) stickies.set(re, (sticky = new RegExp(re.source, `${re.flags.replace("g", "")}y`)));
    sticky.lastIndex = at;
    const m = sticky.exec(line);
    if (m) return m;
  }
  re.lastIndex = 0;
  const m = re.exec(line);
  re.lastIndex = 0;
  return m;
}

function cutLine(raw: string, re: RegExp, at: number | undefined): string {
  // Every trailing "\r": rg under --crlf ends an unterminated last line with "\r\n", so
  // "x\r" at the end of a file reaches the rg engine as "x\r\r".
  let length = raw.length;
  while (length > 0 && raw.charCodeAt(length - 1) === 13) length--;
  const line = length === raw.length ? raw : raw.slice(0, length);
  if (line.length <= MAX_LINE_CHARS) return line;
  const m = firstMatch(line, re, at);
  const end = m ? m.index + m[0].length : 0;
  if (end <= MAX_LINE_CHARS) return `${cut(line, 0, MAX_LINE_CHARS)}…`;
  const start = Math.max(0, Math.min(m!.index - 40, line.length - MAX_LINE_CHARS));
  const body = cut(line, start, start + MAX_LINE_CHARS);
  return `…${body}${start + MAX_LINE_CHARS < line.length ? "…" : ""}`;
}

/** line.slice(from, to) without splitting a surrogate pair at either end. */
function cut(line: string, from: number, to: number): string {
  const isLow = (i: number) => {
    const c = line.charCodeAt(i);
    return c >= 0xdc00 && c <= 0xdfff;
  };
  if (from > 0 && isLow(from)) from++;
  if (to < line.length && isLow(to)) to--;
  return line.slice(from, to);
}

// Called for every matching line (and file), on every search thread: kept below the top
// tier (tiers.ts), which compiled cutLine and displayLine again on each thread for
// 15-60 ms of a common pattern's search, on the cores searching.
belowTopTier(displayLine, cutLine, firstMatch, cut, own, byRecency, newestFirst, mtimeOf, Collector.prototype.add, Collector.prototype.merge);
