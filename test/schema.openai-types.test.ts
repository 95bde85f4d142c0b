// The shapes `kt schema --format openai[-responses]` prints are what the OpenAI SDK's own
// types accept as tool definitions: the output is pasted into a TypeScript file typed with
// the SDK's FunctionTool (Responses API) and ChatCompletionFunctionTool, and tsc must take
// it. (Before SPEC §7.5, kt had no Responses shape: its Chat shape does not type as one.)
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { kt, ROOT, tempDir } from "./_helpers.ts";

function typecheck(source: string): { exitCode: number; output: string } {
  // Inside the repository, so that "openai" resolves from its node_modules.
  const dir = mkdtempSync(join(ROOT, "test", ".types-"));
  try {
    writeFileSync(join(dir, "tools.ts"), source);
    const tsc = Bun.spawnSync(
      [join(ROOT, "node_modules", ".bin", "tsc"), "--ignoreConfig", "--noEmit", "--strict", "--skipLibCheck", "--target", "es2022", "--module", "nodenext", "--moduleResolution", "nodenext", join(dir, "tools.ts")],
      { cwd: ROOT, stdout: "pipe", stderr: "pipe" },
    );
    return { exitCode: tsc.exitCode ?? -1, output: tsc.stdout.toString() + tsc.stderr.toString() };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

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
