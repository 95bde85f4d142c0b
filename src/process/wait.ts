// Waiting on a managed command from a kt call: for its supervisor to finish, for its log to
// show output, for its row to record an end. Every wait is bounded; giving up a wait never
// touches the command, which belongs to its supervisor.
import type { Database } from "bun:sqlite";
import { logSize } from "./log.ts";
import { byKey, isFinal, reconcile, type ProcessRow } from "./registry.ts";

const POLL_MS = 20;

export type Outcome = "exited" | "timeout" | "cancelled" | "left";

/** How often a waiting bash asks whether its command's leader ended with processes left. */
const LEFT_POLL_MS = 50;

/**
 * Waits for the supervisor to exit (it does right after recording the command's end), or
 * for `left()` to say the command's leader ended while processes it started run on.
 */
export async function waitForSupervisor(exited: Promise<unknown>, ms: number, cancel?: AbortSignal, left?: () => boolean): Promise<Outcome> {
  if (cancel?.aborted) return "cancelled";
  let timer: ReturnType<typeof setTimeout> | undefined;
  let poll: ReturnType<typeof setInterval> | undefined;
  let onAbort: (() => void) | undefined;
  const outcome = await Promise.race([
    new Promise<Outcome>((resolve) => {
      if (!left) return;
      poll = setInterval(() => {
        if (left()) resolve("left");
      }, LEFT_POLL_MS);
    }),
    exited.then(() => "exited" as const),
    new Promise<Outcome>((resolve) => {
      timer = setTimeout(() => resolve("timeout"), ms);
    }),
    new Promise<Outcome>((resolve) => {
      onAbort = () => resolve("cancelled");
      cancel?.addEventListener("abort", onAbort, { once: true });
    }),
  ]);
  clearTimeout(timer);
  clearInterval(poll);
  if (onAbort) cancel?.removeEventListener("abort", onAbort);
  return outcome;
}

/** The row once it records an end, polling up to `ms` (a dead supervisor makes it `lost`). */
export async function waitForEnd(db: Database, key: number, ms: number): Promise<ProcessRow | undefined> {
  const deadline = performance.now() + ms;
  for (;;) {
    const row = byKey(db, key);
    if (!row) return undefined;
    const now = reconcile(db, row);
    if (isFinal(now.status) || performance.now() >= deadline) return now;
    await Bun.sleep(POLL_MS);
  }
}

/**
 * Waits up to `ms` for output past byte `from`, then until the output has been quiet for
 * `quietMs`, so that a burst (a banner, a stack trace) is caught whole. Ends early when
 * `ended` resolves.
 */
export async function waitForOutput(log: string, from: number, ms: number, quietMs: number, ended: Promise<unknown>): Promise<void> {
  let done = false;
  void ended.then(() => {
    done = true;
  });
  const deadline = performance.now() + ms;
  let size = logSize(log);
  let changedAt = size > from ? performance.now() : Infinity;
  while (!done && performance.now() < deadline) {
    await Bun.sleep(POLL_MS);
    const now = logSize(log);
    if (now !== size) {
      size = now;
      changedAt = performance.now();
    } else if (size > from && performance.now() - changedAt >= quietMs) return;
  }
}

/**
 * The row once its owner has recorded taking the command (supervisor_pid and pid set) or its
 * end, polling up to `ms`: a host answers "ok" as it takes a command, a moment before it
 * records the start, and ps start must not answer with a row half written.
 */
export async function waitForRecord(db: Database, key: number, ms: number): Promise<ProcessRow | undefined> {
  const deadline = performance.now() + ms;
  for (;;) {
    const row = byKey(db, key);
    if (!row || isFinal(row.status) || (row.supervisor_pid !== null && row.pid !== null) || performance.now() >= deadline) return row;
    await Bun.sleep(5);
  }
}
