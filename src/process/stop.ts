// Stopping a managed process for ps stop, a cancelled bash and kt session end: the stop
// is flagged in the index first (so the supervisor records "stopped", not "exited"), then
// everything the command holds — its process group, its supervisor's descendants, the
// processes carrying its marker (src/process/descendants.ts) — is terminated, then the
// recorded end is read back.
import type { ToolContext } from "../core/result.ts";
import { HOST, isHost, isMine, isSameProcess, parentOf, specOnCommandLine, SUPERVISE } from "./identity.ts";
import { carriesMarker, held, tracker, type Holds, type Proc } from "./descendants.ts";
import { GRACE_MS, terminate } from "./kill-tree.ts";
import { markerValue } from "./env.ts";
import { index } from "../core/state.ts";
import { byKey, isFinal, leaderEnded, recordStopped, recordStopSignal, requestStop, type ProcessRow } from "./registry.ts";
import { waitForEnd } from "./wait.ts";
import { resolve } from "node:path";

export interface Stopped {
  row: ProcessRow;
  /** The last signal that was needed, when anything was left to signal. */
  signal?: "SIGTERM" | "SIGKILL";
  /** Processes of the command still alive after SIGKILL. */
  escaped: Proc[];
}

/**
 * Whether the row's supervisor is still the one that recorded it, and kt's: the same
 * incarnation (pid and start time), this user's, and a kt supervisor of this very row (or
 * the host of this state directory) by its command line. A row edited to name another
 * process names nothing kt will signal (SPEC §8.7).
 */
export function trustedSupervisor(stateDir: string, row: Pick<ProcessRow, "key" | "supervisor_pid" | "supervisor_start">): boolean {
  const pid = row.supervisor_pid;
  if (pid === null || !isSameProcess(pid, row.supervisor_start) || !isMine(pid)) return false;
  const abs = resolve(stateDir);
  const own = specOnCommandLine(pid, SUPERVISE);
  if (own) return own.stateDir === abs && own.key === row.key;
  return specOnCommandLine(pid, HOST)?.stateDir === abs;
}

/**
 * What a row's command holds, trusting a recorded pid only with its start time, its user, and
 * a tie to this row: the leader carries the row's marker or is the child of its trusted supervisor.
 */
export function holdsOf(stateDir: string, row: ProcessRow): Holds {
  const marker = markerValue(resolve(stateDir), row.key);
  const supervised = trustedSupervisor(stateDir, row);
  const leader = row.pid !== null && isSameProcess(row.pid, row.pid_start) && isMine(row.pid) && (carriesMarker(row.pid, marker) || (supervised && parentOf(row.pid) === row.supervisor_pid));
  // A host's tree holds every command of its session: the leader's tree, the group and the marker tell this one's.
  const hosted = supervised && isHost(row.supervisor_pid!);
  return {
    ...(leader ? { pgid: row.pid } : {}),
    ...(supervised && !hosted ? { root: row.supervisor_pid } : {}),
    ...(hosted && leader ? { tree: row.pid } : {}),
    marker,
  };
}

/** SIGTERM to everything the command holds, 3 s grace, SIGKILL; returns the row with its end recorded. */
export async function stopRow(ctx: Pick<ToolContext, "stateDir" | "warn">, row: ProcessRow, graceMs = GRACE_MS): Promise<Stopped> {
  const db = index(ctx);
  requestStop(db, row.key);
  // A command whose supervisor has not reported its pid yet: give it a moment.
  const deadline = performance.now() + 2000;
  while (row.pid === null && !isFinal(row.status) && performance.now() < deadline) {
    await Bun.sleep(20);
    row = byKey(db, row.key) ?? row;
  }
  const holds = holdsOf(ctx.stateDir, row);
  const leaderGone = leaderEnded(row);
  const find = tracker(holds);
  let ended = await terminate(find, graceMs, holds.pgid);
  // The last look is a whole sweep: a marked process may have appeared between sweeps.
  const late = held(holds);
  if (late.length > 0) {
    const again = await terminate(() => held(holds), graceMs);
    const signal = again.signal ?? ended.signal;
    ended = { ...(signal ? { signal } : {}), escaped: [...ended.escaped, ...again.escaped] };
  }
  // The shell had exited already: the signal that ended what it left is how the stop went.
  if (leaderGone && ended.signal) recordStopSignal(db, row.key, ended.signal);
  const after = (await waitForEnd(db, row.key, 2000)) ?? row;
  if (isFinal(after.status)) return { row: after, ...ended };
  // No supervisor left to record it: record the stop here.
  recordStopped(db, row.key, ended.signal ?? null);
  return { row: byKey(db, row.key) ?? after, ...ended };
}
