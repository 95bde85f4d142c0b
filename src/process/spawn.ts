// Starting a managed command: a row in the index, a log file, for ps a FIFO for stdin, and
// the owner of the command from then on — the session's host (src/process/host.ts), or when
// it cannot be reached a detached supervisor of the command's own (this very binary in a
// hidden mode, in a new session). The kt call that starts it may exit at any time afterwards.
import type { Subprocess } from "bun";
import { join, resolve } from "node:path";
import { index, sessionDir, withWriteLock } from "../core/state.ts";
import { touchStateFile } from "../core/statefs.ts";
import { KtError, type ToolContext } from "../core/result.ts";
import { sandboxPrefix } from "../sandbox/launcher.ts";
import { shortCommand } from "./format.ts";
import { processStart, SUPERVISE } from "./identity.ts";
import { createTerm, type Size } from "./terminal.ts";
import { byKey, insert, MAX_RUNNING, nextId, prune, remove, running, runningTwin, type ProcessRow } from "./registry.ts";

/** What the supervisor is told, as one JSON argument. */
export interface SupervisorSpec {
  stateDir: string;
  key: number;
  command: string;
  cwd: string;
  log: string;
  /** FIFO that becomes the command's stdin; absent: stdin is /dev/null. */
  stdin?: string;
  /** Run on a pseudo-terminal of this size (SPEC §7.4); absent: pipes. */
  tty?: Size;
  /** ps start on a terminal: the model types into it, so editors and prompts are left armed (src/process/env.ts). */
  interactive?: boolean;
  /** The process whose end ends the session (a generated MCP session's server). */
  owner?: { pid: number; start: string };
  /** The environment of the kt call that started it, for a host started by another call; absent: the supervisor's own. */
  env?: Record<string, string>;
  /** The sandbox's launcher (src/sandbox): the command runs as `[...sandbox, "bash", "-c", command]`; absent: unsandboxed. */
  sandbox?: string[];
}

export { HOST, SUPERVISE } from "./identity.ts";

/** How to run this kt again: the compiled binary itself, or bun with main.ts from source. */
export function selfCommand(): string[] {
  const main = Bun.main;
  if (main.startsWith("/$bunfs/") || /^[A-Z]:[\\/]~BUN[\\/]/.test(main)) return [process.execPath];
  // From source: a .env in the command's directory must not leak into kt's environment.
  // import.meta.dir, not node:url's fileURLToPath: that module costs every kt bash call ~1 M instructions to load.
  return [process.execPath, "--no-env-file", join(import.meta.dir, "..", "main.ts")];
}

export interface Launched {
  row: ProcessRow;
  /** Settles once the command's end is recorded (or whatever supervises it is gone). */
  exited: Promise<unknown>;
  /** This kt call no longer waits: it may exit while the command runs on. */
  unref(): void;
}

export interface LaunchOptions {
  command: string;
  cwd: string;
  origin: "ps" | "bash";
  /** ps: visible as pN at once, stdin kept open through a FIFO, counted against the cap. */
  managed: boolean;
  /** On a pseudo-terminal of this size; its stdin is a FIFO whichever the origin, so a command bash moves to the background can still be typed to. */
  tty?: Size;
}

export async function launch(ctx: ToolContext, opts: LaunchOptions): Promise<Launched> {
  const db = index(ctx);
  // Absolute: the supervisor runs from "/", and later kt calls may run from anywhere.
  const stateDir = resolve(ctx.stateDir);
  // Asked before anything is recorded: a sandboxed call the machine cannot sandbox runs nothing.
  const sandbox = sandboxPrefix(ctx, opts.cwd);
  const dir = sessionDir(stateDir, ctx.session, "proc");
  const key = withWriteLock(db, () => {
    let id: string | null = null;
    let seq: number | null = null;
    // Claimed under the lock: of two concurrent starts of one command, the second sees the first.
    const twin = runningTwin(db, ctx.session, opts.command, opts.cwd);
    if (twin) throw alreadyRunning(twin);
    if (opts.managed) {
      const live = running(db, ctx.session);
      if (live.length >= MAX_RUNNING) throw tooMany(live);
      ({ id, seq } = nextId(db, ctx.session));
    }
    const name = id ?? `bash-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
    const key = insert(db, {
      session: ctx.session,
      id,
      seq,
      origin: opts.origin,
      command: opts.command,
      cwd: opts.cwd,
      log_path: join(dir, `${name}.log`),
      stdin_path: opts.managed || opts.tty ? join(dir, `${name}.in`) : null,
    });
    if (opts.managed) prune(db, ctx.session);
    return key;
  });
  const row = byKey(db, key)!;
  try {
    touchStateFile(row.log_path);
    if (row.stdin_path) makeFifo(row.stdin_path);
    if (opts.tty) createTerm(row.log_path, opts.tty);
    const ownerStart = ctx.sessionOwner !== undefined ? processStart(ctx.sessionOwner) : undefined;
    const spec: SupervisorSpec = {
      stateDir,
      key,
      command: opts.command,
      cwd: opts.cwd,
      log: row.log_path,
      ...(row.stdin_path ? { stdin: row.stdin_path } : {}),
      ...(opts.tty ? { tty: opts.tty } : {}),
      ...(opts.tty && opts.origin === "ps" ? { interactive: true } : {}),
      ...(ownerStart ? { owner: { pid: ctx.sessionOwner!, start: ownerStart } } : {}),
      ...(sandbox ? { sandbox } : {}),
    };
    // The session's host runs it when it can be reached (no second runtime started on the
    // way); when the host cannot be reached, a supervisor of its own.
    if (process.env.KT_NO_HOST !== "1") {
      const hosted = await (await import("./host.ts")).runOnHost(ctx, stateDir, { ...spec, env: envOf(process.env) });
      if (hosted) return { row, ...hosted };
    }
    const supervisor = spawnSupervisor(spec);
    return { row, exited: supervisor.exited, unref: () => supervisor.unref() };
  } catch (error) {
    remove(db, row);
    throw new KtError("SPAWN_FAILED", `Command failed to start: kt could not launch its process supervisor (${(error as Error).message}). Nothing was run. Check that the state directory ${ctx.stateDir} is writable and retry.`);
  }
}

function spawnSupervisor(spec: SupervisorSpec): Subprocess {
  return Bun.spawn([...selfCommand(), SUPERVISE, JSON.stringify(spec)], {
    cwd: "/",
    // The supervisor is kt: it keeps kt's variables (e.g. the state cap); the command does not.
    env: process.env,
    stdin: "ignore",
    stdout: "ignore",
    stderr: "ignore",
    // A new session (setsid): the supervisor outlives this kt call and its terminal.
    detached: true,
  });
}

function envOf(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  return out;
}

function makeFifo(path: string): void {
  const made = Bun.spawnSync(["mkfifo", "-m", "600", path], { stdout: "ignore", stderr: "pipe" });
  if (made.exitCode !== 0) throw new Error(`mkfifo ${path}: ${made.stderr.toString().trim() || `exit ${made.exitCode}`}`);
}

function alreadyRunning(twin: ProcessRow): KtError {
  return new KtError(
    "ALREADY_RUNNING",
    `${twin.id} is already running "${shortCommand(twin.command, 200)}" in ${twin.cwd}: read it with ps read ${twin.id}, or stop it first. Nothing new was started.`,
    { processId: twin.id! },
  );
}

function tooMany(live: ProcessRow[]): KtError {
  const names = live.map((r) => `${r.id} (${shortCommand(r.command, 40)})`).join(", ");
  return new KtError(
    "TOO_MANY_PROCESSES",
    `Refusing to start another process: ${live.length} are already running in this session, the most allowed (${MAX_RUNNING}). Running: ${names}. Stop one you no longer need with {"action":"stop","id":"${live[0]!.id}"}, or use bash for a command that finishes on its own.`,
  );
}
