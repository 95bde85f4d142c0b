// The state directory (SPEC §2): a private folder holding the SQLite index (file stamps,
// processes, read cursors) and, per session, spill files and process logs.
// The index is a cache: if it is missing or corrupt, a fresh one is started, and said so
// on stderr (a first run is told from a deleted index by the marker beside it).
import type { Database } from "bun:sqlite";
import { closeSync, constants as fs, lstatSync, renameSync } from "node:fs";
import { join } from "node:path";
import { ensureStateDir, lstatOrUndefined, openStateFile, privateSubdir, StateError, StateFileError, touchStateFile } from "./statefs.ts";

export { ensureStateDir, StateError } from "./statefs.ts";

export function resolveStateDir(env: Record<string, string | undefined>, flag?: string): string {
  if (flag) return flag;
  if (env.KT_STATE_DIR) return env.KT_STATE_DIR;
  if (env.XDG_STATE_HOME) return join(env.XDG_STATE_HOME, "kt");
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return join(env.HOME || (require("node:os") as typeof import("node:os")).homedir(), ".local", "state", "kt");
}

/** `<state>/sessions/<session>/<sub>`, each level created private or checked to be (core/statefs.ts). */
export function sessionDir(stateDir: string, session: string, sub?: string): string {
  return sub ? privateSubdir(stateDir, "sessions", safeName(session), sub) : privateSubdir(stateDir, "sessions", safeName(session));
}

/**
 * Session ids and call ids become file names, one-to-one: two names never share a directory
 * (ending one session must not delete another's files). Safe characters stay as they are;
 * every other byte, "%" included, is written %XX, and a leading dot too. A name too long
 * for a file name keeps a prefix plus a hash of the whole ("~" appears in no other form).
 */
export function safeName(name: string): string {
  return /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,119}$/.test(name) ? name : escapedName(name);
}

/** safeName of a name that is not safe as it is; apart because it names Buffer, which a call that never needs it should not set up. */
function escapedName(name: string): string {
  let out = "";
  for (const byte of Buffer.from(name, "utf8")) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9._-]/.test(c) && !(out === "" && c === ".") ? c : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  if (out === "") return "%";
  if (out.length <= 120) return out;
  return `${out.slice(0, 100)}~${new Bun.CryptoHasher("sha256").update(name).digest("hex").slice(0, 16)}`;
}

// The tables of stamps and processes (process/registry.ts holds their SQL; core/history.ts
// creates and checks its own table). A layout change bumps the version: the index is a
// cache, so an older one is dropped and rebuilt once, never migrated.
const SCHEMA_VERSION = 2;
const SCHEMA = `
CREATE TABLE IF NOT EXISTS stamps (
  session TEXT NOT NULL,
  path TEXT NOT NULL,
  mtime_ms REAL NOT NULL,
  size INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  at REAL NOT NULL,
  PRIMARY KEY (session, path)
);
CREATE TABLE IF NOT EXISTS processes (
  key INTEGER PRIMARY KEY AUTOINCREMENT,
  session TEXT NOT NULL,
  id TEXT,
  seq INTEGER,
  origin TEXT NOT NULL,
  command TEXT NOT NULL,
  cwd TEXT NOT NULL,
  log_path TEXT NOT NULL,
  stdin_path TEXT,
  pid INTEGER,
  pid_start TEXT,
  supervisor_pid INTEGER,
  supervisor_start TEXT,
  status TEXT NOT NULL,
  exit_code INTEGER,
  signal TEXT,
  error TEXT,
  started_at REAL NOT NULL,
  ended_at REAL,
  stop_requested INTEGER NOT NULL DEFAULT 0,
  cursor_byte INTEGER NOT NULL DEFAULT 0,
  cursor_line INTEGER NOT NULL DEFAULT 0,
  notified INTEGER NOT NULL DEFAULT 0,
  UNIQUE (session, id)
);
CREATE INDEX IF NOT EXISTS processes_pending ON processes (session) WHERE notified = 0 AND id IS NOT NULL;
CREATE TABLE IF NOT EXISTS process_seq (
  session TEXT PRIMARY KEY,
  next INTEGER NOT NULL
);
`;

const open = new Map<string, Database>();

export interface IndexOptions {
  /** Human-facing warning sink (stderr). */
  warn(message: string): void;
}

/** Closes this process's handle of `stateDir`'s index: the next openIndex opens the file afresh (it was replaced). */
export function forgetIndex(stateDir: string): void {
  const db = open.get(stateDir);
  open.delete(stateDir);
  try {
    db?.close();
  } catch {
    // Closed already.
  }
}

/** The index of `stateDir`, opened once per process. */
export function openIndex(stateDir: string, opts: IndexOptions): Database {
  const cached = open.get(stateDir);
  if (cached) return cached;
  const file = join(stateDir, "index.db");
  let db: Database;
  let lost = false;
  ensureStateDir(stateDir);
  try {
    ({ db, lost } = connect(file));
  } catch (error) {
    if (!isCorruption(error)) throw new StateError(stateProblem(stateDir, error));
    const aside = `${file}.corrupt-${Date.now()}`;
    // lstat, not exists: a dangling symbolic link is set aside too, or it would be met again.
    for (const suffix of ["", "-wal", "-shm"]) {
      if (lstatOrUndefined(file + suffix)) renameSync(file + suffix, aside + suffix);
    }
    opts.warn(`kt: the state index at ${file} was unreadable (${(error as Error).message}); started a fresh one and kept the old file as ${aside}. Files must be read again before they are edited.`);
    try {
      ({ db } = connect(file)); // Said already: the index was unreadable, not missing.
    } catch (again) {
      throw new StateError(stateProblem(stateDir, again));
    }
    forgetLoggedReads(db, stateDir);
  }
  if (lost) {
    opts.warn(`kt: the state index at ${file} was missing (deleted since kt last used ${stateDir}); started a fresh one. Files must be read again before they are edited.`);
    forgetLoggedReads(db, stateDir);
  }
  open.set(stateDir, db);
  return db;
}

/** The log of reads' stamps beside the index (core/stamps.ts); `${STAMP_LOG}.old` is one set aside. */
export const STAMP_LOG = "stamps.log";
/** Each fold's place in a log, by the log's inode (a log made anew is folded from its start). */
export const LOG_TABLE = "CREATE TABLE IF NOT EXISTS stamp_logs (name TEXT PRIMARY KEY, ino INTEGER NOT NULL, folded INTEGER NOT NULL)";

/**
 * A fresh index in place of a lost or unreadable one knows no stamp, as its warning says:
 * the reads logged until now are taken as folded, so that files are read again (a stamp
 * the lost index held, a write's, may be newer than any line of the log).
 */
function forgetLoggedReads(db: Database, stateDir: string): void {
  try {
    db.exec(LOG_TABLE);
    for (const name of [`${STAMP_LOG}.old`, STAMP_LOG]) {
      const st = lstatOrUndefined(join(stateDir, name));
      if (st?.isFile()) db.query("INSERT OR REPLACE INTO stamp_logs (name, ino, folded) VALUES (?, ?, ?)").run(name, st.ino, st.size);
    }
  } catch {
    // Only more cautious if it fails: the reads logged are folded into the fresh index.
  }
}

/**
 * Written beside the index when kt creates it, and never removed by kt: an index that is
 * missing while this is present was deleted, not yet made (SPEC §2 says so on stderr).
 */
const MARKER = "index.made";

/** Leaves the marker beside a new index; true when it was there already (the index was deleted). */
function markCreated(file: string): boolean {
  const marker = join(file, "..", MARKER);
  try {
    if (lstatOrUndefined(marker)) return true;
    touchStateFile(marker);
  } catch {
    // The marker only improves a warning; a state directory that refuses it still works.
  }
  return false;
}

/** The index is not what kt built: set aside and rebuilt like a corrupt file. */
class DamagedIndex extends Error {
  override name = "DamagedIndex";
}

/**
 * bun:sqlite, loaded when an index is first opened: a call that never opens one (a read,
 * whose stamp goes to the log of core/stamps.ts) does not pay for setting SQLite up.
 */
function sqlite(): typeof import("bun:sqlite") {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require("bun:sqlite") as typeof import("bun:sqlite");
}

/** SQLite's flag for refusing a symbolic link as the database (3.31+), where bun:sqlite does not name it. */
const SQLITE_OPEN_NOFOLLOW = 0x01000000;

/** Opens (creating or migrating) the index; `lost`: it was created where one had been deleted. */
function connect(file: string): { db: Database; lost: boolean } {
  let lost = false;
  let kind: "missing" | "file" | "other" = "missing";
  try {
    kind = lstatSync(file).isFile() ? "file" : "other";
  } catch {
    // Missing: created below.
  }
  if (kind === "other") throw new DamagedIndex("it is not a regular file (a symbolic link or a device)");
  // SQLite opens its -wal and -shm itself: anything but a regular file there is set aside with the index.
  for (const suffix of ["-wal", "-shm"]) {
    const st = lstatOrUndefined(file + suffix);
    if (st && !st.isFile()) throw new DamagedIndex(`its ${suffix.slice(1)} file is not a regular file (a symbolic link or a device)`);
  }
  if (kind === "missing") {
    try {
      // Exclusive, so that of several kt calls starting on one state directory only the one
      // that made the index asks the marker whether an index was deleted here.
      closeSync(openStateFile(file, fs.O_WRONLY | fs.O_CREAT | fs.O_EXCL));
      lost = markCreated(file);
    } catch (error) {
      // Another kt made it between the lstat and here: a new index, not a lost one.
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  } else {
    // Checked as every state file is: this user's, and readable by nobody else.
    try {
      closeSync(openStateFile(file, fs.O_RDONLY | fs.O_NONBLOCK));
    } catch (error) {
      if (error instanceof StateFileError) throw new DamagedIndex("it is not a file of yours (another user's, or swapped for a link)");
      throw error;
    }
  }
  // NOFOLLOW: a link swapped in after the check above is refused by SQLite itself.
  const { Database, constants } = sqlite();
  const db = new Database(file, constants.SQLITE_OPEN_READWRITE | constants.SQLITE_OPEN_CREATE | ((constants as Record<string, number>).SQLITE_OPEN_NOFOLLOW ?? SQLITE_OPEN_NOFOLLOW));
  // The index is a cache that is rebuilt when damaged, so it trades power-loss durability
  // for start-up time: no fsync, and the WAL stays in place between the many short kt
  // processes instead of being checkpointed, deleted and recreated by each one.
  db.exec("PRAGMA busy_timeout = 10000; PRAGMA synchronous = OFF");
  db.fileControl(constants.SQLITE_FCNTL_PERSIST_WAL, 1);
  const header = db.query("SELECT * FROM pragma_user_version, pragma_schema_version, pragma_application_id").get() as Header;
  const version = header.user_version;
  if (version !== SCHEMA_VERSION) {
    whenUnlocked(() => db.exec("PRAGMA journal_mode = WAL"));
    db.exec("BEGIN IMMEDIATE");
    try {
      // Re-read under the lock (a racing kt may have migrated already). The index is a
      // cache, so an older layout is dropped and rebuilt, never patched in place.
      const now = (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
      if (now !== SCHEMA_VERSION && now !== 0) {
        const tables = db.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as { name: string }[];
        for (const { name } of tables) db.exec(`DROP TABLE IF EXISTS "${name}"`);
      }
      if (now !== SCHEMA_VERSION) db.exec(SCHEMA);
      // core/stamps.ts's own table, not part of the layout checked (an index made before it lacks it, and gets it on first use).
      db.exec(LOG_TABLE);
      db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
      db.exec("COMMIT");
    } catch (error) {
      db.exec("ROLLBACK");
      throw error;
    }
  }
  // The layout check is skipped while the schema is as it was when kt last checked it.
  if (version === SCHEMA_VERSION && header.application_id !== 0 && header.application_id === header.schema_version) return { db, lost };
  if (layout(db) !== expectedLayout()) {
    db.close();
    throw new DamagedIndex("its tables are not the ones kt creates (one dropped or altered)");
  }
  try {
    // Made before the cookie is noted, so that its first use does not move the cookie.
    db.exec(LOG_TABLE);
  } catch {
    // A read-only index: the logs are read beside it (core/stamps.ts).
  }
  rememberChecked(db);
  return { db, lost };
}

interface Header {
  user_version: number;
  schema_version: number;
  application_id: number;
}

/**
 * Notes in the index's header (its application id) the schema cookie its layout was checked
 * at. SQLite changes the cookie with every change of any table or index, by kt (history's
 * table) or by anyone else, and writing the application id does not change it: while the
 * two agree, the tables are the ones checked, and a call is spared the check (about 1 ms).
 */
function rememberChecked(db: Database): void {
  try {
    const { schema_version } = db.query("PRAGMA schema_version").get() as { schema_version: number };
    db.exec(`PRAGMA application_id = ${schema_version | 0}`);
  } catch {
    // Only a saving: the next call checks the layout again.
  }
}

/**
 * Runs `fn` again while the index is busy, for up to 10 s. Switching a new index to WAL
 * needs it to itself and SQLite answers "database is locked" at once instead of waiting
 * for the busy timeout, so two kt calls on a fresh state directory would otherwise race.
 */
function whenUnlocked(fn: () => void): void {
  const deadline = Date.now() + 10_000;
  for (let pause = 2; ; pause = Math.min(pause * 2, 50)) {
    try {
      return fn();
    } catch (error) {
      if (!/BUSY|LOCKED|database is locked/i.test(`${(error as { code?: string })?.code ?? ""} ${(error as Error)?.message}`) || Date.now() > deadline) throw error;
      Bun.sleepSync(pause);
    }
  }
}

/**
 * The tables SCHEMA creates, as the index has them, with their columns, in one string:
 * "table:col,col;…". Tables other modules own (history) keep their own layout checks.
 */
function layout(db: Database): string {
  const own = new Set(expectedLayout().split(";").map((t) => t.slice(0, t.indexOf(":"))));
  const rows = db
    .query("SELECT m.name AS t, p.name AS c FROM sqlite_master m JOIN pragma_table_info(m.name) p WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' ORDER BY m.name, p.cid")
    .all() as { t: string; c: string }[];
  const tables = new Map<string, string[]>();
  for (const { t, c } of rows) if (own.has(t)) tables.set(t, [...(tables.get(t) ?? []), c]);
  return [...tables].map(([t, cs]) => `${t}:${cs.join(",")}`).join(";");
}

let expected: string | undefined;

/** The layout SCHEMA creates, read from its text (so that the two never disagree). */
function expectedLayout(): string {
  if (expected !== undefined) return expected;
  const tables: string[] = [];
  for (const m of SCHEMA.matchAll(/CREATE TABLE IF NOT EXISTS (\w+) \(([^;]*)\);/g)) {
    const columns = m[2]!
      .split("\n")
      .map((line) => line.trim().split(/\s+/)[0] ?? "")
      .filter((word) => /^[a-z_0-9]+$/.test(word));
    tables.push(`${m[1]}:${columns.join(",")}`);
  }
  expected = tables.sort().join(";");
  return expected;
}

function isCorruption(error: unknown): boolean {
  if (error instanceof DamagedIndex) return true;
  const text = String((error as { code?: string })?.code ?? "") + " " + String((error as Error)?.message ?? "");
  return /SQLITE_CORRUPT|SQLITE_NOTADB|not a database|malformed/i.test(text);
}

/** An error of the state directory's index or files, as opposed to a bug in kt. */
export function isStateFault(error: unknown): boolean {
  if (error instanceof StateError || error instanceof StateFileError) return true;
  const name = (error as Error)?.name;
  return name === "SQLiteError";
}

/**
 * What went wrong with the state directory, and what to do about it: the index is a cache
 * of facts about files, so a person can always point kt at another directory.
 */
export function stateProblem(stateDir: string, error: unknown): string {
  // Said already, whole: wrapping it again would repeat it.
  if (error instanceof StateError) return error.message;
  const message = ((error as Error)?.message ?? String(error)).replace(/\.$/, "");
  const text = `${String((error as { code?: string })?.code ?? "")} ${message}`;
  const head = `kt cannot use its state directory ${stateDir}:`;
  if (/READONLY|read-only|readonly|EROFS|EACCES|EPERM/i.test(text)) {
    return `${head} it cannot be written (${message}). Make it writable, or set KT_STATE_DIR (or --state-dir) to a writable directory.`;
  }
  if (/BUSY|LOCKED|database is locked/i.test(text)) {
    return `${head} its index ${join(stateDir, "index.db")} stayed locked by another process for over 10 s (${message}). Let the other kt finish, or set KT_STATE_DIR (or --state-dir) to another directory.`;
  }
  if (/FULL|ENOSPC|EDQUOT|disk is full|disk I\/O|IOERR|cannot rollback/i.test(text)) {
    return `${head} the disk holding it is full or failing (${message}). Free some space there, or set KT_STATE_DIR (or --state-dir) to a directory on another disk.`;
  }
  return `${head} ${message}. Set KT_STATE_DIR (or --state-dir) to a writable directory.`;
}

/** True when this process has `stateDir`'s index open already (a stamp then goes straight into it). */
export function indexIsOpen(stateDir: string): boolean {
  return open.has(stateDir);
}

/** The index of a context's state directory, warnings going where the context sends them. */
export function index(ctx: { stateDir: string; warn(message: string): void }): Database {
  return openIndex(ctx.stateDir, { warn: ctx.warn });
}

/**
 * Runs `fn` holding the index's write lock: every kt process serializes here, so a
 * check-then-write (stamp re-check, process slot claim, notice claim) is atomic
 * across processes. The lock dies with its process, so a kill never leaves it held.
 */
export function withWriteLock<T>(db: Database, fn: () => T): T {
  db.exec("BEGIN IMMEDIATE");
  try {
    const value = fn();
    db.exec("COMMIT");
    return value;
  } catch (error) {
    try {
      db.exec("ROLLBACK");
    } catch {
      // A failed COMMIT (a full disk, a read-only file) may have ended the transaction already:
      // the error worth reporting is the first one.
    }
    throw error;
  }
}
