// The ripgrep engine (its command line is rgargs.ts): rg walks and searches (in parallel, with its own ignore handling,
// which the built-in walk mirrors), kt reads rg's plain output with --heading and --null
// (leaner than --json, for rg and for kt) and applies what rg cannot
// express: .ktignore, the include glob's exact picomatch meaning, and dropping files in
// which rg met a NUL byte. Ordering, caps and counting are the collector's, as for the
// built-in engine, so both print the same bytes.
import type { Compiled } from "./regex.ts";
import { Collector, displayLine, garbage, MAX_KEPT, MAX_LINE_CHARS, mtimeOf, type Hit } from "./collect.ts";
import { PathChecker } from "./chains.ts";
import { rgArgs } from "./rgargs.ts";
import type { SearchOutcome, SearchPlan } from "./plan.ts";
import { realpathSync, statSync } from "node:fs";
import { searchFile } from "./searcher.ts";
import { inside } from "../core/paths.ts";
import { isUtf8 } from "node:buffer";
import { join } from "node:path";

export interface RgOutcome extends SearchOutcome {
  /** rg did not run a search (e.g. it rejected the pattern): use the built-in engine. */
  failed?: string;
  /** What the near-miss probe found in the same pass; null when something matched. */
  probed: Collector | null;
  /** rg runs: 2 when a pass with the probe was given up and run again without it. */
  passes: number;
}

/**
 * Probe lines tolerated once something has matched. Past them the pass is given up and
 * the search starts again without the probe: for a pattern whose probe is common ("TODO"
 * probes for "to" and "do": 946,000 lines of /usr/share) reading the probe's lines would
 * cost more than a new pass. Below it, reading them costs a few milliseconds, far less
 * than a pass ("readfilesync" in node_modules: 2,100 probe lines, mostly "readFile").
 */
const PROBE_LINES_AFTER_MATCH = 20_000;

/**
 * Searches with rg. With a `probe` (the near-miss pattern), rg searches for both in one
 * pass and each line is sorted by which of the two it matches, so that a search with no
 * match has its hint without a second pass; once something has matched and the probe's
 * lines pile up, the pass is dropped and run again without it.
 */
export async function searchRg(rg: string, plan: SearchPlan, compiled: Compiled, collector: Collector, probe: Compiled | null = null): Promise<RgOutcome> {
  if (probe) {
    const probed = new Collector();
    const fused = await pass(rg, plan, compiled, collector, { probe, found: probed });
    if (fused !== "abandoned") return { ...fused, probed: collector.lines > 0 ? null : probed, passes: 1 };
    collector.reset();
  }
  const plain = await pass(rg, plan, compiled, collector, null);
  return { ...(plain as Pass), probed: null, passes: probe ? 2 : 1 };
}

interface Probing {
  probe: Compiled;
  found: Collector;
}

interface FileState {
  raw: string;
  rel: string;
  hits: Hit[];
  count: number;
  cut: boolean;
  binary: boolean;
  near: { hits: Hit[]; count: number; cut: boolean };
  /** Stat'ed when its header was read, if it was. */
  mtimeMs: number | undefined;
  /** None of its lines would be kept (Collector.beyond): they are only counted. */
  skip: boolean;
}

type Pass = Omit<RgOutcome, "probed" | "passes">;

async function pass(rg: string, plan: SearchPlan, compiled: Compiled, collector: Collector, probing: Probing | null): Promise<Pass | "abandoned"> {
  const { args, cwd, typed } = rgArgs(plan, compiled, probing?.probe ?? null);
  const checker = plan.file ? null : new PathChecker(plan.real, plan.hidden && typed);
  const keeps = (rel: string): boolean => {
    if (plan.file) return true;
    if (plan.match && !plan.match(rel)) return false;
    return checker!.keeps(rel);
  };
  let proc;
  try {
    proc = Bun.spawn([rg, ...args], { cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  } catch (error) {
    return { timedOut: false, unreadable: [], failed: (error as Error).message };
  }
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    proc.kill("SIGKILL");
  }, Math.max(0, plan.deadline - performance.now()));
  // Read as it comes: a panicking rg 13 (e.g. "\B$" over a file with a BOM and CRLF
  // endings) can leave its other threads waiting for ever; it is killed at once, and the
  // search falls back to the built-in engine.
  let panicked = false;
  const stderr = (async () => {
    let text = "";
    const decoder = new TextDecoder();
    for await (const chunk of proc.stderr) {
      text += decoder.decode(chunk, { stream: true });
      if (!panicked && text.includes("panicked at")) {
        panicked = true;
        proc.kill("SIGKILL");
      }
    }
    return text;
  })();

  let summary = false;
  /** A line of the pattern itself has been seen (the probe is then of no use). */
  let matched = false;
  let probeLines = 0;
  let current: FileState | null = null;
  const flush = (): void => {
    if (current !== null && !current.binary && (current.count > 0 || current.near.count > 0) && keeps(current.rel)) {
      const abs = plan.file ? plan.real : `${plan.real}/${current.rel}`;
      if (plan.confine !== null) confirmed(current, abs, plan.confine);
      if (current.count > 0) collector.add(current.rel, abs, current.hits, current.count, current.cut, current.mtimeMs);
      else if (probing) probing.found.add(current.rel, abs, current.near.hits, current.near.count, current.near.cut);
    }
    current = null;
  };
  /**
   * With a root, what rg found in a file is replaced by a search of it through a verified
   * descriptor (builtin.ts, which prints the same bytes): rg opens paths by name, and a
   * directory on the way swapped for a link to outside the root between its walk and its
   * read would have it print a file from outside; what a search of the file inside finds
   * is what is shown, and nothing when it is gone or outside now. Checking rg's paths
   * after the fact (realpath) cannot be sound (the link may be gone again by then). The
   * other sound choice, the built-in engine whenever a root is set, costs 1.3-2.2x the
   * rg engine without a root over node_modules (bench/grep.ts --root: a rare literal, a
   * regex); confirming costs 0.8-1.06x there, except for a regex with 52,000 matching
   * lines over node_modules x4 (2.1x, the built-in engine 2.0x). Only for a literal
   * matching most files is confirming dearer than the built-in engine (1.8x and 2.3x
   * against 1.5x and 1.8x): the files are searched again one after the other here.
   */
  const confirmed = (file: FileState, abs: string, confine: string): void => {
    const results = searchFile(abs, probing ? [compiled, probing.probe] : [compiled], confine);
    const found = Array.isArray(results) ? results[0]! : { hits: [], count: 0, cut: false };
    const near = Array.isArray(results) && results[1] ? results[1] : { hits: [], count: 0, cut: false };
    file.hits = found.hits;
    file.count = found.count;
    file.cut = found.cut;
    file.near = { hits: near.hits, count: near.count, cut: near.cut };
  };
  const keep = (into: { hits: Hit[]; count: number; cut: boolean }, line: number, text: string, re: RegExp, at?: number): void => {
    into.count++;
    if (into.hits.length >= MAX_KEPT) into.cut = true;
    else into.hits.push({ line, text: displayLine(text, re, true, at) });
  };
  // rg prints each file's matches under its path: "path\0number:text" for the first, then
  // "number:text", a blank line between files. Any other line is one of rg's notes (a
  // NUL met after a match: the file is binary and dropped) or the --stats block. Lines
  // are read from the bytes, so that a kept text is its own string and not a slice
  // pinning a whole chunk of output.
  /** Lines since the last blank line that were neither a match nor a heading: the start
   * of the next heading when a path holds a newline ("a\nb.txt\0…" arrives as two lines). */
  let fragment: string | null = null;
  const onLine = (buf: Buffer, start: number, end: number, valid: boolean): void => {
    if (start === end) {
      fragment = null;
      return;
    }
    const first = buf[start]!;
    let z = -1;
    let colon = -1;
    if (first >= 48 && first <= 57) {
      colon = buf.indexOf(58, start);
      let digits = start;
      while (digits < end && buf[digits]! >= 48 && buf[digits]! <= 57) digits++;
      if (digits !== colon) colon = -1;
    }
    if (colon === -1 || colon >= end) {
      z = buf.indexOf(0, start);
      if (z === -1 || z >= end) {
        const line = buf.toString("utf8", start, end);
        if (line.endsWith(" files searched")) summary = true;
        const note = fragment === null ? line : `${fragment}\n${line}`;
        const binary = /^([^]*): (?:WARNING: stopped searching binary file|binary file matches)/.exec(note);
        if (binary && current !== null && current.raw === binary[1]) {
          current.binary = true;
          fragment = null;
        } else fragment = note;
        return;
      }
      flush();
      const raw = (fragment === null ? "" : `${fragment}\n`) + buf.toString("utf8", start, z);
      fragment = null;
      const rel = relOf(raw, plan);
      let mtimeMs: number | undefined;
      let skip = false;
      // Many matches: a file too old to keep any of its lines is only counted.
      if (probing === null && !compiled.verify && collector.trimming) {
        mtimeMs = mtimeOf(plan.file ? plan.real : `${plan.real}/${rel}`);
        skip = collector.beyond(mtimeMs, rel);
      }
      current = { raw, rel, hits: [], count: 0, cut: false, binary: false, near: { hits: [], count: 0, cut: false }, mtimeMs, skip };
      colon = buf.indexOf(58, z + 1);
      start = z + 1;
    }
    fragment = null;
    if (current === null) return;
    if (current.skip) {
      current.count++;
      current.cut = true;
      return;
    }
    let number = 0;
    for (let i = start; i < colon; i++) number = number * 10 + buf[i]! - 48;
    // With --column: "column:" (1-based, in bytes) before the text.
    let column = 0;
    let from = colon + 1;
    if (probing === null && !compiled.multiline) {
      // rg gives no column for an empty match at the end of an unterminated last line.
      let digits = from;
      while (digits < end && buf[digits]! >= 48 && buf[digits]! <= 57) column = column * 10 + buf[digits++]! - 48;
      if (digits > from && digits < end && buf[digits] === 58) from = digits + 1;
      else column = 0;
    }
    let ok = valid || isUtf8(buf.subarray(from, end));
    let re = ok ? compiled.jsValid : compiled.js;
    let text = buf.toString("utf8", from, end);
    // Such a line ends in the "\r\n" rg adds under --crlf: when what looked like a
    // column leaves a text the pattern does not match, it was the text's own start.
    if (column > 0 && buf[end - 1] === 13 && !compiled.verify && !test(re, text)) {
      column = 0;
      from = colon + 1;
      ok = valid || isUtf8(buf.subarray(from, end));
      re = ok ? compiled.jsValid : compiled.js;
      text = buf.toString("utf8", from, end);
    }
    if (probing === null) {
      // The probe searched for as the pattern (a second pass): rg's part is only a
      // necessary condition.
      if (compiled.verify && !test(re, text)) return;
      // The match's start in UTF-16 units, needed only to show a long line.
      const at = text.length > MAX_LINE_CHARS && column > 0 ? buf.toString("utf8", from, from + column - 1).length : undefined;
      keep(current, number, text, re, at);
      return;
    }
    // One pass for both: the line is the pattern's if the pattern matches it, else the
    // probe's if the probe (a wider pattern, checked exactly) does.
    if (test(re, text)) {
      matched = true;
      keep(current, number, text, re);
      return;
    }
    probeLines++;
    const near = ok ? probing.probe.jsValid : probing.probe.js;
    if (!probing.probe.verify || test(near, text)) keep(current.near, number, text, near);
  };

  let abandoned = false;
  /** The pieces of a line not yet ended (a minified line can span hundreds of chunks:
   * they are joined once, when its newline comes, not chunk by chunk). */
  let pending: Buffer[] = [];
  for await (const chunk of proc.stdout) {
    let buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (pending.length > 0) {
      // Only the line cut at the end of the last chunk is joined, not the whole chunk.
      const nl = buf.indexOf(10);
      if (nl === -1) {
        pending.push(Buffer.from(buf));
        continue;
      }
      pending.push(buf.subarray(0, nl + 1));
      const joined = Buffer.concat(pending);
      eachLine(joined, joined.length - 1, onLine);
      buf = buf.subarray(nl + 1);
      pending = [];
    }
    const last = buf.lastIndexOf(10);
    if (last === -1) {
      if (buf.length > 0) pending.push(Buffer.from(buf));
      continue;
    }
    eachLine(buf, last, onLine);
    garbage(last);
    if (last + 1 < buf.length) pending.push(Buffer.from(buf.subarray(last + 1)));
    if (matched && probeLines > PROBE_LINES_AFTER_MATCH) {
      abandoned = true;
      proc.kill("SIGKILL");
      break;
    }
  }
  if (abandoned) {
    clearTimeout(timer);
    await proc.exited;
    await stderr;
    return "abandoned";
  }
  if (pending.length > 0) {
    const rest = Buffer.concat(pending);
    eachLine(rest, rest.length, onLine);
  }
  flush();
  await proc.exited;
  clearTimeout(timer);
  const errors = await stderr;
  if (panicked) return { timedOut: false, unreadable: [], failed: "rg crashed: a thread panicked" };
  if (!summary && !timedOut) return { timedOut, unreadable: [], failed: errors.trim() || `rg exited with code ${proc.exitCode}` };
  const unreadable: string[] = [];
  for (const line of errors.split("\n")) {
    const m = /^(?:rg: )?(.+): Permission denied \(os error 13\)$/.exec(line);
    if (!m) continue;
    const rel = relOf(m[1]!, plan);
    // With a root, only a path that is inside it now: rg may have listed a directory
    // through a link swapped in for a moment, and the names there are not the root's.
    if (plan.confine !== null && !nowBelow(join(plan.real, rel), plan.confine)) continue;
    if (plan.file || (isFileRel(plan, rel) ? keeps(rel) : checker!.keepsDir(rel))) unreadable.push(rel);
  }
  return { timedOut, unreadable };
}

function test(re: RegExp, text: string): boolean {
  re.lastIndex = 0;
  const hit = re.test(text);
  re.lastIndex = 0;
  return hit;
}

function nowBelow(path: string, dir: string): boolean {
  try {
    return inside(dir, realpathSync(path));
  } catch {
    return false;
  }
}

function isFileRel(plan: SearchPlan, rel: string): boolean {
  try {
    return statSync(join(plan.real, rel)).isFile();
  } catch {
    return false;
  }
}

/** Calls `onLine` for each line of buf[0, end), saying whether the whole range is UTF-8. */
function eachLine(buf: Buffer, end: number, onLine: (buf: Buffer, start: number, end: number, valid: boolean) => void): void {
  const valid = isUtf8(buf.subarray(0, end));
  let start = 0;
  for (let nl = buf.indexOf(10); nl !== -1 && nl < end; nl = buf.indexOf(10, start)) {
    onLine(buf, start, nl, valid);
    start = nl + 1;
  }
  if (start < end) onLine(buf, start, end, valid);
}

/** rg's path (relative to its working directory, plan.walkRoot) → relative to plan.real. */
function relOf(path: string, plan: SearchPlan): string {
  if (plan.file) return "";
  const rel = path.startsWith("./") ? path.slice(2) : path;
  return plan.walkRel ? `${plan.walkRel}/${rel}` : rel;
}
