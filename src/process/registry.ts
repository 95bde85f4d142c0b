// The managed processes of a session, as rows of the index (SPEC §4.7). The only module
// with SQL on the processes and process_seq tables (core/state.ts creates them): every kt
// process, supervisor and session end reads and writes them through here. Claims (a slot,
// an id, a notice, a read cursor) happen under the index's write lock so concurrent kt
// calls never both win one.
import type { Database } from "bun:sqlite";
import { unlinkSync } from "node:fs";
import { withWriteLock } from "../core/state.ts";
import { END_WORDS, endedStatus, type EndWord } from "./ending.ts";
import { isSameProcess } from "./identity.ts";
import { removeTermFiles } from "./terminal.ts";

export type Status = "starting" | "running" | EndWord;

export interface ProcessRow {
  key: number;
  session: string;
  /** `p3` once the model can see it; null while a bash command runs in the foreground. */
  id: string | null;
  seq: number | null;
  origin: "ps" | "bash";
  command: string;
  cwd: string;
  log_path: string;
  stdin_path: string | null;
  pid: number | null;
  pid_start: string | null;
  supervisor_pid: number | null;
  supervisor_start: string | null;
  status: Status;
  exit_code: number | null;
  signal: string | null;
  error: string | null;
  started_at: number;
  ended_at: number | null;
  stop_requested: number;
  cursor_byte: number;
  cursor_line: number;
  notified: number;
}

export const MAX_RUNNING = 8;
export const MAX_KEPT = 32;
/** A supervisor that has not reported its child after this long is taken for dead. */
const STARTING_TIMEOUT_MS = 30_000;
/** Foreground bash rows whose kt call died are swept after this long. */
const ORPHAN_MS = 10 * 60_000;

/**
 * A running row that records an exit: the command's leader has ended, and what it started
 * runs on (its supervisor records the end when the last of them is gone).
 */
export function leaderEnded(row: Pick<ProcessRow, "status" | "exit_code" | "signal"> | undefined): boolean {
  return row !== undefined && !isFinal(row.status) && (row.exit_code !== null || row.signal !== null);
}

export function isFinal(status: Status): boolean {
  return status !== "starting" && status !== "running";
}

export function byKey(db: Database, key: number): ProcessRow | undefined {
  return (db.query("SELECT * FROM processes WHERE key = ?").get(key) as ProcessRow | null) ?? undefined;
}

export function byId(db: Database, session: string, id: string): ProcessRow | undefined {
  return (db.query("SELECT * FROM processes WHERE session = ? AND id = ?").get(session, id) as ProcessRow | null) ?? undefined;
}

/** The processes the model can see, in id order. */
export function visible(db: Database, session: string): ProcessRow[] {
  return db.query("SELECT * FROM processes WHERE session = ? AND id IS NOT NULL ORDER BY seq").all(session) as ProcessRow[];
}

export function sessionRows(db: Database, session: string): ProcessRow[] {
  return db.query("SELECT * FROM processes WHERE session = ? ORDER BY key").all(session) as ProcessRow[];
}

export type NewRow = Pick<ProcessRow, "session" | "id" | "seq" | "origin" | "command" | "cwd" | "log_path" | "stdin_path">;

export function insert(db: Database, row: NewRow): number {
  const result = db
    .query(
      `INSERT INTO processes (session, id, seq, origin, command, cwd, log_path, stdin_path, status, started_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'starting', ?)`,
    )
    .run(row.session, row.id, row.seq, row.origin, row.command, row.cwd, row.log_path, row.stdin_path, Date.now());
  return Number(result.lastInsertRowid);
}

/** The next `pN` of the session. Call under the write lock. */
export function nextId(db: Database, session: string): { id: string; seq: number } {
  const row = db.query("SELECT next FROM process_seq WHERE session = ?").get(session) as { next: number } | null;
  const seq = row?.next ?? 1;
  db.query("INSERT OR REPLACE INTO process_seq (session, next) VALUES (?, ?)").run(session, seq + 1);
  return { id: `p${seq}`, seq };
}

/**
 * The PID-reuse guard. A row says `running`, but only a live supervisor (same pid, same
 * start time) can still record its exit; when the supervisor is gone and the command is
 * gone too, the row becomes `lost`. Returns the row as it now stands.
 */
export function reconcile(db: Database, row: ProcessRow): ProcessRow {
  if (isFinal(row.status)) return row;
  if (isSameProcess(row.supervisor_pid, row.supervisor_start)) return row;
  if (row.supervisor_pid === null && Date.now() - row.started_at < STARTING_TIMEOUT_MS) return row;
  // The supervisor may have recorded the exit and left between our read and now.
  const fresh = byKey(db, row.key);
  if (!fresh || isFinal(fresh.status)) return fresh ?? row;
  if (isSameProcess(fresh.pid, fresh.pid_start)) return fresh;
  db.query("UPDATE processes SET status = 'lost', ended_at = ? WHERE key = ? AND status IN ('starting', 'running')").run(Date.now(), row.key);
  return byKey(db, row.key) ?? row;
}

/** The session's rows not yet ended, as recorded (no reconciling). */
export function liveRows(db: Database, session: string): ProcessRow[] {
  return db.query("SELECT * FROM processes WHERE session = ? AND id IS NOT NULL AND status IN ('starting', 'running')").all(session) as ProcessRow[];
}

export function running(db: Database, session: string): ProcessRow[] {
  return visible(db, session)
    .filter((r) => !isFinal(r.status))
    .map((r) => reconcile(db, r))
    .filter((r) => !isFinal(r.status));
}

/**
 * A process of the session, visible to the model and still running, that runs `command` in
 * `cwd` (pi's duplicate guard): a second copy would only fight it for a port or a lock.
 * A finished twin, or one in another directory, is no twin. Call under the write lock.
 */
export function runningTwin(db: Database, session: string, command: string, cwd: string): ProcessRow | undefined {
  const same = db
    .query("SELECT * FROM processes WHERE session = ? AND id IS NOT NULL AND cwd = ? AND status IN ('starting', 'running') ORDER BY seq")
    .all(session, cwd) as ProcessRow[];
  // A command whose own shell has ended and left processes running is no twin: running it
  // again is how a build reuses the daemon it left (Gradle, sccache), not a second server.
  return same.filter((r) => r.command.trim() === command.trim() && !leaderEnded(r)).map((r) => reconcile(db, r)).find((r) => !isFinal(r.status));
}

export function setCursor(db: Database, key: number, byte: number, line: number): void {
  db.query("UPDATE processes SET cursor_byte = ?, cursor_line = ? WHERE key = ?").run(byte, line, key);
}

export interface Cursor {
  byte: number;
  line: number;
}

/**
 * Reads past the session's cursor of a process and moves the cursor, under the write lock,
 * so two concurrent reads never both show the same output. `take` gets the cursor as the
 * index has it (`fallback` when the row is gone) and returns what it showed with where the
 * cursor goes, or undefined to leave it where it is.
 */
export function readAtCursor<T>(db: Database, key: number, fallback: Cursor, take: (cursor: Cursor) => { value: T; to: Cursor } | undefined): T | undefined {
  return withWriteLock(db, () => {
    const row = byKey(db, key);
    const taken = take(row ? { byte: row.cursor_byte, line: row.cursor_line } : fallback);
    if (!taken) return undefined;
    setCursor(db, key, taken.to.byte, taken.to.line);
    return taken.value;
  });
}

/** Gives a running foreground bash command its id: from now on it is process `id`. Call under the write lock. */
export function assignId(db: Database, key: number, id: string, seq: number): void {
  db.query("UPDATE processes SET id = ?, seq = ? WHERE key = ?").run(id, seq, key);
}

// ---- what supervisors, stops and session ends record --------------------------------

/** The supervisor could not start the command. */
export function recordSpawnFailure(db: Database, key: number, message: string, supervisorPid: number): void {
  db.query("UPDATE processes SET status = 'failed', error = ?, ended_at = ?, supervisor_pid = ? WHERE key = ?").run(message, Date.now(), supervisorPid, key);
}

/** The command runs, owned by this supervisor; false when its row is gone (the session ended meanwhile). */
export function recordStarted(db: Database, key: number, pid: number, pidStart: string | null, supervisorPid: number, supervisorStart: string | null): boolean {
  return (
    db
      .query(
        `UPDATE processes SET pid = ?, pid_start = ?, supervisor_pid = ?, supervisor_start = ?,
         status = CASE WHEN status = 'starting' THEN 'running' ELSE status END WHERE key = ?`,
      )
      .run(pid, pidStart, supervisorPid, supervisorStart, key).changes > 0
  );
}

/** The command's leader ended while what it started runs on (see leaderEnded). */
export function recordLeaderExit(db: Database, key: number, exitCode: number | null, signal: string | null): void {
  db.query("UPDATE processes SET exit_code = ?, signal = ? WHERE key = ? AND status IN ('starting', 'running')").run(exitCode, signal, key);
}

/**
 * The end of a command, recorded by its supervisor when the last of it is gone: stopped when
 * a stop was asked for (`stopped` says one was, whatever the row says), else exited or killed.
 * COALESCE: a stop of what the shell left records the signal that ended it (stop.ts).
 */
export function recordEnd(db: Database, key: number, exitCode: number | null, signal: string | null, stopped: boolean): void {
  const stopRequested = stopped || (db.query("SELECT stop_requested FROM processes WHERE key = ?").get(key) as { stop_requested: number } | null)?.stop_requested === 1;
  db.query(`UPDATE processes SET status = ?, exit_code = ?, signal = COALESCE(signal, ?), ended_at = ? WHERE key = ? AND status IN ('starting', 'running', 'lost')`).run(
    endedStatus(stopRequested, signal),
    exitCode,
    signal,
    Date.now(),
    key,
  );
}

/** ps stop (or a session end) asked for this command to stop: its end will be "stopped". */
export function requestStop(db: Database, key: number): void {
  db.query("UPDATE processes SET stop_requested = 1 WHERE key = ?").run(key);
}

/** The signal that ended what a command's shell left running: how its stop went. */
export function recordStopSignal(db: Database, key: number, signal: string): void {
  db.query("UPDATE processes SET signal = ? WHERE key = ?").run(signal, key);
}

/** A stop recorded by the stopper, when no supervisor is left to record it. */
export function recordStopped(db: Database, key: number, signal: string | null): void {
  db.query("UPDATE processes SET status = 'stopped', signal = ?, ended_at = ? WHERE key = ? AND status IN ('starting', 'running')").run(signal, Date.now(), key);
}

/** Drops every process row and the id counter of a session (its end). Call under the write lock. */
export function forgetSession(db: Database, session: string): void {
  db.query("DELETE FROM processes WHERE session = ?").run(session);
  db.query("DELETE FROM process_seq WHERE session = ?").run(session);
}

/** The logs and stdin pipes of commands still running, in every session: the size cap keeps them. */
export function liveFiles(db: Database): Set<string> {
  const rows = db.query("SELECT log_path, stdin_path FROM processes WHERE status IN ('starting', 'running')").all() as { log_path: string; stdin_path: string | null }[];
  return new Set(rows.flatMap((r) => [r.log_path, r.stdin_path ?? ""]));
}

// ---- completion notices -----------------------------------------------------------

/** A finished process of the session the model has not been told of. */
export interface Unnoticed {
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

/** The session's ended processes whose notice is not delivered yet, in id order. */
export function unnoticed(db: Database, session: string): Unnoticed[] {
  return db
    .query(
      `SELECT key, id, command, status, exit_code, signal, error, started_at, ended_at FROM processes
       WHERE session = ? AND notified = 0 AND id IS NOT NULL AND status IN (${END_WORDS.map((w) => `'${w}'`).join(", ")}) ORDER BY seq`,
    )
    .all(session) as Unnoticed[];
}

/** Claims one notice with one conditional UPDATE: of two concurrent kt calls exactly one gets true. */
export function claimNotice(db: Database, key: number): boolean {
  return db.query("UPDATE processes SET notified = 1 WHERE key = ? AND notified = 0").run(key).changes === 1;
}

/** The model saw this process's end: no completion notice for it any more. */
export function markNotified(db: Database, key: number): void {
  db.query("UPDATE processes SET notified = 1 WHERE key = ?").run(key);
}

export function remove(db: Database, row: Pick<ProcessRow, "key" | "log_path" | "stdin_path">, keepLog = false): void {
  db.query("DELETE FROM processes WHERE key = ?").run(row.key);
  if (!keepLog) unlinkQuietly(row.log_path);
  if (row.stdin_path) unlinkQuietly(row.stdin_path);
  removeTermFiles(row.log_path);
}

/**
 * Keeps at most MAX_KEPT visible entries, dropping the oldest finished ones with their
 * logs (running ones are never pruned), and sweeps foreground-bash rows whose kt call
 * died long ago. Call under the write lock.
 */
export function prune(db: Database, session: string): void {
  const rows = visible(db, session);
  let excess = rows.length - MAX_KEPT;
  for (const row of rows) {
    if (excess <= 0) break;
    if (!isFinal(row.status)) continue;
    remove(db, row);
    excess--;
  }
  const orphans = db
    .query("SELECT * FROM processes WHERE session = ? AND id IS NULL AND status NOT IN ('starting', 'running') AND ended_at < ?")
    .all(session, Date.now() - ORPHAN_MS) as ProcessRow[];
  for (const row of orphans) remove(db, row);
}

export function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone.
  }
}
