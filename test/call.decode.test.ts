// Recognizing a tool call's shape (src/adapter/call.ts) and shaping replies
// (src/adapter/reply.ts), in process: the edge cases the goldens do not spell out.
import { describe, expect, test } from "bun:test";
import { decodeCall, decodeCallText } from "../src/adapter/call.ts";
import { anthropicReply, mcpReply, openaiReply, replyText } from "../src/adapter/reply.ts";
import { resolveTool, unknownTool } from "../src/adapter/dispatch.ts";
import type { ToolResult } from "../src/tools/tool.ts";

describe("decodeCall", () => {
  const cases: [string, unknown, { shape: string; name: string; id?: string; value: unknown }][] = [
    ["Anthropic tool_use", { type: "tool_use", id: "toolu_1", name: "read", input: { file_path: "a" } }, { shape: "anthropic", name: "read", id: "toolu_1", value: { file_path: "a" } }],
    ["tool_use without input", { type: "tool_use", id: "toolu_2", name: "read" }, { shape: "anthropic", name: "read", id: "toolu_2", value: {} }],
    ["OpenAI chat tool call", { id: "call_1", type: "function", function: { name: "read", arguments: '{"file_path":"a"}' } }, { shape: "openai", name: "read", id: "call_1", value: { file_path: "a" } }],
    ["OpenAI empty arguments string", { id: "call_2", type: "function", function: { name: "read", arguments: "" } }, { shape: "openai", name: "read", id: "call_2", value: {} }],
    ["OpenAI bare {name, arguments: string}", { name: "read", arguments: '{"file_path":"a"}' }, { shape: "openai", name: "read", value: { file_path: "a" } }],
    ["Responses API function_call (call_id wins over id)", { type: "function_call", id: "fc_1", call_id: "call_9", name: "read", arguments: "{}" }, { shape: "openai", name: "read", id: "call_9", value: {} }],
    ["MCP params", { name: "read", arguments: { file_path: "a" } }, { shape: "mcp", name: "read", value: { file_path: "a" } }],
    ["MCP params without arguments", { name: "read" }, { shape: "mcp", name: "read", value: {} }],
    ["JSON-RPC tools/call with a numeric id", { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "read", arguments: {} } }, { shape: "mcp", name: "read", id: "7", value: {} }],
    ["kt {tool, input, id}", { tool: "write", input: { file_path: "a", content: "" }, id: "x" }, { shape: "kt", name: "write", id: "x", value: { file_path: "a", content: "" } }],
    ["{name, input} without type", { name: "read", input: { file_path: "a" } }, { shape: "anthropic", name: "read", value: { file_path: "a" } }],
  ];
  for (const [label, value, want] of cases) {
    test(label, () => {
      const decoded = decodeCall(value, "stdin");
      if (!decoded.ok) throw new Error(decoded.error.message);
      expect(decoded.call.shape).toBe(want.shape as never);
      expect(decoded.call.name).toBe(want.name);
      expect(decoded.call.id).toBe(want.id as never);
      expect(decoded.call.arguments).toEqual({ ok: true, value: want.value });
    });
  }

  test("a bad arguments string is kept as a reason, not thrown, so the tool can be named first", () => {
    const decoded = decodeCall({ id: "c", type: "function", function: { name: "read", arguments: "{nope" } });
    if (!decoded.ok || decoded.call.arguments.ok) throw new Error("expected a call whose arguments failed to decode");
    expect(decoded.call.name).toBe("read");
    expect(decoded.call.id).toBe("c");
    expect(decoded.call.arguments.why).toMatch(/\S/);
  });

  test("refusals keep the id they found, name the problem and list the shapes", () => {
    const noName = decodeCall({ type: "tool_use", id: "toolu_x", name: "", input: {} }, "line 4");
    expect(noName.ok).toBe(false);
    if (noName.ok) return;
    expect(noName.id).toBe("toolu_x");
    expect(noName.error.code).toBe("INVALID_ARGS");
    expect(noName.error.message).toStartWith('Invalid tool call: line 4 has no tool name (a non-empty string in "name").');
    expect(noName.error.message).toContain('{"tool":"read","input":{…}} (kt)');

    const fnNoName = decodeCall({ id: "call_y", type: "function", function: { arguments: "{}" } });
    expect(!fnNoName.ok && fnNoName.error.message).toContain('"function.name"');
    const rpc = decodeCall({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { arguments: {} } });
    expect(!rpc.ok && rpc.id).toBe("3");
    for (const [text, why] of [["", "stdin was empty"], ["  \n", "stdin was empty"], ["42", "stdin holds a number, not a tool call object"], ["null", "stdin holds null, not a tool call object"]] as const) {
      const r = decodeCallText(text, "stdin");
      expect(!r.ok && r.error.message).toStartWith(`Invalid tool call: ${why}.`);
    }
  });
});

describe("tool names", () => {
  test("subcommand, schema and capitalized names resolve; inherited object keys do not", async () => {
    expect((await resolveTool("read"))?.name).toBe("read");
    expect((await resolveTool("Read"))?.name).toBe("read");
    expect((await resolveTool("WRITE"))?.name).toBe("write");
    for (const name of ["__proto__", "constructor", "toString", "hasOwnProperty", ""]) expect(await resolveTool(name)).toBeUndefined();
  });

  test("unknown names: a near miss is suggested, a far one is not; long names are clipped", async () => {
    expect((await unknownTool("wirte")).message).toStartWith('Unknown tool "wirte". Did you mean "write"? The available tools are: ');
    expect((await unknownTool("deploy")).message).toStartWith('Unknown tool "deploy". The available tools are: ');
    const long = (await unknownTool("x".repeat(5000))).message;
    expect(long.length).toBeLessThan(400);
    expect(long).toContain(`"${"x".repeat(80)}…"`);
  });
});

describe("replies", () => {
  const ok: ToolResult = { content: "hello", isError: false, metadata: { title: "t", durationMs: 1 } };
  const failed: ToolResult = { content: "no", isError: true, error: { name: "KtError", code: "NO_MATCH" }, metadata: { title: "f", durationMs: 2, extra: { a: 1 } } };

  test("each framework's shape", () => {
    expect(anthropicReply(failed, "toolu_1")).toEqual({ type: "tool_result", tool_use_id: "toolu_1", content: "no", is_error: true });
    expect(openaiReply(ok, "call_1")).toEqual({ role: "tool", tool_call_id: "call_1", content: "hello" });
    // SPEC §7.6: text only by default; the complete result when structured.
    expect(mcpReply(ok)).toEqual({ content: [{ type: "text", text: "hello" }], isError: false });
    expect(mcpReply(failed)).toEqual({ content: [{ type: "text", text: "no" }], isError: true });
    expect(mcpReply(ok, { structured: true })).toEqual({
      content: [{ type: "text", text: "hello" }],
      isError: false,
      structuredContent: { text: "hello", isError: false, metadata: { title: "t", durationMs: 1 } },
    });
    expect(mcpReply(failed, { structured: true })).toEqual({
      content: [{ type: "text", text: "no" }],
      isError: true,
      structuredContent: { text: "no", isError: true, error: { name: "KtError", code: "NO_MATCH" }, metadata: { title: "f", durationMs: 2, extra: { a: 1 } } },
    });
  });

  test("the text form is the content plus one newline; the others one line of JSON", () => {
    const multi: ToolResult = { ...ok, content: "a\nb" };
    expect(replyText(multi, "text", "c")).toBe("a\nb\n");
    for (const format of ["json", "anthropic", "openai", "mcp"] as const) {
      const line = replyText(multi, format, "c");
      expect(line.endsWith("\n")).toBe(true);
      expect(line.slice(0, -1)).not.toContain("\n");
    }
  });
});
