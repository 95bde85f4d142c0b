// Stopping a command and everything it started: SIGTERM first — to its process group in
// one call, so a shell and its jobs see it together, and to every other process it holds
// (src/process/descendants.ts) — a grace period, then SIGKILL. Processes that appear during
// the grace period are signalled too; what survives SIGKILL is reported, never passed over.
import type { Proc } from "./descendants.ts";

export const GRACE_MS = 3000;
const KILL_WAIT_MS = 2000;
const POLL_MS = 25;

export interface Termination {
  /** The last signal that was needed; undefined when nothing was left to stop. */
  signal?: "SIGTERM" | "SIGKILL";
  /** Processes still alive after SIGKILL (another user's, or stuck in the kernel). */
  escaped: Proc[];
}

function signal(p: Proc, sig: NodeJS.Signals): void {
  try {
    process.kill(p.pid, sig);
  } catch {
    // Gone, or not ours to signal: reported as escaped if it stays.
  }
}

/**
 * SIGTERM to everything `find` returns (and to what appears meanwhile), `graceMs` to leave,
 * then SIGKILL; what survives that is reported.
 */
export async function terminate(find: () => Proc[], graceMs = GRACE_MS, pgid?: number | null): Promise<Termination> {
  let left = find();
  if (left.length === 0) return { escaped: [] };
  const termed = new Set<number>();
  const term = (procs: Proc[]) => {
    for (const p of procs) {
      if (termed.has(p.pid)) continue;
      termed.add(p.pid);
      signal(p, "SIGTERM");
      // A stopped (SIGSTOP) process would hold its SIGTERM until continued.
      signal(p, "SIGCONT");
    }
  };
  // The group first, in one call, so that a shell and its jobs see the signal together.
  if (pgid) {
    try {
      process.kill(-pgid, "SIGTERM");
      process.kill(-pgid, "SIGCONT");
    } catch {
      // The group is empty already.
    }
  }
  term(left);
  const deadline = performance.now() + graceMs;
  while (performance.now() < deadline) {
    await Bun.sleep(POLL_MS);
    left = find();
    if (left.length === 0) return { signal: "SIGTERM", escaped: [] };
    term(left);
  }
  const killDeadline = performance.now() + KILL_WAIT_MS;
  do {
    for (const p of left) signal(p, "SIGKILL");
    await Bun.sleep(POLL_MS);
    left = find();
  } while (left.length > 0 && performance.now() < killDeadline);
  return { signal: "SIGKILL", escaped: left };
}

