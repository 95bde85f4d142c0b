// The README's "Clients, configured" (SPEC §8.8): each client's line or file, taken from the
// README verbatim. Claude Code and Codex run their own `mcp add` commands (their npm
// packages work offline) with a private home; every configuration, written by a client or
// by hand, is then read back in the client's own format and the server it describes is
// started as the client would start it, with the compiled kt first on PATH: it must answer
// tools/list with kt's tools.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { loadAllTools, schemaName } from "../src/tools/registry.ts";
import { KT, ROOT, tempDir } from "./_helpers.ts";

const CLAUDE = join(ROOT, "node_modules", ".bin", "claude");
const CODEX = join(ROOT, "node_modules", ".bin", "codex");
if (!existsSync(CLAUDE)) console.warn("clients.config.test: @anthropic-ai/claude-code (a devDependency) is not installed, so its test is skipped.");
if (!existsSync(CODEX)) console.warn("clients.config.test: @openai/codex (a devDependency) is not installed, so its test is skipped.");

/** The fenced blocks of the README's "Clients, configured" section, with their language. */
function blocks(): { lang: string; code: string }[] {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const start = readme.indexOf("\n## Clients, configured\n");
  expect(start).toBeGreaterThan(0);
  const section = readme.slice(start, readme.indexOf("\n## ", start + 1));
  return [...section.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1]!, code: m[2]! }));
}

function block(lang: string, ...markers: string[]): string {
  const found = blocks().filter((b) => b.lang === lang && markers.every((m) => b.code.includes(m)));
  expect(found).toHaveLength(1);
  return found[0]!.code;
}

/** The words of a one-line shell command as the README spells it (plain words only). */
function words(line: string): string[] {
  expect(line.trim()).toMatch(/^[\w./= -]+$/);
  return line.trim().split(/\s+/);
}

interface ServerEntry {
  command: string;
  args?: string[];
  type?: string;
}

const PATH = `${dirname(KT)}:${process.env.PATH ?? ""}`;

/** Starts the server an entry describes, as a client does, and lists its tools. */
async function toolsOf(entry: ServerEntry, cwd: string, stateDir: string): Promise<string[]> {
  const client = new Client({ name: "kt-config-test", version: "0" });
  await client.connect(new StdioClientTransport({ command: entry.command, args: entry.args ?? [], cwd, env: { PATH, HOME: dirname(stateDir), KT_STATE_DIR: stateDir, NO_COLOR: "1" }, stderr: "pipe" }));
  try {
    return (await client.listTools()).tools.map((t) => t.name);
  } finally {
    await client.close();
  }
}

const names = (await loadAllTools()).map(schemaName);

function run(argv: string[], opts: { cwd: string; env: Record<string, string> }): { stdout: string; stderr: string; exitCode: number | null } {
  const r = Bun.spawnSync(argv, { cwd: opts.cwd, env: { PATH, NO_COLOR: "1", ...opts.env }, stdin: "ignore", stdout: "pipe", stderr: "pipe", timeout: 120_000 });
  return { stdout: r.stdout.toString(), stderr: r.stderr.toString(), exitCode: r.exitCode };
}

describe("the README's client configurations start kt mcp", () => {
  test("every block of the section is one of those tested here", () => {
    const all = blocks().map((b) => `${b.lang}:${b.code.split("\n")[0]}`);
    expect(all).toEqual(["sh:claude mcp add kt -- kt mcp", "toml:[mcp_servers.kt]", "json:{", "json:{", "json:{"]);
  });

  test.skipIf(!existsSync(CLAUDE))("Claude Code: its own claude mcp add writes a server that starts kt mcp; claude mcp get reports it connected", async () => {
    using tmp = tempDir();
    const home = join(tmp.path, "home");
    const project = join(tmp.path, "project");
    mkdirSync(home);
    mkdirSync(project);
    const argv = words(block("sh", "claude mcp add"));
    expect(argv.slice(0, 3)).toEqual(["claude", "mcp", "add"]);
    // No update checks, telemetry or error reports: this machine has no network, and a test sends nothing out.
    const env = { HOME: home, KT_STATE_DIR: join(tmp.path, "state"), CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1" };
    const added = run([CLAUDE, ...argv.slice(1)], { cwd: project, env });
    expect(added.exitCode, added.stderr).toBe(0);
    const config = JSON.parse(readFileSync(join(home, ".claude.json"), "utf8")) as { projects: Record<string, { mcpServers: Record<string, ServerEntry> }> };
    const entry = config.projects[project]!.mcpServers.kt!;
    expect(entry).toMatchObject({ type: "stdio", command: "kt", args: ["mcp"] });
    expect(await toolsOf(entry, project, join(tmp.path, "state"))).toEqual(names);
    // Claude Code's own health check starts the server and speaks MCP to it.
    const got = run([CLAUDE, "mcp", "get", "kt"], { cwd: project, env });
    expect(got.exitCode, got.stderr).toBe(0);
    expect(got.stdout).toContain("✔ Connected");
  }, 180_000);

  test.skipIf(!existsSync(CODEX))("Codex: its own codex mcp add writes exactly the README's config.toml, which starts kt mcp", async () => {
    using tmp = tempDir();
    const home = join(tmp.path, "codex-home");
    const project = join(tmp.path, "project");
    mkdirSync(home);
    mkdirSync(project);
    const text = readFileSync(join(ROOT, "README.md"), "utf8");
    const line = /`(codex mcp add [^`]+)`/.exec(text.slice(text.indexOf("\n## Clients, configured\n")))![1]!;
    const argv = words(line);
    const added = run([CODEX, ...argv.slice(1)], { cwd: project, env: { HOME: tmp.path, CODEX_HOME: home } });
    expect(added.exitCode, added.stderr).toBe(0);
    const written = readFileSync(join(home, "config.toml"), "utf8");
    expect(Bun.TOML.parse(written)).toEqual(Bun.TOML.parse(block("toml", "[mcp_servers.kt]")));
    const entry = (Bun.TOML.parse(written) as { mcp_servers: Record<string, ServerEntry> }).mcp_servers.kt!;
    expect(await toolsOf(entry, project, join(tmp.path, "state"))).toEqual(names);
  }, 180_000);

  /** A configuration file's server entry with the client's variables filled in. */
  function substituted(entry: ServerEntry, vars: Record<string, string>): ServerEntry {
    const fill = (s: string) => s.replace(/\$\{(\w+)\}/g, (whole, name: string) => vars[name] ?? whole);
    return { ...entry, command: fill(entry.command), args: (entry.args ?? []).map(fill) };
  }

  test("Cursor: .cursor/mcp.json's mcpServers entry, ${workspaceFolder} filled in as Cursor does, starts kt mcp on the project", async () => {
    using tmp = tempDir();
    const project = join(tmp.path, "project");
    mkdirSync(project);
    const config = JSON.parse(block("json", '"mcpServers"', "${workspaceFolder}")) as { mcpServers: Record<string, ServerEntry> };
    expect(Object.keys(config)).toEqual(["mcpServers"]);
    const entry = config.mcpServers.kt!;
    expect(Object.keys(entry).sort()).toEqual(["args", "command"]);
    expect(await toolsOf(substituted(entry, { workspaceFolder: project }), tmp.path, join(tmp.path, "state"))).toEqual(names);
  }, 60_000);

  test("VS Code: .vscode/mcp.json's servers entry (type stdio), ${workspaceFolder} filled in, starts kt mcp on the project", async () => {
    using tmp = tempDir();
    const project = join(tmp.path, "project");
    mkdirSync(project);
    const config = JSON.parse(block("json", '"servers"')) as { servers: Record<string, ServerEntry> };
    expect(Object.keys(config)).toEqual(["servers"]);
    const entry = config.servers.kt!;
    expect(entry.type).toBe("stdio");
    expect(entry.args).toContain("${workspaceFolder}");
    expect(await toolsOf(substituted(entry, { workspaceFolder: project }), tmp.path, join(tmp.path, "state"))).toEqual(names);
  }, 60_000);

  test("Claude Desktop: the mcpServers entry with kt's full path and --root starts kt mcp from anywhere", async () => {
    using tmp = tempDir();
    const project = join(tmp.path, "project");
    mkdirSync(project);
    const config = JSON.parse(block("json", "/usr/local/bin/kt")) as { mcpServers: Record<string, ServerEntry> };
    const entry = config.mcpServers.kt!;
    expect(entry).toEqual({ command: "/usr/local/bin/kt", args: ["mcp", "--root", "/path/to/project"] });
    // The README's placeholders, for this machine's kt and a real project; started from /, as a desktop app may.
    const here = { command: KT, args: entry.args!.map((a) => (a === "/path/to/project" ? project : a)) };
    expect(await toolsOf(here, "/", join(tmp.path, "state"))).toEqual(names);
  }, 60_000);
});
