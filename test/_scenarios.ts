// The one runner of the scenario folders (STYLE rule 9). test/fixtures/<tool>/NNN_name/ holds
//   input/               the tree before the call, copied to a temp work dir. Names git would
//                        not keep are spelled for the repository: a segment "dot_x" is ".x" and
//                        "raw_x" is "x" (raw_node_modules, dot_gitignore).
//   call.json            the call and what comes before it, every key but "input" optional:
//                        { input: the tool input,
//                          input_files: {field: file}  input fields read from files beside call.json
//                                                      (the patch text, kept byte for byte in patch.txt),
//                          cwd: "sub"                  the call's working directory inside the tree,
//                          root: true                  confine the call to the tree (--root),
//                          git: true                   the tree is a git repository (an empty .git/),
//                          order: [paths]              mtimes, oldest first (every other file older),
//                          chmod: {path: "755"},
//                          read: [paths]               read first, in the same session,
//                          modify_after_read: {path: content},
//                          flags: {strict, dryRun, trace, skipReadCheck} }
//   expected/output.txt  the model-facing text byte for byte, or
//   expected/stdout.txt  what `kt <tool>` prints: that text and one newline. A scenario with it
//                        also runs the text-mode command through dist/kt, so it must change no file.
//   expected/result.json isError, the error code and the tool's facts (FACTS below)
//   expected/tree/       the whole tree after the call; without it the tree must be unchanged
//   expected/modes.json  optional: {path: "755"}, the permission bits after the call
// In the expected text and in the input, {dir} is the work dir (the grep and glob goldens spell
// it <ROOT>) and {tmp} the temp dir holding it. Every scenario runs in-process and through
// dist/kt (`--json`), and a grep scenario with both engines (rg when installed), which must give
// the same bytes. KT_UPDATE_FIXTURES=1 writes the expected files from an in-process run (never in
// CI): review every one before committing it.
import { describe, expect, test } from "bun:test";
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { call, callTool, expectedExit, kt, MODES, tempDir, toolArgs, type CallOptions, type Mode } from "./_helpers.ts";
import { RG } from "./_search.ts";
import type { ToolFlags, ToolResult } from "../src/tools/tool.ts";

const FIXTURES = join(import.meta.dir, "fixtures");
const UPDATE = process.env.KT_UPDATE_FIXTURES === "1" && !process.env.CI;
const BASE_TIME = 1_600_000_000;

interface Call {
  input?: Record<string, unknown>;
  input_files?: Record<string, string>;
  cwd?: string;
  root?: boolean;
  git?: boolean;
  order?: string[];
  chmod?: Record<string, string>;
  read?: string[];
  modify_after_read?: Record<string, string>;
  flags?: Partial<ToolFlags>;
}

type Facts = (r: ToolResult, normalize: (text: string) => string) => Record<string, unknown>;

function outcome(r: ToolResult): Record<string, unknown> {
  return { isError: r.isError, ...(r.error ? { code: r.error.code } : {}) };
}

/** What a script may rely on besides the text, per tool: result.json holds exactly these. */
const FACTS: Record<string, Facts> = {
  edit: (r) => {
    const extra = (r.metadata.extra ?? {}) as Record<string, unknown>;
    const keep = ["strategy", "variant", "via", "numbering", "guessedDepth", "replacements", "startLine", "endLine", "dryRun", "count", "lines", "refused", "doubt"];
    return {
      ...outcome(r),
      ...Object.fromEntries(keep.filter((k) => k in extra).map((k) => [k, extra[k]])),
      ...(r.isError ? {} : { additions: r.metadata.additions, deletions: r.metadata.deletions }),
    };
  },
  patch: (r, normalize) => {
    const extra = (r.metadata.extra ?? {}) as Record<string, unknown>;
    const files = (extra.files as { path: string; movedFrom?: string }[] | undefined)?.map((f) => ({ ...f, path: normalize(f.path), ...("movedFrom" in f ? { movedFrom: normalize(String(f.movedFrom)) } : {}) }));
    return { ...outcome(r), ...(files ? { files } : {}), ...(r.isError && "lines" in extra ? { lines: extra.lines } : {}) };
  },
  grep: outcome,
  glob: outcome,
};

/** The engines a tool's scenarios run with (KT_GREP_ENGINE); one unnamed run for a tool without. */
function engines(tool: string): (string | undefined)[] {
  if (tool !== "grep") return [undefined];
  return RG ? ["builtin", "rg"] : ["builtin"];
}

function spelled(name: string): string {
  return name.startsWith("dot_") ? `.${name.slice(4)}` : name.startsWith("raw_") ? name.slice(4) : name;
}

/** Renames dot_/raw_ segments below `dir`, deepest first. */
function spell(dir: string): void {
  for (const name of readdirSync(dir)) {
    const abs = join(dir, name);
    if (statSync(abs).isDirectory()) spell(abs);
    if (spelled(name) !== name) renameSync(abs, join(dir, spelled(name)));
  }
}

/** Every file gets one old mtime; the files in `order` get newer ones, oldest first. */
function setTimes(dir: string, order: readonly string[], root = dir): void {
  for (const name of readdirSync(dir)) {
    const abs = join(dir, name);
    if (statSync(abs).isDirectory()) setTimes(abs, [], root);
    else utimesSync(abs, BASE_TIME, BASE_TIME);
  }
  order.forEach((rel, i) => utimesSync(join(root, rel), BASE_TIME + 100 + i, BASE_TIME + 100 + i));
}

function files(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((p) => statSync(join(dir, p)).isFile())
    .sort();
}

/** path → bytes (as latin1, so that a difference shows as text); a fixture's own tree is spelled. */
function tree(dir: string, spell = false): Record<string, string> {
  return Object.fromEntries(files(dir).map((p) => [spell ? p.split("/").map(spelled).join("/") : p, readFileSync(join(dir, p)).toString("latin1")]));
}

async function runScenario(tool: string, name: string, mode: Mode, engine: string | undefined): Promise<void> {
  const dir = join(FIXTURES, tool, name);
  const spec = JSON.parse(readFileSync(join(dir, "call.json"), "utf8")) as Call;
  const expectedDir = join(dir, "expected");
  const stdoutGolden = join(expectedDir, "stdout.txt");
  const textMode = existsSync(stdoutGolden);
  using tmp = tempDir();
  const work = join(tmp.path, "work");
  mkdirSync(work);
  if (existsSync(join(dir, "input"))) cpSync(join(dir, "input"), work, { recursive: true });
  spell(work);
  if (spec.git) mkdirSync(join(work, ".git"));
  setTimes(work, spec.order ?? []);
  for (const [p, bits] of Object.entries(spec.chmod ?? {})) chmodSync(join(work, p), parseInt(bits, 8));
  const stateDir = join(tmp.path, "state");
  const cwd = spec.cwd ? join(work, spec.cwd) : work;
  for (const p of spec.read ?? []) expect((await call(mode, "read", { file_path: p }, { cwd, stateDir })).isError, `read ${p}`).toBe(false);
  for (const [p, content] of Object.entries(spec.modify_after_read ?? {})) writeFileSync(join(work, p), content);
  const before = tree(work);

  const filled = JSON.stringify(spec.input ?? {}).replaceAll("<ROOT>", work).replaceAll("{dir}", work).replaceAll("{tmp}", tmp.path);
  const input = JSON.parse(filled) as Record<string, unknown>;
  for (const [field, file] of Object.entries(spec.input_files ?? {})) input[field] = readFileSync(join(dir, file), "utf8");
  const opts: CallOptions = {
    cwd,
    stateDir,
    callId: "scenario",
    ...(spec.root ? { root: work } : {}),
    ...(spec.flags ? { flags: spec.flags } : {}),
    ...(engine ? { env: { KT_GREP_ENGINE: engine } } : {}),
  };
  let r: ToolResult;
  if (mode === "in-process") {
    const { warnings, ...result } = await callTool(tool, input, opts);
    expect(warnings).toEqual([]);
    r = result;
  } else {
    r = await call(mode, tool, input, opts);
  }
  const normalize = (text: string) => text.replaceAll(work, "{dir}").replaceAll(tmp.path, "{tmp}");
  const output = normalize(r.content);
  const facts = FACTS[tool]!(r, normalize);

  if (UPDATE && mode === "in-process" && engine === engines(tool)[0]) {
    mkdirSync(expectedDir, { recursive: true });
    if (textMode) writeFileSync(stdoutGolden, `${output}\n`);
    else writeFileSync(join(expectedDir, "output.txt"), output);
    writeFileSync(join(expectedDir, "result.json"), `${JSON.stringify(facts, null, 2)}\n`);
    rmSync(join(expectedDir, "tree"), { recursive: true, force: true });
    const now = tree(work);
    if (JSON.stringify(now) !== JSON.stringify(before)) {
      for (const p of files(work)) {
        mkdirSync(join(expectedDir, "tree", p, ".."), { recursive: true });
        writeFileSync(join(expectedDir, "tree", p), readFileSync(join(work, p)));
      }
    }
  }

  const expectedResult = JSON.parse(readFileSync(join(expectedDir, "result.json"), "utf8")) as { isError: boolean };
  if (textMode) expect(`${output}\n`).toBe(readFileSync(stdoutGolden, "utf8").replaceAll("<ROOT>", "{dir}"));
  else expect(output).toBe(readFileSync(join(expectedDir, "output.txt"), "utf8"));
  expect(facts).toEqual(expectedResult);
  // Which engine answered is part of the result, so that a fallback cannot pass unnoticed.
  if (engine && !r.isError) expect(r.metadata.extra?.engine).toBe(engine);

  if (textMode && mode === "binary") {
    expect(existsSync(join(expectedDir, "tree")), "a stdout.txt scenario must change no file").toBe(false);
    const text = kt(toolArgs(tool, opts), { cwd, stateDir, stdin: JSON.stringify(input), ...(opts.env ? { env: opts.env } : {}) });
    expect(normalize(text.stdout)).toBe(readFileSync(stdoutGolden, "utf8").replaceAll("<ROOT>", "{dir}"));
    expect(text.exitCode).toBe(expectedExit(tool, r));
  }

  expect(tree(work)).toEqual(existsSync(join(expectedDir, "tree")) ? tree(join(expectedDir, "tree"), true) : before);
  const modesFile = join(expectedDir, "modes.json");
  const modes = existsSync(modesFile) ? (JSON.parse(readFileSync(modesFile, "utf8")) as Record<string, string>) : {};
  for (const [p, bits] of Object.entries(modes)) expect((statSync(join(work, p)).mode & 0o7777).toString(8), p).toBe(bits);
  // No temp file of a write is left beside the files.
  expect(files(work).filter((p) => p.includes(".kt-"))).toEqual([]);
}

/** What a scenario folder holds that the layout does not name (a file of an old layout, a typo). */
export function strays(dir: string): string[] {
  const spec = JSON.parse(readFileSync(join(dir, "call.json"), "utf8")) as Call;
  const top = new Set(["input", "call.json", "expected", ...Object.values(spec.input_files ?? {})]);
  const out = readdirSync(dir).filter((n) => !top.has(n));
  const expected = existsSync(join(dir, "expected")) ? readdirSync(join(dir, "expected")) : [];
  out.push(...expected.filter((n) => !["output.txt", "stdout.txt", "result.json", "tree", "modes.json"].includes(n)).map((n) => `expected/${n}`));
  const texts = expected.filter((n) => n === "output.txt" || n === "stdout.txt");
  if (texts.length !== 1) out.push(`expected/ needs exactly one of output.txt and stdout.txt (has ${texts.length})`);
  if (!expected.includes("result.json")) out.push("expected/result.json is missing");
  return out;
}

/** Registers every scenario of test/fixtures/<tool>/, per mode (and per engine for grep). */
export function scenarios(tool: string): void {
  if (!(tool in FACTS)) throw new Error(`no FACTS for ${tool}: say what its result.json holds`);
  const names = readdirSync(join(FIXTURES, tool)).filter((n) => /^\d{3}_/.test(n)).sort();
  test(`every folder of test/fixtures/${tool}/ is a scenario in the one layout`, () => {
    expect(readdirSync(join(FIXTURES, tool)).filter((n) => !names.includes(n))).toEqual([]);
    expect(names.flatMap((n) => strays(join(FIXTURES, tool, n)).map((s) => `${n}: ${s}`))).toEqual([]);
  });
  describe.each(MODES)(`${tool} scenarios (%s)`, (mode) => {
    for (const name of names) {
      for (const engine of engines(tool)) test(`${name}${engine ? ` (${engine})` : ""}`, () => runScenario(tool, name, mode, engine));
    }
  });
}
