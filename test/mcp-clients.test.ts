// `kt mcp` checked by clients that share no code with the SDK kt is built on: the Vercel
// AI SDK's own MCP client (@ai-sdk/mcp, its own JSON-RPC and stdio transport), and a raw
// JSON-RPC exchange over the compiled binary's stdin and stdout, line by line.
import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createMCPClient } from "@ai-sdk/mcp";
import { StdioMCPTransport } from "@ai-sdk/mcp/mcp-stdio";
import { loadAllTools, schemaName, TOOL_NAMES } from "../src/tools/registry.ts";
import { EXPECTED_ANNOTATIONS } from "./_annotations.ts";
import { KT, tempDir } from "./_helpers.ts";

function workspace(tmp: { path: string }): { work: string; env: Record<string, string> } {
  const work = join(tmp.path, "work");
  mkdirSync(work);
  writeFileSync(join(work, "a.txt"), "alpha\nbeta\n");
  return { work, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", NO_COLOR: "1", KT_STATE_DIR: join(tmp.path, "state") } };
}

describe("kt mcp with the AI SDK's independent MCP client", () => {
  test("lists the tools with annotations and calls read, a failing read and an outside path", async () => {
    using tmp = tempDir();
    const { work, env } = workspace(tmp);
    const client = await createMCPClient({ transport: new StdioMCPTransport({ command: KT, args: ["mcp"], cwd: work, env }) });
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual((await loadAllTools()).map(schemaName));
      for (const t of tools) expect(t.annotations as unknown).toEqual(EXPECTED_ANNOTATIONS[t.name]);

      const ok = await client.callTool({ name: "read", arguments: { file_path: "a.txt" } });
      expect(ok.isError).toBe(false);
      expect(ok.content).toEqual([{ type: "text", text: `${work}/a.txt\n     1→alpha\n     2→beta` }]);
      expect(ok.structuredContent).toMatchObject({ extra: { lines: 2, totalLines: 2 } });

      const missing = await client.callTool({ name: "read", arguments: { file_path: "nope.txt" } });
      expect(missing.isError).toBe(true);
      expect(missing.structuredContent).toMatchObject({ error: { code: "FILE_NOT_FOUND" } });

      const outside = await client.callTool({ name: "read", arguments: { file_path: "/etc/hostname" } });
      expect(outside.isError).toBe(true);
      expect(outside.content).toEqual([{ type: "text", text: `Refusing to access /etc/hostname: it is outside the root directory ${work}, and kt is confined to that directory. Use a path inside ${work}.` }]);

      // The AI SDK's own tool wrappers, as an agent built on it would run them.
      const aiTools = await client.tools();
      const viaAiSdk = await aiTools.read!.execute!({ file_path: "a.txt" }, { toolCallId: "call_1", messages: [], context: {} });
      expect(viaAiSdk).toMatchObject({ content: [{ type: "text", text: `${work}/a.txt\n     1→alpha\n     2→beta` }], isError: false });
    } finally {
      await client.close();
    }
  });
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
    expect(byId.get(3)!.result).toMatchObject({ isError: false, content: [{ type: "text", text: `${work}/a.txt\n     1→alpha\n     2→beta` }] });
    expect(byId.get("four")!.result).toMatchObject({ isError: true, structuredContent: { error: { code: "OUTSIDE_ROOT" } } });
    expect(byId.get(5)!.result).toEqual({});
    expect(byId.get(6)!.error?.code).toBe(-32601);
    expect(byId.get(7)!.result).toMatchObject({ isError: false, content: [{ type: "text", text: `${work}/a.txt\n     2→beta` }] });
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
