// The walk behind glob: every file whose path matches the pattern, with its modification
// time (glob lists newest first), and what the zero-match hint needs to know. A kind of
// the parallel walk (parallel.ts): on a large tree it is walked by as many
// threads as there are cores, and each stats its own matches, so the stat calls, which
// cost as much as the walk, are shared too. The result does not depend on which thread
// saw what: each sorts its own list and the lists are merged, counts are summed, and the
// near names are ranked by (distance, path).
import { extname } from "node:path";
import { globTest } from "./globlang.ts";
import { distance } from "fastest-levenshtein";
import { WalkState, type WalkOptions } from "./walk.ts";
import { filesAlone, Signals, walkParallel, workerUrl, type ThreadVisitor, type WalkKind } from "./parallel.ts";
import { threadCount } from "./threads.ts";
import { mtimeOf, newestFirst } from "./collect.ts";
import type { Pruned } from "./skipped.ts";

/** What a thread needs to scan (plain data: it crosses to the worker). */
export interface GlobScanConfig {
  /** The search path's real path: unreadable directories are reported relative to it. */
  real: string;
  walkRoot: string;
  /** walkRoot relative to real ("" when the same). */
  walkRel: string;
  glob: string;
  hidden: boolean;
  noise: string[];
  /** The plan's noise by evidence, its exempt names and whether ignore files apply
   * (absent: true, none, true — the default rule). */
  evidence?: boolean;
  exempt?: string[];
  ignores?: boolean;
  /** Wall-clock (Date.now()) time after which the walk stops. */
  deadline: number;
  /** walkRoot is the process's working directory (which threads share): files are
   * stat'ed by their relative path, which the kernel resolves faster (fewer components). */
  statRelative: boolean;
  /** The plan's confine (with a root): every directory read is verified at or below it. */
  confine?: string | null;
  /** Directories whose files would lie deeper than this many "/" are not entered (see
   * fixedDepth); absent: the whole tree is walked. */
  depth?: number;
}

/** What one thread found: the result but for the thread count, which is the walk's. */
type ThreadFound = Omit<GlobScanResult, "threads">;

export interface NearName {
  rel: string;
  d: number;
}

export interface GlobScanResult {
  /** Newest first, ties by path. */
  rels: string[];
  /** Modification times, index for index with rels (0: vanished before its stat). */
  mtimes: Float64Array;
  /** Directories that could not be listed, relative to `real`. */
  unreadable: string[];
  timedOut: boolean;
  /** The zero-match hint's material, gathered while nothing had matched. */
  seen: Seen;
  /** Directories pruned at the boundary that the pattern could reach (skipped.ts). */
  pruned: Pruned;
  /** Threads of the walk (1: this one alone). */
  threads: number;
}

export interface Seen {
  /** Files a slash-less pattern matches by base name at any depth. */
  deeper: number;
  /** Extensions of files matching the pattern with its extension wildcarded. */
  near: Map<string, number>;
  /** Extensions of every file walked. */
  all: Map<string, number>;
  /** For a pattern ending in a plain file name: files within two edits of it, closest first, at most 3. */
  names: NearName[];
}

/** The pattern's last segment when it is a plain file name (no glob syntax). */
export function plainName(glob: string): string | null {
  const last = glob.slice(glob.lastIndexOf("/") + 1);
  return last !== "" && !/[*?[\]{}()!+@\\]/.test(last) ? last : null;
}

/** The pattern with its extension made a wildcard (…/*.tsx → …/*.*), for the extension hint. */
function relaxedMatcher(glob: string): ((rel: string) => boolean) | null {
  const m = /^(.*?)(\.[A-Za-z0-9_-]+|\.\{[^/{}]*\})$/.exec(glob);
  if (!m || m[1]!.endsWith("/") || m[1] === "") return null;
  return globTest(`${m[1]}.*`, { dot: true });
}

// picomatch's test for a glob on a path (dot files included), quicker for the commonest
// shapes: "**" and "**/*" match every file, and "**/NAME" (NAME without a slash) matches
// exactly the paths whose base name NAME matches.
export function globMatcher(glob: string): (rel: string) => boolean {
  if (glob === "**" || glob === "**/*") return () => true;
  const last = /^\*\*\/([^/]+)$/.exec(glob);
  if (last && !last[1]!.startsWith("!") && !last[1]!.includes("**")) {
    const name = globTest(last[1]!, { dot: true });
    return (rel) => name(rel.slice(rel.lastIndexOf("/") + 1));
  }
  return globTest(glob, { dot: true });
}

/**
 * The number of "/" in every path the pattern can match, when that is fixed: no "**", and
 * nothing that may hold a "/" of its own or stand for paths of different depths (braces,
 * extglobs, a class, an escape, a negation). Null otherwise.
 */
export function fixedDepth(glob: string): number | null {
  // A leading "!" negates the whole pattern: it matches at any depth.
  if (glob.startsWith("!") || glob.includes("**") || /[{}()\\[\]]/.test(glob)) return null;
  return slashesIn(glob);
}

/** What one thread finds. */
class GlobScan implements ThreadVisitor<ThreadFound> {
  readonly rels: string[] = [];
  private mtimes = new Float64Array(1024);
  readonly unreadable: string[] = [];
  readonly pruned: Pruned = [];
  readonly seen: Seen = { deeper: 0, near: new Map(), all: new Map(), names: [] };
  private readonly match: (rel: string) => boolean;
  private readonly deeper: ((rel: string) => boolean) | null;
  private readonly relaxed: ((rel: string) => boolean) | null;
  private readonly name: string | null;
  readonly options: WalkOptions;

  constructor(
    private readonly config: GlobScanConfig,
    private readonly signals: Signals,
  ) {
    const glob = config.glob;
    this.match = globMatcher(glob);
    this.deeper = glob.includes("/") || glob.startsWith("**") ? null : globTest(glob, { dot: true, basename: true });
    this.name = plainName(glob);
    this.relaxed = this.name ? null : relaxedMatcher(glob);
    const { walkRoot, hidden, noise, deadline, real } = config;
    this.options = {
      root: walkRoot,
      hidden,
      noise: new Set(noise),
      evidence: config.evidence ?? true,
      exempt: new Set(config.exempt ?? []),
      ignores: config.ignores ?? true,
      onPrune: (rel, why) => {
        const full = config.walkRel ? `${config.walkRel}/${rel}` : rel;
        // Only a directory the pattern would have entered is one it did not search.
        if (config.depth === undefined || slashesIn(full) + 1 <= config.depth) this.pruned.push(`${full}\0${why}`);
      },
      // This thread's clock: performance.now() differs between threads, Date.now() does not.
      deadline: performance.now() + (deadline - Date.now()),
      onUnreadable: (abs) => this.unreadable.push(abs.slice(real.length + 1)),
      ...(config.confine == null ? {} : { confine: config.confine }),
    };
  }

  readonly visit = (abs: string, rel: string, dir: boolean): WalkState => {
    const { walkRel, depth } = this.config;
    const full = walkRel ? `${walkRel}/${rel}` : rel;
    if (dir) return depth !== undefined && slashesIn(full) + 1 > depth ? WalkState.Skip : WalkState.Continue;
    if (this.match(full)) {
      const n = this.rels.length;
      if (n === this.mtimes.length) {
        const bigger = new Float64Array(n * 2);
        bigger.set(this.mtimes);
        this.mtimes = bigger;
      }
      this.mtimes[n] = mtimeOf(this.config.statRelative ? rel : abs);
      this.rels.push(full);
      if (n === 0) this.signals.hit();
      return WalkState.Continue;
    }
    // The hint is wanted only when nothing matched anywhere.
    if (this.rels.length > 0 || this.signals.hitSomewhere) return WalkState.Continue;
    const seen = this.seen;
    if (this.deeper?.(full)) seen.deeper++;
    // A plain file name gets the similar-names hint, anything else the extension hint.
    if (this.name) {
      nameNearMiss(seen, this.name, full);
      return WalkState.Continue;
    }
    const ext = extname(full);
    if (ext) {
      if (this.relaxed?.(full)) seen.near.set(ext, (seen.near.get(ext) ?? 0) + 1);
      seen.all.set(ext, (seen.all.get(ext) ?? 0) + 1);
    }
    return WalkState.Continue;
  };

  /** What this thread found, its paths sorted (each thread sorts its own). */
  finish(partial: boolean): ThreadFound {
    const mtimes = this.mtimes;
    const rels = this.rels;
    const order = Array.from({ length: rels.length }, (_, i) => i);
    order.sort((a, b) => newestFirst(mtimes[a]!, rels[a]!, mtimes[b]!, rels[b]!));
    const sorted = new Float64Array(rels.length);
    for (let i = 0; i < order.length; i++) sorted[i] = mtimes[order[i]!]!;
    return { rels: order.map((i) => rels[i]!), mtimes: sorted, unreadable: this.unreadable, timedOut: partial, seen: this.seen, pruned: this.pruned };
  }
}

function slashesIn(path: string): number {
  let n = 0;
  for (let i = path.indexOf("/"); i !== -1; i = path.indexOf("/", i + 1)) n++;
  return n;
}

/** Keeps the files whose name is within two edits of `name`, closest first, at most 3. */
function nameNearMiss(seen: Seen, name: string, rel: string): void {
  const base = rel.slice(rel.lastIndexOf("/") + 1);
  if (Math.abs(base.length - name.length) > 2) return;
  // A cheap filter before the distance: a near name keeps its first or its last character.
  const first = base.charCodeAt(0) | 32;
  const last = base.charCodeAt(base.length - 1) | 32;
  if (first !== (name.charCodeAt(0) | 32) && last !== (name.charCodeAt(name.length - 1) | 32)) return;
  const d = distance(base.toLowerCase(), name.toLowerCase());
  if (d <= 2) keepNearest(seen.names, { rel, d });
}

function byDistance(a: NearName, b: NearName): number {
  return a.d - b.d || (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0);
}

function keepNearest(names: NearName[], candidate: NearName): void {
  const third = names[2];
  if (third && byDistance(candidate, third) >= 0) return;
  names.push(candidate);
  names.sort(byDistance);
  if (names.length > 3) names.pop();
}

/** Folds another thread's result into `into` (which then stands for both): the two
 * sorted lists merged. */
function merge(into: ThreadFound, other: ThreadFound): ThreadFound {
  const n = into.rels.length + other.rels.length;
  const rels: string[] = new Array(n);
  const mtimes = new Float64Array(n);
  let i = 0;
  let j = 0;
  for (let k = 0; k < n; k++) {
    if (j >= other.rels.length || (i < into.rels.length && newestFirst(into.mtimes[i]!, into.rels[i]!, other.mtimes[j]!, other.rels[j]!) < 0)) {
      rels[k] = into.rels[i]!;
      mtimes[k] = into.mtimes[i++]!;
    } else {
      rels[k] = other.rels[j]!;
      mtimes[k] = other.mtimes[j++]!;
    }
  }
  const seen = into.seen;
  seen.deeper += other.seen.deeper;
  for (const [ext, n] of other.seen.near) seen.near.set(ext, (seen.near.get(ext) ?? 0) + n);
  for (const [ext, n] of other.seen.all) seen.all.set(ext, (seen.all.get(ext) ?? 0) + n);
  for (const name of other.seen.names) keepNearest(seen.names, name);
  return {
    rels,
    mtimes,
    unreadable: into.unreadable.concat(other.unreadable),
    timedOut: into.timedOut || other.timedOut,
    seen,
    pruned: into.pruned.concat(other.pruned),
  };
}

/** The found paths cross threads as one "\0"-joined string: far cheaper than an array of
 * strings. */
interface WireResult extends Omit<ThreadFound, "rels"> {
  rels: string;
  count: number;
}

export const globWalk: WalkKind<GlobScanConfig, ThreadFound> = {
  name: "glob",
  visitor: (config, signals) => new GlobScan(config, signals),
  pack: (r): WireResult => ({ ...r, rels: r.rels.join("\0"), count: r.rels.length }),
  unpack: (packed) => {
    const w = packed as WireResult;
    return { ...w, rels: w.count === 0 ? [] : w.rels.split("\0") };
  },
};

/** Walks the tree for `config`, with helper threads on a large tree; `url`: their script
 * (tests give others), null for this thread alone. */
export async function scanGlob(config: GlobScanConfig, url: string | null = workerUrl()): Promise<GlobScanResult> {
  // A pattern of fixed depth ("*.json", "src/*/index.ts") leaves deeper directories unread;
  // when it matches nothing, the whole tree is walked after all, for the hint.
  const depth = fixedDepth(config.glob);
  if (depth !== null) {
    const shallow = await scanOnce({ ...config, depth }, url);
    if (shallow.rels.length > 0 || shallow.timedOut) return shallow;
    // What the pattern could not search is the shallow walk's boundary, not the hint's.
    return { ...(await scanOnce(config, url)), pruned: shallow.pruned };
  }
  return scanOnce(config, url);
}

async function scanOnce(config: GlobScanConfig, url: string | null): Promise<GlobScanResult> {
  const { found, threads } = await walkParallel(globWalk, config, filesAlone(process.env.KT_GLOB_PARALLEL_AFTER), threadCount(), url);
  return { ...found.reduce(merge), threads };
}
