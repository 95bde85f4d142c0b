// Calls in Claude Code's tool shapes (Read, Write, Edit, MultiEdit, Grep, Glob, Bash,
// BashOutput, KillShell, TaskOutput, TaskStop) answered by kt's tools, through kt call and kt mcp's call handler.
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CLAUDE_CODE_TOOLS, fromClaudeCode } from "../src/adapter/claude-code.ts";
import { KT, kt, tempDir } from "./_helpers.ts";


describe("the mapping", () => {
  test("names and fields, tool by tool", () => {
    // Issue 29 added TaskOutput and TaskStop, the newer names of BashOutput and KillShell; issue 30 NotebookEdit.
    expect(CLAUDE_CODE_TOOLS).toEqual(["Read", "Write", "Edit", "MultiEdit", "Glob", "Grep", "Bash", "BashOutput", "KillShell", "NotebookEdit", "TaskOutput", "TaskStop", "LSP"]);
    expect(fromClaudeCode("Read", { file_path: "/a", offset: 3, limit: 2 })).toEqual({ tool: "read", args: { file_path: "/a", offset: 3, limit: 2 } });
    expect(fromClaudeCode("Write", { file_path: "/a", content: "x" })).toEqual({ tool: "write", args: { file_path: "/a", content: "x" } });
    expect(fromClaudeCode("Edit", { file_path: "/a", old_string: "o", new_string: "n", replace_all: true })).toEqual({
      tool: "edit",
      args: { file_path: "/a", old_string: "o", new_string: "n", replace_all: true },
    });
    const edits = [{ old_string: "a", new_string: "b" }, { old_string: "c", new_string: "d", replace_all: true }];
    expect(fromClaudeCode("MultiEdit", { file_path: "/a", edits })).toEqual({ tool: "edit", args: { file_path: "/a", edits } });
    expect(fromClaudeCode("Glob", { pattern: "**/*.ts", path: "src" })).toEqual({ tool: "glob", args: { pattern: "**/*.ts", path: "src" } });
    expect(
      fromClaudeCode("Grep", { pattern: "x", path: "src", glob: "*.ts", type: "ts", output_mode: "content", "-i": true, "-n": true, "-A": 1, "-B": 2, "-C": 3, head_limit: 5, multiline: false }),
    ).toEqual({
      tool: "grep",
      args: { pattern: "x", path: "src", include: "*.ts", type: "ts", output_mode: "content", case_sensitive: false, after: 1, before: 2, context: 3, head_limit: 5, multiline: false },
    });
    expect(fromClaudeCode("Grep", { pattern: "x", "-i": false })).toEqual({ tool: "grep", args: { pattern: "x", case_sensitive: true } });
    expect(fromClaudeCode("Grep", { pattern: "x", "-i": null })).toEqual({ tool: "grep", args: { pattern: "x" } });
    expect(fromClaudeCode("Bash", { command: "ls", description: "List files", timeout: 5000 })).toEqual({ tool: "bash", args: { command: "ls", timeout_ms: 5000 } });
    expect(fromClaudeCode("Bash", { command: "ls", run_in_background: false })).toEqual({ tool: "bash", args: { command: "ls" } });
    expect(fromClaudeCode("Bash", { command: "npm run dev", description: "Dev server", run_in_background: true })).toEqual({
      tool: "ps",
      args: { action: "start", command: "npm run dev" },
    });
    expect(fromClaudeCode("BashOutput", { bash_id: "p2" })).toEqual({ tool: "ps", args: { action: "read", id: "p2" } });
    expect(fromClaudeCode("KillShell", { shell_id: "p2" })).toEqual({ tool: "ps", args: { action: "stop", id: "p2" } });
    expect(fromClaudeCode("TaskOutput", { task_id: "p2", block: true, timeout: 5000 })).toEqual({ tool: "ps", args: { action: "wait", id: "p2", timeout_ms: 5000 } });
    expect(fromClaudeCode("TaskOutput", { task_id: "p2", block: null, timeout: null })).toEqual({ tool: "ps", args: { action: "wait", id: "p2" } });
    expect(fromClaudeCode("TaskOutput", { task_id: "p2", block: false, timeout: 5000 })).toEqual({ tool: "ps", args: { action: "read", id: "p2" } });
    expect(fromClaudeCode("TaskStop", { task_id: "p2" })).toEqual({ tool: "ps", args: { action: "stop", id: "p2" } });
    expect(fromClaudeCode("LSP", { operation: "goToDefinition", filePath: "/a.ts", line: 12, character: 5 })).toEqual({ tool: "code", args: { action: "definition", file_path: "/a.ts", line: "12:5" } });
    expect(fromClaudeCode("LSP", { operation: "findReferences", filePath: "/a.ts", line: 3, character: 1 })).toEqual({ tool: "code", args: { action: "references", file_path: "/a.ts", line: "3:1" } });
    expect(fromClaudeCode("LSP", { operation: "documentSymbol", filePath: "/a.ts" })).toEqual({ tool: "code", args: { action: "symbols", file_path: "/a.ts" } });
    expect(fromClaudeCode("LSP", { operation: "workspaceSymbol", filePath: "/a.ts", query: "Parser" })).toEqual({ tool: "code", args: { action: "workspace_symbols", file_path: "/a.ts", query: "Parser" } });
    // No action of kt's: kept, for validation to list the actions there are.
    expect(fromClaudeCode("LSP", { operation: "incomingCalls", filePath: "/a.ts", line: 1, character: 1 })).toEqual({ tool: "code", args: { action: "incomingCalls", file_path: "/a.ts", line: "1:1" } });
  });

  test("other names are not mapped; fields kt does not know pass through for kt to name", () => {
    expect(fromClaudeCode("read", { file_path: "/a" })).toBeUndefined();
    expect(fromClaudeCode("WebFetch", { url: "x" })).toBeUndefined();
    expect(fromClaudeCode("__proto__", {})).toBeUndefined();
    expect(fromClaudeCode("BashOutput", { bash_id: "p1", filter: "err" })).toEqual({ tool: "ps", args: { action: "read", id: "p1", filter: "err" } });
    expect(fromClaudeCode("BashOutput", { bash_id: "p1", filter: null })).toEqual({ tool: "ps", args: { action: "read", id: "p1" } });
    expect(fromClaudeCode("Read", "not an object")).toEqual({ tool: "read", args: "not an object" });
  });
});

function call(cwd: string, stateDir: string, name: string, input: unknown) {
  return kt(["call", "--format", "anthropic"], { cwd, stateDir, stdin: JSON.stringify({ type: "tool_use", id: `toolu_${name}`, name, input }) });
}

function reply(run: { stdout: string }): { content: string; is_error: boolean } {
  return JSON.parse(run.stdout);
}

describe("Claude Code's booleans sent as strings (SPEC §8.8)", () => {
  test('"true" and "false" are taken as the booleans, in every boolean field', () => {
    expect(fromClaudeCode("Bash", { command: "npm run dev", run_in_background: "true" })).toEqual({ tool: "ps", args: { action: "start", command: "npm run dev" } });
    expect(fromClaudeCode("Bash", { command: "ls", run_in_background: "false" })).toEqual({ tool: "bash", args: { command: "ls" } });
    expect(fromClaudeCode("Edit", { file_path: "a", old_string: "x", new_string: "y", replace_all: "true" })).toEqual({ tool: "edit", args: { file_path: "a", old_string: "x", new_string: "y", replace_all: true } });
    expect(fromClaudeCode("MultiEdit", { file_path: "a", edits: [{ old_string: "x", new_string: "y", replace_all: "false" }] })).toEqual({
      tool: "edit",
      args: { file_path: "a", edits: [{ old_string: "x", new_string: "y", replace_all: false }] },
    });
    expect(fromClaudeCode("Grep", { pattern: "p", "-i": "true", "-n": "false", multiline: "true" })).toEqual({ tool: "grep", args: { pattern: "p", case_sensitive: false, multiline: true } });
  });

  test("any other non-boolean is refused with prose naming the field, never ignored", () => {
    for (const [name, args, field, shown] of [
      ["Bash", { command: "sleep 30", run_in_background: "yes" }, "run_in_background", '"yes"'],
      ["Bash", { command: "sleep 30", run_in_background: 1 }, "run_in_background", "1"],
      ["Bash", { command: "sleep 30", run_in_background: "TRUE" }, "run_in_background", '"TRUE"'],
      ["Edit", { file_path: "a", old_string: "x", new_string: "y", replace_all: "1" }, "replace_all", '"1"'],
      ["MultiEdit", { file_path: "a", edits: [{ old_string: "x", new_string: "y" }, { old_string: "u", new_string: "v", replace_all: [] }] }, "edits[1].replace_all", "[]"],
      ["Grep", { pattern: "p", "-i": "no" }, "-i", '"no"'],
    ] as const) {
      expect(fromClaudeCode(name, args)?.invalid, `${name}.${field}`).toBe(`parameter "${field}" must be a boolean (true or false), got ${shown}`);
    }
  });

  test("through kt call: the refusal's prose and code, and nothing run", () => {
    using tmp = tempDir();
    const o = { cwd: tmp.path, stateDir: join(tmp.path, ".s") };
    const r = reply(call(o.cwd, o.stateDir, "Bash", { command: "touch ran", run_in_background: "yes" }));
    expect(r).toMatchObject({
      is_error: true,
      content: 'Invalid input for tool "Bash": parameter "run_in_background" must be a boolean (true or false), got "yes". Please rewrite the input so it satisfies the expected schema.',
    });
    expect(existsSync(join(tmp.path, "ran"))).toBe(false);
    try {
      const started = reply(call(o.cwd, o.stateDir, "Bash", { command: "sleep 30", run_in_background: "true" }));
      expect(started.content).toStartWith("Started p1 (pid ");
    } finally {
      kt(["session", "end"], o);
    }
  });
});

describe("kt call with Claude Code's tool calls", () => {
  test("Read, Write, Edit, Glob, Grep and Bash answer as kt's tools do", () => {
    using tmp = tempDir();
    const o = { cwd: tmp.path, stateDir: join(tmp.path, ".s") };
    writeFileSync(join(tmp.path, "a.txt"), "alpha\nbeta\n");
    const read = reply(call(o.cwd, o.stateDir, "Read", { file_path: join(tmp.path, "a.txt") }));
    expect(read).toMatchObject({ content: `${tmp.path}/a.txt\n     1→alpha\n     2→beta`, is_error: false });
    expect(reply(call(o.cwd, o.stateDir, "Edit", { file_path: "a.txt", old_string: "beta", new_string: "gamma" })).content).toStartWith(`Edited ${tmp.path}/a.txt (1 replacement, matched exactly).`);
    expect(reply(call(o.cwd, o.stateDir, "Write", { file_path: "b.txt", content: "new\n" })).content).toBe(`Wrote ${tmp.path}/b.txt (1 line).`);
    expect(reply(call(o.cwd, o.stateDir, "Glob", { pattern: "*.txt" })).content).toStartWith('2 files match "*.txt"');
    expect(reply(call(o.cwd, o.stateDir, "Grep", { pattern: "gamma", glob: "*.txt", "-n": true })).content).toBe('1 match in 1 file for "gamma":\n\na.txt\n  2: gamma');
    const bash = reply(call(o.cwd, o.stateDir, "Bash", { command: "echo hi", description: "Say hi", timeout: 10000 }));
    expect(bash.content).toStartWith("$ echo hi\nhi\n[exit code 0 · ");
    expect(readFileSync(join(tmp.path, "a.txt"), "utf8")).toBe("alpha\ngamma\n");
  });

  test("every optional field of Claude Code's tools sent as null (strict mode) is not given", () => {
    using tmp = tempDir();
    const o = { cwd: tmp.path, stateDir: join(tmp.path, ".s") };
    writeFileSync(join(tmp.path, "a.txt"), "alpha\nbeta\n");
    const answer = (name: string, input: unknown) => {
      const r = reply(call(o.cwd, o.stateDir, name, input));
      expect(r.is_error, `${name}: ${r.content}`).toBe(false);
      return r.content;
    };
    expect(answer("Read", { file_path: "a.txt", offset: null, limit: null })).toBe(`${tmp.path}/a.txt\n     1→alpha\n     2→beta`);
    expect(answer("Edit", { file_path: "a.txt", old_string: "beta", new_string: "gamma", replace_all: null })).toStartWith(`Edited ${tmp.path}/a.txt (1 replacement, matched exactly).`);
    expect(answer("MultiEdit", { file_path: "a.txt", edits: [{ old_string: "gamma", new_string: "delta", replace_all: null }] })).toStartWith(`Edited ${tmp.path}/a.txt (1 edit, 1 replacement; matched exactly).`);
    expect(answer("Glob", { pattern: "*.txt", path: null })).toStartWith('1 file matches "*.txt"');
    const grep = { pattern: "delta", path: null, glob: null, output_mode: null, "-A": null, "-B": null, "-C": null, "-n": null, "-i": null, type: null, head_limit: null, multiline: null };
    expect(answer("Grep", grep)).toBe('1 match in 1 file for "delta":\n\na.txt\n  2: delta');
    expect(answer("Bash", { command: "echo hi", timeout: null, description: null, run_in_background: null })).toStartWith("$ echo hi\nhi\n[exit code 0 · ");
    try {
      expect(answer("Bash", { command: "sleep 30", timeout: null, description: null, run_in_background: true })).toStartWith("Started p1 (pid ");
      expect(answer("BashOutput", { bash_id: "p1", filter: null })).toStartWith("No new output from p1 since last read (still running");
      expect(answer("KillShell", { shell_id: "p1" })).toStartWith("Stopped p1 (sleep 30)");
    } finally {
      kt(["session", "end"], o);
    }
    expect(readFileSync(join(tmp.path, "a.txt"), "utf8")).toBe("alpha\ndelta\n");
  });

  test("Bash with run_in_background starts a kt process; BashOutput reads it; KillShell stops it", () => {
    using tmp = tempDir();
    const o = { cwd: tmp.path, stateDir: join(tmp.path, ".s") };
    try {
      const started = reply(call(o.cwd, o.stateDir, "Bash", { command: "echo ready; sleep 30", description: "Background job", run_in_background: true }));
      expect(started.is_error).toBe(false);
      expect(started.content).toStartWith("Started p1 (pid ");
      expect(started.content).toContain("\n  ready\n");
      const listed = kt(["ps", "list"], o).stdout;
      expect(listed).toContain("p1");
      expect(listed).toContain("running");
      const out = reply(call(o.cwd, o.stateDir, "BashOutput", { bash_id: "p1" }));
      expect(out.content).toStartWith("No new output from p1 since last read (still running");
      const killed = reply(call(o.cwd, o.stateDir, "KillShell", { shell_id: "p1" }));
      expect(killed.content).toStartWith("Stopped p1 (echo ready; sleep 30)");
    } finally {
      kt(["session", "end"], o);
    }
  });

  test("TaskOutput waits for a background task to end (kt's process wait); block: false reads; TaskStop stops", () => {
    using tmp = tempDir();
    const o = { cwd: tmp.path, stateDir: join(tmp.path, ".s") };
    try {
      expect(reply(call(o.cwd, o.stateDir, "Bash", { command: "sleep 2.5; echo done", run_in_background: true })).content).toStartWith("Started p1 (pid ");
      const waited = reply(call(o.cwd, o.stateDir, "TaskOutput", { task_id: "p1", block: true, timeout: 10000 }));
      expect(waited.is_error).toBe(false);
      expect(waited.content.replace(/\d\d:\d\d/, "<clock>")).toBe(`p1 ended. Output since last read (line 1):\ndone\np1 exited with code 0 after <clock>. Full log: ${o.stateDir}/sessions/default/proc/p1.log`);
      expect(reply(call(o.cwd, o.stateDir, "Bash", { command: "sleep 30", run_in_background: true })).content).toStartWith("Started p2 (pid ");
      expect(reply(call(o.cwd, o.stateDir, "TaskOutput", { task_id: "p2", block: false })).content).toStartWith("No new output from p2 since last read (still running");
      expect(reply(call(o.cwd, o.stateDir, "TaskOutput", { task_id: "p2", timeout: 300 })).content).toBe(`p2 is still running after 0.3s. No new output meanwhile.\nWait again with {"action":"wait","id":"p2"}, or stop it with {"action":"stop","id":"p2"}.`);
      expect(reply(call(o.cwd, o.stateDir, "TaskStop", { task_id: "p2" })).content).toStartWith("Stopped p2 (sleep 30)");
    } finally {
      kt(["session", "end"], o);
    }
  });

  test("MultiEdit applies every edit to the file", () => {
    using tmp = tempDir();
    const o = { cwd: tmp.path, stateDir: join(tmp.path, ".s") };
    writeFileSync(join(tmp.path, "m.txt"), "one\ntwo\nthree\n");
    expect(kt(["read", "m.txt"], o).exitCode).toBe(0);
    const r = reply(call(o.cwd, o.stateDir, "MultiEdit", { file_path: "m.txt", edits: [{ old_string: "one", new_string: "1" }, { old_string: "three", new_string: "3" }] }));
    expect(r.is_error).toBe(false);
    expect(readFileSync(join(tmp.path, "m.txt"), "utf8")).toBe("1\ntwo\n3\n");
  });

  test("Grep with output_mode, -i and -C", () => {
    using tmp = tempDir();
    const o = { cwd: tmp.path, stateDir: join(tmp.path, ".s") };
    writeFileSync(join(tmp.path, "a.txt"), "alpha\nBeta\ngamma\n");
    const files = reply(call(o.cwd, o.stateDir, "Grep", { pattern: "beta", "-i": true, output_mode: "files_with_matches" }));
    expect(files.is_error).toBe(false);
    expect(files.content).toContain("a.txt");
    const around = reply(call(o.cwd, o.stateDir, "Grep", { pattern: "Beta", "-C": 1, output_mode: "content" }));
    expect(around.content).toContain("alpha");
    expect(around.content).toContain("gamma");
  });
});

describe("kt mcp's call handler with Claude Code's tool names", () => {
  const open: Client[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.close()));
  });

  test("Read, Edit and a background Bash through the official SDK client", async () => {
    using tmp = tempDir();
    writeFileSync(join(tmp.path, "a.txt"), "alpha\nbeta\n");
    const client = new Client({ name: "kt-test", version: "0" });
    await client.connect(new StdioClientTransport({ command: KT, args: ["mcp"], cwd: tmp.path, env: { PATH: process.env.PATH ?? "", HOME: tmp.path, KT_STATE_DIR: join(tmp.path, ".s") }, stderr: "pipe" }));
    open.push(client);
    const read = await client.callTool({ name: "Read", arguments: { file_path: "a.txt" } });
    expect(read.content).toEqual([{ type: "text", text: `${tmp.path}/a.txt\n     1→alpha\n     2→beta` }]);
    const edit = await client.callTool({ name: "Edit", arguments: { file_path: "a.txt", old_string: "alpha", new_string: "ALPHA" } });
    expect(edit.isError).toBe(false);
    const bg = await client.callTool({ name: "Bash", arguments: { command: "sleep 30", description: "Wait", run_in_background: true } });
    expect((bg.content as { text: string }[])[0]!.text).toStartWith("Started p1 (pid ");
    const killed = await client.callTool({ name: "KillShell", arguments: { shell_id: "p1" } });
    expect((killed.content as { text: string }[])[0]!.text).toStartWith("Stopped p1 (sleep 30)");
    expect(readFileSync(join(tmp.path, "a.txt"), "utf8")).toBe("ALPHA\nbeta\n");
  });
});
