// A command run without a log (SPEC §8.7): when the state directory cannot hold one — its disk
// is full, or its index cannot be written — bash still runs the command, here, the old way:
// `bash -c` in its own process group, stdin closed, stdout and stderr on one pipe read into
// memory (a bounded head and tail). Nothing of it is kept: no row, no log, no hand-over to
// the background — at the time budget the command is stopped, since nothing could track it.
import { accessSync, constants, statfsSync } from "node:fs";
import { commandEnv } from "./env.ts";
import { terminate } from "./kill-tree.ts";
import { groupMembers } from "./identity.ts";
import { grouped } from "../core/text.ts";

/** Below this much free space the state directory is taken as full: a log could not be kept. */
export const MIN_FREE_BYTES = 1024 * 1024;
/** What is kept of each end of the output. */
const KEEP_BYTES = 1024 * 1024;
/** How long output may still come after the command's shell ended (a background job holding the pipe is not waited for). */
const DRAIN_MS = 200;

/** Why the disk of `dir` cannot take a command's log — full, or mounted read-only — or undefined when it can (or it cannot be told). */
export function stateDiskProblem(dir: string): string | undefined {
  try {
    accessSync(dir, constants.W_OK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EROFS") return `the disk holding the state directory ${dir} is read-only`;
  }
  try {
    const st = statfsSync(dir);
    return st.bavail * st.bsize < MIN_FREE_BYTES ? `the disk holding the state directory ${dir} is full` : undefined;
  } catch {
    return undefined;
  }
}

export interface DirectRun {
  /** The output (raw bytes as text), cut in the middle when over twice KEEP_BYTES. */
  output: string;
  /** Bytes left out of `output`. */
  omitted: number;
  exitCode: number | null;
  signal: string | null;
  durationMs: number;
  /** The time budget ran out and the command was stopped. */
  timedOut: boolean;
  cancelled: boolean;
}

export async function runDirect(command: string, cwd: string, timeoutMs: number, cancel?: AbortSignal): Promise<DirectRun> {
  const started = performance.now();
  const child = Bun.spawn(["bash", "-c", command], {
    cwd,
    env: commandEnv(process.env),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    detached: true,
  });
  const head: Uint8Array[] = [];
  let headBytes = 0;
  let tail: Uint8Array[] = [];
  let tailBytes = 0;
  let total = 0;
  const keep = (chunk: Uint8Array) => {
    total += chunk.length;
    if (headBytes < KEEP_BYTES) {
      const part = chunk.subarray(0, KEEP_BYTES - headBytes);
      head.push(part);
      headBytes += part.length;
      chunk = chunk.subarray(part.length);
    }
    if (chunk.length === 0) return;
    tail.push(chunk);
    tailBytes += chunk.length;
    while (tailBytes - tail[0]!.length >= KEEP_BYTES) tailBytes -= tail.shift()!.length;
  };
  // One stream of both, in arrival order as far as two pipes allow.
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream) keep(chunk);
  };
  const reading = Promise.all([pump(child.stdout), pump(child.stderr)]);
  const stop = () => terminate(() => groupMembers(child.pid).map((pid) => ({ pid, ppid: 0, pgrp: child.pid, state: "", comm: "" })), 1000, child.pid);
  let timedOut = false;
  let cancelled = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void stop();
  }, timeoutMs);
  const onAbort = () => {
    cancelled = true;
    void stop();
  };
  cancel?.addEventListener("abort", onAbort, { once: true });
  await child.exited;
  clearTimeout(timer);
  cancel?.removeEventListener("abort", onAbort);
  await Promise.race([reading, Bun.sleep(DRAIN_MS)]);
  const decoder = new TextDecoder();
  const text = (parts: Uint8Array[]) => decoder.decode(Buffer.concat(parts));
  const kept = headBytes + tailBytes;
  const omitted = Math.max(0, total - kept);
  const output = omitted > 0 ? `${text(head)}\n[... ${grouped(omitted)} bytes of output not kept ...]\n${text(tail)}` : text([...head, ...tail]);
  tail = [];
  return {
    output,
    omitted,
    exitCode: child.exitCode,
    signal: child.signalCode === null || child.signalCode === undefined ? null : String(child.signalCode),
    durationMs: performance.now() - started,
    timedOut,
    cancelled,
  };
}
