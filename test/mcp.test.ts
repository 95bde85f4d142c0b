// `kt mcp` (SPEC §5) driven over stdio by the official MCP TypeScript SDK client, exactly
// as an agent framework would: the compiled binary, its tools, annotations and schemas,
// results with structured content, confinement to the root, one session per server.
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { inputSchema, mcpSchema } from "../src/tools/jsonschema.ts";
import { loadAllTools, schemaName, TOOL_NAMES } from "../src/tools/registry.ts";
import { EXPECTED_ANNOTATIONS } from "./_annotations.ts";
import { callTool, KT, kt, tempDir } from "./_helpers.ts";

const open: Client[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

async function connect(cwd: string, stateDir: string, opts: { args?: string[]; env?: Record<string, string>; structured?: boolean } = {}): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: KT,
    // These tests look at the whole result, so the server sends it (SPEC §7.6); the default,
    // text-only results are checked in mcp-clients.test.ts and below.
    args: ["mcp", ...(opts.structured === false ? [] : ["--structured"]), ...(opts.args ?? [])],
    cwd,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", NO_COLOR: "1", KT_STATE_DIR: stateDir, ...opts.env },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: "kt-test", version: "0.0.0" });
  await client.connect(transport);
  open.push(client);
  return { client, stderr: () => stderr };
}

function text(result: CallToolResult): string {
  expect(result.content).toHaveLength(1);
  const item = result.content[0]!;
  expect(item.type).toBe("text");
  return (item as { text: string }).text;
}

/** The metadata of a `--structured` result. */
function meta(result: CallToolResult): Record<string, unknown> {
  return (result.structuredContent as { metadata: Record<string, unknown> }).metadata;
}

function workspace(tmp: { path: string }): { work: string; state: string } {
  const work = join(tmp.path, "work");
  const state = join(tmp.path, "state");
  mkdirSync(work);
  writeFileSync(join(work, "a.txt"), "alpha\nbeta\n");
  return { work, state };
}

describe("kt mcp with the official SDK client", () => {
  test("initialize: server info and a tools capability", async () => {
    using tmp = tempDir();
    const { work, state } = workspace(tmp);
    const { client } = await connect(work, state);
    expect(client.getServerVersion()?.name).toBe("kt");
    expect(client.getServerCapabilities()?.tools).toBeDefined();
    expect(client.getInstructions()).toContain(`confined to ${work}`);
  });

  test("tools/list: every registered tool, its JSON Schema from zod (as SPEC §8.8 lists it) and its annotations", async () => {
    using tmp = tempDir();
    const { work, state } = workspace(tmp);
    const { client } = await connect(work, state);
    const { tools: listed } = await client.listTools();
    const tools = await loadAllTools();
    expect(listed.map((t) => t.name)).toEqual(tools.map(schemaName));
    expect(listed.length).toBe(TOOL_NAMES.length);
    for (const tool of tools) {
      const entry = listed.find((t) => t.name === schemaName(tool))!;
      expect(entry.description).toBe(tool.description);
      expect(entry.inputSchema as unknown).toEqual(mcpSchema(inputSchema(tool)));
      expect(entry.inputSchema.type).toBe("object");
      expect(EXPECTED_ANNOTATIONS[entry.name], `no expected annotations for ${entry.name}`).toBeDefined();
      expect(entry.annotations).toEqual(EXPECTED_ANNOTATIONS[entry.name]!);
    }
  });

  test("SPEC §7.6: by default one text item and isError, no structuredContent, no outputSchema", async () => {
    using tmp = tempDir();
    const { work, state } = workspace(tmp);
    const { client } = await connect(work, state, { structured: false });
    const { tools } = await client.listTools();
    for (const tool of tools) expect(tool.outputSchema, tool.name).toBeUndefined();
    const ok = (await client.callTool({ name: "read", arguments: { file_path: "a.txt" } })) as CallToolResult;
    expect(ok).toEqual({ content: [{ type: "text", text: `${work}/a.txt\n     1→alpha\n     2→beta` }], isError: false });
    const failed = (await client.callTool({ name: "read", arguments: { file_path: "b.txt" } })) as CallToolResult;
    expect(Object.keys(failed).sort()).toEqual(["content", "isError"]);
    expect(failed.isError).toBe(true);
  });

  test("SPEC §7.6: --structured lists an outputSchema per tool (but read, whose results may hold an image: §8.8), and every result (errors too) satisfies it", async () => {
    using tmp = tempDir();
    const { work, state } = workspace(tmp);
    const { client } = await connect(work, state);
    const { tools } = await client.listTools();
    for (const tool of tools) {
      if (tool.name === "read") expect(tool.outputSchema, tool.name).toBeUndefined();
      else expect(tool.outputSchema, tool.name).toMatchObject({ type: "object", required: ["text", "isError", "metadata"] });
    }
    // The SDK client checks structuredContent against the listed outputSchema (Ajv) and throws on a mismatch.
    const calls: Array<[string, Record<string, unknown>]> = [
      ["read", { file_path: "a.txt" }],
      ["read", { file_path: "b.txt" }],
      ["read", { file_path: 7 }],
      ["edit", { file_path: "a.txt", old_string: "beta", new_string: "gamma" }],
      ["write", { file_path: "c.txt", content: "c\n" }],
      ["grep", { pattern: "gamma" }],
      ["glob", { pattern: "*.txt" }],
      ["apply_patch", { patch: "*** Begin Patch\n*** Add File: p.txt\n+p\n*** End Patch\n" }],
      ["apply_patch", { patch: "*** Begin Patch\n*** Update File: a.txt\n@@\n-not there\n+x\n*** End Patch\n" }],
      ["bash", { command: "echo hi; exit 3" }],
      ["replace", { pattern: "gamma", replacement: "delta", paths: ["a.txt"] }],
      ["replace", { pattern: "(", replacement: "x", regex: true }],
      ["process", { action: "start", command: "sleep 30" }],
      ["process", { action: "list" }],
      ["process", { action: "stop", id: "p1" }],
      ["code", { action: "diagnostics" }],
      ["code", { action: "symbols", file_path: "a.txt" }],
      ["nope", {}],
    ];
    // Every tool listed is called at least once.
    expect(tools.map((t) => t.name).filter((n) => !calls.some(([name]) => name === n))).toEqual([]);
    for (const [name, args] of calls) {
      const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
      expect(r.structuredContent?.text, name).toBe(text(r));
      expect(r.structuredContent?.isError, name).toBe(r.isError);
      expect(typeof meta(r).title, name).toBe("string");
    }
  });

  test("read: the model text as one text item, the metadata as structured content", async () => {
    using tmp = tempDir();
    const { work, state } = workspace(tmp);
    const { client } = await connect(work, state);
    const result = (await client.callTool({ name: "read", arguments: { file_path: "a.txt" } })) as CallToolResult;
    expect(result.isError).toBe(false);
    expect(text(result)).toBe(`${work}/a.txt\n     1→alpha\n     2→beta`);
    expect(result.structuredContent).toMatchObject({ text: text(result), isError: false, metadata: { title: `Read ${work}/a.txt · lines 1–2 of 2`, extra: { path: `${work}/a.txt`, lines: 2, totalLines: 2 } } });
    expect(typeof meta(result).durationMs).toBe("number");
    // The same text as the CLI and the in-process tool give.
    const direct = await callTool("read", { file_path: "a.txt" }, { cwd: work, stateDir: join(tmp.path, "other-state") });
    expect(text(result)).toBe(direct.content);
  });

  test("write after read in the same server: one session for the whole server process", async () => {
    using tmp = tempDir();
    const { work, state } = workspace(tmp);
    const { client } = await connect(work, state);
    const refused = (await client.callTool({ name: "write", arguments: { file_path: "a.txt", content: "new\n" } })) as CallToolResult;
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent?.error).toEqual({ name: "ReadCheckError", code: "NOT_READ" });
    await client.callTool({ name: "read", arguments: { file_path: "a.txt" } });
    const written = (await client.callTool({ name: "write", arguments: { file_path: "a.txt", content: "new\n" } })) as CallToolResult;
    expect(written.isError).toBe(false);
    expect(text(written)).toBe(`Replaced ${work}/a.txt (was 2 lines, now 1 line).`);
    expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("new\n");
    expect(meta(written).diff).toContain("+new");
  });

  test("a second server process is a new session unless KT_SESSION is set", async () => {
    using tmp = tempDir();
    const { work, state } = workspace(tmp);
    const first = await connect(work, state);
    await first.client.callTool({ name: "read", arguments: { file_path: "a.txt" } });
    const second = await connect(work, state);
    const refused = (await second.client.callTool({ name: "write", arguments: { file_path: "a.txt", content: "x\n" } })) as CallToolResult;
    expect(refused.structuredContent?.error).toEqual({ name: "ReadCheckError", code: "NOT_READ" });

    const shared1 = await connect(work, state, { env: { KT_SESSION: "shared" } });
    await shared1.client.callTool({ name: "read", arguments: { file_path: "a.txt" } });
    const shared2 = await connect(work, state, { args: ["--session", "shared"] });
    const ok = (await shared2.client.callTool({ name: "write", arguments: { file_path: "a.txt", content: "x\n" } })) as CallToolResult;
    expect(ok.isError).toBe(false);
  });

  test.skipIf(!TOOL_NAMES.includes("ps"))("a generated session ends with its server: its processes stopped; a named one lives on", async () => {
    using tmp = tempDir();
    const { work, state } = workspace(tmp);
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    const start = async (client: Client) => {
      const r = (await client.callTool({ name: "process", arguments: { action: "start", command: "sleep 300" } })) as CallToolResult;
      expect(r.isError, text(r)).toBe(false);
      const pid = (meta(r).extra as { pid: number }).pid;
      expect(alive(pid)).toBe(true);
      return pid;
    };
    const own = await connect(work, state);
    const ownPid = await start(own.client);
    const named = await connect(work, state, { args: ["--session", "keep"] });
    const namedPid = await start(named.client);
    await Promise.all(open.splice(0).map((c) => c.close()));
    for (let i = 0; i < 100 && alive(ownPid); i++) await Bun.sleep(50);
    expect(alive(ownPid)).toBe(false);
    expect(own.stderr()).toContain("Stopping p1 (sleep 300");
    expect(readdirSync(join(state, "sessions"))).toEqual(["keep"]);
    expect(alive(namedPid)).toBe(true);
    const end = Bun.spawnSync([KT, "session", "end", "--session", "keep"], { env: { PATH: process.env.PATH ?? "", KT_STATE_DIR: state } });
    expect(end.exitCode).toBe(0);
    expect(alive(namedPid)).toBe(false);
  });

  test.skipIf(!TOOL_NAMES.includes("edit"))("edit after read", async () => {
    using tmp = tempDir();
    const { work, state } = workspace(tmp);
    const { client } = await connect(work, state);
    await client.callTool({ name: "read", arguments: { file_path: "a.txt" } });
    const result = (await client.callTool({ name: "edit", arguments: { file_path: "a.txt", old_string: "beta", new_string: "gamma" } })) as CallToolResult;
    expect(result.isError).toBe(false);
    expect(text(result)).toStartWith(`Edited ${work}/a.txt (1 replacement, matched exactly).`);
    expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("alpha\ngamma\n");
    expect(meta(result)).toMatchObject({ additions: 1, deletions: 1 });
  });

  test.skipIf(!TOOL_NAMES.includes("edit"))("edit with several edits: applied in order in one write, or none", async () => {
    using tmp = tempDir();
    const { work, state } = workspace(tmp);
    const { client } = await connect(work, state);
    await client.callTool({ name: "read", arguments: { file_path: "a.txt" } });
    const edits = [{ old_string: "alpha", new_string: "ALPHA" }, { old_string: "beta", new_string: "beta\ngamma" }];
    const result = (await client.callTool({ name: "edit", arguments: { file_path: "a.txt", edits } })) as CallToolResult;
    expect(result.isError).toBe(false);
    expect(text(result)).toStartWith(`Edited ${work}/a.txt (2 edits, 2 replacements; all matched exactly).`);
    expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("ALPHA\nbeta\ngamma\n");
    const failed = (await client.callTool({ name: "edit", arguments: { file_path: "a.txt", edits: [{ old_string: "gamma", new_string: "GAMMA" }, { old_string: "delta", new_string: "x" }] } })) as CallToolResult;
    expect(failed.isError).toBe(true);
    expect(text(failed)).toStartWith("edits[1] (edit 2 of 2) failed, so none of the 2 edits was applied.");
    expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("ALPHA\nbeta\ngamma\n");
  });

  test("a failing call: isError, repair prose, the code in structured content", async () => {
    using tmp = tempDir();
    const { work, state } = workspace(tmp);
    const { client } = await connect(work, state);
    const missing = (await client.callTool({ name: "read", arguments: { file_path: "b.txt" } })) as CallToolResult;
    expect(missing.isError).toBe(true);
    expect(text(missing)).toStartWith(`File not found: ${work}/b.txt.`);
    expect(missing.structuredContent).toMatchObject({ text: text(missing), isError: true, metadata: { title: "read failed · FILE_NOT_FOUND" }, error: { name: "FileError", code: "FILE_NOT_FOUND" } });

    const invalid = (await client.callTool({ name: "read", arguments: { file_path: 3 } })) as CallToolResult;
    expect(invalid.isError).toBe(true);
    expect(text(invalid)).toStartWith('Invalid input for tool "read": parameter "file_path"');
    expect(invalid.structuredContent?.error).toEqual({ name: "ToolArgsError", code: "INVALID_ARGS" });

    const noArgs = (await client.callTool({ name: "read" })) as CallToolResult;
    expect(text(noArgs)).toBe('Invalid input for tool "read": parameter "file_path" is required. Please rewrite the input so it satisfies the expected schema.');

    const unknown = (await client.callTool({ name: "raed", arguments: {} })) as CallToolResult;
    expect(unknown.isError).toBe(true);
    expect(unknown.structuredContent?.error).toEqual({ name: "ToolNotFoundError", code: "UNKNOWN_TOOL" });
    expect(text(unknown)).toBe(`Unknown tool "raed". Did you mean "read"? The available tools are: ${(await loadAllTools()).map(schemaName).join(", ")}. Call one of them by its exact name.`);
  });

  test("every registered tool answers an unknown parameter with INVALID_ARGS prose naming it", async () => {
    using tmp = tempDir();
    const { work, state } = workspace(tmp);
    const { client } = await connect(work, state);
    for (const name of (await loadAllTools()).map(schemaName)) {
      const result = (await client.callTool({ name, arguments: { kt_no_such_parameter: 1 } })) as CallToolResult;
      expect(result.isError, name).toBe(true);
      expect(result.structuredContent?.error, name).toEqual({ name: "ToolArgsError", code: "INVALID_ARGS" });
      expect(text(result), name).toContain('"kt_no_such_parameter"');
    }
  });

  test("confined to the directory it started in: OUTSIDE_ROOT prose, nothing written", async () => {
    using tmp = tempDir();
    const { work, state } = workspace(tmp);
    writeFileSync(join(tmp.path, "secret.txt"), "s\n");
    const { client } = await connect(work, state);
    const read = (await client.callTool({ name: "read", arguments: { file_path: "../secret.txt" } })) as CallToolResult;
    expect(read.isError).toBe(true);
    expect(read.structuredContent?.error).toEqual({ name: "ConfinementError", code: "OUTSIDE_ROOT" });
    expect(text(read)).toBe(`Refusing to access ${tmp.path}/secret.txt: it is outside the root directory ${work}, and kt is confined to that directory. Use a path inside ${work}.`);
    const write = (await client.callTool({ name: "write", arguments: { file_path: join(tmp.path, "evil.txt"), content: "x" } })) as CallToolResult;
    expect(write.structuredContent?.error).toEqual({ name: "ConfinementError", code: "OUTSIDE_ROOT" });
    expect(existsSync(join(tmp.path, "evil.txt"))).toBe(false);
  });

  test.skipIf(!TOOL_NAMES.includes("bash"))("a truncated result's spill file is readable though outside the root; another session's is not", async () => {
    using tmp = tempDir();
    const { work, state } = workspace(tmp);
    const { client } = await connect(work, state);
    const long = (await client.callTool({ name: "bash", arguments: { command: "seq 1 3000" } })) as CallToolResult;
    const spill = (meta(long).truncation as { spillPath?: string } | undefined)?.spillPath;
    expect(spill).toStartWith(join(state, "sessions", "mcp-"));
    expect(text(long)).toContain(`Full output: ${spill}`);
    const page = (await client.callTool({ name: "read", arguments: { file_path: spill, offset: 1500, limit: 2 } })) as CallToolResult;
    expect(page.isError).toBe(false);
    expect(text(page)).toStartWith(`${spill}\n  1500→1500\n  1501→1501\n`);
    const other = join(state, "sessions", "someone-else", "spill", "x.txt");
    mkdirSync(join(state, "sessions", "someone-else", "spill"), { recursive: true });
    writeFileSync(other, "private\n");
    const refused = (await client.callTool({ name: "read", arguments: { file_path: other } })) as CallToolResult;
    expect(refused.structuredContent?.error).toEqual({ name: "ConfinementError", code: "OUTSIDE_ROOT" });
  });

  test("--root DIR confines elsewhere, and relative paths resolve against it when started outside it", async () => {
    using tmp = tempDir();
    const { work, state } = workspace(tmp);
    const sub = join(work, "sub");
    mkdirSync(sub);
    writeFileSync(join(sub, "in.txt"), "in\n");
    // Started in `work`, confined to `sub`: work/a.txt is outside.
    const inner = await connect(work, state, { args: ["--root", sub] });
    const outside = (await inner.client.callTool({ name: "read", arguments: { file_path: join(work, "a.txt") } })) as CallToolResult;
    expect(outside.structuredContent?.error).toEqual({ name: "ConfinementError", code: "OUTSIDE_ROOT" });
    expect(text(outside)).toContain(`outside the root directory ${sub}`);
    const inside = (await inner.client.callTool({ name: "read", arguments: { file_path: "in.txt" } })) as CallToolResult;
    expect(text(inside)).toBe(`${sub}/in.txt\n     1→in`);
    // Started in `sub`, confined to `work`: the working directory stays where it started.
    const outer = await connect(sub, state, { args: ["--root", work] });
    const here = (await outer.client.callTool({ name: "read", arguments: { file_path: "in.txt" } })) as CallToolResult;
    expect(text(here)).toBe(`${sub}/in.txt\n     1→in`);
  });

  test("a long call reports progress to a client that asks, so a short client timeout is reset", async () => {
    using tmp = tempDir();
    const { work, state } = workspace(tmp);
    const { client } = await connect(work, state, { env: { KT_MCP_PROGRESS_MS: "200" } });
    const beats: { progress: number; message?: string }[] = [];
    const result = (await client.callTool({ name: "bash", arguments: { command: "sleep 1.5; echo done" } }, undefined, {
      timeout: 700,
      resetTimeoutOnProgress: true,
      onprogress: (p) => beats.push(p),
    })) as CallToolResult;
    expect(result.isError).toBe(false);
    expect(text(result)).toStartWith("$ sleep 1.5; echo done\ndone\n[exit code 0 · ");
    expect(beats.length).toBeGreaterThanOrEqual(3);
    expect(beats[0]).toMatchObject({ progress: 1, message: "bash is still running" });
    // Without progress, the same timeout ends the request.
    await expect(client.callTool({ name: "bash", arguments: { command: "sleep 1.5" } }, undefined, { timeout: 700 })).rejects.toThrow(/timed out/i);
  });

  test("stderr only for humans: --verbose logs there, never on the protocol stream", async () => {
    using tmp = tempDir();
    const { work, state } = workspace(tmp);
    const { client, stderr } = await connect(work, state, { args: ["--verbose"] });
    const result = (await client.callTool({ name: "read", arguments: { file_path: "a.txt" } })) as CallToolResult;
    expect(result.isError).toBe(false);
    expect(stderr()).toContain(`root ${work}`);
  });

  test("usage errors exit 2 before serving anything", () => {
    using tmp = tempDir();
    const { work, state } = workspace(tmp);
    const bogus = kt(["mcp", "--bogus"], { cwd: work, stateDir: state, stdin: "" });
    expect(bogus).toEqual({ stdout: "", stderr: 'kt mcp: unknown option --bogus\nRun "kt mcp --help" for usage.\n', exitCode: 2 });
    const missing = kt(["mcp", "--root", join(tmp.path, "missing")], { cwd: work, stateDir: state, stdin: "" });
    expect(missing.exitCode).toBe(2);
    expect(missing.stdout).toBe("");
    expect(missing.stderr).toStartWith(`kt mcp: The root directory ${join(tmp.path, "missing")} (from --root) does not exist.`);
  });
});
