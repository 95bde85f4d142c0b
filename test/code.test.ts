// The code tool's own prose (SPEC §8.1): positions by line and symbol, the inputs it needs,
// a workspace edit applied to text (pure), and its answers through a small fake server —
// golden, in-process and through dist/kt.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { call, callTool, MODES, tempDir } from "./_helpers.ts";
import { applyChanges } from "../src/tools/code.ts";
import { stopLocalServers } from "../src/lsp/index.ts";

const FAKE = join(import.meta.dir, "fixtures", "lsp", "fake-server.mjs");
const NODE = Bun.which("node")!;

afterAll(() => stopLocalServers());

function project() {
  const tmp = tempDir("kt-code-");
  mkdirSync(join(tmp.path, ".kt"));
  writeFileSync(join(tmp.path, "fake.toml"), "");
  writeFileSync(join(tmp.path, ".kt", "lsp.json"), JSON.stringify({ servers: { fake: { command: NODE, args: [FAKE, "ok"], extensions: [".fake"], rootMarkers: ["fake.toml"] } } }));
  writeFileSync(join(tmp.path, "a.fake"), "let total = 0\nfor item in items:\n    total = total + item\nprint(total)\n");
  return tmp;
}

describe("positions and inputs", () => {
  const ask = (tmp: { path: string }, input: Record<string, unknown>) => callTool("code", { file_path: join(tmp.path, "a.fake"), ...input }, { cwd: tmp.path, stateDir: join(tmp.path, ".s") });

  test("a symbol not on the line given: the line's text and the nearest line that has it", async () => {
    using tmp = project();
    const r = await ask(tmp, { action: "definition", line: 1, symbol: "item" });
    expect(r.error?.code).toBe("NO_MATCH");
    expect(r.content).toBe(`"item" is not on line 1 of ${tmp.path}/a.fake (the line is: "let total = 0"). It appears on line 2. Give the line where the symbol is written, or "line:col".`);
  });

  test("whole words only: 'item' is not found inside 'items' alone", async () => {
    using tmp = project();
    writeFileSync(join(tmp.path, "a.fake"), "items = 1\n");
    const r = await ask(tmp, { action: "hover", symbol: "item" });
    expect(r.content).toBe(`"item" does not appear in ${tmp.path}/a.fake. Give the file where it is used, with its line (grep finds it).`);
  });

  test("a line past the end, a line that is no number, no position at all", async () => {
    using tmp = project();
    expect((await ask(tmp, { action: "hover", line: 9, symbol: "total" })).content).toBe(`Line 9 is past the end of ${tmp.path}/a.fake (5 lines). Give a line of the file.`);
    expect((await ask(tmp, { action: "hover", line: "two" })).content).toBe(
      'Invalid input for tool "code": parameter "line" must be a line number or "line:col" (both 1-based), got "two". Please rewrite the input so it satisfies the expected schema.',
    );
    expect((await ask(tmp, { action: "references" })).content).toBe(
      'Invalid input for tool "code": action "references" needs a position: "line" and "symbol" (the name on that line), or "line" as "line:col". Please rewrite the input so it satisfies the expected schema.',
    );
  });

  test("the fields an action needs", async () => {
    using tmp = project();
    const opts = { cwd: tmp.path, stateDir: join(tmp.path, ".s") };
    expect((await callTool("code", { action: "symbols" }, opts)).content).toBe(
      'Invalid input for tool "code": parameter "file_path" is required for action "symbols". Please rewrite the input so it satisfies the expected schema.',
    );
    expect((await ask(tmp, { action: "rename", line: 1, symbol: "total" })).content).toBe(
      'Invalid input for tool "code": parameter "query" (the new name) is required for action "rename". Please rewrite the input so it satisfies the expected schema.',
    );
    expect((await callTool("code", { action: "hover", file_path: join(tmp.path, "nope.fake"), line: 1 }, opts)).content).toBe(`${tmp.path}/nope.fake does not exist. Give the path of an existing source file.`);
    expect((await callTool("code", { action: "diagnostics" }, opts)).content).toBe("This session has changed no files yet. Give file_path to ask about one file.");
  });
});

describe("answers through a server", () => {
  for (const mode of MODES) {
    test(`${mode}: hover and an empty definition, golden`, async () => {
      using tmp = project();
      const opts = { cwd: tmp.path, stateDir: join(tmp.path, ".s"), env: { KT_CODE_MS: "30000" } };
      const hover = await call(mode, "code", { action: "hover", file_path: "a.fake", line: 3, symbol: "item" }, opts);
      expect(hover.content).toBe(`item at ${tmp.path}/a.fake:3:21 (fake):\na fake symbol`);
      const def = await call(mode, "code", { action: "definition", file_path: "a.fake", line: "3:5" }, opts);
      expect(def.content).toBe(`fake found no definition of the symbol at ${tmp.path}/a.fake:3:5. Check the line and symbol (hover shows what is there), or use grep.`);
    }, 60_000);
  }
});

describe("applyChanges (a workspace edit on text)", () => {
  const at = (line: number, character: number, endLine: number, endCharacter: number, newText: string) => ({ line, character, endLine, endCharacter, newText });

  test("edits in any order, on CRLF lines, with UTF-16 columns", () => {
    const text = "const é = f(x);\r\nreturn f(x) + f(y);\r\n";
    expect(applyChanges(text, [at(1, 14, 1, 15, "g"), at(0, 10, 0, 11, "g"), at(1, 7, 1, 8, "g")], "a.ts")).toBe("const é = g(x);\r\nreturn g(x) + g(y);\r\n");
  });

  test("a range past a line's end stops before its line break; insertions and deletions", () => {
    expect(applyChanges("ab\r\ncd\n", [at(0, 1, 0, 99, "X")], "a")).toBe("aX\r\ncd\n");
    expect(applyChanges("ab\ncd\n", [at(1, 0, 1, 0, ">"), at(0, 0, 1, 0, "")], "a")).toBe(">cd\n");
  });

  test("overlapping edits are refused, nothing applied", () => {
    expect(() => applyChanges("abcdef\n", [at(0, 0, 0, 3, "x"), at(0, 2, 0, 4, "y")], "/p/a.ts")).toThrow(
      "The language server's rename has overlapping edits in /p/a.ts, so kt does not apply it. Nothing was changed.",
    );
  });
});
