// The directory walk grep and glob share, with ripgrep's default filters so that the
// built-in engine and rg see the same files:
// - .gitignore only inside a git repository (a `.git` in the directory or an ancestor),
//   each file relative to its own directory, from the entry's directory up to the
//   repository root, then .git/info/exclude; .ignore and .rgignore in every directory
//   and every ancestor, above .gitignore in precedence;
// - hidden entries skipped unless an ignore file whitelists them; symlinks not followed;
//   noise directories (noise.ts: node_modules, dist, build, target, .git, …) skipped
//   unless exempted;
// - .ktignore last, as a pure exclusion layer: its "!" lines cancel only its own earlier
//   lines and never bring back what the other files or the hidden rule left out (that
//   keeps the rg engine exact: it applies .ktignore after rg has walked).
// Ignored directories are pruned before they are read. The walk is depth-first over an
// explicit stack, so memory grows with depth and fan-out, never with the whole tree.
import { closeSync, constants, existsSync, openSync, readdirSync, readFileSync, statSync, type Dirent } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { compileIgnore, Match, type IgnoreRules } from "./ignore.ts";
import { fdHandle, openedBelow } from "../core/paths.ts";

export { NOISE } from "../core/noise.ts";

/** One ignore file in a chain, nearest directory first. */
interface Link {
  rules: IgnoreRules;
  /** The directory holding the file, with a trailing slash. */
  prefix: string;
  next: Link | null;
}

/** The ignore files that apply inside one directory, per kind, nearest first. */
export interface Chains {
  rg: Link | null;
  ig: Link | null;
  gi: Link | null;
  ex: Link | null;
  kt: Link | null;
  /** The directory is inside a git repository. */
  repo: boolean;
}

const EMPTY: Chains = { rg: null, ig: null, gi: null, ex: null, kt: null, repo: false };

export interface WalkOptions {
  /** Absolute real path of the directory to walk; it is never itself filtered. */
  root: string;
  /** Skip hidden entries (names starting with "."). */
  hidden: boolean;
  /** Directory names to skip wherever they occur. */
  noise: ReadonlySet<string>;
  /** performance.now() value after which the walk stops. */
  deadline?: number;
  /** Called for a directory that cannot be listed. */
  onUnreadable?(abs: string): void;
  /**
   * With a root (--root): the real path every directory read must be at or below. Each is
   * opened, its descriptor verified, and read (with its ignore files) through that
   * descriptor, so a directory swapped for a symbolic link between the listing of its
   * parent and its own reading is never listed (the walk follows no links). Absent: each
   * is read by name.
   */
  confine?: string;
  /** Files of one directory visited at once (see SLICE). */
  slice?: number;
}

/** What a visitor answers for an entry (ripgrep's ignore crate's WalkState): go on; do
 * not enter this directory (for a file, the same as going on); or stop the walk. */
export const enum WalkState {
  Continue,
  Skip,
  Quit,
}

/**
 * Called for every file, and for every directory before it is entered, that the ignore
 * rules keep. `rel` is relative to the root, with "/" separators. Nothing (undefined)
 * means Continue.
 */
export type Visit = (abs: string, rel: string, dir: boolean) => WalkState | void;

export interface WalkResult {
  timedOut: boolean;
  stopped: boolean;
}

/** A directory to read, or (with `files`) files of a large directory already read and
 * filtered, still to be visited. */
interface Frame {
  abs: string;
  rel: string;
  chains: Chains;
  /** "abs", "rel" pairs, flat. */
  files?: string[];
}

/** Files of one directory visited at once by default; the rest of a larger directory is
 * left on the stack in slices of this size, so that walkers sharing a walk can share it
 * too (one directory of /usr/share holds 17,575 files, more than a third of the tree). */
const SLICE = 512;

export function walk(opts: WalkOptions, visit: Visit): WalkResult {
  const walker = new Walker(opts);
  for (;;) {
    const result = walker.step(visit, Number.POSITIVE_INFINITY);
    if (result) return result;
  }
}

/** A directory still to be read, or a slice of files still to be visited, as it crosses
 * to another thread (without its chains). */
export interface DirRef {
  abs: string;
  rel: string;
  files?: string[];
}

/**
 * The walk in steps of a few directories, for callers that must do other work between.
 * Two walkers can share one walk: `split` hands over directories not yet read (whole
 * subtrees, disjoint from what stays), and `add` takes them in on the other side.
 */
export class Walker {
  private readonly stack: Frame[];
  /** Chains of directories above handed-over ones, each computed once. */
  private readonly above = new Map<string, Chains>();

  /** Starts at opts.root, or with `dirs` (directories below it) when given. */
  constructor(
    private readonly opts: WalkOptions,
    dirs?: readonly DirRef[],
  ) {
    this.stack = dirs ? [] : [{ abs: opts.root, rel: "", chains: ancestorChains(opts.root) }];
    if (dirs) this.add(dirs);
  }

  /** Directories still to be read. */
  get pending(): number {
    return this.stack.length;
  }

  /** Takes away the shallower half of the directories still to be read (the bottom of
   * the stack: the largest subtrees, likely). */
  split(): DirRef[] {
    const taken = this.stack.splice(0, Math.floor(this.stack.length / 2));
    return taken.map(({ abs, rel, files }) => (files ? { abs, rel, files } : { abs, rel }));
  }

  /** Directories handed over by another walker of the same walk. Their ignore chains are
   * rebuilt from the disk, as ancestorChains does, which gives what the walk had. */
  add(dirs: readonly DirRef[]): void {
    for (const { abs, rel, files } of dirs) {
      // A slice of files was filtered when its directory was read: no chains needed.
      this.stack.push(files ? { abs, rel, chains: EMPTY, files } : { abs, rel, chains: chainsOfEntries(dirname(abs), this.above) });
    }
  }

  /** Walks up to `dirs` directories; the result when the walk ended, else null. */
  step(visit: Visit, dirs: number): WalkResult | null {
    const { stack, opts } = this;
    const { hidden, noise, deadline } = opts;
    const sliceSize = opts.slice ?? SLICE;
    for (let done = 0; done < dirs; done++) {
      const frame = stack.pop();
      if (!frame) return { timedOut: false, stopped: false };
      // Checked between directories, never before the first, so a search past its
      // deadline still covers the root's own files (the visitor can stop sooner).
      if (deadline !== undefined && frame.abs !== opts.root && performance.now() > deadline) return { timedOut: true, stopped: false };
      if (frame.files) {
        const files = frame.files;
        for (let i = 0; i < files.length; i += 2) if (visit(files[i]!, files[i + 1]!, false) === WalkState.Quit) return { timedOut: false, stopped: true };
        continue;
      }
      let entries: Dirent[];
      let fd = -1;
      try {
        if (opts.confine !== undefined) {
          fd = openSync(frame.abs, constants.O_RDONLY | constants.O_DIRECTORY);
          // Now a link to elsewhere: not a directory of this walk any more.
          if (!openedBelow(fd, opts.confine)) {
            closeSync(fd);
            continue;
          }
        }
        entries = readdirSync(fd === -1 ? frame.abs : fdHandle(fd, frame.abs), { withFileTypes: true });
      } catch {
        if (fd !== -1) closeSync(fd);
        opts.onUnreadable?.(frame.abs);
        continue;
      }
      const prefix = frame.abs.endsWith("/") ? frame.abs : `${frame.abs}/`;
      let chains: Chains;
      try {
        chains = extend(frame.chains, prefix, entries, fd === -1 ? prefix : `${fdHandle(fd, frame.abs)}/`);
      } finally {
        if (fd !== -1) closeSync(fd);
      }
      const filtered = chains.rg || chains.ig || chains.gi || chains.ex || chains.kt;
      let visited = 0;
      let slice: string[] | null = null;
      for (const entry of entries) {
        const name = entry.name;
        const isDir = entry.isDirectory();
        if (!isDir && !entry.isFile()) continue;
        if (isDir && noise.has(name)) continue;
        const abs = prefix + name;
        if (filtered) {
          const m = decide(chains, abs, name, isDir);
          if (m === Match.Ignore || (m === Match.None && hidden && name.charCodeAt(0) === 46)) continue;
          if (chains.kt && firstMatch(chains.kt, abs, name, isDir) === Match.Ignore) continue;
        } else if (hidden && name.charCodeAt(0) === 46) continue;
        const rel = frame.rel === "" ? name : `${frame.rel}/${name}`;
        if (isDir) {
          const state = visit(abs, rel, true);
          if (state === WalkState.Quit) return { timedOut: false, stopped: true };
          if (state !== WalkState.Skip) stack.push({ abs, rel, chains });
        } else if (visited < sliceSize) {
          visited++;
          if (visit(abs, rel, false) === WalkState.Quit) return { timedOut: false, stopped: true };
        } else {
          (slice ??= []).push(abs, rel);
          if (slice.length === 2 * sliceSize) {
            stack.push({ abs: frame.abs, rel: frame.rel, chains, files: slice });
            slice = null;
          }
        }
      }
      if (slice) stack.push({ abs: frame.abs, rel: frame.rel, chains, files: slice });
    }
    return stack.length === 0 ? { timedOut: false, stopped: false } : null;
  }
}

/** rg's precedence: .rgignore, then .ignore, then .gitignore, then .git/info/exclude. */
function decide(chains: Chains, abs: string, name: string, isDir: boolean): Match {
  let m = firstMatch(chains.rg, abs, name, isDir);
  if (m !== Match.None) return m;
  m = firstMatch(chains.ig, abs, name, isDir);
  if (m !== Match.None) return m;
  m = firstMatch(chains.gi, abs, name, isDir);
  if (m !== Match.None) return m;
  return firstMatch(chains.ex, abs, name, isDir);
}

function firstMatch(link: Link | null, abs: string, name: string, isDir: boolean): Match {
  for (let l = link; l; l = l.next) {
    const m = l.rules.match(abs.slice(l.prefix.length), name, isDir);
    if (m !== Match.None) return m;
  }
  return Match.None;
}

const IGNORE_FILES = new Set([".gitignore", ".ignore", ".rgignore", ".ktignore", ".git"]);

/** The chains inside a directory, given its parent's chains and its entries; its ignore
 * files are read below `via` (its path, or the path of its opened descriptor). */
function extend(parent: Chains, prefix: string, entries: readonly Dirent[], via: string): Chains {
  let found: Set<string> | null = null;
  for (const e of entries) {
    if (e.name.charCodeAt(0) === 46 && IGNORE_FILES.has(e.name)) (found ??= new Set()).add(e.name);
  }
  // Outside a repository gi and ex are already null, so a directory without ignore
  // files inherits its parent's chains unchanged.
  if (!found) return parent;
  return level(parent, prefix, (name) => found.has(name), via);
}

/** `via`: where the directory's files are read from (its path, unless opened). */
function level(parent: Chains, prefix: string, has: (name: string) => boolean, via = prefix): Chains {
  const hasGit = has(".git");
  const repo = hasGit || parent.repo;
  const link = (file: string, next: Link | null): Link | null => {
    if (!has(file)) return next;
    const rules = readRules(via + file);
    return rules ? { rules, prefix, next } : next;
  };
  // Above the nearest repository root, .gitignore files do not apply (rg's "saw_git").
  const giParent = hasGit || !parent.repo ? null : parent.gi;
  const exParent = hasGit || !parent.repo ? null : parent.ex;
  let ex = exParent;
  if (hasGit) {
    const rules = readExclude(prefix, via);
    if (rules) ex = { rules, prefix, next: null };
  }
  return {
    rg: link(".rgignore", parent.rg),
    ig: link(".ignore", parent.ig),
    gi: repo ? link(".gitignore", giParent) : null,
    ex: repo ? ex : null,
    kt: link(".ktignore", parent.kt),
    repo,
  };
}

function readRules(path: string): IgnoreRules | null {
  try {
    return compileIgnore(readFileSync(path, "utf8"));
  } catch {
    return null;
  }
}

/** .git/info/exclude, also through a `.git` file (worktrees, submodules); `via` is where
 * the directory's own entries are read from. */
function readExclude(prefix: string, via = prefix): IgnoreRules | null {
  let gitDir = `${via}.git`;
  try {
    if (statSync(gitDir).isFile()) {
      const m = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(gitDir, "utf8"));
      if (!m) return null;
      gitDir = isAbsolute(m[1]!) ? m[1]! : resolve(prefix, m[1]!);
      try {
        const common = readFileSync(join(gitDir, "commondir"), "utf8").trim();
        if (common) gitDir = isAbsolute(common) ? common : resolve(gitDir, common);
      } catch {
        // Not a linked worktree: the exclude file is in the git dir itself.
      }
    }
  } catch {
    return null;
  }
  return readRules(join(gitDir, "info", "exclude"));
}

/** The chains that apply to the root's entries from its ancestors (root excluded). */
export function ancestorChains(root: string): Chains {
  const dirs: string[] = [];
  for (let d = dirname(root); ; d = dirname(d)) {
    dirs.push(d);
    if (dirname(d) === d) break;
  }
  if (root === dirname(root)) return EMPTY;
  let chains = EMPTY;
  for (const d of dirs.reverse()) {
    const prefix = d.endsWith("/") ? d : `${d}/`;
    chains = level(chains, prefix, (name) => existsSync(prefix + name));
  }
  return chains;
}

/** The chains that apply to the entries of `dir`, its own ignore files included,
 * memoized per directory. */
function chainsOfEntries(dir: string, cache: Map<string, Chains>): Chains {
  const known = cache.get(dir);
  if (known) return known;
  const above = dir === dirname(dir) ? EMPTY : chainsOfEntries(dirname(dir), cache);
  const prefix = dir.endsWith("/") ? dir : `${dir}/`;
  const chains = level(above, prefix, (name) => existsSync(prefix + name));
  cache.set(dir, chains);
  return chains;
}

/**
 * The walk's decisions for single paths below `root`, for the rg engine's post-filter:
 * rg has already applied everything but .ktignore, and (when given a type filter) may
 * have brought back hidden files that no ignore file whitelists.
 */
export class PathChecker {
  private readonly dirs = new Map<string, { chains: Chains; pruned: boolean }>();
  private readonly prefix: string;
  /**
   * `hidden`: whether hidden entries are skipped and rg may have brought some back (a
   * type filter does); only then are all ignore files read, else just .ktignore.
   */
  constructor(
    root: string,
    private readonly hidden: boolean,
  ) {
    this.prefix = root.endsWith("/") ? root : `${root}/`;
  }

  /** `rel` is a file rg reported. */
  keeps(rel: string): boolean {
    const slash = rel.lastIndexOf("/");
    const dir = this.dirInfo(slash === -1 ? "" : rel.slice(0, slash));
    if (dir.pruned) return false;
    const name = rel.slice(slash + 1);
    const abs = this.prefix + rel;
    if (this.hidden && name.charCodeAt(0) === 46 && decide(dir.chains, abs, name, false) !== Match.Whitelist) return false;
    return !dir.chains.kt || firstMatch(dir.chains.kt, abs, name, false) !== Match.Ignore;
  }

  /** A directory rg could not read: false when the walk would never have tried it. */
  keepsDir(rel: string): boolean {
    return !this.dirInfo(rel).pruned;
  }

  private dirInfo(relDir: string): { chains: Chains; pruned: boolean } {
    const cached = this.dirs.get(relDir);
    if (cached) return cached;
    let info: { chains: Chains; pruned: boolean };
    if (relDir === "") {
      info = { chains: this.withLevel(ancestorChains(this.prefix.slice(0, -1) || "/"), this.prefix), pruned: false };
    } else {
      const slash = relDir.lastIndexOf("/");
      const up = this.dirInfo(slash === -1 ? "" : relDir.slice(0, slash));
      const name = relDir.slice(slash + 1);
      const abs = this.prefix + relDir;
      const pruned = up.pruned || (up.chains.kt !== null && firstMatch(up.chains.kt, abs, name, true) === Match.Ignore);
      info = { chains: pruned ? up.chains : this.withLevel(up.chains, `${abs}/`), pruned };
    }
    this.dirs.set(relDir, info);
    return info;
  }

  private withLevel(parent: Chains, prefix: string): Chains {
    return level(parent, prefix, (name) => (this.hidden || name === ".ktignore") && existsSync(prefix + name));
  }
}
