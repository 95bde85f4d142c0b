// Many files changed at once, all or nothing (SPEC §7.1 commit), beside the one-file writer
// and built from its parts: every new content is written and fsynced to a temp file beside
// its destination first; then, holding the index's write lock, every file is re-checked
// against the content the change was computed from, its previous bytes are kept (history),
// and the files are installed one rename at a time. If an install fails, the files already
// installed are put back. A kill at any instant leaves each file old or new (renames are
// atomic), and only this change's files differ; its journal (history.ts) lets
// `kt undo --last` revert such a torn change.
import { chmodSync, closeSync, constants, fsync, fsyncSync, openSync, renameSync, rmdirSync, statSync, unlinkSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { KtError, type ToolContext } from "./result.ts";
import { fdHandle, fsError, verifyOpened } from "./paths.ts";
import { createMissingDirs } from "./dirs.ts";
import { dropStamp, getStamp, hashOnce, putStamp, sha256, stale, type Verb } from "./stamps.ts";
import { index, withWriteLock } from "./state.ts";
import { discard, prepare, readIfExists, refuseStateFiles, removeStaleTemps, type Temp } from "./writer.ts";
import { dirIdentity, keepBlobs, lineChanges, markUndone, newGroup, recordChange, removeJournal, writeJournal, type HistoryState, type LineCounts } from "./history.ts";

export interface Change {
  /** The path as shown to the model. */
  display: string;
  /** The real path (symlinks resolved). */
  real: string;
  /** sha256 of the content the change was computed from; null: the file must not exist. */
  baseSha: string | null;
  /** The bytes the change was computed from (kept in history, and put back on rollback). */
  previous: Uint8Array | null;
  /** The new content, or null to remove the file. */
  bytes: Uint8Array | null;
  /** Mode for a file that does not exist yet (a move keeps its source's); else the file's own is kept. */
  mode?: number;
  /**
   * The new content worked out again from `current`, the file as it is now, when it is no
   * longer `previous` but this session's stamp says the content is the session's own (a
   * parallel kt call wrote it; SPEC §7.5). Runs under the lock; may throw a KtError. Without
   * it, any change in between is STALE_FILE.
   */
  redo?(current: Uint8Array): Uint8Array;
}

export interface CommitOptions {
  /** The tool named in history ("patch", "undo"). */
  tool: string;
  /** How stale-file prose words the refused action. */
  verb: Verb;
  /** History rows this change reverts (undo): marked undone in the same transaction. */
  undoes?: readonly number[];
  historyState?: HistoryState;
  /** Test seam: runs before the i-th install; a throw there is an install failure. */
  beforeInstall?(i: number): void;
}

interface Staged {
  change: Change;
  /**
   * The file as reached through its opened parent directory (verified inside the root after
   * opening): every stat, temp file, re-check, rename and unlink goes through it, so a
   * directory swapped for a symbolic link after the paths were checked cannot send any of
   * them elsewhere (issue 11 item 10).
   */
  target: string;
  temp?: Temp;
  /** Mode the file had before (for putting it back). */
  previousMode: number | null;
}

/** Installs every change or none; throws a KtError naming what went wrong. */
export async function commitChanges(ctx: ToolContext, changes: readonly Change[], opts: CommitOptions): Promise<void> {
  const created: string[] = [];
  const staged: Staged[] = [];
  const dirs = new Map<string, number>();
  let journal: string | undefined;
  // Every content below is hashed once, however many rows, stamps and checks name it.
  const hash = hashOnce();
  try {
    // kt's own state (index, logs, process pipes) is never a target, whatever tool asks.
    for (const change of changes) refuseStateFiles(ctx, change.real, change.display);
    for (const change of changes) {
      if (change.bytes !== null) makeParents(ctx, dirname(change.real), change.display, created);
      const target = join(fdHandle(openDir(ctx, dirs, change), dirname(change.real)), basename(change.real));
      const previousMode = modeOf(target);
      if (change.bytes === null) {
        staged.push({ change, target, previousMode });
        continue;
      }
      const temp = prepare(target, change.bytes, change.display, false);
      staged.push({ change, target, temp, previousMode });
      if (change.mode !== undefined && previousMode === null) {
        try {
          chmodSync(temp.path, change.mode);
        } catch (error) {
          throw fsError(error, change.display);
        }
      }
    }
    // One fsync after another costs a disk flush each; issued together, the file system
    // commits them in a few journal transactions (20 files: 140 ms → 20–60 ms here). The
    // history blobs are written, and the lines each change adds and removes counted, while
    // the disk flushes; the lock waits for both.
    const synced = syncAll(staged.flatMap((s) => (s.temp ? [{ path: s.temp.path, display: s.change.display }] : []))).then(
      () => undefined,
      (error: unknown) => ({ error }),
    );
    let blobs: { error: unknown } | undefined;
    const counts = new Map<Change, LineCounts>();
    try {
      keepBlobs(ctx, changes.map((c) => c.previous), hash);
      for (const c of changes) counts.set(c, lineChanges(c.previous, c.bytes));
    } catch (error) {
      blobs = { error };
    }
    const failed = (await synced) ?? blobs;
    if (failed) throw failed.error;
    const token = `${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
    withWriteLock(index(ctx), () => {
      for (const s of staged) recheck(ctx, s, opts.verb, hash);
      const db = index(ctx);
      if (opts.undoes) markUndone(db, opts.undoes);
      recordChange(
        ctx,
        db,
        newGroup(db, ctx.session),
        opts.tool,
        // A change worked out again under the lock is a new object: its lines are counted there.
        // The directory each file goes into is known by its verified descriptor (opened above).
        staged.map((s) => ({ real: s.change.real, display: s.change.display, previous: s.change.previous, previousMode: s.previousMode, next: s.change.bytes, counts: counts.get(s.change), dir: dirIdentity(dirs.get(dirname(s.change.real))!) })),
        opts.historyState,
        token,
        hash,
      );
      journal = staged.length > 1 ? writeJournal(ctx, {
        pid: process.pid,
        token,
        tool: opts.tool,
        at: Date.now(),
        files: staged.map((s) => ({ real: s.change.real, display: s.change.display, prevSha: s.change.previous === null ? null : hash(s.change.previous), prevMode: s.previousMode, newSha: s.change.bytes === null ? null : hash(s.change.bytes) })),
      }) : undefined;
      install(ctx, staged, opts, hash);
    });
    if (journal) removeJournal(journal);
  } catch (error) {
    if (journal) removeJournal(journal);
    for (const s of staged) if (s.temp) discard(s.temp.path);
    closeAll(dirs);
    for (const dir of created.reverse()) {
      try {
        rmdirSync(dir);
      } catch {
        // Not empty (someone else put a file there) or gone: leave it.
      }
    }
    throw error;
  }
  for (const fd of dirs.values()) {
    try {
      fsyncSync(fd);
    } catch {
      // Some file systems refuse fsync on directories; the renames themselves are atomic.
    }
  }
  closeAll(dirs);
}

/** The parent directory of a change, opened once per commit and verified inside the root. */
function openDir(ctx: ToolContext, dirs: Map<string, number>, change: Change): number {
  const dir = dirname(change.real);
  const open = dirs.get(dir);
  if (open !== undefined) return open;
  let fd: number;
  try {
    fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  } catch (error) {
    throw fsError(error, dirname(change.display));
  }
  dirs.set(dir, fd);
  verifyOpened(ctx, fd, change.display, dir);
  // Temp files a killed kt left here go, as the one-file writer does (issue 11 item 16).
  removeStaleTemps(fdHandle(fd, dir));
  return fd;
}

function closeAll(dirs: Map<string, number>): void {
  for (const fd of dirs.values()) {
    try {
      closeSync(fd);
    } catch {
      // Already closed.
    }
  }
  dirs.clear();
}

function modeOf(path: string): number | null {
  try {
    return statSync(path).mode & 0o7777;
  } catch {
    return null;
  }
}

/**
 * Creates missing parent directories through verified descriptors (dirs.ts), remembering
 * which, so a failed change can remove them.
 */
function makeParents(ctx: ToolContext, dir: string, display: string, created: string[]): void {
  try {
    createMissingDirs(ctx, dir, display, (d) => new KtError("NOT_A_DIRECTORY", `Cannot create ${display}: ${d} is a file, not a directory. Choose another path.`), created);
  } catch (error) {
    throw fsError(error, display);
  }
}

/**
 * Under the lock: the file is still what the change was computed from — or, when a parallel
 * kt call of this session changed it since, the change is worked out again from it.
 */
function recheck(ctx: ToolContext, s: Staged, verb: Verb, hash: (bytes: Uint8Array) => string): void {
  const change = s.change;
  const current = readIfExists(s.target, change.display);
  if (change.baseSha === null) {
    if (current !== null) {
      throw new KtError("FILE_EXISTS", `Refusing to create ${change.display}: a file appeared there while the change was being prepared. Nothing was changed. Read it, then change it as an update.`);
    }
    return;
  }
  if (current === null) {
    throw new KtError("FILE_NOT_FOUND", `Refusing to ${verb} ${change.display}: the file was removed while the change was being prepared. Nothing was changed.`);
  }
  // The bytes the change was computed from, still there: a comparison of bytes, not a hash
  // (that of `previous` is known already, for its history blob).
  if (change.previous !== null && Buffer.compare(current, change.previous) === 0 && hash(change.previous) === change.baseSha) return;
  const sha = sha256(current);
  if (sha === change.baseSha) return;
  if (!change.redo || getStamp(ctx, change.real)?.sha256 !== sha) throw stale(change.display, verb);
  const bytes = change.redo(current);
  const temp = prepare(s.target, bytes, change.display);
  if (s.temp) discard(s.temp.path);
  s.temp = temp;
  s.change = { ...change, baseSha: sha, previous: current, bytes };
}

function pause(): void {
  const ms = Number(process.env.KT_COMMIT_PAUSE_MS);
  if (Number.isFinite(ms) && ms > 0) Bun.sleepSync(ms);
}

/** New and changed files first, removals last: a move interrupted halfway leaves both copies, never neither. */
function install(ctx: ToolContext, staged: readonly Staged[], opts: CommitOptions, hash: (bytes: Uint8Array) => string): void {
  const order = [...staged.filter((s) => s.change.bytes !== null), ...staged.filter((s) => s.change.bytes === null)];
  const done: Staged[] = [];
  try {
    order.forEach((s, i) => {
      opts.beforeInstall?.(i);
      if (i > 0) pause();
      const temp = s.temp;
      if (temp) {
        renameSync(temp.path, s.target);
        s.temp = undefined;
        done.push(s);
        putStamp(ctx, s.change.real, { mtimeMs: temp.mtimeMs, size: temp.size, sha256: hash(s.change.bytes!) });
      } else {
        unlinkSync(s.target);
        done.push(s);
        dropStamp(ctx, s.change.real);
      }
    });
  } catch (error) {
    const failed = order[done.length];
    const unrestored = rollback(done);
    const why = error instanceof KtError ? error.message : fsError(error, failed?.change.display ?? "").message;
    if (unrestored.length > 0) {
      throw new KtError(
        "INTERNAL",
        `Installing ${failed?.change.display} failed (${why}), and ${unrestored.join(", ")} could not be put back; their previous content is kept in kt's history (kt history PATH, kt undo PATH).`,
      );
    }
    throw new KtError(error instanceof KtError ? error.code : "PERMISSION_DENIED", `Nothing was changed: installing ${failed?.change.display} failed, and the files already installed were put back. ${why}`);
  }
}

/** fsync of many files at once, through the runtime's thread pool. */
async function syncAll(files: readonly { path: string; display: string }[]): Promise<void> {
  await Promise.all(
    files.map(
      ({ path, display }) =>
        new Promise<void>((resolve, reject) => {
          let fd: number;
          try {
            fd = openSync(path, "r+");
          } catch (error) {
            return reject(fsError(error, display));
          }
          fsync(fd, (error) => {
            closeSync(fd);
            if (error) reject(fsError(error, display));
            else resolve();
          });
        }),
    ),
  );
}

/** Puts back installed files, newest first; returns the ones that could not be. */
function rollback(done: readonly Staged[]): string[] {
  const failed: string[] = [];
  for (const s of [...done].reverse()) {
    const { change } = s;
    try {
      if (change.previous === null) {
        unlinkSync(s.target);
        continue;
      }
      const temp = prepare(s.target, change.previous, change.display);
      if (s.previousMode !== null) chmodSync(temp.path, s.previousMode);
      renameSync(temp.path, s.target);
    } catch {
      failed.push(change.display);
    }
  }
  return failed;
}
