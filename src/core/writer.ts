// The one file writer (SPEC §3.5): temp file in the same directory, fsync, rename.
// Mode bits and ownership are kept, symlinks are written through (callers pass the real
// path), and the freshness check is repeated inside the index's write lock so that two
// concurrent kt writes of one file either both land or one is refused — never lost.
// guardedChange goes further (SPEC §7.5): a change computed from content that another kt
// call of the same session has since replaced is recomputed under the lock, so parallel
// edits of one file all land; only a change made outside the session is STALE_FILE.
import {
  closeSync, fchmodSync, fchownSync, fstatSync, fsyncSync, mkdirSync, openSync, readFileSync,
  renameSync, statSync, unlinkSync, writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { KtError, type ToolContext } from "../tools/tool.ts";
import { fsError } from "./paths.ts";
import { getStamp, notRead, putStamp, sha256, stale, type Verb } from "./stamps.ts";
import { index, withWriteLock } from "./state.ts";

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
}

/**
 * Writes atomically, re-checking under the lock that the file is still what the change was
 * based on. The new content is written and fsynced to a temp file before the lock is taken,
 * so the lock is held only for the check, the rename and the stamp.
 */
export function guardedWrite(ctx: ToolContext, w: GuardedWrite): void {
  if (w.mkdirs) {
    try {
      mkdirSync(dirname(w.real), { recursive: true });
    } catch (error) {
      throw fsError(error, dirname(w.real));
    }
  }
  const temp = prepare(w.real, w.bytes, w.display);
  try {
    withWriteLock(index(ctx), () => {
      const current = readIfExists(w.real, w.display);
      const currentSha = current === null ? null : sha256(current);
      if (currentSha !== w.baseSha) throw stale(w.display, w.verb);
      commit(temp, w.real, w.display);
      putStamp(ctx, w.real, { mtimeMs: temp.mtimeMs, size: temp.size, sha256: sha256(w.bytes) });
    });
  } catch (error) {
    discard(temp.path);
    throw error;
  }
  syncDir(dirname(w.real));
}

export interface Change<T extends { bytes: Uint8Array }> {
  /** The path as shown to the model. */
  display: string;
  /** The real path (symlinks resolved): the file actually replaced. */
  real: string;
  verb: Verb;
  /** The bytes the tool read: the file's content, or null when it did not exist. */
  current: Uint8Array | null;
  /**
   * The new bytes and whatever the tool reports about them, from the file's content (null:
   * no file). May throw a KtError (e.g. NO_MATCH), and may run a second time, under the lock,
   * on content another call of this session wrote meanwhile; so it must not touch disk.
   */
  compute(current: Uint8Array | null): T;
  /** Create missing parent directories (write does, edit never needs to). */
  mkdirs?: boolean;
}

/**
 * Applies a change under the read-before-write rules (SPEC §3.4) and the parallel-call rule
 * (SPEC §7.5). The lock covers the re-read, the match (compute), the write and the stamp.
 * Fast path: the change is computed and its temp file fsynced outside the lock, and the
 * lock is held only to see that the file is still what it was computed from. When it is not,
 * the file is recomputed under the lock if this session's stamp says the content on disk is
 * the session's own (a kt write or read of this session since); otherwise it is STALE_FILE.
 */
export function guardedChange<T extends { bytes: Uint8Array }>(ctx: ToolContext, c: Change<T>): T {
  const baseSha = c.current === null ? null : sha256(c.current);
  const stamp = getStamp(ctx, c.real);
  if (c.current !== null && !stamp && !ctx.flags.skipReadCheck) throw notRead(c.display, c.verb);
  if (c.mkdirs) {
    try {
      mkdirSync(dirname(c.real), { recursive: true });
    } catch (error) {
      throw fsError(error, dirname(c.real));
    }
  }
  const db = index(ctx);
  /** Under the lock: recompute from what is on disk now, if this session's stamp says it knows that content. */
  const again = (): T => {
    const now = readIfExists(c.real, c.display);
    const nowSha = now === null ? null : sha256(now);
    const own = getStamp(ctx, c.real);
    if (now === null || own?.sha256 !== nowSha) throw stale(c.display, c.verb);
    return install(c.compute(now));
  };
  const install = (planned: T, temp = prepare(c.real, planned.bytes, c.display)): T => {
    try {
      commit(temp, c.real, c.display);
    } catch (error) {
      discard(temp.path);
      throw error;
    }
    putStamp(ctx, c.real, { mtimeMs: temp.mtimeMs, size: temp.size, sha256: sha256(planned.bytes) });
    return planned;
  };

  let result: T;
  // The stamp may lag the file by one commit of a parallel call: decide under the lock then.
  if (stamp && baseSha !== null && stamp.sha256 !== baseSha) {
    result = withWriteLock(db, again);
  } else {
    const planned = c.compute(c.current);
    const temp = prepare(c.real, planned.bytes, c.display);
    try {
      result = withWriteLock(db, () => {
        const now = readIfExists(c.real, c.display);
        if ((now === null ? null : sha256(now)) === baseSha) return install(planned, temp);
        return again();
      });
    } finally {
      discard(temp.path);
    }
  }
  syncDir(dirname(c.real));
  return result;
}

export function readIfExists(real: string, display: string): Uint8Array | null {
  try {
    return readFileSync(real);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw fsError(error, display);
  }
}

interface Temp {
  path: string;
  mtimeMs: number;
  size: number;
}

/** The new content, complete and fsynced, in a temp file beside `target` with its mode and owner. */
function prepare(target: string, bytes: Uint8Array, display: string): Temp {
  let previous: { mode: number; uid: number; gid: number } | undefined;
  try {
    const st = statSync(target);
    previous = { mode: st.mode & 0o7777, uid: st.uid, gid: st.gid };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw fsError(error, display);
  }
  const path = join(dirname(target), `.${basename(target)}.kt-${process.pid}-${Math.random().toString(36).slice(2, 8)}.tmp`);
  let fd: number;
  try {
    fd = openSync(path, "wx", previous?.mode ?? 0o666);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT" && previous) {
      // The file exists but its directory takes no new files (/proc, /sys): no atomic write is possible.
      throw new KtError("PERMISSION_DENIED", `Cannot write ${display}: its directory does not accept new files, so kt cannot replace it safely (temp file and rename). Files under /proc or /sys are not written with kt.`);
    }
    throw fsError(error, display);
  }
  try {
    for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off, bytes.length - off);
    if (previous) {
      fchmodSync(fd, previous.mode);
      try {
        fchownSync(fd, previous.uid, previous.gid);
      } catch {
        // Only root may give a file away; an ordinary user keeps owning what they write.
      }
    }
    fsyncSync(fd);
    const st = fstatSync(fd);
    return { path, mtimeMs: st.mtimeMs, size: st.size };
  } catch (error) {
    discard(path);
    throw fsError(error, display);
  } finally {
    closeSync(fd);
  }
}

function commit(temp: Temp, target: string, display: string): void {
  try {
    renameSync(temp.path, target);
  } catch (error) {
    throw fsError(error, display);
  }
}

function discard(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already renamed or never created.
  }
}

function syncDir(dir: string): void {
  try {
    const fd = openSync(dir, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Some file systems refuse fsync on directories; the rename itself is still atomic.
  }
}
