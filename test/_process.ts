// Helpers for the bash and ps tests: the compiled binary run asynchronously, polling with
// deadlines instead of fixed sleeps, golden normalization, and a reaper that leaves no
// process of a test behind.
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { KT, tempDir, type RunResult, type TempDir } from "./_helpers.ts";
import { isSameProcess } from "../src/process/identity.ts";

export interface Env {
  cwd: string;
  stateDir: string;
  session?: string;
}

function env(opts: Env, extra?: Record<string, string>): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "/tmp",
    NO_COLOR: "1",
    KT_STATE_DIR: opts.stateDir,
    ...(opts.session ? { KT_SESSION: opts.session } : {}),
    ...extra,
  };
}

/** Runs dist/kt without blocking the test process; also reports the peak memory. */
export async function ktAsync(args: string[], opts: Env & { stdin?: string; env?: Record<string, string> }): Promise<RunResult & { maxRSS: number }> {
  const proc = Bun.spawn([KT, ...args], {
    cwd: opts.cwd,
    env: env(opts, opts.env),
    stdin: opts.stdin === undefined ? "ignore" : Buffer.from(opts.stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  const exitCode = await proc.exited;
  return { stdout, stderr, exitCode, maxRSS: proc.resourceUsage()?.maxRSS ?? 0 };
}

/** Polls `probe` until it returns a value, or fails the test at the deadline. */
export async function until<T>(what: string, probe: () => T | undefined | false, ms = 10_000): Promise<T> {
  const deadline = performance.now() + ms;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

export interface Row {
  key: number;
  session: string;
  id: string | null;
  status: string;
  pid: number | null;
  pid_start: string | null;
  exit_code: number | null;
  signal: string | null;
  ended_at: number | null;
  notified: number;
  log_path: string;
}

/** The process rows of a state directory, read straight from the index (no kt involved). */
export function rows(stateDir: string): Row[] {
  const file = join(stateDir, "index.db");
  if (!existsSync(file)) return [];
  const db = new Database(file, { readonly: true });
  try {
    db.exec("PRAGMA busy_timeout = 5000");
    return db.query("SELECT * FROM processes ORDER BY key").all() as Row[];
  } catch (e) {
    // A kt starting meanwhile has created index.db but not yet its tables: no rows yet.
    if (/no such table/.test(String(e))) return [];
    throw e;
  } finally {
    db.close();
  }
}

export function row(stateDir: string, id: string): Row | undefined {
  return rows(stateDir).find((r) => r.id === id);
}

/** Live, non-zombie processes whose process group is `pgid` (Linux /proc). */
export function groupAlive(pgid: number): number[] {
  const alive: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, "utf8");
    } catch {
      continue;
    }
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) === pgid && fields[0] !== "Z" && fields[0] !== "X") alive.push(Number(name));
  }
  return alive;
}

/**
 * Stops everything a test started under `stateDir`: `kt session end` for every session,
 * then SIGKILL to any group whose leader is still the recorded process.
 */
export async function reap(stateDir: string, cwd: string): Promise<void> {
  const sessions = new Set(rows(stateDir).map((r) => r.session));
  await Promise.all([...sessions].map((session) => ktAsync(["session", "end", "--session", session], { cwd, stateDir })));
  for (const r of rows(stateDir)) {
    if (r.pid !== null && isSameProcess(r.pid, r.pid_start)) {
      try {
        process.kill(-r.pid, "SIGKILL");
      } catch {
        // Gone.
      }
    }
  }
}

/** Golden normalization: temp paths, pids, durations and generated names become placeholders. */
export function norm(text: string, tmp: string): string {
  return text
    .replaceAll(tmp, "<tmp>")
    .replace(/pid \d+/g, "pid <pid>")
    .replace(/\b\d+\.\ds\b/g, "<s>")
    .replace(/\b\d\d:\d\d\b/g, "<clock>")
    .replace(/bash-[a-z0-9]+\.log/g, "bash-<name>.log");
}

const sandboxes: { tmp: TempDir; stateDir: string }[] = [];

/**
 * A temp folder with a state directory (`stateName`, default "state") and a working
 * directory "work"; endSandboxes() (each file's afterEach) reaps what ran there and removes it.
 */
export function sandbox(stateName = "state"): { tmp: string; stateDir: string; cwd: string } {
  const tmp = tempDir();
  const stateDir = join(tmp.path, stateName);
  mkdirSync(stateDir, { recursive: true });
  const cwd = join(tmp.path, "work");
  mkdirSync(cwd);
  sandboxes.push({ tmp, stateDir });
  return { tmp: tmp.path, stateDir, cwd };
}

/** Stops every process started in the sandboxes made since the last call, and removes them. */
export async function endSandboxes(): Promise<void> {
  for (const { tmp, stateDir } of sandboxes.splice(0)) {
    if (existsSync(stateDir)) await reap(stateDir, tmp.path);
    tmp[Symbol.dispose]();
  }
}
