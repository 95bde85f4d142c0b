// The session's host (SPEC §4.6, §4.7): one detached process per session, `kt __host <spec>`,
// that supervises every command of the session on pipes — the work of a `kt __supervise`
// (src/process/supervisor.ts), without a runtime started per command. It is started by the
// first kt call that needs it (setsid, like a supervisor), listens on a Unix socket in the
// session's directory, and ends when it has had nothing to run for IDLE_MS, or at once when
// nothing runs and its session is gone (ended, its state directory removed, its MCP server
// gone). A kt call that cannot reach it starts a supervisor of the command's own instead.
//
// The protocol is one JSON line each way: kt sends {"run": <spec>, "secret": <hex>}, the host
// answers "ok" as it takes the command, and "end" once the command's end is recorded. The kt
// call waits for "end" (bash) or lets go of the socket (ps start, a bash handed over): the
// command runs on.
//
// Only this user's own kt is served, and only what it recorded (SPEC §8.7): the socket is
// 0600 in a private directory; the host asks the kernel who its peer is (SO_PEERCRED) before
// reading a byte and drops any other uid; and a request names a row of the index together
// with a one-time secret the kt call kept beside that row (host_secrets, in the index only):
// the command, its directory, log and stdin are then the row's, never the request's. A kt
// call connects only to a socket this user made, 0600 — a listener someone else planted gets
// nothing.
import type { Database } from "bun:sqlite";
import { chmodSync, existsSync, lstatSync, statSync, unlinkSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Socket } from "bun";
import { forgetIndex, index, openIndex, safeName, sessionDir } from "../core/state.ts";
import { byKey } from "./registry.ts";
import { canAskPeers, peerOf } from "./peer.ts";
import type { ToolContext } from "../core/result.ts";
import { becomeSubreaper, reapAdopted } from "./descendants.ts";
import { MARKER } from "./env.ts";
import { endOfInputRequest } from "./stdin.ts";
import { isSameProcess } from "./identity.ts";
import { LINUX_PROC } from "./procfs.ts";
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
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH || !LINUX_PROC) return undefined;
  const db = index(ctx);
  const secret = keepSecret(db, spec.key);
  const taken = await handOver(ctx, stateDir, path, spec, secret);
  // Not taken: the secret must not outlive the request it was made for.
  if (!taken) dropSecret(db, spec.key);
  return taken;
}

async function handOver(ctx: ToolContext, stateDir: string, path: string, spec: SupervisorSpec, secret: string): Promise<{ exited: Promise<unknown>; unref(): void } | undefined> {
  let conn = await connect(path);
  if (!conn) {
    const host = startHost({ stateDir, session: ctx.session, socket: path, ...(spec.owner ? { owner: spec.owner } : {}) });
    if (!host) return undefined;
    const deadline = performance.now() + START_MS;
    while (!conn && performance.now() < deadline) {
      await Bun.sleep(5);
      conn = await connect(path);
      // A host that ended without listening (it could not serve here) is not waited for.
      if (!conn && host.ended) break;
    }
    if (!conn) return undefined;
  }
  send(conn.socket, `${JSON.stringify({ run: spec, secret })}\n`);
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

// ---- the one-time secrets of requests (this module's table in the index) -----------------

const SECRETS = "CREATE TABLE IF NOT EXISTS host_secrets (key INTEGER PRIMARY KEY, secret TEXT NOT NULL, at REAL NOT NULL)";
const madeSecrets = new WeakSet<Database>();

function secrets(db: Database): Database {
  if (!madeSecrets.has(db)) {
    db.exec(SECRETS);
    if (!db.inTransaction) madeSecrets.add(db);
  }
  return db;
}

/** Kept beside row `key` for the host to check: the index is readable by this user alone. */
function keepSecret(db: Database, key: number): string {
  // Web Crypto's generator, not node:crypto's: loading that module costs a kt bash call ~1 ms.
  const secret = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex");
  secrets(db).query("INSERT OR REPLACE INTO host_secrets (key, secret, at) VALUES (?, ?, ?)").run(key, secret, Date.now());
  return secret;
}

function dropSecret(db: Database, key: number): void {
  try {
    secrets(db).query("DELETE FROM host_secrets WHERE key = ?").run(key);
  } catch {
    // The index went away meanwhile: the secret went with it.
  }
}

/** Whether `given` is row `key`'s secret; it is used up either way, so a request runs once. */
function takeSecret(db: Database, key: number, given: string): boolean {
  const row = secrets(db).query("DELETE FROM host_secrets WHERE key = ? RETURNING secret").get(key) as { secret: string } | null;
  if (!row) return false;
  return sameSecret(row.secret, given);
}

/** Whether two secrets are the same, in a time that does not depend on where they differ. */
export function sameSecret(kept: string, given: string): boolean {
  if (kept.length !== given.length) return false;
  let differ = 0;
  for (let i = 0; i < kept.length; i++) differ |= kept.charCodeAt(i) ^ given.charCodeAt(i);
  return differ === 0;
}

/**
 * The command a request may run: the row it names, as its kt call recorded it (not yet
 * started, of this host's session), proven by the row's secret; undefined for anything else.
 */
function provenCommand(db: Database, host: HostSpec, asked: SupervisorSpec, secret: string): SupervisorSpec | undefined {
  if (!takeSecret(db, asked.key, secret)) return undefined;
  const row = byKey(db, asked.key);
  if (!row || row.session !== host.session || row.status !== "starting" || row.pid !== null || row.supervisor_pid !== null) return undefined;
  const { stdin: _stdin, ...rest } = asked;
  return { ...rest, stateDir: host.stateDir, command: row.command, cwd: row.cwd, log: row.log_path, ...(row.stdin_path ? { stdin: row.stdin_path } : {}) };
}

/**
 * One request to a service of the session's host (the language servers: src/lsp/), starting
 * the host if none listens. `reached: false`: no host could be reached (the caller does the
 * work itself); `value` undefined: the host did not answer within `waitMs`.
 */
export async function askHost(ctx: Pick<ToolContext, "session">, stateDir: string, message: Record<string, unknown>, waitMs: number): Promise<{ reached: boolean; value?: unknown }> {
  const path = hostSocket(stateDir, ctx.session);
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH || !LINUX_PROC) return { reached: false };
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
  send(conn.socket, `${JSON.stringify(message)}\n`);
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

/** Bytes a socket has not taken yet: a Bun socket's write takes what the kernel's buffer
 * holds and returns the count, the rest is written on drain. */
const unsent = new WeakMap<object, Buffer>();

/** Writes `text` whole: what the socket does not take now goes out as it drains (a
 * diagnostics request of 20 files is far larger than a socket's buffer). */
function send(socket: { write(data: Buffer): number }, text: string): void {
  const queued = unsent.get(socket);
  const bytes = Buffer.from(text);
  if (queued) {
    unsent.set(socket, Buffer.concat([queued, bytes]));
    return;
  }
  const n = socket.write(bytes);
  if (n < bytes.length) unsent.set(socket, bytes.subarray(Math.max(0, n)));
}

/** The drain handler of both sides: writes on what `send` left. */
function drained(socket: { write(data: Buffer): number }): void {
  const queued = unsent.get(socket);
  if (!queued) return;
  const n = socket.write(queued);
  if (n >= queued.length) unsent.delete(socket);
  else unsent.set(socket, queued.subarray(Math.max(0, n)));
}

/**
 * Whether `path` is a socket this user bound, readable and writable by this user alone: only
 * this user's kt (or root) can have made it, in a directory nobody else can write.
 */
function ownSocketFile(path: string): boolean {
  try {
    const st = lstatSync(path);
    const uid = process.getuid?.();
    return st.isSocket() && (uid === undefined || st.uid === uid) && (st.mode & 0o077) === 0;
  } catch {
    return false;
  }
}

async function connect(path: string): Promise<Connection | undefined> {
  if (!ownSocketFile(path)) return undefined;
  let buffer = "";
  // One decoder for the connection: a character split between two chunks is kept whole.
  const decoder = new TextDecoder();
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
          buffer += decoder.decode(data, { stream: true });
          let nl: number;
          while ((nl = buffer.indexOf("\n")) >= 0) {
            lines.push(buffer.slice(0, nl));
            buffer = buffer.slice(nl + 1);
          }
          flush();
        },
        drain(s) {
          drained(s);
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

function startHost(spec: HostSpec): { readonly ended: boolean } | undefined {
  const env: Record<string, string> = {};
  // The host is kt, not a command: it carries no enclosing command's marker.
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== MARKER) env[k] = v;
  // The host mostly waits: without the JIT's compiling tiers (whose pages would stay resident)
  // it holds some MB less. The JIT itself stays on, since bun:ffi needs it for the peer check
  // (src/process/peer.ts). Its commands get the caller's environment, not this one.
  delete env.BUN_JSC_useJIT;
  for (const tier of ["BUN_JSC_useBaselineJIT", "BUN_JSC_useDFGJIT", "BUN_JSC_useFTLJIT"]) env[tier] ??= "0";
  try {
    const host = Bun.spawn([...selfCommand(), HOST, JSON.stringify(spec)], { cwd: "/", env, stdin: "ignore", stdout: "ignore", stderr: "ignore", detached: true });
    host.unref();
    const state = { ended: false };
    void host.exited.then(() => {
      state.ended = true;
    });
    return state;
  } catch {
    return undefined;
  }
}

// ---- the host's side ---------------------------------------------------------------------

/** A connection to the host: its unread bytes, and whether its peer is this user. */
interface Conn {
  buffer: string;
  /** Decodes the peer's bytes: a character split between two chunks is kept whole. */
  decoder: TextDecoder;
  trusted: boolean;
}

export async function serveHost(argv: string[], services: HostServices = {}): Promise<number> {
  let spec: HostSpec;
  try {
    spec = JSON.parse(argv[0] ?? "") as HostSpec;
    if (typeof spec.stateDir !== "string" || typeof spec.socket !== "string" || typeof spec.session !== "string") throw new Error("bad spec");
  } catch {
    process.stderr.write("kt: __host is kt's own per-session process host, not a command to run by hand.\n");
    return 2;
  }
  spec = { ...spec, stateDir: resolve(spec.stateDir) };
  // A host that cannot tell who connects serves nobody; nor one whose directory is not private.
  if (!canAskPeers() || spec.socket !== hostSocket(spec.stateDir, spec.session)) return 1;
  try {
    sessionDir(spec.stateDir, spec.session);
  } catch {
    return 1;
  }
  const uid = process.getuid?.();
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
  const serve = async (socket: Socket<Conn>, message: unknown) => {
    let answer: unknown;
    try {
      lsp ??= await services.lsp!();
      answer = await lsp.serveRequest(message);
    } catch {
      answer = undefined;
    }
    idleSince = performance.now();
    try {
      send(socket, `${JSON.stringify({ answer })}\n`);
    } catch {
      // The kt call went away: nobody waits.
    }
  };
  const take = (socket: Socket<Conn>, line: string) => {
    let asked: SupervisorSpec;
    let secret: string;
    try {
      const message = JSON.parse(line) as { run?: SupervisorSpec; secret?: string; lsp?: unknown };
      // A question for the language servers (src/lsp/): it runs nothing, and its peer is this user already.
      if (message.lsp !== undefined && services.lsp) {
        idleSince = performance.now();
        void serve(socket, message.lsp);
        return;
      }
      ({ run: asked, secret } = message as { run: SupervisorSpec; secret: string });
      if (typeof asked.command !== "string" || !Number.isInteger(asked.key) || typeof secret !== "string" || typeof asked.stateDir !== "string") throw new Error("bad spec");
    } catch {
      socket.end();
      return;
    }
    let command: SupervisorSpec | undefined;
    if (resolve(asked.stateDir) === spec.stateDir) {
      runner.record({ ...asked, stateDir: spec.stateDir }, (db) => {
        command ??= provenCommand(db, spec, asked, secret);
      });
    }
    if (!command) {
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
    open(socket: Socket<Conn>) {
      // Asked of the kernel before a byte is read: a peer of another uid is dropped unheard.
      const peer = peerOf((socket as unknown as { fd?: number }).fd ?? -1);
      const trusted = peer !== undefined && (uid === undefined || peer.uid === uid);
      socket.data = { buffer: "", decoder: new TextDecoder(), trusted };
      if (!trusted) socket.terminate();
    },
    data(socket: Socket<Conn>, data: Buffer) {
      if (!socket.data.trusted) return;
      socket.data.buffer += socket.data.decoder.decode(data, { stream: true });
      let nl: number;
      while ((nl = socket.data.buffer.indexOf("\n")) >= 0) {
        const line = socket.data.buffer.slice(0, nl);
        socket.data.buffer = socket.data.buffer.slice(nl + 1);
        take(socket, line);
      }
    },
    drain(socket: Socket<Conn>) {
      drained(socket);
    },
    error() {},
  };
  const listen = () => {
    // Bound 0600 whatever the caller's umask (the socket's mode is the umask's), and made sure of after.
    const umask = process.umask(0o177);
    try {
      const server = Bun.listen<Conn>({ unix: spec.socket, socket: handlers });
      chmodSync(spec.socket, 0o600);
      return server;
    } finally {
      process.umask(umask);
    }
  };
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
    return now !== undefined && socketIdentity !== undefined && now.ino === socketIdentity.ino && now.dev === socketIdentity.dev && now.born === socketIdentity.born;
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
  await lsp?.stopLocalServers();
  // Only this host's socket: a host started after it (its socket removed meanwhile) keeps its
  // own. Bun's stop() unlinks the listener's path whoever's socket is there now, so a host
  // whose path is another's does not stop its listener: the exit that follows closes it.
  if (ownSocket()) {
    server.stop(true);
    try {
      unlinkSync(spec.socket);
    } catch {
      // Gone already (stop() removes it).
    }
  }
  return 0;
}

/** A file's identity: its inode, and its birth time, since an inode freed by a removed session is soon given to the next socket. */
function indexIdentityOf(path: string): { dev: number; ino: number; born: number } | undefined {
  try {
    const st = lstatSync(path);
    return { dev: st.dev, ino: st.ino, born: st.birthtimeMs };
  } catch {
    return undefined;
  }
}
