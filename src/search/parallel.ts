// The one parallel walk grep and glob share, in the shape of ripgrep's ignore crate: a
// walk kind (what a tool does with the files) builds one visitor per thread, and every
// thread walks part of the tree with its own (walk.ts's Walker, same ignore rules) and
// hands back what it found at the end.
//
// Helper threads (worker.ts, one per further core) cost about 10 ms to come up, and a
// small tree is searched sooner than that: a walk starts alone, and only after its kind's
// time alone, with work left, are helpers started and given the walk (each joins once
// up). Once a walk is done with them they wait for the next walk of the process (kt mcp,
// kt call), which then has them up already. A helper gone idle is given half of the
// directories still to be read by whichever thread sees it first, this one or a busy
// helper (each has a port to every other helper of the walk), so that on many cores no
// helper waits for this thread, which walks too; a very large directory waits in slices
// of files, which go the same way. When this thread runs out it takes half of a busy
// helper's. A busy helper reads no messages, so whether it is up, idle or asked for its
// directories goes through shared memory. Any failure of a helper has the whole walk done
// again on this thread alone.
import { Walker, type DirRef, type Visit, type WalkOptions } from "./walk.ts";
import { threadCount } from "./threads.ts";
import { belowTopTier } from "./tiers.ts";

/**
 * Words every thread of one walk shares: STOP makes every walker stop (a visitor quit,
 * or the time ran out); HIT says some thread's visitor found what it looks for (grep and
 * glob retire their near-miss probes on it: a hint is only wanted when nothing matched);
 * WORKING counts the helpers given directories that have not gone idle since (claim).
 */
export class Signals {
  readonly words: Int32Array;

  constructor(buffer: SharedArrayBuffer = new SharedArrayBuffer(12)) {
    this.words = new Int32Array(buffer);
  }

  /** A helper was claimed for directories (it counts until it goes idle again). */
  claimed(): void {
    Atomics.add(this.words, 2, 1);
  }

  /** A helper claimed went idle. */
  released(): void {
    Atomics.sub(this.words, 2, 1);
  }

  /** Helpers holding directories, or about to receive them. */
  get working(): number {
    return Atomics.load(this.words, 2);
  }

  stop(): void {
    Atomics.store(this.words, 0, 1);
  }

  get stopped(): boolean {
    return Atomics.load(this.words, 0) === 1;
  }

  hit(): void {
    Atomics.store(this.words, 1, 1);
  }

  get hitSomewhere(): boolean {
    return Atomics.load(this.words, 1) === 1;
  }
}

/** One thread's part of a walk. */
export interface ThreadVisitor<Found> {
  /** The walk's options on this thread (a deadline is on this thread's clock). */
  readonly options: WalkOptions;
  readonly visit: Visit;
  /** What this thread found (structured-cloneable data: it may cross threads).
   * `partial`: the walk stopped before every directory was read. */
  finish(partial: boolean): Found;
}

/** What a tool does with a walk: known to worker.ts by `name`. */
export interface WalkKind<Config, Found> {
  readonly name: string;
  /** Files of one directory visited at once (walk.ts's slice): smaller when visiting a
   * file costs much (grep reads it), so that work is shared at a finer grain. */
  readonly slice?: number;
  /** Walking time alone before helpers are started and given the walk (default
   * ALONE_MS): shorter when visiting a file costs much, so that a helper's start is paid
   * for by less of the walk. */
  readonly aloneMs?: number;
  visitor(config: Config, signals: Signals): ThreadVisitor<Found>;
  /** Found data in a form cheaper to send between threads, and back. */
  pack?(found: Found): unknown;
  unpack?(packed: unknown): Found;
  /** What of the packed data is handed over to this thread rather than copied. */
  transfer?(packed: unknown): ArrayBuffer[];
}

export interface WalkOutcome<Found> {
  /** One per thread that walked, this thread's first. */
  found: Found[];
  /** Threads of the walk: this one and every helper started (one not up before the end
   * walked nothing). */
  threads: number;
  /** Times a helper gave directories to another helper (tests). */
  peerGives: number;
}

/** Messages to a helper. The found data crosses back in one "found" message. */
/** "walk": `peers` are the state words of every helper of the walk (this one's at
 * `slot`); `to[j]` is a port to helper j (null at `slot`), and `inbox` the ports the
 * others give directories on. */
type ToHelper =
  | { type: "walk"; kind: string; config: unknown; signals: SharedArrayBuffer; state: SharedArrayBuffer; slot: number; peers: SharedArrayBuffer[]; to: (MessagePort | null)[]; inbox: MessagePort[] }
  | { type: "dirs"; dirs: DirRef[] }
  | { type: "finish" };

/** "found": with how many times the helper gave directories to another helper. */
type FromHelper = { type: "stolen"; dirs: DirRef[] } | { type: "found"; found: unknown; gave: number };

/**
 * A helper's state word (its own shared Int32Array): STARTING until the thread is up
 * (it sets IDLE itself, so that no work is ever handed to a thread that is not running:
 * one slow to start holds none of the walk hostage), RUNNING while it walks, IDLE when it
 * has nothing left, STEAL when this thread asks for half of its directories. Every STEAL
 * that replaced RUNNING is answered with exactly one "stolen" (empty when the helper ran
 * out first). RETIRED: the walk ended before the thread was up; it is not waited for.
 * Whoever turns IDLE into RUNNING (this thread or another helper: one exchange, so one
 * of them) sends that helper the one "dirs" it walks before it goes idle again.
 */
const enum State {
  Starting,
  Running,
  Idle,
  Steal,
  Retired,
}

/**
 * The helper entry: beside this module when running from source; in the compiled binary
 * every module is a chunk at the root of Bun's embedded file system, and the worker,
 * built as a second entry point, keeps its path below src/.
 */
export function workerUrl(): string {
  const here = new URL(".", import.meta.url);
  return /\/(\$bunfs|~BUN)\//.test(here.pathname) ? new URL("search/worker.ts", here).href : new URL("./worker.ts", import.meta.url).href;
}

/** Directories stepped through between looks at the helpers, by this thread. */
const STEP = 2;

/** Walking time alone before helpers start, by default (glob's walk). A helper costs
 * about 10-15 ms to start: a walk shorter than this is done before it could help. A fixed count
 * of files did not do: with grep's near-miss probe searched until the first match, a
 * thousand files on one thread were slow enough that starting helpers at once took a
 * 2-thread search of node_modules ×4 from 1,036 ms to 922 ms. */
const ALONE_MS = 15;

/** A count of files to walk alone before helpers start, instead of ALONE_MS: tests and
 * benches set one (KT_GREP_PARALLEL_AFTER, KT_GLOB_PARALLEL_AFTER); null when unset. */
export function filesAlone(raw: string | undefined): number | null {
  const n = Number(raw);
  return raw !== undefined && raw !== "" && Number.isFinite(n) && n >= 0 ? n : null;
}

/**
 * Walks with `kind`'s visitors on up to `threads` threads. `after`: files walked alone
 * before helpers are started, instead of ALONE_MS, and the walk then waits for them to be
 * up (tests set it, to have helpers share even a small walk). `url`: the helper script
 * (tests give others); null walks on this thread alone.
 */
export async function walkParallel<Config, Found>(kind: WalkKind<Config, Found>, config: Config, after: number | null, threads = threadCount(), url: string | null = workerUrl()): Promise<WalkOutcome<Found>> {
  try {
    return await walkWith(kind, config, after, url === null ? 1 : threads, url);
  } catch (error) {
    if (!(error instanceof HelperFailure)) throw error;
    return walkWith(kind, config, after, 1, null);
  }
}

async function walkWith<Config, Found>(kind: WalkKind<Config, Found>, config: Config, after: number | null, threads: number, url: string | null): Promise<WalkOutcome<Found>> {
  const began = performance.now();
  const aloneMs = kind.aloneMs ?? ALONE_MS;
  const signals = new Signals();
  const own = kind.visitor(config, signals);
  const walker = new Walker(withSlice(own.options, kind.slice));
  let helpers: Helper<Found>[] = [];
  let tried = threads < 2 || url === null;
  let files = 0;
  /** Directories found, the root among them. */
  let dirs = 1;
  const startHelpers = (): void => {
    tried = true;
    helpers = takeThreads(threads - 1, url!).map((thread) => new Helper<Found>(thread, kind, signals));
    // A port from every helper to every other: an idle one is given directories by
    // whichever busy thread sees it first.
    const to = helpers.map(() => helpers.map((): MessagePort | null => null));
    const inbox = helpers.map((): MessagePort[] => []);
    for (let i = 0; i < helpers.length; i++) {
      for (let j = 0; j < helpers.length; j++) {
        if (i === j) continue;
        const channel = new MessageChannel();
        to[i]![j] = channel.port1;
        inbox[j]!.push(channel.port2);
      }
    }
    const peers = helpers.map((h) => h.stateBuffer);
    helpers.forEach((helper, slot) => helper.begin(config, slot, peers, to[slot]!, inbox[slot]!));
  };
  // Whether helpers would pay for their start: the walk has lasted its kind's time alone.
  // (An estimate of what is left from the directories still to be read misjudged a
  // depth-first walk, whose stack holds whole subtrees as one directory each.)
  const worthHelpers = (): boolean => performance.now() - began >= aloneMs;
  // Until the helpers are given the walk, every entry visited is counted and every file
  // looks at the clock (or at a count of files alone), so that they join on time even in
  // the middle of a step of many files (the first files of a search, cold, take longest).
  const alone: Visit = (abs, rel, dir) => {
    if (dir) dirs++;
    else {
      files++;
      if (!tried && (after === null ? worthHelpers() : files >= after)) startHelpers();
    }
    return own.visit(abs, rel, dir);
  };
  // Idle helpers are fed between files, not only between steps: a step through a
  // directory of large files lasts long enough to leave a helper waiting.
  const feed = (): void => {
    for (const helper of helpers) if (walker.pending >= 2 && helper.idle && helper.claim()) helper.give(walker.split());
  };
  const sharing: Visit = (abs, rel, dir) => {
    if (!dir) feed();
    return own.visit(abs, rel, dir);
  };
  belowTopTier(feed, sharing);
  let partial = false;
  try {
    for (;;) {
      if (walker.pending > 0) {
        const ended = walker.step(tried ? sharing : alone, STEP);
        if (ended && (ended.timedOut || ended.stopped)) {
          signals.stop();
          partial = walker.pending > 0 || ended.timedOut;
          break;
        }
      }
      if (signals.stopped) {
        partial = true;
        break;
      }
      if (!tried && (after === null ? walker.pending > 0 && worthHelpers() : files >= after)) startHelpers();
      // Helpers asked for by a count of files (tests and benches) share the walk for
      // certain, even a small one: it waits for them to be up (a few seconds at most).
      if (after !== null && helpers.length > 0) for (let waited = 0; waited < 5000 && helpers.some((h) => h.starting); waited++) await Bun.sleep(1);
      if (helpers.length === 0) {
        if (walker.pending === 0) break;
        continue;
      }
      feed();
      if (walker.pending > 0) continue;
      // Nothing left here: take half of a busy helper's, or wait for the last to finish.
      const busy = helpers.filter((h) => h.busy);
      if (busy.length === 0) {
        // Every helper idle as each was looked at; one may have been given directories by
        // another since (looked at before that, the giver after it went idle).
        if (signals.working === 0) break;
        await helpers[0]!.pause();
        continue;
      }
      let stolen: DirRef[] = [];
      for (const helper of busy) {
        stolen = await helper.steal();
        if (stolen.length > 0) break;
      }
      if (stolen.length > 0) walker.add(stolen);
      else await busy[0]!.pause();
    }
    const started = 1 + helpers.length;
    // Every thread hands over its findings at the same time (each sorts its own).
    const finishing = helpers.map((h) => h.finish());
    helpers = [];
    // A helper failing now fails the walk (caught in walkParallel, done again alone).
    const mine = own.finish(partial);
    const theirs = (await Promise.all(finishing)).filter((found) => found !== null);
    const peerGives = theirs.reduce((n, t) => n + t.gave, 0);
    return { found: [mine, ...theirs.map((t) => t.found)], threads: started, peerGives };
  } finally {
    // Helpers not finished (the walk failed): their threads are not used again.
    for (const helper of helpers) helper.discard();
  }
}

/** The visitor's own options with the kind's slice, set on them rather than copied: the
 * walk reads the deadline from them each time, and a replace's visitor moves it on. */
function withSlice(options: WalkOptions, slice: number | undefined): WalkOptions {
  if (slice !== undefined) options.slice = slice;
  return options;
}

/** A helper thread failed: the walk is done again on this thread alone. */
class HelperFailure extends Error {}

/**
 * A helper thread's worker, started for a walk and kept for the next walk of the process
 * once that one is done with it. Its messages go to the Helper of the walk using it. It
 * keeps the process alive only while a walk uses it: kt exits when its work is done,
 * whatever thread is still starting or waiting.
 */
class Thread {
  readonly worker: Worker;
  /** The walk using this thread (null: waiting in the pool). */
  user: Helper<unknown> | null = null;
  /** Why the thread cannot be used any more (it failed, or ended). */
  failure: string | null = null;

  constructor(readonly url: string) {
    this.worker = new Worker(url);
    // Referenced only while a walk uses it (Helper), which then waits for its replies.
    this.worker.unref();
    this.worker.onmessage = (event: MessageEvent<FromHelper>) => this.user?.receive(event.data);
    this.worker.onerror = (event) => this.fail(event.message || "a search thread failed");
    this.worker.onmessageerror = () => this.fail("a search thread sent an unreadable message");
    // A thread that ends while kept (it is terminated only when discarded): failed.
    this.worker.addEventListener("close", () => this.fail("a search thread ended early"));
  }

  private fail(why: string): void {
    this.failure ??= why;
    this.user?.poke();
  }
}

/** Threads done with a walk, waiting for the next. */
const pool: Thread[] = [];

/** Up to `count` threads for a walk: those waiting first, then new ones. */
function takeThreads(count: number, url: string): Thread[] {
  const taken: Thread[] = [];
  for (let i = 0; i < pool.length && taken.length < count; ) {
    const thread = pool[i]!;
    if (thread.failure !== null) {
      pool.splice(i, 1);
      thread.worker.terminate();
    } else if (thread.url === url) taken.push(...pool.splice(i, 1));
    else i++;
  }
  while (taken.length < count) {
    try {
      taken.push(new Thread(url));
    } catch {
      break;
    }
  }
  return taken;
}

/** A helper thread, as one walk sees it. */
class Helper<Found> {
  private replies: FromHelper[] = [];
  private wake: (() => void) | null = null;
  private readonly state = new Int32Array(new SharedArrayBuffer(4));

  constructor(
    private readonly thread: Thread,
    private readonly kind: WalkKind<never, Found>,
    private readonly signals: Signals,
  ) {
    Atomics.store(this.state, 0, State.Starting);
    thread.user = this as Helper<unknown>;
    thread.worker.ref();
  }

  get stateBuffer(): SharedArrayBuffer {
    return this.state.buffer as SharedArrayBuffer;
  }

  /** Gives the walk to the thread, as helper `slot` of `peers` (with its ports to the
   * others and from them); it joins when up (at once when it already is). */
  begin(config: unknown, slot: number, peers: SharedArrayBuffer[], to: (MessagePort | null)[], inbox: MessagePort[]): void {
    try {
      const message: ToHelper = { type: "walk", kind: this.kind.name, config, signals: this.signals.words.buffer as SharedArrayBuffer, state: this.stateBuffer, slot, peers, to, inbox };
      const ports = [...to.filter((port) => port !== null), ...inbox];
      this.thread.worker.postMessage(message, ports);
    } catch (error) {
      this.thread.failure ??= String(error);
    }
  }

  private get failure(): string | null {
    return this.thread.failure;
  }

  receive(message: FromHelper): void {
    this.replies.push(message);
    this.poke();
  }

  /** The helper is up and has no directories left (or was never given any). */
  get idle(): boolean {
    if (this.failure) throw new HelperFailure(this.failure);
    return Atomics.load(this.state, 0) === State.Idle;
  }

  /** The thread is not up yet. */
  get starting(): boolean {
    if (this.failure) throw new HelperFailure(this.failure);
    return Atomics.load(this.state, 0) === State.Starting;
  }

  /** The helper holds directories of the walk. */
  get busy(): boolean {
    if (this.failure) throw new HelperFailure(this.failure);
    const state = Atomics.load(this.state, 0);
    return state === State.Running || state === State.Steal;
  }

  poke(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  private async reply<T extends FromHelper["type"]>(type: T): Promise<Extract<FromHelper, { type: T }>> {
    for (;;) {
      if (this.failure) throw new HelperFailure(this.failure);
      const at = this.replies.findIndex((r) => r.type === type);
      if (at !== -1) return this.replies.splice(at, 1)[0] as Extract<FromHelper, { type: T }>;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  /** Claims the idle helper for directories from this thread (false: another helper
   * gave it some first). */
  claim(): boolean {
    return claim(this.state, this.signals);
  }

  /** Hands directories to the helper claimed. */
  give(dirs: DirRef[]): void {
    this.thread.worker.postMessage({ type: "dirs", dirs } satisfies ToHelper);
  }

  /** Half of the helper's unread directories (none when it has fewer than two, or has
   * run out meanwhile). */
  async steal(): Promise<DirRef[]> {
    if (Atomics.compareExchange(this.state, 0, State.Running, State.Steal) !== State.Running) return [];
    return (await this.reply("stolen")).dirs;
  }

  /** Waits a moment (the helper is walking the last of the directories). */
  async pause(): Promise<void> {
    await Bun.sleep(1);
    if (this.failure) throw new HelperFailure(this.failure);
  }

  /** Takes what the helper found (it is idle, or stopped by the walk's STOP); null when
   * it was not up yet (it then never walked, and is not waited for). The thread then
   * waits in the pool for the next walk; one that failed is ended. */
  async finish(): Promise<{ found: Found; gave: number } | null> {
    try {
      if (Atomics.compareExchange(this.state, 0, State.Starting, State.Retired) === State.Starting) return null;
      this.thread.worker.postMessage({ type: "finish" } satisfies ToHelper);
      const { found, gave } = await this.reply("found");
      return { found: this.kind.unpack ? this.kind.unpack(found) : (found as Found), gave: gave ?? 0 };
    } finally {
      this.release();
    }
  }

  private release(): void {
    this.thread.user = null;
    this.thread.worker.unref();
    if (this.thread.failure === null) pool.push(this.thread);
    else this.thread.worker.terminate();
  }

  /** Ends the thread (the walk failed before its end: its state is unknown). */
  discard(): void {
    this.thread.user = null;
    this.thread.failure ??= "discarded";
    this.thread.worker.terminate();
  }
}

/** Turns an idle helper's state to RUNNING, for the caller alone to send it directories;
 * counted in WORKING until the helper goes idle again. */
function claim(state: Int32Array, signals: Signals): boolean {
  if (Atomics.load(state, 0) !== State.Idle || Atomics.compareExchange(state, 0, State.Idle, State.Running) !== State.Idle) return false;
  signals.claimed();
  return true;
}

/**
 * The helper's side (worker.ts calls this with the kinds it knows): walks the
 * directories it is given without stopping for messages (a request for half of them
 * arrives through shared memory), giving half of them to any other helper seen idle
 * between steps, then says it is idle; the exchange to IDLE answers a request made
 * meanwhile, so that every request gets its one answer.
 */
export function serveWalks(kinds: readonly WalkKind<never, unknown>[]): void {
  const scope = globalThis as unknown as Worker;
  let job: {
    kind: WalkKind<never, unknown>;
    visitor: ThreadVisitor<unknown>;
    walker: Walker;
    signals: Signals;
    state: Int32Array;
    partial: boolean;
    /** The other helpers' state words and ports to them, and the ports from them. */
    peers: { state: Int32Array; port: MessagePort }[];
    inbox: MessagePort[];
    gave: number;
    /** The visitor's visit, sharing between files. */
    visit: Visit;
  } | null = null;
  const reply = (message: FromHelper, transfer: ArrayBuffer[] = []): void => scope.postMessage(message, transfer);
  /** Answers a request for half of this helper's directories, and gives half to any
   * other helper idle: between steps, and between files (a step can last long). */
  const share = (): void => {
    const { walker, signals, state, peers } = job!;
    if (Atomics.load(state, 0) === State.Steal) {
      reply({ type: "stolen", dirs: walker.pending >= 2 ? walker.split() : [] });
      Atomics.store(state, 0, State.Running);
    }
    for (let i = 0; i < peers.length && walker.pending >= 2; i++) {
      const peer = peers[i]!;
      if (!claim(peer.state, signals)) continue;
      peer.port.postMessage(walker.split());
      job!.gave++;
    }
  };
  belowTopTier(share);
  const walk = (): void => {
    const { walker, signals, state, visit } = job!;
    while (walker.pending > 0 && !signals.stopped) {
      const ended = walker.step(visit, STEP);
      if (ended && (ended.timedOut || ended.stopped)) {
        signals.stop();
        if (ended.timedOut) job!.partial = true;
        break;
      }
      share();
    }
    // Directories left unread (the walk was stopped): what this thread found is partial.
    if (walker.pending > 0) job!.partial = true;
    const was = Atomics.exchange(state, 0, State.Idle);
    signals.released();
    if (was === State.Steal) reply({ type: "stolen", dirs: [] });
  };
  /** Directories from this thread or from another helper, only ever given to one that
   * said it was up. */
  const take = (dirs: DirRef[]): void => {
    // None after the walk's end: one stopped may end with directories still on their way
    // from another helper (unread, as the stop leaves them).
    if (job === null) return;
    job.walker.add(dirs);
    walk();
  };
  const close = (): void => {
    for (const port of job!.inbox) port.close();
    for (const peer of job!.peers) peer.port.close();
  };
  scope.onmessage = (event: MessageEvent<ToHelper>) => {
    const message = event.data;
    switch (message.type) {
      case "walk": {
        const kind = kinds.find((k) => k.name === message.kind);
        if (!kind) throw new Error(`no walk kind ${message.kind}`);
        const signals = new Signals(message.signals);
        const visitor = kind.visitor(message.config as never, signals);
        const peers: { state: Int32Array; port: MessagePort }[] = [];
        message.peers.forEach((buffer, slot) => {
          const port = message.to[slot];
          if (slot !== message.slot && port) peers.push({ state: new Int32Array(buffer), port });
        });
        const visit: Visit = (abs, rel, dir) => {
          if (!dir) share();
          return visitor.visit(abs, rel, dir);
        };
        belowTopTier(visit);
        job = { kind, visitor, walker: new Walker(withSlice(visitor.options, kind.slice), []), signals, state: new Int32Array(message.state), partial: false, peers, inbox: message.inbox, gave: 0, visit };
        for (const port of message.inbox) port.onmessage = (event) => take(event.data as DirRef[]);
        // Up: work may come now, unless the walk is already over.
        if (Atomics.compareExchange(job.state, 0, State.Starting, State.Idle) !== State.Starting) {
          close();
          job = null;
        }
        break;
      }
      case "dirs":
        take(message.dirs);
        break;
      case "finish": {
        const found = job!.visitor.finish(job!.partial);
        close();
        const packedFound = job!.kind.pack ? job!.kind.pack(found) : found;
        reply({ type: "found", found: packedFound, gave: job!.gave }, job!.kind.pack && job!.kind.transfer ? job!.kind.transfer(packedFound) : []);
        // The thread may wait for another walk (the pool): it keeps nothing of this one.
        job = null;
        break;
      }
    }
  };
}
