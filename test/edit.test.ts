// edit on the command line and in the envelope: flags and positionals, --trace on stderr and
// in --json, metadata (diff, counts, extra), exit codes, and concurrent edits of one file.
import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { callTool, kt, ktSpawn, tempDir } from "./_helpers.ts";
import type { ToolResult } from "../src/tools/tool.ts";
import { excerpt, snippet } from "../src/tools/edit.ts";

function setup() {
  const tmp = tempDir();
  const work = join(tmp.path, "work");
  mkdirSync(work);
  return { tmp, work, opts: { cwd: work, stateDir: join(tmp.path, ".state") } };
}

describe("kt edit on the command line", () => {
  test("the title of a file an edit creates counts its lines in the singular too", () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    const one = JSON.parse(kt(["edit", "one.txt", "--old-string", "", "--new-string", "x\n", "--json"], opts).stdout) as ToolResult;
    expect(one.metadata.title).toBe(`Edit ${work}/one.txt · new file · 1 line`);
    const two = JSON.parse(kt(["edit", "two.txt", "--old-string", "", "--new-string", "x\ny\n", "--json"], opts).stdout) as ToolResult;
    expect(two.metadata.title).toBe(`Edit ${work}/two.txt · new file · 2 lines`);
  });

  test("positional path, --old-string/--new-string flags, exit 0 and the prose plus one newline", () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    writeFileSync(join(work, "a.txt"), "alpha\nbeta\n");
    expect(kt(["read", "a.txt"], opts).exitCode).toBe(0);
    const r = kt(["edit", "a.txt", "--old-string", "beta", "--new_string", "gamma"], opts);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe(`Edited ${work}/a.txt (1 replacement, matched exactly).\nSnippet of the edited region (lines 1–2):\n     1→alpha\n     2→gamma\nReview the changes. Edit the file again if the result is not what you intended.\n`);
    expect(r.stderr).toBe("");
    expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("alpha\ngamma\n");
  });

  test("--old-string-file and --new-string-file read raw bytes; a failed edit exits 1", () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    writeFileSync(join(work, "a.txt"), "x = 'it''s';\n");
    writeFileSync(join(work, "old"), "x = 'it''s';");
    writeFileSync(join(work, "new"), "x = \"it's\";");
    kt(["read", "a.txt"], opts);
    expect(kt(["edit", "a.txt", "--old-string-file", "old", "--new-string-file", "new"], opts).exitCode).toBe(0);
    expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("x = \"it's\";\n");
    const miss = kt(["edit", "a.txt", "--old-string", "nope", "--new-string", "qq"], opts);
    expect(miss.exitCode).toBe(1);
    expect(miss.stdout.startsWith(`No replacement was performed: old_string was not found in ${work}/a.txt.\n`)).toBe(true);
  });

  test("--trace prints the cascade on stderr and puts it in --json as metadata.extra.trace", () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    writeFileSync(join(work, "a.txt"), "\tfoo();\n");
    kt(["read", "a.txt"], opts);
    const r = kt(["edit", "a.txt", "--old-string", "    foo();", "--new-string", "    bar();", "--trace", "--json", "--dry-run"], opts);
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toContain(`edit trace for ${work}/a.txt:`);
    expect(r.stderr).toContain("1. exact: no-match — old_string does not occur verbatim");
    expect(r.stderr).toContain("2. trailing-whitespace: no-match — no run of lines equals old_string line by line once trailing whitespace is removed");
    expect(r.stderr).toContain("3. indentation-flexible: taken — 1 match at line 1 (1 candidate)");
    expect(r.stderr).toContain("+ line 1");
    const result = JSON.parse(r.stdout) as ToolResult;
    const trace = result.metadata.extra!.trace as { strategy: string; decision: string }[];
    expect(trace.map((s) => [s.strategy, s.decision])).toEqual([["exact", "no-match"], ["trailing-whitespace", "no-match"], ["indentation-flexible", "taken"]]);
    expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("\tfoo();\n");
  });

  test("without --trace nothing is said on stderr and the envelope carries no trace", () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    writeFileSync(join(work, "a.txt"), "a\n");
    kt(["read", "a.txt"], opts);
    const r = kt(["edit", "a.txt", "--old-string", "a", "--new-string", "b", "--json"], opts);
    expect(r.stderr).toBe("");
    expect((JSON.parse(r.stdout) as ToolResult).metadata.extra).not.toHaveProperty("trace");
  });

  test("--strict and --skip-read-check", () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    writeFileSync(join(work, "a.txt"), "\tfoo();\n");
    const unread = kt(["edit", "a.txt", "--old-string", "\tfoo();", "--new-string", "\tbar();"], opts);
    expect(unread.exitCode).toBe(1);
    const strict = kt(["edit", "a.txt", "--old-string", "    foo();", "--new-string", "    bar();", "--strict", "--skip-read-check"], opts);
    expect(strict.exitCode).toBe(1);
    expect(strict.stdout).toContain("differs in whitespace on line 1");
    const ok = kt(["edit", "a.txt", "--old-string", "    foo();", "--new-string", "    bar();", "--skip-read-check"], opts);
    expect(ok.exitCode).toBe(0);
    expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("\tbar();\n");
  });

  test("--trace and --strict belong to edit only", () => {
    const { tmp, opts } = setup();
    using _ = tmp;
    expect(kt(["read", "x", "--trace"], opts).exitCode).toBe(2);
  });
});

describe("several edits on the command line", () => {
  const edits = [{ old_string: "alpha", new_string: "ALPHA" }, { old_string: "beta", new_string: "beta\ngamma" }];

  test("--edits-file PATH, --edits-file - and --edits take the JSON array", () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    for (const how of ["path", "stdin", "inline"] as const) {
      writeFileSync(join(work, "a.txt"), "alpha\nbeta\n");
      writeFileSync(join(work, "edits.json"), JSON.stringify(edits));
      expect(kt(["read", "a.txt"], opts).exitCode).toBe(0);
      const args = how === "path" ? ["--edits-file", "edits.json"] : how === "stdin" ? ["--edits-file", "-"] : ["--edits", JSON.stringify(edits)];
      const r = kt(["edit", "a.txt", ...args], { ...opts, ...(how === "stdin" ? { stdin: JSON.stringify(edits) } : {}) });
      expect(r.exitCode, how).toBe(0);
      expect(r.stdout).toStartWith(`Edited ${work}/a.txt (2 edits, 2 replacements; all matched exactly).\n`);
      expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("ALPHA\nbeta\ngamma\n");
    }
  });

  test("JSON on stdin; --trace prints one cascade per edit, named by its index", () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    writeFileSync(join(work, "a.txt"), "alpha\nbeta\n");
    kt(["read", "a.txt"], opts);
    const r = kt(["edit", "--trace", "--json"], { ...opts, stdin: JSON.stringify({ file_path: "a.txt", edits }) });
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toContain(`edit trace for ${work}/a.txt (edits[0], 1 of 2):`);
    expect(r.stderr).toContain(`edit trace for ${work}/a.txt (edits[1], 2 of 2):`);
    const result = JSON.parse(r.stdout) as ToolResult;
    expect((result.metadata.extra!.trace as unknown[]).length).toBe(2);
    expect(result.metadata.extra!.edits).toEqual([{ strategy: "exact", replacements: 1 }, { strategy: "exact", replacements: 1 }]);
  });

  test("a list of one edit reads as one", () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    writeFileSync(join(work, "a.txt"), "alpha\n");
    kt(["read", "a.txt"], opts);
    const miss = kt(["edit", "a.txt", "--edits", '[{"old_string":"zzz","new_string":"b"}]'], opts);
    expect(miss.stdout).toStartWith("edits[0] failed, so nothing was written.\nNo replacement was performed: old_string was not found in");
    const ok = kt(["edit", "a.txt", "--edits", '[{"old_string":"alpha","new_string":"beta"}]'], opts);
    expect(ok.stdout).toBe(`Edited ${work}/a.txt (1 edit, 1 replacement; matched exactly).\nSnippet of the edited region (line 1):\n     1→beta\nReview the changes. Edit the file again if the result is not what you intended.\n`);
  });

  test("invalid JSON in --edits-file is a usage error (exit 2); neither pair nor edits is repair prose", () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    writeFileSync(join(work, "a.txt"), "alpha\n");
    writeFileSync(join(work, "bad.json"), "[{old_string: 1}");
    const bad = kt(["edit", "a.txt", "--edits-file", "bad.json"], opts);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain("--edits-file: not valid JSON");
    const neither = kt(["edit", "a.txt", "--skip-read-check"], { ...opts, stdin: "" });
    expect(neither.exitCode).toBe(1);
    expect(neither.stdout).toBe(`Invalid input for tool "edit": parameter "old_string" is required (or "edits", a list of {old_string, new_string} changes). Please rewrite the input so it satisfies the expected schema.\n`);
    const item = kt(["edit", "a.txt", "--edits", '[{"old_string":"alpha"}]'], opts);
    expect(item.exitCode).toBe(1);
    expect(item.stdout).toBe(`Invalid input for tool "edit": parameter "edits[0].new_string" is required. Please rewrite the input so it satisfies the expected schema.\n`);
    const empty = kt(["edit", "a.txt", "--edits", "[]"], opts);
    expect(empty.stdout).toBe(`Invalid input for tool "edit": parameter "edits" must hold at least 1 item, got an empty array. Please rewrite the input so it satisfies the expected schema.\n`);
    const stray = kt(["edit", "a.txt", "--edits", '[{"old_string":"alpha","new_string":"b","old":1}]'], opts);
    expect(stray.stdout).toBe(`Invalid input for tool "edit": unknown parameter "old" in edits[0] — did you mean "old_string"? Please rewrite the input so it satisfies the expected schema.\n`);
    expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("alpha\n");
  });
});

describe("edit metadata", () => {
  test("diff, counts, title and extra", async () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    writeFileSync(join(work, "a.txt"), "one\ntwo\nthree\n");
    await callTool("read", { file_path: "a.txt" }, opts);
    const r = await callTool("edit", { file_path: "a.txt", old_string: "two\n", new_string: "2\n2b\n" }, opts);
    expect(r.metadata.title).toBe(`Edit ${work}/a.txt · +2 −1`);
    expect(r.metadata.additions).toBe(2);
    expect(r.metadata.deletions).toBe(1);
    expect(r.metadata.diff).toContain("-two\n+2\n+2b\n");
    expect(r.metadata.extra).toEqual({ path: `${work}/a.txt`, strategy: "exact", replacements: 1, startLine: 2, endLine: 3, dryRun: false });
  });

  test("an edit stamps the file: a second edit needs no new read", async () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    writeFileSync(join(work, "a.txt"), "a\n");
    await callTool("read", { file_path: "a.txt" }, opts);
    expect((await callTool("edit", { file_path: "a.txt", old_string: "a", new_string: "b" }, opts)).isError).toBe(false);
    expect((await callTool("edit", { file_path: "a.txt", old_string: "b", new_string: "c" }, opts)).isError).toBe(false);
    expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("c\n");
  });

  test("errors carry what a script needs in extra", async () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    writeFileSync(join(work, "a.txt"), "x\ny\nx\n");
    await callTool("read", { file_path: "a.txt" }, opts);
    const r = await callTool("edit", { file_path: "a.txt", old_string: "x", new_string: "z" }, opts);
    expect(r.error).toEqual({ name: "MatchError", code: "AMBIGUOUS_MATCH" });
    expect(r.metadata.extra).toMatchObject({ strategy: "exact", count: 2, lines: [1, 3] });
    const miss = await callTool("edit", { file_path: "a.txt", old_string: "  y ", new_string: "q" }, { ...opts, flags: { strict: true } });
    expect(miss.metadata.extra).toMatchObject({ nearMiss: { line: 2, whitespaceOnly: true } });
  });
});

describe("concurrent edits of one file", () => {
  test("each lands or is refused as stale; none is lost", async () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    const lines = Array.from({ length: 12 }, (_, i) => `row ${String.fromCharCode(97 + i)} end`);
    writeFileSync(join(work, "c.txt"), `${lines.join("\n")}\n`);
    kt(["read", "c.txt"], opts);
    const procs = lines.map((l) => ktSpawn(["edit", "c.txt", "--json", "--old-string", l, "--new-string", `${l} edited`], opts));
    const results = await Promise.all(procs.map(async (p) => JSON.parse(await new Response(p.stdout).text()) as ToolResult));
    const landed = results.filter((r) => !r.isError).length;
    for (const r of results) if (r.isError) expect(r.error?.code).toBe("STALE_FILE");
    const final = readFileSync(join(work, "c.txt"), "utf8");
    expect((final.match(/ edited/g) ?? []).length).toBe(landed);
    expect(landed).toBeGreaterThanOrEqual(1);
  });
});

describe("prose helpers", () => {
  test("whitespace made visible, long lines cut around the difference", () => {
    expect(excerpt("\tconst budget =\u00a0x; ", 1)).toBe('"\\tconst budget =\\u00a0x; "');
    const long = `${"a".repeat(100)}X${"b".repeat(100)}`;
    expect(excerpt(long, 101)).toBe(`"…${"a".repeat(30)}X${"b".repeat(49)}…"`);
  });
  test("snippet: ±4 lines, real numbers, one line, and the end of the file", () => {
    const text = Array.from({ length: 20 }, (_, i) => `l${i + 1}`).join("\n") + "\n";
    expect(snippet(text, 10, 10).split("\n")[0]).toBe("Snippet of the edited region (lines 6–14):");
    expect(snippet(text, 20, 20).split("\n").slice(-1)[0]).toBe("    20→l20");
    expect(snippet("only\n", 1, 1)).toBe("Snippet of the edited region (line 1):\n     1→only");
  });
});
