// Stopping a managed process and everything it started: the command runs as the leader
// of its own process group, so one signal to the group reaches its grandchildren too.
// SIGTERM first, a grace period, then SIGKILL.
import { groupMembers } from "./identity.ts";

export const GRACE_MS = 3000;
const KILL_WAIT_MS = 2000;
const POLL_MS = 25;

/** Sends `signal` to every process of group `pgid`; false when the group is already empty. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/** Resolves once no live process is left in `pgid`, or false at the deadline. */
export async function groupGone(pgid: number, withinMs: number): Promise<boolean> {
  const deadline = performance.now() + withinMs;
  for (;;) {
    if (groupMembers(pgid).length === 0) return true;
    if (performance.now() >= deadline) return false;
    await Bun.sleep(POLL_MS);
  }
}

/**
 * SIGTERM to the group, `graceMs` to leave, then SIGKILL. Returns the last signal that was
 * needed, or undefined when the group was already empty.
 */
export async function terminateGroup(pgid: number, graceMs = GRACE_MS): Promise<"SIGTERM" | "SIGKILL" | undefined> {
  if (groupMembers(pgid).length === 0) return undefined;
  signalGroup(pgid, "SIGTERM");
  // A stopped (SIGSTOP) member would hold its SIGTERM until continued.
  signalGroup(pgid, "SIGCONT");
  if (await groupGone(pgid, graceMs)) return "SIGTERM";
  signalGroup(pgid, "SIGKILL");
  await groupGone(pgid, KILL_WAIT_MS);
  return "SIGKILL";
}
