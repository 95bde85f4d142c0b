// Missing parent directories, created through verified descriptors as files already are
// (issue 29 item 1). The nearest existing ancestor is opened and verified inside the root
// after opening; each missing component is then made in the directory that descriptor
// holds and opened in its turn without following a link, so a directory swapped for a
// symbolic link after the path was checked can never send a mkdir outside the root.
// Without /proc/self/fd (not Linux) components are made by path and checked after: one
// that landed outside the root is removed again.
import { closeSync, constants, mkdirSync, openSync, realpathSync, rmdirSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { KtError, type ToolContext } from "./result.ts";
import { fdHandle, fsError, inside, realPath, verifyOpened } from "./paths.ts";

type Ctx = Pick<ToolContext, "root"> & Partial<Pick<ToolContext, "stateDir" | "session">>;

const DIR = constants.O_RDONLY | constants.O_DIRECTORY;

/**
 * Opens the directory `dir` (a real path already checked inside the root), creating its
 * missing components; returns its descriptor, verified inside the root. The paths of the
 * directories it made are pushed onto `created` (for a caller that removes them when its
 * change fails). `notDir` words the refusal when an existing component is not a directory.
 * Throws a KtError (OUTSIDE_ROOT when a swap sent a component outside) or an errno error.
 */
export function openDirCreating(ctx: Ctx, dir: string, display: string, notDir: (path: string) => KtError, created: string[] = []): number {
  const { base, missing } = nearestExisting(dir, notDir);
  return descend(ctx, base, missing, display, notDir, created);
}

/**
 * Creates the missing components of `dir` as openDirCreating does, for a caller that opens
 * (and verifies) the directory itself afterwards: a directory that exists costs one stat.
 */
export function createMissingDirs(ctx: Ctx, dir: string, display: string, notDir: (path: string) => KtError, created: string[] = []): void {
  const { base, missing } = nearestExisting(dir, notDir);
  if (missing.length > 0) closeSync(descend(ctx, base, missing, display, notDir, created));
}

/** The nearest ancestor of `dir` (or itself) that exists, and the names below it, outermost first. */
function nearestExisting(dir: string, notDir: (path: string) => KtError): { base: string; missing: string[] } {
  const missing: string[] = [];
  let base = dir;
  for (;;) {
    try {
      if (statSync(base).isDirectory()) return { base, missing: missing.reverse() };
      throw notDir(base);
    } catch (error) {
      if (error instanceof KtError) throw error;
      if ((error as NodeJS.ErrnoException).code !== "ENOENT" || dirname(base) === base) throw error;
      missing.push(basename(base));
      base = dirname(base);
    }
  }
}

function descend(ctx: Ctx, base: string, missing: readonly string[], display: string, notDir: (path: string) => KtError, created: string[]): number {
  let fd = openVerified(ctx, base, display, base);
  let path = base;
  try {
    for (const name of missing) {
      const next = join(path, name);
      const handle = fdHandle(fd, path);
      const throughFd = handle !== path;
      const at = join(handle, name);
      let made = false;
      try {
        mkdirSync(at);
        made = true;
      } catch (error) {
        // Made meanwhile by another writer (or a link put there: opened below, refused if outside).
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      if (made && !throughFd) confirmInside(ctx, next);
      if (made) created.push(next);
      const child = openComponent(ctx, at, display, next, notDir);
      closeSync(fd);
      fd = child;
      path = next;
    }
    return fd;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

function openVerified(ctx: Ctx, at: string, display: string, real: string, flags = 0): number {
  const fd = openSync(at, DIR | flags);
  try {
    verifyOpened(ctx, fd, display, real);
    return fd;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/**
 * A component just made (or found made) in an opened directory, opened without following a
 * link. A link that appeared there meanwhile is followed only to be verified: inside the
 * root it is what resolving the path would have given; outside, OUTSIDE_ROOT.
 */
function openComponent(ctx: Ctx, at: string, display: string, real: string, notDir: (path: string) => KtError): number {
  try {
    return openVerified(ctx, at, display, real, constants.O_NOFOLLOW);
  } catch (error) {
    // A link there fails as ENOTDIR (with O_DIRECTORY) or ELOOP; so does a file, opened again below.
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "ENOTDIR" && code !== "ELOOP") throw error;
  }
  try {
    return openVerified(ctx, at, display, real);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOTDIR") throw notDir(real);
    throw error;
  }
}

/**
 * Where descriptors cannot name a directory, the component was made by path: a swap on the
 * way may have put it outside the root, where it is removed again before kt refuses.
 */
function confirmInside(ctx: Ctx, path: string): void {
  if (ctx.root === undefined) return;
  let real: string;
  try {
    real = realpathSync(path);
  } catch (error) {
    throw fsError(error, path);
  }
  if (inside(ctx.root, real)) return;
  try {
    rmdirSync(real);
  } catch {
    // Filled or gone meanwhile: not kt's to remove any more.
  }
  realPath(ctx, real);
}
