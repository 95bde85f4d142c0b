// Path resolution and confinement (SPEC §3.6), and the mapping of file-system errors
// to prose with a code: every failure names the path and one concrete next step.
import { realpathSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { KtError, type ToolContext } from "../tools/tool.ts";
import { safeName } from "./state.ts";

/** The absolute, normalized form of a model-given path (relative to ctx.cwd; `~` expanded). */
export function absolutePath(ctx: Pick<ToolContext, "cwd">, input: string): string {
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
  if (ctx.root !== undefined && !inside(ctx.root, real) && !inSessionState(ctx, real)) {
    const via = inside(ctx.root, abs) ? ` (through a symbolic link, its real path is ${real})` : "";
    throw new KtError(
      "OUTSIDE_ROOT",
      `Refusing to access ${abs}${via}: it is outside the root directory ${ctx.root}, and kt is confined to that directory. Use a path inside ${ctx.root}.`,
    );
  }
  return real;
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
      return rest.length ? join(real, ...rest.reverse()) : real;
    } catch (error) {
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
export function fsError(error: unknown, path: string): KtError {
  if (error instanceof KtError) return error;
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
