// Each folder in test/fixtures/patch/ is one scenario, run in-process and through dist/kt:
//   input/…              the tree before the patch (copied to a temp work dir)
//   patch.txt            the patch, given as the `patch` field
//   scenario.json        optional: { read?: [paths read first], modify_after_read?: {path: content},
//                        chmod?: {path: "755"}, expect_modes?: {path: "755"}, root?: true,
//                        flags?: {dryRun, trace} }
//   expected_output.txt  the model-facing text, byte for byte ({dir} = the temp work dir)
//   expected_result.json isError, the error code, and per file its action and line counts
//   expected/…           the whole tree after the patch; without it the tree must be unchanged
// KT_UPDATE_FIXTURES=1 writes the expected files from an in-process run (never in CI): review
// every one before committing it.
import { describe, expect, test } from "bun:test";
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { call, MODES, tempDir, type Mode } from "./_helpers.ts";
import type { ToolFlags, ToolResult } from "../src/tools/tool.ts";

const FIXTURES = join(import.meta.dir, "fixtures", "patch");
const UPDATE = process.env.KT_UPDATE_FIXTURES === "1" && !process.env.CI;

interface Scenario {
  read?: string[];
  modify_after_read?: Record<string, string>;
  chmod?: Record<string, string>;
  expect_modes?: Record<string, string>;
  root?: boolean;
  flags?: Partial<ToolFlags>;
}

function files(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((p) => statSync(join(dir, p)).isFile())
    .sort();
}

function tree(dir: string): Record<string, string> {
  return Object.fromEntries(files(dir).map((p) => [p, readFileSync(join(dir, p)).toString("latin1")]));
}

function resultFacts(r: ToolResult, work: string): Record<string, unknown> {
  const extra = (r.metadata.extra ?? {}) as Record<string, unknown>;
  const fileFacts = (extra.files as { path: string }[] | undefined)?.map((f) => ({ ...f, path: f.path.replace(work, "{dir}"), ...("movedFrom" in f ? { movedFrom: String(f.movedFrom).replace(work, "{dir}") } : {}) }));
  return {
    isError: r.isError,
    ...(r.error ? { code: r.error.code } : {}),
    ...(fileFacts ? { files: fileFacts } : {}),
    ...(r.isError && "lines" in extra ? { lines: extra.lines } : {}),
  };
}

async function runScenario(name: string, mode: Mode): Promise<void> {
  const dir = join(FIXTURES, name);
  const scenarioPath = join(dir, "scenario.json");
  const scenario = (existsSync(scenarioPath) ? JSON.parse(readFileSync(scenarioPath, "utf8")) : {}) as Scenario;
  using tmp = tempDir();
  const work = join(tmp.path, "work");
  mkdirSync(work);
  if (existsSync(join(dir, "input"))) cpSync(join(dir, "input"), work, { recursive: true });
  for (const [p, mode] of Object.entries(scenario.chmod ?? {})) chmodSync(join(work, p), parseInt(mode, 8));
  const stateDir = join(tmp.path, ".state");
  for (const p of scenario.read ?? []) expect((await call(mode, "read", { file_path: p }, { cwd: work, stateDir })).isError).toBe(false);
  for (const [p, content] of Object.entries(scenario.modify_after_read ?? {})) writeFileSync(join(work, p), content);
  const before = tree(work);

  const patch = readFileSync(join(dir, "patch.txt"), "utf8");
  const r = await call(mode, "patch", { patch }, { cwd: work, stateDir, ...(scenario.root ? { root: work } : {}), flags: scenario.flags });
  const output = r.content.replaceAll(work, "{dir}").replaceAll(tmp.path, "{tmp}");

  if (UPDATE && mode === "in-process") {
    writeFileSync(join(dir, "expected_output.txt"), output);
    writeFileSync(join(dir, "expected_result.json"), `${JSON.stringify(resultFacts(r, work), null, 2)}\n`);
    rmSync(join(dir, "expected"), { recursive: true, force: true });
    const now = tree(work);
    if (JSON.stringify(now) !== JSON.stringify(before)) {
      for (const p of files(work)) {
        mkdirSync(join(dir, "expected", p, ".."), { recursive: true });
        writeFileSync(join(dir, "expected", p), readFileSync(join(work, p)));
      }
    }
  }

  expect(output).toBe(readFileSync(join(dir, "expected_output.txt"), "utf8"));
  expect(resultFacts(r, work)).toEqual(JSON.parse(readFileSync(join(dir, "expected_result.json"), "utf8")));
  const expectedDir = join(dir, "expected");
  expect(tree(work)).toEqual(existsSync(expectedDir) ? tree(expectedDir) : before);
  for (const [p, m] of Object.entries(scenario.expect_modes ?? {})) expect((statSync(join(work, p)).mode & 0o7777).toString(8), p).toBe(m);
  // No temp file of the commit is left beside the files.
  expect(files(work).filter((p) => p.includes(".kt-"))).toEqual([]);
}

const scenarios = readdirSync(FIXTURES).filter((n) => /^\d{3}_/.test(n)).sort();

describe.each(MODES)("patch fixtures (%s)", (mode) => {
  for (const name of scenarios) test(name, () => runScenario(name, mode));
});
