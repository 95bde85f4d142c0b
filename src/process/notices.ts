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
import { END_WORDS, endWord, howEnded, type EndWord } from "./ending.ts";
import { shortCommand } from "./format.ts";
import { reconcile, type ProcessRow } from "./registry.ts";
import type { Database } from "bun:sqlite";

interface Ended {
  key: number;
  id: string;
  command: string;
  status: string;
  exit_code: number | null;
  signal: string | null;
  error: string | null;
  started_at: number;
  ended_at: number | null;
}

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
  const ended = db
    .query(
      `SELECT key, id, command, status, exit_code, signal, error, started_at, ended_at FROM processes
       WHERE session = ? AND notified = 0 AND id IS NOT NULL AND status IN (${END_WORDS.map((w) => `'${w}'`).join(", ")}) ORDER BY seq`,
    )
    .all(ctx.session) as Ended[];
  if (ended.length === 0) return [];
  const claim = db.query("UPDATE processes SET notified = 1 WHERE key = ? AND notified = 0");
  return ended.filter((row) => claim.run(row.key).changes === 1).map((row) => ({ id: row.id, status: endWord(row), line: noticeLine(row) }));
}

/**
 * A command whose supervisor vanished (killed from outside, the OOM killer) has nobody left
 * to record its end: unless something reconciled it, it would read `running` until ps looked
 * and its loss would never be announced. One query for the session's running rows, and per
 * row the PID-reuse guard (registry.reconcile), which marks the row lost when its
 * supervisor and its command are both gone.
 */
function noticeLost(db: Database, session: string): void {
  const live = db.query("SELECT * FROM processes WHERE session = ? AND id IS NOT NULL AND status IN ('starting', 'running')").all(session) as ProcessRow[];
  for (const row of live) {
    if (row.supervisor_pid === null) continue;
    // On Linux the full check is one read of /proc (and tells a zombie supervisor, not yet
    // reaped, from a live one); elsewhere it runs ps, so only a supervisor gone is checked.
    if (process.platform !== "linux") {
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

export function noticeLine(row: Ended): string {
  const name = `Process ${row.id} (${shortCommand(row.command)})`;
  const next = row.status === "failed" ? "" : ` Use ps read ${row.id} for its output.`;
  return `[${name} ${howEnded(row)}.${next}]`;
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
