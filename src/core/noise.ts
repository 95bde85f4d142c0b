// Directories whose contents are noise to a model unless it names them: dependencies,
// build output, caches and virtual environments. One list for grep and glob (skipped,
// in both grep engines, unless the path or the pattern names them) and for read's
// directory listing (summarized, not listed).
export const NOISE = ["node_modules", "dist", "build", "target", ".git", "__pycache__", ".venv", "venv", ".next", ".cache"] as const;

/** NOISE as a set, for the walks that test every name against it. */
export const NOISE_DIRS: ReadonlySet<string> = new Set(NOISE);
