// Worker threads for the built-in engine on large trees. The walk stays on the main
// thread and hands files out in batches; each worker searches them with its own
// collector, and the collectors are merged at the end (the result does not depend on
// which thread searched what: see Collector.merge). At most IN_FLIGHT batches wait at a
// worker and at most MAX_BACKLOG files at the walk, so memory does not grow with the tree.
// Any failure of a worker is reported as a PoolFailure: the caller searches again alone.
import type { Matcher } from "./builtin.ts";
import type { Snapshot } from "./collect.ts";

const BATCH = 64;
const IN_FLIGHT = 8;
const MAX_BACKLOG = 4096;

type Source = [source: string, flags: string];

/** A Matcher as it crosses to a worker (regular expressions do not). */
export interface MatcherSpec {
  js: Source;
  jsValid: Source;
  prefilter: Source | null;
  anchors: { bytes: Uint8Array; word: string | null; at: number }[] | null;
  multiline?: boolean;
  nested?: boolean;
}

/** "files" carries "abs\0rel\0abs\0rel…": one string crosses threads far more cheaply
 * than an array of arrays of strings. */
export type PoolMessage =
  | { type: "init"; matcher: MatcherSpec; probe: MatcherSpec | null; deadline: number; confine: string | null }
  | { type: "files"; files: string }
  /** Something matched somewhere: the near-miss probe is no longer needed. */
  | { type: "found" }
  | { type: "done" };

/** "ack" says whether this thread has found a match so far; "result" carries what the
 * probe found only when the thread probed every file it was given. */
export type WorkerMessage = { type: "ack"; found: boolean } | { type: "result"; snapshot: Snapshot; probed: Snapshot | null; unreadable: string[]; skipped: string[]; timedOut: boolean };

export class PoolFailure extends Error {
  override name = "PoolFailure";
}

const source = (re: RegExp): Source => [re.source, re.flags];

export function matcherSpec(m: Matcher): MatcherSpec {
  return { js: source(m.js), jsValid: source(m.jsValid), prefilter: m.prefilter ? source(m.prefilter) : null, anchors: m.anchors, multiline: m.multiline, nested: m.nested };
}

export function reviveMatcher(spec: MatcherSpec): Matcher {
  return {
    js: new RegExp(...spec.js),
    jsValid: new RegExp(...spec.jsValid),
    prefilter: spec.prefilter ? new RegExp(...spec.prefilter) : null,
    anchors: spec.anchors ? spec.anchors.map((a) => ({ ...a, bytes: Buffer.from(a.bytes) })) : null,
    multiline: spec.multiline,
    nested: spec.nested,
  };
}

/**
 * The worker entry: beside this module when running from source; in the compiled binary
 * every module is a chunk at the root of Bun's embedded file system, and the worker,
 * built as a second entry point, keeps its path below src/.
 */
export function workerUrl(): string {
  const here = new URL(".", import.meta.url);
  return /\/(\$bunfs|~BUN)\//.test(here.pathname) ? new URL("search/worker.ts", here).href : new URL("./worker.ts", import.meta.url).href;
}

export interface PoolResult {
  snapshots: Snapshot[];
  /** The probe's findings of every thread that probed all its files. */
  probed: Snapshot[];
  unreadable: string[];
  skipped: string[];
  timedOut: boolean;
}

interface Slot {
  worker: Worker;
  inFlight: number;
  result: Extract<WorkerMessage, { type: "result" }> | null;
}

export class Pool {
  private readonly slots: Slot[] = [];
  private pending: string[] = [];
  private failure: string | null = null;
  private wake: (() => void) | null = null;
  private probing: boolean;
  private found: (() => void) | null = null;

  private constructor(probing: boolean) {
    this.probing = probing;
  }

  /** `deadline` is wall-clock (Date.now()) time; `probe` the near-miss pattern searched
   * alongside until something matches; `url` is the worker script (tests give others);
   * `confine` the plan's (every file opened verified at or below it, with a root).
   * Null when no thread can be started. */
  static start(threads: number, matcher: Matcher, deadline: number, probe: Matcher | null = null, url = workerUrl(), confine: string | null = null): Pool | null {
    const pool = new Pool(probe !== null);
    try {
      for (let i = 0; i < threads; i++) pool.spawn(url, matcherSpec(matcher), probe ? matcherSpec(probe) : null, deadline, confine);
    } catch {
      pool.terminate();
      return null;
    }
    return pool;
  }

  get size(): number {
    return this.slots.length;
  }

  /** Called once, when a thread first reports a match while probing. */
  onFound(callback: () => void): void {
    this.found = callback;
  }

  /** Something matched: every thread stops searching for the probe. */
  stopProbing(): void {
    if (!this.probing) return;
    this.probing = false;
    for (const slot of this.slots) slot.worker.postMessage({ type: "found" } satisfies PoolMessage);
  }

  private spawn(url: string, matcher: MatcherSpec, probe: MatcherSpec | null, deadline: number, confine: string | null): void {
    const worker = new Worker(url);
    const slot: Slot = { worker, inFlight: 0, result: null };
    worker.onmessage = (event: MessageEvent<WorkerMessage>) => {
      if (event.data.type === "ack") {
        slot.inFlight--;
        if (event.data.found && this.probing) {
          this.stopProbing();
          this.found?.();
        }
      } else slot.result = event.data;
      this.poke();
    };
    worker.onerror = (event) => this.fail(event.message || "a search thread failed");
    worker.onmessageerror = () => this.fail("a search thread sent an unreadable message");
    // A thread that ends before its result is in (it is terminated only after): failed.
    worker.addEventListener("close", () => {
      if (slot.result === null) this.fail("a search thread ended early");
    });
    worker.postMessage({ type: "init", matcher, probe, deadline, confine } satisfies PoolMessage);
    this.slots.push(slot);
  }

  private fail(why: string): void {
    this.failure ??= why;
    this.poke();
  }

  private poke(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  /** Waits for any answer from a worker. */
  private next(): Promise<void> {
    if (this.failure) return Promise.reject(new PoolFailure(this.failure));
    return new Promise<void>((resolve) => {
      this.wake = resolve;
    }).then(() => {
      if (this.failure) throw new PoolFailure(this.failure);
    });
  }

  add(abs: string, rel: string): void {
    this.pending.push(abs, rel);
  }

  /** Hands out full batches (all of them when `all`) to workers with room. */
  pump(all = false): void {
    while (this.pending.length >= 2 * BATCH || (all && this.pending.length > 0)) {
      let slot = this.slots[0]!;
      for (const s of this.slots) if (s.inFlight < slot.inFlight) slot = s;
      if (slot.inFlight >= IN_FLIGHT) return;
      const files = this.pending.splice(0, 2 * BATCH).join("\0");
      slot.inFlight++;
      slot.worker.postMessage({ type: "files", files } satisfies PoolMessage);
    }
  }

  /** Lets worker answers in, and waits while the walk is too far ahead of them. */
  async keepUp(): Promise<void> {
    this.pump();
    if (this.pending.length > 2 * MAX_BACKLOG) await this.next();
    else await new Promise((resolve) => setImmediate(resolve));
    if (this.failure) throw new PoolFailure(this.failure);
  }

  /** Hands out what is left, then collects every worker's collector. */
  async finish(): Promise<PoolResult> {
    try {
      for (;;) {
        this.pump(true);
        if (this.pending.length === 0) break;
        await this.next();
      }
      for (const slot of this.slots) slot.worker.postMessage({ type: "done" } satisfies PoolMessage);
      while (this.slots.some((slot) => slot.result === null)) await this.next();
      const results = this.slots.map((slot) => slot.result!);
      return {
        snapshots: results.map((r) => r.snapshot),
        probed: results.flatMap((r) => (r.probed ? [r.probed] : [])),
        unreadable: results.flatMap((r) => r.unreadable),
        skipped: results.flatMap((r) => r.skipped),
        timedOut: results.some((r) => r.timedOut),
      };
    } finally {
      this.terminate();
    }
  }

  terminate(): void {
    for (const slot of this.slots) slot.worker.terminate();
  }
}
