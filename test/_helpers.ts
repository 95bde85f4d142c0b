// Test helpers: private temp dirs that remove themselves, an in-process tool runner and
// a runner for the compiled binary, both with their own state directory.
import { chownSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir as osTmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import type { ToolContext, ToolFlags, ToolResult } from "../src/tools/tool.ts";
import { loadTool } from "../src/tools/registry.ts";

export const ROOT = join(import.meta.dir, "..");
export const KT = join(ROOT, "dist", process.platform === "win32" ? "kt.exe" : "kt");

export interface TempDir {
  path: string;
  [Symbol.dispose](): void;
}

/** Every file below `dir`, as paths relative to it, sorted (directories walked, not listed). */
export function filesBelow(dir: string, base = dir): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...filesBelow(p, base));
    else out.push(relative(base, p));
  }
  return out.sort();
}

/** `using tmp = tempDir()` — a real (symlink-free) temp directory removed at scope end. */
export function tempDir(prefix = "kt-test-"): TempDir {
  const path = realpathSync(mkdtempSync(join(osTmpdir(), prefix)));
  return {
    path,
    [Symbol.dispose]() {
      rmSync(path, { recursive: true, force: true });
    },
  };
}

export interface CallOptions {
  cwd: string;
  stateDir: string;
  session?: string;
  root?: string;
  callId?: string;
  flags?: Partial<ToolFlags>;
  /** Environment variables for this call only (set around an in-process run, given to the binary). */
  env?: Record<string, string>;
}

/** Runs a tool in-process exactly as the CLI would, collecting warnings. */
export async function callTool(name: string, input: unknown, opts: CallOptions): Promise<ToolResult & { warnings: string[] }> {
  const tool = await loadTool(name);
  if (!tool) throw new Error(`no tool ${name}`);
  const warnings: string[] = [];
  const ctx: ToolContext = {
    cwd: opts.cwd,
    session: opts.session ?? "default",
    callId: opts.callId ?? "test-call",
    stateDir: opts.stateDir,
    ...(opts.root ? { root: realpathSync(opts.root) } : {}),
    flags: { skipReadCheck: false, dryRun: false, trace: false, strict: false, ...opts.flags },
    warn: (m) => warnings.push(m),
  };
  const saved = Object.entries(opts.env ?? {}).map(([k]) => [k, process.env[k]] as const);
  Object.assign(process.env, opts.env);
  try {
    const result = await tool.run(input, ctx);
    return { ...result, warnings };
  } finally {
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

export interface RunResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

/** Runs the compiled binary. */
export function kt(args: string[], opts: { cwd: string; stateDir: string; stdin?: string | Uint8Array; env?: Record<string, string> }): RunResult {
  const proc = Bun.spawnSync([KT, ...args], {
    cwd: opts.cwd,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", NO_COLOR: "1", KT_STATE_DIR: opts.stateDir, ...opts.env },
    stdin: opts.stdin === undefined ? "ignore" : typeof opts.stdin === "string" ? Buffer.from(opts.stdin) : opts.stdin,
    stdout: "pipe",
    stderr: "pipe",
  });
  return { stdout: proc.stdout.toString(), stderr: proc.stderr.toString(), exitCode: proc.exitCode ?? -1 };
}

/** Whether strace can trace (and delay the calls of) a child here: ptrace may be refused in a container. */
export function straceWorks(): boolean {
  if (!Bun.which("strace")) return false;
  return Bun.spawnSync(["strace", "-f", "-e", "trace=none", "-o", "/dev/null", "true"]).exitCode === 0;
}

/** Runs the compiled binary without waiting (for concurrency tests). */
export function ktSpawn(args: string[], opts: { cwd: string; stateDir: string; stdin?: string; env?: Record<string, string> }) {
  return Bun.spawn([KT, ...args], {
    cwd: opts.cwd,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", NO_COLOR: "1", KT_STATE_DIR: opts.stateDir, ...opts.env },
    stdin: opts.stdin === undefined ? "ignore" : Buffer.from(opts.stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
}

export type Mode = "in-process" | "binary";
export const MODES: Mode[] = ["in-process", "binary"];

/** `kt NAME` and the switches that say what `opts` says (the input goes on stdin). */
export function toolArgs(name: string, opts: CallOptions): string[] {
  const args = [name];
  if (opts.session) args.push("--session", opts.session);
  if (opts.root) args.push("--root", opts.root);
  if (opts.callId) args.push("--call-id", opts.callId);
  if (opts.flags?.skipReadCheck) args.push("--skip-read-check");
  if (opts.flags?.dryRun) args.push("--dry-run");
  if (opts.flags?.strict) args.push("--strict");
  if (opts.flags?.trace) args.push("--trace");
  return args;
}

/**
 * One tool call, in-process or through the compiled binary (input as JSON on stdin,
 * `--json` envelope out), so that every golden runs both ways.
 */
export async function call(mode: Mode, name: string, input: unknown, opts: CallOptions): Promise<ToolResult> {
  if (mode === "in-process") {
    const { warnings: _, ...result } = await callTool(name, input, opts);
    return result;
  }
  const run = kt([...toolArgs(name, opts), "--json"], { cwd: opts.cwd, stateDir: opts.stateDir, stdin: JSON.stringify(input), ...(opts.env ? { env: opts.env } : {}) });
  if (run.exitCode !== 0 && run.exitCode !== 1 && run.exitCode !== 2) throw new Error(`kt ${name} exited ${run.exitCode}: ${run.stderr}`);
  const result = JSON.parse(run.stdout) as ToolResult;
  const want = expectedExit(name, result);
  if (run.exitCode !== want) throw new Error(`exit code ${run.exitCode} disagrees with isError ${result.isError} (expected ${want})`);
  return result;
}

/** True when tests can drop to the unprivileged user `nobody` (root bypasses file permissions). */
export const CAN_RUN_AS_NOBODY = process.getuid?.() === 0 && Bun.which("setpriv") !== null;

/**
 * Runs the compiled binary as `nobody` with a state directory `nobody` owns, created inside
 * `parent` (which must be searchable by others).
 */
export function ktAsNobody(args: string[], opts: { cwd: string; parent: string; env?: Record<string, string> }): RunResult {
  const state = join(opts.parent, "nobody-state");
  mkdirSync(state, { recursive: true, mode: 0o700 });
  chownSync(state, 65534, 65534);
  const proc = Bun.spawnSync(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", KT, ...args], {
    cwd: opts.cwd,
    env: { PATH: process.env.PATH ?? "", KT_STATE_DIR: state, HOME: state, NO_COLOR: "1", ...opts.env },
  });
  return { stdout: proc.stdout.toString(), stderr: proc.stderr.toString(), exitCode: proc.exitCode ?? -1 };
}

/** Type-checks `source` with the repository's tsc, from a folder inside it so that the SDKs resolve from its node_modules. */
export function typecheck(source: string): { exitCode: number; output: string } {
  const dir = mkdtempSync(join(ROOT, "test", ".types-"));
  try {
    writeFileSync(join(dir, "tools.ts"), source);
    const tsc = Bun.spawnSync(
      [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "--ignoreConfig", "--noEmit", "--strict", "--skipLibCheck", "--target", "es2022", "--module", "nodenext", "--moduleResolution", "nodenext", join(dir, "tools.ts")],
      { cwd: ROOT, stdout: "pipe", stderr: "pipe" },
    );
    return { exitCode: tsc.exitCode ?? -1, output: tsc.stdout.toString() + tsc.stderr.toString() };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The exit code a tool subcommand must end with for `r` (SPEC §1, §8.6): grep, glob and
 * replace as ripgrep (0 matched, 1 nothing matched, 2 error, 3 internal), the others 0 or 1.
 */
export function expectedExit(tool: string, r: Pick<ToolResult, "isError" | "error" | "metadata">): number {
  if (!["grep", "glob", "replace"].includes(tool)) return r.isError ? 1 : 0;
  if (r.isError) return r.error?.code === "INTERNAL" ? 3 : 2;
  return (tool === "glob" ? r.metadata.files : r.metadata.matches) === 0 ? 1 : 0;
}

/**
 * The peak resident memory of one run of dist/kt, in bytes, as /usr/bin/time (GNU time)
 * reports it for that process alone. A Bun child's resourceUsage().maxRSS is not: inside a
 * whole suite it showed the largest child the test process had waited for (a language
 * server's 500 MB), so memory bounds measured with it failed or passed by the order of files.
 */
export function peakRss(args: string[], opts: { cwd: string; stateDir: string }): { stdout: string; stderr: string; exitCode: number; bytes: number } {
  const out = join(mkdtempSync(join(osTmpdir(), "kt-rss-")), "rss");
  const proc = Bun.spawnSync(["/usr/bin/time", "-f", "%M", "-o", out, KT, ...args], {
    cwd: opts.cwd,
    env: { PATH: process.env.PATH ?? "", KT_STATE_DIR: opts.stateDir, NO_COLOR: "1" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const kb = Number(readFileSync(out, "utf8").trim().split("\n").pop());
  rmSync(dirname(out), { recursive: true, force: true });
  return { stdout: proc.stdout.toString(), stderr: proc.stderr.toString(), exitCode: proc.exitCode ?? -1, bytes: kb * 1024 };
}

/**
 * Swaps `d` between the real directory and a symbolic link to `outside` as fast as it can,
 * until killed (the confinement and directory-swap race tests). Whatever is at `d` after a swap (the
 * link, or a directory a write made while d was away) goes and the real directory comes
 * back; the real directory stays a varying while (0–0.3 ms), so that checks often pass and
 * the next swap lands between a check and its use.
 */
export const startFlipper = (d: string, outside: string) =>
  Bun.spawn(
    [process.execPath, "-e", `
      const { existsSync, renameSync, rmSync, symlinkSync } = require("node:fs");
      const [d, saved, outside] = process.argv.slice(-3);
      for (;;) {
        try { renameSync(d, saved); } catch {}
        try { symlinkSync(outside, d); } catch {}
        if (existsSync(saved)) {
          try { rmSync(d, { recursive: true, force: true }); renameSync(saved, d); } catch {}
        }
        const until = performance.now() + Math.random() * 0.3;
        while (performance.now() < until);
      }`, d, `${d}.saved`, outside],
    { stdout: "ignore", stderr: "ignore" },
  );
