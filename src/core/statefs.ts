// The state directory is the user's own, or refused (SPEC §2, §8.7). What kt keeps there —
// the index, logs, spill files, kept versions, sockets, FIFOs — it trusts as its own, so a
// directory someone else prepared must never become their way in: the state directory and
// every directory kt uses below it must belong to this user and be writable by nobody else
// (as OpenSSH's StrictModes and tmux's socket directory require), and the files in it are
// created and opened without following a symbolic link. kt never changes the mode of a
// directory it did not just create.
import { chmodSync, closeSync, constants, fchmodSync, fstatSync, lstatSync, mkdirSync, openSync, readFileSync, readSync, realpathSync, statSync, writeSync, type Stats } from "node:fs";
import { dirname, join, resolve } from "node:path";

/** The state directory cannot be used at all: a fault of the environment, not of a tool call. */
export class StateError extends Error {
  override name = "StateError";
  /** PERMISSION_DENIED: the directory is not this user's own (it is refused, not broken). */
  readonly code: "INTERNAL" | "PERMISSION_DENIED";
  constructor(message: string, code: "INTERNAL" | "PERMISSION_DENIED" = "INTERNAL") {
    super(message);
    this.code = code;
  }
}

const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const S_ISVTX = 0o1000;

/** This process's user; undefined where there are no uids (Windows): nothing to compare. */
function myUid(): number | undefined {
  return process.getuid?.();
}

const names = new Map<number, string | undefined>();

/** The user name of `uid` from /etc/passwd, if it has one. */
function userName(uid: number): string | undefined {
  if (names.has(uid)) return names.get(uid);
  let name: string | undefined;
  try {
    for (const line of readFileSync("/etc/passwd", "utf8").split("\n")) {
      const [n, , id] = line.split(":");
      if (n && Number(id) === uid) {
        name = n;
        break;
      }
    }
  } catch {
    // No passwd file: the uid alone names the owner.
  }
  names.set(uid, name);
  return name;
}

/** "nobody (uid 65534)", or "uid 1234" for a uid without a name. */
export function ownerName(uid: number): string {
  const name = userName(uid);
  return name === undefined ? `uid ${uid}` : `${name} (uid ${uid})`;
}

/** "you (root, uid 0)". */
function you(uid: number): string {
  const name = userName(uid);
  return name === undefined ? `you (uid ${uid})` : `you (${name}, uid ${uid})`;
}

/** "0777 (drwxrwxrwx)". */
function modeText(st: Stats): string {
  const bits = st.mode & 0o7777;
  const kind = st.isDirectory() ? "d" : st.isSymbolicLink() ? "l" : st.isSocket() ? "s" : st.isFIFO() ? "p" : "-";
  let rwx = "";
  for (let shift = 6; shift >= 0; shift -= 3) {
    const b = (bits >> shift) & 7;
    rwx += (b & 4 ? "r" : "-") + (b & 2 ? "w" : "-") + (b & 1 ? "x" : "-");
  }
  if (bits & S_ISVTX) rwx = rwx.slice(0, 8) + (bits & 1 ? "t" : "T");
  return `${bits.toString(8).padStart(4, "0")} (${kind}${rwx})`;
}

function writableBy(st: Stats): string {
  const group = (st.mode & 0o020) !== 0;
  const other = (st.mode & 0o002) !== 0;
  return group && other ? "its group and everyone else" : other ? "everyone" : "its group";
}

const head = (stateDir: string) => `kt cannot use its state directory ${stateDir}:`;

function refuse(message: string): StateError {
  return new StateError(message, "PERMISSION_DENIED");
}

/** The prose for a directory (the state directory, or one kt uses in it) that is not this user's own, or undefined when it is. */
function notPrivate(stateDir: string, dir: string, st: Stats, uid: number): StateError | undefined {
  const which = dir === stateDir ? "it" : `${dir} in it`;
  // Named only in a refusal: the name is read from /etc/passwd.
  if (st.uid !== uid) {
    return refuse(
      `${head(stateDir)} ${which} belongs to ${ownerName(st.uid)}, not to ${you(uid)}, with mode ${modeText(st)}. Whoever owns it could read what kt keeps there and plant what kt would trust, so kt does not use it, and never changes a directory it does not own. Set KT_STATE_DIR (or --state-dir) to a directory of your own (kt creates a missing one, private), or remove ${dir} if it should not be there.`,
    );
  }
  if ((st.mode & 0o022) !== 0) {
    return refuse(
      `${head(stateDir)} ${which} belongs to ${you(uid)} but its mode is ${modeText(st)}: ${writableBy(st)} can write in it, and so plant what kt would trust. Make it private with chmod 700 ${dir} (or remove it: kt creates it again, private), or set KT_STATE_DIR (or --state-dir) to a private directory of your own.`,
    );
  }
  return undefined;
}

/** Directories checked (or made) private by this process: each is looked at once (a removed one again). */
const trusted = new Set<string>();

/**
 * Makes sure `stateDir` is a directory of this user's that nobody else can write, creating it
 * (and its parents) when missing — the directory itself `0700` whatever the umask. Throws a
 * StateError naming the path, its owner and mode, and what to do.
 */
export function ensureStateDir(stateDir: string): void {
  if (trusted.has(stateDir)) {
    if (lstatOrUndefined(stateDir)) return;
    // Removed since this process checked it: everything below it is checked afresh.
    for (const dir of [...trusted]) if (dir === stateDir || dir.startsWith(`${stateDir}/`)) trusted.delete(dir);
  }
  const uid = myUid();
  let link: Stats | undefined;
  try {
    link = lstatSync(stateDir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOTDIR") {
      throw new StateError(`${head(stateDir)} a file stands where a directory above it should be. Move that file out of the way, or set KT_STATE_DIR (or --state-dir) to another directory.`);
    }
    if (code !== "ENOENT") throw new StateError(`${head(stateDir)} ${describe(error)}. Set KT_STATE_DIR (or --state-dir) to a directory of your own.`);
  }
  if (link === undefined) {
    // Checked before anything is made: nothing is created below a directory that would be refused.
    if (uid !== undefined) checkAncestors(stateDir, nearestExisting(stateDir));
    makeMissing(stateDir);
    link = lstatSync(stateDir);
  }
  let st = link;
  if (link.isSymbolicLink()) {
    // The link itself may be replaced by whoever owns it: only this user's link, or root's, is followed.
    if (uid !== undefined && link.uid !== uid && link.uid !== 0) {
      throw refuse(
        `${head(stateDir)} it is a symbolic link owned by ${ownerName(link.uid)}, who can point it elsewhere at any time. Set KT_STATE_DIR (or --state-dir) to the directory itself, or to a directory of your own.`,
      );
    }
    try {
      st = statSync(stateDir);
    } catch (error) {
      throw new StateError(`${head(stateDir)} it is a symbolic link to a missing directory (${describe(error)}). Point it at an existing directory, or set KT_STATE_DIR (or --state-dir) to a directory of your own.`);
    }
  }
  if (!st.isDirectory()) {
    throw new StateError(`${head(stateDir)} it is a file, not a directory. Move that file out of the way (kt then creates the directory), or set KT_STATE_DIR (or --state-dir) to a directory.`);
  }
  if (uid !== undefined) {
    const bad = notPrivate(stateDir, stateDir, st, uid);
    if (bad) throw bad;
    let real: string | undefined;
    try {
      real = realpathSync(stateDir);
    } catch {
      // Checked above through its name; nothing more to see.
    }
    if (real !== undefined) checkAncestors(stateDir, dirname(real));
  }
  trusted.add(stateDir);
}

/**
 * A directory above the state directory that everyone can write, without the sticky bit
 * that /tmp has, lets anyone move the state directory aside and put their own in its place.
 */
function checkAncestors(stateDir: string, from: string): void {
  let at = from;
  for (;;) {
    let st: Stats;
    try {
      st = statSync(at);
    } catch {
      return;
    }
    if ((st.mode & 0o002) !== 0 && (st.mode & S_ISVTX) === 0) {
      throw refuse(
        `${head(stateDir)} the directory ${at} above it has mode ${modeText(st)}: everyone can write in it and it lacks the sticky bit /tmp has, so anyone could move the state directory aside and put their own in its place. Set KT_STATE_DIR (or --state-dir) to a directory whose parents only you (or root) can write, such as one under your home directory or directly in /tmp.`,
      );
    }
    const up = dirname(at);
    if (up === at) return;
    at = up;
  }
}

/** The real path of the deepest existing directory on the way to `dir`. */
function nearestExisting(dir: string): string {
  let at = dirname(resolve(dir));
  for (;;) {
    try {
      return realpathSync(at);
    } catch {
      const up = dirname(at);
      if (up === at) return at;
      at = up;
    }
  }
}

/** Creates a missing state directory: parents as mkdir -p would, the directory itself 0700. */
function makeMissing(stateDir: string): void {
  try {
    mkdirSync(dirname(stateDir), { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new StateError(`${head(stateDir)} its parent directory cannot be created (${describe(error)}). Set KT_STATE_DIR (or --state-dir) to a directory you can create.`);
  }
  makeOwn(stateDir, stateDir);
}

/** mkdir of one directory; when this call made it, its mode is set to 0700 (the umask may have taken bits). */
function makeOwn(stateDir: string, dir: string): void {
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return; // Made meanwhile by another kt (or planted): checked by the caller.
    if (code === "ENOENT" && trusted.has(dirname(dir))) throw new Vanished(dir);
    if (code === "ENOTDIR") {
      throw new StateError(`${head(stateDir)} a file stands where a directory above ${dir} should be. Move that file out of the way, or set KT_STATE_DIR (or --state-dir) to another directory.`);
    }
    throw new StateError(`${head(stateDir)} ${dir} cannot be created (${describe(error)}). Make the directory above it writable, or set KT_STATE_DIR (or --state-dir) to a writable directory.`);
  }
  // Made just now by this call, in a directory nobody else can write: the chmod reaches it.
  chmodSync(dir, 0o700);
}

/**
 * `<stateDir>/<parts…>`, each level created 0700 or checked: a real directory (never a
 * symbolic link), this user's, writable by nobody else.
 */
export function privateSubdir(stateDir: string, ...parts: string[]): string {
  try {
    return makeSubdirs(stateDir, parts);
  } catch (error) {
    if (!(error instanceof Vanished)) throw error;
    // Removed since this process checked it (a long-lived server, a host): checked and made afresh.
    for (const dir of [...trusted]) if (dir === stateDir || dir.startsWith(`${stateDir}/`)) trusted.delete(dir);
    return makeSubdirs(stateDir, parts);
  }
}

/** A directory this process had checked is gone. */
class Vanished extends Error {}

function makeSubdirs(stateDir: string, parts: string[]): string {
  ensureStateDir(stateDir);
  const uid = myUid();
  let dir = stateDir;
  for (const part of parts) {
    dir = join(dir, part);
    if (trusted.has(dir)) continue;
    makeOwn(stateDir, dir);
    let st: Stats;
    try {
      st = lstatSync(dir);
    } catch (error) {
      throw new StateError(`${head(stateDir)} ${dir} vanished as it was made (${describe(error)}). Retry; if it goes on, set KT_STATE_DIR (or --state-dir) to another directory.`);
    }
    if (!st.isDirectory()) {
      const what = st.isSymbolicLink() ? "a symbolic link" : "a file";
      throw refuse(`${head(stateDir)} ${dir} in it is ${what}, not a directory kt made, and kt never follows one there. Remove ${dir} (kt creates the directory again), or set KT_STATE_DIR (or --state-dir) to another directory.`);
    }
    if (uid !== undefined) {
      const bad = notPrivate(stateDir, dir, st, uid);
      if (bad) throw bad;
    }
    trusted.add(dir);
  }
  return dir;
}

function describe(error: unknown): string {
  const e = error as NodeJS.ErrnoException;
  switch (e?.code) {
    case "EACCES":
    case "EPERM":
      return "permission denied";
    case "EROFS":
      return "the file system is read-only";
    case "ENOSPC":
      return "the disk is full";
    case "ENOTDIR":
      return "a file stands where a directory should be";
    default:
      return (e?.message ?? String(error)).replace(/\.$/, "");
  }
}

/** A state file that is not what kt made there: a symbolic link, another kind of file, or another user's. */
export class StateFileError extends Error {
  override name = "StateFileError";
}

function unexpected(path: string, why: string): StateFileError {
  return new StateFileError(`${path} in kt's state directory is ${why}, which kt never follows or trusts there; remove it and retry`);
}

export type StateFileKind = "file" | "fifo";

/**
 * Opens a file of the state directory without following a symbolic link, creating it 0600
 * when `flags` ask for it, and checks the opened file: the kind wanted, this user's, and
 * readable by nobody else (a file of this user's that is wider is narrowed). The caller
 * closes the descriptor.
 */
export function openStateFile(path: string, flags: number, kind: StateFileKind = "file"): number {
  let fd: number;
  try {
    fd = openSync(path, flags | NOFOLLOW, 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ELOOP") throw unexpected(path, "a symbolic link");
    throw error;
  }
  // Made by this very call (O_EXCL never opens what was there, a link included): a regular
  // file of this user's, 0600 or narrower. Nothing to check.
  const made = constants.O_CREAT | constants.O_EXCL;
  if (kind === "file" && (flags & made) === made) return fd;
  try {
    const st = fstatSync(fd);
    if (kind === "file" ? !st.isFile() : !st.isFIFO()) throw unexpected(path, kind === "file" ? "not a regular file" : "not a FIFO");
    const uid = myUid();
    if (uid !== undefined && st.uid !== uid) throw unexpected(path, `owned by ${ownerName(st.uid)}, not by you`);
    if ((st.mode & 0o077) !== 0) fchmodSync(fd, 0o600);
    return fd;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/** Writes `data` as the whole of a state file (created 0600, never through a link). */
export function writeStateFile(path: string, data: string | Uint8Array, exclusive = false): void {
  const fd = openStateFile(path, constants.O_WRONLY | constants.O_CREAT | (exclusive ? constants.O_EXCL : constants.O_TRUNC));
  try {
    const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off, bytes.length - off);
  } finally {
    closeSync(fd);
  }
}

/** Appends `data` to a state file (created 0600 when missing, never through a link). */
export function appendStateFile(path: string, data: string): void {
  const fd = openStateFile(path, constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND);
  try {
    const bytes = Buffer.from(data, "utf8");
    for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off, bytes.length - off);
  } finally {
    closeSync(fd);
  }
}

/** Creates a state file that may exist already (a marker, a log), 0600, never through a link. */
export function touchStateFile(path: string): void {
  closeSync(openStateFile(path, constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND));
}

/** The whole of a state file, read without following a link or blocking on a FIFO. */
export function readStateFile(path: string): Buffer {
  const fd = openStateFile(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const size = fstatSync(fd).size;
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buf = Buffer.allocUnsafe(Math.max(size - total + 1, 65536));
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      chunks.push(buf.subarray(0, n));
      total += n;
    }
    return Buffer.concat(chunks, total);
  } finally {
    closeSync(fd);
  }
}

/** What is at `path` itself (a link is not followed), or undefined when nothing is. */
export function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}
