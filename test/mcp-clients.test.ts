// `kt mcp` driven by the clients agent frameworks really use (SPEC §7.6), each asserting
// that what the client hands to the model is exactly kt's text — for a read, a grep, an
// edit and an error — where "kt's text" is what `kt <tool>` prints for the same call:
// - the official MCP SDK client (what most frameworks are built on);
// - the Vercel AI SDK's own MCP client (@ai-sdk/mcp) and its toModelOutput;
// - the OpenAI Agents SDK's MCPServerStdio, with and without useStructuredContent, run by
//   a real Agent whose OpenAI Responses model gets a fake fetch (no network, no model), so
//   the request body it would send to the API is what is checked;
// - LangChain's MCP adapters with default options, run by LangGraph's ToolNode;
// - the MCP Inspector's CLI mode;
// and a raw JSON-RPC exchange over the compiled binary's stdin and stdout.
import { describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createMCPClient } from "@ai-sdk/mcp";
import { StdioMCPTransport } from "@ai-sdk/mcp/mcp-stdio";
import { AIMessage } from "@langchain/core/messages";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { MultiServerMCPClient } from "@langchain/mcp-adapters";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Agent, getAllMcpTools, MCPServerStdio, run, setTracingDisabled } from "@openai/agents";
import { OpenAIResponsesModel } from "@openai/agents-openai";
import OpenAI from "openai";
import { loadAllTools, schemaName, TOOL_NAMES } from "../src/tools/registry.ts";
import { EXPECTED_ANNOTATIONS } from "./_annotations.ts";
import { KT, kt, ROOT, tempDir } from "./_helpers.ts";
import { strictViolations } from "./_strict.ts";

setTracingDisabled(true);

interface Workspace {
  work: string;
  state: string;
  env: Record<string, string>;
  /** Puts the files back as they were before any call. */
  reset(): void;
}

function workspace(tmp: { path: string }): Workspace {
  const work = join(tmp.path, "work");
  const state = join(tmp.path, "state");
  mkdirSync(join(work, "src"), { recursive: true });
  const reset = () => {
    writeFileSync(join(work, "a.txt"), "alpha\nbeta\n");
    writeFileSync(join(work, "src", "b.ts"), "export const beta = 2;\n");
    // grep lists files newest first: fixed times keep its order the same on every reset.
    utimesSync(join(work, "a.txt"), 2_000_000, 2_000_000);
    utimesSync(join(work, "src", "b.ts"), 1_000_000, 1_000_000);
  };
  reset();
  return { work, state, env: { PATH: process.env.PATH ?? "", HOME: tmp.path, NO_COLOR: "1", KT_STATE_DIR: state }, reset };
}

/** The calls every client makes, in order: a read, a grep, an edit (after the read) and an error. */
const CALLS: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
  ["read", { file_path: "a.txt" }],
  ["grep", { pattern: "beta" }],
  ["edit", { file_path: "a.txt", old_string: "beta", new_string: "gamma" }],
  ["read", { file_path: "nope.txt" }],
];

/** What `kt <tool>` prints for each call of CALLS, run in order in a fresh session; the files are reset afterwards. */
function ktTexts(ws: Workspace): string[] {
  const texts = CALLS.map(([tool, args], i) => {
    const r = kt([tool], { cwd: ws.work, stateDir: join(ws.state, "cli"), stdin: JSON.stringify(args) });
    expect(r.exitCode, `${tool} ${JSON.stringify(args)}`).toBe(i === 3 ? 1 : 0);
    expect(r.stdout.endsWith("\n")).toBe(true);
    return r.stdout.slice(0, -1);
  });
  expect(texts[1]).toContain("beta");
  expect(texts[2]).toStartWith(`Edited ${ws.work}/a.txt`);
  expect(texts[3]).toStartWith(`File not found: ${ws.work}/nope.txt.`);
  ws.reset();
  return texts;
}

describe("what each client hands the model is exactly kt's text", () => {
  test("the official MCP SDK client", async () => {
    using tmp = tempDir();
    const ws = workspace(tmp);
    const expected = ktTexts(ws);
    const client = new Client({ name: "kt-test", version: "0" });
    await client.connect(new StdioClientTransport({ command: KT, args: ["mcp"], cwd: ws.work, env: ws.env, stderr: "pipe" }));
    try {
      for (const [i, [name, args]] of CALLS.entries()) {
        const result = await client.callTool({ name, arguments: args });
        expect(result).toEqual({ content: [{ type: "text", text: expected[i]! }], isError: i === 3 });
      }
    } finally {
      await client.close();
    }
  });

  test("the Vercel AI SDK's MCP client: tools, annotations, and toModelOutput of each result", async () => {
    using tmp = tempDir();
    const ws = workspace(tmp);
    const expected = ktTexts(ws);
    const client = await createMCPClient({ transport: new StdioMCPTransport({ command: KT, args: ["mcp"], cwd: ws.work, env: ws.env }) });
    try {
      const { tools: listed } = await client.listTools();
      expect(listed.map((t) => t.name)).toEqual((await loadAllTools()).map(schemaName));
      for (const t of listed) expect(t.annotations as unknown).toEqual(EXPECTED_ANNOTATIONS[t.name]);
      const tools = await client.tools();
      for (const [i, [name, args]] of CALLS.entries()) {
        const tool = tools[name]!;
        const output = await tool.execute!(args, { toolCallId: `call_${i}`, messages: [], context: {} });
        // What generateText/streamText send the model for a tool result.
        const forModel = await tool.toModelOutput!({ toolCallId: `call_${i}`, input: args, output: output as never });
        expect(forModel).toEqual({ type: "content", value: [{ type: "text", text: expected[i]! }] });
      }
    } finally {
      await client.close();
    }
  });

  /**
   * Runs a real Agent whose model plays CALLS one per turn, through the SDK's OpenAI
   * Responses model with a fetch that answers locally; returns each function_call_output
   * as the request body carried it to the API.
   */
  async function agentsOutputs(ws: Workspace, server: { useStructuredContent?: boolean; structured?: boolean }, calls = CALLS): Promise<unknown[]> {
    const outputs: unknown[] = [];
    let turn = 0;
    const fetch = async (_url: unknown, init?: { body?: unknown }) => {
      const body = JSON.parse(String(init?.body)) as { input: Array<{ type?: string; output?: unknown }> };
      const last = body.input.at(-1);
      if (last?.type === "function_call_output") outputs.push(last.output);
      const next = calls[turn];
      const output = next
        ? [{ type: "function_call", id: `fc_${turn}`, call_id: `call_${turn}`, name: next[0], arguments: JSON.stringify(next[1]), status: "completed" }]
        : [{ type: "message", id: "msg", role: "assistant", status: "completed", content: [{ type: "output_text", text: "done", annotations: [] }] }];
      turn++;
      const usage = { input_tokens: 1, output_tokens: 1, total_tokens: 2, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } };
      return new Response(JSON.stringify({ id: `resp_${turn}`, object: "response", created_at: 0, status: "completed", model: "fake", output, usage }), {
        headers: { "content-type": "application/json" },
      });
    };
    const openai = new OpenAI({ apiKey: "not-used", baseURL: "http://127.0.0.1:9/v1", fetch: fetch as never, maxRetries: 0 });
    const mcp = new MCPServerStdio({
      command: KT,
      args: ["mcp", ...(server.structured ? ["--structured"] : [])],
      cwd: ws.work,
      env: ws.env,
      ...(server.useStructuredContent === undefined ? {} : { useStructuredContent: server.useStructuredContent }),
    });
    await mcp.connect();
    try {
      const agent = new Agent({ name: "kt", instructions: "Use the tools.", model: new OpenAIResponsesModel(openai, "fake"), mcpServers: [mcp] });
      const result = await run(agent, "Go.", { maxTurns: calls.length + 2 });
      expect(result.finalOutput).toBe("done");
    } finally {
      await mcp.close();
    }
    expect(outputs).toHaveLength(calls.length);
    return outputs;
  }

  for (const useStructuredContent of [undefined, true]) {
    test(`the OpenAI Agents SDK's MCPServerStdio${useStructuredContent ? " with useStructuredContent" : ""}: the function_call_output sent to the API`, async () => {
      using tmp = tempDir();
      const ws = workspace(tmp);
      const expected = ktTexts(ws);
      const outputs = await agentsOutputs(ws, { useStructuredContent });
      expect(outputs).toEqual(expected.map((text) => [{ type: "input_text", text }]));
    });
  }

  test("the OpenAI Agents SDK with useStructuredContent and kt mcp --structured: the JSON it sends holds kt's text whole", async () => {
    using tmp = tempDir();
    const ws = workspace(tmp);
    const expected = ktTexts(ws);
    const outputs = await agentsOutputs(ws, { useStructuredContent: true, structured: true });
    // Successes go out as the structured result's JSON; the SDK sends an error's content.
    for (const [i, output] of outputs.entries()) {
      if (i === 3) expect(output).toEqual([{ type: "input_text", text: expected[i]! }]);
      else expect((JSON.parse(output as string) as { text: string }).text).toBe(expected[i]!);
    }
  });

  test("the OpenAI Agents SDK with useStructuredContent and kt mcp --structured: an image read reaches the model as an image", async () => {
    // A client that prefers structuredContent hands the model its JSON: an image result
    // carries none, so the SDK sends its content, the picture included (SPEC §8.8).
    using tmp = tempDir();
    const ws = workspace(tmp);
    copyFileSync(join(ROOT, "test", "fixtures", "images", "dot.png"), join(ws.work, "dot.png"));
    const text = kt(["read", "dot.png"], { cwd: ws.work, stateDir: join(ws.state, "cli") }).stdout.slice(0, -1);
    const png = readFileSync(join(ws.work, "dot.png")).toString("base64");
    const outputs = await agentsOutputs(ws, { useStructuredContent: true, structured: true }, [["read", { file_path: "dot.png" }]]);
    expect(outputs).toEqual([[{ type: "input_text", text }, { type: "input_image", image_url: `data:image/png;base64,${png}` }]]);
  });

  test("LangChain's MCP adapters with default options, run by LangGraph's ToolNode", async () => {
    using tmp = tempDir();
    const ws = workspace(tmp);
    const expected = ktTexts(ws);
    const client = new MultiServerMCPClient({ mcpServers: { kt: { transport: "stdio", command: KT, args: ["mcp"], cwd: ws.work, env: ws.env } } });
    try {
      const node = new ToolNode(await client.getTools());
      for (const [i, [name, args]] of CALLS.entries()) {
        const { messages } = (await node.invoke({ messages: [new AIMessage({ content: "", tool_calls: [{ id: `call_${i}`, name, args }] })] })) as { messages: { content: unknown; status?: string }[] };
        expect(messages).toHaveLength(1);
        if (i < 3) {
          expect(messages[0]!.content).toBe(expected[i]!);
          expect(messages[0]!.status).toBe("success");
        } else {
          // LangChain's adapter turns every isError result into an exception, and ToolNode
          // hands the model its own wrapping of it: kt's text is inside, whole (see README).
          expect(messages[0]!.content).toBe(`Error: MCP tool '${name}' on server 'kt' returned an error: ${expected[i]!}\n Please fix your mistakes.`);
          expect(messages[0]!.status).toBe("error");
        }
      }
    } finally {
      await client.close();
    }
  });

  test("LangChain's MCP adapters pass a strict-mode call (offset: null, limit: null) to kt, and the model gets kt's text", async () => {
    // LangChain checks the model's call against the listed input schema before kt sees it:
    // with a schema that refused null, this call never reached kt (SPEC §8.8).
    using tmp = tempDir();
    const ws = workspace(tmp);
    const expected = ktTexts(ws)[0]!;
    const client = new MultiServerMCPClient({ mcpServers: { kt: { transport: "stdio", command: KT, args: ["mcp"], cwd: ws.work, env: ws.env } } });
    try {
      const node = new ToolNode(await client.getTools());
      const args = { file_path: "a.txt", offset: null, limit: null };
      const { messages } = (await node.invoke({ messages: [new AIMessage({ content: "", tool_calls: [{ id: "call_null", name: "read", args }] })] })) as { messages: { content: unknown; status?: string }[] };
      expect(messages).toHaveLength(1);
      expect(messages[0]!.content).toBe(expected);
      expect(messages[0]!.status).toBe("success");
    } finally {
      await client.close();
    }
  });

  test("the OpenAI Agents SDK's own strict conversion of every kt MCP tool keeps to OpenAI's strict-mode rules", async () => {
    using tmp = tempDir();
    const ws = workspace(tmp);
    const mcp = new MCPServerStdio({ command: KT, args: ["mcp"], cwd: ws.work, env: ws.env });
    await mcp.connect();
    try {
      const converted = (await getAllMcpTools({ mcpServers: [mcp], convertSchemasToStrict: true } as never)) as unknown as Array<{ name: string; strict: boolean; parameters: Record<string, unknown> }>;
      expect(converted.map((t) => t.name)).toEqual((await loadAllTools()).map(schemaName));
      for (const t of converted) {
        // The SDK falls back to a non-strict tool (with a warning) when it cannot convert one.
        expect(t.strict, t.name).toBe(true);
        expect(strictViolations(t.parameters), t.name).toEqual([]);
      }
    } finally {
      await mcp.close();
    }
  });

  test("the MCP Inspector CLI (--cli), offline", async () => {
    using tmp = tempDir();
    const ws = workspace(tmp);
    const expected = ktTexts(ws);
    const inspector = join(ROOT, "node_modules", ".bin", "mcp-inspector");
    // Each inspector run starts its own server: a named session carries the read over to
    // the edit. The read, the grep and the error run at once (the inspector takes seconds
    // to start), the edit after them.
    const inspect = async ([name, args]: (typeof CALLS)[number]) => {
      const argv = [inspector, "--cli", KT, "mcp", "-e", `KT_STATE_DIR=${ws.state}`, "-e", "KT_SESSION=inspector", "--method", "tools/call", "--tool-name", name];
      for (const [key, value] of Object.entries(args)) argv.push("--tool-arg", `${key}=${String(value)}`);
      const proc = Bun.spawn(argv, { cwd: ws.work, env: ws.env, stdout: "pipe", stderr: "pipe" });
      const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
      expect(code, err).toBe(0);
      return JSON.parse(out) as unknown;
    };
    const [read, grep, error] = await Promise.all([CALLS[0]!, CALLS[1]!, CALLS[3]!].map(inspect));
    const results = [read, grep, await inspect(CALLS[2]!), error];
    expect(results).toEqual(expected.map((text, i) => ({ content: [{ type: "text", text }], isError: i === 3 })));
  }, 120_000);
});

interface RpcMessage {
  jsonrpc: "2.0";
  id?: number | string | null;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

describe("kt mcp over raw JSON-RPC on stdio", () => {
  test("every stdout line is a JSON-RPC message answering a request, in a full session", async () => {
    using tmp = tempDir();
    const { work, env } = workspace(tmp);
    const requests = [
      { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } } },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
      { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "read", arguments: { file_path: "a.txt" } } },
      { jsonrpc: "2.0", id: "four", method: "tools/call", params: { name: "write", arguments: { file_path: "../x.txt", content: "x" } } },
      { jsonrpc: "2.0", id: 5, method: "ping" },
      { jsonrpc: "2.0", id: 6, method: "no/such/method" },
      // The last call is sent just before stdin closes: it must still be answered.
      { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "read", arguments: { file_path: "a.txt", offset: 2 } } },
    ];
    const proc = Bun.spawn([KT, "mcp"], { cwd: work, env, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    proc.stdin.write(requests.map((r) => JSON.stringify(r)).join("\n") + "\n");
    await proc.stdin.end();
    const [stdout, exitCode] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    expect(exitCode).toBe(0);
    expect(stdout.endsWith("\n")).toBe(true);
    const lines = stdout.slice(0, -1).split("\n");
    const messages = lines.map((line) => JSON.parse(line) as RpcMessage);
    for (const m of messages) expect(m.jsonrpc).toBe("2.0");
    const byId = new Map(messages.map((m) => [m.id, m]));
    expect([...byId.keys()].sort((a, b) => String(a).localeCompare(String(b)))).toEqual([1, 2, 3, 5, 6, 7, "four"]);

    expect(byId.get(1)!.result).toMatchObject({ protocolVersion: "2025-06-18", serverInfo: { name: "kt" }, capabilities: { tools: {} } });
    const tools = byId.get(2)!.result!.tools as { name: string; inputSchema: { type: string } }[];
    expect(tools.map((t) => t.name)).toEqual((await loadAllTools()).map(schemaName));
    expect(byId.get(3)!.result).toEqual({ isError: false, content: [{ type: "text", text: `${work}/a.txt\n     1→alpha\n     2→beta` }] });
    expect(byId.get("four")!.result).toMatchObject({ isError: true, content: [{ type: "text", text: expect.stringContaining("outside the root directory") }] });
    expect(byId.get(5)!.result).toEqual({});
    expect(byId.get(6)!.error?.code).toBe(-32601);
    expect(byId.get(7)!.result).toEqual({ isError: false, content: [{ type: "text", text: `${work}/a.txt\n     2→beta` }] });
  });

  test.skipIf(!TOOL_NAMES.includes("bash"))("a call still running when stdin closes is answered before the server exits", async () => {
    using tmp = tempDir();
    const { work, env } = workspace(tmp);
    const proc = Bun.spawn([KT, "mcp"], { cwd: work, env, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    proc.stdin.write(
      [
        { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } } },
        { jsonrpc: "2.0", method: "notifications/initialized" },
        { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "bash", arguments: { command: "sleep 0.7; echo slow-done" } } },
      ]
        .map((r) => JSON.stringify(r))
        .join("\n") + "\n",
    );
    await proc.stdin.end();
    const [stdout, exitCode] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    expect(exitCode).toBe(0);
    const answer = stdout.trimEnd().split("\n").map((l) => JSON.parse(l) as RpcMessage).find((m) => m.id === 2);
    expect(answer?.result).toMatchObject({ isError: false });
    expect(JSON.stringify(answer?.result?.content)).toContain("slow-done");
  });
});
