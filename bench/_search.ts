// Shared by bench/grep.ts and bench/glob.ts: the trees searched and a hyperfine runner
// that tolerates non-zero exits (rg exits 1 when nothing matches).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { requireHyperfine, type Timing } from "./_hyperfine.ts";
import { ALWAYS_NOISE, NOISE_BY_EVIDENCE_USUALLY } from "../src/core/noise.ts";

/** Every name that was noise by name before noise by evidence (the trees stay the same). */
const NOISE = [...ALWAYS_NOISE, ...NOISE_BY_EVIDENCE_USUALLY];

export const ROOT = join(import.meta.dir, "..");
/** The binary measured: dist/kt, or KT_BENCH_BIN (e.g. a build of an earlier commit, for
 * before/after figures). */
export const KT = process.env.KT_BENCH_BIN ?? join(ROOT, "dist", "kt");
// "-2": trees whose every noise directory (not only node_modules and dist) is renamed.
const BENCH_DIR = join(tmpdir(), "kt-bench-search-2");

/**
 * A large real tree: `copies` copies of this repository's node_modules (about 6,100 files
 * and 180 MB each). Directories with a noise name (node_modules, dist, build, …) inside
 * are renamed, so that kt's noise rule does not make it search less than plain rg and fd do.
 */
export function nodeModulesTree(copies: number): string {
  const root = join(BENCH_DIR, `nm-x${copies}`);
  if (existsSync(join(root, ".complete"))) return root;
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  for (let i = 0; i < copies; i++) {
    const dest = join(root, `copy${i}`);
    const cp = Bun.spawnSync(["cp", "-rL", join(ROOT, "node_modules"), dest]);
    if (cp.exitCode !== 0) throw new Error(`cp failed: ${cp.stderr.toString()}`);
  }
  const names = NOISE.flatMap((n, i) => (i === 0 ? ["-name", n] : ["-o", "-name", n]));
  const find = Bun.spawnSync(["find", root, "-depth", "-type", "d", "(", ...names, ")"], { stdout: "pipe" });
  for (const dir of find.stdout.toString().split("\n").filter(Boolean)) renameSync(dir, `${dir}_`);
  Bun.write(join(root, ".complete"), "");
  return root;
}

/** The Python standard library of the newest python3 installed (/usr/lib/python3.N), or null. */
export function pythonStdlib(): string | null {
  const r = Bun.spawnSync(["python3", "-c", "import os, sysconfig; print(sysconfig.get_paths()['stdlib'])"], { stdout: "pipe", stderr: "ignore" });
  const dir = r.exitCode === 0 ? r.stdout.toString().trim() : "";
  return dir && existsSync(join(dir, "os.py")) ? dir : null;
}

export function fileCount(root: string): number {
  const r = Bun.spawnSync(["rg", "--files", "--no-config", "--no-ignore-global"], { cwd: root, stdout: "pipe" });
  return r.stdout.toString().split("\n").filter(Boolean).length;
}

/**
 * Like _hyperfine.ts's, but a command's non-zero exit is not a failure, and the runs are
 * split into `rounds` hyperfine sessions whose samples are pooled: hyperfine runs one
 * command's runs back to back, so a burst of load from elsewhere on a shared machine
 * would otherwise land on one command only.
 */
export function timeAll(commands: { name: string; command: string }[], opts: { runs: number; warmup: number; cwd: string; env?: Record<string, string>; rounds?: number }): Timing[] {
  const bin = requireHyperfine();
  const rounds = opts.rounds ?? 3;
  const samples: number[][] = commands.map(() => []);
  // hyperfine gives each session's mean CPU time: pooled here weighted by its runs.
  const user: number[] = commands.map(() => 0);
  const system: number[] = commands.map(() => 0);
  for (let round = 0; round < rounds; round++) {
    const out = join(mkdtempSync(join(tmpdir(), "kt-bench-")), "result.json");
    const runs = Math.max(2, Math.ceil(opts.runs / rounds));
    // Output goes to a pipe, not /dev/null: rg (like grep) notices /dev/null and does less work.
    const args = [bin, "-N", "-i", "--output", "pipe", "--style", "none", "--warmup", String(opts.warmup), "--runs", String(runs), "--export-json", out];
    // Alternate the order too, so that no command always runs first.
    const order = round % 2 === 0 ? commands.map((_, i) => i) : commands.map((_, i) => commands.length - 1 - i);
    for (const i of order) args.push("-n", commands[i]!.name, commands[i]!.command);
    const run = Bun.spawnSync(args, { env: { ...process.env, ...opts.env }, cwd: opts.cwd, stdout: "ignore", stderr: "pipe" });
    if (run.exitCode !== 0) throw new Error(`hyperfine failed: ${run.stderr.toString()}`);
    const data = JSON.parse(readFileSync(out, "utf8")) as { results: { times: number[]; user: number; system: number }[] };
    rmSync(dirname(out), { recursive: true, force: true });
    data.results.forEach((r, k) => {
      samples[order[k]!]!.push(...r.times.map((t) => t * 1000));
      user[order[k]!]! += r.user * 1000 * r.times.length;
      system[order[k]!]! += r.system * 1000 * r.times.length;
    });
  }
  return commands.map((c, i) => {
    const times = [...samples[i]!].sort((a, b) => a - b);
    const mid = times.length / 2;
    const median = times.length % 2 ? times[Math.floor(mid)]! : (times[mid - 1]! + times[mid]!) / 2;
    return {
      name: c.name,
      command: c.command,
      medianMs: median,
      meanMs: times.reduce((a, b) => a + b, 0) / times.length,
      minMs: times[0]!,
      userMs: user[i]! / times.length,
      systemMs: system[i]! / times.length,
      runs: times.length,
    };
  });
}

/** Peak resident memory (KB) of one run, from GNU time. */
export function maxRssKb(argv: string[], cwd: string, env: Record<string, string> = {}): number {
  const r = Bun.spawnSync(["/usr/bin/time", "-v", ...argv], { cwd, env: { ...process.env, ...env }, stdout: "ignore", stderr: "pipe" });
  const m = /Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr.toString());
  if (!m) throw new Error(`no RSS for ${argv.join(" ")}: ${r.stderr.toString().slice(-300)}`);
  return Number(m[1]);
}

export function ms(t: number): string {
  return t.toFixed(1);
}

export function ratio(a: number, b: number): string {
  return `${(a / b).toFixed(2)}×`;
}
