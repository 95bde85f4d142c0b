// "Did you mean" for a missing file: the same path taken from the project's top when the
// model lost its place in a subdirectory, then the closest names in its parent directory
// and in the tree below the working directory, by Levenshtein distance. The walk is bounded in
// entries and time so a miss in a huge tree stays cheap.
import { existsSync, readdirSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative } from "node:path";
import { distance } from "fastest-levenshtein";
import { KtError, type ToolContext } from "./result.ts";
import { displayPath, inside, onOneLine } from "./paths.ts";
import { NOISE_DIRS } from "./noise.ts";

const MAX_ENTRIES = 20_000;
const MAX_MS = 150;

type Where = Pick<ToolContext, "cwd"> & Partial<Pick<ToolContext, "root">>;

export function notFound(ctx: Where, abs: string): KtError {
  const meant = meantInstead(ctx, abs);
  const found = suggestions(ctx, abs, 3, meant);
  const maybe = meant === undefined ? "" : ` Maybe you meant ${onOneLine(meant)}?`;
  const tail = found.length > 0
    ? ` Did you mean one of these? ${found.map(onOneLine).join(", ")}`
    : meant !== undefined ? "" : " Use glob to search for it by name, or read the parent directory to list what is there.";
  return new KtError("FILE_NOT_FOUND", `File not found: ${onOneLine(abs)}.${maybe}${tail}`);
}

/**
 * Relative-path confusion (KHAELOR §2.4): a path meant relative to the project's top — the
 * root kt is confined to, else the enclosing git repository — given from a subdirectory.
 * When the path, taken relative to that top instead of the working directory, names
 * something that exists (inside the root), that is the likeliest meaning.
 */
export function meantInstead(ctx: Where, abs: string): string | undefined {
  const rel = relative(ctx.cwd, abs);
  if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) return undefined;
  for (const top of [ctx.root, gitTop(ctx.cwd)]) {
    if (top === undefined || top === ctx.cwd) continue;
    const candidate = join(top, rel);
    if (candidate === abs || !existsSync(candidate)) continue;
    if (ctx.root !== undefined) {
      let real: string;
      try {
        real = realpathSync(candidate);
      } catch {
        continue;
      }
      if (!inside(ctx.root, real)) continue;
    }
    return candidate;
  }
  return undefined;
}

/** The top level of the git repository holding `dir` (the nearest ancestor with a .git). */
function gitTop(dir: string): string | undefined {
  for (let d = dir; ; d = dirname(d)) {
    if (existsSync(join(d, ".git"))) return d;
    if (dirname(d) === d) return undefined;
  }
}

/** Names near `abs`; under a root, only paths inside it (a suggestion must not reveal what lies outside). */
export function suggestions(ctx: Where, abs: string, max = 3, exclude?: string): string[] {
  const want = basename(abs).toLowerCase();
  const wantRel = relative(ctx.cwd, abs).toLowerCase();
  const scored = new Map<string, number>();
  const consider = (path: string) => {
    if (path === abs || path === exclude || scored.has(path)) return;
    if (ctx.root !== undefined && !inside(ctx.root, path)) return;
    const name = basename(path).toLowerCase();
    const d = distance(name, want);
    if (d > Math.max(2, Math.floor(want.length / 3))) return;
    // Same-name files elsewhere rank first; the whole relative path breaks ties.
    scored.set(path, d * 1000 + distance(relative(ctx.cwd, path).toLowerCase(), wantRel));
  };
  const parent = nearestExistingDir(dirname(abs));
  for (const name of safeList(parent)) consider(join(parent, name));
  walk(ctx.cwd, consider);
  return [...scored.entries()]
    .sort((a, b) => a[1] - b[1])
    .slice(0, max)
    .map(([path]) => displayPath(ctx, path));
}

function nearestExistingDir(dir: string): string {
  for (let d = dir; ; d = dirname(d)) {
    try {
      readdirSync(d);
      return d;
    } catch {
      if (dirname(d) === d) return d;
    }
  }
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function walk(root: string, visit: (path: string) => void): void {
  const deadline = performance.now() + MAX_MS;
  const queue = [root];
  let seen = 0;
  while (queue.length > 0) {
    const dir = queue.shift()!;
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (entry.name.startsWith(".") || NOISE_DIRS.has(entry.name)) continue;
      const path = join(dir, entry.name);
      visit(path);
      if (entry.isDirectory()) queue.push(path);
      if (++seen >= MAX_ENTRIES) return;
    }
    if (performance.now() > deadline) return;
  }
}
