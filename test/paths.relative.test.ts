// Issue 18.2, relative-path confusion (KHAELOR §2.4): a path given relative to the project's
// top from a subdirectory is not found, but names a file from the root (--root, the MCP
// server's root) or the enclosing git repository's top level: the not-found prose says
// "Maybe you meant /abs/path?" before the name-similarity suggestions. Through dist/kt.
import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { KT, kt, tempDir, type TempDir } from "./_helpers.ts";

const dirs: TempDir[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d[Symbol.dispose]();
});

/** proj/src/kernel/agent.ts, and the subdirectory proj/pkg the agent works from. */
function project(opts: { git?: boolean } = {}) {
  const tmp = tempDir();
  dirs.push(tmp);
  const proj = join(tmp.path, "proj");
  mkdirSync(join(proj, "src", "kernel"), { recursive: true });
  mkdirSync(join(proj, "pkg"), { recursive: true });
  writeFileSync(join(proj, "src", "kernel", "agent.ts"), "export const agent = 1;\n");
  if (opts.git) mkdirSync(join(proj, ".git"));
  const stateDir = join(tmp.path, "state");
  return { tmp: tmp.path, proj, pkg: join(proj, "pkg"), stateDir };
}

describe("18.2 relative-path confusion", () => {
  test("--root: read names the file from the root (golden)", () => {
    const { proj, pkg, stateDir } = project();
    const r = kt(["read", "src/kernel/agent.ts", "--root", proj], { cwd: pkg, stateDir });
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe(`File not found: ${pkg}/src/kernel/agent.ts. Maybe you meant ${proj}/src/kernel/agent.ts?\n`);
  });

  test("the git repository's top level, before the name-similarity suggestions (golden)", () => {
    const { proj, pkg, stateDir } = project({ git: true });
    mkdirSync(join(pkg, "src", "kernel"), { recursive: true });
    writeFileSync(join(pkg, "src", "kernel", "agents.ts"), "");
    const r = kt(["read", "src/kernel/agent.ts"], { cwd: pkg, stateDir });
    expect(r.stdout).toBe(`File not found: ${pkg}/src/kernel/agent.ts. Maybe you meant ${proj}/src/kernel/agent.ts? Did you mean one of these? src/kernel/agents.ts\n`);
  });

  test("edit, grep and glob paths say it too (golden)", () => {
    const { proj, pkg, stateDir } = project({ git: true });
    const edit = kt(["edit", "src/kernel/agent.ts", "--old-string", "1", "--new-string", "2"], { cwd: pkg, stateDir });
    expect(edit.stdout).toBe(`File not found: ${pkg}/src/kernel/agent.ts. Maybe you meant ${proj}/src/kernel/agent.ts? To create a new file, use the write tool.\n`);
    const grep = kt(["grep", "agent", "src/kernel"], { cwd: pkg, stateDir });
    expect(grep.stdout).toStartWith(`File not found: ${pkg}/src/kernel. Maybe you meant ${proj}/src/kernel?`);
  });

  test("never a path outside the root, never the path that was given, and nothing from the top itself", () => {
    const { proj, pkg, stateDir } = project({ git: true });
    // Confined to pkg: proj/src is outside the root and must not be offered.
    const confined = kt(["read", "src/kernel/agent.ts", "--root", pkg], { cwd: pkg, stateDir });
    expect(confined.stdout).not.toContain("Maybe you meant");
    expect(confined.stdout).not.toContain(`${proj}/src`);
    // From the top, the path is simply missing.
    const top = kt(["read", "src/kernel/nothing.ts"], { cwd: proj, stateDir });
    expect(top.stdout).toBe(`File not found: ${proj}/src/kernel/nothing.ts. Use glob to search for it by name, or read the parent directory to list what is there.\n`);
    // Without a root or a repository there is no top to try.
    const { pkg: bare, stateDir: s2 } = project();
    expect(kt(["read", "src/kernel/agent.ts"], { cwd: bare, stateDir: s2 }).stdout).not.toContain("Maybe you meant");
  });

  test("the MCP server's root (official SDK client)", async () => {
    const { proj, pkg, stateDir } = project();
    const transport = new StdioClientTransport({
      command: KT,
      args: ["mcp", "--root", proj],
      cwd: pkg,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", KT_STATE_DIR: stateDir },
      stderr: "pipe",
    });
    const client = new Client({ name: "kt-test", version: "0.0.0" });
    await client.connect(transport);
    try {
      const r = await client.callTool({ name: "read", arguments: { file_path: "src/kernel/agent.ts" } });
      expect(r.isError).toBe(true);
      expect((r.content as { text: string }[])[0]!.text).toBe(`File not found: ${pkg}/src/kernel/agent.ts. Maybe you meant ${proj}/src/kernel/agent.ts?`);
    } finally {
      await client.close();
    }
  });
});
