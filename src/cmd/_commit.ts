// Runs at build time only: imported as a Bun macro, so `bun build` calls it once and
// inlines the string it returns (from source, Bun calls it when it transpiles the importer).
// KT_COMMIT, when set, wins: a build from a source tarball has no .git to ask.

/** The commit HEAD names, 12 hex digits, "+dirty" when tracked files differ; "" when unknown. */
export function buildCommit(): string {
  const given = process.env.KT_COMMIT?.trim();
  if (given) return given;
  const git = (...args: string[]) => {
    try {
      const run = Bun.spawnSync(["git", ...args], { cwd: import.meta.dir, stdin: "ignore", stdout: "pipe", stderr: "ignore" });
      return run.exitCode === 0 ? run.stdout.toString().trim() : undefined;
    } catch {
      return undefined; // no git on PATH
    }
  };
  const head = git("rev-parse", "--short=12", "HEAD");
  if (!head) return "";
  const changed = git("status", "--porcelain", "--untracked-files=no");
  return changed ? `${head}+dirty` : head;
}
