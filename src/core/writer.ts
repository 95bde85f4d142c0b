// The one file writer (SPEC §3.5): temp file in the same directory, fsync, rename.
// Mode bits and ownership are kept, symlinks are written through (callers pass the real
// path), and the freshness check is repeated inside the index's write lock so that two
// concurrent kt writes of one file either both land or one is refused — never lost.
// Parallel calls of one session (SPEC §7.5): a change computed from content that another kt
// call of the session has replaced since is recomputed under the lock (`redo`), so that they
// all land; only a change made outside the session is STALE_FILE.
import {
  closeSync, fchmodSync, fchownSync, fstatSync, fsyncSync, mkdirSync, openSync, readFileSync,
  renameSync, statSync, unlinkSync, writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { KtError, type ToolContext } from "../tools/tool.ts";
import { fsError } from "./paths.ts";
import { getStamp, notRead, putStamp, sha256, stale, type Verb } from "./stamps.ts";
import { index, withWriteLock } from "./state.ts";
import { newGroup, recordChange } from "./history.ts";

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
  let redone: Temp | undefined;
  try {
    withWriteLock(index(ctx), () => {
      const current = readIfExists(w.real, w.display);
      const currentSha = current === null ? null : sha256(current);
      let bytes = w.bytes;
      let written = temp;
      if (currentSha !== w.baseSha) {
        if (!w.redo || current === null || getStamp(ctx, w.real)?.sha256 !== currentSha) throw stale(w.display, w.verb);
        bytes = w.redo(current);
        written = redone = prepare(w.real, bytes, w.display);
      }
      const db = index(ctx);
      recordChange(ctx, db, newGroup(db, ctx.session), w.verb === "overwrite" ? "write" : w.verb, [
        { real: w.real, display: w.display, previous: current, previousMode: current === null ? null : modeOf(w.real), next: bytes },
      ]);
      commit(written, w.real, w.display);
      putStamp(ctx, w.real, { mtimeMs: written.mtimeMs, size: written.size, sha256: sha256(bytes) });
    });
  } catch (error) {
    discard(temp.path);
    if (redone) discard(redone.path);
    throw error;
  }
  if (redone) discard(temp.path);
  syncDir(dirname(w.real));
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
 */
export function freshContent(ctx: ToolContext, display: string, real: string, bytes: Uint8Array, verb: Verb): Uint8Array {
  const stamp = getStamp(ctx, real);
  if (!stamp) {
    if (ctx.flags.skipReadCheck) return bytes;
    throw notRead(display, verb);
  }
  if (stamp.sha256 === sha256(bytes)) return bytes;
  return withWriteLock(index(ctx), () => {
    const now = readIfExists(real, display);
    if (now === null || getStamp(ctx, real)?.sha256 !== sha256(now)) throw stale(display, verb);
    return now;
  });
}

export function readIfExists(real: string, display: string): Uint8Array | null {
  try {
    return readFileSync(real);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw fsError(error, display);
  }
}

export interface Temp {
  path: string;
  mtimeMs: number;
  size: number;
}

/**
 * The new content, complete and fsynced, in a temp file beside `target` with its mode and owner.
 * `sync: false` leaves the fsync to a caller that syncs many temp files at once.
 */
export function prepare(target: string, bytes: Uint8Array, display: string, sync = true): Temp {
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
    if (sync) fsyncSync(fd);
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

export function discard(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already renamed or never created.
  }
}

export function syncDir(dir: string): void {
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
