// A helper thread, for grep or for glob. For the built-in grep engine (see pool.ts): it
// is handed a pattern, then batches of files, searches them with the same code as the
// main thread, and at the end hands back its collector. Messages: init → files… → done;
// it answers each batch with "ack" and "done" with "result". For glob (see
// globscan.ts): it is handed directories to walk, gives half of those it has not read
// yet when asked, says when it has nothing left (both through shared memory), and hands
// back what it found on "glob-finish".
import { searchInto } from "./builtin.ts";
import { Collector } from "./collect.ts";
import { reviveMatcher, type PoolMessage, type WorkerMessage } from "./pool.ts";
import { GlobScan, SharedState, toWire, type GlobReply, type GlobRequest } from "./globscan.ts";
import { Walker } from "./walk.ts";

declare const self: Worker;

let matcher: ReturnType<typeof reviveMatcher> | null = null;
/** The near-miss probe, searched alongside until anything matches anywhere. */
let probe: ReturnType<typeof reviveMatcher> | null = null;
let probed: Collector | null = null;
let deadline = Number.POSITIVE_INFINITY;
let confine: string | null = null;
let timedOut = false;
const collector = new Collector();
const lost = { unreadable: [] as string[], skipped: [] as string[] };
let batches = 0;
const GC_BATCHES = 32;

function reply(message: WorkerMessage | GlobReply): void {
  self.postMessage(message);
}

let glob: { scan: GlobScan; walker: Walker; shared: Int32Array } | null = null;

/**
 * Walks the directories it was given, without stopping for messages (a request for half
 * of them arrives through shared memory), then says it is idle. The exchange to IDLE
 * answers a request made meanwhile, so that every request gets its one answer.
 */
function walkGlob(): void {
  const { scan, walker, shared } = glob!;
  const { STATE, STOP, RUNNING, IDLE, STEAL } = SharedState;
  while (walker.pending > 0 && Atomics.load(shared, STOP) === 0) {
    const ended = walker.step(scan.visit, 4);
    if (ended?.timedOut) {
      scan.timedOut = true;
      break;
    }
    if (Atomics.load(shared, STATE) === STEAL) {
      reply({ type: "glob-stolen", dirs: walker.pending >= 2 ? walker.split() : [] });
      Atomics.store(shared, STATE, RUNNING);
    }
  }
  // Directories left unread (stopped at the time limit): the result is partial.
  if (walker.pending > 0) scan.timedOut = true;
  if (Atomics.exchange(shared, STATE, IDLE) === STEAL) reply({ type: "glob-stolen", dirs: [] });
}

self.onmessage = (event: MessageEvent<PoolMessage | GlobRequest>) => {
  const message = event.data;
  switch (message.type) {
    case "glob": {
      const scan = new GlobScan(message.config);
      glob = { scan, walker: new Walker(scan.walkOptions(), []), shared: new Int32Array(message.shared) };
      break;
    }
    case "glob-dirs":
      glob!.walker.add(message.dirs);
      walkGlob();
      break;
    case "glob-finish":
      reply({ type: "glob-result", result: toWire(glob!.scan.result()) });
      break;
    case "init":
      matcher = reviveMatcher(message.matcher);
      if (message.probe) {
        probe = reviveMatcher(message.probe);
        probed = new Collector();
      }
      deadline = message.deadline;
      confine = message.confine;
      break;
    case "found":
      probed = null;
      break;
    case "files":
      const files = message.files.split("\0");
      for (let i = 0; i + 1 < files.length; i += 2) {
        const abs = files[i]!;
        const rel = files[i + 1]!;
        // The deadline is wall-clock time: each thread has its own performance.now().
        if (timedOut || Date.now() > deadline) {
          timedOut = true;
          break;
        }
        if (searchInto(abs, rel, probed ? [matcher!, probe!] : [matcher!], collector, probed, lost, confine)) probed = null;
      }
      // Batches leave garbage even when nothing is decoded (then garbage() never runs).
      if (++batches % GC_BATCHES === 0) Bun.gc(true);
      reply({ type: "ack", found: collector.lines > 0 });
      break;
    case "done":
      reply({ type: "result", snapshot: collector.snapshot(), probed: probed?.snapshot() ?? null, ...lost, timedOut });
      break;
  }
};
