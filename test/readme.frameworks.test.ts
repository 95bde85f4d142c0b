// The README's "In agent frameworks" snippets, run as a user would paste them: each code
// block is taken from README.md verbatim and run with the compiled kt first on PATH. Where a
// snippet talks to OpenAI, OPENAI_BASE_URL points it at a local stand-in for the API (no
// network, no model) that plays a short script of tool calls and keeps what the client sent
// back: the tool results must be exactly kt's text.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { KT, kt, ROOT, tempDir, type TempDir } from "./_helpers.ts";

/** Every fenced block of the README section, with its language. */
function snippets(): { lang: string; code: string }[] {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const start = readme.indexOf("\n## In agent frameworks\n");
  expect(start).toBeGreaterThan(0);
  const end = readme.indexOf("\n## ", start + 1);
  const section = readme.slice(start, end);
  return [...section.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1]!, code: m[2]! }));
}

/** The one snippet of the section that contains `marker`. */
function snippet(marker: string): { lang: string; code: string } {
  const found = snippets().filter((s) => s.code.includes(marker));
  expect(found.map((s) => s.code.slice(0, 60))).toHaveLength(1);
  return found[0]!;
}

interface Call {
  name: string;
  args: Record<string, unknown>;
}

/**
 * A stand-in for the OpenAI API on 127.0.0.1: the Responses API and Chat Completions, both
 * answering with the next call of `script` until the conversation holds a result for each,
 * then with a message "done".
 */
class FakeOpenAI {
  script: Call[] = [];
  /** The tool results of the last request, as the client sent them. */
  results: unknown[] = [];
  /** The `tools` of every request. */
  tools: unknown[] = [];
  readonly server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (req) => this.answer(req) });
  get url(): string {
    return `http://127.0.0.1:${this.server.port}/v1`;
  }

  private async answer(req: Request): Promise<Response> {
    const path = new URL(req.url).pathname;
    const body = (await req.json()) as { tools?: unknown; input?: unknown; messages?: { role: string; content: unknown }[]; model: string };
    this.tools.push(body.tools);
    const usage = { input_tokens: 1, output_tokens: 1, total_tokens: 2, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } };
    if (path.endsWith("/responses")) {
      const input = Array.isArray(body.input) ? (body.input as { type?: string; output?: unknown }[]) : [];
      this.results = input.filter((i) => i.type === "function_call_output").map((i) => i.output);
      const next = this.script[this.results.length];
      const output = next
        ? [{ type: "function_call", id: `fc_${this.results.length}`, call_id: `call_${this.results.length}`, name: next.name, arguments: JSON.stringify(next.args), status: "completed" }]
        : [{ type: "message", id: "msg_1", role: "assistant", status: "completed", content: [{ type: "output_text", text: "done", annotations: [] }] }];
      return Response.json({ id: `resp_${this.results.length}`, object: "response", created_at: 0, status: "completed", model: body.model, output, usage });
    }
    if (path.endsWith("/chat/completions")) {
      const tool = (body.messages ?? []).filter((m) => m.role === "tool");
      this.results = tool.map((m) => m.content);
      const next = this.script[tool.length];
      const message = next
        ? { role: "assistant", content: null, tool_calls: [{ id: `call_${tool.length}`, type: "function", function: { name: next.name, arguments: JSON.stringify(next.args) } }] }
        : { role: "assistant", content: "done" };
      return Response.json({
        id: `chatcmpl_${tool.length}`,
        object: "chat.completion",
        created: 0,
        model: body.model,
        choices: [{ index: 0, message, finish_reason: next ? "tool_calls" : "stop", logprobs: null }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      });
    }
    return new Response(`no ${path} here`, { status: 404 });
  }

  reset(script: Call[]): void {
    this.script = script;
    this.results = [];
    this.tools = [];
  }
}

let api: FakeOpenAI;
let tmp: TempDir;
let work: string;
let env: Record<string, string>;

beforeAll(() => {
  api = new FakeOpenAI();
  tmp = tempDir();
  work = join(tmp.path, "work");
  mkdirSync(join(work, "src"), { recursive: true });
  writeFileSync(join(work, "src", "main.ts"), 'export { parse } from "./parse.ts";\n');
  writeFileSync(join(work, "src", "parse.ts"), "export function getUser(id: string) {\n  return { id };\n}\n");
  env = {
    PATH: `${dirname(KT)}:${process.env.PATH ?? ""}`,
    HOME: tmp.path,
    KT_STATE_DIR: join(tmp.path, "state"),
    OPENAI_API_KEY: "sk-not-used",
    OPENAI_BASE_URL: api.url,
    // The Agents SDK would send traces to OpenAI.
    OPENAI_AGENTS_DISABLE_TRACING: "1",
    npm_config_offline: "true",
    npm_config_update_notifier: "false",
  };
});

afterAll(() => {
  api.server.stop(true);
  tmp[Symbol.dispose]();
});

/** What `kt <tool>` prints for a call (its own state directory), without the final newline. */
function ktText(tool: string, args: Record<string, unknown>, cwd = work): string {
  const r = kt([tool], { cwd, stateDir: join(tmp.path, "reference-state"), stdin: JSON.stringify(args) });
  return r.stdout.slice(0, -1);
}

/** Runs a TypeScript snippet with Bun from a file inside the repository (so its imports resolve), in `cwd`. */
async function runTs(code: string, cwd = work): Promise<{ stdout: string; stderr: string; exitCode: number }> {
  const dir = mkdtempSync(join(ROOT, "test", ".readme-"));
  try {
    const file = join(dir, "snippet.ts");
    writeFileSync(file, code);
    const proc = Bun.spawn([process.execPath, file], { cwd, env, stdout: "pipe", stderr: "pipe" });
    const [stdout, stderr, exitCode] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    return { stdout, stderr, exitCode };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function runSh(code: string, cwd = work): { stdout: string; stderr: string; exitCode: number | null } {
  const r = Bun.spawnSync(["bash", "-euo", "pipefail", "-c", code], { cwd, env, stdout: "pipe", stderr: "pipe" });
  return { stdout: r.stdout.toString(), stderr: r.stderr.toString(), exitCode: r.exitCode };
}

/** The marker each test below finds its snippet by. */
const MARKERS = ['from "@openai/agents"', 'from "@ai-sdk/mcp"', "inspector --cli", '"openai-responses", "--strict"', 'from "@langchain/mcp-adapters"', '"name":"BashOutput"', "import json, subprocess"];
const PYTHON = Bun.which("python3");
if (!PYTHON) console.warn("readme.frameworks.test: python3 is not on PATH, so the README's Python snippet is not run.");

describe("the README's framework snippets run as written", () => {
  test("every code block of the section is one of those run below", () => {
    const all = snippets();
    expect(all.length).toBeGreaterThan(0);
    for (const s of all) expect(MARKERS.filter((m) => s.code.includes(m)), s.code.slice(0, 80)).toHaveLength(1);
    expect(all).toHaveLength(MARKERS.length);
  });

  test("MCP clients: the OpenAI Agents SDK agent gets kt's text for its tool calls", async () => {
    const { lang, code } = snippet('from "@openai/agents"');
    expect(lang).toBe("ts");
    api.reset([
      { name: "read", args: { file_path: "src/parse.ts" } },
      { name: "grep", args: { pattern: "nope_nothing_matches" } },
      { name: "read", args: { file_path: "src/missing.ts" } },
    ]);
    const r = await runTs(code);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe("done\n");
    const expected = api.script.map((c) => ktText(c.name, c.args));
    expect(api.results).toEqual(expected.map((text) => [{ type: "input_text", text }]));
  }, 60_000);

  test("MCP clients: the Vercel AI SDK client lists kt's tools and closes", async () => {
    const { code } = snippet('from "@ai-sdk/mcp"');
    const r = await runTs(code);
    expect(r.exitCode, r.stderr).toBe(0);
    const names = (JSON.parse(kt(["schema", "--format", "mcp"], { cwd: work, stateDir: env.KT_STATE_DIR! }).stdout) as { name: string }[]).map((t) => t.name);
    expect(r.stdout).toBe(`${names.join(" ")}\n`);
  }, 60_000);

  test("MCP clients: the Inspector CLI command prints kt's read of README.md", () => {
    const { lang, code } = snippet("inspector --cli");
    expect(lang).toBe("sh");
    // From the repository, where npx finds the Inspector installed (offline) and README.md is.
    const r = runSh(code, ROOT);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ content: [{ type: "text", text: ktText("read", { file_path: "README.md" }, ROOT) }], isError: false });
  }, 60_000);

  test("OpenAI strict mode: the Responses loop sends kt's strict tools and answers strict calls (nulls) with kt's text", async () => {
    const { code } = snippet('"openai-responses", "--strict"');
    api.reset([
      { name: "read", args: { file_path: "src/main.ts", offset: null, limit: null } },
      { name: "glob", args: { pattern: "src/*.ts", path: null, head_limit: null, offset: null } },
      { name: "read", args: { file_path: "src/nope.ts", offset: null, limit: null } },
    ]);
    const r = await runTs(code);
    expect(r.exitCode, r.stderr).toBe(0);
    const strictTools = JSON.parse(kt(["schema", "--format", "openai-responses", "--strict"], { cwd: work, stateDir: env.KT_STATE_DIR! }).stdout);
    expect(api.tools).toHaveLength(api.script.length + 1);
    for (const tools of api.tools) expect(tools).toEqual(strictTools);
    expect(api.results).toEqual(api.script.map((c) => ktText(c.name, c.args)));
    expect(api.results[2]).toStartWith(`File not found: ${work}/src/nope.ts.`);
  }, 60_000);

  test("LangChain: the ReAct agent's tool messages are kt's text", async () => {
    const { code } = snippet('from "@langchain/mcp-adapters"');
    api.reset([
      { name: "grep", args: { pattern: "getUser", path: "src" } },
      { name: "read", args: { file_path: "src/parse.ts", limit: 1 } },
    ]);
    const r = await runTs(code);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(api.results).toEqual(api.script.map((c) => ktText(c.name, c.args)));
  }, 60_000);

  test("Claude-Code-shaped calls: a background Bash, then BashOutput", () => {
    const { lang, code } = snippet('"name":"BashOutput"');
    expect(lang).toBe("sh");
    using dir = tempDir();
    writeFileSync(join(dir.path, "package.json"), JSON.stringify({ name: "app", private: true, scripts: { dev: "echo dev server ready; sleep 30" } }));
    try {
      const r = runSh(code, dir.path);
      expect(r.exitCode, r.stderr).toBe(0);
      const [started, output] = r.stdout.trimEnd().split("\n").map((l) => JSON.parse(l) as { type: string; tool_use_id: string; content: string; is_error: boolean });
      expect(started).toMatchObject({ type: "tool_result", tool_use_id: "toolu_7", is_error: false });
      expect(started!.content).toStartWith("Started p1 (pid ");
      expect(output).toMatchObject({ type: "tool_result", tool_use_id: "toolu_8", is_error: false });
      expect(output!.content).toContain("p1");
    } finally {
      runSh("kt session end", dir.path);
    }
  }, 60_000);
  test.skipIf(!PYTHON)("Python: the subprocess client over kt call --jsonl prints kt's text for each call, the error with its flag", () => {
    const { lang, code } = snippet("import json, subprocess");
    expect(lang).toBe("python");
    const r = Bun.spawnSync([PYTHON!, "-c", code], { cwd: work, env, stdout: "pipe", stderr: "pipe" });
    expect(r.stderr.toString()).toBe("");
    expect(r.exitCode).toBe(0);
    const missing = ktText("read", { file_path: "src/missing.ts" });
    const repr = `(${JSON.stringify(missing).replace(/^"|"$/g, "'")}, True)`;
    expect(missing).not.toContain("'");
    expect(r.stdout.toString()).toBe(`${ktText("read", { file_path: "src/parse.ts" })}\n${ktText("grep", { pattern: "getUser" })}\n${repr}\n`);
  }, 60_000);
});
