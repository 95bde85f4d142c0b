// The supervisor's side of a terminal (SPEC §7.4): the command runs on a pseudo-terminal
// (Bun's PTY) instead of pipes. Everything the terminal prints is appended to the log as
// raw bytes; what kt calls write to the stdin FIFO is typed into the terminal; a SIGWINCH
// to the supervisor applies the size a `ps resize` asked for (src/process/terminal.ts).
import type { Subprocess } from "bun";
import { closeSync, constants, createReadStream, fstatSync, openSync, writeSync } from "node:fs";
import { setPriority } from "node:os";
import { recordSize, takeResizeRequest, type Size } from "./terminal.ts";

/** The niceness of the thread that relays a terminal's output to the log. */
const RELAY_NICE = 10;

export interface OnTerminal {
  child: Subprocess;
  /** Resolves once the terminal has given its last byte (every holder of it is gone), or after `ms`. */
  drained(ms: number): Promise<void>;
  close(): void;
}

export function spawnOnTerminal(opts: { command: string; cwd: string; env: Record<string, string>; log: string; stdin?: string; size: Size }): OnTerminal {
  const logFd = openSync(opts.log, constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND, 0o600);
  let written = fstatSync(logFd).size;
  let ended: () => void = () => {};
  const eof = new Promise<void>((resolve) => (ended = resolve));
  const child = Bun.spawn(["bash", "-c", opts.command], {
    cwd: opts.cwd,
    env: { ...opts.env, TERM: "xterm-256color" },
    terminal: {
      cols: opts.size.cols,
      rows: opts.size.rows,
      name: "xterm-256color",
      data(_term, data) {
        let at = 0;
        while (at < data.length) {
          try {
            at += writeSync(logFd, data, at, data.length - at);
          } catch {
            // A full disk: what cannot be logged is lost, the command carries on.
            break;
          }
        }
        written += data.length;
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
    input = createReadStream("", { fd: openSync(opts.stdin, constants.O_RDONLY) });
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
  process.on("SIGWINCH", onResize);
  return {
    child,
    async drained(ms) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([eof, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
      clearTimeout(timer);
    },
    close() {
      process.off("SIGWINCH", onResize);
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
