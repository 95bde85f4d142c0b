// Many files changed at once, all or nothing (SPEC §7.1 commit), beside the one-file writer
// and built from its parts: every new content is written to a temp file beside its
// destination and made durable first (core/flush.ts); then, holding the index's write lock,
// every file is re-checked against the content the change was computed from, its previous
// bytes are kept (history), and the files are installed one rename at a time. If an install
// fails, the files already installed are put back. A kill at any instant leaves each file old or new (renames are
// atomic), and only this change's files differ; its journal (history.ts) lets
// `kt undo --last` revert such a torn change.
import { chmodSync, close, closeSync, constants, fstatSync, lstatSync, openSync, readFileSync, renameSync, rmdirSync, statSync, unlinkSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { KtError, type ToolContext } from "./result.ts";
import { fdHandle, fsError, READ_NONBLOCKING, verifyOpened } from "./paths.ts";
import { createMissingDirs } from "./dirs.ts";
import { discard, type StagedTemp } from "./temp.ts";
import { flushDirs, flushFiles, startWriteback, type Pending } from "./flush.ts";
import { dropStamp, getStamp, hashOnce, putStamp, stale, type Verb } from "./stamps.ts";
import { index, isStateFault, stateProblem, withWriteLock } from "./state.ts";
import { prepare, previousOf, readIfExists, removeStaleTemps, stateFilesGuard, type Previous, type Temp } from "./writer.ts";
import { dirIdentity, Keeper, lineChanges, markUndone, newGroup, recordChange, removeJournal, removeLetGo, removeLetGoAsync, writeJournal, type HistoryState, type LetGo, type LineCounts, type LinkSource, type PackedAt } from "./history.ts";

export interface Change {
  /** The path as shown to the model. */
  display: string;
  /** The real path (symlinks resolved). */
  real: string;
  /** sha256 of the content the change was computed from (`previous`); null: the file must not exist. */
  baseSha: string | null;
  /**
   * The bytes the change was computed from (kept in history, and put back on rollback);
   * baseSha is their hash, so the commit does not work it out again (a getter may work it
   * out when first read: the commit reads it while the disk writes the new files).
   */
  previous: Uint8Array | null;
  /** The new content, or null to remove the file. */
  bytes: Uint8Array | null;
  /** sha256 of `bytes`, when the caller has it already (a search thread worked it out); else the commit does. */
  bytesSha?: string;
  /** Lines added and removed, when the caller has them already (its diff's; a getter is read while the disk writes); else the commit counts them. */
  counts?: LineCounts;
  /** Mode for a file that does not exist yet (a move keeps its source's); else the file's own is kept. */
  mode?: number;
  /**
   * A temp file of `bytes` written already beside the file (a replace's search threads write
   * them, core/temp.ts): taken instead of writing one when its verified directory holds that
   * very file (adopt). Not taken, it is left where it is: its writer removes it.
   */
  staged?: StagedTemp;
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
  /**
   * Work of the caller's that needs no lock and nothing of the commit (its answer), run once
   * while the disk flushes the first files, rather than after the commit. A throw there fails
   * the commit before anything is installed.
   */
  whileSyncing?(): void;
  /** Gets the path (as Change.staged names it) of every staged temp file the commit took: it installs or removes each; the caller removes the rest. */
  adopted?: Set<string>;
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
  // Older versions' kept bytes the record let go: removed once the change is installed.
  let letGo: LetGo | undefined;
  // Every content below is hashed once, however many rows, stamps and checks name it.
  const hash = hashOnce();
  const closing = new Closing();
  // The flush of the window last staged: waited for before anything is closed or thrown.
  let inFlight: Promise<{ error: unknown } | undefined> | undefined;
  const token = `${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  const keeper = new Keeper(ctx, changes.filter((c) => c.previous !== null).length, token, hash);
  // Why the previous versions could not be kept (a full or read-only state disk): the change
  // is then made without history, as the one-file writer does, and says so.
  let unkept: unknown;
  try {
    // kt's own state (index, logs, process pipes) is never a target, whatever tool asks.
    const refuse = stateFilesGuard(ctx);
    for (const change of changes) refuse(change.real, change.display);
    // Staged, kept and synced a window of files at a time: each window's temp files stay open
    // from writing to fsync, and the descriptors open at once stay bounded. A window is staged
    // while the one before it is synced (two at most in flight: 2,914 files in three windows
    // waited for each one's flush in turn).
    const counts = new Map<Change, LineCounts>();
    const sources = new Map<Change, LinkSource>();
    // An eighth of the descriptors this process may open, at most WINDOW: two windows' worth open at once.
    const window = Math.max(16, Math.min(WINDOW, Math.floor(closing.limit / 8)));
    for (let from = 0; from < changes.length; from += window) {
      const some = changes.slice(from, from + window);
      const temps: { temp: Temp; display: string }[] = [];
      for (const change of some) {
        const dir = dirname(change.real);
        // A directory opened already exists: only the first change in it looks for missing ones.
        if (change.bytes !== null && !dirs.has(dir)) makeParents(ctx, dir, change.display, created);
        const target = join(fdHandle(openDir(ctx, dirs, change), dir), basename(change.real));
        if (change.bytes === null) {
          staged.push({ change, target, previousMode: modeOf(target) });
          continue;
        }
        // One stat of the file replaced gives both its mode (for rollback) and what the temp file copies.
        const previous = previousOf(target, change.display);
        const temp =
          adopt(target, change.staged, change.bytes, previous, opts.adopted) ??
          prepare(target, change.bytes, change.display, { sync: false, previous, mode: previous === null ? change.mode : undefined, keepOpen: true });
        staged.push({ change, target, temp, previousMode: previous?.mode ?? null });
        temps.push({ temp, display: change.display });
        const source = linkSource(target, previous, change.previous);
        if (source) sources.set(change, source);
      }
      // The kept bytes are written before anything is flushed: creating files while the disk
      // flushes waits on the file system's journal (each create ~1 ms then, here). They are
      // not fsynced; a syncfs (core/flush.ts) takes them with the rest.
      if (unkept === undefined) {
        try {
          keeper.keep(
            some.map((c) => c.previous),
            some.map((c) => sources.get(c)),
          );
        } catch (error) {
          if (!historyFault(error)) throw error;
          unkept = error;
          keeper.discard();
        }
      }
      // One fsync after another costs a disk flush each: the window's files are flushed
      // together (core/flush.ts: one syncfs for many files, else their fsyncs issued at once).
      // Their writeback starts now, and the lines each change adds and removes are counted
      // while the disk writes.
      await startWriteback(temps.flatMap((t) => (t.temp.fd === undefined ? [] : [t.temp.fd])));
      const synced = syncAll(temps).then(
        () => undefined,
        (error: unknown) => ({ error }),
      );
      let counting: { error: unknown } | undefined;
      try {
        for (const c of some) counts.set(c, c.counts ?? lineChanges(c.previous, c.bytes));
        // The contents' hashes (history rows, journal, stamps) are worked out now too; a caller
        // may leave baseSha to be worked out here (a getter), while the disk writes.
        for (const c of some) if (c.previous !== null && c.baseSha !== null) hash.know(c.previous, c.baseSha);
        for (const c of some) if (c.bytes !== null) c.bytesSha === undefined ? hash(c.bytes) : hash.know(c.bytes, c.bytesSha);
        if (from === 0) opts.whileSyncing?.();
      } catch (error) {
        counting = { error };
      }
      const previous = inFlight;
      inFlight = synced.then((failed) => failed ?? counting);
      const failed = await previous;
      if (failed) throw failed.error;
    }
    {
      const failed = await inFlight;
      inFlight = undefined;
      if (failed) throw failed.error;
    }
    withWriteLock(index(ctx), () => {
      for (const s of staged) recheck(ctx, s, opts.verb, hash);
      // Each directory's identity once, however many of the change's files it holds.
      const identities = new Map<string, string | null>();
      const identity = (dir: string) => {
        let id = identities.get(dir);
        if (id === undefined) identities.set(dir, (id = dirIdentity(dirs.get(dir)!)));
        return id;
      };
      const db = index(ctx);
      if (opts.undoes) markUndone(db, opts.undoes);
      if (unkept === undefined) {
        // All the change's rows or none: a version that cannot be kept under the lock (the
        // disk filled since) leaves no row behind.
        db.exec("SAVEPOINT kept");
        try {
          letGo = recordChange(
            ctx,
            db,
            newGroup(db, ctx.session),
            opts.tool,
            // A change worked out again under the lock is a new object: its lines are counted there.
            // The directory each file goes into is known by its verified descriptor (opened above).
            staged.map((s) => ({
              real: s.change.real,
              display: s.change.display,
              previous: s.change.previous,
              previousMode: s.previousMode,
              next: s.change.bytes,
              counts: counts.get(s.change),
              dir: identity(dirname(s.change.real)),
              kept: s.change.previous === null ? undefined : keeper.where(s.change.previous),
            })),
            opts.historyState,
            token,
            hash,
          );
          db.exec("RELEASE kept");
        } catch (error) {
          if (!historyFault(error)) throw error;
          db.exec("ROLLBACK TO kept");
          db.exec("RELEASE kept");
          unkept = error;
        }
      }
      if (unkept === undefined && staged.length > 1) {
        try {
          journal = writeJournal(ctx, {
            pid: process.pid,
            token,
            tool: opts.tool,
            at: Date.now(),
            files: staged.map((s) => ({
              real: s.change.real,
              display: s.change.display,
              prevSha: s.change.previous === null ? null : hash(s.change.previous),
              prevMode: s.previousMode,
              newSha: s.change.bytes === null ? null : hash(s.change.bytes),
              ...withPrevAt(s.change.previous === null ? undefined : keeper.where(s.change.previous)),
            })),
          });
        } catch (error) {
          if (!historyFault(error)) throw error;
          ctx.warn(`the change's journal could not be written: were kt stopped while installing its ${staged.length} files, kt undo --last could not put back those installed so far. ${stateProblem(ctx.stateDir, error)}`);
        }
      }
      keeper.settle();
      install(ctx, staged, opts, hash, closing, dirs.size, (s) => s.change.previous !== null && keeper.linked(s.change.previous));
      if (letGo) removeLetGo(letGo.blobs);
    });
    if (journal) removeJournal(journal);
    if (unkept !== undefined) {
      const what = staged.length === 1 ? `the previous version of ${staged[0]!.change.display} could not be kept` : `the previous versions of the ${staged.length} files changed could not be kept`;
      ctx.warn(`${what} for undo: kt undo cannot revert this ${opts.tool}. ${stateProblem(ctx.stateDir, unkept)}`);
    }
  } catch (error) {
    // No descriptor is closed under an fsync still running.
    if (inFlight) await inFlight;
    if (journal) removeJournal(journal);
    keeper.discard();
    for (const s of staged) {
      if (!s.temp) continue;
      closeTemp(s.temp);
      discard(s.temp.path);
    }
    closeAll(dirs);
    for (const dir of created.reverse()) {
      try {
        rmdirSync(dir);
      } catch {
        // Not empty (someone else put a file there) or gone: leave it.
      }
    }
    await closing.all();
    throw error;
  }
  // The renames are made durable by a flush of the directories they were made in (core/flush.ts),
  // while the replaced files and the older versions' packs are let go.
  await Promise.all([flushDirs([...dirs.values()], staged.length), closing.all(), letGo ? removeLetGoAsync(letGo.packs) : undefined]);
  closeAll(dirs);
}

/**
 * The temp file a search thread wrote for this change (Change.staged), as a Temp beside
 * `target` (reached through the commit's verified directory): only when that directory holds,
 * under the name the thread gave it, the very file the thread wrote (its file system and
 * inode), of the new content's size, with the mode and owner the file replaced has now (what
 * prepare would give it). A directory swapped after the thread wrote its file, a file put in
 * its place, or a mode or owner changed since: undefined, and the commit writes its own.
 */
function adopt(target: string, staged: StagedTemp | undefined, bytes: Uint8Array, previous: Previous | null, adopted: Set<string> | undefined): Temp | undefined {
  if (staged === undefined || previous === null) return undefined;
  const path = join(dirname(target), basename(staged.path));
  let st;
  try {
    st = lstatSync(path);
  } catch {
    return undefined;
  }
  if (!st.isFile() || st.dev !== staged.dev || st.ino !== staged.ino || st.size !== bytes.length) return undefined;
  if ((st.mode & 0o7777) !== previous.mode || st.uid !== previous.uid || st.gid !== previous.gid || st.nlink !== 1) return undefined;
  adopted?.add(staged.path);
  return { path, mtimeMs: staged.mtimeMs, size: staged.size, dev: staged.dev };
}

/** A failure to keep history that must not stop the change: the state directory's disk or files, not kt. */
function historyFault(error: unknown): boolean {
  if (error instanceof KtError) return false;
  return isStateFault(error) || typeof (error as NodeJS.ErrnoException)?.code === "string";
}

/**
 * The file a change replaces, as a history link may keep it (history.ts Keeper): this
 * user's, with no other name, and of the size of the bytes the change was computed from.
 * Not on Windows, whose links and owners are another matter.
 */
function linkSource(target: string, previous: Previous | null, bytes: Uint8Array | null): LinkSource | undefined {
  if (process.platform === "win32" || previous === null || bytes === null) return undefined;
  if (previous.nlink !== 1 || previous.uid !== process.getuid?.() || previous.size !== bytes.length) return undefined;
  return { path: target, dev: previous.dev!, ino: previous.ino! };
}

function withPrevAt(at: PackedAt | undefined): { prevAt?: PackedAt } {
  return at ? { prevAt: at } : {};
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
  // baseSha is null exactly when previous is (a file to create); a getter is not read for it.
  if (change.previous === null) {
    if (current !== null) {
      throw new KtError("FILE_EXISTS", `Refusing to create ${change.display}: a file appeared there while the change was being prepared. Nothing was changed. Read it, then change it as an update.`);
    }
    return;
  }
  if (current === null) {
    throw new KtError("FILE_NOT_FOUND", `Refusing to ${verb} ${change.display}: the file was removed while the change was being prepared. Nothing was changed.`);
  }
  // The bytes the change was computed from (whose hash baseSha is), still there: a comparison
  // of bytes, not a hash.
  if (change.previous !== null && Buffer.compare(current, change.previous) === 0) return;
  const sha = hash(current);
  if (sha === change.baseSha) return;
  if (!change.redo || getStamp(ctx, change.real)?.sha256 !== sha) throw stale(change.display, verb);
  const bytes = change.redo(current);
  const temp = prepare(s.target, bytes, change.display);
  if (s.temp) discard(s.temp.path);
  s.temp = temp;
  s.change = { ...change, baseSha: sha, previous: current, bytes, bytesSha: undefined, counts: undefined };
}

function pause(): void {
  const ms = Number(process.env.KT_COMMIT_PAUSE_MS);
  if (Number.isFinite(ms) && ms > 0) Bun.sleepSync(ms);
}

/** New and changed files first, removals last: a move interrupted halfway leaves both copies, never neither. */
function install(ctx: ToolContext, staged: readonly Staged[], opts: CommitOptions, hash: (bytes: Uint8Array) => string, closing: Closing, dirs: number, linked: (s: Staged) => boolean): void {
  const order = [...staged.filter((s) => s.change.bytes !== null), ...staged.filter((s) => s.change.bytes === null)];
  const done: Staged[] = [];
  const budget = pinBudget(closing.limit, dirs);
  try {
    order.forEach((s, i) => {
      opts.beforeInstall?.(i);
      if (i > 0) pause();
      const temp = s.temp;
      // A file kept by a link in the history folder is not freed by the rename: nothing to hold.
      const old = closing.pinned < budget && !linked(s) ? pin(s.target) : undefined;
      if (old !== undefined) closing.pinned++;
      try {
        if (temp) renameSync(temp.path, s.target);
        else unlinkSync(s.target);
      } finally {
        closing.release(old);
      }
      if (temp) {
        s.temp = undefined;
        done.push(s);
        putStamp(ctx, s.change.real, { mtimeMs: temp.mtimeMs, size: temp.size, sha256: hash(s.change.bytes!) });
      } else {
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

/**
 * The file a rename replaces (or an unlink removes), held open across it: the file system
 * then frees its blocks when the descriptor is closed, in the runtime's thread pool and many
 * at once, rather than inside the rename, one after another under the lock (1,000 renames
 * over files of 9 KB: 0.4–1.6 s; held, 20–40 ms, and the closes 0.1–0.2 s together). The
 * file as it is now, whatever it is: only held, never read.
 */
function pin(target: string): number | undefined {
  try {
    // Not through a link (whatever it names is not what the rename frees).
    return openSync(target, READ_NONBLOCKING | constants.O_NOFOLLOW);
  } catch {
    // None (a new file), a link, or not ours to open: freed by the rename itself.
    return undefined;
  }
}

/** How many descriptors this process may open (Linux: /proc/self/limits; Bun raises the soft limit to the hard one). */
function fdLimit(): number {
  try {
    const m = /^Max open files\s+(\d+)/m.exec(readFileSync("/proc/self/limits", "utf8"));
    if (m) return Number(m[1]);
  } catch {
    // No /proc: the common default.
  }
  return 1024;
}

/**
 * How many replaced files one commit may hold open (pin): half the descriptors this process
 * may open, less those it holds for the commit's directories, so that what else opens a file
 * under the lock (SQLite, a rollback's temp file) still can. Their closes run in the thread
 * pool, unseen until the lock is let go, so this bounds them all.
 */
function pinBudget(limit: number, dirs: number): number {
  return Math.max(0, Math.floor(limit / 2) - dirs - 64);
}

/** Closes descriptors in the runtime's thread pool, all at once; `all` settles when every one is closed. */
class Closing {
  /** Replaced files held open by this commit (see pinBudget). */
  pinned = 0;
  readonly limit = fdLimit();
  private pending: Promise<void>[] = [];
  release(fd: number | undefined): void {
    if (fd === undefined) return;
    this.pending.push(new Promise<void>((resolve) => close(fd, () => resolve())));
  }
  all(): Promise<void> {
    return Promise.all(this.pending).then(() => undefined);
  }
}

/** Files staged and synced together: their temp files' descriptors are open from writing to fsync. */
const WINDOW = 1024;

function closeTemp(temp: Temp): void {
  if (temp.fd === undefined) return;
  try {
    closeSync(temp.fd);
  } catch {
    // Closed already.
  }
  temp.fd = undefined;
}

/** Every temp file durable (core/flush.ts), each descriptor closed after; a failure names its file. */
async function syncAll(files: readonly { temp: Temp; display: string }[]): Promise<void> {
  const pending: (Pending & { display: string })[] = [];
  try {
    for (const { temp, display } of files) {
      // A temp file written and closed already (adopt) is opened only if the flush needs it.
      if (temp.fd === undefined && temp.dev === undefined) {
        try {
          temp.fd = openSync(temp.path, "r+");
        } catch (error) {
          throw fsError(error, display);
        }
      }
      pending.push({ fd: temp.fd, path: temp.path, dev: temp.dev ?? fstatSync(temp.fd!).dev, size: temp.size, display });
    }
  } catch (error) {
    for (const { temp } of files) closeTemp(temp);
    throw error;
  }
  try {
    await flushFiles(pending, (error, i) => fsError(error, pending[i]!.display));
  } finally {
    // flushFiles closed every descriptor: forget them.
    for (const { temp } of files) temp.fd = undefined;
  }
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
