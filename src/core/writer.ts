// The one file writer (SPEC §3.5): temp file in the same directory, fsync, rename.
// Mode bits and ownership are kept, symlinks are written through (callers pass the real
// path), and the freshness check is repeated inside the index's write lock so that two
// concurrent kt writes of one file either both land or one is refused — never lost.
// Parallel calls of one session (SPEC §7.5): a change computed from content that another kt
// call of the session has replaced since is recomputed under the lock (`redo`), so that they
// all land; only a change made outside the session is STALE_FILE.
import {
  closeSync, constants, fstatSync, fsyncSync, openSync, readdirSync,
  renameSync, statSync, unlinkSync, type Stats,
} from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { KtError, type ToolContext } from "./result.ts";
import { fdHandle, fsError, inside, notRegular, onOneLine, READ_NONBLOCKING, readOpened, realPath, verifyOpened } from "./paths.ts";
import { getStamp, notRead, putStamp, sha256, stale, type Stamp, type Verb } from "./stamps.ts";
import { index, isStateFault, stateProblem, withWriteLock } from "./state.ts";
import { dirIdentity, newGroup, recordChange, removeLetGo, type LetGo } from "./history.ts";
import { openDirCreating } from "./dirs.ts";
import { discard, tempPathFor, writeTempFile } from "./temp.ts";

export interface GuardedWrite {
  /** The path as shown to the model. */
  display: string;
  /** The real path (symlinks resolved): the file actually replaced. */
  real: string;
  /** sha256 of the content the change was computed from; null when the file did not exist. */
  baseSha: string | null;
  bytes: Uint8Array;
  verb: Verb;
  /** Create missing parent directories (write does, edit never needs to). */
  mkdirs?: boolean;
  /**
   * The new content worked out again from `current`, the file as it is now, when it is no
   * longer what the change was based on but this session's stamp says the content is the
   * session's own (a parallel kt call wrote it). Runs under the lock, so the re-read, the
   * match and the write are one step; may throw a KtError (what it meant to change is gone).
   * Without it, any change in between is STALE_FILE.
   */
  redo?(current: Uint8Array): Uint8Array;
}

export interface Written {
  /** Set when the file was replaced but its stamp could not be saved: one line for the model. */
  note?: string;
}

/**
 * Writes atomically, re-checking under the lock that the file is still what the change was
 * based on. The new content is written and fsynced to a temp file before the lock is taken,
 * so the lock is held only for the check, the rename and the stamp.
 *
 * Everything happens through the opened parent directory (its descriptor), verified inside
 * the root after opening: a directory swapped for a symbolic link after the path was checked
 * cannot send the write elsewhere. Once the rename is done the write has happened, whatever
 * befalls the stamp afterwards.
 */
export function guardedWrite(ctx: ToolContext, w: GuardedWrite): Written {
  refuseStateFiles(ctx, w.real, w.display);
  const dirFd = openDir(ctx, w);
  try {
    const dir = fdHandle(dirFd, dirname(w.real));
    const target = join(dir, basename(w.real));
    removeStaleTemps(dir);
    const temp = prepare(target, w.bytes, w.display);
    let redone: Temp | undefined;
    let renamed = false;
    // Older versions' kept bytes the record let go: removed once the file is installed (history.ts LetGo).
    let letGo: LetGo | undefined;
    try {
      withWriteLock(index(ctx), () => {
        const current = readIfExists(target, w.display);
        const currentSha = current === null ? null : sha256(current);
        let bytes = w.bytes;
        let written = temp;
        if (currentSha !== w.baseSha) {
          if (!w.redo || current === null || getStamp(ctx, w.real)?.sha256 !== currentSha) throw stale(w.display, w.verb);
          bytes = w.redo(current);
          written = redone = prepare(target, bytes, w.display);
        }
        try {
          const db = index(ctx);
          letGo = recordChange(ctx, db, newGroup(db, ctx.session), w.verb === "overwrite" ? "write" : w.verb, [
            { real: w.real, display: w.display, previous: current, previousMode: current === null ? null : modeOf(target), next: bytes, dir: dirIdentity(dirFd) },
          ]);
        } catch (error) {
          // History serves undo; a state directory that cannot take it must not stop the write.
          if (!isStateFault(error) && typeof (error as NodeJS.ErrnoException).code !== "string") throw error;
          ctx.warn(`the previous version of ${w.display} could not be kept for undo. ${stateProblem(ctx.stateDir, error)}`);
        }
        commit(written, target, w.display);
        renamed = true;
        putStamp(ctx, w.real, { mtimeMs: written.mtimeMs, size: written.size, sha256: sha256(bytes) });
        if (letGo) removeLetGo(letGo.blobs);
      });
    } catch (error) {
      if (!renamed) {
        discard(temp.path);
        if (redone) discard(redone.path);
        throw error;
      }
      if (redone) discard(temp.path);
      const why = stateProblem(ctx.stateDir, error);
      ctx.warn(`${w.display} was written, but its stamp could not be saved. ${why}`);
      syncDirFd(dirFd);
      return { note: `(The file was written, but kt could not record it in its state directory ${onOneLine(ctx.stateDir)}, so it will ask you to read ${w.display} again before the next change to it.)` };
    }
    if (redone) discard(temp.path);
    if (letGo) removeLetGo(letGo.packs);
    syncDirFd(dirFd);
    return {};
  } finally {
    closeSync(dirFd);
  }
}

function modeOf(path: string): number | null {
  try {
    return statSync(path).mode & 0o7777;
  } catch {
    return null;
  }
}

/**
 * The content a change to an existing file is based on, after the read-before-write rules
 * (SPEC §3.4): NOT_READ without a stamp (unless --skip-read-check), STALE_FILE when the file
 * is not what the session last read or wrote. A stamp that differs from `bytes` may only lag
 * a parallel kt write of this session (it renames the file before it saves the stamp), so
 * that is decided under the lock, on the file as it is then.
 * `known`: the file's stamp (undefined: none) and the hash of `bytes`, when the caller has
 * them already (a patch looks up its files' stamps at once and hashes each file once).
 */
export function freshContent(ctx: ToolContext, display: string, real: string, bytes: Uint8Array, verb: Verb, known?: { stamp: Stamp | undefined; sha: string }): Uint8Array {
  const stamp = known ? known.stamp : getStamp(ctx, real);
  if (!stamp) {
    if (ctx.flags.skipReadCheck) return bytes;
    throw notRead(display, verb);
  }
  if (stamp.sha256 === (known ? known.sha : sha256(bytes))) return bytes;
  return withWriteLock(index(ctx), () => {
    const now = readIfExists(real, display);
    if (now === null || getStamp(ctx, real)?.sha256 !== sha256(now)) throw stale(display, verb);
    return now;
  });
}

/**
 * kt's own state (its index, logs, the stdin FIFOs of processes) is never a tool's target.
 * The writer checks; write and edit check first too, so that this is what they say.
 */
export function refuseStateFiles(ctx: Pick<ToolContext, "stateDir">, real: string, display: string): void {
  stateFilesGuard(ctx)(real, display);
}

/**
 * refuseStateFiles for many files of one call: the state directory's real path is resolved
 * once, not once per file (three system calls each).
 */
export function stateFilesGuard(ctx: Pick<ToolContext, "stateDir">): (real: string, display: string) => void {
  let state: string;
  try {
    state = realPath({}, resolve(ctx.stateDir));
  } catch {
    return () => {};
  }
  return (real, display) => {
    if (!inside(state, real)) return;
    throw new KtError(
      "PERMISSION_DENIED",
      `Refusing to write ${display}: it is inside kt's own state directory ${onOneLine(state)}, which holds kt's index, logs and process pipes. Files there are read, never written, with kt's tools.`,
    );
  };
}

/** The file's directory, opened and verified inside the root; made first when `mkdirs` (dirs.ts). */
function openDir(ctx: ToolContext, w: GuardedWrite): number {
  const dir = dirname(w.real);
  if (w.mkdirs) {
    try {
      return openDirCreating(ctx, dir, w.display, () => fsError(Object.assign(new Error("ENOTDIR"), { code: "ENOTDIR" }), dir));
    } catch (error) {
      throw fsError(error, dir);
    }
  }
  let fd: number;
  try {
    fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  } catch (error) {
    throw fsError(error, dir);
  }
  try {
    verifyOpened(ctx, fd, w.display, dir);
    return fd;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/**
 * Reads a regular file, or returns null when there is none. Opened without blocking and
 * checked after opening: a FIFO or device put in place of the file must not hang kt, and
 * (given a context) a file reached through a path swapped since it was checked must not
 * feed content from outside the root into a diff or an error's prose.
 */
export function readIfExists(real: string, display: string, ctx?: Pick<ToolContext, "root" | "stateDir" | "session">): Uint8Array | null {
  let fd: number;
  try {
    fd = openSync(real, READ_NONBLOCKING);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw fsError(error, display);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw notRegular(display, st, "write");
    // Without a root there is nowhere the opened file could not be (its path is not used).
    if (ctx?.root !== undefined) verifyOpened(ctx, fd, display, real);
    return readOpened(fd, st.size);
  } catch (error) {
    throw fsError(error, display);
  } finally {
    closeSync(fd);
  }
}

const TEMP = /^\..+\.kt-(\d+)-[a-z0-9]+\.tmp$/;

/**
 * A kt killed between creating its temp file and renaming it leaves the temp file behind;
 * the next write in the directory removes those of processes that no longer exist.
 */
export function removeStaleTemps(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const m = TEMP.exec(name);
    if (!m) continue;
    const pid = Number(m[1]);
    if (pid === process.pid || alive(pid)) continue;
    try {
      unlinkSync(join(dir, name));
    } catch {
      // Gone already, or not ours to remove.
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

export interface Temp {
  path: string;
  mtimeMs: number;
  size: number;
  /** The temp file's descriptor, left open for a caller that syncs it (`keepOpen`); it closes it. */
  fd?: number;
  /** Its file system (fstat's dev), for a caller that syncs many at once. */
  dev?: number;
}

/** What prepare needs of the file it replaces: its mode and owner, or null when there is none. */
export interface Previous {
  mode: number;
  uid: number;
  gid: number;
  /** Its identity, links and size (commit.ts keeps a file that has no other name by linking it). */
  dev?: number;
  ino?: number;
  nlink?: number;
  size?: number;
}

/** The mode, owner and group of `target`, or null when it does not exist. */
export function previousOf(target: string, display: string): Previous | null {
  try {
    const st = statSync(target);
    return { mode: st.mode & 0o7777, uid: st.uid, gid: st.gid, dev: st.dev, ino: st.ino, nlink: st.nlink, size: st.size };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw fsError(error, display);
    return null;
  }
}

export interface PrepareOptions {
  /** false leaves the fsync to a caller that syncs many temp files at once. */
  sync?: boolean;
  /** The file replaced, as previousOf gives it, when the caller has stat'ed it already. */
  previous?: Previous | null;
  /** Mode of a file that does not exist yet (default 0o666 less the umask). */
  mode?: number;
  /** Leave the descriptor open (Temp.fd), for a caller that syncs it. */
  keepOpen?: boolean;
}

/**
 * The new content, complete and fsynced, in a temp file beside `target` with its mode and owner.
 * The mode and owner are set only where the new file did not get them already (the umask, or
 * a file of another owner): one fstat tells.
 */
export function prepare(target: string, bytes: Uint8Array, display: string, opts: PrepareOptions = {}): Temp {
  const previous = opts.previous !== undefined ? opts.previous : previousOf(target, display);
  const path = tempPathFor(target);
  const mode = previous?.mode ?? opts.mode;
  let written: { fd: number; st: Stats };
  try {
    written = writeTempFile(path, bytes, previous, mode);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT" && previous) {
      // The file exists but its directory takes no new files (/proc, /sys): no atomic write is possible.
      throw new KtError("PERMISSION_DENIED", `Cannot write ${display}: its directory does not accept new files, so kt cannot replace it safely (temp file and rename). Files under /proc or /sys are not written with kt.`);
    }
    // Created, then the write failed (a full disk): nothing of it is left.
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") discard(path);
    throw fsError(error, display);
  }
  const { fd, st } = written;
  let open = true;
  try {
    if (opts.sync ?? true) fsyncSync(fd);
    if (opts.keepOpen) {
      open = false;
      return { path, mtimeMs: st.mtimeMs, size: st.size, fd, dev: st.dev };
    }
    return { path, mtimeMs: st.mtimeMs, size: st.size };
  } catch (error) {
    discard(path);
    throw fsError(error, display);
  } finally {
    if (open) closeSync(fd);
  }
}

function commit(temp: Temp, target: string, display: string): void {
  try {
    renameSync(temp.path, target);
  } catch (error) {
    throw fsError(error, display);
  }
}

/** fsync of a directory by path (after renames in it), for callers without an open descriptor. */
export function syncDir(dir: string): void {
  let fd: number;
  try {
    fd = openSync(dir, "r");
  } catch {
    return;
  }
  try {
    syncDirFd(fd);
  } finally {
    closeSync(fd);
  }
}

function syncDirFd(fd: number): void {
  try {
    fsyncSync(fd);
  } catch {
    // Some file systems refuse fsync on directories; the rename itself is still atomic.
  }
}
