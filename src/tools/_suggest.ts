// "Did you mean" for a missing file: the closest names in its parent directory and in
// the tree below the working directory, by Levenshtein distance. The walk is bounded in
// entries and time so a miss in a huge tree stays cheap.
import { readdirSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { distance } from "fastest-levenshtein";
import { KtError, type ToolContext } from "./tool.ts";
import { displayPath, inside, onOneLine } from "../core/paths.ts";
import { NOISE_DIRS } from "./_listing.ts";

const MAX_ENTRIES = 20_000;
const MAX_MS = 150;

type Where = Pick<ToolContext, "cwd"> & Partial<Pick<ToolContext, "root">>;

export function notFound(ctx: Where, abs: string): KtError {
  const found = suggestions(ctx, abs);
  const tail = found.length > 0
    ? ` Did you mean one of these? ${found.map(onOneLine).join(", ")}`
    : " Use glob to search for it by name, or read the parent directory to list what is there.";
  return new KtError("FILE_NOT_FOUND", `File not found: ${onOneLine(abs)}.${tail}`);
}

/** Names near `abs`; under a root, only paths inside it (a suggestion must not reveal what lies outside). */
export function suggestions(ctx: Where, abs: string, max = 3): string[] {
  const want = basename(abs).toLowerCase();
  const wantRel = relative(ctx.cwd, abs).toLowerCase();
  const scored = new Map<string, number>();
  const consider = (path: string) => {
    if (path === abs || scored.has(path)) return;
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
