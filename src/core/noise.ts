// Which directories are noise to a model unless it names them (SPEC §8.4): noise by
// evidence, not by name. Three names are always noise (version control, dependencies,
// bytecode caches); any other directory is noise only when it holds a file saying so —
// CACHEDIR.TAG (the Cache Directory Tagging convention: Rust's target/, pip's and other
// tools' caches) or pyvenv.cfg (a Python virtual environment, whatever its name). So a
// source package named build, dist or venv is searched. One rule for grep, glob (both grep
// engines) and read's directory listing.

/** Directories skipped wherever they occur, unless named. */
export const ALWAYS_NOISE = [".git", "node_modules", "__pycache__"] as const;

/** ALWAYS_NOISE as a set. */
export const NOISE_DIRS: ReadonlySet<string> = new Set(ALWAYS_NOISE);

/** A regular file of one of these names makes the directory holding it noise. */
export const EVIDENCE_FILES = ["CACHEDIR.TAG", "pyvenv.cfg"] as const;

const EVIDENCE: ReadonlySet<string> = new Set(EVIDENCE_FILES);

/** Whether a directory listing holds the evidence (its entries' names and whether each is
 * a regular file): a lookup in a listing already read, no system call. */
export function holdsEvidence(entries: readonly { name: string; isFile(): boolean }[]): boolean {
  for (const e of entries) {
    // The length first: most names are neither 10 nor 12 characters long.
    const n = e.name.length;
    if ((n === 12 || n === 10) && EVIDENCE.has(e.name) && e.isFile()) return true;
  }
  return false;
}

/** Names that used to be skipped by name and are now skipped only with evidence or when an
 * ignore file says so (build output, virtualenvs, caches): the README and the benchmarks'
 * trees name them. */
export const NOISE_BY_EVIDENCE_USUALLY = ["dist", "build", "target", "venv", ".venv", ".next", ".cache"] as const;
