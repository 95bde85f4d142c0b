// SPEC §7.5: `kt schema --format openai --strict` and `--format openai-responses --strict`
// give schemas that OpenAI's strict function calling accepts, checked against the rules
// OpenAI documents for it ("Supported schemas" of Structured Outputs), and every optional
// field sent as null is answered as if it were absent.
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { shape } from "../src/cmd/schema.ts";
import { inputSchema, strictSchema } from "../src/tools/jsonschema.ts";
import { loadAllTools, schemaName } from "../src/tools/registry.ts";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { p } from "../src/tools/params.ts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { parseInput } from "../src/tools/tool.ts";
import { call, callTool, KT, kt, MODES, tempDir } from "./_helpers.ts";
import { strictViolations } from "./_strict.ts";

type Schema = Record<string, unknown>;

const tools = await loadAllTools();

describe("the strict-mode checker itself", () => {
  test("refuses kt's plain schemas (optional fields missing from required) and the usual slips", () => {
    const read = tools.find((t) => t.name === "read")!;
    expect(strictViolations(inputSchema(read))).toContain('parameters: "offset" not in required');
    expect(strictViolations(inputSchema(read))).toContain('parameters.offset: unsupported keyword "minimum"');
    expect(strictViolations({ type: "object", properties: { a: { type: "object", properties: {}, required: [] } }, required: ["a"], additionalProperties: false })).toEqual([
      "parameters.a: additionalProperties must be false",
    ]);
    expect(strictViolations({ type: "object", properties: { a: { description: "anything" } }, required: ["a"], additionalProperties: false })).toEqual(["parameters.a: no type"]);
  });
});

describe("kt schema --strict", () => {
  for (const tool of tools) {
    test(`${tool.name}: accepted by strict mode, each optional field nullable, required ones not`, () => {
      const plain = inputSchema(tool) as { properties: Record<string, Schema>; required?: string[] };
      const strict = strictSchema(inputSchema(tool));
      expect(strictViolations(strict)).toEqual([]);
      const props = strict.properties as Record<string, Schema>;
      expect(Object.keys(props)).toEqual(Object.keys(plain.properties));
      for (const [name, prop] of Object.entries(props)) {
        const optional = !(plain.required ?? []).includes(name);
        const nullable = [prop.type].flat().includes("null") || ((prop.anyOf ?? []) as Schema[]).some((b) => b.type === "null");
        expect(nullable, `${tool.name}.${name}`).toBe(optional);
        expect(prop.description, `${tool.name}.${name} keeps its description`).toBe(plain.properties[name]!.description);
      }
      for (const format of ["openai", "openai-responses"] as const) {
        const shaped = shape(tool, format, true) as { strict?: boolean; function?: { strict?: boolean; parameters: Schema }; parameters?: Schema };
        expect(format === "openai" ? shaped.function!.strict : shaped.strict).toBe(true);
        expect(strictViolations((format === "openai" ? shaped.function!.parameters : shaped.parameters)!)).toEqual([]);
      }
    });
  }

  test("nested objects, arrays of objects and enums are made strict at every level", () => {
    const nested = strictSchema({
      type: "object",
      properties: {
        path: { type: "string", minLength: 1 },
        edits: { type: "array", minItems: 1, items: { type: "object", properties: { old_string: { type: "string" }, replace_all: { type: "boolean" } }, required: ["old_string"], additionalProperties: false } },
        mode: { type: "string", enum: ["a", "b"] },
      },
      required: ["path"],
    });
    expect(strictViolations(nested)).toEqual([]);
    expect(nested).toEqual({
      type: "object",
      properties: {
        path: { type: "string" },
        edits: {
          type: ["array", "null"],
          items: { type: "object", properties: { old_string: { type: "string" }, replace_all: { type: ["boolean", "null"] } }, required: ["old_string", "replace_all"], additionalProperties: false },
        },
        mode: { type: ["string", "null"], enum: ["a", "b", null] },
      },
      required: ["path", "edits", "mode"],
      additionalProperties: false,
    });
  });

  test("on the command line: every tool, both shapes, strict: true", () => {
    using tmp = tempDir();
    const o = { cwd: tmp.path, stateDir: join(tmp.path, ".s") };
    for (const format of ["openai", "openai-responses"]) {
      const r = kt(["schema", "--format", format, "--strict"], o);
      expect(r.exitCode).toBe(0);
      expect(r.stdout).toBe(`${JSON.stringify(tools.map((t) => shape(t, format as "openai", true)), null, 2)}\n`);
    }
    const responses = JSON.parse(kt(["schema", "--format", "openai-responses", "--strict", "edit"], o).stdout);
    expect(Object.keys(responses)).toEqual(["type", "name", "description", "parameters", "strict"]);
  });
});

/** A call as strict mode sends it: every property present, the optional ones null. */
function allNull(tool: (typeof tools)[number], given: Record<string, unknown>): Record<string, unknown> {
  const props = (inputSchema(tool).properties ?? {}) as Record<string, unknown>;
  return Object.fromEntries(Object.keys(props).map((name) => [name, name in given ? given[name] : null]));
}

describe("null means absent (SPEC §7.5)", () => {
  // The required fields of each tool, chosen so the call succeeds or fails the same way with and without the nulls.
  const REQUIRED: Record<string, Record<string, unknown>> = {
    read: { file_path: "a.txt" },
    write: { file_path: "new.txt", content: "x\n" },
    edit: { file_path: "a.txt", old_string: "beta", new_string: "gamma" },
    grep: { pattern: "alpha" },
    glob: { pattern: "*.txt" },
    bash: { command: "echo hi" },
    process: { action: "list" },
    apply_patch: { patch: "*** Begin Patch\n*** Update File: a.txt\n@@\n alpha\n-beta\n+gamma\n*** End Patch\n" },
    code: { action: "diagnostics" },
    replace: { pattern: "beta", replacement: "gamma" },
  };

  for (const mode of MODES) {
    test(`${mode}: every tool answers a call with every optional field null exactly as one without them`, async () => {
      for (const tool of tools) {
        const name = schemaName(tool);
        const given = REQUIRED[name];
        expect(given, `no call for ${name}`).toBeDefined();
        const answers: string[] = [];
        for (const input of [given!, allNull(tool, given!)]) {
          using tmp = tempDir();
          const work = join(tmp.path, "w");
          mkdirSync(work);
          writeFileSync(join(work, "a.txt"), "alpha\nbeta\n");
          const opts = { cwd: work, stateDir: join(tmp.path, "s") };
          if (name === "edit") await callTool("read", { file_path: "a.txt" }, opts);
          const r = await call(mode, tool.name, input, opts);
          expect(r.isError, `${name} ${JSON.stringify(input)}: ${r.content}`).toBe(false);
          answers.push(r.content.replaceAll(work, "$WORK").replace(/\d+\.\d+s|\d+ms/g, "T"));
        }
        expect(answers[1], name).toBe(answers[0]!);
      }
    });
  }

  /**
   * The doors a framework uses, each answering one call with kt's text: kt call in the
   * Anthropic, Chat Completions and Responses shapes, kt call --jsonl, and kt mcp through
   * the official SDK client. Each runs in its own fresh workspace (edit after a read).
   */
  const DOORS: Record<string, (name: string, input: Record<string, unknown>, work: string, state: string) => Promise<{ isError: boolean; text: string }>> = {
    async "kt call --format anthropic"(name, input, work, state) {
      const r = kt(["call", "--format", "anthropic"], { cwd: work, stateDir: state, stdin: JSON.stringify({ type: "tool_use", id: "toolu_1", name, input }) });
      const answer = JSON.parse(r.stdout) as { content: string; is_error: boolean };
      expect(r.exitCode).toBe(answer.is_error ? 1 : 0);
      return { isError: answer.is_error, text: answer.content };
    },
    async "kt call --format openai"(name, input, work, state) {
      const r = kt(["call", "--format", "openai"], { cwd: work, stateDir: state, stdin: JSON.stringify({ id: "call_1", type: "function", function: { name, arguments: JSON.stringify(input) } }) });
      return { isError: r.exitCode === 1, text: (JSON.parse(r.stdout) as { content: string }).content };
    },
    async "kt call --format openai-responses"(name, input, work, state) {
      const r = kt(["call", "--format", "openai-responses"], { cwd: work, stateDir: state, stdin: JSON.stringify({ type: "function_call", call_id: "call_1", name, arguments: JSON.stringify(input) }) });
      return { isError: r.exitCode === 1, text: (JSON.parse(r.stdout) as { output: string }).output };
    },
    async "kt call --jsonl"(name, input, work, state) {
      const r = kt(["call", "--jsonl"], { cwd: work, stateDir: state, stdin: `${JSON.stringify({ type: "function_call", call_id: "call_1", name, arguments: input })}\n` });
      expect(r.exitCode).toBe(0);
      const envelope = JSON.parse(r.stdout) as { isError: boolean; content: string };
      return { isError: envelope.isError, text: envelope.content };
    },
    async "kt mcp"(name, input, work, state) {
      const client = new Client({ name: "kt-test", version: "0" });
      await client.connect(new StdioClientTransport({ command: KT, args: ["mcp"], cwd: work, env: { PATH: process.env.PATH ?? "", HOME: work, KT_STATE_DIR: state }, stderr: "pipe" }));
      try {
        const result = await client.callTool({ name, arguments: input });
        const content = result.content as { type: string; text: string }[];
        expect(content).toHaveLength(1);
        return { isError: result.isError === true, text: content[0]!.text };
      } finally {
        await client.close();
      }
    },
  };

  for (const [door, run] of Object.entries(DOORS)) {
    test(`${door}: every tool answers a strict-mode call (every optional field null) exactly as one without them`, async () => {
      for (const tool of tools) {
        const name = schemaName(tool);
        const given = REQUIRED[name]!;
        const answers: string[] = [];
        for (const input of [given, allNull(tool, given)]) {
          using tmp = tempDir();
          const work = join(tmp.path, "w");
          mkdirSync(work);
          writeFileSync(join(work, "a.txt"), "alpha\nbeta\n");
          const state = join(tmp.path, "s");
          // The read before an edit goes through the same door (kt mcp: the same server, its session).
          if (name === "edit" && door !== "kt mcp") expect((await run("read", { file_path: "a.txt", offset: null, limit: null }, work, state)).isError).toBe(false);
          const r = name === "edit" && door === "kt mcp" ? await editAfterReadOverMcp(input, work, state) : await run(name, input, work, state);
          expect(r.isError, `${name} ${JSON.stringify(input)}: ${r.text}`).toBe(false);
          answers.push(r.text.replaceAll(work, "$WORK").replace(/\d+\.\d+s|\d+ms/g, "T"));
        }
        expect(answers[1], name).toBe(answers[0]!);
      }
    }, 60_000);
  }

  /** kt mcp: a read and then the edit in one server (one session). */
  async function editAfterReadOverMcp(input: Record<string, unknown>, work: string, state: string): Promise<{ isError: boolean; text: string }> {
    const client = new Client({ name: "kt-test", version: "0" });
    await client.connect(new StdioClientTransport({ command: KT, args: ["mcp"], cwd: work, env: { PATH: process.env.PATH ?? "", HOME: work, KT_STATE_DIR: state }, stderr: "pipe" }));
    try {
      expect((await client.callTool({ name: "read", arguments: { file_path: "a.txt", offset: null, limit: null } })).isError).toBe(false);
      const result = await client.callTool({ name: "edit", arguments: input });
      return { isError: result.isError === true, text: (result.content as { text: string }[])[0]!.text };
    } finally {
      await client.close();
    }
  }

  test("at every depth: optional fields of objects inside arrays too, never a required one", async () => {
    const tool = {
      name: "t",
      aliases: { filePath: "file_path" },
      parameters: p.object({
        file_path: p.string(),
        edits: p.optional(p.array(p.object({ old_string: p.string(), replace_all: p.optional(p.boolean()) }))),
        limit: p.optional(p.int()),
      }),
    };
    const raw = { file_path: "a", filePath: null, limit: null, edits: [{ old_string: "x", replace_all: null }, { old_string: "y", replace_all: true }] };
    expect(await parseInput(tool, raw)).toEqual({ ok: true, input: { file_path: "a", edits: [{ old_string: "x" }, { old_string: "y", replace_all: true }] } });
    // The caller's value is left as it was.
    expect(raw.edits[0]).toEqual({ old_string: "x", replace_all: null });
    expect(await parseInput(tool, { file_path: "a", edits: null })).toEqual({ ok: true, input: { file_path: "a" } });
    const refused = await parseInput(tool, { file_path: "a", edits: [{ old_string: null }] });
    expect(refused.ok).toBe(false);
  });

  test("edit's edits list as strict mode sends it: old_string and new_string null, each edit's replace_all null", () => {
    using tmp = tempDir();
    writeFileSync(join(tmp.path, "a.txt"), "alpha\nbeta\n");
    const o = { cwd: tmp.path, stateDir: join(tmp.path, "s") };
    expect(kt(["read", "a.txt"], o).exitCode).toBe(0);
    const edits = [
      { old_string: "alpha", new_string: "ALPHA", replace_all: null },
      { old_string: "beta", new_string: "BETA", replace_all: null },
    ];
    const args = { file_path: "a.txt", old_string: null, new_string: null, replace_all: null, edits };
    const r = kt(["call", "--format", "openai-responses"], { ...o, stdin: JSON.stringify({ type: "function_call", call_id: "c1", name: "edit", arguments: JSON.stringify(args) }) });
    expect(r.exitCode).toBe(0);
    expect((JSON.parse(r.stdout) as { output: string }).output).toStartWith(`Edited ${tmp.path}/a.txt (2 edits, 2 replacements; all matched exactly).`);
    expect(readFileSync(join(tmp.path, "a.txt"), "utf8")).toBe("ALPHA\nBETA\n");
    // Everything null: the edit's own prose for a call that names no change.
    const none = kt(["call", "--format", "openai-responses"], { ...o, stdin: JSON.stringify({ type: "function_call", call_id: "c2", name: "edit", arguments: JSON.stringify({ ...args, edits: null }) }) });
    expect(none.exitCode).toBe(1);
    expect((JSON.parse(none.stdout) as { output: string }).output).toBe(
      'Invalid input for tool "edit": parameter "old_string" is required (or "edits", a list of {old_string, new_string} changes). Please rewrite the input so it satisfies the expected schema.',
    );
  });

  test("null for a required field is still refused, naming the field", async () => {
    using tmp = tempDir();
    const r = await callTool("read", { file_path: null, offset: null }, { cwd: tmp.path, stateDir: join(tmp.path, "s") });
    expect(r.isError).toBe(true);
    expect(r.content).toBe('Invalid input for tool "read": parameter "file_path" must be a string, got null. Please rewrite the input so it satisfies the expected schema.');
  });

  test("aliases sent as null are absent too, and kt call / --jsonl / MCP shapes all pass nulls through the same door", () => {
    using tmp = tempDir();
    writeFileSync(join(tmp.path, "a.txt"), "alpha\nbeta\n");
    const o = { cwd: tmp.path, stateDir: join(tmp.path, "s") };
    const expected = `${tmp.path}/a.txt\n     1→alpha\n     2→beta\n`;
    const args = { file_path: "a.txt", offset: null, limit: null, path: null, filePath: null };
    expect(kt(["read"], { ...o, stdin: JSON.stringify(args) }).stdout).toBe(expected);
    expect(kt(["call"], { ...o, stdin: JSON.stringify({ type: "function", id: "c1", function: { name: "read", arguments: JSON.stringify(args) } }) }).stdout).toBe(expected);
    expect(kt(["call"], { ...o, stdin: JSON.stringify({ name: "read", arguments: args }) }).stdout).toBe(expected);
    const lines = kt(["call", "--jsonl", "--format", "openai"], { ...o, stdin: `${JSON.stringify({ id: "c2", type: "function", function: { name: "read", arguments: JSON.stringify(args) } })}\n` });
    expect(JSON.parse(lines.stdout)).toEqual({ role: "tool", tool_call_id: "c2", content: expected.slice(0, -1) });
  });

  test("kt mcp: a strict-mode call with nulls is answered as one without them", async () => {
    using tmp = tempDir();
    writeFileSync(join(tmp.path, "a.txt"), "alpha\nbeta\n");
    const client = new Client({ name: "kt-test", version: "0" });
    await client.connect(new StdioClientTransport({ command: KT, args: ["mcp"], cwd: tmp.path, env: { PATH: process.env.PATH ?? "", HOME: tmp.path, KT_STATE_DIR: join(tmp.path, ".s") }, stderr: "pipe" }));
    try {
      const withNulls = await client.callTool({ name: "read", arguments: { file_path: "a.txt", offset: null, limit: null } });
      expect(withNulls).toEqual({ content: [{ type: "text", text: `${tmp.path}/a.txt\n     1→alpha\n     2→beta` }], isError: false });
      const grep = await client.callTool({ name: "grep", arguments: { pattern: "beta", path: null, include: null } });
      expect(grep.isError).toBe(false);
    } finally {
      await client.close();
    }
  });
});
