// A thread of the built-in grep engine (see pool.ts): it is handed a pattern, then
// batches of files, searches them with the same code as the main thread, and at the end
// hands back its collector. Messages: init → files… → done; it answers each batch with
// "ack" and "done" with "result".
import { searchFile } from "./builtin.ts";
import { Collector } from "./collect.ts";
import { reviveMatcher, type PoolMessage, type WorkerMessage } from "./pool.ts";

declare const self: Worker;

let matcher: ReturnType<typeof reviveMatcher> | null = null;
/** The near-miss probe, searched alongside until anything matches anywhere. */
let probe: ReturnType<typeof reviveMatcher> | null = null;
let probed: Collector | null = null;
let deadline = Number.POSITIVE_INFINITY;
let timedOut = false;
const collector = new Collector();
const unreadable: string[] = [];
let batches = 0;
const GC_BATCHES = 32;

function reply(message: WorkerMessage): void {
  self.postMessage(message);
}

self.onmessage = (event: MessageEvent<PoolMessage>) => {
  const message = event.data;
  switch (message.type) {
    case "init":
      matcher = reviveMatcher(message.matcher);
      if (message.probe) {
        probe = reviveMatcher(message.probe);
        probed = new Collector();
      }
      deadline = message.deadline;
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
        const result = searchFile(abs, probed ? [matcher!, probe!] : [matcher!]);
        if (result === "unreadable") unreadable.push(rel);
        else if (result) {
          const [found, near] = result;
          if (found!.count > 0) {
            collector.add(rel, abs, found!.hits, found!.count, found!.cut);
            probed = null;
          } else if (probed && near && near.count > 0) probed.add(rel, abs, near.hits, near.count, near.cut);
        }
      }
      // Batches leave garbage even when nothing is decoded (then garbage() never runs).
      if (++batches % GC_BATCHES === 0) Bun.gc(true);
      reply({ type: "ack", found: collector.lines > 0 });
      break;
    case "done":
      reply({ type: "result", snapshot: collector.snapshot(), probed: probed?.snapshot() ?? null, unreadable, timedOut });
      break;
  }
};
