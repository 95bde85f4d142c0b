// The built-in grep engine: grep's kind of the parallel walk (parallel.ts), in which
// every thread searches the files it walks (searcher.ts) into its own collector, and the
// collectors are merged at the end (the result does not depend on which thread searched
// what: see Collector.merge).
import { relative } from "node:path";
import type { Compiled } from "./regex.ts";
import { Collector, type FileHits, type Hit, type Snapshot } from "./collect.ts";
import { WalkState, type WalkOptions } from "./walk.ts";
import { filesAlone, walkParallel, type Signals, type ThreadVisitor, type WalkKind } from "./parallel.ts";
import { fileFilter, type SearchOutcome, type SearchPlan } from "./plan.ts";
import { matcherSpec, reviveMatcher, searchInto, type Lost, type Matcher, type MatcherSpec } from "./searcher.ts";
import { pruneRecorder, type Pruned } from "./skipped.ts";
import { belowTopTier } from "./tiers.ts";
import { matcherOf, takeStaged, work, type Left, type Matcher as Replacer, type ReplaceSpec, type Worked } from "./rewrite.ts";
import type { StagedTemp } from "../core/temp.ts";

export interface BuiltinRun {
  collector: Collector;
  outcome: SearchOutcome;
  /** Threads that searched (1: this one alone). */
  threads: number;
  /** What the near-miss probe found, searched in the same pass while nothing matched;
   * null when something matched (or no probe was given). */
  probed: Collector | null;
  /** A replace's changes, worked out by the threads that found the pattern (SearchPlan.replace), in no order. */
  worked: Worked[];
}

/**
 * Searches the plan's files, on a large tree with helper threads too (parallel.ts: each
 * walks part of the tree and searches what it walks). With a `probe` (the near-miss
 * pattern), each file is also searched for it from the same read for as long as nothing
 * has matched anywhere, so that a search with no match has its hint without a second
 * pass over the tree.
 */
export async function searchBuiltin(plan: SearchPlan, compiled: Compiled, probe: Compiled | null = null): Promise<BuiltinRun> {
  if (plan.file) {
    const collector = new Collector();
    const lost: Lost = { unreadable: [], skipped: [], ...(plan.noteBinary ? { binary: [] } : {}) };
    const probed = probe ? new Collector() : null;
    const matched = searchInto(plan.real, "", probe ? [compiled, probe] : [compiled], collector, probed, lost, plan.confine);
    return { collector, outcome: { timedOut: false, ...lost }, threads: 1, probed: matched ? null : probed, worked: [] };
  }
  const { found, threads } = await walkParallel(grepWalk, grepWalkConfig(plan, compiled, probe), filesAlone(process.env.KT_GREP_PARALLEL_AFTER));
  const collector = new Collector();
  for (const part of found) collector.merge(part.snapshot);
  // No thread retires its probe unless something matched somewhere.
  let probed: Collector | null = null;
  if (probe && collector.lines === 0) {
    probed = new Collector();
    for (const part of found) if (part.probed) probed.merge(part.probed);
  }
  const outcome = {
    timedOut: found.some((part) => part.timedOut),
    unreadable: found.flatMap((part) => part.unreadable),
    skipped: found.flatMap((part) => part.skipped),
    pruned: found.flatMap((part) => part.pruned),
    ...(plan.noteBinary ? { binary: found.flatMap((part) => part.binary ?? []).sort() } : {}),
  };
  return { collector, outcome, threads, probed, worked: found.flatMap((part) => part.worked) };
}

export function grepWalkConfig(plan: SearchPlan, compiled: Compiled, probe: Compiled | null): GrepWalkConfig {
  return {
    pattern: matcherSpec(compiled),
    probe: probe ? matcherSpec(probe) : null,
    real: plan.real,
    walkRoot: plan.walkRoot,
    walkRel: plan.walkRel,
    hidden: plan.hidden,
    noise: [...plan.noise],
    evidence: plan.evidence,
    exempt: [...plan.exempt],
    ignores: plan.ignores,
    glob: plan.glob,
    basename: plan.basename,
    types: plan.types,
    confine: plan.confine,
    noteBinary: plan.noteBinary === true,
    replace: plan.replace ?? null,
    stage: plan.replace && plan.stage !== undefined ? plan.stage : null,
    deadline: Date.now() + (plan.deadline - performance.now()),
  };
}

/** What a grep thread needs (plain data: it crosses to helper threads). */
export interface GrepWalkConfig {
  pattern: MatcherSpec;
  /** The near-miss probe, searched alongside until anything matches anywhere. */
  probe: MatcherSpec | null;
  real: string;
  walkRoot: string;
  walkRel: string;
  hidden: boolean;
  noise: string[];
  evidence: boolean;
  exempt: string[];
  ignores: boolean;
  glob: string | null;
  basename: boolean;
  types: readonly string[] | null;
  confine: string | null;
  /** Binary files the pattern matches are named (SearchPlan.noteBinary). */
  noteBinary: boolean;
  /** A replace's change of each file the pattern is found in is worked out as it is found (SearchPlan.replace). */
  replace: ReplaceSpec | null;
  /** The token the threads' temp files of a replace are registered under (SearchPlan.stage); null: none written. */
  stage: string | null;
  /** Wall-clock (Date.now()) time: each thread has its own performance.now(). */
  deadline: number;
}

/** What one thread found. */
export interface GrepFound extends Lost {
  snapshot: Snapshot;
  /** The probe's findings; null when this thread retired it (something matched). */
  probed: Snapshot | null;
  timedOut: boolean;
  pruned: Pruned;
  worked: Worked[];
}

/** One thread's search: each file the walk gives it that passes the filter is searched. */
class GrepThread implements ThreadVisitor<GrepFound> {
  readonly options: WalkOptions & { deadline: number };
  private readonly collector = new Collector();
  private probed: Collector | null;
  private readonly lost: Lost;
  private readonly pruned: Pruned = [];
  private readonly alone: Matcher[];
  private readonly both: Matcher[];
  private readonly match: SearchPlan["match"];
  private readonly replacer: Replacer | null;
  private readonly worked: Worked[] = [];
  private timedOut = false;

  constructor(
    private readonly config: GrepWalkConfig,
    private readonly signals: Signals,
  ) {
    this.lost = { unreadable: [], skipped: [], ...(config.noteBinary ? { binary: [] } : {}) };
    const pattern = reviveMatcher(config.pattern);
    this.alone = [pattern];
    this.both = config.probe ? [pattern, reviveMatcher(config.probe)] : this.alone;
    this.probed = config.probe ? new Collector() : null;
    this.match = fileFilter(config.glob, config.basename, config.types);
    this.replacer = config.replace ? matcherOf(config.replace) : null;
    this.options = {
      root: config.walkRoot,
      hidden: config.hidden,
      noise: new Set(config.noise),
      evidence: config.evidence,
      exempt: new Set(config.exempt),
      ignores: config.ignores,
      onPrune: pruneRecorder(this.pruned, config.walkRel),
      // The deadline on this thread's clock (the walk reads it here), moved on by the time a
      // replace spends on the files it found.
      deadline: performance.now() + (config.deadline - Date.now()),
      onUnreadable: (abs) => this.lost.unreadable.push(relative(config.real, abs)),
      ...(config.confine === null ? {} : { confine: config.confine }),
    };
    belowTopTier(this.visit);
  }

  readonly visit = (abs: string, rel: string, dir: boolean): WalkState => {
    if (dir) return WalkState.Continue;
    const { walkRel, confine } = this.config;
    const full = walkRel ? `${walkRel}/${rel}` : rel;
    if (this.match && !this.match(full)) return WalkState.Continue;
    if (this.probed && this.signals.hitSomewhere) this.probed = null;
    if (searchInto(abs, full, this.probed ? this.both : this.alone, this.collector, this.probed, this.lost, confine)) {
      this.probed = null;
      this.signals.hit();
      if (this.replacer) {
        // The time limit is on finding the files to change, not on changing them: reading a
        // found file whole, working out its change and writing its temp file (slow where
        // creating a file is) move the deadline on, as the commit that writes them has none.
        const started = performance.now();
        const worked = work(abs, full, this.replacer, confine, this.config.stage);
        if (worked) this.worked.push(worked);
        this.options.deadline += performance.now() - started;
      }
    }
    if (performance.now() <= this.options.deadline) return WalkState.Continue;
    this.timedOut = true;
    return WalkState.Quit;
  };

  finish(partial: boolean): GrepFound {
    // A helper's temp files are in its answer: its own list of them is done with (the tool's
    // thread keeps its list until the tool takes it, search/rewrite.ts).
    if (this.config.stage !== null && !Bun.isMainThread) takeStaged(this.config.stage);
    return { snapshot: this.collector.snapshot(), probed: this.probed?.snapshot() ?? null, ...this.lost, timedOut: partial || this.timedOut, pruned: this.pruned, worked: this.worked };
  }
}

/** grep's kind of the parallel walk. Reading a file costs far more than listing it, so
 * large directories are shared in small slices, and helpers start after 8 ms alone
 * rather than ALONE_MS: a tree of tens of files is done sooner and never pays for a
 * thread, and on a larger one the helper is up sooner, sharing a walk that the first
 * files (cold) make slow. */
export const grepWalk: WalkKind<GrepWalkConfig, GrepFound> = {
  name: "grep",
  slice: 64,
  aloneMs: 8,
  visitor: (config, signals) => new GrepThread(config, signals),
  pack: packFound,
  unpack: (packed) => unpackFound(packed as PackedFound),
  transfer: (packed) => [(packed as PackedFound).bytes.buffer as ArrayBuffer],
};

/**
 * A helper's findings as they cross to this thread: every string in one (`text`), and
 * every number and length in one Float64Array, in the order packFound writes them. A
 * structured clone of the same findings as objects (a FileHits and a Hit per line) is
 * made and read again object by object, while the search waits for it: a common
 * pattern's 20,000 kept lines took 15-20 ms to send and 4-9 ms to receive.
 */
interface PackedFound {
  text: string;
  numbers: Float64Array;
  /** The bytes of every change worked out (previous, then next, file by file), given to this thread rather than copied. */
  bytes: Uint8Array;
}

/** A change's reason to be left out, as packed (its index + 1; 0 is a change made). */
const LEFT: readonly Left[] = ["binary", "notUtf8", "tooLarge", "unchanged"];

class Packer {
  readonly parts: string[] = [];
  readonly numbers: number[] = [];

  string(s: string): void {
    this.parts.push(s);
    this.numbers.push(s.length);
  }

  strings(list: readonly string[]): void {
    this.numbers.push(list.length);
    for (const s of list) this.string(s);
  }

  /** The changes' paths and figures; their bytes in one array, returned. */
  worked(list: readonly Worked[]): Uint8Array {
    this.numbers.push(list.length);
    let size = 0;
    for (const w of list) if ("previous" in w.change) size += w.change.previous.length + w.change.next.length;
    const bytes = new Uint8Array(size);
    let at = 0;
    for (const w of list) {
      this.string(w.rel);
      this.string(w.abs);
      const c = w.change;
      if ("left" in c) {
        this.numbers.push(LEFT.indexOf(c.left) + 1);
        continue;
      }
      this.numbers.push(0, c.replacements, c.counts ? 1 : 0, c.counts?.added ?? 0, c.counts?.removed ?? 0, c.previous.length, c.next.length);
      this.string(c.previousSha);
      this.string(c.nextSha);
      const t = c.temp;
      if (t) {
        this.numbers.push(1, t.dev, t.ino, t.mtimeMs, t.size);
        this.string(t.path);
      } else this.numbers.push(0);
      bytes.set(c.previous, at);
      bytes.set(c.next, at + c.previous.length);
      at += c.previous.length + c.next.length;
    }
    return bytes;
  }

  snapshot(snap: Snapshot): void {
    this.numbers.push(snap.counted, snap.lines, snap.evicted ? 1 : 0, snap.files.length);
    for (const file of snap.files) {
      this.string(file.rel);
      this.numbers.push(file.mtimeMs, file.count, file.cut ? 1 : 0, file.hits.length);
      for (const hit of file.hits) {
        this.numbers.push(hit.line);
        this.string(hit.text);
      }
    }
  }
}

function packFound(found: GrepFound): PackedFound {
  const packer = new Packer();
  packer.numbers.push(found.timedOut ? 1 : 0, found.probed ? 1 : 0, found.binary ? 1 : 0);
  packer.snapshot(found.snapshot);
  if (found.probed) packer.snapshot(found.probed);
  packer.strings(found.unreadable);
  packer.strings(found.skipped);
  if (found.binary) packer.strings(found.binary);
  packer.strings(found.pruned);
  const bytes = packer.worked(found.worked);
  return { text: packer.parts.join(""), numbers: new Float64Array(packer.numbers), bytes };
}

/** Reads back what packFound wrote. The strings are slices of one: what the merge keeps
 * of it keeps it whole, no more than the helper held. */
class Unpacker {
  private at = 0;
  private char = 0;

  constructor(private readonly packed: PackedFound) {}

  number(): number {
    return this.packed.numbers[this.at++]!;
  }

  string(): string {
    const start = this.char;
    this.char += this.number();
    return this.packed.text.slice(start, this.char);
  }

  strings(): string[] {
    const list: string[] = [];
    for (let n = this.number(); n > 0; n--) list.push(this.string());
    return list;
  }

  worked(bytes: Uint8Array): Worked[] {
    const list: Worked[] = [];
    let at = 0;
    for (let n = this.number(); n > 0; n--) {
      const rel = this.string();
      const abs = this.string();
      const kind = this.number();
      if (kind > 0) {
        list.push({ rel, abs, change: { left: LEFT[kind - 1]! } });
        continue;
      }
      const replacements = this.number();
      const counted = this.number() === 1;
      const added = this.number();
      const removed = this.number();
      const previousLength = this.number();
      const nextLength = this.number();
      const previousSha = this.string();
      const nextSha = this.string();
      let temp: StagedTemp | undefined;
      if (this.number() === 1) {
        const [dev, ino, mtimeMs, size] = [this.number(), this.number(), this.number(), this.number()];
        temp = { dev, ino, mtimeMs, size, path: this.string() };
      }
      const previous = bytes.subarray(at, at + previousLength);
      const next = bytes.subarray(at + previousLength, at + previousLength + nextLength);
      at += previousLength + nextLength;
      list.push({ rel, abs, change: { previous, next, replacements, counts: counted ? { added, removed } : undefined, previousSha, nextSha, ...(temp ? { temp } : {}) } });
    }
    return list;
  }

  snapshot(): Snapshot {
    const counted = this.number();
    const lines = this.number();
    const evicted = this.number() === 1;
    const files: FileHits[] = [];
    for (let n = this.number(); n > 0; n--) {
      const rel = this.string();
      const mtimeMs = this.number();
      const count = this.number();
      const cut = this.number() === 1;
      const hits: Hit[] = [];
      for (let h = this.number(); h > 0; h--) {
        const line = this.number();
        hits.push({ line, text: this.string() });
      }
      files.push({ rel, mtimeMs, count, hits, cut });
    }
    return { files, counted, lines, evicted };
  }
}

function unpackFound(packed: PackedFound): GrepFound {
  const u = new Unpacker(packed);
  const timedOut = u.number() === 1;
  const hasProbed = u.number() === 1;
  const hasBinary = u.number() === 1;
  const snapshot = u.snapshot();
  const probed = hasProbed ? u.snapshot() : null;
  const unreadable = u.strings();
  const skipped = u.strings();
  const binary = hasBinary ? u.strings() : undefined;
  const pruned = u.strings();
  const worked = u.worked(packed.bytes);
  return { snapshot, probed, unreadable, skipped, ...(binary ? { binary } : {}), timedOut, pruned, worked };
}

