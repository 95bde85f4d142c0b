// The MCP stdio transport of `kt mcp`: one JSON-RPC message per line on stdin, one per line
// on stdout. kt has its own rather than the SDK's because a server must outlive what an
// ordinary client can do to it: a line too long or not JSON is answered with a JSON-RPC
// error and the server keeps serving, and a client gone away (stdout closed: EPIPE) ends
// the server cleanly instead of crashing it.
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, JSONRPCMessageSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { decodeUtf8Exact, grouped, invalidUtf8At } from "../core/text.ts";

/** The longest message line kept; a longer one is skipped to its end and answered with an error. */
export const MAX_LINE_BYTES = 10 * 1024 * 1024;

/** How much of each end of an over-long line is kept to read its id from. */
const ID_WINDOW = 64 * 1024;

/**
 * The id of a request whose line was too long to keep, read from the line's first bytes (the
 * members of the top-level object before any value runs past them) or from its last ones (an
 * id that is the object's last member), or null when neither shows one.
 */
export function requestId(head: Buffer, tail: Buffer): string | number | null {
  return idFromHead(head.toString("utf8")) ?? idFromTail(tail.toString("utf8")) ?? null;
}

function idFromHead(text: string): string | number | undefined {
  let i = text.search(/\S/);
  if (i < 0 || text[i] !== "{") return undefined;
  i++;
  // Top-level members in order: a key, a colon, a value skipped whole, a comma.
  for (;;) {
    const key = /^\s*("(?:[^"\\]|\\.)*")\s*:\s*/.exec(text.slice(i));
    if (!key) return undefined;
    i += key[0].length;
    if (JSON.parse(key[1]!) === "id") {
      const value = /^(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|"(?:[^"\\]|\\.)*")\s*[,}]/.exec(text.slice(i));
      return value ? (JSON.parse(value[1]!) as string | number) : undefined;
    }
    const end = skipValue(text, i);
    if (end === undefined) return undefined;
    const comma = /^\s*,/.exec(text.slice(end));
    if (!comma) return undefined;
    i = end + comma[0].length;
  }
}

/** The index just past the JSON value starting at `i`, or undefined when it runs past the text. */
function skipValue(text: string, i: number): number | undefined {
  let depth = 0;
  for (; i < text.length; i++) {
    const c = text[i];
    if (depth === 0 && (c === "," || c === "}")) return i;
    if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === "\\") i++;
      if (i >= text.length) return undefined;
      if (depth === 0) return i + 1;
    } else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return undefined;
}

/** A copy of the first or last ID_WINDOW bytes of `pieces` joined, never more in memory. */
function edge(pieces: Buffer[], which: "head" | "tail"): Buffer {
  const out: Buffer[] = [];
  let size = 0;
  const order = which === "head" ? pieces : [...pieces].reverse();
  for (const p of order) {
    if (size >= ID_WINDOW) break;
    const want = Math.min(p.length, ID_WINDOW - size);
    out.push(which === "head" ? p.subarray(0, want) : p.subarray(p.length - want));
    size += want;
  }
  return Buffer.concat(which === "head" ? out : out.reverse());
}

function idFromTail(text: string): string | number | undefined {
  const m = /[,{]\s*"id"\s*:\s*(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|"(?:[^"\\]|\\.)*")\s*\}\s*\r?$/.exec(text);
  return m ? (JSON.parse(m[1]!) as string | number) : undefined;
}

export class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** Resolves when stdout can no longer be written: nobody hears the server any more. */
  readonly gone: Promise<void>;
  private markGone!: () => void;
  private parts: Buffer[] = [];
  private size = 0;
  /** Bytes of an over-long line dropped so far (the line is being skipped to its newline). */
  private skipping = 0;
  /** The first and the last bytes of the line being skipped: where its id can be read (SPEC §8.7). */
  private head: Buffer = Buffer.alloc(0);
  private tail: Buffer = Buffer.alloc(0);
  private closed = false;
  private broken = false;

  constructor(
    private readonly stdin: NodeJS.ReadableStream = process.stdin,
    private readonly stdout: NodeJS.WritableStream = process.stdout,
  ) {
    this.gone = new Promise((resolve) => (this.markGone = resolve));
  }

  async start(): Promise<void> {
    this.stdin.on("data", this.onData);
    this.stdin.on("end", this.onEnd);
    this.stdout.on("error", this.onWriteError);
  }

  private onData = (chunk: Buffer | string): void => {
    let buf = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    for (let nl = buf.indexOf(10); nl !== -1; nl = buf.indexOf(10)) {
      this.take(buf.subarray(0, nl));
      this.finishLine();
      buf = buf.subarray(nl + 1);
    }
    if (buf.length > 0) this.take(buf);
  };

  /**
   * The client closed stdin after a last message without its newline: that message is still
   * answered (an over-long one with the error), not dropped unheard. Runs inside the "end"
   * event, so the request is counted before `kt mcp` waits for what is still running.
   */
  private onEnd = (): void => {
    if (this.skipping > 0 || this.size > 0) this.finishLine();
  };

  private take(piece: Buffer): void {
    if (this.skipping > 0 || this.size + piece.length > MAX_LINE_BYTES) {
      const pieces = this.skipping === 0 ? [...this.parts, piece] : [this.tail, piece];
      if (this.skipping === 0) this.head = edge(pieces, "head");
      this.tail = edge(pieces, "tail");
      this.skipping += this.size + piece.length;
      this.parts = [];
      this.size = 0;
      return;
    }
    // Copied: the stream may reuse its chunk's memory once this handler returns.
    if (piece.length > 0) this.parts.push(Buffer.from(piece));
    this.size += piece.length;
  }

  private finishLine(): void {
    if (this.skipping > 0) {
      const size = this.skipping;
      const id = requestId(this.head, this.tail);
      this.skipping = 0;
      this.head = this.tail = Buffer.alloc(0);
      if (id === null) this.onerror?.(new Error(`a message line of ${grouped(size)} bytes (over the limit of ${grouped(MAX_LINE_BYTES)}) was dropped, and no request id could be read in its first or last ${ID_WINDOW / 1024} KB: it is answered with id null`));
      this.reject(id, ErrorCode.InvalidRequest, `Message too large: a line of ${grouped(size)} bytes is over kt mcp's limit of ${grouped(MAX_LINE_BYTES)} bytes, so it was not read. Send smaller messages (a large file is better written from a file with kt write --content-file).`);
      return;
    }
    const bytes = Buffer.concat(this.parts, this.size);
    this.parts = [];
    this.size = 0;
    const decoded = decodeUtf8Exact(bytes);
    if (decoded === null) {
      // JSON-RPC messages are UTF-8; bytes that are not must not reach a tool as U+FFFD.
      this.reject(null, ErrorCode.ParseError, `Parse error: the line is not valid UTF-8 (the first byte that is not UTF-8 is at offset ${invalidUtf8At(bytes)}), so it was not read. Send messages as UTF-8.`);
      return;
    }
    const line = decoded.replace(/\r$/, "");
    if (line.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      this.reject(null, ErrorCode.ParseError, `Parse error: the line is not JSON (${(error as Error).message}).`);
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (!parsed.success) {
      const id = (value as { id?: unknown })?.id;
      this.reject(typeof id === "string" || typeof id === "number" ? id : null, ErrorCode.InvalidRequest, "Invalid Request: the line is JSON but not a JSON-RPC 2.0 message.");
      return;
    }
    this.onmessage?.(parsed.data);
  }

  /** An error reply to a line that never became a message (so the SDK never saw it). */
  private reject(id: string | number | null, code: number, message: string): void {
    this.write(`${JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } })}\n`).catch(() => {});
  }

  private onWriteError = (error: Error): void => {
    this.broken = true;
    this.markGone();
    // EPIPE is the client leaving, not a fault of the server; anything else is said on stderr.
    if ((error as NodeJS.ErrnoException).code !== "EPIPE") this.onerror?.(error);
  };

  send(message: JSONRPCMessage): Promise<void> {
    return this.write(`${JSON.stringify(message)}\n`);
  }

  private write(text: string): Promise<void> {
    if (this.broken) return Promise.resolve();
    return new Promise((resolve) => {
      // The callback runs on success and on failure alike; a failure also reaches onWriteError.
      this.stdout.write(text, () => resolve());
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stdin.off("data", this.onData);
    this.stdin.off("end", this.onEnd);
    this.stdin.pause();
    this.onclose?.();
  }
}
