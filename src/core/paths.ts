// Path resolution and confinement (SPEC §3.6), and the mapping of file-system errors
// to prose with a code: every failure names the path and one concrete next step.
import { closeSync, constants, existsSync, fstatSync, openSync, readFileSync, readlinkSync, readSync, realpathSync, type Stats } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { KtError, type ToolContext } from "./result.ts";
import { safeName } from "./state.ts";

/** node:os, loaded for the few paths that start with "~" (every kt call would pay for it otherwise). */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const homedir = (): string => (require("node:os") as typeof import("node:os")).homedir();

/** The absolute, normalized form of a model-given path (relative to ctx.cwd; `~` expanded). */
export function absolutePath(ctx: Pick<ToolContext, "cwd">, input: string): string {
  if (input === "") {
    throw new KtError("INVALID_ARGS", "The path is empty. Give the path of a file or directory (absolute preferred).");
  }
  if (input.includes("\0")) {
    throw new KtError("INVALID_ARGS", `The path ${JSON.stringify(input)} contains a NUL character, which no file path can hold. Give the path without it.`);
  }
  let p = input;
  if (p === "~" || p.startsWith("~/")) p = join(homedir(), p.slice(1));
  return isAbsolute(p) ? resolve(p) : resolve(ctx.cwd, p);
}

/**
 * The real path of `abs` (symlinks resolved; for a path that does not exist yet, its
 * nearest existing ancestor's real path plus the rest), refused when outside ctx.root.
 * The session's own state folder (its spill files and process logs) stays reachable:
 * truncated output sends the model there to read the rest (SPEC §3.2).
 */
export function realPath(ctx: Pick<ToolContext, "root"> & Partial<Pick<ToolContext, "stateDir" | "session">>, abs: string): string {
  const real = realOf(abs);
  if (ctx.root !== undefined && !inside(ctx.root, real) && !inSessionState(ctx, real)) throw outsideRoot(ctx.root, abs, real);
  return real;
}

function outsideRoot(root: string, abs: string, real: string): KtError {
  const via = inside(root, abs) ? ` (through a symbolic link, its real path is ${onOneLine(real)})` : "";
  return new KtError(
    "OUTSIDE_ROOT",
    `Refusing to access ${onOneLine(abs)}${via}: it is outside the root directory ${onOneLine(root)}, and kt is confined to that directory. Use a path inside ${onOneLine(root)}.`,
  );
}

/** Linux names every open file's real path under /proc/self/fd; elsewhere there is no such check. */
const PROC_FD = process.platform === "linux" && existsSync("/proc/self/fd");

/**
 * The path through which an open directory or file is reached by its descriptor, whatever
 * happens to its name afterwards (Linux), else `fallback`. Paths below it resolve inside
 * the opened directory: this is how kt works in a directory without a window between
 * checking a path and using it.
 */
export function fdHandle(fd: number, fallback: string): string {
  return PROC_FD ? `/proc/self/fd/${fd}` : fallback;
}

/**
 * Checks, after opening, that the opened file is where the check before opening found it:
 * inside the root (or the session's state folder). A path swapped for a symbolic link
 * between the check and the open is caught here, since the descriptor, not the name, is
 * what kt then reads or writes through. Returns the opened file's real path.
 */
export function verifyOpened(ctx: Pick<ToolContext, "root"> & Partial<Pick<ToolContext, "stateDir" | "session">>, fd: number, abs: string, real: string): string {
  if (!PROC_FD) return real;
  let now: string;
  try {
    now = readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return real;
  }
  if (ctx.root !== undefined && !inside(ctx.root, now) && !inSessionState(ctx, now)) throw outsideRoot(ctx.root, abs, now);
  return now;
}

/**
 * Whether the opened descriptor `fd` is `dir` or below it, by its real path as the kernel
 * names it now (Linux; elsewhere there is no such check and the answer is yes). The
 * search tools open what their walk found by name, and a directory on the way may have
 * been swapped for a symbolic link since: this is checked before anything is read.
 */
export function openedBelow(fd: number, dir: string): boolean {
  if (!PROC_FD) return true;
  try {
    return inside(dir, readlinkSync(`/proc/self/fd/${fd}`));
  } catch {
    return false;
  }
}

/**
 * The whole of an opened regular file of `size` bytes (its fstat's): read into a buffer of the
 * size and a byte more, so that the read which reaches the end comes back short and no read
 * returning nothing is needed after it (readFileSync reads into a growing buffer until one
 * does). Only a short read that ends exactly at `size` is taken for the end; any other is
 * read on from. A file that grew since its fstat is read on to its end.
 */
export function readOpened(fd: number, size: number): Uint8Array {
  const buf = Buffer.allocUnsafe(size + 1);
  let got = 0;
  for (;;) {
    const n = readSync(fd, buf, got, buf.length - got, null);
    got += n;
    if (n === 0 || got === size) return buf.subarray(0, got);
    // Full: the file is longer than its fstat said; the rest is read as readFileSync would.
    if (got === buf.length) return Buffer.concat([buf, readFileSync(fd)]);
  }
}

/** Flags that open a file for reading without blocking on a FIFO or a device, or making it kt's terminal. */
export const READ_NONBLOCKING = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;

/** Opens `real` for reading without blocking (READ_NONBLOCKING); a failure is the
 * KtError for `display`. The caller closes the descriptor. */
export function openNonBlocking(real: string, display: string): number {
  try {
    return openSync(real, READ_NONBLOCKING);
  } catch (error) {
    throw fsError(error, display);
  }
}

/**
 * Opens a file for reading without ever blocking (a FIFO, or a file like /proc/kmsg that
 * waits for data, must not hang kt), refuses anything that is not a regular file, and
 * verifies the opened file against the root. The caller closes the descriptor.
 */
export function openRegular(
  ctx: Pick<ToolContext, "root"> & Partial<Pick<ToolContext, "stateDir" | "session">>,
  real: string,
  abs: string,
  tool: string,
): { fd: number; st: Stats } {
  const fd = openNonBlocking(real, abs);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw notRegular(abs, st, tool);
    verifyOpened(ctx, fd, abs, real);
    return { fd, st };
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/** Prose for a path that is a device, socket, pipe or directory where a regular file is needed. */
export function notRegular(abs: string, st: Pick<Stats, "isDirectory">, tool: string): KtError {
  if (st.isDirectory()) return new KtError("IS_DIRECTORY", `${onOneLine(abs)} is a directory, not a file. Give the path of a file inside it.`);
  return new KtError("INVALID_ARGS", `${onOneLine(abs)} is not a regular file (it is a device, socket or pipe); ${tool} works on regular files only. Use bash if you really mean to use it.`);
}

const CONTROL = /[\x00-\x1f\x7f-\x9f]/;
const CONTROLS = /[\x00-\x1f\x7f-\x9f]/g;
const ESCAPES: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/** A path as one line of a listing or of prose: a control character in a name (a newline,
 * an escape) is written as an escape (\n, \t, \x1b), or the name would read as two lines
 * or drive the reader's terminal. */
export function onOneLine(path: string): string {
  if (!CONTROL.test(path)) return path;
  return path.replace(CONTROLS, (c) => ESCAPES[c] ?? `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

function inSessionState(ctx: Partial<Pick<ToolContext, "stateDir" | "session">>, real: string): boolean {
  if (ctx.stateDir === undefined || ctx.session === undefined) return false;
  return inside(realOf(resolve(ctx.stateDir, "sessions", safeName(ctx.session))), real);
}

function realOf(abs: string): string {
  let head = abs;
  const rest: string[] = [];
  for (;;) {
    try {
      const real = realpathSync(head);
      if (!isAbsolute(real)) {
        // /proc/self/fd/N of a pipe or socket names no file ("pipe:[849471]"): resolving it
        // against the working directory would make up a file that was never meant.
        throw new KtError("INVALID_ARGS", `${onOneLine(abs)} is not a file on disk (it is ${onOneLine(real)}); kt's file tools work on files. Use bash to read from or write to a pipe or socket.`);
      }
      return rest.length ? join(real, ...rest.reverse()) : real;
    } catch (error) {
      if (error instanceof KtError) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ENOTDIR") throw fsError(error, abs);
      const parent = dirname(head);
      if (parent === head) return abs;
      rest.push(head.slice(parent.length).replace(/^[\\/]/, ""));
      head = parent;
    }
  }
}

export function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}

/** A path for display relative to the working directory when below it. */
export function displayPath(ctx: Pick<ToolContext, "cwd">, abs: string): string {
  const rel = relative(ctx.cwd, abs);
  return rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel : abs;
}

/** Turns a file-system error into a KtError whose prose names the path. Re-throws anything else. */
export function fsError(error: unknown, rawPath: string): KtError {
  if (error instanceof KtError) return error;
  const path = onOneLine(rawPath);
  const code = (error as NodeJS.ErrnoException)?.code;
  switch (code) {
    case "EACCES":
    case "EPERM":
      return new KtError("PERMISSION_DENIED", `Permission denied: ${path}. kt cannot access this path with the current user's permissions; choose another path or ask the user to change its permissions.`);
    case "ENOENT":
      return new KtError("FILE_NOT_FOUND", `File not found: ${path}.`);
    case "ENOTDIR":
      return new KtError("NOT_A_DIRECTORY", `Not a directory: a component of ${path} is a file, not a directory. Check the path.`);
    case "EISDIR":
      return new KtError("IS_DIRECTORY", `${path} is a directory, not a file. Use read on it to list its entries, or give a file path.`);
    case "ELOOP":
      return new KtError("FILE_NOT_FOUND", `Cannot resolve ${path}: too many levels of symbolic links (a symlink loop). Check the path.`);
    case "ENAMETOOLONG":
      return new KtError("INVALID_ARGS", `The path ${path.slice(0, 200)}… is too long for the file system. Use a shorter path.`);
    case "EAGAIN":
      return new KtError("INVALID_ARGS", `${path} has nothing to read now and would make kt wait for data that may never come (it behaves like a pipe, as /proc/kmsg does). Use bash with a timeout if you really mean to read from it.`);
    case "ENOSPC":
    case "EDQUOT":
      return new KtError("INTERNAL", `No space left on the device holding ${path}; nothing was written. Free some space and retry.`);
    case "EROFS":
      return new KtError("PERMISSION_DENIED", `${path} is on a read-only file system; nothing was written. Choose a writable location.`);
    default:
      // Any other refusal by the operating system (EIO on /proc/self/mem, ENXIO, EBUSY …) is a
      // fact about the path, not a bug in kt: say so, with the system's own words.
      if (typeof code === "string" && /^E[A-Z0-9]+$/.test(code)) {
        const why = ((error as Error).message ?? code).replace(/^[A-Z0-9]+: /, "").split(",")[0];
        return new KtError("INTERNAL", `Cannot access ${path}: the operating system refused (${code}: ${why}). Nothing was changed. Try another path, or inspect this one with bash.`);
      }
      throw error;
  }
}
