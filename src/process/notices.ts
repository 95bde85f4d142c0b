// Completion notices (SPEC §4.7): a managed process of the session that ended since the
// session's last kt call is announced once, at the end of the next kt result of that
// session, whatever the tool. Each notice is claimed with one conditional UPDATE, so of
// two concurrent kt calls exactly one delivers it. Every kt call passes through here, so
// this module stays small: one stat when the session never started a process, otherwise
// two indexed queries (the running rows, whose vanished supervisors are noticed here, and
// the undelivered ends).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { index, safeName } from "../core/state.ts";
import { endWord, noticeLine, type EndWord } from "./ending.ts";
import { LINUX_PROC } from "./procfs.ts";
import { claimNotice, liveRows, reconcile, unnoticed } from "./registry.ts";
import type { Database } from "bun:sqlite";

interface Context {
  stateDir: string;
  session: string;
  warn(message: string): void;
}

export interface Notice {
  id: string;
  status: EndWord;
  line: string;
}

/** Claims the session's undelivered completions and returns one line for each. */
export function claimNotices(ctx: Context): Notice[] {
  if (!existsSync(join(ctx.stateDir, "sessions", safeName(ctx.session), "proc"))) return [];
  const db = index(ctx);
  noticeLost(db, ctx.session);
  const ended = unnoticed(db, ctx.session);
  if (ended.length === 0) return [];
  return ended.filter((row) => claimNotice(db, row.key)).map((row) => ({ id: row.id, status: endWord(row), line: noticeLine(row) }));
}

export { noticeLine };

/**
 * A command whose supervisor vanished (killed from outside, the OOM killer) has nobody left
 * to record its end: unless something reconciled it, it would read `running` until ps looked
 * and its loss would never be announced. One query for the session's running rows, and per
 * row the PID-reuse guard (registry.reconcile), which marks the row lost when its
 * supervisor and its command are both gone.
 */
function noticeLost(db: Database, session: string): void {
  for (const row of liveRows(db, session)) {
    if (row.supervisor_pid === null) continue;
    // On Linux the full check is one read of /proc (and tells a zombie supervisor, not yet
    // reaped, from a live one); elsewhere it runs ps, so only a supervisor gone is checked.
    if (!LINUX_PROC) {
      try {
        process.kill(row.supervisor_pid, 0);
        continue;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ESRCH") continue;
      }
    }
    reconcile(db, row);
  }
}

/** Appends the session's undelivered completion notices to a result (SPEC §4.7). */
export function appendNotices(result: { content: string; metadata: { extra?: Record<string, unknown> } }, ctx: Context): void {
  let notices: Notice[];
  try {
    notices = claimNotices(ctx);
  } catch (error) {
    ctx.warn(`kt: could not check for finished background processes: ${(error as Error).message}`);
    return;
  }
  if (notices.length === 0) return;
  const lines = notices.map((n) => n.line);
  result.content += `${result.content ? "\n\n" : ""}${lines.join("\n")}`;
  // The same word as ps list, per process, for a UI that shows the end without parsing prose.
  result.metadata.extra = { ...result.metadata.extra, notices: lines, ended: notices.map(({ id, status }) => ({ id, status })) };
}
