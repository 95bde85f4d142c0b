// The ripgrep engine (its command line is rgargs.ts, its output read by rgparse.ts): rg
// walks and searches (in parallel, with its own ignore handling, which the built-in walk
// mirrors), kt reads rg's plain output with --heading and --null (leaner than --json, for
// rg and for kt) and applies what rg cannot express: .ktignore, the include glob's exact
// picomatch meaning, and dropping files in which rg met a NUL byte. Ordering, caps and
// counting are the collector's, as for the built-in engine, so both print the same bytes.
import type { Compiled } from "./regex.ts";
import { Collector, displayLine, garbage, MAX_KEPT, MAX_LINE_CHARS, mtimeOf, type Hit } from "./collect.ts";
import { PathChecker } from "./chains.ts";
import { rgArgs } from "./rgargs.ts";
import { RgOutput, type RgSink } from "./rgparse.ts";
import type { SearchOutcome, SearchPlan } from "./plan.ts";
import { realpathSync, statSync } from "node:fs";
import { searchFile } from "./searcher.ts";
import { inside } from "../core/paths.ts";
import { join } from "node:path";
import { walkBoundary, type Boundary } from "./skipped.ts";

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

interface Found {
  hits: Hit[];
  count: number;
  cut: boolean;
}

interface FileState extends Found {
  rel: string;
  binary: boolean;
  near: Found;
  /** Stat'ed when its header was read, if it was. */
  mtimeMs: number | undefined;
}

type Pass = Omit<RgOutcome, "probed" | "passes">;

/** The boundary of a plan's walk, walked once however many rg passes it takes. */
const boundaries = new WeakMap<SearchPlan, Boundary>();

async function pass(rg: string, plan: SearchPlan, compiled: Compiled, collector: Collector, probing: Probing | null): Promise<Pass | "abandoned"> {
  const { args, cwd, typed, columns } = rgArgs(plan, compiled, probing?.probe ?? null);
  const run = RgRun.start(rg, args, cwd, plan.deadline);
  if (typeof run === "string") return { timedOut: false, unreadable: [], failed: run };
  // While rg runs: the directories it will not search and those kt's rule prunes that rg
  // cannot know of (noise by evidence), from kt's walk of directories alone.
  let boundary = boundaries.get(plan);
  // With no_ignore nothing is pruned (hidden entries are not reported): no walk.
  if (!boundary && !plan.file && plan.ignores) boundaries.set(plan, (boundary = walkBoundary(plan)));
  const paths = new Paths(plan, typed, boundary?.evidence);
  const files = new Sorter(plan, paths, compiled, collector, probing);
  const output = new RgOutput(files, { columns, matches: compiled.verify ? null : (text, valid) => test(valid ? compiled.jsValid : compiled.js, text) });
  for await (const chunk of run.stdout) {
    garbage(output.push(chunk));
    if (files.probeOverrun()) {
      await run.abandon();
      return "abandoned";
    }
  }
  output.end();
  files.flush();
  const binary = plan.noteBinary ? { binary: files.binaries.sort() } : {};
  const { timedOut, panicked, errors, exitCode } = await run.finish();
  if (panicked) return { timedOut: false, unreadable: [], failed: "rg crashed: a thread panicked" };
  if (!output.summary && !timedOut) return { timedOut, unreadable: [], failed: errors.trim() || `rg exited with code ${exitCode}` };
  return { timedOut, unreadable: unreadable(errors, plan, paths), pruned: boundary?.pruned ?? [], ...binary };
}

type Rg = Bun.Subprocess<"ignore", "pipe", "pipe">;

/** rg running, killed at its deadline or as soon as it panics. */
class RgRun {
  private timedOut = false;
  private panicked = false;
  private readonly timer: Timer;
  private readonly stderr: Promise<string>;

  private constructor(
    private readonly proc: Rg,
    deadline: number,
  ) {
    this.timer = setTimeout(() => {
      this.timedOut = true;
      proc.kill("SIGKILL");
    }, Math.max(0, deadline - performance.now()));
    this.stderr = this.readStderr();
  }

  /** The running rg, or why it could not be started. */
  static start(rg: string, args: string[], cwd: string, deadline: number): RgRun | string {
    try {
      return new RgRun(Bun.spawn([rg, ...args], { cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe" }), deadline);
    } catch (error) {
      return (error as Error).message;
    }
  }

  get stdout(): ReadableStream<Uint8Array> {
    return this.proc.stdout;
  }

  /** Kills rg before its end; what it said is of no use. */
  async abandon(): Promise<void> {
    this.proc.kill("SIGKILL");
    clearTimeout(this.timer);
    await this.proc.exited;
    await this.stderr;
  }

  /** Waits for rg's end (its output read): how it ended and what it wrote to stderr. */
  async finish(): Promise<{ timedOut: boolean; panicked: boolean; errors: string; exitCode: number | null }> {
    await this.proc.exited;
    clearTimeout(this.timer);
    const errors = await this.stderr;
    return { timedOut: this.timedOut, panicked: this.panicked, errors, exitCode: this.proc.exitCode };
  }

  // Read as it comes: a panicking rg 13 (e.g. "\B$" over a file with a BOM and CRLF
  // endings) can leave its other threads waiting for ever; it is killed at once, and the
  // search falls back to the built-in engine.
  private async readStderr(): Promise<string> {
    let text = "";
    const decoder = new TextDecoder();
    for await (const chunk of this.proc.stderr) {
      text += decoder.decode(chunk, { stream: true });
      if (!this.panicked && text.includes("panicked at")) {
        this.panicked = true;
        this.proc.kill("SIGKILL");
      }
    }
    return text;
  }
}

/** Which of rg's paths kt keeps: rg cannot express .ktignore or the include glob's exact picomatch meaning. */
class Paths {
  private readonly checker: PathChecker | null;
  constructor(
    private readonly plan: SearchPlan,
    typed: boolean,
    evidence: ReadonlySet<string> = new Set(),
  ) {
    this.checker = plan.file ? null : new PathChecker(plan.real, plan.hidden && typed, plan.ignores, evidence);
  }

  keeps(rel: string): boolean {
    if (this.plan.file) return true;
    if (this.plan.match && !this.plan.match(rel)) return false;
    return this.checker!.keeps(rel);
  }

  keepsDir(rel: string): boolean {
    return this.checker!.keepsDir(rel);
  }
}

/**
 * Sorts each file's lines as rg's output is read — the pattern's, else the probe's — and
 * gives each file, once read, to its collector, unless it is binary or not kept.
 */
class Sorter implements RgSink {
  private current: FileState | null = null;
  /** A line of the pattern itself has been seen (the probe is then of no use). */
  private matched = false;
  private probeLines = 0;
  /** With plan.noteBinary: the binary files that match, which are left out. */
  readonly binaries: string[] = [];

  constructor(
    private readonly plan: SearchPlan,
    private readonly paths: Paths,
    private readonly compiled: Compiled,
    private readonly collector: Collector,
    private readonly probing: Probing | null,
  ) {}

  file(raw: string): boolean {
    this.flush();
    const rel = relOf(raw, this.plan);
    let mtimeMs: number | undefined;
    let skip = false;
    // Many matches: a file too old to keep any of its lines (Collector.beyond) is only
    // counted, its lines not even decoded.
    if (this.probing === null && !this.compiled.verify && this.collector.trimming) {
      mtimeMs = mtimeOf(this.abs(rel));
      skip = this.collector.beyond(mtimeMs, rel);
    }
    this.current = { rel, hits: [], count: 0, cut: false, binary: false, near: { hits: [], count: 0, cut: false }, mtimeMs };
    return !skip;
  }

  counted(): void {
    this.current!.count++;
    this.current!.cut = true;
  }

  binary(): void {
    this.current!.binary = true;
  }

  binaryFile(raw: string): void {
    this.flush();
    const rel = relOf(raw, this.plan);
    if (this.plan.noteBinary && this.paths.keeps(rel)) this.binaries.push(rel);
  }

  line(number: number, column: number, text: string, valid: boolean, buf: Buffer, from: number): void {
    const current = this.current!;
    const re = valid ? this.compiled.jsValid : this.compiled.js;
    if (this.probing === null) {
      // The probe searched for as the pattern (a second pass): rg's part is only a
      // necessary condition.
      if (this.compiled.verify && !test(re, text)) return;
      // The match's start in UTF-16 units, needed only to show a long line.
      const at = text.length > MAX_LINE_CHARS && column > 0 ? buf.toString("utf8", from, from + column - 1).length : undefined;
      keep(current, number, text, re, at);
      return;
    }
    // One pass for both: the line is the pattern's if the pattern matches it, else the
    // probe's if the probe (a wider pattern, checked exactly) does.
    if (test(re, text)) {
      this.matched = true;
      keep(current, number, text, re);
      return;
    }
    this.probeLines++;
    const probe = this.probing.probe;
    const near = valid ? probe.jsValid : probe.js;
    if (!probe.verify || test(near, text)) keep(current.near, number, text, near);
  }

  /** Hands the file read last to its collector. */
  flush(): void {
    const current = this.current;
    this.current = null;
    if (current !== null && current.binary && this.plan.noteBinary && this.paths.keeps(current.rel)) this.binaries.push(current.rel);
    if (current === null || current.binary || (current.count === 0 && current.near.count === 0) || !this.paths.keeps(current.rel)) return;
    const abs = this.abs(current.rel);
    if (this.plan.confine !== null) confirmed(current, abs, this.plan.confine, this.probing ? [this.compiled, this.probing.probe] : [this.compiled]);
    if (current.count > 0) this.collector.add(current.rel, abs, current.hits, current.count, current.cut, current.mtimeMs);
    else if (this.probing) this.probing.found.add(current.rel, abs, current.near.hits, current.near.count, current.near.cut);
  }

  /** Something has matched and the probe's lines have piled up: see PROBE_LINES_AFTER_MATCH. */
  probeOverrun(): boolean {
    return this.matched && this.probeLines > PROBE_LINES_AFTER_MATCH;
  }

  private abs(rel: string): string {
    return this.plan.file ? this.plan.real : `${this.plan.real}/${rel}`;
  }
}

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
function confirmed(file: FileState, abs: string, confine: string, matchers: Compiled[]): void {
  const results = searchFile(abs, matchers, confine);
  const found = Array.isArray(results) ? results[0]! : { hits: [], count: 0, cut: false };
  const near = Array.isArray(results) && results[1] ? results[1] : { hits: [], count: 0, cut: false };
  file.hits = found.hits;
  file.count = found.count;
  file.cut = found.cut;
  file.near = { hits: near.hits, count: near.count, cut: near.cut };
}

function keep(into: Found, line: number, text: string, re: RegExp, at?: number): void {
  into.count++;
  if (into.hits.length >= MAX_KEPT) into.cut = true;
  else into.hits.push({ line, text: displayLine(text, re, true, at) });
}

/** The paths of rg's "Permission denied" errors that kt would have searched. */
function unreadable(errors: string, plan: SearchPlan, paths: Paths): string[] {
  const found: string[] = [];
  for (const line of errors.split("\n")) {
    const m = /^(?:rg: )?(.+): Permission denied \(os error 13\)$/.exec(line);
    if (!m) continue;
    const rel = relOf(m[1]!, plan);
    // With a root, only a path that is inside it now: rg may have listed a directory
    // through a link swapped in for a moment, and the names there are not the root's.
    if (plan.confine !== null && !nowBelow(join(plan.real, rel), plan.confine)) continue;
    if (plan.file || (isFileRel(plan, rel) ? paths.keeps(rel) : paths.keepsDir(rel))) found.push(rel);
  }
  return found;
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

/** rg's path (relative to its working directory, plan.walkRoot) → relative to plan.real. */
function relOf(path: string, plan: SearchPlan): string {
  if (plan.file) return "";
  const rel = path.startsWith("./") ? path.slice(2) : path;
  return plan.walkRel ? `${plan.walkRel}/${rel}` : rel;
}
