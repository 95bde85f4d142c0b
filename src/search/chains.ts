// The per-directory stack of ignore rule sets, with ripgrep's default filters so that
// the built-in engine and rg see the same files (one file's rules are ignore.ts's):
// - .gitignore only inside a git repository (a `.git` in the directory or an ancestor),
//   each file relative to its own directory, from the entry's directory up to the
//   repository root, then .git/info/exclude; .ignore and .rgignore in every directory
//   and every ancestor, above .gitignore in precedence;
// - hidden entries skipped unless an ignore file whitelists them;
// - .ktignore last, as a pure exclusion layer: its "!" lines cancel only its own earlier
//   lines and never bring back what the other files or the hidden rule left out (that
//   keeps the rg engine exact: it applies .ktignore after rg has walked).
// A directory's chains are its parent's with its own ignore files in front; a directory
// without any shares its parent's.
import { existsSync, readFileSync, statSync, type Dirent } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { compileIgnore, Match, type IgnoreRules } from "./ignore.ts";
import { belowTopTier } from "./tiers.ts";

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

export const EMPTY: Chains = { rg: null, ig: null, gi: null, ex: null, kt: null, repo: false };


/** Why the walk leaves an entry out (verdict), or Kept: hidden, or ignored by one kind of
 * ignore file. */
export const enum Verdict {
  Kept,
  Hidden,
  Rgignore,
  Ignore,
  Gitignore,
  Exclude,
  Ktignore,
}

/** The ignore file a verdict names, as the "Not searched" line writes it. */
export const IGNORE_FILE_NAMES: Readonly<Record<number, string>> = {
  [Verdict.Rgignore]: ".rgignore",
  [Verdict.Ignore]: ".ignore",
  [Verdict.Gitignore]: ".gitignore",
  [Verdict.Exclude]: ".git/info/exclude",
  [Verdict.Ktignore]: ".ktignore",
};

/** keepsEntry with the reason (for directories: the pruned ones are reported). */
export function verdict(chains: Chains, abs: string, name: string, isDir: boolean, hidden: boolean): Verdict {
  const dot = hidden && name.charCodeAt(0) === 46;
  if (!(chains.rg || chains.ig || chains.gi || chains.ex || chains.kt)) return dot ? Verdict.Hidden : Verdict.Kept;
  let m = firstMatch(chains.rg, abs, name, isDir);
  let by = Verdict.Rgignore;
  if (m === Match.None) {
    m = firstMatch(chains.ig, abs, name, isDir);
    by = Verdict.Ignore;
  }
  if (m === Match.None) {
    m = firstMatch(chains.gi, abs, name, isDir);
    by = Verdict.Gitignore;
  }
  if (m === Match.None) {
    m = firstMatch(chains.ex, abs, name, isDir);
    by = Verdict.Exclude;
  }
  if (m === Match.Ignore) return by;
  if (m === Match.None && dot) return Verdict.Hidden;
  return chains.kt && firstMatch(chains.kt, abs, name, isDir) === Match.Ignore ? Verdict.Ktignore : Verdict.Kept;
}

/** Whether the walk keeps an entry of a directory with these chains (noise and entry
 * types aside): not ignored, and not hidden unless whitelisted; .ktignore last. */
export function keepsEntry(chains: Chains, abs: string, name: string, isDir: boolean, hidden: boolean): boolean {
  if (!(chains.rg || chains.ig || chains.gi || chains.ex || chains.kt)) return !(hidden && name.charCodeAt(0) === 46);
  const m = decide(chains, abs, name, isDir);
  if (m === Match.Ignore || (m === Match.None && hidden && name.charCodeAt(0) === 46)) return false;
  return !chains.kt || firstMatch(chains.kt, abs, name, isDir) !== Match.Ignore;
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
export function extend(parent: Chains, prefix: string, entries: readonly Dirent[], via: string): Chains {
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
export function chainsOfEntries(dir: string, cache: Map<string, Chains>): Chains {
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
    /** false (no_ignore): no ignore file applies, .ktignore neither. */
    private readonly ignores = true,
    /** Directories (relative to root) the walk prunes that rg enters: noise by evidence. */
    private readonly pruned: ReadonlySet<string> = new Set(),
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
      info = { chains: this.ignores ? this.withLevel(ancestorChains(this.prefix.slice(0, -1) || "/"), this.prefix) : EMPTY, pruned: false };
    } else {
      const slash = relDir.lastIndexOf("/");
      const up = this.dirInfo(slash === -1 ? "" : relDir.slice(0, slash));
      const name = relDir.slice(slash + 1);
      const abs = this.prefix + relDir;
      const pruned = up.pruned || this.pruned.has(relDir) || (up.chains.kt !== null && firstMatch(up.chains.kt, abs, name, true) === Match.Ignore);
      info = { chains: pruned ? up.chains : this.withLevel(up.chains, `${abs}/`), pruned };
    }
    this.dirs.set(relDir, info);
    return info;
  }

  private withLevel(parent: Chains, prefix: string): Chains {
    if (!this.ignores) return EMPTY;
    return level(parent, prefix, (name) => (this.hidden || name === ".ktignore") && existsSync(prefix + name));
  }
}

belowTopTier(verdict, keepsEntry, decide, firstMatch, extend);
