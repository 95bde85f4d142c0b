import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { callTool, kt, tempDir } from "./_helpers.ts";

describe("read", () => {
  test("numbers lines and ends with one newline on the CLI", async () => {
    using tmp = tempDir();
    mkdirSync(join(tmp.path, "state"));
    writeFileSync(join(tmp.path, "a.txt"), "alpha\nbeta\n");
    const opts = { cwd: tmp.path, stateDir: join(tmp.path, "state") };
    const r = await callTool("read", { file_path: "a.txt" }, opts);
    expect(r.content).toBe(`${tmp.path}/a.txt\n     1→alpha\n     2→beta`);
    const cli = kt(["read", "a.txt"], opts);
    expect(cli.stdout).toBe(`${r.content}\n`);
    expect(cli.exitCode).toBe(0);
  });
});
