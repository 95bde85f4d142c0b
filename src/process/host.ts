// The session's host (SPEC §4.6, §4.7): one detached process per session, `kt __host <spec>`,
// that supervises every command of the session on pipes — the work of a `kt __supervise`
// (src/process/supervisor.ts), without a runtime started per command. It is started by the
// first kt call that needs it (setsid, like a supervisor), listens on a Unix socket in the
// session's directory, and ends when it has had nothing to run for IDLE_MS, or at once when
// nothing runs and its session is gone (ended, its state directory removed, its MCP server
// gone). A kt call that cannot reach it starts a supervisor of the command's own instead.
//
// The protocol is one JSON line each way: kt sends {"run": <spec>}, the host answers "ok" as
// it takes the command, and "end" once the command's end is recorded. The kt call waits for
// "end" (bash) or lets go of the socket (ps start, a bash handed over): the command runs on.
import type { Database } from "bun:sqlite";
import { existsSync, statSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import type { Socket } from "bun";
import { forgetIndex, openIndex, safeName } from "../core/state.ts";
import type { ToolContext } from "../core/result.ts";
import { becomeSubreaper, reapAdopted } from "./descendants.ts";
import { MARKER } from "./env.ts";
import { endOfInputRequest } from "./stdin.ts";
import { isSameProcess } from "./identity.ts";
import { HOST, selfCommand, type SupervisorSpec } from "./spawn.ts";
import type { Runner } from "./supervisor.ts";
import type { OnTerminal } from "./pty.ts";

/** What a host is told on its command line. */
export interface HostSpec {
  stateDir: string;
  session: string;
  socket: string;
  owner?: { pid: number; start: string };
}

/** A Unix socket's path must fit sun_path (108 bytes with its NUL on Linux): longer ones are not tried. */
const MAX_SOCKET_PATH = 100;
/** How long a host with nothing to run waits for the next command before it exits (KT_HOST_IDLE_MS, for tests). */
const IDLE_MS = 60_000;

function idleMs(): number {
  const given = Number(process.env.KT_HOST_IDLE_MS);
  return Number.isFinite(given) && given > 0 ? given : IDLE_MS;
}
const WATCH_MS = 1000;
/** How long a kt call waits for a host it started to listen. */
const START_MS = 3000;
/** How long a kt call waits for the host to take its command. */
const ACK_MS = 5000;


export function hostSocket(stateDir: string, session: string): string {
  return join(stateDir, "sessions", safeName(session), "host.sock");
}

// ---- kt's side -----------------------------------------------------------------------

/**
 * Hands the command to the session's host, starting the host if none listens. Undefined when
 * no host could be reached: the caller then supervises the command itself, as before.
 */
export async function runOnHost(ctx: ToolContext, stateDir: string, spec: SupervisorSpec): Promise<{ exited: Promise<unknown>; unref(): void } | undefined> {
  const path = hostSocket(stateDir, ctx.session);
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH || process.platform !== "linux") return undefined;
  let conn = await connect(path);
  if (!conn) {
    if (!startHost({ stateDir, session: ctx.session, socket: path, ...(spec.owner ? { owner: spec.owner } : {}) })) return undefined;
    const deadline = performance.now() + START_MS;
    while (!conn && performance.now() < deadline) {
      await Bun.sleep(5);
      conn = await connect(path);
    }
    if (!conn) return undefined;
  }
  conn.socket.write(`${JSON.stringify({ run: spec })}\n`);
  const taken = await Promise.race([conn.line(), Bun.sleep(ACK_MS).then(() => undefined)]);
  if (taken !== "ok") {
    conn.socket.end();
    return undefined;
  }
  const c = conn;
  return {
    exited: c.line(),
    unref: () => c.socket.end(),
  };
}

/**
 * One request to a service of the session's host (the language servers: src/lsp/), starting
 * the host if none listens. `reached: false`: no host could be reached (the caller does the
 * work itself); `value` undefined: the host did not answer within `waitMs`.
 */
export async function askHost(ctx: Pick<ToolContext, "session">, stateDir: string, message: Record<string, unknown>, waitMs: number): Promise<{ reached: boolean; value?: unknown }> {
  const path = hostSocket(stateDir, ctx.session);
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH || process.platform !== "linux") return { reached: false };
  let conn = await connect(path);
  if (!conn) {
    if (!startHost({ stateDir, session: ctx.session, socket: path })) return { reached: false };
    const deadline = performance.now() + START_MS;
    while (!conn && performance.now() < deadline) {
      await Bun.sleep(5);
      conn = await connect(path);
    }
    if (!conn) return { reached: false };
  }
  conn.socket.write(`${JSON.stringify(message)}\n`);
  let timer: Timer | undefined;
  const line = await Promise.race([
    conn.line(),
    new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), waitMs);
    }),
  ]);
  clearTimeout(timer);
  conn.socket.end();
  // A host of an older kt closes the connection on a line it does not know.
  if (line === undefined) return { reached: false };
  try {
    return { reached: true, value: (JSON.parse(line) as { answer?: unknown }).answer };
  } catch {
    return { reached: true };
  }
}

/** A service the host runs beside its commands (the language servers), loaded on first use. */
export interface HostService {
  serveRequest(message: unknown): Promise<unknown>;
  /** Nothing of it is running: the host may end when idle. */
  serversIdle(): boolean;
  stopLocalServers(): Promise<void>;
}

export interface HostServices {
  lsp?: () => Promise<HostService>;
}

interface Connection {
  socket: Socket<undefined>;
  /** The next line from the host; undefined when the connection closed first. */
  line(): Promise<string | undefined>;
}

async function connect(path: string): Promise<Connection | undefined> {
  if (!existsSync(path)) return undefined;
  let buffer = "";
  const lines: string[] = [];
  let closed = false;
  const waiting: ((line: string | undefined) => void)[] = [];
  const flush = () => {
    while (waiting.length > 0 && (lines.length > 0 || closed)) waiting.shift()!(lines.shift());
  };
  try {
    const socket = await Bun.connect({
      unix: path,
      socket: {
        data(_s, data) {
          buffer += data.toString();
          let nl: number;
          while ((nl = buffer.indexOf("\n")) >= 0) {
            lines.push(buffer.slice(0, nl));
            buffer = buffer.slice(nl + 1);
          }
          flush();
        },
        close() {
          closed = true;
          flush();
        },
        error() {
          closed = true;
          flush();
        },
      },
    });
    return {
      socket,
      line: () =>
        new Promise((resolve) => {
          waiting.push(resolve);
          flush();
        }),
    };
  } catch {
    return undefined;
  }
}

function startHost(spec: HostSpec): boolean {
  const env: Record<string, string> = {};
  // The host is kt, not a command: it carries no enclosing command's marker.
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== MARKER) env[k] = v;
  // The host mostly waits: without the JIT (whose compilers' pages would stay resident) it
  // holds some 6 MB less. Its commands get the caller's environment, not this one.
  env.BUN_JSC_useJIT ??= "0";
  try {
    const host = Bun.spawn([...selfCommand(), HOST, JSON.stringify(spec)], { cwd: "/", env, stdin: "ignore", stdout: "ignore", stderr: "ignore", detached: true });
    host.unref();
    return true;
  } catch {
    return false;
  }
}

// ---- the host's side ---------------------------------------------------------------------

export async function serveHost(argv: string[], services: HostServices = {}): Promise<number> {
  let spec: HostSpec;
  try {
    spec = JSON.parse(argv[0] ?? "") as HostSpec;
    if (typeof spec.stateDir !== "string" || typeof spec.socket !== "string" || typeof spec.session !== "string") throw new Error("bad spec");
  } catch {
    process.stderr.write("kt: __host is kt's own per-session process host, not a command to run by hand.\n");
    return 2;
  }
  // Loaded here, not by the kt calls that only talk to a host.
  const { indexIdentity, record, run, SUBREAPER_AFTER_MS } = await import("./supervisor.ts");
  let subreaper = false;
  const leaders = new Set<number>();
  const endOfInput = new Map<number, { stdin: string; close: () => void }>();
  const stops = new Set<() => void>();
  const terminals = new Set<OnTerminal>();
  // The index as this host opened it: a replaced index is opened afresh for the next record.
  let opened: { dev: number; ino: number } | undefined;
  const runner: Runner = {
    hosted: true,
    leaders,
    terminals,
    subreaper: () => subreaper,
    onEndOfInput(command, close) {
      if (!command.stdin) return () => {};
      endOfInput.set(command.key, { stdin: command.stdin, close });
      return () => endOfInput.delete(command.key);
    },
    onStop(forward) {
      stops.add(forward);
      return () => stops.delete(forward);
    },
    record(command, write): Database | undefined {
      const now = indexIdentity(command.stateDir);
      if (opened && now && (now.dev !== opened.dev || now.ino !== opened.ino)) forgetIndex(command.stateDir);
      opened = now;
      return record(command, write);
    },
  };
  process.on("SIGUSR2", () => {
    for (const [, want] of endOfInput) {
      const request = endOfInputRequest(want.stdin);
      if (!existsSync(request)) continue;
      try {
        unlinkSync(request);
      } catch {
        // Taken already.
      }
      want.close();
    }
  });
  // `ps resize` wrote its request beside the log: each terminal takes its own.
  process.on("SIGWINCH", () => {
    for (const t of terminals) t.resize();
  });
  const forwardAll = () => {
    for (const forward of stops) forward();
  };
  process.on("SIGTERM", forwardAll);
  process.on("SIGINT", forwardAll);

  let active = 0;
  let idleSince = performance.now();
  let lsp: HostService | undefined;
  const serve = async (socket: Socket<{ buffer: string }>, message: unknown) => {
    let answer: unknown;
    try {
      lsp ??= await services.lsp!();
      answer = await lsp.serveRequest(message);
    } catch {
      answer = undefined;
    }
    idleSince = performance.now();
    try {
      socket.write(`${JSON.stringify({ answer })}\n`);
    } catch {
      // The kt call went away: nobody waits.
    }
  };
  const take = (socket: Socket<{ buffer: string }>, line: string) => {
    let command: SupervisorSpec;
    try {
      const message = JSON.parse(line) as { run?: SupervisorSpec; lsp?: unknown };
      if (message.lsp !== undefined && services.lsp) {
        idleSince = performance.now();
        void serve(socket, message.lsp);
        return;
      }
      command = message.run!;
      if (typeof command.command !== "string" || !Number.isInteger(command.key)) throw new Error("bad spec");
    } catch {
      socket.end();
      return;
    }
    active++;
    idleSince = performance.now();
    socket.write("ok\n");
    void run(command, runner)
      .catch(() => 1)
      .then(() => {
        active--;
        idleSince = performance.now();
        try {
          socket.write("end\n");
        } catch {
          // The kt call went away: nobody waits.
        }
      });
  };
  const handlers = {
    open(socket: Socket<{ buffer: string }>) {
      socket.data = { buffer: "" };
    },
    data(socket: Socket<{ buffer: string }>, data: Buffer) {
      socket.data.buffer += data.toString();
      let nl: number;
      while ((nl = socket.data.buffer.indexOf("\n")) >= 0) {
        const line = socket.data.buffer.slice(0, nl);
        socket.data.buffer = socket.data.buffer.slice(nl + 1);
        take(socket, line);
      }
    },
    error() {},
  };
  const listen = () => Bun.listen<{ buffer: string }>({ unix: spec.socket, socket: handlers });
  let server: ReturnType<typeof listen>;
  try {
    server = listen();
  } catch {
    // A socket is there: another host listens (this one is not needed), or a dead host left it.
    if (await connect(spec.socket)) return 0;
    try {
      unlinkSync(spec.socket);
      server = listen();
    } catch {
      return 1;
    }
  }
  const socketIdentity = indexIdentityOf(spec.socket);
  setTimeout(() => {
    subreaper = becomeSubreaper();
  }, SUBREAPER_AFTER_MS);

  // Gone: the index, this host's socket (removed, or another host's in its place), or the MCP server that owned the session.
  const ownSocket = (): boolean => {
    const now = indexIdentityOf(spec.socket);
    return now !== undefined && socketIdentity !== undefined && now.ino === socketIdentity.ino && now.dev === socketIdentity.dev;
  };
  const sessionGone = (): boolean => !existsSync(join(spec.stateDir, "index.db")) || !ownSocket() || (spec.owner !== undefined && !isSameProcess(spec.owner.pid, spec.owner.start));
  // A host lives on between commands: what a finished command left on the heap is given back.
  let collected = idleSince;
  const idle = idleMs();
  await new Promise<void>((resolve) => {
    const watch = setInterval(() => {
      if (subreaper) reapAdopted(leaders);
      if (collected !== idleSince) {
        collected = idleSince;
        Bun.gc(true);
      }
      if (active > 0) return;
      const warm = lsp !== undefined && !lsp.serversIdle();
      if (sessionGone() || (!warm && performance.now() - idleSince >= idle)) {
        clearInterval(watch);
        resolve();
      }
    }, WATCH_MS);
  });
  server.stop(true);
  await lsp?.stopLocalServers();
  // Only this host's socket: a host started after it (its socket removed meanwhile) keeps its own.
  if (ownSocket()) {
    try {
      unlinkSync(spec.socket);
    } catch {
      // Gone already.
    }
  }
  return 0;
}

function indexIdentityOf(path: string): { dev: number; ino: number } | undefined {
  try {
    const st = statSync(path);
    return { dev: st.dev, ino: st.ino };
  } catch {
    return undefined;
  }
}
