// The MCP stdio transport of `kt mcp`: one JSON-RPC message per line on stdin, one per line
// on stdout. kt has its own rather than the SDK's because a server must outlive what an
// ordinary client can do to it: a line too long or not JSON is answered with a JSON-RPC
// error and the server keeps serving, and a client gone away (stdout closed: EPIPE) ends
// the server cleanly instead of crashing it.
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, JSONRPCMessageSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { decodeUtf8Exact, invalidUtf8At } from "../core/text.ts";

/** The longest message line kept; a longer one is skipped to its end and answered with an error. */
export const MAX_LINE_BYTES = 10 * 1024 * 1024;

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
      this.skipping = 0;
      this.reject(null, ErrorCode.InvalidRequest, `Message too large: a line of ${size.toLocaleString("en")} bytes is over kt mcp's limit of ${MAX_LINE_BYTES.toLocaleString("en")} bytes, so it was not read. Send smaller messages (a large file is better written from a file with kt write --content-file).`);
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
