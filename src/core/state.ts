// The state directory (SPEC §2): a private folder holding the SQLite index (file stamps,
// processes, read cursors) and, per session, spill files and process logs.
// The index is a cache: if it is missing or corrupt, a fresh one is started.
import { constants, Database } from "bun:sqlite";
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, renameSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

export function resolveStateDir(env: Record<string, string | undefined>, flag?: string): string {
  if (flag) return flag;
  if (env.KT_STATE_DIR) return env.KT_STATE_DIR;
  if (env.XDG_STATE_HOME) return join(env.XDG_STATE_HOME, "kt");
  return join(env.HOME || homedir(), ".local", "state", "kt");
}

/** Creates `dir` (and parents) private to the user. */
export function ensurePrivateDir(dir: string): void {
  try {
    if (statSync(dir).isDirectory()) return;
  } catch {
    // Missing: created below.
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
}

/** `<state>/sessions/<session>/<sub>`, created private. */
export function sessionDir(stateDir: string, session: string, sub?: string): string {
  const dir = sub ? join(stateDir, "sessions", safeName(session), sub) : join(stateDir, "sessions", safeName(session));
  ensurePrivateDir(dir);
  return dir;
}

/** Session ids and call ids become file names: keep them to a safe alphabet. */
export function safeName(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9._-]/g, "_").replace(/^\.+/, "_");
  return cleaned.slice(0, 120) || "_";
}

// Each module owning tables registers its schema here; migrations run once per index file.
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

/** The state directory cannot be used at all: a fault of the environment, not of a tool call. */
export class StateError extends Error {
  override name = "StateError";
}

export interface IndexOptions {
  /** Human-facing warning sink (stderr). */
  warn(message: string): void;
}

/** The index of `stateDir`, opened once per process. */
export function openIndex(stateDir: string, opts: IndexOptions): Database {
  const cached = open.get(stateDir);
  if (cached) return cached;
  const file = join(stateDir, "index.db");
  let db: Database;
  try {
    ensurePrivateDir(stateDir);
    db = connect(file);
  } catch (error) {
    if (!isCorruption(error)) {
      throw new StateError(`kt cannot use its state directory ${stateDir}: ${(error as Error).message}. Set KT_STATE_DIR (or --state-dir) to a writable directory.`);
    }
    const aside = `${file}.corrupt-${Date.now()}`;
    for (const suffix of ["", "-wal", "-shm"]) {
      if (existsSync(file + suffix)) renameSync(file + suffix, aside + suffix);
    }
    opts.warn(`kt: the state index at ${file} was unreadable (${(error as Error).message}); started a fresh one and kept the old file as ${aside}. Files must be read again before they are edited.`);
    db = connect(file);
  }
  open.set(stateDir, db);
  return db;
}

function connect(file: string): Database {
  if (!existsSync(file)) closeSync(openSync(file, "a", 0o600));
  const db = new Database(file, { create: true });
  db.exec("PRAGMA busy_timeout = 10000");
  // The index is a cache that is rebuilt when damaged, so it trades power-loss durability
  // for start-up time: no fsync, and the WAL stays in place between the many short kt
  // processes instead of being checkpointed, deleted and recreated by each one.
  db.exec("PRAGMA synchronous = OFF");
  db.fileControl(constants.SQLITE_FCNTL_PERSIST_WAL, 1);
  const version = (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
  if (version !== SCHEMA_VERSION) {
    db.exec("PRAGMA journal_mode = WAL");
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
      db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
      db.exec("COMMIT");
    } catch (error) {
      db.exec("ROLLBACK");
      throw error;
    }
  }
  return db;
}

function isCorruption(error: unknown): boolean {
  const text = String((error as { code?: string })?.code ?? "") + " " + String((error as Error)?.message ?? "");
  return /SQLITE_CORRUPT|SQLITE_NOTADB|not a database|malformed/i.test(text);
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
    db.exec("ROLLBACK");
    throw error;
  }
}
