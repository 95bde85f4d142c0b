// Modification times for many paths. Ordering glob's results newest first needs one stat
// per match, which costs as much as the walk itself; past a few thousand paths they are
// stat'ed on a worker thread while the walk goes on. The worker is a small
// self-contained script (no import of kt's modules), so it also runs from the compiled
// binary.
import { statSync } from "node:fs";

const BATCH = 2048;

const WORKER = `const { statSync } = require("node:fs");
self.onmessage = (event) => {
  const paths = event.data;
  const out = new Float64Array(paths.length);
  for (let i = 0; i < paths.length; i++) {
    try { out[i] = statSync(paths[i]).mtimeMs; } catch { out[i] = 0; }
  }
  postMessage(out, [out.buffer]);
};`;

function mtimeOf(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    // Vanished during the walk: listed, as the oldest.
    return 0;
  }
}

function statAll(paths: readonly string[]): Float64Array {
  const out = new Float64Array(paths.length);
  for (let i = 0; i < paths.length; i++) out[i] = mtimeOf(paths[i]!);
  return out;
}

export class Mtimes {
  private batch: string[] = [];
  private readonly parts: Promise<Float64Array>[] = [];
  private worker: Worker | null = null;
  private noWorker = false;
  /** Batches sent to the worker, oldest first, with what resolves their part. */
  private readonly waiting: { paths: string[]; resolve: (mtimes: Float64Array) => void }[] = [];

  /** Queues `path`; its mtime is at the same index in what finish() returns. */
  add(path: string): void {
    this.batch.push(path);
    if (this.batch.length >= BATCH) this.send();
  }

  /** Every queued path's mtime (0 when it could not be stat'ed), in order. */
  async finish(): Promise<Float64Array> {
    if (this.batch.length > 0) {
      // A short list is stat'ed here: starting a thread would cost more.
      if (this.worker) this.send();
      else this.parts.push(Promise.resolve(statAll(this.batch)));
      this.batch = [];
    }
    const parts = await Promise.all(this.parts);
    this.worker?.terminate();
    const out = new Float64Array(parts.reduce((n, part) => n + part.length, 0));
    let at = 0;
    for (const part of parts) {
      out.set(part, at);
      at += part.length;
    }
    return out;
  }

  private send(): void {
    const paths = this.batch;
    this.batch = [];
    if (this.worker === null && !this.noWorker) this.worker = this.start();
    if (this.worker === null) {
      this.parts.push(Promise.resolve(statAll(paths)));
      return;
    }
    this.parts.push(new Promise((resolve) => this.waiting.push({ paths, resolve })));
    this.worker.postMessage(paths);
  }

  private start(): Worker | null {
    try {
      const worker = new Worker(URL.createObjectURL(new Blob([WORKER], { type: "application/javascript" })));
      worker.onmessage = (event: MessageEvent<Float64Array>) => this.waiting.shift()!.resolve(event.data);
      worker.onerror = () => {
        // The thread failed: whatever it still owed is stat'ed here.
        this.noWorker = true;
        this.worker = null;
        for (const { paths, resolve } of this.waiting.splice(0)) resolve(statAll(paths));
        worker.terminate();
      };
      return worker;
    } catch {
      this.noWorker = true;
      return null;
    }
  }
}
