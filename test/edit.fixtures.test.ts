// Each folder in test/fixtures/edit/ is one scenario, run in-process and through dist/kt:
//   input/…             the files as they are before the call (copied to a temp dir)
//   call.json           { input, read?: false, flags?: {strict, dryRun, trace, skipReadCheck},
//                         modify_after_read?: { path: content } }
//   expected_output.txt the model-facing text, byte for byte ({dir} = the temp work dir)
//   expected_result.json isError, the error code and the edit's extra fields
//   expected/…          the files after the call; without it every input file must be unchanged
// KT_UPDATE_FIXTURES=1 writes the expected files from an in-process run (never in CI): review
// every one before committing it.
import { describe, expect, test } from "bun:test";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { call, MODES, tempDir, type Mode } from "./_helpers.ts";
import type { ToolFlags, ToolResult } from "../src/tools/tool.ts";

const FIXTURES = join(import.meta.dir, "fixtures", "edit");
const UPDATE = process.env.KT_UPDATE_FIXTURES === "1" && !process.env.CI;

interface Scenario {
  input: Record<string, unknown>;
  read?: boolean;
  flags?: Partial<ToolFlags>;
  modify_after_read?: Record<string, string>;
}

function files(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((p) => statSync(join(dir, p)).isFile())
    .sort();
}

/** What a script may rely on: the error code, and the edit's facts when it succeeded. */
function resultFacts(r: ToolResult): Record<string, unknown> {
  const extra = (r.metadata.extra ?? {}) as Record<string, unknown>;
  const keep = ["strategy", "variant", "replacements", "startLine", "endLine", "dryRun", "count", "lines", "refused", "doubt"];
  return {
    isError: r.isError,
    ...(r.error ? { code: r.error.code } : {}),
    ...Object.fromEntries(keep.filter((k) => k in extra).map((k) => [k, extra[k]])),
    ...(r.isError ? {} : { additions: r.metadata.additions, deletions: r.metadata.deletions }),
  };
}

async function runScenario(name: string, mode: Mode): Promise<void> {
  const dir = join(FIXTURES, name);
  const scenario = JSON.parse(readFileSync(join(dir, "call.json"), "utf8")) as Scenario;
  using tmp = tempDir();
  const work = join(tmp.path, "work");
  mkdirSync(work);
  if (existsSync(join(dir, "input"))) cpSync(join(dir, "input"), work, { recursive: true });
  const opts = { cwd: work, stateDir: join(tmp.path, ".state"), flags: scenario.flags };
  const target = String(scenario.input.file_path ?? scenario.input.filePath ?? scenario.input.path);
  if (scenario.read !== false) {
    const read = await call(mode, "read", { file_path: target }, { cwd: work, stateDir: opts.stateDir });
    expect(read.isError).toBe(false);
  }
  for (const [path, content] of Object.entries(scenario.modify_after_read ?? {})) writeFileSync(join(work, path), content);
  const before = new Map(files(work).map((p) => [p, readFileSync(join(work, p))]));

  const r = await call(mode, "edit", scenario.input, opts);
  const output = r.content.replaceAll(work, "{dir}");

  if (UPDATE && mode === "in-process") {
    writeFileSync(join(dir, "expected_output.txt"), output);
    writeFileSync(join(dir, "expected_result.json"), `${JSON.stringify(resultFacts(r), null, 2)}\n`);
    rmSync(join(dir, "expected"), { recursive: true, force: true });
    for (const p of files(work)) {
      const now = readFileSync(join(work, p));
      if (before.get(p)?.equals(now)) continue;
      mkdirSync(join(dir, "expected", p, ".."), { recursive: true });
      writeFileSync(join(dir, "expected", p), now);
    }
  }

  expect(output).toBe(readFileSync(join(dir, "expected_output.txt"), "utf8"));
  expect(resultFacts(r)).toEqual(JSON.parse(readFileSync(join(dir, "expected_result.json"), "utf8")));
  const expectedDir = join(dir, "expected");
  const changed = new Set(files(expectedDir));
  for (const p of changed) expect(readFileSync(join(work, p)).toString("latin1"), p).toBe(readFileSync(join(expectedDir, p)).toString("latin1"));
  for (const [p, bytes] of before) {
    if (!changed.has(p)) expect(readFileSync(join(work, p)).equals(bytes), `${relative(work, join(work, p))} must be unchanged`).toBe(true);
  }
}

const scenarios = readdirSync(FIXTURES).filter((n) => /^\d{3}_/.test(n)).sort();

describe.each(MODES)("edit fixtures (%s)", (mode) => {
  for (const name of scenarios) test(name, () => runScenario(name, mode));
});
