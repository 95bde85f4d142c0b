// Language servers that fail (SPEC §8.1), played by a fake server (test/fixtures/lsp/
// fake-server.mjs) for the faults a real one cannot be made to show: each is told once, in
// its own prose, no call waits past its budget, and the change itself always lands.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { callTool, tempDir } from "./_helpers.ts";
import { stopLocalServers } from "../src/lsp/index.ts";

const FAKE = join(import.meta.dir, "fixtures", "lsp", "fake-server.mjs");
const NODE = Bun.which("node")!;
const BUDGET = 2000;

afterAll(() => stopLocalServers());

function project(mode: string, extra: string[] = []) {
  const tmp = tempDir("kt-lsp-fault-");
  mkdirSync(join(tmp.path, ".kt"));
  writeFileSync(join(tmp.path, "fake.toml"), "");
  writeFileSync(join(tmp.path, ".kt", "lsp.json"), JSON.stringify({ servers: { fake: { command: NODE, args: [FAKE, mode, ...extra], extensions: [".fake"], rootMarkers: ["fake.toml"] } } }));
  writeFileSync(join(tmp.path, "a.fake"), "one\ntwo\n");
  return tmp;
}

async function edit(tmp: { path: string }, oldString: string, newString: string, env: Record<string, string> = {}) {
  const opts = { cwd: tmp.path, stateDir: join(tmp.path, ".state"), env: { KT_DIAGNOSTICS_MS: String(BUDGET), ...env } };
  await callTool("read", { file_path: join(tmp.path, "a.fake") }, opts);
  return callTool("edit", { file_path: join(tmp.path, "a.fake"), old_string: oldString, new_string: newString }, opts);
}

/** The text after the edit's own report. */
function block(content: string): string {
  return content.split("\n\n").slice(1).join("\n\n");
}

function command(tmp: { path: string }, mode: string) {
  return `${NODE} ${FAKE} ${mode}`;
}

describe("a fake server's faults", () => {
  test("a server that behaves: the error the change introduced, with its line", async () => {
    using tmp = project("ok");
    const r = await edit(tmp, "two", "ERR two");
    expect(r.isError).toBe(false);
    expect(block(r.content)).toBe(`This change introduced 1 error in ${tmp.path}/a.fake (fake):\n2:1 error [fake E1] ERR is not allowed here\n    ERR two\n0 fixed · 0 were already in this file`);
    const again = await edit(tmp, "ERR two", "two");
    expect(block(again.content)).toBe(`Diagnostics (fake): no new errors in ${tmp.path}/a.fake · 1 fixed · 0 were already in this file.`);
    expect(again.metadata.diagnostics).toEqual([
      expect.objectContaining({ path: `${tmp.path}/a.fake`, server: "fake", status: "checked", introduced: [], kept: [], after: [], fixed: [expect.objectContaining({ line: 2, col: 1, code: "E1" })] }),
    ]);
  });

  test("crash at start: told once with what it printed, never restarted, the edit lands", async () => {
    using tmp = project("crash-start");
    const r = await edit(tmp, "two", "ERR two");
    expect(readFileSync(join(tmp.path, "a.fake"), "utf8")).toBe("one\nERR two\n");
    expect(block(r.content)).toBe(
      `Language server fake (${command(tmp, "crash-start")}) could not be started: it exited with code 3 before it was ready.\nIt printed:\nfake-server: cannot start: no configuration found\nDiagnostics and the code tool are off for its files until the session ends; the change itself was made.`,
    );
    expect(r.metadata.durationMs).toBeLessThan(BUDGET + 500);
    const second = await edit(tmp, "one", "uno");
    expect(second.content).not.toContain("\n\n");
    expect(readFileSync(join(tmp.path, "a.fake"), "utf8")).toBe("uno\nERR two\n");
  });

  test("crash mid-request: told, restarted once, then told it stays off", async () => {
    using tmp = project("crash-request");
    const first = await edit(tmp, "two", "ERR two");
    expect(block(first.content)).toBe(
      `Language server fake (${command(tmp, "crash-request")}) stopped: exited with code 7.\nIt printed:\nfake-server: segmentation fault (core dumped)\nkt starts it again on the next change.`,
    );
    expect(first.metadata.durationMs).toBeLessThan(BUDGET + 500);
    const second = await edit(tmp, "one", "uno");
    expect(block(second.content)).toBe(
      `Language server fake (${command(tmp, "crash-request")}) stopped: exited with code 7.\nIt printed:\nfake-server: segmentation fault (core dumped)\nDiagnostics and the code tool are off for its files until the session ends; the change itself was made.`,
    );
    const third = await edit(tmp, "uno", "one");
    expect(third.content).not.toContain("\n\n");
    expect(readFileSync(join(tmp.path, "a.fake"), "utf8")).toBe("one\nERR two\n");
  });

  test("a crash after which the restart behaves: the next change is checked again", async () => {
    using tmp = project("crash-once", [join(tempDir().path, "marker")]);
    const first = await edit(tmp, "two", "ERR two");
    expect(block(first.content)).toContain("kt starts it again on the next change.");
    const second = await edit(tmp, "one", "ERR one");
    // The restarted server is new: it may still be starting, or already checked the change.
    const said = block(second.content);
    expect(said === `Diagnostics: fake is still starting, so ${tmp.path}/a.fake was not checked this time; the next change will be (or call code with action "diagnostics").` || said.startsWith(`This change introduced 1 error in ${tmp.path}/a.fake (fake):\n1:1 error [fake E1]`)).toBe(true);
  });

  test("a server that never answers initialize: hung, told once, within the budget", async () => {
    using tmp = project("hang");
    const r = await edit(tmp, "two", "ERR two", { KT_LSP_START_MS: "800" });
    expect(block(r.content)).toBe(
      `Language server fake (${command(tmp, "hang")}) stopped answering: it did not answer initialize within 800 ms.\nDiagnostics and the code tool are off for its files until the session ends; the change itself was made.`,
    );
    expect(r.metadata.durationMs).toBeLessThan(BUDGET + 500);
    expect(readFileSync(join(tmp.path, "a.fake"), "utf8")).toBe("one\nERR two\n");
  });

  test("a hung start longer than the budget: the change says the server is still starting", async () => {
    using tmp = project("hang");
    const r = await edit(tmp, "two", "ERR two", { KT_LSP_START_MS: "60000", KT_DIAGNOSTICS_MS: "600" });
    expect(block(r.content)).toBe(`Diagnostics: fake is still starting, so ${tmp.path}/a.fake was not checked this time; the next change will be (or call code with action "diagnostics").`);
    expect(r.metadata.durationMs).toBeLessThan(600 + 500);
  });

  test("malformed frames: told as not speaking the protocol", async () => {
    using tmp = project("garbage");
    const r = await edit(tmp, "two", "ERR two");
    expect(block(r.content)).toBe(
      `Language server fake (${command(tmp, "garbage")}) sent something that is not the Language Server Protocol: Message header must separate key and value using ':'.\nDiagnostics and the code tool are off for its files until the session ends; the change itself was made.`,
    );
    expect(r.metadata.durationMs).toBeLessThan(BUDGET + 500);
    expect(readFileSync(join(tmp.path, "a.fake"), "utf8")).toBe("one\nERR two\n");
  });

  test("diagnostics that come after the budget are not shown as current", async () => {
    using tmp = project("slow");
    const r = await edit(tmp, "two", "ERR two");
    expect(block(r.content)).toBe(`Diagnostics: fake did not report on ${tmp.path}/a.fake within 2,000 ms, so nothing is shown rather than something stale; call code with action "diagnostics" to ask again.`);
    expect(r.metadata.durationMs).toBeLessThan(BUDGET + 500);
    expect(r.metadata.diagnostics).toEqual([{ path: `${tmp.path}/a.fake`, server: "fake", status: "late" }]);
  });

  test("--no-diagnostics and KT_DIAGNOSTICS=0: no server is asked", async () => {
    using tmp = project("ok");
    const opts = { cwd: tmp.path, stateDir: join(tmp.path, ".state") };
    await callTool("read", { file_path: join(tmp.path, "a.fake") }, opts);
    const off = await callTool("edit", { file_path: join(tmp.path, "a.fake"), old_string: "two", new_string: "ERR two" }, { ...opts, flags: { noDiagnostics: true } });
    expect(off.content).not.toContain("\n\n");
    expect(off.metadata.diagnostics).toBeUndefined();
    const env = await callTool("edit", { file_path: join(tmp.path, "a.fake"), old_string: "one", new_string: "ERR one" }, { ...opts, env: { KT_DIAGNOSTICS: "0" } });
    expect(env.content).not.toContain("\n\n");
  });
});
