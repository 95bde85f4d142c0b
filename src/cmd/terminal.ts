// What a person at a terminal sees (SPEC §8.6): colour for diffs and traces, progress for a
// long search, bash's output as it comes — only when the stream is a terminal and NO_COLOR
// is unset, and never in what a model or a script reads (a pipe gets the text unchanged).
import { fstatSync, statSync, writeSync, type Stats } from "node:fs";

/**
 * The stream is a terminal. node:tty costs a kt call more than the rest of its start-up, so
 * it is asked only about a character device that is not /dev/null (where scripts, cron and
 * benchmarks send output: a device, never a terminal, told by its device number).
 */
export function isTerminal(fd: number): boolean {
  let st: Stats;
  try {
    st = fstatSync(fd);
  } catch {
    return false;
  }
  if (!st.isCharacterDevice() || isDevNull(st)) return false;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require("node:tty") as typeof import("node:tty")).isatty(fd);
}

function isDevNull(st: Stats): boolean {
  try {
    const null_ = statSync("/dev/null");
    return null_.isCharacterDevice() && null_.rdev === st.rdev;
  } catch {
    return false;
  }
}

/** Colour on this stream: a terminal, and NO_COLOR unset or empty (no-color.org). */
export function colourOn(fd: number, env = process.env): boolean {
  return !env.NO_COLOR && isTerminal(fd);
}

const RESET = "\x1b[0m";
const BOLD = "\x1b[1m";
const RED = "\x1b[31m";
const GREEN = "\x1b[32m";
const CYAN = "\x1b[36m";
const DIM = "\x1b[2m";

const paint = (code: string, line: string) => (line === "" ? line : `${code}${line}${RESET}`);

/** A unified diff's lines coloured as git colours them: headers bold, hunks cyan, - red, + green. */
export function paintDiff(diff: string): string {
  return diff
    .split("\n")
    .map((line) => {
      if (line.startsWith("--- ") || line.startsWith("+++ ") || line.startsWith("diff --git ") || line.startsWith("rename ")) return paint(BOLD, line);
      if (line.startsWith("@@")) return paint(CYAN, line);
      if (line.startsWith("-")) return paint(RED, line);
      if (line.startsWith("+")) return paint(GREEN, line);
      return line;
    })
    .join("\n");
}

/**
 * A dry run's answer with its diff coloured: the diff is what follows the first blank line
 * (write, edit, patch and replace all print it so).
 */
export function paintDryRun(content: string): string {
  const at = content.indexOf("\n\n");
  return at === -1 ? content : content.slice(0, at + 2) + paintDiff(content.slice(at + 2));
}

/** An edit or patch trace: its heading bold, a step taken green, one refused red, candidates by their mark. */
export function paintTrace(trace: string): string {
  return trace
    .split("\n")
    .map((line) => {
      if (/^(edit|patch) trace for /.test(line)) return paint(BOLD, line);
      const step = /^(\s+\d+\. [^:]+: )(taken|no-match|ambiguous|refused|skipped)( .*)?$/.exec(line);
      if (step) {
        const colour = step[2] === "taken" ? GREEN : step[2] === "skipped" || step[2] === "no-match" ? DIM : RED;
        return `${step[1]}${colour}${step[2]}${RESET}${step[3] ?? ""}`;
      }
      if (/^\s+\+ /.test(line)) return paint(GREEN, line);
      if (/^\s+- /.test(line)) return paint(RED, line);
      return line;
    })
    .join("\n");
}

/**
 * "kt grep: searching… 3 s" on stderr, from 1 s on, rewritten in place each second and
 * erased when the search ends. Written by a small thread of its own: the built-in engine's
 * walk may hold the main thread for seconds, and a timer there would never fire. Returns
 * the function that stops it.
 */
export function progress(what: string, fd = 2): () => void {
  const started = Date.now();
  const flag = new Int32Array(new SharedArrayBuffer(4));
  let worker: Worker | undefined;
  try {
    worker = new Worker(progressUrl());
    worker.postMessage({ fd, what, started, flag });
    worker.unref();
  } catch {
    return () => {};
  }
  return () => {
    Atomics.store(flag, 0, 1);
    worker?.terminate();
    if (Date.now() - started >= 1000) writeSafe(fd, "\r\x1b[2K");
  };
}

let url: string | undefined;

function progressUrl(): string {
  // Its source travels as a Blob, so that the compiled binary needs no file of its own for it.
  const code = `const { writeSync } = require("node:fs");
self.onmessage = ({ data: { fd, what, started, flag } }) => {
  const tick = () => {
    if (Atomics.load(flag, 0) === 1) return;
    try { writeSync(fd, "\\r\\x1b[2K" + what + "\u2026 " + Math.round((Date.now() - started) / 1000) + " s"); } catch {}
    setTimeout(tick, 1000 - ((Date.now() - started) % 1000));
  };
  setTimeout(tick, Math.max(0, 1000 - (Date.now() - started)));
};`;
  url ??= URL.createObjectURL(new Blob([code], { type: "application/javascript" }));
  return url;
}

function writeSafe(fd: number, text: string | Uint8Array): void {
  try {
    if (typeof text === "string") writeSync(fd, text);
    else writeSync(fd, text);
  } catch {
    // The terminal went away: nobody is watching.
  }
}

/** Writes bytes to stderr as they come (kt bash on a terminal). */
export function streamTo(fd = 2): (bytes: Uint8Array) => void {
  return (bytes) => writeSafe(fd, bytes);
}

/**
 * Help as citty renders it, fitted: citty pads every line of a section to its longest (263
 * columns for kt's flags); the padding goes, and with a `width` (a terminal's) long lines
 * are wrapped, an option's description under its own column.
 */
export function fitHelp(text: string, width?: number): string {
  const out: string[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trimEnd();
    if (width === undefined || width < 40 || visible(line) <= width) {
      out.push(line);
      continue;
    }
    const row = /^(\s*\S+(?: \S+)*?\s{2,})(\S.*)$/.exec(line);
    const indent = row && visible(row[1]!) <= width / 2 ? row[1]!.length : line.length - line.trimStart().length;
    const head = row && visible(row[1]!) <= width / 2 ? row[1]! : line.slice(0, indent);
    const words = (row && visible(row[1]!) <= width / 2 ? row[2]! : line.trimStart()).split(" ");
    let current = head;
    let fresh = true;
    for (const word of words) {
      if (!fresh && visible(current) + 1 + visible(word) > width) {
        out.push(current);
        current = " ".repeat(indent) + word;
        continue;
      }
      current = fresh ? current + word : `${current} ${word}`;
      fresh = false;
    }
    out.push(current);
  }
  return out.join("\n");
}

/** Columns a line takes on a terminal: colour codes take none. */
function visible(text: string): number {
  return Array.from(text.replace(/\x1b\[[0-9;]*m/g, "")).length;
}

/** The terminal's width, when `fd` is one. */
export function terminalWidth(fd: number): number | undefined {
  if (!isTerminal(fd)) return undefined;
  const stream = fd === 1 ? process.stdout : process.stderr;
  return stream.columns || undefined;
}
