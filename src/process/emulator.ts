// The headless terminal emulator (@xterm/headless) that turns a terminal's log into what
// a model sees (SPEC §7.4): rendered lines of new output, log pages, or the screen. Loaded
// only when a process has a terminal, so no other kt call pays for it; the emulator itself
// is loaded only for bytes that need it (see plainLines).
import type xtermType from "@xterm/headless";
import { headTailBudgets, joinCut, takeLines, type Limits } from "../core/truncate.ts";
import { fitLines, logSize, readBytes, type View } from "./log.ts";
import { DEFAULT_COLS, DEFAULT_ROWS, sizeAt, sizes, type Size } from "./terminal.ts";

type XTerm = InstanceType<typeof xtermType.Terminal>;

let loaded: typeof xtermType | undefined;

async function emulator(size: Size, scrollback: number): Promise<XTerm> {
  loaded ??= (await import("@xterm/headless")).default;
  return new loaded.Terminal({ cols: size.cols, rows: size.rows, scrollback, allowProposedApi: true, convertEol: false });
}

// Lines ended by CR LF (a terminal's newline), printable text and colour changes only.
// eslint-disable-next-line no-control-regex
const PLAIN = /^(?:[^\x00-\x1f\x7f]|\r\n|\x1b\[[0-9;:]*m)*$/;
// eslint-disable-next-line no-control-regex
const SGR = /\x1b\[[0-9;:]*m/g;

/**
 * What the emulator would show for bytes that only print lines (no cursor moves, erasures,
 * lone carriage returns, tabs or other controls, colour aside), without starting it: the
 * common case of a program that prints a log, and the whole of a firehose. Undefined when
 * the bytes need the emulator.
 */
export function plainLines(raw: Uint8Array): string[] | undefined {
  const text = new TextDecoder().decode(raw);
  if (!PLAIN.test(text)) return undefined;
  const lines = text.replace(SGR, "").split("\r\n").map((l) => l.replace(/\s+$/, ""));
  while (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  let first = 0;
  while (first < lines.length && lines[first] === "") first++;
  return lines.slice(first);
}

function feed(term: XTerm, data: Uint8Array): Promise<void> {
  return new Promise((resolve) => term.write(data, resolve));
}

/**
 * The lines a terminal of `size` shows after `raw`, from the first line written to the last
 * non-blank one; a line the terminal wrapped is given whole, trailing spaces dropped.
 */
export async function renderLines(raw: Uint8Array, size: Size): Promise<string[]> {
  if (raw.length === 0) return [];
  return plainLines(raw) ?? emulatedLines(raw, size);
}

/** renderLines through the emulator, whatever the bytes. */
export async function emulatedLines(raw: Uint8Array, size: Size): Promise<string[]> {
  if (raw.length === 0) return [];
  // Enough scrollback for every row the bytes can make: one per newline, one per full width, one screen.
  let newlines = 0;
  for (let i = 0; i < raw.length; i++) if (raw[i] === 10) newlines++;
  const term = await emulator(size, Math.min(200_000, newlines + Math.ceil(raw.length / size.cols) + size.rows + 10));
  try {
    await feed(term, raw);
    const buffer = term.buffer.active;
    const lines: string[] = [];
    for (let i = 0; i < buffer.length; i++) {
      const line = buffer.getLine(i);
      if (!line) continue;
      // Untrimmed: the spaces where the terminal wrapped a line belong to the line.
      const text = line.translateToString(false);
      if (line.isWrapped && lines.length > 0) lines[lines.length - 1] += text;
      else lines.push(text);
    }
    while (lines.length > 0 && lines[lines.length - 1]!.trim() === "") lines.pop();
    // Rows above the first thing drawn (a program that positions its cursor) are no output.
    let first = 0;
    while (first < lines.length && lines[first]!.trim() === "") first++;
    return lines.slice(first).map((l) => l.replace(/\s+$/, "").replace(CONTROL, ""));
  } finally {
    term.dispose();
  }
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f]/g;

/** Raw regions up to this size (and this many newlines) are rendered whole. */
const WHOLE_BYTES = 256 * 1024;
const WHOLE_NEWLINES = 1200;
/** A cut region's head and tail are rendered from at most this much of each end. */
const END_BYTES = 64 * 1024;

/**
 * The region [from, to) of a terminal's log as model text within `limits` (as log.ts's view
 * does for pipes): rendered through the emulator, head and tail kept when it is too long.
 * Line counts are the log's (its newlines), which offsets page by.
 */
export async function terminalView(path: string, from: number, to: number, limits: Limits, spill: (full: string | undefined) => string | undefined, known?: { newlines: number }): Promise<View> {
  const bytes = Math.max(0, to - from);
  if (bytes === 0) return { text: "", lines: 0, newlines: 0 };
  const size = sizeAt(path, from);
  const { newlines, endsWithNewline } = known ? { newlines: known.newlines, endsWithNewline: readBytes(path, to - 1, to)[0] === 10 } : countRaw(path, from, to);
  const lines = newlines + (endsWithNewline ? 0 : 1);
  if (bytes <= WHOLE_BYTES && newlines <= WHOLE_NEWLINES) {
    const shown = await renderLines(readBytes(path, from, to), size);
    return { ...fitLines(shown, shown.join("\n"), limits, spill), lines, newlines };
  }
  const { headBudget, tailBudget } = headTailBudgets(limits);
  const headRaw = upToNewline(readBytes(path, from, from + Math.min(END_BYTES, bytes)), limits.headLines + 1, false);
  const tailRaw = upToNewline(readBytes(path, Math.max(from, to - END_BYTES), to), limits.tailLines + 1, true);
  const headLines = await renderLines(headRaw, size);
  const tailLines = await renderLines(tailRaw, sizeAt(path, to));
  const head = takeLines(headLines, limits.headLines, headBudget, false);
  const tail = takeLines(tailLines, limits.tailLines, tailBudget, true);
  return { ...joinCut(head, tail, { lines, bytes }, spill(undefined)), lines, newlines };
}

/** The first (or last) `count` lines of `raw`, cut at a newline when there are more. */
function upToNewline(raw: Buffer, count: number, fromEnd: boolean): Buffer {
  let seen = 0;
  if (!fromEnd) {
    for (let i = 0; i < raw.length; i++) if (raw[i] === 10 && ++seen === count) return raw.subarray(0, i + 1);
    return raw;
  }
  for (let i = raw.length - 2; i >= 0; i--) if (raw[i] === 10 && ++seen === count) return raw.subarray(i + 1);
  return raw;
}

function countRaw(path: string, from: number, to: number): { newlines: number; endsWithNewline: boolean } {
  let newlines = 0;
  const step = 1024 * 1024;
  let last = 0;
  for (let at = from; at < to; at += step) {
    const chunk = readBytes(path, at, Math.min(to, at + step));
    if (chunk.length === 0) break;
    for (let i = 0; i < chunk.length; i++) if (chunk[i] === 10) newlines++;
    last = chunk[chunk.length - 1]!;
  }
  return { newlines, endsWithNewline: last === 10 };
}

/**
 * A forward page of the log from byte `from` (a line start), as log.ts's pageFrom but
 * rendered; `count` is the log lines the page covers.
 */
export async function terminalPage(path: string, from: number, size: number, limits: Pick<Limits, "maxLines" | "maxBytes">): Promise<{ text: string; count: number }> {
  const raw = upToNewline(readBytes(path, from, Math.min(size, from + END_BYTES)), limits.maxLines, false);
  let count = 0;
  for (let i = 0; i < raw.length; i++) if (raw[i] === 10) count++;
  if (raw.length > 0 && raw[raw.length - 1] !== 10) count++;
  const lines = await renderLines(raw, sizeAt(path, from));
  const kept = takeLines(lines, limits.maxLines, limits.maxBytes, false);
  return { text: kept.text, count };
}

// ---- the screen --------------------------------------------------------------------

/**
 * How much of the log's end a screen is rebuilt from: a screen is drawn by its recent bytes
 * (the emulator takes 10–50 MB/s, so this is tens of milliseconds at most).
 */
const REPLAY_BYTES = 256 * 1024;

/** Modes a program sets once, long before the bytes replayed: [set, reset], the one seen last holds. */
const MODES: [string, string][] = [
  ["\x1b[?1049h", "\x1b[?1049l"],
  ["\x1b[?1047h", "\x1b[?1047l"],
  ["\x1b[?47h", "\x1b[?47l"],
  ["\x1b[?1h", "\x1b[?1l"],
];

/** The mode-setting sequences in force at byte `end` of the log, found by searching back from it. */
function modesBefore(path: string, end: number): string {
  const found = new Map<number, { at: number; seq: string }>();
  const step = 1024 * 1024;
  for (let to = end; to > 0 && found.size < MODES.length; to -= step) {
    const from = Math.max(0, to - step);
    // Overlap a little so a sequence cut by the chunk edge is still found.
    const chunk = readBytes(path, from, Math.min(end, to + 8));
    MODES.forEach(([set, reset], i) => {
      if (found.has(i)) return;
      const s = chunk.lastIndexOf(set);
      const r = chunk.lastIndexOf(reset);
      if (s >= 0 || r >= 0) found.set(i, s > r ? { at: from + s, seq: set } : { at: from + r, seq: reset });
    });
  }
  return [...found.values()].sort((a, b) => a.at - b.at).map((f) => f.seq).join("");
}

export interface Screen extends Size {
  /** Each row as the terminal shows it, trailing spaces dropped. */
  lines: string[];
  /** 1-based. */
  cursor: { row: number; col: number };
  /** The program asked for application cursor keys (arrows send ESC O A, not ESC [ A). */
  applicationCursor: boolean;
  /** The program is on the alternate screen (a full-screen program). */
  alternate: boolean;
}

/** The terminal's screen now, rebuilt by replaying the log (its last REPLAY_BYTES) through the emulator at the sizes it had. */
export async function screenOf(path: string): Promise<Screen> {
  const end = logSize(path);
  const start = Math.max(0, end - REPLAY_BYTES);
  const all = sizes(path);
  const first = sizeAt(path, start);
  const term = await emulator(first, 0);
  try {
    if (start > 0) {
      const modes = modesBefore(path, start);
      if (modes !== "") await feed(term, Buffer.from(modes));
    }
    let at = start;
    for (const s of all) {
      if (s.at <= start) continue;
      if (s.at > at) await feed(term, readBytes(path, at, Math.min(s.at, end)));
      at = Math.max(at, Math.min(s.at, end));
      term.resize(s.cols, s.rows);
    }
    if (at < end) await feed(term, readBytes(path, at, end));
    const buffer = term.buffer.active;
    const lines: string[] = [];
    for (let r = 0; r < term.rows; r++) lines.push((buffer.getLine(buffer.viewportY + r)?.translateToString(true) ?? "").replace(/\s+$/, "").replace(CONTROL, ""));
    return {
      cols: term.cols,
      rows: term.rows,
      lines,
      // At the right margin the cursor waits to wrap (cursorX = cols): it is on the last column.
      cursor: { row: buffer.cursorY + 1, col: Math.min(buffer.cursorX + 1, term.cols) },
      applicationCursor: term.modes.applicationCursorKeysMode,
      alternate: buffer.type === "alternate",
    };
  } finally {
    term.dispose();
  }
}
