// Terminals (SPEC §7.4): a command started with `tty` runs on a pseudo-terminal owned by its
// supervisor, which appends the raw bytes to the log (escape sequences and all). What the
// model sees is what a terminal would show: the bytes are run through a headless terminal
// emulator (@xterm/headless) — the new output as lines with carriage returns, erasures and
// cursor moves applied and colours gone, or the screen itself (rows and cursor).
//
// Beside the log, `<name>.term` says the process has a terminal and records its sizes: one
// line `<log byte offset> <cols> <rows>` for the start and one for each resize, appended by
// the supervisor when it applies it, so that a replay of the log resizes where the program
// was resized. A resize is asked for by writing `<name>.resize` and sending SIGWINCH to the
// supervisor. The emulator itself is in src/process/emulator.ts, loaded only for terminals.
import type { Limits } from "../core/truncate.ts";
import { countNewlines, view, type View } from "./log.ts";
import { existsSync, renameSync, unlinkSync } from "node:fs";
import { appendStateFile, readStateFile, writeStateFile } from "../core/statefs.ts";

export const DEFAULT_COLS = 120;
export const DEFAULT_ROWS = 40;
export const MIN_COLS = 20;
export const MAX_COLS = 500;
export const MIN_ROWS = 5;
export const MAX_ROWS = 200;

export interface Size {
  cols: number;
  rows: number;
}

export interface SizeAt extends Size {
  /** Log byte offset from which this size holds. */
  at: number;
}

/** `<dir>/p3.log` → `<dir>/p3.term`. */
export function termPath(logPath: string): string {
  return logPath.replace(/\.log$/, "") + ".term";
}

function resizePath(logPath: string): string {
  return logPath.replace(/\.log$/, "") + ".resize";
}

/** Whether the process of this log runs on a terminal. */
export function isTerminal(logPath: string): boolean {
  return existsSync(termPath(logPath));
}

/** Written by the kt call that starts the command, before its supervisor runs. */
export function createTerm(logPath: string, size: Size): void {
  writeStateFile(termPath(logPath), `0 ${size.cols} ${size.rows}\n`);
}

export function sizes(logPath: string): SizeAt[] {
  let text: string;
  try {
    text = readStateFile(termPath(logPath)).toString("utf8");
  } catch {
    return [];
  }
  const out: SizeAt[] = [];
  for (const line of text.split("\n")) {
    const [at, cols, rows] = line.split(" ").map(Number);
    if (Number.isInteger(at) && Number.isInteger(cols) && Number.isInteger(rows) && cols! > 0 && rows! > 0) out.push({ at: at!, cols: cols!, rows: rows! });
  }
  return out;
}

/** The terminal's size now (the last one its supervisor applied). */
export function currentSize(logPath: string): Size {
  const all = sizes(logPath);
  const last = all[all.length - 1];
  return last ? { cols: last.cols, rows: last.rows } : { cols: DEFAULT_COLS, rows: DEFAULT_ROWS };
}

/** kt's side of a resize: the wanted size, for the supervisor to pick up on SIGWINCH. */
export function requestResize(logPath: string, size: Size): void {
  const path = resizePath(logPath);
  writeStateFile(`${path}.tmp`, `${size.cols} ${size.rows}\n`);
  renameSync(`${path}.tmp`, path);
}

/** The supervisor's side: the size asked for, if any (the request is consumed). */
export function takeResizeRequest(logPath: string): Size | undefined {
  const path = resizePath(logPath);
  let text: string;
  try {
    text = readStateFile(path).toString("utf8");
    unlinkSync(path);
  } catch {
    return undefined;
  }
  const [cols, rows] = text.trim().split(" ").map(Number);
  if (!Number.isInteger(cols) || !Number.isInteger(rows)) return undefined;
  return { cols: clamp(cols!, MIN_COLS, MAX_COLS), rows: clamp(rows!, MIN_ROWS, MAX_ROWS) };
}

export function recordSize(logPath: string, at: number, size: Size): void {
  appendStateFile(termPath(logPath), `${at} ${size.cols} ${size.rows}\n`);
}

function checkpointPath(logPath: string): string {
  return logPath.replace(/\.log$/, "") + ".lines";
}

/** The relay's record: the first `bytes` of the log hold `newlines` newlines. */
export function writeCheckpoint(logPath: string, bytes: number, newlines: number): void {
  const path = checkpointPath(logPath);
  writeStateFile(`${path}.tmp`, `${bytes} ${newlines}\n`);
  renameSync(`${path}.tmp`, path);
}

/**
 * Newlines in [from, to) of a terminal's log, given `before` newlines in [0, from): counted
 * from the relay's checkpoint when it lies in the region, so a read of a firehose's output
 * costs what came since the checkpoint, not the whole region.
 */
export function newlinesBetween(logPath: string, from: number, to: number, before: number): number {
  let checkpoint: { bytes: number; newlines: number } | undefined;
  try {
    const [bytes, newlines] = readStateFile(checkpointPath(logPath)).toString("utf8").trim().split(" ").map(Number);
    if (Number.isInteger(bytes) && Number.isInteger(newlines)) checkpoint = { bytes: bytes!, newlines: newlines! };
  } catch {
    // No checkpoint yet (under 512 KB of output): count.
  }
  if (!checkpoint || checkpoint.bytes <= from || checkpoint.bytes > to || checkpoint.newlines < before) return countNewlines(logPath, from, to);
  return checkpoint.newlines - before + countNewlines(logPath, checkpoint.bytes, to);
}

export function removeTermFiles(logPath: string): void {
  for (const path of [termPath(logPath), resizePath(logPath), checkpointPath(logPath)]) {
    try {
      unlinkSync(path);
    } catch {
      // Already gone.
    }
  }
}

export function sizeAt(path: string, at: number): Size {
  let size: Size = { cols: DEFAULT_COLS, rows: DEFAULT_ROWS };
  for (const s of sizes(path)) if (s.at <= at) size = { cols: s.cols, rows: s.rows };
  return size;
}

function clamp(n: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, n));
}


/** A region of a log as model text: rendered through the emulator for a terminal, cleaned as today for pipes. */
export async function logView(path: string, from: number, to: number, limits: Limits, spill: (full: string | undefined) => string | undefined, known?: { newlines: number }): Promise<View> {
  if (!isTerminal(path)) return view(path, from, to, limits, spill);
  return (await import("./emulator.ts")).terminalView(path, from, to, limits, spill, known);
}
