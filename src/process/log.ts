// Reading a process log. The log is the only record of a command's output (the command
// writes straight into it), and it can be huge, so every view reads a bounded head and
// tail and counts the lines in between in fixed-size chunks: memory never follows the log.
import { closeSync, constants, readSync, statSync } from "node:fs";
import { openStateFile } from "../core/statefs.ts";
import { headTailBudgets, joinCut, takeLines, type Limits } from "../core/truncate.ts";
import type { Truncation } from "../core/result.ts";

/** Regions up to this size are read whole and cut by the line/byte limits exactly. */
const WHOLE_BYTES = 2 * 1024 * 1024;
const CHUNK = 1024 * 1024;

export function logSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

export function readBytes(path: string, from: number, to: number): Buffer {
  const length = Math.max(0, to - from);
  const buf = Buffer.allocUnsafe(length);
  let fd: number;
  try {
    fd = openStateFile(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return Buffer.alloc(0);
  }
  try {
    let got = 0;
    while (got < length) {
      const n = readSync(fd, buf, got, length - got, from + got);
      if (n === 0) break;
      got += n;
    }
    return got === length ? buf : buf.subarray(0, got);
  } finally {
    closeSync(fd);
  }
}

/** Calls `visit` with each chunk of [from, to), in order, one chunk in memory at a time. */
function chunks(path: string, from: number, to: number, visit: (chunk: Uint8Array, at: number) => boolean | void): void {
  let fd: number;
  try {
    fd = openStateFile(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return;
  }
  const buf = Buffer.allocUnsafe(Math.min(CHUNK, Math.max(1, to - from)));
  try {
    for (let at = from; at < to; ) {
      const n = readSync(fd, buf, 0, Math.min(buf.length, to - at), at);
      if (n === 0) return;
      if (visit(buf.subarray(0, n), at) === false) return;
      at += n;
    }
  } finally {
    closeSync(fd);
  }
}

export function countNewlines(path: string, from: number, to: number): number {
  let count = 0;
  chunks(path, from, to, (chunk) => {
    for (let i = 0; i < chunk.length; i++) if (chunk[i] === 10) count++;
  });
  return count;
}

/** The byte offset where 1-based line `line` starts, counting from a known (byte, line) point; undefined past the end. */
export function lineStart(path: string, line: number, size: number, known: { byte: number; line: number }): number | undefined {
  // known.line is the number of newlines before known.byte.
  let from = { byte: 0, newlines: 0 };
  if (known.line < line && known.byte <= size) from = { byte: known.byte, newlines: known.line };
  if (line - 1 === from.newlines) return from.byte < size || line === 1 ? from.byte : undefined;
  let newlines = from.newlines;
  let found: number | undefined;
  chunks(path, from.byte, size, (chunk, at) => {
    for (let i = 0; i < chunk.length; i++) {
      if (chunk[i] === 10 && ++newlines === line - 1) {
        found = at + i + 1;
        return false;
      }
    }
  });
  return found !== undefined && found < size ? found : undefined;
}

/** Model-facing text from raw output: CRLF → LF, a carriage-return redraw keeps its last frame, escape sequences removed. */
export function clean(text: string): string {
  let out = text.replace(ANSI, "");
  if (out.includes("\r")) {
    out = out.replace(/\r+\n/g, "\n");
    if (out.includes("\r")) out = out.split("\n").map(lastFrame).join("\n");
  }
  return out.replace(CONTROL, "");
}

// CSI (colours, cursor moves), OSC (titles, links; BEL or ST terminated), and two-byte escapes.
// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[PX^_][^\x1b]*(?:\x1b\\)?|\x1b[@-Z\\-_]|\x9b[0-?]*[ -/]*[@-~]/g;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g;

function lastFrame(line: string): string {
  if (!line.includes("\r")) return line;
  const frames = line.split("\r");
  for (let i = frames.length - 1; i >= 0; i--) if (frames[i] !== "") return frames[i]!;
  return "";
}

export interface View {
  /** The text to show: cleaned, without a final newline, middle-out cut when over the limits. */
  text: string;
  /** Lines in the region (a final line without newline counts). */
  lines: number;
  /** Newlines in the region. */
  newlines: number;
  truncation?: Truncation;
}

/**
 * The region [from, to) of a log as model text within `limits`, head and tail kept.
 * `spill(full)` names the file holding the whole region when a cut happens; `full` is the
 * cleaned text for regions small enough to hold in memory, undefined for larger ones.
 */
export function view(path: string, from: number, to: number, limits: Limits, spill: (full: string | undefined) => string | undefined): View {
  const bytes = Math.max(0, to - from);
  if (bytes === 0) return { text: "", lines: 0, newlines: 0 };
  if (bytes <= WHOLE_BYTES) return wholeView(readBytes(path, from, to), limits, spill);
  return streamedView(path, from, to, limits, spill);
}

function wholeView(raw: Buffer, limits: Limits, spill: (full: string | undefined) => string | undefined): View {
  let newlines = 0;
  for (let i = 0; i < raw.length; i++) if (raw[i] === 10) newlines++;
  const endsWithNewline = raw.length > 0 && raw[raw.length - 1] === 10;
  const lines = newlines + (raw.length > 0 && !endsWithNewline ? 1 : 0);
  let text = clean(new TextDecoder().decode(raw));
  if (text.endsWith("\n")) text = text.slice(0, -1);
  return { ...fitLines(text.split("\n"), text, limits, spill), lines, newlines };
}

/** Lines of text (`text` is them joined) within `limits`: whole, or head and tail around a cut marker. */
export function fitLines(shown: string[], text: string, limits: Limits, spill: (full: string | undefined) => string | undefined): Pick<View, "text" | "truncation"> {
  const textBytes = Buffer.byteLength(text);
  if (shown.length <= limits.maxLines && textBytes <= limits.maxBytes) return { text };
  const { headBudget, tailBudget } = headTailBudgets(limits);
  const head = takeLines(shown, limits.headLines, headBudget, false);
  const tail = takeLines(shown.slice(head.count), limits.tailLines, tailBudget, true);
  return joinCut(head, tail, { lines: shown.length, bytes: textBytes }, spill(text));
}

function streamedView(path: string, from: number, to: number, limits: Limits, spill: (full: string | undefined) => string | undefined): View {
  const { headBudget, tailBudget } = headTailBudgets(limits);
  const headRaw = readBytes(path, from, from + headBudget + 4096);
  const tailRaw = readBytes(path, to - tailBudget - 4096, to);
  const newlines = countNewlines(path, from, to);
  const endsWithNewline = tailRaw.length > 0 && tailRaw[tailRaw.length - 1] === 10;
  const lines = newlines + (endsWithNewline ? 0 : 1);
  // The head chunk's last line and the tail chunk's first line are cut by the chunk edges.
  const headLines = clean(new TextDecoder().decode(headRaw, { stream: true })).split("\n");
  const headCut = headLines.pop() ?? "";
  let tailStart = 0;
  while (tailStart < 4 && tailStart < tailRaw.length && (tailRaw[tailStart]! & 0xc0) === 0x80) tailStart++;
  let tailText = clean(new TextDecoder().decode(tailRaw.subarray(tailStart)));
  if (tailText.endsWith("\n")) tailText = tailText.slice(0, -1);
  const tailLines = tailText.split("\n");
  const tailCut = tailLines.shift() ?? "";
  let head = takeLines(headLines, limits.headLines, headBudget, false);
  if (head.count === 0 && headLines.length === 0) head = takeLines([headCut], 1, headBudget, false, true);
  let tail = takeLines(tailLines, limits.tailLines, tailBudget, true);
  if (tail.count === 0 && tailLines.length === 0) tail = takeLines([tailCut], 1, tailBudget, true, true);
  return { ...joinCut(head, tail, { lines, bytes: to - from }, spill(undefined)), lines, newlines };
}

/** Lines in the whole log, counting on from a known (byte, newlines-before-it) point when it still holds. */
export function totalLines(path: string, known: { byte: number; line: number }): number {
  const size = logSize(path);
  const memo = known.byte <= size ? known : { byte: 0, line: 0 };
  const newlines = memo.line + countNewlines(path, memo.byte, size);
  const last = size > 0 ? readBytes(path, size - 1, size)[0] : 10;
  return newlines + (last === 10 ? 0 : 1);
}

/**
 * A forward page from byte `from` (a line start): whole lines up to `limits.maxLines` and
 * `limits.maxBytes`; a single line longer than the page is cut and marked.
 */
export function pageFrom(path: string, from: number, size: number, limits: Pick<Limits, "maxLines" | "maxBytes">): { text: string; count: number } {
  const raw = readBytes(path, from, Math.min(size, from + limits.maxBytes + 1));
  let end = raw.length;
  if (from + raw.length < size || raw.length > limits.maxBytes) {
    const nl = raw.lastIndexOf(10, limits.maxBytes - 1);
    end = nl >= 0 ? nl + 1 : Math.min(raw.length, limits.maxBytes);
  }
  let text = clean(new TextDecoder().decode(raw.subarray(0, end), { stream: end < raw.length }));
  const cutLine = end < raw.length && raw[end - 1] !== 10;
  if (text.endsWith("\n")) text = text.slice(0, -1);
  let lines = text.split("\n");
  if (lines.length > limits.maxLines) lines = lines.slice(0, limits.maxLines);
  else if (cutLine) lines[lines.length - 1] += "… [line truncated]";
  return { text: lines.join("\n"), count: text === "" && end === 0 ? 0 : lines.length };
}
