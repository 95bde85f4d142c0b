// The ripgrep engine: rg walks and searches (in parallel, with its own ignore handling,
// which the built-in walk mirrors), kt reads rg's "path\0line:text" output (leaner
// than --json for rg and for kt) and applies what rg cannot
// express: .ktignore, the include glob's exact picomatch meaning, and dropping files in
// which rg met a NUL byte. Ordering, caps and counting are the collector's, as for the
// built-in engine, so both print the same bytes.
import type { Compiled } from "./regex.ts";
import { Collector, displayLine, garbage, MAX_KEPT, own, type Hit } from "./collect.ts";
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
  const args = ["--no-heading", "-n", "-H", "--null", "--color=never", "--stats", "--no-config", "--no-ignore-global", "--no-mmap", "--crlf", compiled.caseInsensitive ? "-i" : "-s"];
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
  const checker = plan.file ? null : new PathChecker(plan.real);
  const keeps = (rel: string): boolean => {
    if (plan.file) return true;
    if (plan.match && !plan.match(rel)) return false;
    return checker!.keeps(rel, plan.hidden && typed);
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
    if (current !== null && !current.binary && keeps(current.rel)) {
      collector.add(current.rel, plan.file ? plan.real : join(plan.real, current.rel), current.hits, current.count, current.cut);
    }
    current = null;
  };
  // "path\0line:text" per match, a file's lines together; any other line is one of rg's
  // notes (a NUL met after a match: the file is binary and dropped) or the --stats block.
  const onLine = (line: string, valid: boolean): void => {
    const z = line.indexOf("\0");
    if (z === -1) {
      if (line.endsWith(" files searched")) summary = true;
      const binary = /^(.*): (?:WARNING: stopped searching binary file|binary file matches)/.exec(line);
      if (binary && current !== null && current.raw === binary[1]) current.binary = true;
      return;
    }
    const raw = line.slice(0, z);
    if (current === null || current.raw !== raw) {
      flush();
      // An own copy: the checker's cache keys are cut from rel, and a slice of the
      // decoded output would keep that whole output chunk alive.
      current = { raw, rel: own(relOf(raw, plan)), hits: [], count: 0, cut: false, binary: false };
    }
    current.count++;
    if (current.hits.length >= MAX_KEPT) {
      current.cut = true;
      return;
    }
    const colon = line.indexOf(":", z + 1);
    current.hits.push({ line: Number(line.slice(z + 1, colon)), text: displayLine(line.slice(colon + 1), valid ? compiled.jsValid : compiled.js) });
  };

  let pending: Buffer | null = null;
  for await (const chunk of proc.stdout) {
    const buf: Buffer = pending ? Buffer.concat([pending, chunk]) : Buffer.from(chunk);
    const last = buf.lastIndexOf(10);
    if (last === -1) {
      pending = buf;
      continue;
    }
    lines(buf.subarray(0, last), onLine);
    garbage(last);
    pending = last + 1 < buf.length ? Buffer.from(buf.subarray(last + 1)) : null;
  }
  if (pending) lines(pending, onLine);
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

/** Calls `onLine` for each line of `bytes`, saying whether it is valid UTF-8. */
function lines(bytes: Buffer, onLine: (line: string, valid: boolean) => void): void {
  if (isUtf8(bytes)) {
    const text = bytes.toString("utf8");
    let start = 0;
    for (let nl = text.indexOf("\n"); nl !== -1; nl = text.indexOf("\n", start)) {
      onLine(text.slice(start, nl), true);
      start = nl + 1;
    }
    onLine(text.slice(start), true);
    return;
  }
  let start = 0;
  for (;;) {
    const nl = bytes.indexOf(10, start);
    const line = bytes.subarray(start, nl === -1 ? bytes.length : nl);
    onLine(line.toString("utf8"), isUtf8(line));
    if (nl === -1) return;
    start = nl + 1;
  }
}

/** rg's path (relative to its working directory, plan.walkRoot) → relative to plan.real. */
function relOf(path: string, plan: SearchPlan): string {
  if (plan.file) return "";
  const rel = path.startsWith("./") ? path.slice(2) : path;
  return plan.walkRel ? `${plan.walkRel}/${rel}` : rel;
}
