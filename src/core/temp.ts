// A new content's temp file beside the file it will replace: its name and its writing, shared
// by the writers on this thread (writer.ts prepare) and replace's search threads, which write
// each change's temp file as they work the change out (search/rewrite.ts), many at once.
// Creating a file costs far more than writing it on some file systems (a new inode: on ext4
// without a journal, 0.2–0.9 ms each here while recently deleted inodes are skipped), and
// creates on several threads overlap. Only node:fs and node:path: the search threads load it.
import { closeSync, fchmodSync, fchownSync, fstatSync, openSync, unlinkSync, writeSync, type Stats } from "node:fs";
import { basename, dirname, join } from "node:path";

/** What a temp file copies of the file it replaces: its mode and owner. */
export interface Owner {
  mode: number;
  uid: number;
  gid: number;
}

/** A temp file a search thread wrote (closed, not yet synced), and how the commit knows it is that file. */
export interface StagedTemp {
  /** As the thread created it: beside the file, by the path its walk reached the file at. */
  path: string;
  /** Its file system and inode (its fstat): the commit takes it only if its verified directory holds this file under that name. */
  dev: number;
  ino: number;
  mtimeMs: number;
  size: number;
}

/** A fresh temp file name beside `target`, of the form removeStaleTemps (writer.ts) knows: `.NAME.kt-PID-RANDOM.tmp`. */
export function tempPathFor(target: string): string {
  return join(dirname(target), `.${basename(target)}.kt-${process.pid}-${Math.random().toString(36).slice(2, 8)}.tmp`);
}

/** Removes a temp file; one already renamed into place, or never created, is let be. */
export function discard(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already renamed or never created.
  }
}

/**
 * Creates `path` (it must not exist), writes `bytes` to it whole and gives it the mode and
 * owner of `previous` (or `mode` for a new file). The mode and owner are set only where the
 * new file did not get them already (the umask, or a file of another owner): one fstat
 * tells. Returns the open descriptor and that fstat; on a failure after the create, the
 * descriptor is closed and the error thrown (the caller removes the file).
 */
export function writeTempFile(path: string, bytes: Uint8Array, previous: Owner | null, mode: number | undefined): { fd: number; st: Stats } {
  const fd = openSync(path, "wx", mode ?? 0o666);
  try {
    for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off, bytes.length - off);
    // Neither fchown nor fchmod changes mtime or size: this fstat gives what the stamp records.
    const st = fstatSync(fd);
    let chowned = false;
    if (previous && (st.uid !== previous.uid || st.gid !== previous.gid)) {
      try {
        fchownSync(fd, previous.uid, previous.gid);
        chowned = true;
      } catch {
        // Only root may give a file away; an ordinary user keeps owning what they write.
      }
    }
    // After the chown, which may clear set-user-ID and set-group-ID bits.
    if (mode !== undefined && (chowned || (st.mode & 0o7777) !== mode)) fchmodSync(fd, mode);
    return { fd, st };
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}
