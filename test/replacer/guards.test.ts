// The guards around whatever a strategy found: uniqueness, disproportion, replace_all,
// doubt, already-applied, the near-miss, strict mode and the trace.
import { describe, expect, test } from "bun:test";
import { disproportionLimit } from "../../src/replacer/index.ts";
import { expectApplied, expectNotApplied, run } from "./_helpers.ts";

const filler = (n: number, tag = "line") => Array.from({ length: n }, (_, i) => `const ${tag}${i} = ${i};`);

describe("uniqueness", () => {
  test("two exact occurrences: ambiguous with both start lines", () => {
    const r = expectNotApplied("x = 1;\ny = 2;\nx = 1;\n", "x = 1;", "x = 3;");
    expect(r).toMatchObject({ kind: "ambiguous", strategy: "exact", count: 2, lines: [1, 3] });
  });
  test("overlapping exact occurrences count as two positions", () => {
    expect(run("aaa\n", "aa", "b")).toMatchObject({ kind: "ambiguous", count: 2, lines: [1, 1] });
  });
  test("a fuzzy strategy with two windows is ambiguous too", () => {
    const r = run("  a();\n  b();\n\ta();\n\tb();\n", "a();\nb();", "a();\nc();");
    expect(r).toMatchObject({ kind: "ambiguous", strategy: "indentation-flexible", lines: [1, 3] });
  });
  test("two blocks scoring alike under block-anchor are ambiguous", () => {
    const file = 'if (ready) {\n  start(1);\n  log("one");\n}\nmid();\nif (ready) {\n  start(2);\n  log("two");\n}\n';
    const r = run(file, 'if (ready) {\n  start(3);\n  log("six");\n}', 'if (ready) {\n  start(4);\n  log("six");\n}');
    expect(r).toMatchObject({ kind: "ambiguous", strategy: "block-anchor", lines: [1, 6] });
  });
  test("every start line is listed", () => {
    const r = run("x\nx\nx\nx\n", "x", "y");
    expect(r).toMatchObject({ kind: "ambiguous", count: 4, lines: [1, 2, 3, 4] });
  });
});

describe("disproportionate match", () => {
  test("the limit is max(3 × length, length + 1000)", () => {
    expect(disproportionLimit(100)).toBe(1100);
    expect(disproportionLimit(600)).toBe(1800);
  });
  test("context-aware refuses a block far longer than old_string", () => {
    const file = ["start {", "  one();", "  " + "x".repeat(5000), "  two();", "  zzz();", "}", ""].join("\n");
    const old = ["start {", "  one();", "  q = [1, 2];", "  two();", "  w(9, 8, 7);", "}"].join("\n");
    const r = expectNotApplied(file, old, old.replace("one", "uno"));
    expect(r).toMatchObject({ kind: "refused", reason: "disproportionate", strategy: "context-aware", startLine: 1, endLine: 6 });
    if (r.kind === "refused" && r.reason === "disproportionate") expect(r.matchedChars).toBeGreaterThan(r.limitChars);
  });
  test("block-anchor refuses a block whose anchor lines are padded far beyond old_string", () => {
    const pad = " ".repeat(3000);
    const file = `${pad}begin() {\n  step(1);\n  step(2);\n${pad}}\n`;
    const old = "begin() {\n  step(1);\n  step(3);\n}";
    expect(run(file, old, old.replace("step(1)", "step(0)"))).toMatchObject({ kind: "refused", reason: "disproportionate", strategy: "block-anchor" });
  });
});

describe("replace_all", () => {
  test("zero exact matches is not found, with the near-miss, never a fuzzy mass replace", () => {
    const r = expectNotApplied("\tfoo();\n\tfoo();\n", "    foo();", "    bar();", { replaceAll: true });
    expect(r.kind).toBe("not-found");
    if (r.kind !== "not-found") return;
    expect(r.nearMiss).toMatchObject({ line: 1, column: 1, whitespaceOnly: true, expected: "    foo();", actual: "\tfoo();" });
    expect(r.trace.filter((s) => s.decision !== "skipped").map((s) => s.strategy)).toEqual(["multi-occurrence"]);
  });
});

describe("already applied", () => {
  test("old_string nowhere and new_string exactly once", () => {
    const r = expectNotApplied("a\nconst limit = 2;\nc\n", "const limit = 1;", "const limit = 2;");
    expect(r).toMatchObject({ kind: "not-found", alreadyApplied: { line: 2 } });
  });
  test("not when new_string is too short to be evidence, or occurs inside a longer identifier", () => {
    // Regression: new_string "x" occurs once by chance (in "export") — that is no sign of an applied edit.
    expect(run("export const a = 1;\n", 'return { kind: "nothing" };', "x")).not.toHaveProperty("alreadyApplied");
    expect(run("a\nb2();\nc\n", "b1();", "b2();")).not.toHaveProperty("alreadyApplied");
    expect(run("myconst limit = 2;\n", "const limit = 1;", "const limit = 2;")).not.toHaveProperty("alreadyApplied");
  });
  test("not when new_string occurs twice, is blank, or is part of old_string", () => {
    expect(run("b2\nb2\n", "b1", "b2")).not.toHaveProperty("alreadyApplied");
    expect(run("a\n\nb\n", "zz", "\n")).not.toHaveProperty("alreadyApplied");
    expect(run("foo\n", "foo(1)", "foo")).not.toHaveProperty("alreadyApplied");
  });
});

describe("near-miss", () => {
  const lines = filler(200);
  lines[142] = "\tconst budget = compute(a,b);";
  const file = lines.join("\n") + "\n";
  test("a whitespace-only difference names the line, column and both texts", () => {
    const r = expectNotApplied(file, "    const budget = compute(a, b);", "    const budget = 0;");
    if (r.kind !== "not-found") throw new Error(r.kind);
    expect(r.nearMiss).toMatchObject({
      startLine: 143, endLine: 143, line: 143, column: 1,
      expected: "    const budget = compute(a, b);", actual: "\tconst budget = compute(a,b);", whitespaceOnly: true,
    });
  });
  test("the first differing line of a multi-line quote, and the column where it differs", () => {
    const old = [lines[11], "const line12 = 21;"].join("\n");
    const r = run(file, old, old.replace("21", "22"));
    if (r.kind !== "not-found") throw new Error(r.kind);
    expect(r.nearMiss).toMatchObject({ startLine: 12, endLine: 13, line: 13, column: 16, whitespaceOnly: false, expected: "const line12 = 21;", actual: "const line12 = 12;" });
  });
  test("a block whose misquoted line the model changes is refused with that line as the near-miss", () => {
    const old = [lines[10], lines[11], "const line12 = 21;", lines[13]].join("\n");
    const r = run(file, old, old.replace("21", "22"));
    expect(r).toMatchObject({ kind: "refused", doubt: "changed-line-differs", nearMiss: { startLine: 11, endLine: 14, line: 13, column: 16 } });
  });
  test("a line differing in content is found by similarity when no line agrees", () => {
    const r = run(file, "const line77 = 777;", "x");
    if (r.kind !== "not-found") throw new Error(r.kind);
    expect(r.nearMiss).toMatchObject({ line: 78, actual: "const line77 = 77;", whitespaceOnly: false });
  });
  test("nothing like old_string: no near-miss rather than a random one", () => {
    const r = run(file, "zzz qqq www\nppp ooo", "x");
    expect(r).toEqual({ kind: "not-found", trace: expect.any(Array) });
  });
});

describe("doubtful candidates are refused", () => {
  const block = (a: string, b: string) => `open() {\n  ${a}\n  ${b}\n  finish();\n}`;
  test("the model changes a line it misquoted: refused, pointing at that line", () => {
    const file = ["function total(items) {", "  let sum = 0;", "  for (const item of items) {", "    sum += item.price;", "  }", "  return sum;", "}", ""].join("\n");
    const quoted = file.replace("item.price", "item.cost").trimEnd();
    const r = expectNotApplied(file, quoted, quoted.replace("item.cost;", "item.cost * 2;"));
    expect(r).toMatchObject({ kind: "refused", reason: "doubtful", doubt: "changed-line-differs", strategy: "block-anchor", line: 4 });
    if (r.kind === "refused") expect(r.nearMiss).toMatchObject({ line: 4, expected: "    sum += item.cost;", actual: "    sum += item.price;" });
  });
  test("the change would swallow a file line the model never quoted", () => {
    const file = "function f() {\n  a();\n  b();\n  X();\n  c();\n  d();\n}\n";
    const r = run(file, "function f() {\n  a();\n  b();\n  c();\n  d();\n}", "function f() {\n  a();\n  e();\n  d();\n}");
    expect(r).toMatchObject({ kind: "refused", reason: "doubtful", doubt: "unquoted-line", strategy: "block-anchor" });
  });
  test("…while a change beside the unquoted line keeps it", () => {
    const file = "function f() {\n  a();\n  b();\n  X();\n  c();\n  d();\n}\n";
    expectApplied(file, "function f() {\n  a();\n  b();\n  c();\n  d();\n}", "function f() {\n  a2();\n  b();\n  c();\n  d();\n}", file.replace("a()", "a2()"), "block-anchor");
  });
  test("a passing block whose anchors also bound another passing block is refused", () => {
    const file = `${block("alpha(1);", "beta(2);")}\n\n${block("alpine(7);", "betas(9);")}\n`;
    const r = run(file, block("alpha(1);", "beta(3);"), block("alpha(1);", "beta(4);"));
    expect(r).toMatchObject({ kind: "refused", reason: "doubtful", doubt: "rival-block", strategy: "block-anchor" });
  });
  test("a rival just below the threshold and within the margin makes the best doubtful", () => {
    const file = `${block("fetchUser(id);", "draw(view);")}\n\n${block("getUser(uid);", "draw(view);")}\n`;
    const r = run(file, block("fetchUsr(idx);", "rendr(vw);"), block("fetchUsr(idx);", "render(vw);"));
    expect(r).toMatchObject({ kind: "refused", reason: "doubtful", doubt: "close-scores", strategy: "block-anchor" });
    if (r.kind !== "refused" || r.reason !== "doubtful") return;
    expect(r.candidates.map((c) => c.startLine)).toEqual([1, 7]);
    expect(r.candidates[0]!.score).toBeGreaterThanOrEqual(0.65);
    expect(r.candidates[1]!.score).toBeLessThan(0.65);
    expect(r.nearMiss).toMatchObject({ startLine: 1, line: 2 });
  });
});

describe("strict", () => {
  test("only exact matching: a whitespace drift is not found, and the trace says why", () => {
    const r = expectNotApplied("\tfoo();\n", "    foo();", "    bar();", { strict: true });
    expect(r.kind).toBe("not-found");
    const skipped = r.trace.filter((s) => s.decision === "skipped").map((s) => s.strategy);
    expect(skipped).toEqual(["trailing-whitespace", "indentation-flexible", "whitespace-normalized", "escape-normalized", "trimmed-boundary", "block-anchor", "context-aware", "multi-occurrence"]);
  });
  test("exact matches still apply", () => {
    expectApplied("\tfoo();\n", "\tfoo();", "\tbar();", "\tbar();\n", "exact", { strict: true });
  });
});

describe("trace", () => {
  test("every strategy tried, in order, up to the one taken, with line ranges and scores", () => {
    const file = ["function total(items) {", "  let sum = 0;", "  for (const item of items) {", "    sum += item.price;", "  }", "  return sum;", "}", ""].join("\n");
    const quoted = file.replace("item.price", "item.cost").trimEnd();
    const r = run(file, quoted, quoted.replace("return sum", "return 0"));
    expect(r.trace.map((s) => [s.strategy, s.decision])).toEqual([
      ["exact", "no-match"], ["trailing-whitespace", "no-match"], ["indentation-flexible", "no-match"], ["whitespace-normalized", "no-match"],
      ["escape-normalized", "no-match"], ["trimmed-boundary", "no-match"], ["block-anchor", "taken"],
    ]);
    const taken = r.trace[6]!;
    expect(taken.candidates[0]).toMatchObject({ startLine: 1, endLine: 7, accepted: true });
    expect(taken.candidates[0]!.score).toBeGreaterThan(0.9);
    expect(taken.reason).toContain("lines 1–7");
    for (const step of r.trace) expect(step.reason.length).toBeGreaterThan(0);
  });
});

describe("result lines", () => {
  test("matched and written ranges of the first edit", () => {
    const r = expectApplied("a\nb\nc\nd\n", "b\nc\n", "B\nB2\nC\n", "a\nB\nB2\nC\nd\n", "exact");
    expect(r.matched).toEqual({ startLine: 2, endLine: 3 });
    expect(r.written).toEqual({ startLine: 2, endLine: 4 });
  });
  test("a deletion is written as a one-line region", () => {
    const r = expectApplied("a\nb\nc\n", "b\n", "", "a\nc\n", "exact");
    expect(r.written).toEqual({ startLine: 2, endLine: 2 });
  });
  test("an empty old_string is never matched", () => {
    expect(run("abc", "", "x").kind).toBe("not-found");
  });
});
