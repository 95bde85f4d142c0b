// The walk behind glob: every file whose path matches the pattern, with its modification
// time (glob lists newest first), and what the zero-match hint needs to know. A large
// tree is walked by as many threads as there are cores sharing one walk: this one
// starts, and past a thousand files each idle helper thread (worker.ts) is given half
// the directories still to be read here (a very large directory waits in slices of
// files, which go the same way); when this thread runs out, it takes half of a busy
// helper's. Each stats its own matches, so the stat calls,
// which cost as much as the walk, are shared too. The result does not depend on which
// thread saw what: each sorts its own list and the two are merged, counts are summed,
// and the near names are ranked by (distance, path).
import { extname } from "node:path";
import { globTest } from "./globlang.ts";
import { distance } from "fastest-levenshtein";
import { Walker, type DirRef, type WalkOptions } from "./walk.ts";
import { workerUrl } from "./pool.ts";
import { threadCount } from "./threads.ts";
import { mtimeOf, newestFirst } from "./collect.ts";

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
  /** Wall-clock (Date.now()) time after which the walk stops. */
  deadline: number;
  /** walkRoot is the process's working directory (which threads share): files are
   * stat'ed by their relative path, which the kernel resolves faster (fewer components). */
  statRelative: boolean;
  /** The plan's confine (with a root): every directory read is verified at or below it. */
  confine?: string | null;
}

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
  /** Threads that walked (1: this one alone). */
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

/** Files walked on this thread alone before a worker is started; KT_GLOB_PARALLEL_AFTER
 * exists for tests only. */
function parallelAfter(): number {
  const raw = Number(process.env.KT_GLOB_PARALLEL_AFTER);
  return Number.isFinite(raw) && raw >= 0 ? raw : 1000;
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

/** What one thread finds. */
export class GlobScan {
  readonly rels: string[] = [];
  private mtimes = new Float64Array(1024);
  readonly unreadable: string[] = [];
  timedOut = false;
  readonly seen: Seen = { deeper: 0, near: new Map(), all: new Map(), names: [] };
  private readonly match: (rel: string) => boolean;
  private readonly deeper: ((rel: string) => boolean) | null;
  private readonly relaxed: ((rel: string) => boolean) | null;
  private readonly name: string | null;
  /** Files walked, matching or not. */
  walked = 0;

  constructor(private readonly config: GlobScanConfig) {
    const glob = config.glob;
    this.match = globMatcher(glob);
    this.deeper = glob.includes("/") || glob.startsWith("**") ? null : globTest(glob, { dot: true, basename: true });
    this.name = plainName(glob);
    this.relaxed = this.name ? null : relaxedMatcher(glob);
  }

  walkOptions(): WalkOptions {
    const { walkRoot, hidden, noise, deadline, real } = this.config;
    return {
      root: walkRoot,
      hidden,
      noise: new Set(noise),
      // This thread's clock: performance.now() differs between threads, Date.now() does not.
      deadline: performance.now() + (deadline - Date.now()),
      onUnreadable: (abs) => this.unreadable.push(abs.slice(real.length + 1)),
      ...(this.config.confine == null ? {} : { confine: this.config.confine }),
    };
  }

  readonly visit = (abs: string, rel: string): void => {
    this.walked++;
    const { walkRel } = this.config;
    const full = walkRel ? `${walkRel}/${rel}` : rel;
    if (this.match(full)) {
      const n = this.rels.length;
      if (n === this.mtimes.length) {
        const bigger = new Float64Array(n * 2);
        bigger.set(this.mtimes);
        this.mtimes = bigger;
      }
      this.mtimes[n] = mtimeOf(this.config.statRelative ? rel : abs);
      this.rels.push(full);
      return;
    }
    if (this.rels.length > 0) return;
    const seen = this.seen;
    if (this.deeper?.(full)) seen.deeper++;
    // A plain file name gets the similar-names hint, anything else the extension hint.
    if (this.name) {
      nameNearMiss(seen, this.name, full);
      return;
    }
    const ext = extname(full);
    if (ext) {
      if (this.relaxed?.(full)) seen.near.set(ext, (seen.near.get(ext) ?? 0) + 1);
      seen.all.set(ext, (seen.all.get(ext) ?? 0) + 1);
    }
  };

  /** What this thread found, its paths sorted (each thread sorts its own). */
  result(): GlobScanResult {
    const mtimes = this.mtimes;
    const rels = this.rels;
    const order = Array.from({ length: rels.length }, (_, i) => i);
    order.sort((a, b) => newestFirst(mtimes[a]!, rels[a]!, mtimes[b]!, rels[b]!));
    const sorted = new Float64Array(rels.length);
    for (let i = 0; i < order.length; i++) sorted[i] = mtimes[order[i]!]!;
    return { rels: order.map((i) => rels[i]!), mtimes: sorted, unreadable: this.unreadable, timedOut: this.timedOut, seen: this.seen, threads: 1 };
  }
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
function merge(into: GlobScanResult, other: GlobScanResult): GlobScanResult {
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
    threads: into.threads + other.threads,
  };
}

/** Messages between this thread and the glob worker (worker.ts). The found paths cross
 * as one "\0"-joined string: far cheaper than an array of strings. Whether the
 * worker is busy, and a request for its directories, go through shared memory instead
 * (see SharedState): a thread busy walking does not get to read its messages. */
export type GlobRequest =
  | { type: "glob"; config: GlobScanConfig; shared: SharedArrayBuffer }
  | { type: "glob-dirs"; dirs: DirRef[] }
  | { type: "glob-finish" };

export type GlobReply = { type: "glob-stolen"; dirs: DirRef[] } | { type: "glob-result"; result: WireResult };

/**
 * The word both threads share (index STATE of an Int32Array over the shared buffer):
 * RUNNING while the worker walks, IDLE when it has nothing left, STEAL when this thread
 * asks for half of its directories. Every STEAL that replaced RUNNING is answered with
 * exactly one "glob-stolen" (empty when the worker ran out first). STOP (index STOP) set
 * to 1 makes the worker stop walking (the time limit).
 */
export const SharedState = { STATE: 0, STOP: 1, RUNNING: 0, IDLE: 1, STEAL: 2 } as const;

export interface WireResult {
  rels: string;
  count: number;
  mtimes: Float64Array;
  unreadable: string[];
  timedOut: boolean;
  deeper: number;
  near: [string, number][];
  all: [string, number][];
  names: NearName[];
}

export function toWire(r: GlobScanResult): WireResult {
  return {
    rels: r.rels.join("\0"),
    count: r.rels.length,
    mtimes: r.mtimes,
    unreadable: r.unreadable,
    timedOut: r.timedOut,
    deeper: r.seen.deeper,
    near: [...r.seen.near],
    all: [...r.seen.all],
    names: r.seen.names,
  };
}

function fromWire(w: WireResult): GlobScanResult {
  return {
    rels: w.count === 0 ? [] : w.rels.split("\0"),
    mtimes: w.mtimes,
    unreadable: w.unreadable,
    timedOut: w.timedOut,
    seen: { deeper: w.deeper, near: new Map(w.near), all: new Map(w.all), names: w.names },
    threads: 1,
  };
}

/** A worker thread failed: the scan is run again on this thread alone. */
class HelperFailure extends Error {}

/** The worker's side of the shared walk, as this thread sees it. */
class Helper {
  private replies: GlobReply[] = [];
  private wake: (() => void) | null = null;
  private failure: string | null = null;
  private readonly shared = new Int32Array(new SharedArrayBuffer(8));

  private constructor(private readonly worker: Worker) {
    Atomics.store(this.shared, SharedState.STATE, SharedState.IDLE);
    worker.onmessage = (event: MessageEvent<GlobReply>) => {
      this.replies.push(event.data);
      this.poke();
    };
    worker.onerror = (event) => {
      this.failure ??= event.message || "a glob thread failed";
      this.poke();
    };
    // A thread that ends before its result is in (it is terminated only after): failed.
    worker.addEventListener("close", () => {
      if (!this.replies.some((r) => r.type === "glob-result")) this.failure ??= "a glob thread ended early";
      this.poke();
    });
  }

  static start(config: GlobScanConfig, url: string): Helper | null {
    try {
      const helper = new Helper(new Worker(url));
      helper.worker.postMessage({ type: "glob", config, shared: helper.shared.buffer as SharedArrayBuffer } satisfies GlobRequest);
      return helper;
    } catch {
      return null;
    }
  }

  /** The worker has no directories left (or was never given any). */
  get idle(): boolean {
    if (this.failure) throw new HelperFailure(this.failure);
    return Atomics.load(this.shared, SharedState.STATE) === SharedState.IDLE;
  }

  private poke(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  /** Waits for the next message from the worker. */
  private async next(): Promise<void> {
    if (this.failure) throw new HelperFailure(this.failure);
    await new Promise<void>((resolve) => {
      this.wake = resolve;
    });
    if (this.failure) throw new HelperFailure(this.failure);
  }

  private async reply<T extends GlobReply["type"]>(type: T): Promise<Extract<GlobReply, { type: T }>> {
    for (;;) {
      const at = this.replies.findIndex((r) => r.type === type);
      if (at !== -1) return this.replies.splice(at, 1)[0] as Extract<GlobReply, { type: T }>;
      await this.next();
    }
  }

  /** Hands directories to the idle worker. */
  give(dirs: DirRef[]): void {
    Atomics.store(this.shared, SharedState.STATE, SharedState.RUNNING);
    this.worker.postMessage({ type: "glob-dirs", dirs } satisfies GlobRequest);
  }

  /** Half of the worker's unread directories (none when it has fewer than two, or has
   * run out meanwhile). */
  async steal(): Promise<DirRef[]> {
    if (Atomics.compareExchange(this.shared, SharedState.STATE, SharedState.RUNNING, SharedState.STEAL) !== SharedState.RUNNING) return [];
    return (await this.reply("glob-stolen")).dirs;
  }

  /** Waits a moment (the worker is walking the last of the directories). */
  async pause(): Promise<void> {
    await Bun.sleep(1);
    if (this.failure) throw new HelperFailure(this.failure);
  }

  /** Stops the worker (wherever it is) and takes what it found. */
  async finish(): Promise<GlobScanResult> {
    try {
      Atomics.store(this.shared, SharedState.STOP, 1);
      this.worker.postMessage({ type: "glob-finish" } satisfies GlobRequest);
      return fromWire((await this.reply("glob-result")).result);
    } finally {
      this.worker.terminate();
    }
  }

  terminate(): void {
    this.worker.terminate();
  }
}

/** Walks the tree for `config`, with a worker thread on a large tree. */
export async function scanGlob(config: GlobScanConfig, url = workerUrl()): Promise<GlobScanResult> {
  try {
    return await scan(config, url);
  } catch (error) {
    if (!(error instanceof HelperFailure)) throw error;
    return scan(config, null);
  }
}

/** `url`: the worker script (tests give others); null: this thread alone. This thread
 * walks and hands out work: an idle helper is given half of what is left here, and when
 * this thread runs out it takes half of a busy helper's. */
async function scan(config: GlobScanConfig, url: string | null): Promise<GlobScanResult> {
  const own = new GlobScan(config);
  const walker = new Walker(own.walkOptions());
  const after = parallelAfter();
  const wanted = url === null ? 0 : threadCount() - 1;
  let helpers: Helper[] = [];
  let tried = wanted < 1;
  try {
    for (;;) {
      if (walker.pending > 0) {
        // Small steps (a slice of a large directory counts as one), so that a helper gone
        // idle is soon given more, and a small tree (in tests) still has directories
        // left to share when a helper is asked for.
        const ended = walker.step(own.visit, 4);
        if (ended?.timedOut) {
          own.timedOut = true;
          break;
        }
      }
      if (!tried && own.walked >= after && walker.pending >= 2) {
        tried = true;
        for (let i = 0; i < wanted; i++) {
          const helper = Helper.start(config, url!);
          if (helper) helpers.push(helper);
        }
      }
      if (helpers.length === 0) {
        if (walker.pending === 0) break;
        continue;
      }
      for (const helper of helpers) if (walker.pending >= 2 && helper.idle) helper.give(walker.split());
      if (walker.pending > 0) continue;
      // Nothing left here: take half of a busy helper's, or wait for the last to finish.
      const busy = helpers.filter((h) => !h.idle);
      if (busy.length === 0) break;
      let stolen: DirRef[] = [];
      for (const helper of busy) {
        stolen = await helper.steal();
        if (stolen.length > 0) break;
      }
      if (stolen.length > 0) walker.add(stolen);
      else await busy[0]!.pause();
    }
    if (helpers.length === 0) return own.result();
    // Every thread sorts its own paths at the same time; then the merges.
    const finishing = helpers.map((h) => h.finish());
    helpers = [];
    let merged = own.result();
    for (const other of await Promise.all(finishing)) merged = merge(merged, other);
    return merged;
  } finally {
    for (const helper of helpers) helper.terminate();
  }
}
