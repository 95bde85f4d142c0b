// Regressions named after the wrong edits other tools are known for. Each pins the behaviour
// that prevents it.
import { describe, expect, test } from "bun:test";
import { expectApplied, expectNotApplied, run } from "./_helpers.ts";

const fn = [
  "export function settle(order) {",
  "  const total = order.items.reduce((s, i) => s + i.price, 0);",
  "  if (total > order.limit) throw new Error(\"over limit\");",
  "  order.status = \"settled\";",
  "  return total;",
  "}",
  "",
  "export function cancel(order) {",
  "  order.status = \"cancelled\";",
  "  return 0;",
  "}",
  "",
].join("\n");

describe("regressions", () => {
  test("single-candidate block anchor with garbage middle (threshold 0 for one candidate) is never applied", () => {
    const old = "export function settle(order) {\n  // TODO: whatever was here\n  ...\n  (rest of the body)\n  ...\n}";
    const r = expectNotApplied(fn, old, "export function settle(order) {\n  return 0;\n}");
    expect(r.kind).toBe("not-found");
    const step = r.trace.find((s) => s.strategy === "block-anchor")!;
    expect(step.decision).toBe("no-match");
    expect(step.candidates[0]).toMatchObject({ startLine: 1, endLine: 6, accepted: false });
  });

  test("anchors-only old_string (first and last line, nothing between) is never applied", () => {
    expectNotApplied(fn, "export function settle(order) {\n}", "export function settle(order) {\n  return 1;\n}");
    expectNotApplied(fn, "export function settle(order) {\n\n}", "export function settle(order) {\n  return 1;\n}");
    expectNotApplied(fn, "export function settle(order) {\n\n\n\n}", "export function settle(order) {\n  return 1;\n}");
  });

  test("blank anchor lines anchor nothing", () => {
    const old = "\n  const zz = compute(order);\n  order.status = \"settled\";\n  return zz;\n\n";
    const r = expectNotApplied(fn, old, old.replace("zz;", "zz + 1;"));
    expect(r.trace.find((s) => s.strategy === "block-anchor")!.reason).toContain("blank");
  });

  test("a fuzzy match does not bypass uniqueness: two trimmed matches are ambiguous, not the first", () => {
    const file = "function a() {\n    order.status = \"x\";\n}\nfunction b() {\n\torder.status = \"x\";\n}\n";
    const r = run(file, "order.status = \"x\"; ", "order.status = \"y\"; ");
    expect(r).toMatchObject({ kind: "ambiguous", strategy: "indentation-flexible", lines: [2, 5] });
  });

  test("over-escaped new_string is unescaped, not inserted with literal \\n", () => {
    const r = expectApplied(
      fn,
      "  order.status = \\\"settled\\\";\\n  return total;",
      "  order.status = \\\"settled\\\";\\n  audit(order);\\n  return total;",
      fn.replace("  return total;", "  audit(order);\n  return total;"),
      "escape-normalized",
    );
    expect(r.newContent).not.toContain("\\n");
  });

  test("a fuzzy match never writes back a normalized copy of the file", () => {
    const file = "title = “Intro”;\nsub = ‘a’ – ‘b’;\n\tindented  twice  spaced;\nbody = “Text”;\n";
    const r = expectApplied(file, 'body = "Text";', 'body = "Text!";', file.replace("“Text”", "“Text!”"), "escape-normalized");
    expect(r.edits).toHaveLength(1);
    expect(r.edits[0]!.start).toBe(file.indexOf("body"));
  });

  test("a whitespace-only drift wins over a block anchor elsewhere (block anchor runs late)", () => {
    const file = [
      "run() {", "  step(1);", "  step(2);", "}", "",
      "run() {", "\tstep(1);", "\tstep(3);", "}", "",
    ].join("\n");
    expectApplied(file, "run() {\n    step(1);\n    step(3);\n}", "run() {\n    step(1);\n    step(4);\n}", file.replace("\tstep(3);", "\tstep(4);"), "indentation-flexible");
  });

  test("replace_all never falls back to a fuzzy mass replace", () => {
    const file = "\tlog(a);\n\tlog(b);\n";
    const r = expectNotApplied(file, "    log(a);", "    log(c);", { replaceAll: true });
    expect(r.kind).toBe("not-found");
  });

  test("the span replaced is the span matched, never a re-search for the matched text", () => {
    // The matched line's text also occurs earlier inside a longer line: that one must stay.
    expectApplied("x = go();\n\ngo();\n", "go(); ", "stop(); ", "x = go();\n\nstop();\n", "trailing-whitespace");
    // A trimmed core occurring twice is ambiguous, not "the first one".
    expect(run("x = go();\n\ngo();\n", "\n\n\ngo();\n", "\n\n\nstop();\n")).toMatchObject({ kind: "ambiguous", strategy: "trimmed-boundary", lines: [1, 3] });
  });

  test("fuzzy rewrites keep the file's stray carriage returns (mixed line endings)", () => {
    expectApplied("a();\r\nb();\r\nc();\n", "a();\nb();", "a();\nB();", "a();\r\nB();\r\nc();\n", "trailing-whitespace");
  });

  test("an unrelated old_string gets no near-miss pointing at a random line", () => {
    const r = run(fn, "SELECT * FROM users WHERE id = 1;", "x");
    expect(r).toEqual({ kind: "not-found", trace: expect.any(Array) });
  });

  test("a model's line it kept but misquoted is written as the file has it, never as quoted", () => {
    const quoted = fn.split("\n").slice(0, 6).join("\n").replace("over limit", "too much");
    const r = expectApplied(fn, quoted, quoted.replace("return total;", "return round(total);"), fn.replace("return total;", "return round(total);"), "block-anchor");
    expect(r.newContent).toContain("over limit");
  });

  test("dropping boundary whitespace never glues the text onto a neighbouring token (\"      ? {}\" inside \"shape ?? {}\")", () => {
    const file = "        shape: shape ?? {},\n        rest: 1,\n";
    expectNotApplied(file, "      ? {}", "replaced();");
    expectApplied("a ? {}\n", "      ? {}", "      ? []", "a ? []\n", "whitespace-normalized");
  });

  test("a change to one of two identical lines lands on the one in the model's position", () => {
    const file = "function f() {\n    if (a) {\n        go();\n    }\n}\n";
    // Dedented quote: its last two lines are both "}" for the model, "    }" and "}" in the file.
    expectApplied(file, "    go();\n}\n}", "    go();\n}/*kt*/\n}", "function f() {\n    if (a) {\n        go();\n    }/*kt*/\n}\n", "indentation-flexible");
  });

  test("a final line of spaces in old_string is the next line's indentation, not a line to match", () => {
    const file = "a = {\n  b: 1,\n};\n\nnext();\n";
    expectApplied(file, "  b:  1,\n};\n  ", "  b:  2,\n};\n  ", "a = {\n  b: 2,\n};\n\nnext();\n", "whitespace-normalized");
  });
  test("two blocks that overlap but start at different anchors, scoring alike, are ambiguous, not the first (picomatch parse.js)", () => {
    const file = "}\n\nif (p) {\n  v = 1;\n}\n\nif (q) {\n  v = 1;\n}\n\nend();\n";
    const r = run(file, "}\n\nif (Q) {\n  v = 1;\n}", "}\n\nif (Q) {\n  v = 2;\n}");
    expect(r.kind).toBe("ambiguous");
    if (r.kind === "ambiguous") expect(r.lines).toEqual([1, 5]);
  });
});

