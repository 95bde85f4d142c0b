// The README's exit-code table (SPEC §1, §8.6), row by row and column by column: each cell
// is run through the compiled binary. The table is read from the README, so a row added
// there without a case here (or a case without its row) fails.
import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { kt, ROOT, tempDir } from "./_helpers.ts";

function table(): { code: number; cells: string[] }[] {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## Exit codes"), readme.indexOf("\n## ", readme.indexOf("## Exit codes") + 1));
  return section
    .split("\n")
    .filter((l) => /^\| \d \|/.test(l))
    .map((l) => {
      const cells = l.split("|").slice(1, -1).map((c) => c.trim());
      return { code: Number(cells[0]), cells: cells.slice(1) };
    });
}

type Case = { name: string; args: string[]; stdin?: string; env?: Record<string, string> };

/** Every cell's cases: column 0 is the tools with §1's codes, column 1 grep, glob and replace. */
const CASES: Record<number, [Case[], Case[]]> = {
  0: [
    [
      { name: "read of a file", args: ["read", "a.txt"] },
      { name: "bash of a command that fails", args: ["bash", "exit 4"] },
      { name: "kt call of a read", args: ["call"], stdin: '{"tool":"read","input":{"file_path":"a.txt"}}' },
      { name: "history", args: ["history"] },
    ],
    [
      { name: "grep that matches", args: ["grep", "alpha"] },
      { name: "glob that matches", args: ["glob", "*.txt"] },
      { name: "replace that changes", args: ["replace", "alpha", "ALPHA", "--dry-run"] },
    ],
  ],
  1: [
    [
      { name: "read of a missing file", args: ["read", "missing.txt"] },
      { name: "write of a file never read", args: ["write", "a.txt", "--content", "x"] },
      { name: "kt call of a grep with a bad regex (kt call keeps §1's codes)", args: ["call"], stdin: '{"tool":"grep","input":{"pattern":"a("}}' },
      { name: "history of a directory", args: ["history", "."] },
    ],
    [
      { name: "grep that matches nothing", args: ["grep", "omega"] },
      { name: "glob that matches nothing", args: ["glob", "*.none"] },
      { name: "replace that matches nothing", args: ["replace", "omega", "x"] },
    ],
  ],
  2: [
    [
      { name: "an unknown flag", args: ["read", "a.txt", "--bogus"] },
      { name: "an unknown subcommand", args: ["raed"] },
    ],
    [
      { name: "grep with a bad regex (prose on stdout)", args: ["grep", "a("] },
      { name: "glob with a bad pattern", args: ["glob", "[a"] },
      { name: "replace of a missing path", args: ["replace", "a", "b", "missing"] },
      { name: "grep with an unknown flag", args: ["grep", "a", "--bogus"] },
    ],
  ],
  3: [
    [{ name: "write with a state directory that is a file", args: ["write", "new.txt", "--content", "x"], env: { KT_STATE_DIR: "<file>" } }],
    [{ name: "replace with a state directory that is a file", args: ["replace", "alpha", "x"], env: { KT_STATE_DIR: "<file>" } }],
  ],
};

describe("README exit-code table", () => {
  test("has a row for each of 0, 1, 2, 3 with both columns, and each row is tested below", () => {
    const rows = table();
    expect(rows.map((r) => r.code)).toEqual([0, 1, 2, 3]);
    for (const r of rows) expect(r.cells).toHaveLength(2);
    expect(Object.keys(CASES).map(Number)).toEqual(rows.map((r) => r.code));
  });

  for (const { code, cells } of table()) {
    cells.forEach((cell, column) => {
      for (const c of CASES[code]?.[column as 0 | 1] ?? []) {
        test(`${code} — ${cell.slice(0, 60)}: ${c.name}`, () => {
          using tmp = tempDir();
          const work = join(tmp.path, "w");
          mkdirSync(work);
          writeFileSync(join(work, "a.txt"), "alpha\n");
          writeFileSync(join(tmp.path, "file"), "x");
          const env = Object.fromEntries(Object.entries(c.env ?? {}).map(([k, v]) => [k, v === "<file>" ? join(tmp.path, "file") : v]));
          const r = kt(c.args, { cwd: work, stateDir: join(tmp.path, ".s"), ...(c.stdin !== undefined ? { stdin: c.stdin } : {}), env });
          expect(r.exitCode, `${c.args.join(" ")}\n${r.stdout}${r.stderr}`).toBe(code);
          // Where the table says the prose goes.
          if (code === 2 && column === 1 && !c.args.includes("--bogus")) expect(r.stdout).not.toBe("");
          if (code === 2 && (column === 0 || c.args.includes("--bogus"))) expect([r.stdout, r.stderr.includes("--help")]).toEqual(["", true]);
          if (code === 3) expect([r.stdout, r.stderr.length > 0]).toEqual(["", true]);
        });
      }
    });
  }
});
