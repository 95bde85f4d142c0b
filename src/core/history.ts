// History (SPEC §7.2): before kt replaces or removes a file, the bytes it had are kept, per
// session and real path, the last HISTORY_KEEP versions. Bytes live under
// <state>/sessions/<id>/history/ (inside the state directory's size cap): a change of one
// file keeps them as a file named by their sha256 (a blob, shared by content), a change of
// more keeps each file it replaces as itself (a hard link, pack-<token>-<n>) where it may, and
// the rest in one pack (pack-<token>, their versions one after another) — see Keeper. The
// index holds one row per change of one file (with where its version lies), and
// the files one change touched share a group, so a whole patch is undone together. This
// module owns the `history` table.
import type { Database } from "bun:sqlite";
import { closeSync, constants, fstatSync, linkSync, readdirSync, readSync, renameSync, statSync, unlink, unlinkSync, writeSync, type BigIntStats } from "node:fs";
import { join } from "node:path";
import { sessionDir } from "./state.ts";
import { lstatOrUndefined, openStateFile, readStateFile, writeStateFile } from "./statefs.ts";
import { sha256 } from "./stamps.ts";

export const HISTORY_KEEP = 10;

export type HistoryState = "live" | "undone" | "undo";

export interface HistoryRow {
  seq: number;
  grp: number;
  path: string;
  display: string;
  tool: string;
  at: number;
  /** sha256 of the bytes kept, or null when the file did not exist before this change. */
  prevSha: string | null;
  prevMode: number | null;
  /** sha256 of what kt wrote, or null when this change removed the file. */
  newSha: string | null;
  added: number;
  removed: number;
  /** live: can be undone; undone: was; undo: this change was itself an undo. */
  state: HistoryState;
  /** The identity (dirIdentity) of the directory kt wrote the file in; null in rows of an older kt. */
  dir: string | null;
  /** Where in a pack the kept bytes lie; null: in the blob named prevSha. */
  prevAt: PackedAt | null;
}

/** Where a kept version lies in a pack: its name in the history folder, and the bytes' offset and length. */
export interface PackedAt {
  pack: string;
  off: number;
  len: number;
}

const TABLE = `
CREATE TABLE IF NOT EXISTS history (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  session TEXT NOT NULL,
  grp INTEGER NOT NULL,
  path TEXT NOT NULL,
  display TEXT NOT NULL,
  tool TEXT NOT NULL,
  at REAL NOT NULL,
  prev_sha TEXT,
  prev_mode INTEGER,
  new_sha TEXT,
  added INTEGER NOT NULL,
  removed INTEGER NOT NULL,
  state TEXT NOT NULL,
  token TEXT,
  dir TEXT,
  pack TEXT,
  pack_off INTEGER,
  pack_len INTEGER
);
CREATE INDEX IF NOT EXISTS history_path ON history (session, path, seq);
CREATE INDEX IF NOT EXISTS history_grp ON history (session, grp);
CREATE INDEX IF NOT EXISTS history_pack ON history (session, pack) WHERE pack IS NOT NULL;
`;

const ready = new WeakSet<Database>();

/** The table is created on first use, so the index's own schema (and its version) stays untouched. */
const COLUMNS = ["seq", "session", "grp", "path", "display", "tool", "at", "prev_sha", "prev_mode", "new_sha", "added", "removed", "state", "token", "dir", "pack", "pack_off", "pack_len"];
const PACK_COLUMNS = 3;

function table(db: Database): Database {
  if (!ready.has(db)) {
    // A table of another layout (an older kt) is rebuilt, as the index's own tables are:
    // losing old history beats failing every write.
    const have = (db.query("PRAGMA table_info(history)").all() as { name: string }[]).map((c) => c.name);
    // The tables before directories' identities, and before packs, gain the columns, their rows kept.
    const older = (n: number) => have.join() === COLUMNS.slice(0, -n).join();
    if (older(PACK_COLUMNS + 1)) db.exec("ALTER TABLE history ADD COLUMN dir TEXT");
    if (older(PACK_COLUMNS + 1) || older(PACK_COLUMNS)) db.exec("ALTER TABLE history ADD COLUMN pack TEXT; ALTER TABLE history ADD COLUMN pack_off INTEGER; ALTER TABLE history ADD COLUMN pack_len INTEGER");
    else if (have.length > 0 && have.join() !== COLUMNS.join()) db.exec("DROP TABLE history");
    db.exec(TABLE);
    // Created inside a transaction that may yet roll back: check again next time.
    if (!db.inTransaction) ready.add(db);
  }
  return db;
}

interface Ctx {
  stateDir: string;
  session: string;
}

export function blobDir(ctx: Ctx): string {
  return sessionDir(ctx.stateDir, ctx.session, "history");
}

export interface Replaced {
  real: string;
  display: string;
  /** The bytes before the change, or null when the file did not exist. */
  previous: Uint8Array | null;
  previousMode: number | null;
  /** The bytes after it, or null when the change removes the file. */
  next: Uint8Array | null;
  /** lineChanges(previous, next), when the caller worked it out already (outside the lock). */
  counts?: LineCounts;
  /** dirIdentity of the directory the file is written in, from the open descriptor the change was written through. */
  dir: string | null;
  /** Where `previous` was kept by the change's Keeper (a link or its pack), if it was: no blob is written. */
  kept?: PackedAt;
}

/**
 * A directory's identity (device and inode): undo compares it with the directory as it is
 * then, so that a directory replaced since (or a link put on the way) is never written
 * through as if it were the one kt wrote in. `of`: a path, or an open descriptor.
 */
export function dirIdentity(of: string | number): string | null {
  let st: BigIntStats;
  try {
    st = typeof of === "number" ? fstatSync(of, { bigint: true }) : statSync(of, { bigint: true });
  } catch {
    return null;
  }
  return `${st.dev}:${st.ino}`;
}

export interface LineCounts {
  added: number;
  removed: number;
}

/**
 * A file a change replaces, as it was when staged: when it is this user's, has no other
 * name and holds exactly the bytes the change was computed from, its version is kept by a
 * second name for the file itself (a hard link in the history folder), not a copy.
 */
export interface LinkSource {
  /** The file, reached through its verified directory (commit.ts's target). */
  path: string;
  dev: number;
  ino: number;
}

/**
 * The kept versions of one change, written before the write lock is taken (keep: a window
 * of files at a time), so the lock is held only for the index rows. A change of one file
 * keeps its version as a blob of its own (shared by content with the file's other changes).
 * A change of more keeps each file it replaces that it may (LinkSource) as a hard link to the
 * file itself, `pack-<token>-<n>`: the rename then frees nothing (the file lives on as its own
 * kept version, freed when its history goes), and no byte is copied — on a VM's ext4 freeing
 * a replaced file costs ~85 µs, copying it into a pack more. The others it keeps in one pack,
 * `pack-<token>`, appended window by window: one file created for the change, not one per
 * file. A link or pack whose change fails is removed (discard); one its change no longer
 * needs (the file was worked out again under the lock) is removed too (settle).
 */
export class Keeper {
  private fd: number | undefined;
  private size = 0;
  private readonly at = new Map<Uint8Array, PackedAt>();
  private readonly byLength = new Map<number, Uint8Array[]>();
  private readonly name: string;
  /** Links made, and which of them a row or the journal was told of. */
  private readonly links: string[] = [];
  private readonly used = new Set<string>();

  /** `files`: how many versions the change keeps (files it replaces or removes). */
  constructor(
    private readonly ctx: Ctx,
    files: number,
    token: string,
    private readonly hash: (bytes: Uint8Array) => string = sha256,
  ) {
    this.name = files > 1 ? `pack-${token}` : "";
  }

  /** `from[i]`: where previous[i] may be linked from, when it may. */
  keep(previous: readonly (Uint8Array | null)[], from: readonly (LinkSource | undefined)[] = []): void {
    const dir = blobDir(this.ctx);
    for (const [i, bytes] of previous.entries()) {
      if (bytes === null) continue;
      if (!this.name) {
        putBlob(dir, this.hash(bytes), bytes, true);
        continue;
      }
      if (this.at.has(bytes)) continue;
      const source = from[i];
      if (source && this.link(dir, source, bytes)) continue;
      // Known by the array, not by its hash: nothing here waits for hashing (the commit hashes
      // while the disk flushes). Files of one content are kept once, found by their length
      // and a comparison of bytes (a few candidates at most).
      const alike = this.byLength.get(bytes.length) ?? [];
      const same = alike.slice(0, SAME_LENGTH_TRIED).find((kept) => Buffer.compare(kept, bytes) === 0);
      if (same) {
        this.at.set(bytes, this.at.get(same)!);
        continue;
      }
      this.fd ??= openStateFile(join(dir, this.name), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL);
      writeAll(this.fd, bytes);
      this.at.set(bytes, { pack: this.name, off: this.size, len: bytes.length });
      this.size += bytes.length;
      alike.push(bytes);
      this.byLength.set(bytes.length, alike);
    }
  }

  /**
   * A second name for the file in the history folder, kept only when it names the very file
   * staged (same device and inode), a regular file with no name but its own and this one.
   * Anything else (another file system, a link the system refuses, a file swapped meanwhile)
   * is undone, and the bytes are copied instead. A state-directory fault is thrown.
   */
  private link(dir: string, source: LinkSource, bytes: Uint8Array): boolean {
    const name = `${this.name}-${this.links.length}`;
    const path = join(dir, name);
    try {
      linkSync(source.path, path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // The history folder itself cannot take a name: copying there fails too, and says why.
      if (code === "ENOSPC" || code === "EDQUOT" || code === "EROFS" || code === "EIO") throw error;
      return false;
    }
    const st = lstatOrUndefined(path);
    if (!(st?.isFile() && st.dev === source.dev && st.ino === source.ino && st.nlink === 2 && st.size === bytes.length)) {
      removeQuietly(path);
      return false;
    }
    this.links.push(name);
    this.at.set(bytes, { pack: name, off: 0, len: bytes.length });
    return true;
  }

  /**
   * Where `bytes` (an array keep was given) were kept, if in a link or the pack. Call under
   * the lock: a pack the size cap removed (or cut) since it was written is kept nowhere, and
   * its versions are then kept as blobs.
   */
  where(bytes: Uint8Array): PackedAt | undefined {
    const at = this.at.get(bytes);
    if (at === undefined || (at.pack === this.name && !this.present())) return undefined;
    this.used.add(at.pack);
    return at;
  }

  /** Whether `bytes` are kept as the file itself: its rename frees nothing. */
  linked(bytes: Uint8Array): boolean {
    const at = this.at.get(bytes);
    // Every name but the pack's is a link; one settle removed is no longer the file's.
    return at !== undefined && at.pack !== this.name && this.used.has(at.pack);
  }

  private checked: boolean | undefined;
  private present(): boolean {
    if (this.checked === undefined) {
      this.close();
      const st = lstatOrUndefined(join(blobDir(this.ctx), this.name));
      this.checked = st !== undefined && st.isFile() && st.size === this.size;
    }
    return this.checked;
  }

  close(): void {
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
  }

  /** After the rows are recorded: the links no row refers to go (their files were worked out again under the lock). */
  settle(): void {
    this.close();
    const dir = blobDir(this.ctx);
    for (const name of this.links) if (!this.used.has(name)) removeQuietly(join(dir, name));
  }

  /** The change failed: its pack and links go (no row refers to them). */
  discard(): void {
    this.close();
    if (!this.name) return;
    const dir = blobDir(this.ctx);
    for (const name of this.links) removeQuietly(join(dir, name));
    if (this.size > 0) removeQuietly(join(dir, this.name));
  }
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Never made, or gone.
  }
}

/** Kept versions of one length compared with a new one before it is written again. */
const SAME_LENGTH_TRIED = 8;

function writeAll(fd: number, bytes: Uint8Array): void {
  for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off, bytes.length - off);
}

/** A new group id for one change of one or more files. Call inside the write lock. */
export function newGroup(db: Database, session: string): number {
  const row = table(db).query("SELECT COALESCE(MAX(grp), 0) + 1 AS g FROM history WHERE session = ?").get(session) as { g: number };
  return row.g;
}

/**
 * Kept bytes that no row refers to any more once a change's rows are in (older versions
 * past HISTORY_KEEP, forgotten). They are removed only once the change is installed: were
 * they removed at once, a change that then fails would roll back to rows whose bytes are
 * gone. A pack (or link) bears the name of the change that made it, so no later row can
 * come to refer to it: it goes after the transaction (while the disk flushes a change of
 * many files). A blob is named by its content, which another call may be about to keep
 * again: it goes under the lock, once the change is installed.
 */
export interface LetGo {
  packs: string[];
  blobs: string[];
}

/** Removes kept bytes a change let go (LetGo), now. */
export function removeLetGo(paths: readonly string[]): void {
  for (const path of paths) removeQuietly(path);
}

/** Removes kept bytes a change let go (LetGo) in the runtime's thread pool, while the caller's own work goes on; never rejects. */
export function removeLetGoAsync(paths: readonly string[]): Promise<void> {
  return Promise.all(paths.map((path) => new Promise<void>((resolve) => unlink(path, () => resolve())))).then(() => undefined);
}

/**
 * Keeps the previous bytes of every file of one change and records it. Call inside the
 * write lock, before the change is installed: if the lock's transaction rolls back, so
 * does the record (a kept blob without a row is harmless and shared by content). Returns
 * the kept bytes no row refers to any more, for the caller to remove once the change is
 * installed (LetGo).
 */
export function recordChange(
  ctx: Ctx,
  db: Database,
  grp: number,
  tool: string,
  files: readonly Replaced[],
  state: HistoryState = "live",
  token: string | null = null,
  hash: (bytes: Uint8Array) => string = sha256,
): LetGo {
  table(db);
  const dir = blobDir(ctx);
  const insert = db.query(
    "INSERT INTO history (session, grp, path, display, tool, at, prev_sha, prev_mode, new_sha, added, removed, state, token, dir, pack, pack_off, pack_len) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );
  for (const f of files) {
    let prevSha: string | null = null;
    if (f.previous !== null) {
      prevSha = hash(f.previous);
      if (!f.kept) putBlob(dir, prevSha, f.previous);
    }
    const { added, removed } = f.counts ?? lineChanges(f.previous, f.next);
    const at = f.kept;
    insert.run(ctx.session, grp, f.real, f.display, tool, Date.now(), prevSha, f.previousMode, f.next === null ? null : hash(f.next), added, removed, state, token, f.dir, at?.pack ?? null, at?.off ?? null, at?.len ?? null);
  }
  const letGo: LetGo = { packs: [], blobs: [] };
  for (const path of overKept(ctx, db, files.map((f) => f.real))) prune(ctx, db, path, letGo);
  return letGo;
}

/** Paths are asked about this many at a time (SQLite's limit on a statement's parameters is far above). */
const PATHS_PER_QUERY = 500;

/**
 * Of `paths`, those with more than HISTORY_KEEP versions: one query for a change's files,
 * rather than one per file (a patch of 20 files asked 20 times, and rarely has any to drop).
 */
function overKept(ctx: Ctx, db: Database, paths: readonly string[]): string[] {
  const unique = [...new Set(paths)];
  const out: string[] = [];
  for (let i = 0; i < unique.length; i += PATHS_PER_QUERY) {
    const some = unique.slice(i, i + PATHS_PER_QUERY);
    const rows = db
      .query(`SELECT path FROM history WHERE session = ? AND path IN (${some.map(() => "?").join(", ")}) GROUP BY path HAVING COUNT(*) > ?`)
      .all(ctx.session, ...some, HISTORY_KEEP) as { path: string }[];
    const over = new Set(rows.map((r) => r.path));
    // In the order the change named them, as each was pruned after its own row before.
    for (const p of some) if (over.has(p)) out.push(p);
  }
  return out;
}

/** Only the newest HISTORY_KEEP versions of a file are kept; what only the older ones referred to is let go. */
function prune(ctx: Ctx, db: Database, path: string, letGo: LetGo): void {
  const old = db
    .query("SELECT seq, prev_sha, pack FROM history WHERE session = ? AND path = ? ORDER BY seq DESC LIMIT -1 OFFSET ?")
    .all(ctx.session, path, HISTORY_KEEP) as Forgotten[];
  const dir = blobDir(ctx);
  for (const row of old) forget(db, ctx.session, row, dir, letGo);
}

interface Forgotten {
  seq: number;
  prev_sha: string | null;
  pack: string | null;
}

/**
 * Deletes a history row; the pack or blob in `dir` (the session's history folder) that held
 * its kept bytes is let go when no other row of the session refers to it any more.
 */
function forget(db: Database, session: string, row: Forgotten, dir: string, letGo: LetGo): void {
  db.query("DELETE FROM history WHERE seq = ?").run(row.seq);
  if (row.pack !== null) {
    if (!db.query("SELECT 1 FROM history WHERE session = ? AND pack = ? LIMIT 1").get(session, row.pack)) letGo.packs.push(join(dir, row.pack));
  } else if (row.prev_sha !== null) {
    if (!db.query("SELECT 1 FROM history WHERE session = ? AND prev_sha = ? AND pack IS NULL LIMIT 1").get(session, row.prev_sha)) letGo.blobs.push(join(dir, row.prev_sha));
  }
}

/**
 * Lines added and removed, counted as multisets: cheap, and equal to a diff's counts unless
 * lines moved. Any run of whole lines both sides hold cancels out of such a count, so the
 * runs a change leaves alone (the head and tail of the file, and long runs between its
 * edits, found from a line in the middle of what is left) are set aside unsplit, and only
 * the lines around the edits are split and counted (a patch changes a few lines of each
 * file; counting all of them was most of the cost of recording it). `minPiece`: what is left
 * shorter than this (bytes) is counted as it is.
 */
export function lineChanges(before: Uint8Array | null, after: Uint8Array | null, minPiece = 512): LineCounts {
  // A file added or removed whole: its lines are counted, never decoded (a 60 MB file would be held as text and as an array of its lines).
  if (before === null || before.length === 0) return { added: lineCount(after ?? EMPTY), removed: 0 };
  if (after === null || after.length === 0) return { added: 0, removed: lineCount(before) };
  const olds: Uint8Array[] = [];
  const news: Uint8Array[] = [];
  pieces(before ?? EMPTY, after ?? EMPTY, olds, news, minPiece, 8);
  return countChanges(olds, news);
}

/**
 * Appends to `olds` and `news` the parts of `a` and `b` left once common whole-line runs are
 * set aside: each part starts a line and ends one (or its text).
 */
function pieces(a: Uint8Array, b: Uint8Array, olds: Uint8Array[], news: Uint8Array[], minPiece: number, depth: number): void {
  const head = lineStartAtOrBefore(a, commonPrefix(a, b));
  const tail = commonSuffixLines(a, b, head);
  a = a.subarray(head, a.length - tail);
  b = b.subarray(head, b.length - tail);
  const run = depth > 0 && a.length >= minPiece && b.length >= minPiece ? commonRunAround(a, b) : undefined;
  if (!run) {
    olds.push(a);
    news.push(b);
    return;
  }
  pieces(a.subarray(0, run.a), b.subarray(0, run.b), olds, news, minPiece, depth - 1);
  pieces(a.subarray(run.a + run.length), b.subarray(run.b + run.length), olds, news, minPiece, depth - 1);
}

/**
 * A run of whole lines that `a` and `b` both hold: the line in the middle of `a`, found at a
 * line start of `b`, grown both ways while the bytes agree, cut to whole lines.
 */
function commonRunAround(a: Uint8Array, b: Uint8Array): { a: number; b: number; length: number } | undefined {
  const start = lineStartAtOrBefore(a, a.length >>> 1);
  const end = a.indexOf(10, start);
  if (end === -1) return undefined;
  const line = Buffer.from(a.buffer, a.byteOffset + start, end + 1 - start);
  const hay = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  let at = hay.indexOf(line);
  while (at > 0 && b[at - 1] !== 10) at = hay.indexOf(line, at + 1);
  if (at === -1) return undefined;
  const back = commonSuffixLines(a.subarray(0, start), b.subarray(0, at), 0);
  const x = a.subarray(start);
  const y = b.subarray(at);
  const forward = lineStartAtOrBefore(x, commonPrefix(x, y));
  return { a: start - back, b: at - back, length: back + forward };
}

const EMPTY = new Uint8Array(0);

/** Lines of `bytes` as countChanges counts them: each line break ends one, and a last line without one counts too. */
function lineCount(bytes: Uint8Array): number {
  if (bytes.length === 0) return 0;
  let n = 0;
  for (let i = bytes.indexOf(10); i !== -1; i = bytes.indexOf(10, i + 1)) n++;
  return bytes[bytes.length - 1] === 10 ? n : n + 1;
}

/** Length of the longest common prefix, by halving: each step is one native comparison. */
function commonPrefix(a: Uint8Array, b: Uint8Array): number {
  let lo = 0;
  let hi = Math.min(a.length, b.length);
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (Buffer.compare(a.subarray(lo, mid), b.subarray(lo, mid)) === 0) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The start of the line holding offset `n` of `a`: the common prefix cut back to whole lines. */
function lineStartAtOrBefore(a: Uint8Array, n: number): number {
  return n === 0 ? 0 : a.lastIndexOf(10, n - 1) + 1;
}

/**
 * How many bytes of whole lines both end with, past `head`: the common suffix cut forward to
 * just after a line break that both sides have before it (so the lines kept on each side end
 * where the suffix's first line starts).
 */
function commonSuffixLines(a: Uint8Array, b: Uint8Array, head: number): number {
  let lo = 0;
  let hi = Math.min(a.length, b.length) - head;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (Buffer.compare(a.subarray(a.length - mid, a.length - lo), b.subarray(b.length - mid, b.length - lo)) === 0) lo = mid;
    else hi = mid - 1;
  }
  // The suffix must start a line on both sides; else it starts after its first line break.
  if (lo === 0) return 0;
  const at = a.length - lo;
  const bt = b.length - lo;
  if ((at === 0 || a[at - 1] === 10) && (bt === 0 || b[bt - 1] === 10)) return lo;
  const next = a.indexOf(10, at);
  return next === -1 ? 0 : a.length - (next + 1);
}

function countChanges(before: readonly Uint8Array[], after: readonly Uint8Array[]): LineCounts {
  const count = new Map<string, number>();
  const lines = (b: Uint8Array) => (b.length === 0 ? [] : Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("utf8").replace(/\r\n/g, "\n").replace(/\n$/, "").split("\n"));
  for (const piece of before) for (const l of lines(piece)) count.set(l, (count.get(l) ?? 0) + 1);
  let added = 0;
  for (const piece of after) {
    for (const l of lines(piece)) {
      const n = count.get(l) ?? 0;
      if (n > 0) count.set(l, n - 1);
      else added++;
    }
  }
  let removed = 0;
  for (const n of count.values()) removed += n;
  return { added, removed };
}

function rowOf(r: Record<string, unknown>): HistoryRow {
  return {
    seq: r.seq as number,
    grp: r.grp as number,
    path: r.path as string,
    display: r.display as string,
    tool: r.tool as string,
    at: r.at as number,
    prevSha: r.prev_sha as string | null,
    prevMode: r.prev_mode as number | null,
    newSha: r.new_sha as string | null,
    added: r.added as number,
    removed: r.removed as number,
    state: r.state as HistoryState,
    dir: (r.dir as string | null | undefined) ?? null,
    prevAt: typeof r.pack === "string" ? { pack: r.pack, off: r.pack_off as number, len: r.pack_len as number } : null,
  };
}

/** A file's kept versions, newest first. */
export function fileHistory(ctx: Ctx, db: Database, path: string): HistoryRow[] {
  return (table(db).query("SELECT * FROM history WHERE session = ? AND path = ? ORDER BY seq DESC").all(ctx.session, path) as Record<string, unknown>[]).map(rowOf);
}

/** Every file the session changed, as {path, display}, most recently changed first. */
export function changedFiles(ctx: Ctx, db: Database): { path: string; display: string }[] {
  return table(db).query("SELECT path, display FROM history WHERE session = ? GROUP BY path ORDER BY MAX(seq) DESC").all(ctx.session) as { path: string; display: string }[];
}

/** The rows of the session's newest change that can still be undone (a whole patch), or []. */
export function lastLiveGroup(ctx: Ctx, db: Database): HistoryRow[] {
  const top = table(db).query("SELECT grp FROM history WHERE session = ? AND state = 'live' ORDER BY seq DESC LIMIT 1").get(ctx.session) as { grp: number } | null;
  if (!top) return [];
  return (db.query("SELECT * FROM history WHERE session = ? AND grp = ? ORDER BY seq").all(ctx.session, top.grp) as Record<string, unknown>[]).map(rowOf);
}

export function markUndone(db: Database, seqs: readonly number[]): void {
  const q = table(db).query("UPDATE history SET state = 'undone' WHERE seq = ?");
  for (const seq of seqs) q.run(seq);
}

/**
 * The kept bytes of a version (in the pack `at` names, else the blob named `sha`), or null
 * when the size cap has removed them. Bytes that do not hash to `sha` are damaged, never restored.
 */
export function keptBytes(ctx: Ctx, sha: string, at: PackedAt | null = null): Uint8Array | null {
  const dir = blobDir(ctx);
  // Only a pack's own name, never a path elsewhere.
  if (at !== null && /^pack-[A-Za-z0-9-]+$/.test(at.pack)) {
    const bytes = packed(join(dir, at.pack), at);
    if (bytes !== null && sha256(bytes) === sha) return bytes;
  }
  try {
    const bytes = readStateFile(join(dir, sha));
    return sha256(bytes) === sha ? bytes : null;
  } catch {
    return null;
  }
}

function packed(path: string, at: PackedAt): Uint8Array | null {
  let fd: number;
  try {
    fd = openStateFile(path, constants.O_RDONLY);
  } catch {
    return null;
  }
  try {
    const bytes = Buffer.allocUnsafe(at.len);
    let got = 0;
    while (got < at.len) {
      const n = readSync(fd, bytes, got, at.len - got, at.off + got);
      if (n === 0) return null;
      got += n;
    }
    return bytes;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes a blob, kept only when whole. Where nothing is yet it is written in place, made
 * exclusively (never through a link): one file created, not a temp file and a rename. One cut
 * short (a full disk: removed; a kill: left) has the wrong size, and is replaced, as anything
 * else there is, through a temp file and a rename; and undo restores no blob whose content is
 * not its name (keptBytes).
 */
function putBlob(dir: string, sha: string, bytes: Uint8Array, likelyNew = false): void {
  const blob = join(dir, sha);
  // likelyNew: made exclusively first (Keeper.keep, before the lock: most blobs of a change are
  // new), and what is there already looked at only then. Else (under the lock, the same
  // blobs again) looked at first.
  if (likelyNew && writeNew(blob, bytes)) return;
  const st = lstatOrUndefined(blob);
  // Kept already: a file of the content's size (its name is its hash).
  if (st?.isFile() && st.size === bytes.length) return;
  if (!likelyNew && st === undefined && writeNew(blob, bytes)) return;
  const temp = `${blob}.${process.pid}.tmp`;
  try {
    try {
      writeStateFile(temp, bytes, true);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      // A crashed call's leftover (or a planted link): removed, and the temp made exclusively again.
      unlinkSync(temp);
      writeStateFile(temp, bytes, true);
    }
    renameSync(temp, blob);
  } catch (error) {
    try {
      unlinkSync(temp);
    } catch {
      // Never created.
    }
    throw error;
  }
}

/** Creates `path` holding `bytes`; false when something appeared there first (then left alone). */
function writeNew(path: string, bytes: Uint8Array): boolean {
  let fd: number;
  try {
    fd = openStateFile(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
  try {
    writeAll(fd, bytes);
  } catch (error) {
    // Made by this call, so removed by it: no blob cut short is left by a full disk.
    closeSync(fd);
    try {
      unlinkSync(path);
    } catch {
      // Gone already.
    }
    throw error;
  }
  closeSync(fd);
  return true;
}

/** Removes a session's history rows; its blobs go with the session folder. */
export function dropHistory(db: Database, session: string): void {
  table(db).query("DELETE FROM history WHERE session = ?").run(session);
}

/** How long kept versions outlive the change that kept them, ended session or not (SPEC §8.6). */
export const HISTORY_DAYS = 7;

/**
 * Forgets, in every session, the changes made more than HISTORY_DAYS ago. Call inside the
 * write lock; returns the kept bytes only they referred to, for the caller to remove as
 * LetGo says (blobs before the lock is let go, packs after its transaction). The size cap
 * may remove them sooner (undo then says the version is no longer kept).
 */
export function expireHistory(stateDir: string, db: Database, now = Date.now()): LetGo {
  const before = now - HISTORY_DAYS * 24 * 3600 * 1000;
  const old = table(db).query("SELECT seq, session, prev_sha, pack FROM history WHERE at < ?").all(before) as (Forgotten & { session: string })[];
  const letGo: LetGo = { packs: [], blobs: [] };
  for (const row of old) forget(db, row.session, row, blobDir({ stateDir, session: row.session }), letGo);
  return letGo;
}

/** One change of the session (all the files one call changed), as `kt history` lists it. */
export interface SessionChange {
  grp: number;
  tool: string;
  at: number;
  files: string[];
  added: number;
  removed: number;
  state: HistoryState;
}

/** The session's changes, newest first. */
export function sessionChanges(ctx: Ctx, db: Database): SessionChange[] {
  const rows = (table(db).query("SELECT * FROM history WHERE session = ? ORDER BY seq DESC").all(ctx.session) as Record<string, unknown>[]).map(rowOf);
  const byGroup = new Map<number, SessionChange>();
  for (const r of rows) {
    let c = byGroup.get(r.grp);
    if (!c) {
      c = { grp: r.grp, tool: r.tool, at: r.at, files: [], added: 0, removed: 0, state: r.state };
      byGroup.set(r.grp, c);
    }
    c.files.unshift(r.display);
    c.added += r.added;
    c.removed += r.removed;
    c.at = Math.min(c.at, r.at);
  }
  return [...byGroup.values()];
}

// A multi-file change whose process is killed while installing leaves some files new and
// some old, and its history rows vanish with its rolled-back transaction. So before the
// first install it leaves a journal beside the kept bytes; removed once the change is
// committed or rolled back, a journal whose process is gone marks an interrupted change.

export interface JournalFile {
  real: string;
  display: string;
  prevSha: string | null;
  prevMode: number | null;
  newSha: string | null;
  /** Where in the change's pack prevSha's bytes lie (absent: in their blob). */
  prevAt?: PackedAt;
}

export interface Journal {
  pid: number;
  token: string;
  tool: string;
  at: number;
  files: JournalFile[];
}

export function writeJournal(ctx: Ctx, journal: Journal): string {
  const path = join(blobDir(ctx), `journal-${journal.token}.json`);
  writeStateFile(path, JSON.stringify(journal), true);
  return path;
}

export function removeJournal(path: string): void {
  removeQuietly(path);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Changes of the session interrupted while installing, newest first. A journal whose change
 * was committed after all (killed between commit and cleanup) is removed here.
 */
export function interruptedChanges(ctx: Ctx, db: Database): { path: string; journal: Journal }[] {
  const dir = blobDir(ctx);
  const out: { path: string; journal: Journal }[] = [];
  for (const name of readdirSync(dir)) {
    if (!name.startsWith("journal-")) continue;
    const path = join(dir, name);
    let journal: Journal;
    try {
      journal = JSON.parse(readStateFile(path).toString("utf8")) as Journal;
    } catch {
      continue;
    }
    if (journal.pid !== process.pid && alive(journal.pid)) continue;
    const committed = table(db).query("SELECT 1 FROM history WHERE session = ? AND token = ? LIMIT 1").get(ctx.session, journal.token);
    if (committed) removeJournal(path);
    else out.push({ path, journal });
  }
  return out.sort((a, b) => b.journal.at - a.journal.at);
}
