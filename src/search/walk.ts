// The directory walk grep and glob share (parallel.ts runs it on many threads): each
// directory's entries filtered by its chains of ignore rules (chains.ts); hidden entries
// skipped unless an ignore file whitelists them; symlinks not followed; noise directories
// (core/noise.ts: .git, node_modules, __pycache__ by name, any other only by evidence —
// a CACHEDIR.TAG or pyvenv.cfg in it) skipped unless exempted. Ignored directories are
// pruned before they are read; a directory is known to be noise by evidence only once its
// listing is read (the lookup costs nothing more), and then none of its entries is
// visited. Every directory pruned at this boundary is reported (onPrune), so a caller can
// say what it did not search without a second walk. The walk is depth-first over an
// explicit stack, so memory grows with depth and fan-out, never with the whole tree.
import { closeSync, constants, openSync, readdirSync, type Dirent } from "node:fs";
import { dirname } from "node:path";
import { ancestorChains, chainsOfEntries, EMPTY, extend, IGNORE_FILE_NAMES, keepsEntry, verdict, Verdict, type Chains } from "./chains.ts";
import { fdHandle, openedBelow } from "../core/paths.ts";
import { holdsEvidence } from "../core/noise.ts";
import { belowTopTier } from "./tiers.ts";

export { ALWAYS_NOISE } from "../core/noise.ts";

/** Why a directory was pruned: "noise" (by name or by evidence), or the ignore file that
 * excludes it (".gitignore", ".ignore", ".rgignore", ".ktignore", ".git/info/exclude"). */
export type PruneReason = string;

export interface WalkOptions {
  /** Absolute real path of the directory to walk; it is never itself filtered. */
  root: string;
  /** Skip hidden entries (names starting with "."). */
  hidden: boolean;
  /** Directory names to skip wherever they occur. */
  noise: ReadonlySet<string>;
  /** Skip directories that hold noise evidence (core/noise.ts), but not the root nor those
   * whose name is in `exempt`. */
  evidence?: boolean;
  exempt?: ReadonlySet<string>;
  /** false: no ignore file applies (no_ignore). Default true. */
  ignores?: boolean;
  /**
   * Called for every directory pruned at the boundary — noise, or excluded by an ignore
   * file — with its path relative to the root; never for one left out only for being
   * hidden, nor for a hidden one while hidden entries are skipped (naming a hidden
   * directory, not no_ignore, brings it in).
   */
  onPrune?(rel: string, why: PruneReason): void;
  /** Only directories are walked: files are neither filtered nor visited (the rg
   * engine's walk of the boundary, beside rg's own). */
  dirsOnly?: boolean;
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
    this.stack = dirs ? [] : [{ abs: opts.root, rel: "", chains: opts.ignores === false ? EMPTY : ancestorChains(opts.root) }];
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
      this.stack.push(files || this.opts.ignores === false ? { abs, rel, chains: EMPTY, ...(files ? { files } : {}) } : { abs, rel, chains: chainsOfEntries(dirname(abs), this.above) });
    }
  }

  /** Walks up to `dirs` directories; the result when the walk ended, else null. */
  step(visit: Visit, dirs: number): WalkResult | null {
    const { stack, opts } = this;
    const { hidden, noise, onPrune, dirsOnly } = opts;
    const sliceSize = opts.slice ?? SLICE;
    const ignores = opts.ignores !== false;
    const evidence = opts.evidence === true;
    const exempt = opts.exempt;
    for (let done = 0; done < dirs; done++) {
      const frame = stack.pop();
      if (!frame) return { timedOut: false, stopped: false };
      // Checked between directories, never before the first, so a search past its
      // deadline still covers the root's own files (the visitor can stop sooner).
      // Read each time: a replace's visitor moves it on (search/builtin.ts).
      const deadline = opts.deadline;
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
      if (evidence && frame.abs !== opts.root && holdsEvidence(entries) && !exempt?.has(frame.rel.slice(frame.rel.lastIndexOf("/") + 1))) {
        if (fd !== -1) closeSync(fd);
        onPrune?.(frame.rel, "noise");
        continue;
      }
      const prefix = frame.abs.endsWith("/") ? frame.abs : `${frame.abs}/`;
      let chains: Chains;
      try {
        chains = ignores ? extend(frame.chains, prefix, entries, fd === -1 ? prefix : `${fdHandle(fd, frame.abs)}/`) : EMPTY;
      } finally {
        if (fd !== -1) closeSync(fd);
      }
      let visited = 0;
      let slice: string[] | null = null;
      for (const entry of entries) {
        const name = entry.name;
        const isDir = entry.isDirectory();
        if (!isDir && (dirsOnly || !entry.isFile())) continue;
        const abs = prefix + name;
        if (isDir) {
          const v = noise.has(name) ? -1 : verdict(chains, abs, name, true, hidden);
          if (v !== Verdict.Kept) {
            if (onPrune && v !== Verdict.Hidden && !(hidden && name.charCodeAt(0) === 46)) onPrune(frame.rel === "" ? name : `${frame.rel}/${name}`, v === -1 ? "noise" : IGNORE_FILE_NAMES[v]!);
            continue;
          }
        } else if (!keepsEntry(chains, abs, name, false, hidden)) continue;
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


belowTopTier(Walker.prototype.step, holdsEvidence);
