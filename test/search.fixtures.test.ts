// Scenario folders for grep and glob: test/fixtures/<tool>/NNN_name/ holds
//   input/         the tree searched (copied to a temp dir; see names below)
//   call.json      { "input": {...}, "git"?: true, "order"?: [paths, oldest first], "cwd"?: "sub",
//                    "isError"?: true, "code"?: "INVALID_REGEX" } (<ROOT> works in input too)
//   expected.txt   the exact model-facing text, then one newline; <ROOT> is the temp dir,
//                  <SPILL> the spill file
// Each scenario runs in-process and through dist/kt, and for grep with both engines
// (rg when installed), which must print the same bytes.
// File names git would not keep are spelled for the repository: a segment "dot_x" is
// ".x" and "raw_x" is "x" (e.g. raw_node_modules, raw_dist).
import { describe, expect, test } from "bun:test";
import { cpSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { callTool, kt, tempDir } from "./_helpers.ts";
import { RG } from "./_search.ts";

const FIXTURES = join(import.meta.dir, "fixtures");
const BASE_TIME = 1_600_000_000;

interface Call {
  input: Record<string, unknown>;
  git?: boolean;
  order?: string[];
  cwd?: string;
  isError?: boolean;
  code?: string;
}

/** Renames dot_/raw_ segments, deepest first. */
function spell(dir: string): void {
  for (const name of readdirSync(dir)) {
    const abs = join(dir, name);
    if (statSync(abs).isDirectory()) spell(abs);
    const real = name.startsWith("dot_") ? `.${name.slice(4)}` : name.startsWith("raw_") ? name.slice(4) : name;
    if (real !== name) renameSync(abs, join(dir, real));
  }
}

function setTimes(dir: string, order: string[], root: string): void {
  for (const name of readdirSync(dir)) {
    const abs = join(dir, name);
    if (statSync(abs).isDirectory()) setTimes(abs, order, root);
    else utimesSync(abs, BASE_TIME, BASE_TIME);
  }
  order.forEach((rel, i) => utimesSync(join(root, rel), BASE_TIME + 100 + i, BASE_TIME + 100 + i));
}

function engines(tool: string): string[] {
  return tool === "grep" && RG ? ["builtin", "rg"] : ["builtin"];
}

for (const tool of ["grep", "glob"]) {
  describe(`${tool} scenarios`, () => {
    for (const scenario of readdirSync(join(FIXTURES, tool)).sort()) {
      const dir = join(FIXTURES, tool, scenario);
      const call = JSON.parse(readFileSync(join(dir, "call.json"), "utf8")) as Call;
      const expected = readFileSync(join(dir, "expected.txt"), "utf8");
      for (const engine of engines(tool)) {
        test(`${scenario}${tool === "grep" ? ` (${engine})` : ""}`, async () => {
          using tmp = tempDir();
          const root = join(tmp.path, "tree");
          cpSync(join(dir, "input"), root, { recursive: true });
          spell(root);
          if (call.git) mkdirSync(join(root, ".git"));
          setTimes(root, call.order ?? [], root);
          const stateDir = join(tmp.path, "state");
          const cwd = call.cwd ? join(root, call.cwd) : root;
          const fill = (text: string, spill: string | undefined) => text.replaceAll("<ROOT>", root).replaceAll("<SPILL>", spill ?? "<no spill>");
          const input = JSON.parse(fill(JSON.stringify(call.input), undefined)) as Record<string, unknown>;

          const saved = process.env.KT_GREP_ENGINE;
          process.env.KT_GREP_ENGINE = engine;
          let r;
          try {
            r = await callTool(tool, input, { cwd, stateDir, callId: "scenario" });
          } finally {
            if (saved === undefined) delete process.env.KT_GREP_ENGINE;
            else process.env.KT_GREP_ENGINE = saved;
          }
          expect(r.warnings).toEqual([]);
          expect(`${r.content}\n`).toBe(fill(expected, r.metadata.truncation?.spillPath));
          expect(r.isError).toBe(call.isError ?? false);
          if (call.code) expect(r.error?.code).toBe(call.code as never);
          if (!r.isError && tool === "grep") expect(r.metadata.extra?.engine).toBe(engine);

          const cli = kt([tool, "--call-id", "scenario"], { cwd, stateDir, stdin: JSON.stringify(input), env: { KT_GREP_ENGINE: engine } });
          expect(cli.stdout).toBe(fill(expected, r.metadata.truncation?.spillPath));
          expect(cli.exitCode).toBe(call.isError ? 1 : 0);
        });
      }
    }
  });
}
