// File stamps (SPEC §3.4): per session and real path, what kt last read or wrote.
// The hash decides staleness; mtime and size are only a fast path.
//
// A read's stamp is one line appended to a log beside the index (stamps.log), not a row
// written into it: a `kt read` then never opens SQLite, which was a third of what it cost
// beyond the runtime's start. Whatever asks for stamps folds the log into the index first,
// under the index's write lock, from where the last fold stopped; a big log is set aside
// whole and removed once folded and quiet. A line carries the time of its read, and a
// folded line never replaces a newer stamp (a write's), so the order folds happen in does
// not matter. A lost line (a torn write on a full disk) costs a "read it first", never a
// wrong write: a stamp only ever names content some read or write of the session saw.
import type { Database } from "bun:sqlite";
import { closeSync, constants, readSync, renameSync, type Stats, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { KtError, type ToolContext } from "./result.ts";
import { ensureStateDir, lstatOrUndefined, openStateFile } from "./statefs.ts";
import { index, indexIsOpen, isStateFault, LOG_TABLE, STAMP_LOG, stateProblem, withWriteLock } from "./state.ts";
import { sha256 } from "./hash.ts";

export interface Stamp {
  mtimeMs: number;
  size: number;
  sha256: string;
  at: number;
}

export { sha256 } from "./hash.ts";

/**
 * sha256 remembered per byte array, for one multi-file commit that names the same bytes in
 * its history rows, journal, stamps and re-checks: each content is hashed once, not five
 * times. Only for arrays nothing writes into while it is in use.
 */
export function hashOnce(): ((bytes: Uint8Array) => string) & { know(bytes: Uint8Array, sha: string): void } {
  const known = new WeakMap<Uint8Array, string>();
  const hash = (bytes: Uint8Array) => {
    let sha = known.get(bytes);
    if (sha === undefined) known.set(bytes, (sha = sha256(bytes)));
    return sha;
  };
  /** A hash the caller worked out already (the content a change was computed from). */
  const know = (bytes: Uint8Array, sha: string) => void known.set(bytes, sha);
  return Object.assign(hash, { know });
}

type StateCtx = Pick<ToolContext, "stateDir" | "warn" | "session">;

/** A system call's failure on a state file (EACCES, ENOSPC, EROFS, ...), not a bug in kt. */
function isErrno(error: unknown): boolean {
  return typeof (error as NodeJS.ErrnoException)?.code === "string";
}

/** A log folded past this many bytes is set aside and a new one begun. */
const ROTATE_BYTES = 1 << 20;
/** A log set aside is removed once folded and unchanged for this long (an append begun before it was set aside has landed). */
const QUIET_MS = 60_000;

/**
 * Appends a read's stamp to the log: one write of one line, O_APPEND, so that appends of
 * many kt processes at once never interleave. A short write (a full disk) is ended with a
 * line break, so that only its own line is lost, and is then reported.
 */
function appendStamp(ctx: StateCtx, real: string, stamp: Omit<Stamp, "at">): void {
  ensureStateDir(ctx.stateDir);
  // Begun with a line break as well: a torn line left by another writer (or anyone) never swallows this one.
  const line = `\n${JSON.stringify([ctx.session, real, stamp.mtimeMs, stamp.size, stamp.sha256, Date.now()])}\n`;
  const bytes = new TextEncoder().encode(line);
  const fd = openStateFile(join(ctx.stateDir, STAMP_LOG), constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND);
  try {
    const n = writeSync(fd, bytes);
    if (n !== bytes.length) {
      writeSync(fd, "\n");
      throw Object.assign(new Error(`only ${n} of ${bytes.length} bytes of a stamp were written (disk is full)`), { code: "ENOSPC" });
    }
  } finally {
    closeSync(fd);
  }
}

const tables = new WeakSet<Database>();

/** The index, with every stamp the logs hold folded into it. */
function stampIndex(ctx: Pick<ToolContext, "stateDir" | "warn">): Database {
  const db = index(ctx);
  foldStampLogs(db, ctx.stateDir);
  return db;
}

/**
 * The session's stamps of `reals`: the index's, and the logs' newer ones. An index that
 * cannot take the fold (a read-only or full state disk, a lock held too long) is asked as
 * it is, and the logs' lines are read beside it, so that what was read still counts.
 */
function stampsOf(ctx: StateCtx, reals: readonly string[]): Map<string, Stamp> {
  let db: Database | undefined;
  let unfolded: Map<string, Stamp> | undefined;
  try {
    db = index(ctx);
    foldStampLogs(db, ctx.stateDir);
  } catch (error) {
    if (!isStateFault(error) && !isErrno(error)) throw error;
    // Said where the index is needed next (a write's stamp): here only what was read counts.
    unfolded = loggedStamps(db, ctx.stateDir, ctx.session);
  }
  const out = new Map<string, Stamp>();
  const unique = [...new Set(reals)];
  for (let i = 0; db && i < unique.length; i += PATHS_PER_QUERY) {
    const some = unique.slice(i, i + PATHS_PER_QUERY);
    const rows = db
      .query(`SELECT path, mtime_ms, size, sha256, at FROM stamps WHERE session = ? AND path IN (${some.map(() => "?").join(", ")})`)
      .all(ctx.session, ...some) as { path: string; mtime_ms: number; size: number; sha256: string; at: number }[];
    for (const row of rows) out.set(row.path, { mtimeMs: row.mtime_ms, size: row.size, sha256: row.sha256, at: row.at });
  }
  if (unfolded) {
    for (const real of unique) {
      const logged = unfolded.get(real);
      const known = out.get(real);
      if (logged && (!known || logged.at >= known.at)) out.set(real, logged);
    }
  }
  return out;
}

/** The session's stamps the logs hold beyond their last fold, by path, the newest of each. */
function loggedStamps(db: Database | undefined, stateDir: string, session: string): Map<string, Stamp> {
  const out = new Map<string, Stamp>();
  for (const name of [`${STAMP_LOG}.old`, STAMP_LOG]) {
    const path = join(stateDir, name);
    const st = lstatOrUndefined(path);
    if (!st?.isFile()) continue;
    let from = 0;
    try {
      if (db) from = foldedTo(db, name, st);
    } catch {
      // No place kept (no table yet, an unreadable index): the whole log.
    }
    for (const [s, p, mtimeMs, size, sha, at] of logLines(path, from, st.size).lines) {
      if (s !== session) continue;
      const known = out.get(p);
      if (!known || at >= known.at) out.set(p, { mtimeMs, size, sha256: sha, at });
    }
  }
  return out;
}

/** Folds what the logs of `stateDir` hold beyond the last fold into the index's stamps. */
export function foldStampLogs(db: Database, stateDir: string): void {
  for (const name of [`${STAMP_LOG}.old`, STAMP_LOG]) {
    const path = join(stateDir, name);
    const seen = lstatOrUndefined(path);
    if (!seen?.isFile()) continue;
    if (!tables.has(db)) {
      db.exec(LOG_TABLE);
      tables.add(db);
    }
    if (!due(db, name, path, seen)) continue;
    const fold = () => {
      // Again under the lock: another kt may have folded, set aside or removed it meanwhile.
      const st = lstatOrUndefined(path);
      if (!st?.isFile() || !due(db, name, path, st)) return;
      const from = foldedTo(db, name, st);
      const to = from < st.size ? foldFrom(db, path, from, st.size) : from;
      db.query("INSERT OR REPLACE INTO stamp_logs (name, ino, folded) VALUES (?, ?, ?)").run(name, st.ino, to);
      if (to < st.size) return;
      if (name !== STAMP_LOG) {
        // Folded and quiet: no append begun before it was set aside is still to land.
        if (Date.now() - st.mtimeMs <= QUIET_MS) return;
        unlinkQuietly(path);
        db.query("DELETE FROM stamp_logs WHERE name = ?").run(name);
      } else if (st.size > ROTATE_BYTES && !lstatOrUndefined(`${path}.old`)) {
        // Folded and big: set aside (appends under way land in it, and are folded from it), a new one begins.
        try {
          renameSync(path, `${path}.old`);
        } catch {
          return;
        }
        db.query("DELETE FROM stamp_logs WHERE name = ?").run(`${name}.old`);
        db.query("UPDATE stamp_logs SET name = ? WHERE name = ?").run(`${name}.old`, name);
      }
    };
    if (db.inTransaction) fold();
    else withWriteLock(db, fold);
  }
}

/** Where the last fold of the log `name` (as it is now, `st`) stopped. */
function foldedTo(db: Database, name: string, st: Stats): number {
  const row = db.query("SELECT ino, folded FROM stamp_logs WHERE name = ?").get(name) as { ino: number; folded: number } | null;
  return row && row.ino === st.ino && row.folded <= st.size ? row.folded : 0;
}

/** The log has lines not yet folded, or is to be set aside or removed. */
function due(db: Database, name: string, path: string, st: Stats): boolean {
  if (foldedTo(db, name, st) < st.size) return true;
  return name === STAMP_LOG ? st.size > ROTATE_BYTES && !lstatOrUndefined(`${path}.old`) : Date.now() - st.mtimeMs > QUIET_MS;
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Gone already.
  }
}

/** Folds the whole lines of `path` between `from` and `to`; where the fold stopped (after its last whole line). */
function foldFrom(db: Database, path: string, from: number, to: number): number {
  const { lines, end } = logLines(path, from, to);
  const put = db.query(
    `INSERT INTO stamps (session, path, mtime_ms, size, sha256, at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (session, path) DO UPDATE SET mtime_ms = excluded.mtime_ms, size = excluded.size, sha256 = excluded.sha256, at = excluded.at
     WHERE excluded.at >= stamps.at`,
  );
  for (const line of lines) put.run(...line);
  return end;
}

/** The whole lines of `path` between `from` and `to` that are kt's, and where they end. */
function logLines(path: string, from: number, to: number): { lines: Line[]; end: number } {
  const fd = openStateFile(path, constants.O_RDONLY | constants.O_NONBLOCK);
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(to - from);
    let got = 0;
    while (got < bytes.length) {
      const n = readSync(fd, bytes, got, bytes.length - got, from + got);
      if (n === 0) break;
      got += n;
    }
    bytes = bytes.subarray(0, got);
  } finally {
    closeSync(fd);
  }
  const end = bytes.lastIndexOf(10);
  const lines: Line[] = [];
  if (end === -1) return { lines, end: from };
  for (const text of new TextDecoder().decode(bytes.subarray(0, end)).split("\n")) {
    const line = parseLine(text);
    if (line) lines.push(line);
  }
  return { lines, end: from + end + 1 };
}

type Line = [session: string, path: string, mtimeMs: number, size: number, sha256: string, at: number];

/** A log line, or undefined for one that is not whole (a torn write) or not kt's. */
function parseLine(line: string): Line | undefined {
  if (line === "") return undefined;
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!Array.isArray(v) || v.length !== 6) return undefined;
  const [session, path, mtimeMs, size, sha, at] = v as unknown[];
  if (typeof session !== "string" || typeof path !== "string" || typeof mtimeMs !== "number" || typeof size !== "number" || typeof sha !== "string" || !/^[0-9a-f]{64}$/.test(sha) || typeof at !== "number") return undefined;
  return [session, path, mtimeMs, size, sha, at];
}

export function getStamp(ctx: StateCtx, real: string): Stamp | undefined {
  return stampsOf(ctx, [real]).get(real);
}

/** Paths are asked about this many at a time (SQLite's limit on a statement's parameters is far above). */
const PATHS_PER_QUERY = 500;

/**
 * The stamps of many files at once (a patch's or a replace's), by real path: one query for a change's
 * files rather than one per file. A path without a stamp is not in the map.
 */
export function getStamps(ctx: StateCtx, reals: readonly string[]): Map<string, Stamp> {
  return stampsOf(ctx, reals);
}

export function putStamp(ctx: Pick<ToolContext, "stateDir" | "warn" | "session">, real: string, stamp: Omit<Stamp, "at">): void {
  index(ctx)
    .query("INSERT OR REPLACE INTO stamps (session, path, mtime_ms, size, sha256, at) VALUES (?, ?, ?, ?, ?, ?)")
    .run(ctx.session, real, stamp.mtimeMs, stamp.size, stamp.sha256, Date.now());
}

/**
 * Records what a read saw, or says on stderr why it could not: a read needs no index to be
 * right, only the next write's freshness check does (and it then asks for a read again).
 * A process that has the index open already (a server's) writes the stamp into it.
 */
export function noteRead(ctx: StateCtx, real: string, stamp: Omit<Stamp, "at">): void {
  try {
    if (indexIsOpen(ctx.stateDir)) putStamp(ctx, real, stamp);
    else appendStamp(ctx, real, stamp);
  } catch (error) {
    if (!isStateFault(error) && !isErrno(error)) throw error;
    ctx.warn(`the read was not recorded (a later write or edit will ask for a new read). ${stateProblem(ctx.stateDir, error)}`);
  }
}

export type Verb = "overwrite" | "edit" | "patch" | "undo" | "rename" | "change";

/**
 * Refuses a write to an existing file kt has not read (NOT_READ) or whose content
 * changed since (STALE_FILE). `--skip-read-check` waives only the first.
 */
export function assertFresh(ctx: ToolContext, display: string, real: string, currentSha: string, verb: Verb): void {
  const stamp = getStamp(ctx, real);
  if (!stamp) {
    if (ctx.flags.skipReadCheck) return;
    throw notRead(display, verb);
  }
  if (stamp.sha256 !== currentSha) throw stale(display, verb);
}

export function notRead(display: string, verb: Verb): KtError {
  return new KtError(
    "NOT_READ",
    `Refusing to ${verb} ${display}: you have not read this file in this session. Read it first so you do not destroy existing content, then write or edit it.`,
  );
}

export function stale(display: string, verb: Verb): KtError {
  return new KtError(
    "STALE_FILE",
    `Refusing to ${verb} ${display}: the file changed on disk after you last read it (content hash mismatch). Someone else may be editing it. Re-read the file and reapply your change.`,
  );
}

/** Forgets a file kt removed (apply_patch delete, undo of a created file). */
export function dropStamp(ctx: StateCtx, real: string): void {
  stampIndex(ctx).query("DELETE FROM stamps WHERE session = ? AND path = ?").run(ctx.session, real);
}
