// Stopping one managed process for ps stop, a cancelled bash and kt session end: the stop
// is flagged in the index first (so the supervisor records "stopped", not "exited"), then
// the process group is terminated, then the recorded end is read back.
import type { ToolContext } from "../tools/tool.ts";
import { isSameProcess } from "./identity.ts";
import { GRACE_MS, terminateGroup } from "./kill-tree.ts";
import { index } from "../core/state.ts";
import { byKey, isFinal, type ProcessRow } from "./registry.ts";
import { waitForEnd } from "./wait.ts";

/** SIGTERM to the group, 3 s grace, SIGKILL; returns the row with its end recorded. */
export async function stopRow(ctx: Pick<ToolContext, "stateDir" | "warn">, row: ProcessRow, graceMs = GRACE_MS): Promise<ProcessRow> {
  const db = index(ctx);
  db.query("UPDATE processes SET stop_requested = 1 WHERE key = ?").run(row.key);
  // A command whose supervisor has not reported its pid yet: give it a moment.
  const deadline = performance.now() + 2000;
  while (row.pid === null && !isFinal(row.status) && performance.now() < deadline) {
    await Bun.sleep(20);
    row = byKey(db, row.key) ?? row;
  }
  let last: string | undefined;
  if (row.pid !== null && isSameProcess(row.pid, row.pid_start)) last = await terminateGroup(row.pid, graceMs);
  const ended = (await waitForEnd(db, row.key, 2000)) ?? row;
  if (isFinal(ended.status)) return ended;
  // No supervisor left to record it: record the stop here.
  db.query("UPDATE processes SET status = 'stopped', signal = ?, ended_at = ? WHERE key = ? AND status IN ('starting', 'running')").run(last ?? null, Date.now(), row.key);
  return byKey(db, row.key) ?? ended;
}
