// kt with the Anthropic SDK, the fifth client of issue 10: `kt schema --format anthropic`
// is what the SDK's types take as tools, `kt call --format anthropic` (a text result, an
// error and an image) as a tool_result block; and a Messages request made with the SDK
// (its fetch answered locally: no network, no model) carries kt's answer to the model
// unchanged.
import { describe, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { kt, ROOT, tempDir, typecheck } from "./_helpers.ts";

function workspace(tmp: { path: string }) {
  writeFileSync(join(tmp.path, "a.txt"), "alpha\nbeta\n");
  copyFileSync(join(ROOT, "test", "fixtures", "images", "dot.png"), join(tmp.path, "dot.png"));
  return { cwd: tmp.path, stateDir: join(tmp.path, ".state") };
}

const toolUse = (id: string, name: string, input: Record<string, unknown>) => ({ type: "tool_use" as const, id, name, input });

describe("kt with the Anthropic SDK", () => {
  test("kt schema --format anthropic types as Tool[]; kt call's text, error and image results as ToolResultBlockParam", () => {
    using tmp = tempDir();
    const o = workspace(tmp);
    const answer = (input: Record<string, unknown>) => kt(["call", "--format", "anthropic"], { ...o, stdin: JSON.stringify(toolUse("toolu_1", "read", input)) }).stdout.trim();
    const source = [
      'import type Anthropic from "@anthropic-ai/sdk";',
      `export const tools: Anthropic.Messages.Tool[] = ${kt(["schema", "--format", "anthropic"], o).stdout.trim()};`,
      `export const text: Anthropic.Messages.ToolResultBlockParam = ${answer({ file_path: "a.txt" })};`,
      `export const error: Anthropic.Messages.ToolResultBlockParam = ${answer({ file_path: "nope.txt" })};`,
      `export const image: Anthropic.Messages.ToolResultBlockParam = ${answer({ file_path: "dot.png" })};`,
      "",
    ].join("\n");
    const ok = typecheck(source);
    expect(ok.output).toBe("");
    expect(ok.exitCode).toBe(0);
    // The check can fail: kt's OpenAI shape is no Anthropic tool.
    const wrong = typecheck(`import type Anthropic from "@anthropic-ai/sdk";\nexport const t: Anthropic.Messages.Tool[] = ${kt(["schema", "--format", "openai"], o).stdout.trim()};\n`);
    expect(wrong.exitCode).not.toBe(0);
  }, 60_000);

  test("a Messages request made with the SDK carries kt's tool_result blocks (text, error, image) unchanged", async () => {
    using tmp = tempDir();
    const o = workspace(tmp);
    const calls = [toolUse("toolu_1", "read", { file_path: "a.txt" }), toolUse("toolu_2", "Grep", { pattern: "beta", "-n": true }), toolUse("toolu_3", "read", { file_path: "nope.txt" }), toolUse("toolu_4", "read", { file_path: "dot.png" })];
    const results = calls.map((c) => JSON.parse(kt(["call", "--format", "anthropic"], { ...o, stdin: JSON.stringify(c) }).stdout) as Anthropic.Messages.ToolResultBlockParam);
    expect(results.map((r) => r.is_error)).toEqual([false, false, true, false]);
    const bodies: unknown[] = [];
    const fetch = async (_url: unknown, init?: { body?: unknown }) => {
      bodies.push(JSON.parse(String(init?.body)));
      const message = { id: "msg_1", type: "message", role: "assistant", model: "fake", content: [{ type: "text", text: "done" }], stop_reason: "end_turn", stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } };
      return new Response(JSON.stringify(message), { headers: { "content-type": "application/json" } });
    };
    const client = new Anthropic({ apiKey: "not-used", baseURL: "http://127.0.0.1:9", fetch: fetch as never, maxRetries: 0 });
    const tools = JSON.parse(kt(["schema", "--format", "anthropic"], o).stdout) as Anthropic.Messages.Tool[];
    const reply = await client.messages.create({
      model: "fake",
      max_tokens: 100,
      tools,
      messages: [
        { role: "user", content: "Look at a.txt and dot.png." },
        { role: "assistant", content: calls },
        { role: "user", content: results },
      ],
    });
    expect(reply.content as unknown).toEqual([{ type: "text", text: "done" }]);
    const sent = bodies[0] as { tools: unknown; messages: { content: unknown }[] };
    expect(sent.tools).toEqual(tools);
    expect(sent.messages[2]!.content).toEqual(results);
    // What the model gets: kt's text for each call, and the image's bytes.
    const expected = (args: string[]) => kt(args, o).stdout.slice(0, -1);
    expect(results[0]!.content).toBe(expected(["read", "a.txt"]));
    expect(results[1]!.content).toBe(expected(["grep", "beta"]));
    expect(results[2]!.content).toBe(expected(["read", "nope.txt"]));
    expect(results[3]!.content).toEqual([
      { type: "text", text: expected(["read", "dot.png"]) },
      { type: "image", source: { type: "base64", media_type: "image/png", data: readFileSync(join(tmp.path, "dot.png")).toString("base64") } },
    ]);
  }, 60_000);
});
