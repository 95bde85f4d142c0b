// Instruction counts under valgrind's callgrind (every thread), for the benches that quote
// them beside wall time: stable to ~0.01% whatever the machine's load.

/** Throws, naming the bench, where valgrind is missing. */
export function needValgrind(bench: string): void {
  if (!Bun.which("valgrind")) throw new Error(`${bench} needs valgrind on PATH (Debian: apt-get install valgrind)`);
}

/**
 * Instructions one run of `argv` executes, every thread; null when valgrind fails. Output
 * goes to a pipe, as an agent reads it (a write to /dev/null takes another path: +1.3 M
 * for Bun.write).
 */
export function instructions(argv: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): number | null {
  const run = Bun.spawnSync(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", ...argv], { cwd: opts.cwd, env: { ...process.env, ...opts.env }, stdout: "pipe", stderr: "pipe" });
  const m = /refs:\s+([\d,]+)/.exec(run.stderr.toString());
  return m ? Number(m[1]!.replace(/,/g, "")) : null;
}
