// A terminal in a session's host (SPEC §7.4): the relay of one terminal runs on a thread of its
// own, so that pacing a firehose (the relay sleeps in its thread) and the relay's lower
// priority (Linux sets niceness per thread) touch neither the host's other commands nor its
// socket. The host talks to the thread by messages: start, resize (on SIGWINCH), drain.
// This file is both sides: `startTerminalThread` for the host, the rest runs in the thread.
import type { Size } from "./terminal.ts";
import type { Leader, OnTerminal } from "./pty.ts";

export interface TerminalStart {
  command: string;
  cwd: string;
  env: Record<string, string>;
  log: string;
  stdin?: string;
  size: Size;
  /** The sandbox's launcher, put before `bash -c`. */
  sandbox?: string[];
}

type ToThread = { type: "start"; opts: TerminalStart } | { type: "resize" } | { type: "drain"; ms: number };
type FromThread = { type: "started"; pid: number } | { type: "failed"; message: string } | { type: "exited"; exitCode: number | null; signalCode: string | null } | { type: "drained" };

/** The thread's script: its own entry in the compiled binary, this file when run from source. */
function threadUrl(): string {
  const here = new URL(".", import.meta.url);
  if (!/\/(\$bunfs|~BUN)\//.test(here.pathname)) return new URL("./pty-thread.ts", import.meta.url).href;
  // In the binary this file is an entry of its own, under process/ — unless bundled into the main chunk.
  return new URL(here.pathname.endsWith("/process/") ? "pty-thread.ts" : "process/pty-thread.ts", here).href;
}

/** Starts a command on a terminal run by a thread of this process; rejects when it cannot start. */
export async function startTerminalThread(opts: TerminalStart): Promise<OnTerminal> {
  const worker = new Worker(threadUrl());
  let exitCode: number | null = null;
  let signalCode: string | null = null;
  let onExit: () => void = () => {};
  const exited = new Promise<void>((resolve) => (onExit = resolve));
  let onDrained: () => void = () => {};
  let onStarted: (pid: number) => void = () => {};
  let onFailed: (message: string) => void = () => {};
  const started = new Promise<number>((resolve, reject) => {
    onStarted = resolve;
    onFailed = (message) => reject(new Error(message));
  });
  worker.onmessage = (event: MessageEvent<FromThread>) => {
    const m = event.data;
    if (m.type === "started") onStarted(m.pid);
    else if (m.type === "failed") onFailed(m.message);
    else if (m.type === "exited") {
      exitCode = m.exitCode;
      signalCode = m.signalCode;
      onExit();
    } else onDrained();
  };
  worker.onerror = (event) => {
    onFailed(event.message || "the terminal thread failed");
    onExit();
    onDrained();
  };
  const post = (m: ToThread) => worker.postMessage(m);
  post({ type: "start", opts });
  let pid: number;
  try {
    pid = await started;
  } catch (error) {
    worker.terminate();
    throw error;
  }
  const child: Leader = {
    pid,
    exited,
    get exitCode() {
      return exitCode;
    },
    get signalCode() {
      return signalCode;
    },
  };
  return {
    child,
    resize: () => post({ type: "resize" }),
    async drained(ms) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const done = new Promise<void>((resolve) => (onDrained = resolve));
      post({ type: "drain", ms });
      // The thread answers within ms; a stuck one is not waited for much longer.
      await Promise.race([done, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms + 1000)))]);
      clearTimeout(timer);
    },
    close() {
      worker.terminate();
    },
  };
}

// ---- the thread ---------------------------------------------------------------------------

declare const self: Worker;

if (typeof Bun !== "undefined" && !Bun.isMainThread) {
  let term: OnTerminal | undefined;
  const reply = (m: FromThread) => self.postMessage(m);
  self.onmessage = async (event: MessageEvent<ToThread>) => {
    const m = event.data;
    if (m.type === "start") {
      try {
        const { spawnOnTerminal } = await import("./pty.ts");
        const t = spawnOnTerminal({ ...m.opts, signals: false });
        term = t;
        reply({ type: "started", pid: t.child.pid });
        await t.child.exited;
        reply({ type: "exited", exitCode: t.child.exitCode, signalCode: t.child.signalCode === null || t.child.signalCode === undefined ? null : String(t.child.signalCode) });
      } catch (error) {
        reply({ type: "failed", message: (error as Error).message });
      }
    } else if (m.type === "resize") term?.resize();
    else if (m.type === "drain") {
      if (term) {
        await term.drained(m.ms);
        term.close();
      }
      reply({ type: "drained" });
    }
  };
}
