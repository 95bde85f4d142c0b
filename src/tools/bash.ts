// bash (SPEC §4.6): one command in a fresh `bash -c`, stdin closed, its own process group.
// Every command is handed to the session's host like a background process (src/process), so
// reaching the time budget only means this call stops waiting: the command carries on as
// process pN with its output continuing in the same log, nothing lost or duplicated.
import { p } from "./params.ts";
import { closeSync, openSync, readSync, renameSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { toolText } from "./_text.ts" with { type: "macro" };
import { defineTool, invalidArgs, KtError, type ToolContext, type ToolOutput } from "./tool.ts";
import { absolutePath, fsError, onOneLine, realPath } from "../core/paths.ts";
import { index, isStateFault, safeName, sessionDir, stateProblem, withWriteLock } from "../core/state.ts";
import { spillFile, type Limits } from "../core/truncate.ts";
import { endWord, shellEnd } from "../process/ending.ts";
import { budget, seconds, shortCommand } from "../process/format.ts";
import { checkCommand } from "../process/guards.ts";
import { clean, fitLines, logSize, readBytes } from "../process/log.ts";
import { runDirect, stateDiskProblem, type DirectRun } from "../process/direct.ts";
import { promptHint, trailingPrompt } from "../process/prompt.ts";
import { DEFAULT_COLS, DEFAULT_ROWS, logView, MAX_COLS, MAX_ROWS, MIN_COLS, MIN_ROWS } from "../process/terminal.ts";
import { notFoundHint } from "../process/not-found.ts";
import { assignId, byKey, isFinal, leaderEnded, nextId, prune, remove, setCursor, type ProcessRow } from "../process/registry.ts";
import { launch } from "../process/spawn.ts";
import { boundaryNote } from "../sandbox/notice.ts";
import { waitForEnd, waitForSupervisor } from "../process/wait.ts";
import { held } from "../process/descendants.ts";
import { holdsOf, stopRow } from "../process/stop.ts";

const description = toolText("bash");

export const DEFAULT_TIMEOUT_MS = 120_000;
export const MAX_TIMEOUT_MS = 300_000;
export const LIMITS: Limits = { maxLines: 400, maxBytes: 30 * 1024, headLines: 250, tailLines: 150 };

export const Parameters = p.object({
  command: p.string({ description: "The shell command to execute." }),
  timeout_ms: p.optional(
    p.int({ minimum: 1, description: "Time budget in milliseconds before the command is moved to the background. Default 120000, maximum 300000 (larger values count as 300000)." }),
  ),
  workdir: p.optional(p.string({ description: "Working directory for the command. Defaults to the current working directory. Use this instead of 'cd'." })),
  // SPEC §7.4: terminals.
  tty: p.optional(p.boolean({ description: "Run the command on a pseudo-terminal, for programs that behave differently without one (colour, progress bars, prompts that give up). Default false: pipes, stdin closed." })),
  cols: p.optional(p.int({ minimum: MIN_COLS, maximum: MAX_COLS, description: `With tty: terminal width in columns. Default ${DEFAULT_COLS}.` })),
  rows: p.optional(p.int({ minimum: MIN_ROWS, maximum: MAX_ROWS, description: `With tty: terminal height in rows. Default ${DEFAULT_ROWS}.` })),
});

export default defineTool({
  name: "bash",
  description: description.trim(),
  parameters: Parameters,
  primary: "command",
  examples: ["kt bash 'npm test'", "kt bash 'make -j2' --workdir build --timeout-ms 300000", "kt bash --tty 'npm install'       # on a 120×40 pseudo-terminal"],
  longText: ["command"],
  aliases: { cmd: "command", cwd: "workdir", timeout: "timeout_ms" },
  annotations: { readOnlyHint: false, destructiveHint: true },
  async execute(input, ctx) {
    const command = input.command;
    if (command.trim() === "") throw invalidArgs("bash", `parameter "command" is empty; give the shell command to run`);
    checkCommand(command);
    const cwd = workdir(ctx, input.workdir);
    const timeout = Math.min(input.timeout_ms ?? DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS);
    if (input.tty !== true && (input.cols !== undefined || input.rows !== undefined)) {
      throw invalidArgs("bash", `"cols" and "rows" size a terminal: give "tty": true with them to run the command on one, or leave them out for pipes`);
    }
    const tty = input.tty === true ? { cols: input.cols ?? DEFAULT_COLS, rows: input.rows ?? DEFAULT_ROWS } : undefined;
    // SPEC §8.7: a state directory that cannot hold the command's log does not keep it from running.
    const noRoom = stateDiskProblem(ctx.stateDir);
    if (noRoom !== undefined) return unlogged(ctx, command, cwd, timeout, noRoom, tty !== undefined);
    let db: ReturnType<typeof index>;
    let launched: Awaited<ReturnType<typeof launch>>;
    try {
      db = index(ctx);
      launched = await launch(ctx, { command, cwd, origin: "bash", managed: false, ...(tty ? { tty } : {}) });
    } catch (error) {
      const full = stateDiskProblem(ctx.stateDir) ?? (["SQLITE_FULL", "ENOSPC"].includes(String((error as { code?: unknown }).code)) ? `the disk holding the state directory ${ctx.stateDir} is full` : undefined);
      // A directory refused as not the user's own (SPEC §8.7) refuses the command too: only a broken or full one lets it run unlogged.
      if (full === undefined && (!isStateFault(error) || (error as { code?: unknown }).code === "PERMISSION_DENIED")) throw error;
      return unlogged(ctx, command, cwd, timeout, full ?? stateProblem(ctx.stateDir, error).replace(/^kt cannot use its state directory/, "kt could not use its state directory"), tty !== undefined);
    }
    const { row, exited, unref } = launched;
    const interrupt = interruption(ctx.signal);
    const following = ctx.stream ? follow(row.log_path, ctx.stream) : undefined;
    try {
      const outcome = await waitForSupervisor(exited, timeout, interrupt.signal, () => leaderEnded(byKey(db, row.key)));
      // The rest of the output is sent before the answer is worked out (which may remove the log).
      following?.();
      if (outcome === "cancelled") return await cancel(ctx, row);
      if (outcome === "left") return await leftBehind(ctx, row);
      if (outcome === "exited") {
        const ended = await waitForEnd(db, row.key, 2000);
        if (ended && isFinal(ended.status)) return await finished(ctx, ended);
      }
      return await handOver(ctx, row, timeout);
    } finally {
      following?.();
      interrupt.dispose();
      unref();
    }
  },
});

/**
 * Sends what a command writes to its log, as it comes, to a person watching (kt bash on a
 * terminal; the model's text is still the whole answer at the end). Returns the function
 * that sends the rest and stops.
 */
function follow(path: string, send: (bytes: Uint8Array) => void): () => void {
  let offset = 0;
  const pump = () => {
    let fd: number;
    try {
      fd = openSync(path, "r");
    } catch {
      return; // Not there yet.
    }
    try {
      const buf = Buffer.allocUnsafe(64 * 1024);
      for (let n = readSync(fd, buf, 0, buf.length, offset); n > 0; n = readSync(fd, buf, 0, buf.length, offset)) {
        offset += n;
        send(buf.subarray(0, n));
      }
    } catch {
      // Moved or cut meanwhile: what was sent stays sent.
    } finally {
      closeSync(fd);
    }
  };
  const timer = setInterval(pump, 100);
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    clearInterval(timer);
    pump();
  };
}

function workdir(ctx: ToolContext, given: string | undefined): string {
  if (given === undefined || given === "") return ctx.cwd;
  const abs = absolutePath(ctx, given);
  const real = realPath(ctx, abs);
  let isDir: boolean;
  try {
    isDir = statSync(real).isDirectory();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") {
      throw new KtError("FILE_NOT_FOUND", `Working directory not found: ${onOneLine(abs)}. Give an existing directory as workdir, or omit workdir to run in ${onOneLine(ctx.cwd)}.`);
    }
    if (code === "ENOTDIR") throw notADirectory(abs);
    throw fsError(error, abs);
  }
  if (!isDir) throw notADirectory(abs);
  return abs;
}

function notADirectory(abs: string): KtError {
  return new KtError("NOT_A_DIRECTORY", `workdir ${onOneLine(abs)} is not a directory. Give the directory to run in (e.g. ${onOneLine(dirname(abs))}), not a file.`);
}

/** The command ended within the budget: its whole output, and no trace left in ps list. */
async function finished(ctx: ToolContext, row: ProcessRow): Promise<ToolOutput> {
  const db = index(ctx);
  if (row.status === "failed") {
    remove(db, row);
    throw new KtError("SPAWN_FAILED", `Command failed to start: ${row.error ?? "unknown error"}. Nothing ran. Check that bash is on PATH and that ${row.cwd} is still a directory.`);
  }
  const size = logSize(row.log_path);
  const endsWithNewline = size > 0 && readBytes(row.log_path, size - 1, size)[0] === 10;
  let logKept = false;
  const shown = await logView(row.log_path, 0, size, LIMITS, (full) => {
    if (full !== undefined) return spillFile(ctx, "bash", full);
    // Too large to copy: the log itself becomes the spill file.
    const target = join(sessionDir(ctx.stateDir, ctx.session, "spill"), `bash-${safeName(ctx.callId)}.txt`);
    try {
      renameSync(row.log_path, target);
      logKept = true;
      return target;
    } catch {
      return undefined;
    }
  });
  remove(db, row, logKept);
  const durationMs = (row.ended_at ?? Date.now()) - row.started_at;
  const word = endWord(row);
  const status = shellEnd(row);
  const lines = [`$ ${row.command}`];
  if (shown.text !== "") lines.push(shown.text);
  lines.push(`[${status} · ${seconds(durationMs)} · cwd ${onOneLine(row.cwd)}]`);
  if (row.exit_code === 127) {
    const hint = notFoundHint(shown.text);
    if (hint) lines.push(hint);
  }
  // A failure at the sandbox's boundary says so once (SPEC §8.2).
  const note = row.exit_code === 0 ? undefined : boundaryNote(ctx.sandbox, shown.text);
  if (note) lines.push(note);
  const prompt = row.exit_code !== 0 && size > 0 ? trailingPrompt(shown.text, endsWithNewline) : undefined;
  if (prompt !== undefined) lines.push(promptHint(prompt));
  return {
    content: lines.join("\n"),
    title: `Run ${shortCommand(row.command, 50)} · ${row.exit_code === null ? (row.signal ?? "no exit code") : `exit ${row.exit_code}`} · ${seconds(durationMs)}`,
    exitCode: row.exit_code,
    ...(shown.truncation ? { truncation: shown.truncation } : {}),
    extra: { cwd: row.cwd, status: word, exitCode: row.exit_code, ...(row.signal ? { signal: row.signal } : {}), durationMs },
  };
}

/** Gives a running bash command an id: from now on it is process pN. Undefined when it has ended. */
function adopt(ctx: ToolContext, key: number): string | undefined {
  const db = index(ctx);
  return withWriteLock(db, () => {
    const row = byKey(db, key);
    if (!row || isFinal(row.status)) return undefined;
    const { id, seq } = nextId(db, ctx.session);
    assignId(db, row.key, id, seq);
    prune(db, ctx.session);
    return id;
  });
}

/**
 * The command's own shell has ended but processes it started run on (`server &`, a daemon
 * that forked away). They are neither killed nor left untracked: the command becomes process
 * pN, which ps can read and stop, and ends when the last of them does.
 */
async function leftBehind(ctx: ToolContext, launched: ProcessRow): Promise<ToolOutput> {
  const db = index(ctx);
  const left = held(holdsOf(ctx.stateDir, byKey(db, launched.key) ?? launched));
  const id = left.length > 0 ? adopt(ctx, launched.key) : undefined;
  if (id === undefined) {
    // What it left ended meanwhile: the supervisor is recording the end.
    const ended = (await waitForEnd(db, launched.key, 2000)) ?? launched;
    return finished(ctx, ended);
  }
  const row = byKey(db, launched.key) ?? launched;
  const size = logSize(row.log_path);
  const shown = await logView(row.log_path, 0, size, LIMITS, () => row.log_path);
  setCursor(db, row.key, size, shown.newlines);
  const durationMs = Date.now() - row.started_at;
  const leader = shellEnd(row);
  const lines = [`$ ${row.command}`];
  if (shown.text !== "") lines.push(shown.text);
  lines.push(
    `[${leader} · ${seconds(durationMs)} · cwd ${row.cwd}]`,
    `The command left ${left.length === 1 ? "1 process" : `${left.length} processes`} running (${left.slice(0, 5).map((p) => `pid ${p.pid} ${p.comm}`).join(", ")}${left.length > 5 ? ", …" : ""}): kt keeps ${left.length === 1 ? "it" : "them"} as background process ${id}. Use process {"action":"read","id":"${id}"} for new output, or {"action":"stop","id":"${id}"} to stop ${left.length === 1 ? "it" : "them"}.`,
  );
  return {
    content: lines.join("\n"),
    title: `Run ${shortCommand(row.command, 50)} · ${leader} · left running as ${id}`,
    exitCode: row.exit_code,
    processId: id,
    ...(shown.truncation ? { truncation: shown.truncation } : {}),
    extra: { cwd: row.cwd, status: "running", exitCode: row.exit_code, durationMs, processId: id, left: left.map((p) => ({ pid: p.pid, name: p.comm })) },
  };
}

/** The budget ran out: the command becomes process pN; the reader's cursor starts where this result ends. */
async function handOver(ctx: ToolContext, launched: ProcessRow, timeout: number): Promise<ToolOutput> {
  const db = index(ctx);
  const id = adopt(ctx, launched.key);
  // It ended just as the budget ran out: an ordinary result.
  if (id === undefined) return finished(ctx, byKey(db, launched.key) ?? launched);
  const size = logSize(launched.log_path);
  const shown = await logView(launched.log_path, 0, size, LIMITS, () => launched.log_path);
  setCursor(db, launched.key, size, shown.newlines);
  const durationMs = Date.now() - launched.started_at;
  return {
    content: [
      `Command still running after ${budget(timeout)} — moved to background as process ${id}.`,
      "Output so far:",
      shown.text === "" ? "(no output yet)" : shown.text,
      `Use process {"action":"read","id":"${id}"} to see new output, or {"action":"stop","id":"${id}"} to stop it.`,
    ].join("\n"),
    title: `Run ${shortCommand(launched.command, 50)} · moved to background as ${id}`,
    exitCode: null,
    processId: id,
    ...(shown.truncation ? { truncation: shown.truncation } : {}),
    extra: { cwd: launched.cwd, exitCode: null, durationMs, processId: id },
  };
}

/** The command run without a log (src/process/direct.ts): its output, and why nothing of it was kept. */
async function unlogged(ctx: ToolContext, command: string, cwd: string, timeout: number, why: string, wantedTty: boolean): Promise<ToolOutput> {
  const interrupt = interruption(ctx.signal);
  let run: DirectRun;
  try {
    run = await runDirect(command, cwd, timeout, interrupt.signal);
  } catch (error) {
    throw new KtError("SPAWN_FAILED", `Command failed to start: ${(error as Error).message}. Nothing ran; kt also could not keep a log (${why}). Check that bash is on PATH, and free space for the state directory or set KT_STATE_DIR (or --state-dir) to another disk.`);
  } finally {
    interrupt.dispose();
  }
  let text = clean(run.output);
  if (text.endsWith("\n")) text = text.slice(0, -1);
  const shown = fitLines(text.split("\n"), text, LIMITS, () => undefined);
  const status = run.exitCode === null && run.signal ? `killed by ${run.signal}` : `exit code ${run.exitCode}`;
  const lines = [`$ ${command}`];
  if (shown.text !== "") lines.push(shown.text);
  lines.push(`[${status} · ${seconds(run.durationMs)} · cwd ${onOneLine(cwd)}]`);
  if (run.timedOut) lines.push(`The command was still running after ${budget(timeout)} and was stopped: without a log it could not be moved to the background.`);
  if (run.cancelled) lines.push("[Tool execution cancelled by user] The command was stopped (its process group got SIGTERM).");
  lines.push(
    `kt could not keep this command's log: ${why}. It ran without one${wantedTty ? " (on pipes, not a terminal)" : ""}: the output above is all there is${shown.truncation ? " (the middle is cut and was not saved)" : ""}, and nothing of it was saved. Free space there, or set KT_STATE_DIR (or --state-dir) to a directory on another disk.`,
  );
  return {
    content: lines.join("\n"),
    title: `Run ${shortCommand(command, 50)} · ${run.exitCode === null ? (run.signal ?? "no exit code") : `exit ${run.exitCode}`} · ${seconds(run.durationMs)} · no log`,
    exitCode: run.exitCode,
    ...(shown.truncation ? { truncation: shown.truncation } : {}),
    extra: { cwd, exitCode: run.exitCode, ...(run.signal ? { signal: run.signal } : {}), durationMs: Math.round(run.durationMs), logKept: false },
  };
}

/** Interrupted (Ctrl-C, a cancelled call): a foreground command is stopped with its group. */
async function cancel(ctx: ToolContext, launched: ProcessRow): Promise<never> {
  const db = index(ctx);
  const { row } = await stopRow(ctx, byKey(db, launched.key) ?? launched, 1000);
  const size = logSize(launched.log_path);
  const shown = await logView(launched.log_path, 0, size, LIMITS, (full) => (full === undefined ? undefined : spillFile(ctx, "bash", full)));
  remove(db, row);
  throw new KtError(
    "CANCELLED",
    `[Tool execution cancelled by user] The command was stopped (its process group got SIGTERM).\n$ ${launched.command}\n${shown.text === "" ? "(no output)" : shown.text}`,
    { exitCode: row.exit_code },
  );
}

/** An AbortSignal that fires on the caller's signal or on SIGINT/SIGTERM/SIGHUP to this kt. */
function interruption(outer?: AbortSignal): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const abort = () => controller.abort();
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
  for (const s of signals) process.on(s, abort);
  outer?.addEventListener("abort", abort, { once: true });
  return {
    signal: controller.signal,
    dispose() {
      for (const s of signals) process.off(s, abort);
      outer?.removeEventListener("abort", abort);
    },
  };
}
