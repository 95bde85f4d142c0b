// Side-by-side timing of whole commands with hyperfine: medians of many runs, because
// the machines are small and noisy. Returns milliseconds.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

export interface Timing {
  name: string;
  command: string;
  medianMs: number;
  meanMs: number;
  minMs: number;
  /** Mean CPU time of the command (user and system), steadier than wall time on a loaded machine. */
  userMs?: number;
  systemMs?: number;
  runs: number;
}

export function requireHyperfine(): string {
  const bin = Bun.which("hyperfine");
  if (!bin) {
    console.error("bench: hyperfine is not installed (Debian: apt-get install hyperfine)");
    process.exit(2);
  }
  return bin;
}

/** Times each command (run without a shell) in one hyperfine session, interleaved warm-up included. */
export function hyperfine(commands: { name: string; command: string; prepare?: string }[], opts: { runs?: number; warmup?: number; env?: Record<string, string>; cwd?: string; prepare?: string } = {}): Timing[] {
  const bin = requireHyperfine();
  const out = join(mkdtempSync(join(tmpdir(), "kt-bench-")), "result.json");
  // Output goes to a pipe, as it does for a framework reading kt; /dev/null lets some programs skip work.
  const args = [bin, "-N", "--output", "pipe", "--style", "none", "--warmup", String(opts.warmup ?? 10), "--runs", String(opts.runs ?? 100), "--export-json", out];
  // A command's --prepare (else opts.prepare) runs before each of its runs, untimed, e.g. to put
  // back the files a patch changed; hyperfine takes one per command, in order.
  if (opts.prepare !== undefined || commands.some((c) => c.prepare !== undefined)) {
    for (const c of commands) args.push("--prepare", c.prepare ?? opts.prepare ?? "true");
  }
  for (const c of commands) args.push("-n", c.name, c.command);
  const run = Bun.spawnSync(args, { env: { ...process.env, ...opts.env }, cwd: opts.cwd, stdout: "ignore", stderr: "pipe" });
  if (run.exitCode !== 0) throw new Error(`hyperfine failed: ${run.stderr.toString()}`);
  const data = JSON.parse(readFileSync(out, "utf8")) as { results: { command: string; median: number; mean: number; min: number; user: number; system: number; times: number[] }[] };
  rmSync(dirname(out), { recursive: true, force: true });
  return data.results.map((r, i) => ({
    name: commands[i]!.name,
    command: commands[i]!.command,
    medianMs: r.median * 1000,
    meanMs: r.mean * 1000,
    minMs: r.min * 1000,
    userMs: r.user * 1000,
    systemMs: r.system * 1000,
    runs: r.times.length,
  }));
}

export function table(rows: (string | number)[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  return rows.map((r) => r.map((c, i) => (typeof c === "number" ? String(c).padStart(widths[i]!) : String(c).padEnd(widths[i]!))).join("  ")).join("\n");
}
