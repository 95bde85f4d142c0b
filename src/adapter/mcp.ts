// kt's tools as a Model Context Protocol server (SPEC §5), on the official SDK's
// low-level Server: the tools' input schemas are already JSON Schema (derived from zod
// once, in tools/jsonschema.ts), so they are listed as they are, never re-declared.
import { instructionsLine } from "../sandbox/prose.ts";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";
import { shape } from "./shape.ts";
import { loadAllTools } from "../tools/registry.ts";
import type { ToolContext } from "../tools/tool.ts";
import { internalResult, runCall } from "./dispatch.ts";
import { MCP_OUTPUT_SCHEMA, mcpReply } from "./reply.ts";

export interface McpOptions {
  version: string;
  /** Everything but the call id: each call gets a fresh one. `root` must be set. */
  base: Omit<ToolContext, "callId">;
  newCallId(): string;
  /** SPEC §7.6: an outputSchema per tool and the complete result as structuredContent. */
  structured?: boolean;
  /** Aborted when the client is gone (SPEC §8.7): every call still running is cancelled. */
  abort?: AbortSignal;
}

export interface McpServer {
  server: Server;
  /** Resolves once every request received so far has had its response written. */
  idle(): Promise<void>;
}

/**
 * The server never sends requests that need JSON Schema validation (no elicitation), so
 * the SDK's default validator (Ajv, compiled at construction) is replaced by one that is
 * never used rather than paid for at every start.
 */
const noValidator: jsonSchemaValidator = {
  getValidator() {
    throw new Error("kt mcp validates no JSON Schema on the server side");
  },
};

/** How often a long call reports progress; KT_MCP_PROGRESS_MS exists for tests. */
function progressInterval(): number {
  const ms = Number(process.env.KT_MCP_PROGRESS_MS);
  return Number.isFinite(ms) && ms >= 50 ? ms : 10_000;
}

export async function createMcpServer(opts: McpOptions): Promise<Server> {
  const tools = await loadAllTools();
  const structured = opts.structured ?? false;
  // A tool whose results may hold an image lists no outputSchema: the protocol then lets its
  // image results go without structuredContent, which clients that prefer it would hand the
  // model instead of the image (SPEC §8.8; see mcpReply).
  const listed = tools.map((tool) => ({ ...shape(tool, "mcp"), ...(structured && !tool.showsImages ? { outputSchema: MCP_OUTPUT_SCHEMA } : {}) }) as McpTool);
  const { base } = opts;
  const server = new Server(
    { name: "kt", version: opts.version },
    {
      capabilities: { tools: { listChanged: false } },
      instructions: `kt file and shell tools. File tools are confined to ${base.root}; relative paths resolve against ${base.cwd}. Read a file before you write or edit it. ${instructionsLine(base.sandbox)}`,
      jsonSchemaValidator: noValidator,
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listed }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args } = request.params;
    const signal = opts.abort ? AbortSignal.any([extra.signal, opts.abort]) : extra.signal;
    const ctx: ToolContext = { ...base, callId: opts.newCallId(), signal };
    // A client that asked for progress hears from a long call (a bash command can take its
    // 120 s budget; SDK clients time a request out after 60 s unless progress resets it).
    const token = request.params._meta?.progressToken;
    let beats = 0;
    const heartbeat = token === undefined ? undefined : setInterval(() => {
      beats++;
      extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: beats, message: `${name} is still running` } }).catch(() => {});
    }, progressInterval());
    try {
      const result = await runCall({ shape: "mcp", name, arguments: { ok: true, value: args ?? {} } }, ctx).catch((error: unknown) =>
        internalResult(name, error, base.warn),
      );
      return mcpReply(result, { structured });
    } finally {
      if (heartbeat) clearInterval(heartbeat);
    }
  });
  return server;
}

/**
 * Connects a server to `transport`, counting requests in and responses out so that the
 * caller can let every started call answer before it exits.
 */
export async function serve(opts: McpOptions, transport: Transport): Promise<McpServer> {
  const server = await createMcpServer(opts);
  await server.connect(transport);
  let pending = 0;
  let waiters: Array<() => void> = [];
  const receive = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if ("method" in message && "id" in message) pending++;
    receive?.(message, extra);
  };
  const send = transport.send.bind(transport);
  transport.send = async (message, options) => {
    try {
      await send(message, options);
    } finally {
      if (("result" in message || "error" in message) && message.id !== undefined && --pending <= 0) {
        pending = 0;
        for (const wake of waiters.splice(0)) wake();
      }
    }
  };
  return {
    server,
    idle: () => (pending === 0 ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve))),
  };
}
