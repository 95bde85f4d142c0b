// The ripgrep engine: rg walks and searches (in parallel, with its own ignore handling,
// which the built-in walk mirrors), kt reads rg's plain output with --heading and --null
// (leaner than --json, for rg and for kt) and applies what rg cannot
// express: .ktignore, the include glob's exact picomatch meaning, and dropping files in
// which rg met a NUL byte. Ordering, caps and counting are the collector's, as for the
// built-in engine, so both print the same bytes.
import type { Compiled } from "./regex.ts";
import { Collector, displayLine, garbage, MAX_KEPT, type Hit } from "./collect.ts";
import { PathChecker } from "./walk.ts";
import type { SearchOutcome, SearchPlan } from "./plan.ts";
import { statSync } from "node:fs";
import { isUtf8 } from "node:buffer";
import { basename, dirname, join } from "node:path";

export interface RgOutcome extends SearchOutcome {
  /** rg did not run a search (e.g. it rejected the pattern): use the built-in engine. */
  failed?: string;
}

export function rgArgs(plan: SearchPlan, compiled: Compiled): { args: string[]; cwd: string; typed: boolean } {
  const args = ["--heading", "-n", "-H", "--null", "--color=never", "--stats", "--no-config", "--no-ignore-global", "--no-mmap", "--crlf", compiled.caseInsensitive ? "-i" : "-s"];
  if (plan.file) return { args: [...args, "-e", compiled.rust, "--", basename(plan.real)], cwd: dirname(plan.real), typed: false };
  if (!plan.hidden) args.push("--hidden");
  for (const name of plan.noise) args.push("-g", `!${name}/`);
  const typeGlob = plan.glob === null ? null : prefilterGlob(plan.glob);
  if (typeGlob) args.push("--type-add", `ktinclude:${typeGlob}`, "-t", "ktinclude");
  // rg runs in the directory it walks: given a relative subdirectory instead, rg 13
  // misapplies the working directory's own anchored ignore rules (e.g. "build/skip/").
  args.push("-e", compiled.rust, "--", ".");
  return { args, cwd: plan.walkRoot, typed: typeGlob !== null };
}

/**
 * A file-name glob that every file the include matches also matches (rg's --type-add),
 * so that rg skips most other files; null when the include's last segment cannot be
 * said in rg's glob syntax with the same or a wider meaning.
 */
function prefilterGlob(glob: string): string | null {
  const last = glob.slice(glob.lastIndexOf("/") + 1);
  if (last === "" || last.includes("**") || !/^[\w.*?{},[\]\- ]+$/.test(last)) return null;
  if (/[[{]/.test(last) && /[!^]/.test(last)) return null;
  return last;
}

export async function searchRg(rg: string, plan: SearchPlan, compiled: Compiled, collector: Collector): Promise<RgOutcome> {
  const { args, cwd, typed } = rgArgs(plan, compiled);
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
  const stderr = new Response(proc.stderr).text();

  let summary = false;
  let current: { raw: string; rel: string; hits: Hit[]; count: number; cut: boolean; binary: boolean } | null = null;
  const flush = (): void => {
    if (current !== null && current.count > 0 && !current.binary && keeps(current.rel)) {
      collector.add(current.rel, plan.file ? plan.real : `${plan.real}/${current.rel}`, current.hits, current.count, current.cut);
    }
    current = null;
  };
  // rg prints each file's matches under its path: "path\0number:text" for the first, then
  // "number:text", a blank line between files. Any other line is one of rg's notes (a
  // NUL met after a match: the file is binary and dropped) or the --stats block. Lines
  // are read from the bytes, so that a kept text is its own string and not a slice
  // pinning a whole chunk of output.
  const onLine = (buf: Buffer, start: number, end: number, valid: boolean): void => {
    if (start === end) return;
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
        const note = buf.toString("utf8", start, end);
        if (note.endsWith(" files searched")) summary = true;
        const binary = /^(.*): (?:WARNING: stopped searching binary file|binary file matches)/.exec(note);
        if (binary && current !== null && current.raw === binary[1]) current.binary = true;
        return;
      }
      flush();
      const raw = buf.toString("utf8", start, z);
      current = { raw, rel: relOf(raw, plan), hits: [], count: 0, cut: false, binary: false };
      colon = buf.indexOf(58, z + 1);
      start = z + 1;
    }
    if (current === null) return;
    const ok = valid || isUtf8(buf.subarray(colon + 1, end));
    const re = ok ? compiled.jsValid : compiled.js;
    let text: string | null = null;
    if (compiled.verify) {
      text = buf.toString("utf8", colon + 1, end);
      re.lastIndex = 0;
      const hit = re.test(text);
      re.lastIndex = 0;
      if (!hit) return;
    }
    current.count++;
    if (current.hits.length >= MAX_KEPT) {
      current.cut = true;
      return;
    }
    let number = 0;
    for (let i = start; i < colon; i++) number = number * 10 + buf[i]! - 48;
    current.hits.push({ line: number, text: displayLine(text ?? buf.toString("utf8", colon + 1, end), re, true) });
  };

  let pending: Buffer | null = null;
  for await (const chunk of proc.stdout) {
    const buf: Buffer = pending ? Buffer.concat([pending, chunk]) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const last = buf.lastIndexOf(10);
    if (last === -1) {
      pending = Buffer.from(buf);
      continue;
    }
    eachLine(buf, last, onLine);
    garbage(last);
    pending = last + 1 < buf.length ? Buffer.from(buf.subarray(last + 1)) : null;
  }
  if (pending) eachLine(pending, pending.length, onLine);
  flush();
  await proc.exited;
  clearTimeout(timer);
  const errors = await stderr;
  if (!summary && !timedOut) return { timedOut, unreadable: [], failed: errors.trim() || `rg exited with code ${proc.exitCode}` };
  const unreadable: string[] = [];
  for (const line of errors.split("\n")) {
    const m = /^(?:rg: )?(.+): Permission denied \(os error 13\)$/.exec(line);
    if (!m) continue;
    const rel = relOf(m[1]!, plan);
    if (plan.file || (isFileRel(plan, rel) ? keeps(rel) : checker!.keepsDir(rel))) unreadable.push(rel);
  }
  return { timedOut, unreadable };
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
