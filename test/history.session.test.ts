// History outlives the session (SPEC §8.6): versions stay after `kt session end` and after an
// MCP server exits, for 7 days within the cap; `kt history` without a path lists the
// session's changes; `kt undo --last --session ID` works on an ended session.
import { describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { KT, kt, tempDir } from "./_helpers.ts";

const TIME = /\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/g;

function workspace(tmp: { path: string }) {
  const work = join(tmp.path, "w");
  mkdirSync(work);
  writeFileSync(join(work, "a.txt"), "alpha\nbeta\n");
  writeFileSync(join(work, "b.txt"), "beta\n");
  return { work, o: { cwd: work, stateDir: join(tmp.path, ".s") } };
}

describe("kt history without a path", () => {
  test("lists the session's changes newest first: tool, files, ±lines (golden)", () => {
    using tmp = tempDir();
    const { work, o } = workspace(tmp);
    expect(kt(["replace", "beta", "gamma"], o).exitCode).toBe(0);
    expect(kt(["read", "a.txt"], o).exitCode).toBe(0);
    expect(kt(["edit", "a.txt", "--old-string", "alpha", "--new-string", "one\ntwo"], o).exitCode).toBe(0);
    expect(kt(["write", "c.txt", "--content", "new\n"], o).exitCode).toBe(0);
    const r = kt(["history"], o);
    expect(r.exitCode).toBe(0);
    expect(r.stdout.replace(TIME, "T")).toBe(
      [
        'kt made 3 changes in session "default", newest first:',
        `  1. T  write    1 file   +1 −0  ${work}/c.txt`,
        `  2. T  edit     1 file   +2 −1  ${work}/a.txt`,
        `  3. T  replace  2 files  +2 −2  ${work}/a.txt, ${work}/b.txt`,
        "kt undo --last reverts the newest change that is not undone (every file of it); kt history PATH lists one file's versions. Kept for 7 days.",
        "",
      ].join("\n"),
    );
    expect(kt(["undo", "--last"], o).exitCode).toBe(0);
    expect(kt(["history"], o).stdout.replace(TIME, "T").split("\n").slice(0, 3)).toEqual([
      'kt made 4 changes in session "default", newest first:',
      `  1. T  undo     1 file   +0 −1  ${work}/c.txt`,
      `  2. T  write    1 file   +1 −0  ${work}/c.txt (undone)`,
    ]);
  });

  test("a session with no changes says so", () => {
    using tmp = tempDir();
    const { o } = workspace(tmp);
    expect(kt(["history", "--session", "empty"], o)).toEqual({ stdout: 'kt has kept no changes in session "empty" (it has changed no file, or its history is older than 7 days).\n', stderr: "", exitCode: 0 });
  });

  test("kt history on a directory gives prose and a non-zero exit (issue 28)", () => {
    using tmp = tempDir();
    const { work, o } = workspace(tmp);
    const r = kt(["history", "."], o);
    expect(r).toEqual({
      stdout: `${work} is a directory: kt history lists the versions of one file (kt history PATH), or, without a path, every change of the session (kt history).\n`,
      stderr: "",
      exitCode: 1,
    });
  });
});

describe("history outlives the session", () => {
  test("after kt session end, kt undo --last --session ID reverts the ended session's last change", () => {
    using tmp = tempDir();
    const { work, o } = workspace(tmp);
    expect(kt(["replace", "beta", "gamma", "--session", "s1"], o).exitCode).toBe(0);
    expect(kt(["session", "end", "--session", "s1"], o).exitCode).toBe(0);
    expect(kt(["history", "--session", "s1"], o).stdout).toContain("replace  2 files  +2 −2");
    const undo = kt(["undo", "--last", "--session", "s1"], o);
    expect(undo.stdout.replace(TIME, "T")).toBe(`Undid the replace of T (2 files):\nM ${work}/a.txt\nM ${work}/b.txt\n`);
    expect(undo.exitCode).toBe(0);
    expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("alpha\nbeta\n");
    expect(readFileSync(join(work, "b.txt"), "utf8")).toBe("beta\n");
  });

  test("versions older than 7 days go at the next session end, with the bytes only they kept", () => {
    using tmp = tempDir();
    const { work, o } = workspace(tmp);
    expect(kt(["replace", "beta", "gamma", "--session", "old"], o).exitCode).toBe(0);
    expect(kt(["replace", "alpha", "ALPHA", "--session", "new"], o).exitCode).toBe(0);
    const db = new Database(join(o.stateDir, "index.db"));
    db.query("UPDATE history SET at = at - 8 * 24 * 3600 * 1000 WHERE session = 'old'").run();
    db.close();
    expect(kt(["session", "end", "--session", "new"], o).exitCode).toBe(0);
    expect(kt(["history", "--session", "old"], o).stdout).toBe('kt has kept no changes in session "old" (it has changed no file, or its history is older than 7 days).\n');
    // The pack that held the old replace's two versions went with its rows; the new one's blob stays.
    const kept = (session: string) => readdirSync(join(o.stateDir, "sessions", session, "history")).filter((n) => !n.startsWith("journal-"));
    expect(kept("old")).toEqual([]);
    expect(kept("new").length).toBe(1);
    expect(kt(["history", "--session", "new"], o).stdout).toContain("replace  1 file   +1 −1");
    expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("ALPHA\ngamma\n");
  });

  test("an MCP session's changes are undone by kt undo --last --session ID after the server exited", async () => {
    using tmp = tempDir();
    const { work, o } = workspace(tmp);
    const transport = new StdioClientTransport({
      command: KT,
      args: ["mcp"],
      cwd: work,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", NO_COLOR: "1", KT_STATE_DIR: o.stateDir },
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const client = new Client({ name: "kt-test", version: "0.0.0" });
    await client.connect(transport);
    await client.callTool({ name: "read", arguments: { file_path: "a.txt" } });
    const patched = await client.callTool({ name: "apply_patch", arguments: { patch: "*** Begin Patch\n*** Update File: a.txt\n@@\n-alpha\n+ALPHA\n*** End Patch\n" } });
    expect(patched.isError).toBe(false);
    const replaced = await client.callTool({ name: "replace", arguments: { pattern: "beta", replacement: "BETA" } });
    expect(replaced.isError).toBe(false);
    await client.close();
    for (let i = 0; i < 100 && !stderr.includes("kt undo --last"); i++) await Bun.sleep(50);
    const m = /kt mcp: session (mcp-[a-z0-9-]+) made 2 changes, kept for 7 days: kt history --session \1 lists them, kt undo --last --session \1 reverts the newest\./.exec(stderr);
    expect(m, stderr).not.toBeNull();
    const id = m![1]!;
    expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("ALPHA\nBETA\n");
    // The default session knows nothing of it; the named one does.
    expect(kt(["undo", "--last"], o).exitCode).toBe(1);
    expect(kt(["undo", "--last", "--session", id], o).exitCode).toBe(0);
    expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("ALPHA\nbeta\n");
    expect(readFileSync(join(work, "b.txt"), "utf8")).toBe("beta\n");
    expect(kt(["undo", "--last", "--session", id], o).exitCode).toBe(0);
    expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("alpha\nbeta\n");
  });
});
