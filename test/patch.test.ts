// apply_patch beyond the scenario folders: how the patch reaches kt (positional, --patch-file,
// JSON, the "input" alias, kt call under the name apply_patch, MCP), --trace and --dry-run,
// stamps after a patch, the parser's corners, and the commit's rollback when an install fails.
import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { call, callTool, kt, KT, tempDir } from "./_helpers.ts";
import { parsePatch } from "../src/patch/parse.ts";
import { commitChanges, type Change } from "../src/core/commit.ts";
import { getStamp, getStamps, putStamp, sha256 } from "../src/core/stamps.ts";
import { guardedWrite } from "../src/core/writer.ts";
import { fileHistory, HISTORY_KEEP, keptBytes } from "../src/core/history.ts";
import { index } from "../src/core/state.ts";
import type { ToolContext, ToolResult } from "../src/tools/tool.ts";

function setup() {
  const tmp = tempDir();
  const work = join(tmp.path, "work");
  mkdirSync(work);
  writeFileSync(join(work, "a.txt"), "alpha\nbeta\n");
  return { tmp, work, opts: { cwd: work, stateDir: join(tmp.path, ".state") } };
}

const PATCH = "*** Begin Patch\n*** Update File: a.txt\n alpha\n-beta\n+gamma\n*** End Patch\n";

describe("kt patch on the command line", () => {
  test("positional patch text: exit 0, the success text, the file changed", () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    const r = kt(["patch", PATCH], opts);
    expect(r.exitCode).toBe(0);
    expect(r.stdout.startsWith(`Success. Updated the following files:\nM ${work}/a.txt\n`)).toBe(true);
    expect(r.stderr).toBe("");
    expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("alpha\ngamma\n");
  });

  test("a unified diff given whole as the positional (it starts with \"--- \") is the patch, not an unknown option; --name=value with a line break stays an option", () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    const r = kt(["patch", "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n alpha\n-beta\n+gamma\n"], opts);
    expect({ exitCode: r.exitCode, stderr: r.stderr }).toEqual({ exitCode: 0, stderr: "" });
    expect(r.stdout).toStartWith(`Success. Updated the following files:\nM ${work}/a.txt\n`);
    expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("alpha\ngamma\n");
    const w = kt(["write", "b.txt", "--content=-one\ntwo\n"], opts);
    expect(w.stdout).toBe(`Wrote ${work}/b.txt (2 lines).\n`);
    expect(readFileSync(join(work, "b.txt"), "utf8")).toBe("-one\ntwo\n");
  });

  test("--patch-file - reads the patch from stdin; --patch-file PATH from a file", () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    expect(kt(["patch", "--patch-file", "-"], { ...opts, stdin: PATCH }).exitCode).toBe(0);
    writeFileSync(join(tmp.path, "p.diff"), "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n alpha\n-gamma\n+delta\n");
    expect(kt(["patch", "--patch-file", join(tmp.path, "p.diff")], opts).exitCode).toBe(0);
    expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("alpha\ndelta\n");
  });

  test("JSON on stdin, with the canonical field and with Codex's \"input\"", () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    expect(kt(["patch"], { ...opts, stdin: JSON.stringify({ patch: PATCH }) }).exitCode).toBe(0);
    const back = PATCH.replace("-beta\n+gamma", "-gamma\n+beta");
    expect(kt(["patch"], { ...opts, stdin: JSON.stringify({ input: back }) }).exitCode).toBe(0);
    expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("alpha\nbeta\n");
  });

  test("a refused patch exits 1 with the prose on stdout; a missing field is INVALID_ARGS", () => {
    const { tmp, opts } = setup();
    using _ = tmp;
    const r = kt(["patch", PATCH.replace("-beta", "-bet")], opts);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toContain("was not found in the file");
    const empty = kt(["patch", "--json"], { ...opts, stdin: "{}" });
    expect(empty.exitCode).toBe(1);
    expect((JSON.parse(empty.stdout) as ToolResult).error?.code).toBe("INVALID_ARGS");
    expect(kt(["patch", PATCH, "--strict"], opts).exitCode).toBe(2);
  });

  test("--trace says on stderr how each hunk was located, and --json carries it as metadata.extra.trace", () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    writeFileSync(join(work, "b.txt"), "\tone\n\ttwo\n");
    const patch = "*** Begin Patch\n*** Update File: b.txt\n    one\n-    two\n+    three\n*** End Patch\n";
    const r = kt(["patch", patch, "--trace", "--json", "--dry-run"], opts);
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toContain(`patch trace for ${work}/b.txt, hunk 1 (patch line 3): indentation-flexible, lines 1–2`);
    expect(r.stderr).toContain("1. exact: no-match");
    const result = JSON.parse(r.stdout) as ToolResult;
    const trace = result.metadata.extra!.trace as { hunk: number; strategy: string }[];
    expect(trace.map((t) => [t.hunk, t.strategy])).toEqual([[1, "indentation-flexible"]]);
    expect(result.content).toContain("(dry run: nothing was written)");
    expect(result.content).toContain("-\ttwo\n+\tthree");
    expect(readFileSync(join(work, "b.txt"), "utf8")).toBe("\tone\n\ttwo\n");
  });

  test("kt call takes it under the name models know, apply_patch", () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    const callJson = { id: "call_1", type: "function", function: { name: "apply_patch", arguments: JSON.stringify({ input: PATCH }) } };
    const r = kt(["call", "--format", "openai"], { ...opts, stdin: JSON.stringify(callJson) });
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout).content).toStartWith("Success. Updated the following files:");
    expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("alpha\ngamma\n");
  });

  test("kt mcp: tools/call apply_patch, confined to the root", async () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    const transport = new StdioClientTransport({ command: KT, args: ["mcp"], cwd: work, env: { PATH: process.env.PATH ?? "", HOME: "/tmp", KT_STATE_DIR: opts.stateDir }, stderr: "pipe" });
    const client = new Client({ name: "kt-test", version: "0.0.0" });
    await client.connect(transport);
    try {
      const ok = await client.callTool({ name: "apply_patch", arguments: { patch: PATCH } });
      expect(ok.isError).toBeFalsy();
      expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("alpha\ngamma\n");
      const out = await client.callTool({ name: "apply_patch", arguments: { patch: "*** Begin Patch\n*** Add File: ../x.txt\n+x\n*** End Patch\n" } });
      expect(out.isError).toBe(true);
      expect((out.content as { text: string }[])[0]!.text).toContain("outside the root directory");
      expect(existsSync(join(tmp.path, "x.txt"))).toBe(false);
    } finally {
      await client.close();
    }
  });
});

describe("stamps and history after a patch", () => {
  test("a file read, then patched, can be edited at once (its stamp is the patched content); a deleted file's stamp is gone", async () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    writeFileSync(join(work, "gone.txt"), "x\n");
    expect((await callTool("read", { file_path: "a.txt" }, opts)).isError).toBe(false);
    expect((await callTool("read", { file_path: "gone.txt" }, opts)).isError).toBe(false);
    const r = await callTool("patch", { patch: PATCH.replace("*** End Patch", "*** Delete File: gone.txt\n*** End Patch") }, opts);
    expect(r.isError).toBe(false);
    const edit = await callTool("edit", { file_path: "a.txt", old_string: "gamma", new_string: "delta" }, opts);
    expect(edit.isError).toBe(false);
    // Recreated outside kt: kt has no stamp of it any more, so it was never read (not stale).
    writeFileSync(join(work, "gone.txt"), "back\n");
    const overwrite = await callTool("write", { file_path: "gone.txt", content: "y\n" }, opts);
    expect(overwrite.error?.code).toBe("NOT_READ");
  });

  test("a patch's stamps, looked up at once (getStamps), are each file's own (getStamp): 1,200 paths, some stamped, some in another session, some twice", () => {
    using tmp = tempDir();
    const ctx = (session: string): ToolContext => ({ cwd: tmp.path, session, callId: "t", stateDir: join(tmp.path, ".s"), flags: { skipReadCheck: false, dryRun: false, trace: false, strict: false }, warn: () => {} });
    const mine = ctx("default");
    const other = ctx("other");
    const paths = Array.from({ length: 1200 }, (_, i) => join(tmp.path, `d${i % 7}`, `f${i}.ts`));
    paths.forEach((p, i) => {
      if (i % 3 === 0) putStamp(mine, p, { mtimeMs: i + 0.5, size: i, sha256: sha256(p) });
      if (i % 5 === 0) putStamp(other, p, { mtimeMs: 1, size: 1, sha256: "other" });
    });
    const asked = [...paths, ...paths.slice(0, 40), join(tmp.path, "never")];
    const all = getStamps(mine, asked);
    for (const p of asked) expect(all.get(p)).toEqual(getStamp(mine, p));
    expect(all.size).toBe(400);
    expect(getStamps(mine, []).size).toBe(0);
  });

  test("a patch of a read file, a file read then changed outside kt and a file never read: STALE_FILE names the changed one, nothing is written", async () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    writeFileSync(join(work, "b.txt"), "one\ntwo\n");
    writeFileSync(join(work, "c.txt"), "x\ny\n");
    await callTool("read", { file_path: "a.txt" }, opts);
    await callTool("read", { file_path: "b.txt" }, opts);
    writeFileSync(join(work, "b.txt"), "one\ntwo\nthree\n");
    const patch = "*** Begin Patch\n*** Update File: a.txt\n alpha\n-beta\n+gamma\n*** Update File: c.txt\n x\n-y\n+z\n*** Update File: b.txt\n one\n-two\n+2\n*** End Patch\n";
    const r = await callTool("patch", { patch }, opts);
    expect(r.error?.code).toBe("STALE_FILE");
    expect(r.content).toContain(`${work}/b.txt`);
    expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("alpha\nbeta\n");
    expect(readFileSync(join(work, "c.txt"), "utf8")).toBe("x\ny\n");
    // Without the outside change the same patch lands whole.
    writeFileSync(join(work, "b.txt"), "one\ntwo\n");
    await callTool("read", { file_path: "b.txt" }, opts);
    expect((await callTool("patch", { patch }, opts)).isError).toBe(false);
    expect(readFileSync(join(work, "b.txt"), "utf8")).toBe("one\n2\n");
  });

  test("a file changed outside kt after its read is stale for a patch", async () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    await callTool("read", { file_path: "a.txt" }, opts);
    writeFileSync(join(work, "a.txt"), "alpha\nbeta\nmore\n");
    const r = await callTool("patch", { patch: PATCH }, opts);
    expect(r.error?.code).toBe("STALE_FILE");
    expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("alpha\nbeta\nmore\n");
  });
});

describe("the parser", () => {
  test("envelope: move, two @@ context hunks, End of File, blank context lines", () => {
    const p = parsePatch("*** Begin Patch\n*** Update File: a\n*** Move to: b\n@@ class A\n x\n-y\n+z\n@@ def f\n\n-q\n*** End of File\n*** End Patch");
    expect(p.ok).toBe(true);
    if (!p.ok) return;
    const op = p.ops[0]!;
    expect(op).toMatchObject({ kind: "update", path: "a", moveTo: "b" });
    if (op.kind !== "update") return;
    expect(op.hunks.map((h) => [h.anchor, h.endOfFile, h.lines.length])).toEqual([["class A", false, 3], ["def f", true, 2]]);
  });

  test("envelope: an added file's content, cut from the patch text: lines that start with +, empty lines, CRLF, an empty file, two adds", () => {
    const p = parsePatch("*** Begin Patch\r\n*** Add File: a\r\n++x\r\n+\r\n+ y +\r\n+\r\n*** Add File: e\r\n*** Add File: b\r\n+b\r\n*** Delete File: c\r\n*** End Patch\r\n");
    expect(p.ok).toBe(true);
    if (!p.ok) return;
    expect(p.ops.map((op) => (op.kind === "add" ? [op.path, op.content, op.patchLine] : [op.path, op.kind, op.patchLine]))).toEqual([
      ["a", "+x\n\n y +\n\n", 2],
      ["e", "", 7],
      ["b", "b\n", 8],
      ["c", "delete", 10],
    ]);
  });

  test("unified: git's quoted names, rename without hunks, mode of a new file, no-newline markers", () => {
    const p = parsePatch([
      'diff --git "a/sp ace\\tx" "b/sp ace\\tx"',
      '--- "a/sp ace\\tx"',
      '+++ "b/sp ace\\tx"',
      "@@ -1 +1 @@",
      "-a",
      "\\ No newline at end of file",
      "+b",
      "diff --git a/old b/new",
      "similarity index 100%",
      "rename from old",
      "rename to new",
      "diff --git a/run b/run",
      "new file mode 100755",
      "--- /dev/null",
      "+++ b/run",
      "@@ -0,0 +1 @@",
      "+echo",
      "\\ No newline at end of file",
    ].join("\n"));
    expect(p.ok).toBe(true);
    if (!p.ok) return;
    expect(p.ops[0]).toMatchObject({ kind: "update", path: "sp ace\tx" });
    expect((p.ops[0] as { hunks: { oldNoNewline?: boolean; newNoNewline?: boolean }[] }).hunks[0]).toMatchObject({ oldNoNewline: true });
    expect(p.ops[1]).toMatchObject({ kind: "update", path: "old", moveTo: "new", hunks: [] });
    expect(p.ops[2]).toEqual({ kind: "add", path: "run", content: "echo", mode: 0o755, patchLine: 12 });
  });

  test("errors name the line and what was expected", () => {
    expect(parsePatch("*** Begin Patch\n*** Frobnicate: a\n*** End Patch")).toMatchObject({ ok: false, line: 2 });
    expect(parsePatch("*** Begin Patch\n*** Add File: a\nno plus\n*** End Patch")).toMatchObject({ ok: false, line: 3 });
    expect(parsePatch("*** Begin Patch\n*** Update File: a\n*** End Patch")).toMatchObject({ ok: false, line: 3 });
    expect(parsePatch("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n?b\n")).toMatchObject({ ok: false, line: 5 });
    expect(parsePatch("--- a/x\n+++ b/x\n@@ garbage @@\n")).toMatchObject({ ok: false, line: 3 });
    expect(parsePatch("")).toMatchObject({ ok: false, line: 1 });
  });
});

describe("symbolic links", () => {
  test("an update writes through a link to its target; a delete or a move removes the link itself, never its target", () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    writeFileSync(join(work, "t.txt"), "target\n");
    for (const l of ["u.txt", "d.txt", "m.txt"]) symlinkSync("t.txt", join(work, l));
    const u = kt(["patch", "*** Begin Patch\n*** Update File: u.txt\n@@\n-target\n+through\n*** End Patch"], opts);
    expect(u.exitCode).toBe(0);
    expect([lstatSync(join(work, "u.txt")).isSymbolicLink(), readFileSync(join(work, "t.txt"), "utf8")]).toEqual([true, "through\n"]);
    const d = kt(["patch", "*** Begin Patch\n*** Delete File: d.txt\n*** End Patch"], opts);
    expect(d.stdout).toBe(`Success. Updated the following files:\nD ${work}/d.txt\n`);
    expect(existsSync(join(work, "d.txt"))).toBe(false);
    expect(readFileSync(join(work, "t.txt"), "utf8")).toBe("through\n");
    const m = kt(["patch", "*** Begin Patch\n*** Update File: m.txt\n*** Move to: moved.txt\n@@\n-through\n+moved\n*** End Patch"], opts);
    expect(m.exitCode).toBe(0);
    expect(readdirSync(work).sort()).toEqual(["a.txt", "moved.txt", "t.txt", "u.txt"]);
    expect([readFileSync(join(work, "moved.txt"), "utf8"), readFileSync(join(work, "t.txt"), "utf8")]).toEqual(["moved\n", "through\n"]);
  });
});

describe("the multi-file commit", () => {
  function ctxFor(work: string, stateDir: string): ToolContext {
    return { cwd: work, session: "default", callId: "t", stateDir, flags: { skipReadCheck: false, dryRun: false, trace: false, strict: false }, warn: () => {} };
  }

  test("an install failing at the third of five files puts back the two already installed: all five as before, nothing left over", async () => {
    using tmp = tempDir();
    const work = join(tmp.path, "w");
    mkdirSync(work);
    const before: Record<string, Buffer> = {};
    for (let i = 1; i <= 4; i++) {
      const bytes = Buffer.from(i === 2 ? "\uFEFFcrlf\r\nfile\r\n" : `file ${i}\n`);
      writeFileSync(join(work, `f${i}.txt`), bytes);
      before[`f${i}.txt`] = bytes;
    }
    chmodSync(join(work, "f1.txt"), 0o751);
    const ctx = ctxFor(work, join(tmp.path, ".s"));
    const changes: Change[] = [1, 2, 3].map((i) => ({ display: `f${i}`, real: join(work, `f${i}.txt`), baseSha: sha256(before[`f${i}.txt`]!), previous: before[`f${i}.txt`]!, bytes: Buffer.from(`new ${i}\n`) }));
    changes.push({ display: "new", real: join(work, "sub", "f5.txt"), baseSha: null, previous: null, bytes: Buffer.from("five\n") });
    changes.push({ display: "f4", real: join(work, "f4.txt"), baseSha: sha256(before["f4.txt"]!), previous: before["f4.txt"]!, bytes: null });
    let installs = 0;
    await expect(
      commitChanges(ctx, changes, {
        tool: "patch",
        verb: "patch",
        beforeInstall(i) {
          installs++;
          if (i === 2) throw Object.assign(new Error("EIO: simulated"), { code: "EIO" });
        },
      }),
    ).rejects.toThrow(/Nothing was changed: installing f3 failed, and the files already installed were put back/);
    expect(installs).toBe(3);
    for (const [name, bytes] of Object.entries(before)) expect(readFileSync(join(work, name)).equals(bytes), name).toBe(true);
    expect(statSync(join(work, "f1.txt")).mode & 0o777).toBe(0o751);
    expect(existsSync(join(work, "sub"))).toBe(false);
    expect(readdirSync(work).sort()).toEqual(["f1.txt", "f2.txt", "f3.txt", "f4.txt"]);
    // The transaction rolled back: no history of a change that did not happen.
    expect(fileHistory(ctx, index(ctx), join(work, "f1.txt"))).toEqual([]);
  });

  test(`an install failing after its record let go of the versions past the last ${HISTORY_KEEP} keeps their bytes: the rows rolled back can still be undone to`, async () => {
    using tmp = tempDir();
    const work = join(tmp.path, "w");
    mkdirSync(work);
    const ctx = ctxFor(work, join(tmp.path, ".s"));
    const files = ["a.txt", "b.txt"].map((name) => join(work, name));
    const version = (v: number) => files.map((_, j) => Buffer.from(`version ${v} of file ${j}\n`));
    let current = version(0);
    files.forEach((f, j) => writeFileSync(f, current[j]!));
    const changeTo = (next: Buffer[]): Change[] => files.map((f, j) => ({ display: f, real: f, baseSha: sha256(current[j]!), previous: current[j]!, bytes: next[j]! }));
    for (let v = 1; v <= HISTORY_KEEP; v++) {
      const next = version(v);
      await commitChanges(ctx, changeTo(next), { tool: "patch", verb: "patch" });
      current = next;
    }
    const rowsBefore = files.map((f) => fileHistory(ctx, index(ctx), f));
    for (const rows of rowsBefore) expect(rows.length).toBe(HISTORY_KEEP);
    // The next change's record forgets each file's oldest version; its install fails at the second file.
    await expect(
      commitChanges(ctx, changeTo(version(HISTORY_KEEP + 1)), {
        tool: "patch",
        verb: "patch",
        beforeInstall(i) {
          if (i === 1) throw Object.assign(new Error("EIO: simulated"), { code: "EIO" });
        },
      }),
    ).rejects.toThrow(/Nothing was changed: installing .*b\.txt failed/);
    for (const [j, f] of files.entries()) {
      expect(readFileSync(f).equals(current[j]!)).toBe(true);
      const rows = fileHistory(ctx, index(ctx), f);
      expect(rows.map((r) => r.seq)).toEqual(rowsBefore[j]!.map((r) => r.seq));
      // Every version the history lists still has its bytes, the oldest (version 0) among them.
      expect(rows.map((r) => Buffer.from(keptBytes(ctx, r.prevSha!, r.prevAt) ?? "").toString())).toEqual(
        Array.from({ length: HISTORY_KEEP }, (_, k) => `version ${HISTORY_KEEP - 1 - k} of file ${j}\n`),
      );
    }
    // The same change, installed: the oldest versions go, rows and bytes, and only the kept ones' packs stay.
    await commitChanges(ctx, changeTo(version(HISTORY_KEEP + 1)), { tool: "patch", verb: "patch" });
    const referenced = new Set<string>();
    for (const [j, f] of files.entries()) {
      const rows = fileHistory(ctx, index(ctx), f);
      expect(rows.map((r) => Buffer.from(keptBytes(ctx, r.prevSha!, r.prevAt) ?? "").toString())).toEqual(
        Array.from({ length: HISTORY_KEEP }, (_, k) => `version ${HISTORY_KEEP - k} of file ${j}\n`),
      );
      for (const r of rows) referenced.add(r.prevAt!.pack);
    }
    expect(readdirSync(join(tmp.path, ".s", "sessions", "default", "history")).sort()).toEqual([...referenced].sort());
  });

  test("a file changed between computing and committing is refused under the lock, and nothing is installed", async () => {
    using tmp = tempDir();
    const work = join(tmp.path, "w");
    mkdirSync(work);
    writeFileSync(join(work, "a"), "a\n");
    writeFileSync(join(work, "b"), "b\n");
    const ctx = ctxFor(work, join(tmp.path, ".s"));
    const changes: Change[] = ["a", "b"].map((n) => ({ display: n, real: join(work, n), baseSha: sha256(`${n}\n`), previous: Buffer.from(`${n}\n`), bytes: Buffer.from(`${n}${n}\n`) }));
    writeFileSync(join(work, "b"), "changed\n");
    await expect(commitChanges(ctx, changes, { tool: "patch", verb: "patch" })).rejects.toThrow(/Refusing to patch b: the file changed on disk/);
    expect(readFileSync(join(work, "a"), "utf8")).toBe("a\n");
    expect(readdirSync(work).sort()).toEqual(["a", "b"]);
  });
});

describe("the answer, written while the disk flushes", () => {
  // A patch's answer is made while its commit waits for the disk; a change the commit works
  // out again under the lock (a parallel kt call of the session wrote the file meanwhile)
  // must be answered from what was worked out again, not from what was first computed.
  test("a patch worked out again under the lock answers with the file as it installed it: its snippet and diff show the parallel write", async () => {
    const lines = Array.from({ length: 30 }, (_, i) => `line ${String(i + 1).padStart(2, "0")}`);
    let hit = 0;
    for (let attempt = 0; attempt < 8 && hit < 2; attempt++) {
      using tmp = tempDir();
      const work = join(tmp.path, "w");
      mkdirSync(work);
      const file = join(work, "f.txt");
      writeFileSync(file, `${lines.join("\n")}\n`);
      const opts = { cwd: work, stateDir: join(tmp.path, ".s") };
      const ctx: ToolContext = { cwd: work, session: "default", callId: "parallel", stateDir: opts.stateDir, flags: { skipReadCheck: false, dryRun: false, trace: false, strict: false }, warn: () => {} };
      const pending = callTool("patch", { patch: "*** Begin Patch\n*** Update File: f.txt\n@@\n line 09\n-line 10\n+line 10 patched\n line 11\n*** End Patch\n" }, opts);
      // The patch's temp file is there from staging until the install: while it is, the commit
      // has not taken the lock yet, and a write of this session lands before its re-check.
      let staged = false;
      for (let i = 0; i < 5000 && !staged; i++) {
        staged = readdirSync(work).some((n) => n.startsWith(".f.txt.kt-"));
        if (!staged) await new Promise((r) => setImmediate(r));
      }
      const now = readFileSync(file);
      const edited = Buffer.from(now.toString().replace("line 12\n", "line 12 by a parallel edit\n"));
      if (staged && now.toString().includes("line 10\n")) {
        guardedWrite(ctx, { display: file, real: file, baseSha: sha256(now), bytes: edited, verb: "edit" });
        hit++;
      }
      const r = await pending;
      expect(r.isError).toBe(false);
      const final = readFileSync(file, "utf8");
      expect(final).toContain("line 10 patched\n");
      if (!final.includes("line 12 by a parallel edit")) continue;
      // The snippet (4 lines around the change) and the diff's context are of the file as installed.
      expect(r.content).toContain("line 12 by a parallel edit");
      expect(r.content).not.toMatch(/\bline 12\n/);
      expect(String(r.metadata?.diff)).toContain(" line 12 by a parallel edit\n");
    }
    expect(hit).toBeGreaterThan(0);
  });
});

test("in-process and binary agree on a patch's envelope", async () => {
  const { tmp, opts } = setup();
  using _ = tmp;
  const dry = { ...opts, flags: { dryRun: true } };
  const a = await call("in-process", "patch", { patch: PATCH }, dry);
  const b = await call("binary", "patch", { patch: PATCH }, dry);
  expect({ ...b, metadata: { ...b.metadata, durationMs: 0 } }).toEqual({ ...a, metadata: { ...a.metadata, durationMs: 0 } });
});

describe("the diff of a patched file", () => {
  test("built from the replaced spans, it applies (jsdiff's applyPatch) to give the new text, for random edits", async () => {
    const { applyPatch } = await import("diff");
    const { editsDiff } = await import("../src/patch/diff.ts");
    const { applyEdits } = await import("../src/replacer/index.ts");
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    for (let round = 0; round < 200; round++) {
      const n = 1 + Math.floor(rand() * 40);
      const old = Array.from({ length: n }, (_, i) => `line ${i % 7}`);
      const work = `${old.join("\n")}\n`;
      const starts = [0];
      for (let i = 0; i < old.length; i++) starts.push(starts[i]! + old[i]!.length + 1);
      const edits = [];
      for (let line = 0; line < n; ) {
        const a = line + Math.floor(rand() * 6);
        if (a > n) break;
        const b = Math.min(n, a + Math.floor(rand() * 4));
        const text = Array.from({ length: Math.floor(rand() * 4) }, (_, i) => (rand() < 0.5 ? `line ${(a + i) % 7}` : `new ${round}.${i}`)).map((l) => `${l}\n`).join("");
        edits.push({ start: starts[a]!, end: starts[b]!, text });
        line = b + 1;
      }
      const after = applyEdits(work, edits);
      const d = editsDiff("f", work, edits);
      expect(applyPatch(work, d.patch), `round ${round}\n${d.patch}`).toBe(after);
    }
  });
});
