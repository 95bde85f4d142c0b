// The built-in grep engine: the shared walk, then each file read in chunks of whole
// lines and searched as one string. A file with a NUL byte anywhere is binary and
// skipped (rg stops at the first NUL and reports it; the rg engine drops such files
// too). A UTF-8 BOM is dropped and UTF-16 with a BOM is decoded, as rg does. A chunk
// that is not valid UTF-8 is searched with the regex whose classes skip U+FFFD.
import { closeSync, openSync, readSync } from "node:fs";
import { relative } from "node:path";
import { isUtf8 } from "node:buffer";
import type { Compiled } from "./regex.ts";
import { Collector, displayLine, garbage, MAX_KEPT, type Hit } from "./collect.ts";
import { walk } from "./walk.ts";
import type { SearchOutcome, SearchPlan } from "./plan.ts";

const CHUNK = 256 * 1024;
let shared = Buffer.allocUnsafe(CHUNK);

/** A second pattern searched in the same pass while the first has found nothing. */
export interface Probe {
  compiled: Compiled;
  collector: Collector;
}

/**
 * Searches the plan's files. With a probe, each file's text is also searched for the
 * probe's pattern, in the same read, until the main pattern first matches: when the
 * main search finds nothing, the probe has covered every file without a second pass.
 */
export function searchBuiltin(plan: SearchPlan, compiled: Compiled, collector: Collector, probe?: Probe): SearchOutcome {
  const unreadable: string[] = [];
  let probing = probe !== undefined;
  const searchOne = (abs: string, rel: string): boolean => {
    const results = searchFile(abs, probing ? [compiled, probe!.compiled] : [compiled]);
    if (results === "unreadable") unreadable.push(rel);
    else if (results) {
      const [main, extra] = results;
      if (main!.count > 0) {
        collector.add(rel, abs, main!.hits, main!.count, main!.cut);
        probing = false;
      } else if (probing && extra && extra.count > 0) probe!.collector.add(rel, abs, extra.hits, extra.count, extra.cut);
    }
    return performance.now() <= plan.deadline;
  };
  if (plan.file) {
    searchOne(plan.real, "");
    return { timedOut: false, unreadable };
  }
  let timedOut = false;
  const result = walk(
    { root: plan.walkRoot, hidden: plan.hidden, noise: plan.noise, deadline: plan.deadline, onUnreadable: (abs) => unreadable.push(relative(plan.real, abs)) },
    (abs, rel) => {
      const full = plan.walkRel ? `${plan.walkRel}/${rel}` : rel;
      if (plan.match && !plan.match(full)) return true;
      if (searchOne(abs, full)) return true;
      timedOut = true;
      return false;
    },
  );
  return { timedOut: timedOut || result.timedOut, unreadable };
}

interface FileResult {
  hits: Hit[];
  count: number;
  cut: boolean;
}

/** What searching needs of a compiled pattern. */
export type Matcher = Pick<Compiled, "js" | "jsValid" | "prefilter" | "bytes">;

/**
 * The matching lines of one file for each matcher, from one read; null when the file is
 * binary; "unreadable" when it cannot be opened.
 */
export function searchFile(abs: string, matchers: readonly Matcher[]): FileResult[] | null | "unreadable" {
  let fd: number;
  try {
    fd = openSync(abs, "r");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "EACCES" || code === "EPERM" ? "unreadable" : null;
  }
  try {
    return scan(fd, matchers);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "EACCES" || code === "EPERM" ? "unreadable" : null;
  } finally {
    closeSync(fd);
  }
}

interface Job {
  matcher: Matcher;
  out: FileResult;
  line: number;
}

function searchAll(jobs: Job[], text: string, valid: boolean): void {
  for (const job of jobs) job.line = searchText(text, valid ? job.matcher.jsValid : job.matcher.js, job.line, job.out, job.matcher.prefilter);
}

function scan(fd: number, matchers: readonly Matcher[]): FileResult[] | null {
  const jobs: Job[] = matchers.map((matcher) => ({ matcher, out: { hits: [], count: 0, cut: false }, line: 1 }));
  const results = jobs.map((job) => job.out);
  let buf = shared;
  let filled = 0;
  let first = true;
  let skip = 0;
  for (;;) {
    const n = readSync(fd, buf, filled, buf.length - filled, null);
    const eof = n === 0;
    const start = filled;
    filled += n;
    if (first) {
      first = false;
      if (filled >= 2 && ((buf[0] === 0xff && buf[1] === 0xfe) || (buf[0] === 0xfe && buf[1] === 0xff))) {
        return utf16(fd, buf.subarray(0, filled), jobs) ? results : null;
      }
      if (filled >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) skip = 3;
    }
    if (n > 0 && buf.subarray(start, filled).indexOf(0) !== -1) return null;
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
    if (end > skip) {
      const bytes = buf.subarray(skip, end);
      if (jobs.some((job) => job.matcher.bytes === null || bytes.indexOf(job.matcher.bytes) !== -1)) {
        searchAll(jobs, bytes.toString("utf8"), isUtf8(bytes));
        garbage(bytes.length);
      } else if (!eof) {
        // Skipped undecoded; later chunks still need its line count.
        let lines = 0;
        for (let nl = bytes.indexOf(10); nl !== -1; nl = bytes.indexOf(10, nl + 1)) lines++;
        for (const job of jobs) job.line += lines;
      }
    }
    if (eof) return results;
    buf.copy(buf, 0, end, filled);
    filled -= end;
    skip = 0;
  }
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
    const m = finder.exec(text);
    if (!m) break;
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
    let hit = prefilter === null;
    if (!hit) {
      re.lastIndex = 0;
      hit = re.test(lineText);
    }
    if (hit) {
      out.count++;
      if (out.hits.length < MAX_KEPT) out.hits.push({ line, text: displayLine(lineText, re) });
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

function done(finder: RegExp, re: RegExp, line: number): number {
  finder.lastIndex = 0;
  re.lastIndex = 0;
  return line;
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
  searchAll(jobs, text, true);
  return true;
}
