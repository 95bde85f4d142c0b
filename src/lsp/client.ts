// One language server over stdio (SPEC §8.1): the process, the protocol's framing (the
// reference vscode-jsonrpc reader and writer: Content-Length headers, partial frames,
// cancellation), initialize, the documents kt has open with their versions, and the
// diagnostics the server gave for each (uri, version) — pushed, or pulled where the server
// offers textDocument/diagnostic. Faults (cannot start, garbage, crash, hang) become a
// `fault` the pool reports; nothing here waits without a deadline.
import { spawn, type ChildProcess } from "node:child_process";
import type * as P from "vscode-languageserver-protocol";
import type { MessageConnection } from "vscode-jsonrpc/node";
import { fromUri, toUri } from "./uri.ts";

export interface ServerCommand {
  /** The table's id (e.g. "typescript-language-server"). */
  id: string;
  /** The executable, resolved to a path. */
  command: string;
  args: readonly string[];
  /** The project root the server is started for. */
  root: string;
  initializationOptions?: unknown;
  /** settings answered to workspace/configuration. */
  settings?: Record<string, unknown>;
}

/** A diagnostic as kt keeps it: 1-based line and column (UTF-16 units, as the protocol counts). */
export interface Diagnostic {
  line: number;
  col: number;
  endLine: number;
  endCol: number;
  severity: "error" | "warning" | "info" | "hint";
  source?: string;
  code?: string;
  message: string;
}

export type Fault = { kind: "spawn" | "exit" | "garbage" | "hang" | "init"; detail: string; stderr: string };

interface Doc {
  version: number;
  text: string;
  languageId: string;
  /** How many lists had been pushed for the document when this version was sent. */
  pushedAtSend: number;
  /**
   * The version before was still unanswered when this one was sent: from a server that sends
   * no version, the next list pushed may be the old version's, so only a second one counts.
   */
  ambiguous: boolean;
}

interface Published {
  version: number | undefined;
  /** Lists pushed for the document so far. */
  count: number;
  diagnostics: Diagnostic[];
}

const STDERR_KEEP = 2048;

/** How long a pushed list must stand unchanged before it is taken (KT_LSP_SETTLE_MS). */
const SETTLE_MS = 150;

function settleMs(): number {
  const given = Number(process.env.KT_LSP_SETTLE_MS);
  return Number.isFinite(given) && given >= 0 && process.env.KT_LSP_SETTLE_MS ? given : SETTLE_MS;
}

export class LspClient {
  private proc: ChildProcess | undefined;
  private conn: MessageConnection | undefined;
  private readonly docs = new Map<string, Doc>();
  private readonly published = new Map<string, Published>();
  private readonly waiters = new Set<() => void>();
  private stderrText = "";
  capabilities: P.ServerCapabilities = {};
  fault: Fault | undefined;
  /** Settles when initialize is answered (true) or the server failed first (false). */
  readonly ready: Promise<boolean>;
  private settleReady!: (ok: boolean) => void;
  isReady = false;
  exited = false;
  readonly startedAt = performance.now();
  lastUsed = performance.now();
  pid: number | undefined;

  constructor(readonly spec: ServerCommand, private readonly onFault: (client: LspClient) => void = () => {}) {
    this.ready = new Promise((resolve) => (this.settleReady = resolve));
  }

  get stderr(): string {
    return this.stderrText;
  }

  /** Starts the process and sends initialize; `ready` says how it went. */
  async start(): Promise<void> {
    const rpc = await import("vscode-jsonrpc/node");
    let proc: ChildProcess;
    try {
      proc = spawn(this.spec.command, [...this.spec.args], { cwd: this.spec.root, stdio: ["pipe", "pipe", "pipe"], env: process.env });
    } catch (error) {
      this.fail({ kind: "spawn", detail: (error as Error).message, stderr: "" });
      return;
    }
    this.proc = proc;
    this.pid = proc.pid;
    proc.on("error", (error) => this.fail({ kind: "spawn", detail: error.message, stderr: this.stderrText }));
    proc.stderr!.on("data", (chunk: Buffer) => {
      this.stderrText = (this.stderrText + chunk.toString("utf8")).slice(-STDERR_KEEP);
    });
    proc.stdin!.on("error", () => {});
    proc.on("exit", (code, signal) => {
      this.exited = true;
      const how = signal ? `killed by ${signal}` : `exited with code ${code}`;
      if (!this.stopping) this.fail({ kind: this.isReady ? "exit" : "spawn", detail: this.isReady ? how : `it ${how} before it was ready`, stderr: this.stderrText });
      this.wake();
    });
    const reader = new rpc.StreamMessageReader(proc.stdout!);
    const writer = new rpc.StreamMessageWriter(proc.stdin!);
    const conn = rpc.createMessageConnection(reader, writer, { error: () => {}, warn: () => {}, info: () => {}, log: () => {} });
    this.conn = conn;
    reader.onError((error) => this.fail({ kind: "garbage", detail: error.message.split("\n")[0]!, stderr: this.stderrText }));
    conn.onNotification("textDocument/publishDiagnostics", (params: P.PublishDiagnosticsParams) => {
      const count = (this.published.get(params.uri)?.count ?? 0) + 1;
      this.published.set(params.uri, { version: params.version, count, diagnostics: params.diagnostics.map(fromLsp) });
      this.wake();
    });
    conn.onRequest("workspace/configuration", (params: P.ConfigurationParams) => params.items.map((item) => this.setting(item.section)));
    conn.onRequest("client/registerCapability", () => null);
    conn.onRequest("client/unregisterCapability", () => null);
    conn.onRequest("window/workDoneProgress/create", () => null);
    conn.onRequest("window/showMessageRequest", () => null);
    conn.onRequest("workspace/applyEdit", () => ({ applied: false }));
    conn.onRequest("workspace/workspaceFolders", () => [{ uri: toUri(this.spec.root), name: this.spec.root }]);
    conn.onNotification(() => {});
    conn.listen();
    const root = toUri(this.spec.root);
    const params: P.InitializeParams = {
      processId: process.pid,
      clientInfo: { name: "kt" },
      rootUri: root,
      rootPath: this.spec.root,
      workspaceFolders: [{ uri: root, name: this.spec.root }],
      initializationOptions: this.spec.initializationOptions,
      capabilities: CAPABILITIES,
    };
    try {
      const answer = (await conn.sendRequest("initialize", params)) as P.InitializeResult;
      if (this.fault) return;
      this.capabilities = answer?.capabilities ?? {};
      await conn.sendNotification("initialized", {});
      await conn.sendNotification("workspace/didChangeConfiguration", { settings: this.spec.settings ?? {} });
      this.isReady = true;
      this.settleReady(true);
    } catch (error) {
      this.fail({ kind: "init", detail: (error as Error).message, stderr: this.stderrText });
    }
  }

  private setting(section: string | undefined): unknown {
    if (!this.spec.settings) return null;
    if (!section) return this.spec.settings;
    let at: unknown = this.spec.settings;
    for (const part of section.split(".")) at = at && typeof at === "object" ? (at as Record<string, unknown>)[part] : undefined;
    return at ?? null;
  }

  private stopping = false;

  private fail(fault: Fault): void {
    if (this.fault) return;
    this.fault = fault;
    this.settleReady(false);
    this.wake();
    this.onFault(this);
    this.kill();
  }

  private wake(): void {
    for (const w of [...this.waiters]) w();
  }

  /** Resolves when `check` is true, the client faults, or the deadline passes (performance.now() ms). */
  private until(check: () => boolean, deadline: number): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        this.waiters.delete(test);
        clearTimeout(timer);
        resolve(ok);
      };
      const test = () => {
        if (check()) done(true);
        else if (this.fault) done(false);
      };
      const timer = setTimeout(() => done(check()), Math.max(0, deadline - performance.now()));
      this.waiters.add(test);
      test();
    });
  }

  /**
   * The document as the server has it, made to be `text`; returns the version it now has.
   * `refresh`: a document already so whose version the server never answered is sent again,
   * same text, new version — a server that dropped its check (one interrupted by a request)
   * checks it again.
   */
  sync(path: string, text: string, languageId: string, refresh = false): number {
    this.lastUsed = performance.now();
    const uri = toUri(path);
    const doc = this.docs.get(uri);
    const conn = this.conn!;
    const pushed = this.published.get(uri)?.count ?? 0;
    if (doc && doc.text === text && !(refresh && pushed === doc.pushedAtSend)) return doc.version;
    if (!doc) {
      this.docs.set(uri, { version: 1, text, languageId, pushedAtSend: pushed, ambiguous: false });
      void conn.sendNotification("textDocument/didOpen", { textDocument: { uri, languageId, version: 1, text } }).catch(() => {});
      return 1;
    }
    // An unanswered version before makes the next list ambiguous — unless it had this same text.
    doc.ambiguous = pushed === doc.pushedAtSend && doc.text !== text;
    doc.pushedAtSend = pushed;
    doc.version++;
    doc.text = text;
    void conn.sendNotification("textDocument/didChange", { textDocument: { uri, version: doc.version }, contentChanges: [{ text }] }).catch(() => {});
    return doc.version;
  }

  /** Tells the server a file kt had open is gone. */
  close(path: string): void {
    const uri = toUri(path);
    if (!this.docs.delete(uri) || !this.conn) return;
    this.published.delete(uri);
    void this.conn.sendNotification("textDocument/didClose", { textDocument: { uri } }).catch(() => {});
  }

  /** Every open document made to be what `read` says its file holds now (closed when it is gone). */
  resyncAll(read: (path: string) => string | undefined): void {
    for (const [uri, doc] of [...this.docs]) {
      const path = fromUri(uri);
      if (!path) continue;
      const text = read(path);
      if (text === undefined) this.close(path);
      else if (text !== doc.text) this.sync(path, text, doc.languageId);
    }
  }

  openText(path: string): string | undefined {
    return this.docs.get(toUri(path))?.text;
  }

  /**
   * The diagnostics for the document's current version, or undefined when they did not come
   * by the deadline. Pulled when the server offers it (the answer is for the state it has
   * now); else the pushed list that names this version, or — from a server that sends no
   * version — the first one pushed after kt sent this version (the second, when the version
   * before had not been answered yet).
   */
  async diagnostics(path: string, deadline: number): Promise<Diagnostic[] | undefined> {
    const uri = toUri(path);
    const doc = this.docs.get(uri);
    if (!doc || this.fault) return undefined;
    const version = doc.version;
    if (this.capabilities.executeCommandProvider?.commands?.includes(TSSERVER_REQUEST)) {
      // typescript-language-server pushes no version, and pushes nothing when a clean file
      // stays clean: tsserver itself is asked, after the change, in order.
      const ask = (command: string) => this.request<{ body?: TsDiagnostic[] }>("workspace/executeCommand", { command: TSSERVER_REQUEST, arguments: [command, { file: uri, includeLinePosition: false }] }, deadline);
      const [syntactic, semantic] = await Promise.all([ask("syntacticDiagnosticsSync"), ask("semanticDiagnosticsSync")]);
      if (!syntactic?.body || !semantic?.body || this.docs.get(uri)?.version !== version) return undefined;
      return [...syntactic.body, ...semantic.body].map(fromTsserver);
    }
    if (this.capabilities.diagnosticProvider) {
      const report = await this.request<P.DocumentDiagnosticReport>("textDocument/diagnostic", { textDocument: { uri } }, deadline);
      if (report && report.kind === "full" && this.docs.get(uri)?.version === version) return report.items.map(fromLsp);
      if (report === undefined) return undefined;
    }
    const current = () => {
      const p = this.published.get(uri);
      if (!p || this.docs.get(uri)?.version !== version) return false;
      return p.version !== undefined ? p.version === version : p.count - doc.pushedAtSend >= (doc.ambiguous ? 2 : 1);
    };
    if (!(await this.until(current, deadline))) return undefined;
    // A server may push a version more than once (a first quick list, then the checked one;
    // again when another changed file was taken in): the list stands once nothing more came
    // for SETTLE_MS, or at the deadline.
    // A document just opened waits longer: its first list may be a quick one (pyright's).
    const settle = doc.version === 1 ? 4 * settleMs() : settleMs();
    for (;;) {
      const count = this.published.get(uri)?.count ?? 0;
      const settled = Math.min(deadline, performance.now() + settle);
      const moved = () => (this.published.get(uri)?.count ?? 0) !== count;
      if (!(await this.until(moved, settled)) || !current()) break;
    }
    return current() ? this.published.get(uri)!.diagnostics : undefined;
  }

  /** A request answered by the deadline, else undefined (and cancelled). A server error is thrown. */
  async request<R>(method: string, params: unknown, deadline: number): Promise<R | undefined> {
    this.lastUsed = performance.now();
    const conn = this.conn;
    if (!conn || this.fault) return undefined;
    const rpc = await import("vscode-jsonrpc/node");
    const source = new rpc.CancellationTokenSource();
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stop: (() => void) | undefined;
    const ended = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), Math.max(0, deadline - performance.now()));
      stop = () => resolve(undefined);
    });
    // Woken by every message the server pushes: only a fault ends the wait early.
    const check = () => {
      if (this.fault) stop?.();
    };
    this.waiters.add(check);
    try {
      return (await Promise.race([conn.sendRequest(method, params, source.token) as Promise<R>, ended])) as R | undefined;
    } finally {
      clearTimeout(timer);
      this.waiters.delete(check);
      source.cancel();
      source.dispose();
    }
  }

  /** shutdown, exit, then a kill for a server that does not go. */
  async stop(graceMs = 500): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    if (this.conn && this.isReady && !this.exited) {
      const deadline = performance.now() + graceMs;
      try {
        await this.request("shutdown", null, deadline);
        await this.conn.sendNotification("exit");
      } catch {
        // A server that cannot shut down is killed below.
      }
      const exited = () => this.exited;
      await this.until(exited, deadline);
    }
    this.kill();
    this.wake();
  }

  /** The pool's verdict on a server that never answered initialize. */
  markHung(detail: string): void {
    this.fail({ kind: "hang", detail, stderr: this.stderrText });
  }

  /** SIGKILL now, for a process about to exit. */
  killNow(): void {
    this.kill();
  }

  private kill(): void {
    this.stopping = true;
    try {
      this.conn?.dispose();
    } catch {
      // Already closed.
    }
    if (this.proc && !this.exited) {
      try {
        this.proc.kill("SIGKILL");
      } catch {
        // Gone already.
      }
    }
    this.proc?.stdout?.destroy();
    this.proc?.stderr?.destroy();
    this.proc?.stdin?.destroy();
  }
}

const SEVERITY: Record<number, Diagnostic["severity"]> = { 1: "error", 2: "warning", 3: "info", 4: "hint" };

const TSSERVER_REQUEST = "typescript.tsserverRequest";

/** A diagnostic as tsserver gives it: 1-based line and offset. */
interface TsDiagnostic {
  start: { line: number; offset: number };
  end: { line: number; offset: number };
  text: string;
  code?: number;
  category: string;
}

const TS_SEVERITY: Record<string, Diagnostic["severity"]> = { error: "error", warning: "warning", suggestion: "hint", message: "info" };

function fromTsserver(d: TsDiagnostic): Diagnostic {
  return {
    line: d.start.line,
    col: d.start.offset,
    endLine: d.end.line,
    endCol: d.end.offset,
    severity: TS_SEVERITY[d.category] ?? "error",
    source: "typescript",
    ...(d.code !== undefined ? { code: String(d.code) } : {}),
    message: d.text,
  };
}

function fromLsp(d: P.Diagnostic): Diagnostic {
  const code = d.code === undefined || d.code === null ? undefined : String(d.code);
  return {
    line: d.range.start.line + 1,
    col: d.range.start.character + 1,
    endLine: d.range.end.line + 1,
    endCol: d.range.end.character + 1,
    severity: SEVERITY[d.severity ?? 1] ?? "error",
    ...(d.source ? { source: d.source } : {}),
    ...(code !== undefined ? { code } : {}),
    message: typeof d.message === "string" ? d.message : String(d.message),
  };
}

const CAPABILITIES: P.ClientCapabilities = {
  general: { positionEncodings: ["utf-16"] },
  workspace: {
    workspaceFolders: true,
    configuration: true,
    applyEdit: false,
    symbol: { dynamicRegistration: false },
    didChangeConfiguration: { dynamicRegistration: false },
  },
  textDocument: {
    synchronization: { dynamicRegistration: false, didSave: false, willSave: false },
    publishDiagnostics: { versionSupport: true, relatedInformation: false, codeDescriptionSupport: false, dataSupport: false },
    diagnostic: { dynamicRegistration: false, relatedDocumentSupport: false },
    definition: { dynamicRegistration: false, linkSupport: false },
    references: { dynamicRegistration: false },
    hover: { dynamicRegistration: false, contentFormat: ["plaintext", "markdown"] },
    documentSymbol: { dynamicRegistration: false, hierarchicalDocumentSymbolSupport: true },
    rename: { dynamicRegistration: false, prepareSupport: false },
  },
  window: { workDoneProgress: false },
};
