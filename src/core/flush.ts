// Making many new files durable at once (the multi-file commit, SPEC §7.1). One fsync per
// file costs the file system a journal commit each, and even issued together ext4 takes them
// a few at a time: 293 files of 20 KB, 20–50 ms here. On Linux ≥ 5.8, where syncfs(2) reports
// the writeback errors of the file system it flushes, one syncfs per file system holding the
// files does the same work in one commit: 0.5–7 ms. It also flushes whatever else is dirty
// there (another program's writes), which an fsync would not wait for: so it is kept for
// changes of many files, and only while the system holds little unwritten data besides the
// change's own (/proc/meminfo); a busy disk gets the fsyncs. A syncfs that fails, or a system
// without it, gets one fsync per file, which names the file whose data did not reach the disk.
import { closeSync, fstatSync, fsync, openSync, readFileSync } from "node:fs";

/** A change of fewer files than this is synced one fsync per file and per directory. */
export const MANY = 8;

interface Libc {
  syncFileRange(fd: number): void;
  /** 0, or -1 when the file system reported an error. */
  syncfs(fd: number): number;
}

let libc: Libc | null | undefined;

/** The two calls through libc (glibc on Linux), loaded the first time a change has many files. */
async function loadLibc(): Promise<Libc | null> {
  if (libc !== undefined) return libc;
  libc = null;
  if (process.platform !== "linux") return libc;
  try {
    const { dlopen, FFIType } = await import("bun:ffi");
    const lib = dlopen("libc.so.6", {
      sync_file_range: { args: [FFIType.i32, FFIType.i64, FFIType.i64, FFIType.u32], returns: FFIType.i32 },
      syncfs: { args: [FFIType.i32], returns: FFIType.i32 },
    });
    const SYNC_FILE_RANGE_WRITE = 2;
    const reports = syncfsReportsErrors((require("node:os") as typeof import("node:os")).release());
    libc = {
      syncFileRange: (fd) => void lib.symbols.sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE),
      // Before Linux 5.8 syncfs returned 0 whatever writeback failed: not to be trusted then.
      syncfs: reports ? (fd) => lib.symbols.syncfs(fd) : () => -1,
    };
  } catch {
    // Another libc (musl), or no FFI: fsync alone.
  }
  return libc;
}

/** Linux 5.8 and later: syncfs returns the file system's writeback errors (errseq). */
export function syncfsReportsErrors(release: string): boolean {
  const m = /^(\d+)\.(\d+)/.exec(release);
  if (!m) return false;
  const [major, minor] = [Number(m[1]), Number(m[2])];
  return major > 5 || (major === 5 && minor >= 8);
}

/** Test seam: the libc calls replaced (null: none available), or restored (undefined). */
export function setLibcForTest(fake: Libc | null | undefined): void {
  libc = fake;
}

/** Data written but not yet on disk, system-wide (Dirty + Writeback), in bytes; undefined when unknown. */
function unwrittenBytes(): number | undefined {
  let text: string;
  try {
    text = readFileSync("/proc/meminfo", "latin1");
  } catch {
    return undefined;
  }
  let kb = 0;
  let seen = 0;
  for (const m of text.matchAll(/^(Dirty|Writeback):\s+(\d+) kB$/gm)) {
    kb += Number(m[2]);
    seen++;
  }
  return seen === 2 ? kb * 1024 : undefined;
}

let unwritten = unwrittenBytes;

/** Test seam: what the system has left to write, replaced, or restored (undefined). */
export function setUnwrittenForTest(fake: (() => number | undefined) | undefined): void {
  unwritten = fake ?? unwrittenBytes;
}

/** Unwritten data beyond the change's own, in bytes, past which a syncfs could wait on another program's writes. */
export const BUSY_BYTES = 64 * 1024 * 1024;

/**
 * Whether a syncfs would wait for little but the change itself: what the system has left to
 * write is at most the change's files and their kept versions (`own` bytes, twice), plus
 * BUSY_BYTES. Unknown counts as busy.
 */
function quiet(own: number): boolean {
  const left = unwritten();
  return left !== undefined && left <= 2 * own + BUSY_BYTES;
}

export interface Pending {
  /**
   * The open descriptor of a new file (closed once synced, whatever the outcome); undefined
   * for a file written and closed already, opened by `path` only where a flush needs it (a
   * syncfs needs one descriptor per file system, an fsync each).
   */
  fd?: number;
  path?: string;
  /** Its file system (fstat's dev). */
  dev: number;
  /** Its size in bytes. */
  size: number;
}

/**
 * Starts the writeback of every file before anything waits for any (sync_file_range
 * SYNC_FILE_RANGE_WRITE): the data is on its way while the caller does other work, and the
 * file system allocates it in a few transactions. Only a hint.
 */
export async function startWriteback(fds: readonly number[]): Promise<void> {
  if (fds.length < MANY) return;
  const calls = await loadLibc();
  if (calls) for (const fd of fds) calls.syncFileRange(fd);
}

/**
 * Every file durable, its descriptor closed: a syncfs per file system when there are many
 * and it can be trusted, else an fsync each in the runtime's thread pool. Rejects with the
 * first failed file's error, mapped by `failure` (its index in `files`), after every
 * descriptor is closed.
 */
export async function flushFiles(files: readonly Pending[], failure: (error: unknown, i: number) => unknown): Promise<void> {
  const opened = files.map((f) => f.fd);
  try {
    const calls = files.length >= MANY ? await loadLibc() : null;
    if (calls && quiet(files.reduce((sum, f) => sum + f.size, 0))) {
      // One descriptor per file system: the first file's of each.
      const firsts: { fd: number; dev: number }[] = [];
      const seen = new Set<number>();
      for (let i = 0; i < files.length; i++) {
        if (seen.has(files[i]!.dev)) continue;
        seen.add(files[i]!.dev);
        firsts.push({ fd: openOf(files, opened, i, failure), dev: files[i]!.dev });
      }
      if (syncedWhole(calls, firsts)) {
        for (const fd of opened) if (fd !== undefined) closeQuietly(fd);
        return;
      }
    }
    for (let i = 0; i < files.length; i++) openOf(files, opened, i, failure);
  } catch (error) {
    for (const fd of opened) if (fd !== undefined) closeQuietly(fd);
    throw error;
  }
  // Every fsync is waited for, failed or not, so that no descriptor is closed under one still running.
  const results = await Promise.allSettled(
    opened.map(
      (fd, i) =>
        new Promise<void>((resolve, reject) =>
          fsync(fd!, (error) => {
            closeQuietly(fd!);
            opened[i] = undefined;
            if (error) reject(failure(error, i));
            else resolve();
          }),
        ),
    ),
  );
  for (const r of results) if (r.status === "rejected") throw r.reason;
}

/** The i-th file's descriptor, opened by its path now if it has none; a failure is the file's. */
function openOf(files: readonly Pending[], opened: (number | undefined)[], i: number, failure: (error: unknown, i: number) => unknown): number {
  const fd = opened[i];
  if (fd !== undefined) return fd;
  try {
    // For writing: an fsync on Windows needs it.
    return (opened[i] = openSync(files[i]!.path!, "r+"));
  } catch (error) {
    throw failure(error, i);
  }
}

/**
 * The renames in these directories durable: a syncfs per file system for a change of many
 * files (`files`, however few directories hold them), else an fsync each. A file system that
 * refuses either on a directory is let be (each rename itself is atomic).
 */
export async function flushDirs(fds: readonly number[], files: number): Promise<void> {
  const calls = files >= MANY ? await loadLibc() : null;
  if (calls && quiet(0)) {
    const devs: { fd: number; dev: number }[] = [];
    for (const fd of fds) {
      try {
        devs.push({ fd, dev: fstatSync(fd).dev });
      } catch {
        // Closed or gone: nothing of ours to flush through it.
      }
    }
    if (syncedWhole(calls, devs)) return;
  }
  await Promise.all(fds.map((fd) => new Promise<void>((resolve) => fsync(fd, () => resolve()))));
}

/** One syncfs through the first descriptor of each file system; false when any failed. */
function syncedWhole(calls: Libc, fds: readonly { fd: number; dev: number }[]): boolean {
  const firstOf = new Map<number, number>();
  for (const { fd, dev } of fds) if (!firstOf.has(dev)) firstOf.set(dev, fd);
  let ok = true;
  for (const fd of firstOf.values()) if (calls.syncfs(fd) !== 0) ok = false;
  return ok;
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Closed already.
  }
}

