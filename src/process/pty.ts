// The supervisor's side of a terminal (SPEC §7.4): the command runs on a pseudo-terminal
// (Bun's PTY) instead of pipes. Everything the terminal prints is appended to the log as
// raw bytes; what kt calls write to the stdin FIFO is typed into the terminal; a SIGWINCH
// to the supervisor applies the size a `ps resize` asked for (src/process/terminal.ts).
import type { Subprocess } from "bun";
import { closeSync, constants, createReadStream, fstatSync, writeSync } from "node:fs";
import { openStateFile } from "../core/statefs.ts";
import { setPriority } from "node:os";
import { recordSize, takeResizeRequest, writeCheckpoint, type Size } from "./terminal.ts";

/** The niceness of the thread that relays a terminal's output to the log. */
const RELAY_NICE = 10;

/** What a supervisor needs of a command's leader: a Bun subprocess, or one a terminal thread runs. */
export interface Leader {
  pid: number;
  exited: Promise<unknown>;
  readonly exitCode: number | null;
  readonly signalCode: string | number | null | undefined;
}

export interface OnTerminal {
  child: Leader;
  /** Applies the size a `ps resize` asked for, if any (on SIGWINCH). */
  resize(): void;
  /** Resolves once the terminal has given its last byte (every holder of it is gone), or after `ms`. */
  drained(ms: number): Promise<void>;
  close(): void;
}

/**
 * A terminal's output is paced to RELAY_BYTES_PER_S: past it, the relay stops reading for the
 * rest of a PACE_MS window, the terminal's buffer fills and the program waits in its write. On
 * a terminal the kernel's line discipline works on every byte in the writer's name and at its
 * priority, so unpaced firehoses would take the whole machine, kt's own calls with it.
 */
const RELAY_BYTES_PER_S = 512 * 1024;
const PACE_MS = 50;
/** How often the relay records how many newlines the log holds. */
const CHECKPOINT_BYTES = 512 * 1024;
let windowStart = 0;
let windowBytes = 0;

function pace(bytes: number): void {
  const now = performance.now();
  if (now - windowStart >= PACE_MS) {
    windowStart = now;
    windowBytes = 0;
  }
  windowBytes += bytes;
  if (windowBytes >= (RELAY_BYTES_PER_S * PACE_MS) / 1000) {
    Bun.sleepSync(Math.max(1, PACE_MS - (performance.now() - windowStart)));
    windowStart = performance.now();
    windowBytes = 0;
  }
}

export function spawnOnTerminal(opts: { command: string; cwd: string; env: Record<string, string>; log: string; stdin?: string; size: Size; sandbox?: string[]; signals?: boolean }): OnTerminal & { child: Subprocess } {
  const logFd = openStateFile(opts.log, constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND);
  let written = fstatSync(logFd).size;
  // The log's newlines, counted as they pass, so that a kt call reading a firehose's output
  // counts only what came since the last checkpoint (src/process/terminal.ts).
  let newlines = 0;
  let checkpointed = written;
  let ended: () => void = () => {};
  const eof = new Promise<void>((resolve) => (ended = resolve));
  const child = Bun.spawn([...(opts.sandbox ?? []), "bash", "-c", opts.command], {
    cwd: opts.cwd,
    env: { ...opts.env, TERM: "xterm-256color" },
    terminal: {
      cols: opts.size.cols,
      rows: opts.size.rows,
      name: "xterm-256color",
      data(_term, data) {
        pace(data.length);
        let at = 0;
        while (at < data.length) {
          try {
            at += writeSync(logFd, data, at, data.length - at);
          } catch {
            // A full disk: what cannot be logged is lost, the command carries on.
            break;
          }
        }
        for (let i = data.indexOf(10); i !== -1; i = data.indexOf(10, i + 1)) newlines++;
        written += data.length;
        if (written - checkpointed >= CHECKPOINT_BYTES) {
          checkpointed = written;
          try {
            writeCheckpoint(opts.log, written, newlines);
          } catch {
            // The state directory is going away; kt then counts the lines itself.
          }
        }
      },
      exit() {
        ended();
      },
    },
    // setsid: the command leads its own session and process group (the terminal's).
    detached: true,
  });
  // The terminal's bytes pass through this process (they go straight to the log on pipes), so
  // a firehose keeps it busy: at a lower priority than kt's own calls, which then stay quick
  // however many terminals print. The command was started before, at the caller's priority.
  try {
    setPriority(0, RELAY_NICE);
  } catch {
    // Not allowed here: the relay runs at the normal priority.
  }
  const terminal = child.terminal!;
  // What kt calls write to the FIFO, typed into the terminal. The supervisor's holder of the
  // FIFO (opened read-write) means this reader never sees end-of-file.
  let input: ReturnType<typeof createReadStream> | undefined;
  if (opts.stdin) {
    input = createReadStream("", { fd: openStateFile(opts.stdin, constants.O_RDONLY, "fifo") });
    input.on("data", (chunk) => {
      if (!terminal.closed) terminal.write(chunk as Buffer);
    });
    input.on("error", () => {});
  }
  const onResize = () => {
    const size = takeResizeRequest(opts.log);
    if (!size || terminal.closed) return;
    terminal.resize(size.cols, size.rows);
    try {
      recordSize(opts.log, written, size);
    } catch {
      // The state directory is going away.
    }
  };
  // A terminal thread of a host gets no signals: the host passes SIGWINCH on (src/process/pty-thread.ts).
  if (opts.signals !== false) process.on("SIGWINCH", onResize);
  return {
    child,
    resize: onResize,
    async drained(ms) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([eof, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
      clearTimeout(timer);
    },
    close() {
      if (opts.signals !== false) process.off("SIGWINCH", onResize);
      input?.destroy();
      try {
        terminal.close();
      } catch {
        // Closed already.
      }
      closeSync(logFd);
    },
  };
}
