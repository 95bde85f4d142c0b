// ps — the process tool (SPEC §4.7; "process" in schemas): background commands that
// outlive the kt call that started them. Each one is owned by the session's host
// (src/process/host.ts) or a supervisor of its own (src/process/supervisor.ts); these
// actions only read and update its row and its log,
// write to its stdin FIFO, and signal its process group.
import { p, type Infer } from "./params.ts";
import { onOneLine } from "../core/paths.ts";
import { existsSync } from "node:fs";
import { toolText } from "./_text.ts" with { type: "macro" };
import { defineTool, invalidArgs, KtError, type ToolContext, type ToolOutput } from "./tool.ts";
import { index } from "../core/state.ts";
import type { Limits } from "../core/truncate.ts";
import { held } from "../process/descendants.ts";
import { endDetail, endedImmediately, endedOn, escapedSentence, leftDetail, statusSentence } from "../process/ending.ts";
import { budget, clock, shortCommand } from "../process/format.ts";
import { isSameProcess } from "../process/identity.ts";
import { terminate } from "../process/kill-tree.ts";
import { holdsOf, stopRow, trustedSupervisor } from "../process/stop.ts";
import { countNewlines, lineStart, logSize, pageFrom, readBytes, totalLines, view } from "../process/log.ts";
import { currentSize, newlinesBetween, DEFAULT_COLS, DEFAULT_ROWS, isTerminal, logView, MAX_COLS, MAX_ROWS, MIN_COLS, MIN_ROWS, requestResize, type Size } from "../process/terminal.ts";
import { KEY_NAMES, keysToBytes, needsCursorMode } from "../process/keys.ts";
import { requestEndOfInput, sendToFifo } from "../process/stdin.ts";
import { byId, byKey, isFinal, leaderEnded, markNotified, readAtCursor, reconcile, running, setCursor, visible, type ProcessRow } from "../process/registry.ts";
import { launch } from "../process/spawn.ts";
import { boundaryNote } from "../sandbox/notice.ts";
import { waitForEnd, waitForOutput, waitForRecord } from "../process/wait.ts";
import { watchLog } from "../process/watch.ts";
import { waitingForInput } from "../process/input-wait.ts";
import { compilePattern } from "../search/regex.ts";

const description = toolText("ps");

export const START_WAIT_MS = 2000;
const START_QUIET_MS = 150;
export const WRITE_WAIT_MS = 500;
/** How long start waits for the command's owner to record it (a loaded machine can take seconds). */
const RECORD_WAIT_MS = 10_000;
export const START_LIMITS: Limits = { maxLines: 60, maxBytes: 8 * 1024, headLines: 20, tailLines: 40 };
export const WAIT_DEFAULT_MS = 30_000;
export const WAIT_MAX_MS = 600_000;
export const READ_LIMITS: Limits = { maxLines: 300, maxBytes: 20 * 1024, headLines: 100, tailLines: 200 };
const TOOL = "process";

export const Parameters = p.object({
  action: p.enum(["start", "list", "read", "wait", "write", "resize", "stop"], { description: "The operation to perform." }),
  command: p.optional(p.string({ description: "Shell command to launch. Required for 'start'." })),
  id: p.optional(p.string({ description: 'Process id, e.g. "p3". Required for \'read\', \'wait\', \'write\', \'stop\'.' })),
  input: p.optional(p.string({ description: "Text to send to stdin. Required for 'write'. End with \\n to submit a line; a lone \\u0004 (Ctrl-D) closes stdin (end of input)." })),
  offset: p.optional(p.int({ minimum: 1, description: "For 'read': 1-based output line to read from, instead of 'new output since last read'." })),
  // SPEC §7.4: terminals.
  keys: p.optional(
    p.array(p.string(), { description: 'For \'write\' to a tty process: keys sent after input, as a terminal sends them, e.g. ["Enter"], ["Up"], ["C-c"], ["Esc", ":", "w", "q", "Enter"] (names: Enter, Tab, Esc, Space, Backspace, Delete, Up, Down, Left, Right, Home, End, PageUp, PageDown, F1-F12; C-x is Ctrl+x, M-x is Alt+x; or one character).' }),
  ),
  screen: p.optional(p.boolean({ description: "For 'read' of a tty process: return the current screen (its rows and the cursor) instead of new output." })),
  tty: p.optional(p.boolean({ description: "For 'start': run the command on a pseudo-terminal, for programs that need one (REPLs, editors, pagers, top, prompts, progress bars). Default false: pipes." })),
  cols: p.optional(p.int({ minimum: MIN_COLS, maximum: MAX_COLS, description: `For 'start' with tty, and 'resize': terminal width in columns. Default ${DEFAULT_COLS}.` })),
  rows: p.optional(p.int({ minimum: MIN_ROWS, maximum: MAX_ROWS, description: `For 'start' with tty, and 'resize': terminal height in rows. Default ${DEFAULT_ROWS}.` })),
  // SPEC §8.7: waiting for output.
  pattern: p.optional(p.string({ description: "For 'wait': a regex (grep's syntax; case-insensitive unless it has an uppercase letter) tested against each new line of output; the wait ends at the first line that matches. Without it, 'wait' waits for the process to end." })),
  timeout_ms: p.optional(p.int({ minimum: 0, description: `For 'wait': how long to wait, in milliseconds. Default ${WAIT_DEFAULT_MS}, maximum ${WAIT_MAX_MS} (larger values count as ${WAIT_MAX_MS}).` })),
});

type Input = Infer<typeof Parameters>;

export default defineTool({
  name: "ps",
  schemaName: "process",
  description: description.trim(),
  parameters: Parameters,
  primary: "action",
  examples: [
    "kt ps start 'npm run dev'     # returns p1 after up to 2 s of first output",
    "kt ps list",
    "kt ps read p1                 # new output since the last read",
    "kt ps read p1 --offset 1      # page the whole log from line 1",
    "kt ps wait p1 'listening on'  # until a new line matches (or it ends; 30 s at most)",
    "kt ps write p1 'rs\\n'         # \\n, \\t, \\xHH are decoded in this argument",
    "kt ps write p1 '\\x04'         # Ctrl-D: end of input",
    "kt ps start --tty python3     # on a 120×40 pseudo-terminal (--cols, --rows)",
    "kt ps read p1 --screen        # a tty process's screen: rows and cursor",
    `kt ps write p1 --keys '["C-c"]'`,
    "kt ps resize p1 100 30        # columns, rows",
    "kt ps stop p1",
  ],
  longText: ["command", "input", "pattern"],
  aliases: { timeout: "timeout_ms" },
  positionals: cliPositionals,
  annotations: { readOnlyHint: false, destructiveHint: true },
  async execute(input, ctx) {
    if (input.action !== "wait" && (input.pattern !== undefined || input.timeout_ms !== undefined)) {
      throw invalidArgs(TOOL, `"pattern" and "timeout_ms" belong to action "wait" (wait for a line of output that matches, or for the end); leave them out for "${input.action}"`);
    }
    switch (input.action) {
      case "start":
        return start(input, ctx);
      case "list":
        return list(ctx);
      case "read":
        return read(input, ctx);
      case "wait":
        return wait(input, ctx);
      case "write":
        return write(input, ctx);
      case "resize":
        return resize(input, ctx);
      case "stop":
        return stop(input, ctx);
    }
  },
});

/**
 * `kt ps list`, `kt ps read p3`, `kt ps start npm run dev`, `kt ps write p1 'q\n'`, `kt ps stop p1`.
 * The input of `write` given as an argument has its backslash escapes (\n, \t, \r, \\, \xHH)
 * decoded, so a shell user can type a newline; --input and JSON input are taken literally.
 */
function cliPositionals(args: string[]): Record<string, string> {
  const [action = "", ...rest] = args;
  const fields: Record<string, string> = { action };
  const extra = (from: number) => {
    if (rest.length > from) fields.unexpected_arguments = rest.slice(from).join(" ");
  };
  switch (action) {
    case "start":
      if (rest.length > 0) fields.command = rest.join(" ");
      break;
    case "read":
      if (rest[0] !== undefined) fields.id = rest[0];
      if (rest[1] !== undefined) fields.offset = rest[1];
      extra(2);
      break;
    case "write":
      if (rest[0] !== undefined) fields.id = rest[0];
      if (rest.length > 1) fields.input = unescape(rest.slice(1).join(" "));
      break;
    case "wait":
      if (rest[0] !== undefined) fields.id = rest[0];
      if (rest.length > 1) fields.pattern = rest.slice(1).join(" ");
      break;
    case "stop":
      if (rest[0] !== undefined) fields.id = rest[0];
      extra(1);
      break;
    case "resize":
      if (rest[0] !== undefined) fields.id = rest[0];
      if (rest[1] !== undefined) fields.cols = rest[1];
      if (rest[2] !== undefined) fields.rows = rest[2];
      extra(3);
      break;
    default:
      extra(0);
  }
  return fields;
}

export function unescape(text: string): string {
  return text.replace(/\\(x[0-9A-Fa-f]{2}|[ntr\\0e])/g, (_, c: string) => {
    if (c[0] === "x") return String.fromCharCode(parseInt(c.slice(1), 16));
    return ({ n: "\n", t: "\t", r: "\r", "\\": "\\", "0": "\0", e: "\x1b" } as Record<string, string>)[c]!;
  });
}

// ---- start -------------------------------------------------------------------------

async function start(input: Input, ctx: ToolContext): Promise<ToolOutput> {
  const command = input.command;
  if (command === undefined || command.trim() === "") throw invalidArgs(TOOL, `action "start" needs parameter "command", the shell command to launch`);
  const tty = terminalSize(input, "start");
  const db = index(ctx);
  const { row: launched, exited, unref } = await launch(ctx, { command, cwd: ctx.cwd, origin: "ps", managed: true, ...(tty ? { tty } : {}) });
  const id = launched.id!;
  await waitForOutput(launched.log_path, 0, START_WAIT_MS, START_QUIET_MS, exited);
  unref();
  let row = (await waitForRecord(db, launched.key, RECORD_WAIT_MS)) ?? launched;
  // The leader is gone: wait for its end to be recorded — or for the record that what it
  // started runs on (then it is running, not over).
  if (row.pid !== null && !isFinal(row.status) && !leaderEnded(row) && !isSameProcess(row.pid, row.pid_start)) {
    const deadline = performance.now() + 1000;
    while (performance.now() < deadline && !isFinal(row.status) && !leaderEnded(row)) {
      await Bun.sleep(20);
      row = (await waitForEnd(db, row.key, 0)) ?? row;
    }
  }
  const size = logSize(row.log_path);
  const shown = await logView(row.log_path, 0, size, START_LIMITS, () => row.log_path);
  setCursor(db, row.key, size, shown.newlines);
  const where = `cwd ${onOneLine(row.cwd)} · log ${onOneLine(row.log_path)}`;
  const meta = { processId: id, ...(shown.truncation ? { truncation: shown.truncation } : {}) };
  if (row.status === "failed") {
    markNotified(db, row.key);
    throw new KtError("SPAWN_FAILED", `Command failed to start: ${row.error ?? "unknown error"}. Nothing ran. Check the command and the working directory ${row.cwd}.`, { processId: id });
  }
  if (isFinal(row.status)) {
    markNotified(db, row.key);
    const head = `Process ${id} ${endedImmediately(row)}`;
    return {
      content: withNote(ctx, shown.text === "" ? `${head} (no output).\n${where}` : `${head}:\n${indent(shown.text)}\n${where}`, shown.text),
      title: `Process start ${shortCommand(command, 40)} · ${id} exited`,
      exitCode: row.exit_code,
      ...meta,
      extra: { status: row.status, exitCode: row.exit_code, logPath: row.log_path },
    };
  }
  const lines = [`Started ${id} (pid ${row.pid ?? "not yet known"}${tty ? `, on a ${tty.cols}×${tty.rows} terminal` : ""}): ${shortCommand(command, 200)}`, where];
  if (shown.text === "") lines.push(`No output yet (waited ${START_WAIT_MS / 1000}s).`);
  else lines.push(`First output (waited up to ${START_WAIT_MS / 1000}s):`, indent(shown.text));
  lines.push(
    tty
      ? `Use process {"action":"read","id":"${id}"} for new output, {"action":"read","id":"${id}","screen":true} for the screen, {"action":"write","id":"${id}","keys":["Enter"]} to type.`
      : `Use process {"action":"read","id":"${id}"} for new output.`,
  );
  return {
    content: lines.join("\n"),
    title: `Process start ${shortCommand(command, 40)} · ${id} running`,
    exitCode: null,
    ...meta,
    extra: { status: "running", pid: row.pid, logPath: row.log_path, ...(tty ? { tty } : {}) },
  };
}

function indent(text: string): string {
  return text
    .split("\n")
    .map((l) => (l === "" ? l : `  ${l}`))
    .join("\n");
}

// ---- list --------------------------------------------------------------------------

function list(ctx: ToolContext): ToolOutput {
  const db = index(ctx);
  const rows = visible(db, ctx.session).map((r) => reconcile(db, r));
  if (rows.length === 0) {
    return { content: `No background processes in this session. Start one with {"action":"start","command":"..."}.`, title: "Process list · none", extra: { count: 0 } };
  }
  const live = rows.filter((r) => !isFinal(r.status));
  const done = rows.filter((r) => isFinal(r.status)).reverse();
  const now = Date.now();
  const table = [...live, ...done].map((r) => [r.id!, shortCommand(r.command, 40), r.status, listDetail(ctx, r, now)]);
  const widths = [0, 1, 2].map((c) => Math.max(...table.map((cells) => cells[c]!.length)));
  const lines = table.map((cells) => cells.map((cell, c) => (c < 3 ? cell.padEnd(widths[c]!) : cell)).join("  ").trimEnd());
  for (const r of done) markNotified(db, r.key);
  return {
    content: `PROCESSES\n${lines.join("\n")}`,
    title: `Process list · ${live.length} running`,
    extra: { count: rows.length, running: live.length, statuses: Object.fromEntries(rows.map((r) => [r.id!, r.status])) },
  };
}

function listDetail(ctx: ToolContext, r: ProcessRow, now: number): string {
  if (leaderEnded(r)) return `${clock(now - r.started_at)}  ${leftDetail(r, held(holdsOf(ctx.stateDir, r)))}`;
  if (!isFinal(r.status)) {
    const tty = isTerminal(r.log_path) ? currentSize(r.log_path) : undefined;
    const waiting = tty && waitingForInput(r.pid, r.pid_start, r.log_path, now) ? "  waiting for input" : "";
    return `${clock(now - r.started_at)}  pid ${r.pid ?? "?"}${tty ? `  tty ${tty.cols}×${tty.rows}` : ""}${waiting}`;
  }
  return endDetail(r, now);
}

// ---- read --------------------------------------------------------------------------

async function read(input: Input, ctx: ToolContext): Promise<ToolOutput> {
  const db = index(ctx);
  const row = find(ctx, input, "read");
  if (!existsSync(row.log_path)) {
    if (isFinal(row.status)) markNotified(db, row.key);
    return {
      content: `The log of ${row.id} was removed (to keep the state directory under its size cap), so its output is gone. ${isFinal(row.status) ? statusSentence(row, false) : "It is still running; new output goes to a log that no longer exists."}`,
      title: `Process read ${row.id} · log removed`,
      processId: row.id!,
    };
  }
  if (input.screen === true) return readScreen(ctx, row);
  return input.offset !== undefined ? readFrom(ctx, row, input.offset) : readNew(ctx, row);
}

interface NewOutput {
  text: string;
  first: number;
  last: number;
  truncation?: ToolOutput["truncation"];
}

/** Output since the session's cursor, advancing the cursor past it. */
async function takeNew(ctx: ToolContext, row: ProcessRow): Promise<NewOutput | undefined> {
  if (isTerminal(row.log_path)) return takeNewRendered(ctx, row);
  return readAtCursor<NewOutput>(index(ctx), row.key, { byte: row.cursor_byte, line: row.cursor_line }, (cursor) => {
    const size = logSize(row.log_path);
    const from = Math.min(cursor.byte, size);
    if (from >= size) return undefined;
    const shown = view(row.log_path, from, size, READ_LIMITS, () => row.log_path);
    const value = { text: shown.text, first: cursor.line + 1, last: cursor.line + shown.lines, ...(shown.truncation ? { truncation: shown.truncation } : {}) };
    return { value, to: { byte: size, line: cursor.line + shown.newlines } };
  });
}

/**
 * A terminal's output since the cursor: the cursor is moved under the lock (so two reads never
 * show the same bytes), the rendering through the emulator happens after it.
 */
async function takeNewRendered(ctx: ToolContext, row: ProcessRow): Promise<NewOutput | undefined> {
  const range = advanceCursor(ctx, row);
  if (!range) return undefined;
  const shown = await logView(row.log_path, range.from, range.to, READ_LIMITS, () => row.log_path, { newlines: range.newlines });
  return { text: shown.text, first: range.line + 1, last: range.line + shown.lines, ...(shown.truncation ? { truncation: shown.truncation } : {}) };
}

/** Moves the session's cursor to the end of the log; the region it passed, undefined when none. */
function advanceCursor(ctx: ToolContext, row: ProcessRow): { from: number; to: number; line: number; newlines: number } | undefined {
  return readAtCursor(index(ctx), row.key, { byte: row.cursor_byte, line: row.cursor_line }, (cursor) => {
    const size = logSize(row.log_path);
    const from = Math.min(cursor.byte, size);
    if (from >= size) return undefined;
    const newlines = isTerminal(row.log_path) ? newlinesBetween(row.log_path, from, size, cursor.line) : countNewlines(row.log_path, from, size);
    return { value: { from, to: size, line: cursor.line, newlines }, to: { byte: size, line: cursor.line + newlines } };
  });
}

async function readNew(ctx: ToolContext, row: ProcessRow): Promise<ToolOutput> {
  const db = index(ctx);
  const out = await takeNew(ctx, row);
  const final = isFinal(row.status);
  if (final) markNotified(db, row.key);
  const id = row.id!;
  if (!out) {
    const total = totalLines(row.log_path, { byte: row.cursor_byte, line: row.cursor_line });
    const content = final
      ? `No new output from ${id} since last read (${total} ${total === 1 ? "line" : "lines"} in all; use offset to re-read them).\n${statusSentence(row)}`
      : `No new output from ${id} since last read (still running, ${total} ${total === 1 ? "line" : "lines"} total). Use offset to re-read earlier output.${inputNote(row, "\n")}`;
    return { content, title: `Process read ${id} · no new output`, processId: id, exitCode: row.exit_code, extra: { status: row.status, newLines: 0 } };
  }
  const lines = [`Output of ${id} since last read (lines ${out.first}–${out.last} of ${out.last}):`, out.text];
  if (final) lines.push(statusSentence(row));
  else if (inputNote(row) !== "") lines.push(inputNote(row));
  return {
    content: withNote(ctx, lines.join("\n"), out.text),
    title: `Process read ${id} · ${out.last - out.first + 1} new lines`,
    processId: id,
    exitCode: row.exit_code,
    ...(out.truncation ? { truncation: out.truncation } : {}),
    extra: { status: row.status, newLines: out.last - out.first + 1 },
  };
}

async function readFrom(ctx: ToolContext, row: ProcessRow, offset: number): Promise<ToolOutput> {
  const db = index(ctx);
  const id = row.id!;
  const size = logSize(row.log_path);
  const total = totalLines(row.log_path, { byte: row.cursor_byte, line: row.cursor_line });
  if (offset > Math.max(total, 1)) {
    throw new KtError("OFFSET_BEYOND_EOF", `Offset ${offset} is beyond the end of ${id}'s output (${total} lines). Use offset ≤ ${Math.max(total, 1)}, or omit offset for the output since your last read.`, { processId: id });
  }
  const lineBoundary = row.cursor_byte === 0 || (row.cursor_byte <= size && readBytes(row.log_path, row.cursor_byte - 1, row.cursor_byte)[0] === 10);
  const from = lineStart(row.log_path, offset, size, lineBoundary ? { byte: row.cursor_byte, line: row.cursor_line } : { byte: 0, line: 0 }) ?? size;
  const page = isTerminal(row.log_path) ? await (await import("../process/emulator.ts")).terminalPage(row.log_path, from, size, READ_LIMITS) : pageFrom(row.log_path, from, size, READ_LIMITS);
  const last = offset + page.count - 1;
  const final = isFinal(row.status);
  if (final) markNotified(db, row.key);
  const lines = [`Output of ${id}, lines ${offset}–${last} of ${total}:`, page.text];
  if (last < total) lines.push(`(Showing lines ${offset}–${last} of ${total}. Use offset=${last + 1} to continue.)`);
  if (final) lines.push(statusSentence(row));
  return {
    content: lines.join("\n"),
    title: `Process read ${id} · lines ${offset}–${last}`,
    processId: id,
    exitCode: row.exit_code,
    extra: { status: row.status, offset, lines: page.count, totalLines: total },
  };
}

// ---- waiting for input (SPEC §8.7) -------------------------------------------------------

/** `before` and the sentence saying a terminal process waits for input, or "" when it does not. */
function inputNote(row: ProcessRow, before = ""): string {
  if (isFinal(row.status) || !isTerminal(row.log_path)) return "";
  const waiting = waitingForInput(row.pid, row.pid_start, row.log_path);
  if (!waiting) return "";
  const id = row.id!;
  return `${before}${id} is waiting for input: blocked reading its terminal, no output for ${Math.floor(waiting.quietMs / 1000)}s. Type with {"action":"write","id":"${id}","input":"...\\n"} or keys such as ["Enter"]; {"action":"read","id":"${id}","screen":true} shows what it asks.`;
}

// ---- wait (SPEC §8.7) ----------------------------------------------------------------

/**
 * `wait`: until a new line of output matches `pattern`, the process ends, or `timeout_ms`
 * passes — then the output since the last read up to that point, which counts as read.
 */
async function wait(input: Input, ctx: ToolContext): Promise<ToolOutput> {
  const db = index(ctx);
  const row = find(ctx, input, "wait");
  const id = row.id!;
  const pattern = input.pattern === undefined || input.pattern === "" ? undefined : input.pattern;
  const re = pattern === undefined ? undefined : compilePattern(pattern).js;
  const ms = Math.min(input.timeout_ms ?? WAIT_DEFAULT_MS, WAIT_MAX_MS);
  if (!existsSync(row.log_path)) return read(input, ctx);
  const started = performance.now();
  const from = Math.min(row.cursor_byte, logSize(row.log_path));
  const test = re ? (line: string) => ((re.lastIndex = 0), re.test(line)) : undefined;
  const watched = await watchLog(db, row.key, from, test, ms, ctx.signal);
  if (watched.outcome === "cancelled") throw new KtError("CANCELLED", `The wait for ${id} was cancelled. ${id} is untouched; its new output is still unread.`, { processId: id });
  const out = await takeUpTo(ctx, watched.row, watched.end);
  const waited = performance.now() - started;
  const now = watched.row;
  const final = isFinal(now.status);
  if (final) markNotified(db, now.key);
  const quoted = pattern === undefined ? "" : JSON.stringify(onOneLine(pattern));
  const span = out ? (out.first === out.last ? `line ${out.first}` : `lines ${out.first}–${out.last}`) : "";
  const again = `{"action":"wait","id":"${id}"${pattern === undefined ? "" : `,"pattern":${JSON.stringify(pattern)}`}}`;
  const lines: string[] = [];
  switch (watched.outcome) {
    case "match":
      lines.push(`Line ${out?.last ?? now.cursor_line} of ${id}'s output matches ${quoted}. Output since last read (${span}):`, out?.text ?? "");
      break;
    case "ended":
      lines.push(out ? `${id} ended${quoted ? ` before a line matched ${quoted}` : ""}. Output since last read (${span}):` : `${id} ended${quoted ? ` before a line matched ${quoted}` : ""}, with no new output since last read.`);
      if (out) lines.push(out.text);
      break;
    case "timeout": {
      const head = quoted ? `No new line matched ${quoted} within ${budget(ms)}; ${id} is still running.` : `${id} is still running after ${budget(ms)}.`;
      lines.push(out ? `${head} Output meanwhile (${span}):` : `${head} No new output meanwhile.`);
      if (out) lines.push(out.text);
      lines.push(`Wait again with ${again}, or stop it with {"action":"stop","id":"${id}"}.`);
      break;
    }
  }
  if (final) lines.push(statusSentence(now));
  return {
    content: lines.join("\n"),
    title: `Process wait ${id} · ${watched.outcome === "match" ? "matched" : watched.outcome}`,
    processId: id,
    exitCode: now.exit_code,
    ...(out?.truncation ? { truncation: out.truncation } : {}),
    extra: { status: now.status, outcome: watched.outcome, waitedMs: Math.round(waited), newLines: out ? out.last - out.first + 1 : 0 },
  };
}

/** The output from the session's cursor up to byte `end`, advancing the cursor there (never back). */
async function takeUpTo(ctx: ToolContext, row: ProcessRow, end: number): Promise<NewOutput | undefined> {
  const tty = isTerminal(row.log_path);
  const range = readAtCursor(index(ctx), row.key, { byte: row.cursor_byte, line: row.cursor_line }, (cursor) => {
    const from = Math.min(cursor.byte, logSize(row.log_path));
    if (from >= end) return undefined;
    const newlines = tty ? newlinesBetween(row.log_path, from, end, cursor.line) : countNewlines(row.log_path, from, end);
    return { value: { from, line: cursor.line, newlines }, to: { byte: end, line: cursor.line + newlines } };
  });
  if (!range) return undefined;
  const shown = await logView(row.log_path, range.from, end, READ_LIMITS, () => row.log_path, { newlines: range.newlines });
  return { text: shown.text, first: range.line + 1, last: range.line + shown.lines, ...(shown.truncation ? { truncation: shown.truncation } : {}) };
}

// ---- write -------------------------------------------------------------------------

async function write(input: Input, ctx: ToolContext): Promise<ToolOutput> {
  const db = index(ctx);
  const row = find(ctx, input, "write");
  const id = row.id!;
  const tty = isTerminal(row.log_path);
  const keys = input.keys ?? [];
  if (keys.length > 0 && !tty) throw pipesOnly(row, "named keys mean nothing to it (C-c would reach it as a byte, not as an interrupt)", `Send text with "input" (a lone \\u0004 closes stdin), stop it with {"action":"stop","id":"${id}"}, or start the command with "tty": true to drive it with keys.`);
  if (tty && (input.input === undefined || input.input === "") && keys.length === 0) throw invalidArgs(TOOL, `action "write" needs parameter "input" (text to type; end it with \\n to submit a line) or "keys" (named keys such as ["Enter"] or ["C-c"])`);
  if (input.input === undefined || input.input === "") {
    if (!tty) throw invalidArgs(TOOL, `action "write" needs parameter "input", the text to send (end it with \\n to submit a line)`);
  }
  if (isFinal(row.status)) {
    markNotified(db, row.key);
    throw new KtError(
      "PROCESS_EXITED",
      `Cannot write to ${id} (${shortCommand(row.command)}): ${statusSentence(row, false)} Nothing reads its stdin any more. Its output is in ${row.log_path}; read it with {"action":"read","id":"${id}"}, or start the command again with {"action":"start","command":"..."}.`,
      { processId: id, exitCode: row.exit_code },
    );
  }
  if (!row.stdin_path) {
    throw new KtError(
      "INVALID_ARGS",
      `${id} takes no input: it was moved to the background by bash, which runs commands with stdin closed. To talk to a program, start it with {"action":"start","command":"..."} and write to that process.`,
      { processId: id },
    );
  }
  if (input.input === EOF && !tty) return endInput(ctx, row);
  let typed = input.input ?? "";
  if (keys.length > 0) {
    // Arrows and Home/End are sent as the program asked (application cursor keys or not).
    const applicationCursor = needsCursorMode(keys) ? (await (await import("../process/emulator.ts")).screenOf(row.log_path)).applicationCursor : false;
    const converted = keysToBytes(keys, applicationCursor);
    if ("unknown" in converted) {
      throw invalidArgs(TOOL, `keys: "${onOneLine(converted.unknown)}" names no key. Keys are ${KEY_NAMES}; C-x for Ctrl+x (C-c, C-d, C-z, C-[), M-x for Alt+x; or one character. Send text with "input"`);
    }
    typed += converted.bytes;
  }
  const bytes = Buffer.from(typed, "utf8");
  const sent = await sendToFifo(row.stdin_path, bytes);
  if (sent === undefined) {
    const ended = (await waitForEnd(db, row.key, 1000)) ?? row;
    throw new KtError("PROCESS_EXITED", `Cannot write to ${id}: it has just ended. ${statusSentence(ended)}`, { processId: id });
  }
  const what = tty ? `${id}'s terminal${keys.length > 0 ? ` (${input.input ? "the input, then " : ""}keys ${keys.map((k) => onOneLine(k)).join(" ")})` : ""}` : `${id} stdin`;
  const sentBytes = `${sent} ${sent === 1 ? "byte" : "bytes"}`;
  const head = `Sent ${sentBytes} to ${what}.${sent < bytes.length ? ` Only ${sent} of ${bytes.length} bytes fit: the program is not reading its input.` : ""}`;
  return answer(ctx, row, head, `Process write ${id} · ${sentBytes}`, { bytes: sent });
}

/** Gives the program a moment to answer what it was sent (stopping early if that ended it) and reports under `head`. */
async function answer(ctx: ToolContext, row: ProcessRow, head: string, title: string, extra: Record<string, unknown>): Promise<ToolOutput> {
  const db = index(ctx);
  const id = row.id!;
  const deadline = performance.now() + WRITE_WAIT_MS;
  while (performance.now() < deadline && (row.pid === null || isSameProcess(row.pid, row.pid_start))) await Bun.sleep(25);
  let now = byKey(db, row.key) ?? row;
  if (!isFinal(now.status) && now.pid !== null && !isSameProcess(now.pid, now.pid_start)) now = (await waitForEnd(db, row.key, 1000)) ?? now;
  // A full-screen program answers by redrawing parts of its screen: show the screen.
  const screen = isTerminal(row.log_path) ? await (await import("../process/emulator.ts")).screenOf(row.log_path) : undefined;
  if (screen?.alternate) {
    advanceCursor(ctx, now);
    const lines = [head, ...screenText(id, screen)];
    if (isFinal(now.status)) {
      markNotified(db, now.key);
      lines.push(statusSentence(now));
    }
    return { content: lines.join("\n"), title, processId: id, exitCode: now.exit_code, extra: { status: now.status, ...extra, screen: true } };
  }
  const out = await takeNew(ctx, now);
  const lines = [head];
  if (out && out.text === "" && screen) lines.push("No visible output (only blank lines or control sequences).");
  else if (out) lines.push("Output:", out.text);
  else lines.push(`No output within ${WRITE_WAIT_MS} ms.${isFinal(now.status) ? "" : ` Use {"action":"read","id":"${id}"} later for a slower answer.`}`);
  if (isFinal(now.status)) {
    markNotified(db, now.key);
    lines.push(statusSentence(now));
  }
  return {
    content: withNote(ctx, lines.join("\n"), out?.text ?? ""),
    title,
    processId: id,
    exitCode: now.exit_code,
    ...(out?.truncation ? { truncation: out.truncation } : {}),
    extra: { status: now.status, ...extra },
  };
}

/** A lone Ctrl-D, as at a terminal: end of input. */
const EOF = "\u0004";

/** Closes the command's stdin (end-of-file) by asking its supervisor to let go of the FIFO. */
async function endInput(ctx: ToolContext, row: ProcessRow): Promise<ToolOutput> {
  const id = row.id!;
  // Only a supervisor proven to be this row's is signalled (SIGUSR2 would end any other process).
  if (row.supervisor_pid === null || !trustedSupervisor(ctx.stateDir, row)) {
    const ended = (await waitForEnd(index(ctx), row.key, 1000)) ?? row;
    throw new KtError("PROCESS_EXITED", `Cannot close the input of ${id}: it has ended. ${statusSentence(ended)}`, { processId: id });
  }
  if (row.stdin_path) requestEndOfInput(row.stdin_path);
  process.kill(row.supervisor_pid, "SIGUSR2");
  const head = `Closed ${id} stdin (end of input): the program now reads end-of-file, and later writes are not read.`;
  return answer(ctx, row, head, `Process write ${id} · end of input`, { bytes: 0, endOfInput: true });
}

// ---- terminals (SPEC §7.4) --------------------------------------------------------

/** The terminal size a start asks for; undefined without tty. */
function terminalSize(input: Input, action: string): Size | undefined {
  if (input.tty !== true) {
    if (input.cols !== undefined || input.rows !== undefined) throw invalidArgs(TOOL, `"cols" and "rows" size a terminal: give "tty": true with them to ${action} the command on one, or leave them out for pipes`);
    return undefined;
  }
  return { cols: input.cols ?? DEFAULT_COLS, rows: input.rows ?? DEFAULT_ROWS };
}

/** Refuses a terminal action on a process that runs on pipes. */
function pipesOnly(row: ProcessRow, why: string, instead: string): KtError {
  return new KtError("INVALID_ARGS", `${row.id} (${shortCommand(row.command, 60)}) runs on pipes, not on a terminal: ${why}. ${instead}`, { processId: row.id! });
}

/** The screen as model text: a header with the size and cursor, the rows down to the last non-blank one, within the page limits. */
function screenText(id: string, screen: import("../process/emulator.ts").Screen): string[] {
  let last = screen.lines.length;
  while (last > 0 && screen.lines[last - 1] === "") last--;
  const rows = screen.lines.slice(0, Math.max(last, 1));
  let shown = rows;
  let bytes = 0;
  for (let i = 0; i < rows.length; i++) {
    bytes += Buffer.byteLength(rows[i]!) + 1;
    if (bytes > READ_LIMITS.maxBytes) {
      shown = rows.slice(0, i);
      break;
    }
  }
  const out = [`Screen of ${id} (${screen.cols}×${screen.rows}, cursor at row ${screen.cursor.row}, column ${screen.cursor.col}):`, ...shown];
  if (shown.length < rows.length) out.push(`(rows ${shown.length + 1}–${rows.length} not shown: the screen is over the ${READ_LIMITS.maxBytes / 1024} KB page limit)`);
  if (last < screen.rows) out.push(last + 1 === screen.rows ? `(row ${screen.rows} is blank)` : `(rows ${last + 1}–${screen.rows} are blank)`);
  return out;
}

/** `read` with `screen`: the terminal as it shows now. The output so far counts as read. */
async function readScreen(ctx: ToolContext, row: ProcessRow): Promise<ToolOutput> {
  const id = row.id!;
  if (!isTerminal(row.log_path)) throw pipesOnly(row, "it has no screen", `Read its output with {"action":"read","id":"${id}"}, or start the command with "tty": true to see its screen.`);
  const db = index(ctx);
  advanceCursor(ctx, row);
  const screen = await (await import("../process/emulator.ts")).screenOf(row.log_path);
  const lines = screenText(id, screen);
  const final = isFinal(row.status);
  if (final) {
    markNotified(db, row.key);
    lines.push(statusSentence(row));
  } else if (inputNote(row) !== "") lines.push(inputNote(row));
  return {
    content: lines.join("\n"),
    title: `Process read ${id} · screen`,
    processId: id,
    exitCode: row.exit_code,
    extra: { status: row.status, screen: { cols: screen.cols, rows: screen.rows, cursor: screen.cursor } },
  };
}

/** `resize`: asks the supervisor to resize the terminal, waits until it has, and reports what the program drew. */
async function resize(input: Input, ctx: ToolContext): Promise<ToolOutput> {
  const db = index(ctx);
  const row = find(ctx, input, "resize");
  const id = row.id!;
  if (!isTerminal(row.log_path)) throw pipesOnly(row, "it has no window to resize", `Start the command with "tty": true (and "cols", "rows") to give it one.`);
  if (input.cols === undefined && input.rows === undefined) throw invalidArgs(TOOL, `action "resize" needs "cols" or "rows" (or both), the new terminal size`);
  if (isFinal(row.status)) {
    markNotified(db, row.key);
    throw new KtError("PROCESS_EXITED", `Cannot resize ${id}: ${statusSentence(row, false)} Its terminal is gone.`, { processId: id, exitCode: row.exit_code });
  }
  const was = currentSize(row.log_path);
  const size = { cols: input.cols ?? was.cols, rows: input.rows ?? was.rows };
  if (row.supervisor_pid === null || !trustedSupervisor(ctx.stateDir, row)) {
    const ended = (await waitForEnd(db, row.key, 1000)) ?? row;
    throw new KtError("PROCESS_EXITED", `Cannot resize ${id}: it has ended. ${statusSentence(ended)}`, { processId: id });
  }
  requestResize(row.log_path, size);
  process.kill(row.supervisor_pid, "SIGWINCH");
  const deadline = performance.now() + 1000;
  let now = currentSize(row.log_path);
  while ((now.cols !== size.cols || now.rows !== size.rows) && performance.now() < deadline) {
    await Bun.sleep(20);
    now = currentSize(row.log_path);
  }
  const head = now.cols === size.cols && now.rows === size.rows ? `Resized ${id}'s terminal from ${was.cols}×${was.rows} to ${size.cols}×${size.rows}.` : `Asked ${id}'s terminal to resize to ${size.cols}×${size.rows}; it is still ${now.cols}×${now.rows} after 1 s.`;
  return answer(ctx, row, head, `Process resize ${id} · ${size.cols}×${size.rows}`, { cols: now.cols, rows: now.rows });
}

// ---- stop --------------------------------------------------------------------------

async function stop(input: Input, ctx: ToolContext): Promise<ToolOutput> {
  const db = index(ctx);
  let row = find(ctx, input, "stop");
  const id = row.id!;
  if (isFinal(row.status)) {
    markNotified(db, row.key);
    // Its supervisor may be gone (lost) while what the command started runs on, marked.
    const left = held(holdsOf(ctx.stateDir, row));
    if (left.length > 0) {
      const swept = await terminate(() => held(holdsOf(ctx.stateDir, row)));
      const escaped = swept.escaped.length === 0 ? "" : ` ${escapedSentence(swept.escaped)}`;
      return {
        content: `${id} (${shortCommand(row.command)}) was not running: ${statusSentence(row, false)} But ${left.length === 1 ? "1 process it started was" : `${left.length} processes it started were`} still running (${left.slice(0, 5).map((p) => `pid ${p.pid} ${p.comm}`).join(", ")}): stopped with ${swept.signal ?? "SIGTERM"}.${escaped}`,
        title: `Process stop ${id} · ${left.length} left over stopped`,
        processId: id,
        exitCode: row.exit_code,
        extra: { status: row.status, leftover: left.map((p) => p.pid), ...(swept.escaped.length > 0 ? { escaped: swept.escaped.map((p) => p.pid) } : {}) },
      };
    }
    return {
      content: `${id} (${shortCommand(row.command)}) is not running: ${statusSentence(row, false)} Nothing to stop.`,
      title: `Process stop ${id} · already ended`,
      processId: id,
      exitCode: row.exit_code,
      extra: { status: row.status },
    };
  }
  const stopped = await stopRow(ctx, row);
  row = stopped.row;
  markNotified(db, row.key);
  let how = endedOn(row).replace(/^it /, "");
  if (stopped.signal === "SIGKILL" && row.signal !== "SIGKILL") how += ", and SIGKILL ended what ignored SIGTERM";
  const escaped = stopped.escaped.length === 0 ? "" : ` ${escapedSentence(stopped.escaped)}`;
  return {
    content: `Stopped ${id} (${shortCommand(row.command)}) · ${how} · ran ${clock((row.ended_at ?? Date.now()) - row.started_at)}. Full log: ${row.log_path}${escaped}`,
    title: `Process stop ${id} · ${row.status}`,
    processId: id,
    exitCode: row.exit_code,
    extra: { status: row.status, signal: stopped.signal ?? row.signal, ...(stopped.escaped.length > 0 ? { escaped: stopped.escaped.map((p) => p.pid) } : {}) },
  };
}

// ---- shared ------------------------------------------------------------------------

function find(ctx: ToolContext, input: Input, action: string): ProcessRow {
  if (input.id === undefined || input.id.trim() === "") throw invalidArgs(TOOL, `action "${action}" needs parameter "id", the process id (e.g. "p3")`);
  const db = index(ctx);
  const id = input.id.trim();
  const row = byId(db, ctx.session, id) ?? (/^\d+$/.test(id) ? byId(db, ctx.session, `p${id}`) : undefined);
  if (row) return reconcile(db, row);
  const live = running(db, ctx.session);
  const active = live.length === 0 ? "none" : live.map((r) => `${r.id} (${shortCommand(r.command, 40)}, running)`).join(", ");
  throw new KtError("UNKNOWN_PROCESS", `No process "${id}". Active: ${active}. Use {"action":"list"} to see all.`);
}

/** The sandbox's line, when the command's output shows it failed at the boundary (SPEC §8.2). */
function withNote(ctx: ToolContext, content: string, output: string): string {
  const note = boundaryNote(ctx.sandbox, output);
  return note ? `${content}\n${note}` : content;
}
