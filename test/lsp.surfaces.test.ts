// Diagnostics and the code tool where models meet them (SPEC §8.1): through kt mcp with the
// official SDK client (one server process for every call), through one-shot dist/kt calls
// (the servers warm in the session's host), and never stale — two edits at once, and an
// edit while another process keeps changing a file the edited one imports.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { callTool, KT, kt, ROOT, tempDir } from "./_helpers.ts";
import { stopLocalServers } from "../src/lsp/index.ts";

const PATH = `${join(ROOT, "node_modules", ".bin")}:${process.env.PATH}`;
process.env.PATH = PATH;
const BUDGET = 10_000;
const HAS_TSLS = Bun.which("typescript-language-server", { PATH }) !== null;

afterAll(() => stopLocalServers());

function project(): { path: string; [Symbol.dispose](): void } {
  const tmp = tempDir("kt-lsp-surface-");
  writeFileSync(join(tmp.path, "tsconfig.json"), JSON.stringify({ compilerOptions: { strict: true, noEmit: true, target: "es2022", module: "esnext", moduleResolution: "bundler" } }));
  writeFileSync(join(tmp.path, "lib.ts"), "export function area(w: number, h: number): number {\n  return w * h;\n}\n");
  writeFileSync(join(tmp.path, "main.ts"), 'import { area } from "./lib";\n\nexport const one = area(1, 2);\nexport const two = area(3, 4);\nexport const three = area(5, 6);\n');
  return tmp;
}

/** Process ids whose parent is `pid`, with their command lines. */
function children(pid: number): { pid: number; args: string }[] {
  const out = Bun.spawnSync(["ps", "-eo", "pid=,ppid=,args="]).stdout.toString();
  return out.split("\n").flatMap((l) => {
    const m = /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(l);
    return m && Number(m[2]) === pid ? [{ pid: Number(m[1]), args: m[3]! }] : [];
  });
}

function block(content: string): string {
  const at = content.search(/\n\n(This change introduced|Diagnostics)/);
  return at < 0 ? "" : content.slice(at + 2);
}

describe.skipIf(!HAS_TSLS)("kt mcp with the SDK client (skipped when typescript-language-server is absent)", () => {
  test("an edit's result carries its diagnostics, code answers, and one server process serves every call", async () => {
    using tmp = project();
    const transport = new StdioClientTransport({
      command: KT,
      args: ["mcp", "--structured"],
      cwd: tmp.path,
      env: { PATH, HOME: process.env.HOME ?? "/tmp", NO_COLOR: "1", KT_STATE_DIR: join(tmp.path, ".state"), KT_DIAGNOSTICS_MS: String(BUDGET), KT_CODE_MS: "120000" },
      stderr: "pipe",
    });
    const client = new Client({ name: "kt-test", version: "0.0.0" });
    await client.connect(transport);
    try {
      const textOf = (r: CallToolResult) => (r.content[0] as { text: string }).text;
      const warm = (await client.callTool({ name: "code", arguments: { action: "diagnostics", file_path: "main.ts" } }, undefined, { timeout: 180_000 })) as CallToolResult;
      expect(textOf(warm)).toBe(`No diagnostics in ${tmp.path}/main.ts (typescript-language-server).`);
      await client.callTool({ name: "read", arguments: { file_path: "main.ts" } });
      const started = performance.now();
      const edit = (await client.callTool({ name: "edit", arguments: { file_path: "main.ts", old_string: "area(3, 4)", new_string: 'area(3, "4")' } })) as CallToolResult;
      expect(performance.now() - started).toBeLessThan(BUDGET + 2000);
      expect(block(textOf(edit))).toBe(
        `This change introduced 1 error in ${tmp.path}/main.ts (typescript-language-server):\n4:28 error [typescript 2345] Argument of type 'string' is not assignable to parameter of type 'number'.\n    export const two = area(3, "4");\n0 fixed · 0 were already in this file`,
      );
      const meta = (edit.structuredContent as { metadata: { diagnostics: { status: string; introduced: unknown[] }[] } }).metadata;
      expect(meta.diagnostics[0]!.status).toBe("checked");
      expect(meta.diagnostics[0]!.introduced).toHaveLength(1);

      const refs = (await client.callTool({ name: "code", arguments: { action: "references", file_path: "lib.ts", line: 1, symbol: "area" } })) as CallToolResult;
      expect(textOf(refs)).toBe(
        [
          "5 references to area in 2 files (typescript-language-server):",
          `${tmp.path}/lib.ts:1:17: export function area(w: number, h: number): number {`,
          "",
          `${tmp.path}/main.ts:1:10: import { area } from "./lib";`,
          `${tmp.path}/main.ts:3:20: export const one = area(1, 2);`,
          `${tmp.path}/main.ts:4:20: export const two = area(3, "4");`,
          `${tmp.path}/main.ts:5:22: export const three = area(5, 6);`,
        ].join("\n"),
      );
      const fix = (await client.callTool({ name: "edit", arguments: { file_path: "main.ts", old_string: 'area(3, "4")', new_string: "area(3, 4)" } })) as CallToolResult;
      expect(block(textOf(fix))).toBe(`Diagnostics (typescript-language-server): no new errors in ${tmp.path}/main.ts · 1 fixed · 0 were already in this file.`);
      // The server kt started for the first call served them all.
      const servers = children(transport.pid!).filter((c) => c.args.includes("typescript-language-server"));
      expect(servers).toHaveLength(1);
    } finally {
      await client.close();
    }
  }, 240_000);
});

describe.skipIf(!HAS_TSLS)("one-shot dist/kt calls: the servers stay warm in the session's host (skipped when typescript-language-server is absent)", () => {
  test("a second edit is checked by the server the first one started; kt session end stops it", async () => {
    using tmp = project();
    const state = join(tmp.path, ".state");
    const env = { PATH, KT_DIAGNOSTICS_MS: String(BUDGET), KT_CODE_MS: "120000" };
    const o = { cwd: tmp.path, stateDir: state, env };
    const warm = kt(["code", "diagnostics", "main.ts"], o);
    expect(warm.stdout).toBe(`No diagnostics in ${tmp.path}/main.ts (typescript-language-server).\n`);
    kt(["read", "main.ts"], o);
    const started = performance.now();
    const edit = kt(["edit", "main.ts", "--old-string", "area(5, 6)", "--new-string", "area(5)"], o);
    expect(performance.now() - started).toBeLessThan(BUDGET + 2000);
    expect(block(edit.stdout.trimEnd())).toBe(
      `This change introduced 1 error in ${tmp.path}/main.ts (typescript-language-server):\n5:22 error [typescript 2554] Expected 2 arguments, but got 1.\n    export const three = area(5);\n0 fixed · 0 were already in this file`,
    );
    const hosts = Bun.spawnSync(["ps", "-eo", "pid=,args="]).stdout.toString().split("\n").filter((l) => l.includes("__host") && l.includes(state));
    expect(hosts).toHaveLength(1);
    const host = Number(hosts[0]!.trim().split(/\s+/)[0]);
    expect(children(host).filter((c) => c.args.includes("typescript-language-server"))).toHaveLength(1);
    const off = kt(["edit", "main.ts", "--old-string", "area(5)", "--new-string", "area(5, 6)", "--no-diagnostics"], o);
    expect(off.stdout).not.toContain("Diagnostics");
    expect(kt(["session", "end"], o).exitCode).toBe(0);
    const deadline = performance.now() + 15_000;
    while (performance.now() < deadline && Bun.spawnSync(["kill", "-0", String(host)]).exitCode === 0) await Bun.sleep(200);
    expect(Bun.spawnSync(["kill", "-0", String(host)]).exitCode).not.toBe(0);
  }, 240_000);
});

describe.skipIf(!HAS_TSLS)("apply_patch and undo tell what they broke and fixed (skipped when typescript-language-server is absent)", () => {
  test("a patch of two files: each file's new error; kt undo --last: each fixed", async () => {
    using tmp = project();
    const state = join(tmp.path, ".state");
    const env = { KT_DIAGNOSTICS_MS: String(BUDGET), KT_CODE_MS: "120000" };
    const opts = { cwd: tmp.path, stateDir: state, root: tmp.path, env };
    await callTool("code", { action: "diagnostics", file_path: "main.ts" }, opts);
    const patch = [
      "*** Begin Patch",
      "*** Update File: lib.ts",
      "@@",
      " export function area(w: number, h: number): number {",
      "-  return w * h;",
      '+  return "w" * h;',
      "*** Update File: main.ts",
      "@@",
      "-export const one = area(1, 2);",
      "+export const one: string = area(1, 2);",
      "*** End Patch",
    ].join("\n");
    const r = await callTool("patch", { patch }, opts);
    expect(r.isError, r.content).toBe(false);
    const said = block(r.content);
    expect(said).toContain(`This change introduced 1 error in ${tmp.path}/lib.ts (typescript-language-server):\n2:10 error [typescript 2362] The left-hand side of an arithmetic operation must be of type 'any', 'number', 'bigint' or an enum type.\n    return "w" * h;\n0 fixed · 0 were already in this file`);
    expect(said).toContain(`This change introduced 1 error in ${tmp.path}/main.ts (typescript-language-server):\n3:14 error [typescript 2322] Type 'number' is not assignable to type 'string'.\n    export const one: string = area(1, 2);\n0 fixed · 0 were already in this file`);
    expect((r.metadata.diagnostics as unknown[]).length).toBe(2);
    // The undo is a one-shot dist/kt call: its diagnostics come from the session's host, warmed first.
    kt(["code", "diagnostics", "main.ts", "--root", tmp.path], { cwd: tmp.path, stateDir: state, env: { PATH, ...env } });
    const undo = kt(["undo", "--last", "--root", tmp.path], { cwd: tmp.path, stateDir: state, env: { PATH, ...env } });
    expect(undo.exitCode, undo.stderr).toBe(0);
    const after = block(undo.stdout.trimEnd());
    expect(after).toContain(`Diagnostics (typescript-language-server): no new errors in ${tmp.path}/lib.ts · 1 fixed · 0 were already in this file.`);
    expect(after).toContain(`Diagnostics (typescript-language-server): no new errors in ${tmp.path}/main.ts · 1 fixed · 0 were already in this file.`);
    kt(["session", "end"], { cwd: tmp.path, stateDir: state, env: { PATH } });
  }, 240_000);
});

describe.skipIf(!HAS_TSLS)("never stale (skipped when typescript-language-server is absent)", () => {
  test("two edits at once: each tells only what its own content has, or says it was too late", async () => {
    using tmp = project();
    const opts = { cwd: tmp.path, stateDir: join(tmp.path, ".state"), root: tmp.path, env: { KT_DIAGNOSTICS_MS: String(BUDGET), KT_CODE_MS: "120000" } };
    await callTool("code", { action: "diagnostics", file_path: "main.ts" }, opts);
    await callTool("read", { file_path: "main.ts" }, opts);
    const [a, b] = await Promise.all([
      callTool("edit", { file_path: "main.ts", old_string: "area(1, 2)", new_string: 'area(1, "2")' }, opts),
      callTool("edit", { file_path: "main.ts", old_string: "area(5, 6)", new_string: 'area(5, "6")' }, opts),
    ]);
    expect(readFileSync(join(tmp.path, "main.ts"), "utf8")).toContain('area(1, "2")');
    expect(readFileSync(join(tmp.path, "main.ts"), "utf8")).toContain('area(5, "6")');
    for (const [r, own, other] of [[a, 'area(1, "2")', 'area(5, "6")'], [b, 'area(5, "6")', 'area(1, "2")']] as const) {
      const said = block(r.content);
      expect(r.metadata.durationMs).toBeLessThan(BUDGET + 1500);
      if (said.startsWith("Diagnostics: typescript-language-server did not report")) continue;
      // Its own error is new; the other edit's is either not in its content or already there before it.
      expect(said).toContain(`This change introduced 1 error in ${tmp.path}/main.ts`);
      expect(said).toContain(own);
      expect(said.split("\n").slice(0, -1).join("\n")).not.toContain(other);
    }
  }, 240_000);

  test("an edit while another process rewrites a file it imports: the lines told are the lines kt wrote", async () => {
    using tmp = project();
    const opts = { cwd: tmp.path, stateDir: join(tmp.path, ".state"), root: tmp.path, env: { KT_DIAGNOSTICS_MS: String(BUDGET), KT_CODE_MS: "120000" } };
    await callTool("code", { action: "diagnostics", file_path: "main.ts" }, opts);
    await callTool("read", { file_path: "main.ts" }, opts);
    const other = Bun.spawn(["bash", "-c", `for i in $(seq 1 40); do printf 'export function area(w: number, h: number): number {\\n  return w * h + %d;\\n}\\n' $i > lib.ts; sleep 0.05; done`], { cwd: tmp.path });
    const r = await callTool("edit", { file_path: "main.ts", old_string: "export const two = area(3, 4);", new_string: "export const two: string = area(3, 4);" }, opts);
    await other.exited;
    const written = (r.metadata.diagnostics as { after: { line: number }[] }[] | undefined)?.[0];
    const said = block(r.content);
    if (!said.startsWith("Diagnostics: typescript-language-server did not report")) {
      expect(said).toBe(
        `This change introduced 1 error in ${tmp.path}/main.ts (typescript-language-server):\n4:14 error [typescript 2322] Type 'number' is not assignable to type 'string'.\n    export const two: string = area(3, 4);\n0 fixed · 0 were already in this file`,
      );
      expect(written!.after.map((d) => d.line)).toEqual([4]);
    }
  }, 240_000);
});

describe.skipIf(!HAS_TSLS)("replace (skipped when typescript-language-server is absent)", () => {
  test("kt replace through dist/kt: the errors it introduced, file by file; kt undo --last: each fixed", () => {
    using tmp = project();
    const state = join(tmp.path, ".state");
    const env = { PATH, KT_DIAGNOSTICS_MS: String(BUDGET), KT_CODE_MS: "120000" };
    const opts = { cwd: tmp.path, stateDir: state, env };
    kt(["code", "diagnostics", "main.ts", "--root", tmp.path], opts);
    const r = kt(["replace", "area\\((\\d), (\\d)\\)", 'area("$1", $2)', "--regex", "--root", tmp.path], opts);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(readFileSync(join(tmp.path, "main.ts"), "utf8")).toContain('area("3", 4)');
    const said = block(r.stdout.trimEnd());
    expect(said).toBe(
      [
        "This change introduced 3 errors in main.ts (typescript-language-server):",
        "3:25 error [typescript 2345] Argument of type 'string' is not assignable to parameter of type 'number'.",
        '    export const one = area("1", 2);',
        "4:25 error [typescript 2345] Argument of type 'string' is not assignable to parameter of type 'number'.",
        '    export const two = area("3", 4);',
        "5:27 error [typescript 2345] Argument of type 'string' is not assignable to parameter of type 'number'.",
        '    export const three = area("5", 6);',
        "0 fixed · 0 were already in this file",
      ].join("\n"),
    );
    const undo = kt(["undo", "--last", "--root", tmp.path], opts);
    expect(undo.exitCode, undo.stderr).toBe(0);
    expect(block(undo.stdout.trimEnd())).toBe(`Diagnostics (typescript-language-server): no new errors in ${tmp.path}/main.ts · 3 fixed · 0 were already in this file.`);
    kt(["session", "end"], { cwd: tmp.path, stateDir: state, env: { PATH } });
  }, 240_000);

  test("a replace across many files: the servers are asked about the first 20, the clean ones said in one line, the rest pointed to", () => {
    using tmp = project();
    const state = join(tmp.path, ".state");
    const env = { PATH, KT_DIAGNOSTICS_MS: "60000", KT_CODE_MS: "120000" };
    const names = Array.from({ length: 25 }, (_, i) => `m${String(i).padStart(2, "0")}.ts`);
    for (const name of names) writeFileSync(join(tmp.path, name), 'import { area } from "./lib";\n\nexport const size = area(2, 3);\n');
    const r = kt(["replace", "size", "extent", "--word", "--include", "m*.ts", "--root", tmp.path], { cwd: tmp.path, stateDir: state, env });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toStartWith('Replaced "size": 25 replacements in 25 files:');
    expect(block(r.stdout.trimEnd())).toBe(
      [
        "Diagnostics (typescript-language-server): no errors in 20 files (m00.ts, m01.ts, m02.ts, m03.ts, m04.ts and 15 more).",
        'Diagnostics were asked for the first 20 of the 25 changed files a language server may cover; call code with action "diagnostics" (without file_path: every file this session changed) for the others.',
      ].join("\n\n"),
    );
    expect(readFileSync(join(tmp.path, "m24.ts"), "utf8")).toContain("export const extent");
    kt(["session", "end"], { cwd: tmp.path, stateDir: state, env: { PATH } });
  }, 240_000);
  test("a replace of files larger than a socket's buffer: the session's host gets the whole request and answers within the budget", () => {
    using tmp = project();
    const state = join(tmp.path, ".state");
    const env = { PATH, KT_DIAGNOSTICS_MS: "20000", KT_CODE_MS: "120000" };
    const pad = `// ${"x".repeat(78)}\n`.repeat(300);
    const names = Array.from({ length: 12 }, (_, i) => `big${String(i).padStart(2, "0")}.ts`);
    for (const name of names) writeFileSync(join(tmp.path, name), `import { area } from "./lib";\n\nexport const size = area(2, 3);\n${pad}`);
    // The host is up and its server warm before the replace asks it.
    kt(["code", "diagnostics", "main.ts", "--root", tmp.path], { cwd: tmp.path, stateDir: state, env });
    const started = performance.now();
    const r = kt(["replace", "size", "extent", "--word", "--include", "big*.ts", "--root", tmp.path], { cwd: tmp.path, stateDir: state, env });
    const took = performance.now() - started;
    expect(r.exitCode, r.stderr).toBe(0);
    expect(block(r.stdout.trimEnd())).toBe("Diagnostics (typescript-language-server): no errors in 12 files (big00.ts, big01.ts, big02.ts, big03.ts, big04.ts and 7 more).");
    // A request the host never got whole went unanswered until the budget ran out (and then some).
    expect(took).toBeLessThan(20_000);
    kt(["session", "end"], { cwd: tmp.path, stateDir: state, env: { PATH } });
  }, 240_000);
});

describe("no session host for servers that are not installed", () => {
  // A Python project (pyproject.toml) where no Python server is on PATH: the change is told
  // without a word of diagnostics, and no host was started to find that out.
  function pyProject(): { path: string; [Symbol.dispose](): void } {
    const tmp = tempDir("kt-lsp-absent-");
    writeFileSync(join(tmp.path, "pyproject.toml"), '[project]\nname = "p"\n');
    writeFileSync(join(tmp.path, "a.py"), "def area(w, h):\n    return w * h\n");
    writeFileSync(join(tmp.path, "b.py"), "from a import area\nprint(area(1, 2))\n");
    return tmp;
  }
  const hostSocket = (state: string) => join(state, "sessions", "default", "host.sock");

  test("a replace and an edit in a project whose server is absent start no host", () => {
    using tmp = pyProject();
    const state = join(tmp.path, ".state");
    // Only the system's directories: no pyright-langserver, basedpyright-langserver or pylsp.
    const env = { PATH: "/usr/bin:/bin" };
    for (const name of ["pyright-langserver", "basedpyright-langserver", "pylsp"]) expect(Bun.which(name, { PATH: env.PATH })).toBeNull();
    const r = kt(["replace", "area", "surface", "--word"], { cwd: tmp.path, stateDir: state, env });
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe('Replaced "area": 3 replacements in 2 files:\nM a.py (1)\nM b.py (2)\n');
    expect(existsSync(hostSocket(state))).toBe(false);
    expect(kt(["read", "a.py"], { cwd: tmp.path, stateDir: state, env }).exitCode).toBe(0);
    const e = kt(["edit", "a.py", "--old-string", "w * h", "--new-string", "h * w"], { cwd: tmp.path, stateDir: state, env });
    expect(e.exitCode).toBe(0);
    expect(e.stdout).not.toContain("iagnostic");
    expect(existsSync(hostSocket(state))).toBe(false);
  });

  test("the same project with a server on PATH asks the host (which tells the server's failure)", () => {
    using tmp = pyProject();
    const state = join(tmp.path, ".state");
    const bin = join(tmp.path, "bin");
    mkdirSync(bin);
    // A server that cannot start: the host is asked, starts it, and tells what it printed.
    writeFileSync(join(bin, "pyright-langserver"), "#!/bin/sh\necho 'no python here' >&2\nexit 3\n", { mode: 0o755 });
    const r = kt(["replace", "area", "surface", "--word"], { cwd: tmp.path, stateDir: state, env: { PATH: `${bin}:/usr/bin:/bin`, KT_DIAGNOSTICS_MS: "10000" } });
    expect(r.stdout).toStartWith('Replaced "area": 3 replacements in 2 files:\nM a.py (1)\nM b.py (2)\n\n');
    expect(r.stdout).toContain("no python here");
    expect(existsSync(hostSocket(state))).toBe(true);
    kt(["session", "end"], { cwd: tmp.path, stateDir: state });
  });
});
