// The before/after diagnostics diff and the text it becomes (src/lsp/diff.ts, render.ts):
// pure functions, tested without a server.
import { describe, expect, test } from "bun:test";
import type { Diagnostic } from "../src/lsp/client.ts";
import { diffDiagnostics } from "../src/lsp/diff.ts";
import { renderReport, renderReports } from "../src/lsp/render.ts";

const d = (line: number, message: string, extra: Partial<Diagnostic> = {}): Diagnostic => ({ line, col: 1, endLine: line, endCol: 2, severity: "error", source: "ts", code: "2322", message, ...extra });

describe("diffDiagnostics", () => {
  test("an error on a new line is introduced; one gone is fixed; one on an unchanged line is kept", () => {
    const before = ["a", "b", "c"];
    const after = ["a", "b2", "c", "d"];
    const r = diffDiagnostics([d(2, "bad b"), d(3, "bad c")], before, [d(3, "bad c"), d(4, "bad d")], after);
    expect(r.introduced).toEqual([d(4, "bad d")]);
    expect(r.fixed).toEqual([d(2, "bad b")]);
    expect(r.kept).toEqual([d(3, "bad c")]);
  });

  test("moved lines introduce nothing: the line's text, not its number, identifies an error", () => {
    const before = ["x", "y", "bad();"];
    const after = ["bad();", "x", "y"];
    const r = diffDiagnostics([d(3, "no bad")], before, [d(1, "no bad")], after);
    expect(r.introduced).toEqual([]);
    expect(r.fixed).toEqual([]);
    expect(r.kept).toHaveLength(1);
  });

  test("a second copy of an existing error is new", () => {
    const r = diffDiagnostics([d(1, "m")], ["bad();"], [d(1, "m"), d(2, "m")], ["bad();", "bad();"]);
    expect(r.introduced).toEqual([d(2, "m")]);
    expect(r.kept).toEqual([d(1, "m")]);
  });

  test("the same line with another code or message is another error", () => {
    const r = diffDiagnostics([d(1, "m")], ["z"], [d(1, "m", { code: "2345" }), d(1, "other")], ["z"]);
    expect(r.introduced).toHaveLength(2);
    expect(r.fixed).toEqual([d(1, "m")]);
  });

  test("indentation does not make a line another line; warnings and hints never count", () => {
    const r = diffDiagnostics([d(1, "m")], ["bad();"], [d(1, "m"), d(2, "w", { severity: "warning" }), d(2, "h", { severity: "hint" })], ["    bad();", "x"]);
    expect(r.introduced).toEqual([]);
    expect(r.kept).toHaveLength(1);
  });
});

describe("the diagnostics block", () => {
  const lines = ["const a: number = 'x';", "  call(  1 );"];
  test("introduced errors with their line's code, then the tally", () => {
    const diff = { introduced: [d(1, "Type 'string' is not assignable to type 'number'.", { col: 7 })], fixed: [d(9, "x")], kept: [d(2, "y"), d(2, "z")] };
    expect(renderReport({ path: "/p/a.ts", server: "tsls", status: "checked", diff, lines }, 2000)).toBe(
      "This change introduced 1 error in /p/a.ts (tsls):\n1:7 error [ts 2322] Type 'string' is not assignable to type 'number'.\n    const a: number = 'x';\n1 fixed · 2 were already in this file",
    );
  });

  test("at most 10 shown, the rest counted with the next step", () => {
    const many = Array.from({ length: 12 }, (_, i) => d(1, `e${i}`, { source: undefined, code: undefined }));
    const text = renderReport({ path: "/p/a.ts", server: "s", status: "checked", diff: { introduced: many, fixed: [], kept: [d(2, "k")] }, lines }, 2000)!;
    const shown = text.split("\n");
    expect(shown[0]).toBe("This change introduced 12 errors in /p/a.ts (s):");
    expect(shown[1]).toBe("1:1 error e0");
    expect(shown.filter((l) => l.startsWith("1:1 error"))).toHaveLength(10);
    expect(shown.slice(-2)).toEqual(['… and 2 more: call code with action "diagnostics" on /p/a.ts for every one.', "0 fixed · 1 was already in this file"]);
  });

  test("nothing introduced: one line", () => {
    expect(renderReport({ path: "/p/a.ts", server: "s", status: "checked", diff: { introduced: [], fixed: [], kept: [] }, lines }, 2000)).toBe("Diagnostics (s): no errors in /p/a.ts.");
    expect(renderReport({ path: "/p/a.ts", server: "s", status: "checked", diff: { introduced: [], fixed: [d(1, "a"), d(1, "b")], kept: [d(1, "c")] }, lines }, 2000)).toBe(
      "Diagnostics (s): no new errors in /p/a.ts · 2 fixed · 1 was already in this file.",
    );
  });

  test("a message over several lines is shown on one", () => {
    const diff = { introduced: [d(2, "first\n  second")], fixed: [], kept: [] };
    expect(renderReport({ path: "/p/a.ts", server: "s", status: "checked", diff, lines }, 2000)).toBe("This change introduced 1 error in /p/a.ts (s):\n2:1 error [ts 2322] first second\n    call(  1 );\n0 fixed · 0 were already in this file");
  });

  test("starting, late and quiet; several files apart", () => {
    expect(renderReports([
      { path: "/p/a.py", server: "pyright", status: "starting" },
      { path: "/p/b.py", server: "pyright", status: "late", budgetMs: 2000 },
      { path: "/p/c.py", server: "pyright", status: "quiet" },
    ], 2000)).toBe(
      'Diagnostics: pyright is still starting, so /p/a.py was not checked this time; the next change will be (or call code with action "diagnostics").\n\nDiagnostics: pyright did not report on /p/b.py within 2,000 ms, so nothing is shown rather than something stale; call code with action "diagnostics" to ask again.',
    );
    expect(renderReports([{ path: "/p/c.py", server: "pyright", status: "quiet" }], 2000)).toBeUndefined();
  });
  test("many files: one line per server and outcome past GROUPED files, new errors of SHOWN_FILES files, then a count", () => {
    const clean = (path: string, fixed = 0) => ({ path, server: "s", status: "checked" as const, diff: { introduced: [], fixed: Array.from({ length: fixed }, () => d(1, "f")), kept: [] }, lines });
    const erring = (path: string) => ({ path, server: "s", status: "checked" as const, diff: { introduced: [d(1, "e")], fixed: [], kept: [] }, lines });
    const few = renderReports([clean("/p/a.ts"), clean("/p/b.ts"), clean("/p/c.ts")], 2000);
    expect(few).toBe(["a", "b", "c"].map((n) => `Diagnostics (s): no errors in /p/${n}.ts.`).join("\n\n"));
    const six = ["a", "b", "c", "d", "e", "f"].map((n) => `/p/${n}.ts`);
    expect(renderReports(six.map((p) => clean(p)), 2000)).toBe("Diagnostics (s): no errors in 6 files (/p/a.ts, /p/b.ts, /p/c.ts, /p/d.ts, /p/e.ts and 1 more).");
    expect(renderReports([...six.map((p, i) => clean(p, i === 2 ? 2 : 0)), { ...clean("/p/g.py"), server: "pyright" }], 2000)).toBe(
      "Diagnostics (s): no new errors in 6 files (/p/a.ts, /p/b.ts, /p/c.ts, /p/d.ts, /p/e.ts and 1 more) · 2 fixed · 0 were already in them.\n\nDiagnostics (pyright): no errors in /p/g.py.",
    );
    expect(renderReports(["a", "b", "c", "d"].map((n) => ({ path: `/p/${n}.py`, server: "pyright", status: "starting" as const })), 2000)).toBe(
      'Diagnostics: pyright is still starting, so 4 files (/p/a.py, /p/b.py, /p/c.py, /p/d.py) were not checked this time; the next change will be (or call code with action "diagnostics").',
    );
    expect(renderReports(["a", "b", "c", "d"].map((n) => ({ path: `/p/${n}.py`, server: "pyright", status: "late" as const, budgetMs: 2000 })), 2000)).toBe(
      'Diagnostics: pyright did not report on 4 files (/p/a.py, /p/b.py, /p/c.py, /p/d.py) within 2,000 ms, so nothing is shown rather than something stale; call code with action "diagnostics" to ask again.',
    );
    const twelve = Array.from({ length: 12 }, (_, i) => erring(`/p/e${String(i).padStart(2, "0")}.ts`));
    const parts = renderReports([clean("/p/a.ts"), ...twelve], 2000)!.split("\n\n");
    expect(parts).toHaveLength(12);
    expect(parts[0]).toBe("Diagnostics (s): no errors in /p/a.ts.");
    expect(parts[1]).toStartWith("This change introduced 1 error in /p/e00.ts (s):");
    expect(parts[10]).toStartWith("This change introduced 1 error in /p/e09.ts (s):");
    expect(parts[11]).toBe('… and 2 more files with errors this change introduced: call code with action "diagnostics" (without file_path: every file this session changed) for all of them.');
  });
});
