// The shapes `kt schema --format openai[-responses]` prints are what the OpenAI SDK's own
// types accept as tool definitions: the output is pasted into a TypeScript file typed with
// the SDK's FunctionTool (Responses API) and ChatCompletionFunctionTool, and tsc must take
// it; kt call's openai and openai-responses answers likewise. (Before SPEC §7.5, kt had no
// Responses shape: its Chat shape does not type as one.)
import { describe, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { kt, ROOT, tempDir, typecheck } from "./_helpers.ts";

describe("kt call's answers typed with the OpenAI SDK", () => {
  test("openai is a ChatCompletionToolMessageParam; openai-responses (text, error, image) a ResponseInputItem.FunctionCallOutput", () => {
    using tmp = tempDir();
    writeFileSync(join(tmp.path, "a.txt"), "alpha\n");
    copyFileSync(join(ROOT, "test", "fixtures", "images", "dot.png"), join(tmp.path, "dot.png"));
    const o = { cwd: tmp.path, stateDir: join(tmp.path, "state") };
    const chat = (file: string) => kt(["call", "--format", "openai"], { ...o, stdin: JSON.stringify({ id: "call_1", type: "function", function: { name: "read", arguments: JSON.stringify({ file_path: file }) } }) }).stdout.trim();
    const responses = (file: string) => kt(["call", "--format", "openai-responses"], { ...o, stdin: JSON.stringify({ type: "function_call", call_id: "call_2", name: "read", arguments: JSON.stringify({ file_path: file }) }) }).stdout.trim();
    const image = responses("dot.png");
    expect(image).toContain('"input_image"');
    const source = [
      'import type OpenAI from "openai";',
      `export const chatText: OpenAI.Chat.Completions.ChatCompletionToolMessageParam = ${chat("a.txt")};`,
      `export const chatError: OpenAI.Chat.Completions.ChatCompletionToolMessageParam = ${chat("nope.txt")};`,
      `export const chatImage: OpenAI.Chat.Completions.ChatCompletionToolMessageParam = ${chat("dot.png")};`,
      `export const text: OpenAI.Responses.ResponseInputItem.FunctionCallOutput = ${responses("a.txt")};`,
      `export const error: OpenAI.Responses.ResponseInputItem.FunctionCallOutput = ${responses("nope.txt")};`,
      `export const image: OpenAI.Responses.ResponseInputItem.FunctionCallOutput = ${image};`,
      "",
    ].join("\n");
    const ok = typecheck(source);
    expect(ok.output).toBe("");
    expect(ok.exitCode).toBe(0);
    // The check can fail: an Anthropic tool_result is no Chat tool message.
    const anthropic = kt(["call", "--format", "anthropic"], { ...o, stdin: JSON.stringify({ type: "tool_use", id: "toolu_1", name: "read", input: { file_path: "a.txt" } }) }).stdout.trim();
    expect(typecheck(`import type OpenAI from "openai";\nexport const t: OpenAI.Chat.Completions.ChatCompletionToolMessageParam = ${anthropic};\n`).exitCode).not.toBe(0);
  }, 60_000);
});

describe("kt schema output typed with the OpenAI SDK", () => {
  test("openai-responses (plain and --strict) is FunctionTool[]; openai (plain and --strict) is ChatCompletionFunctionTool[]; openai is not FunctionTool[]", () => {
    using tmp = tempDir();
    const o = { cwd: tmp.path, stateDir: join(tmp.path, "state") };
    const out = (...args: string[]) => kt(["schema", ...args], o).stdout.trim();
    const source = [
      'import type OpenAI from "openai";',
      `export const responses: OpenAI.Responses.FunctionTool[] = ${out("--format", "openai-responses")};`,
      `export const responsesStrict: OpenAI.Responses.FunctionTool[] = ${out("--format", "openai-responses", "--strict")};`,
      `export const chat: OpenAI.Chat.Completions.ChatCompletionFunctionTool[] = ${out("--format", "openai")};`,
      `export const chatStrict: OpenAI.Chat.Completions.ChatCompletionFunctionTool[] = ${out("--format", "openai", "--strict")};`,
      "",
    ].join("\n");
    const ok = typecheck(source);
    expect(ok.output).toBe("");
    expect(ok.exitCode).toBe(0);
    // The check can fail: the Chat shape is refused where a Responses tool is expected.
    const wrong = typecheck(`import type OpenAI from "openai";\nexport const t: OpenAI.Responses.FunctionTool[] = ${out("--format", "openai")};\n`);
    expect(wrong.exitCode).not.toBe(0);
    expect(wrong.output).toContain("error TS2353: Object literal may only specify known properties, and '\"function\"' does not exist in type 'FunctionTool'.");
  }, 60_000);
});
