// "Change only what the model meant to change": indentation, spacing and characters of the
// file survive wherever the model did not change them.
import { describe, expect, test } from "bun:test";
import { detectUnit, merge, mergeLoose, reindent } from "../../src/replacer/_merge.ts";
import { lineAt, lineOfOffset, lineStarts, rangeOfSpan } from "../../src/replacer/index.ts";
import { expectApplied, expectNotApplied } from "./_helpers.ts";

const units = (model: string[], file: string[]) => ({ model: detectUnit(model), file: detectUnit(file) });

describe("indentation", () => {
  test("units: tabs, and the commonest step between space indentations", () => {
    expect(detectUnit(["\ta", "\t\tb"])).toEqual({ tabs: true, width: 4 });
    expect(detectUnit(["a", "    b", "        c", "    d"])).toEqual({ tabs: false, width: 4 });
    expect(detectUnit(["a", "  b", "    c", "   * doc"])).toEqual({ tabs: false, width: 2 });
  });
  test("a deeper line in the model's 4 spaces becomes one more tab in the file", () => {
    const u = units(["    a", "        b"], ["\ta", "\t\tb"]);
    expect(reindent("            ", "        ", "\t\t", u)).toBe("\t\t\t");
    expect(reindent("    ", "        ", "\t\t", u)).toBe("\t");
  });
  test("a model at 4-space levels writing into a 2-space file keeps levels, not columns", () => {
    const u = units(["    a", "        b", "            c"], ["  a", "    b", "      c"]);
    expect(reindent("            ", "        ", "    ", u)).toBe("      ");
  });
  test("same units: the model's extra indentation is appended verbatim", () => {
    const u = units(["  a", "    b"], ["      a", "        b"]);
    expect(reindent("      ", "    ", "        ", u)).toBe("          ");
  });
});

describe("merge", () => {
  test("kept lines are the file's, changed lines get the file's indentation and trailing space", () => {
    expect(mergeLoose("\tone;  \n\ttwo;\n", "  one;\n  two;\n", "  one;\n  TWO;\n")).toBe("\tone;  \n\tTWO;\n");
  });
  test("a changed line keeps the file's inner spacing where the model kept the text", () => {
    expect(mergeLoose("x  =  f(a,   b);", "x = f(a, b);", "x = f(a, b, c);")).toBe("x  =  f(a,   b, c);");
  });
  test("a line the model mostly rewrote is its own text", () => {
    expect(mergeLoose("a  =  b;", "a = b;", "ktProbe(42);")).toBe("ktProbe(42);");
  });
  test("deleted lines go, inserted lines land where the model put them", () => {
    expect(mergeLoose("\ta();\n\tb();\n\tc();", "a();\nb();\nc();", "a();\nnew1();\nc();\nnew2();")).toBe("\ta();\n\tnew1();\n\tc();\n\tnew2();");
  });
  test("a deletion of everything leaves nothing, and the trailing newline follows the model", () => {
    expect(mergeLoose("\ta();\n\tb();\n", "a();\nb();\n", "")).toBe("");
    expect(mergeLoose("\ta();\n", "a();\n", "a();\nb();\n")).toBe("\ta();\n\tb();\n");
  });
  test("guarded: a changed line the file has differently is a doubt, not an edit", () => {
    const r = merge({ file: "a();\nb(1);\nc();", old: "a();\nb(2);\nc();", neu: "a();\nb(3);\nc();", guard: true });
    expect(r).toMatchObject({ doubt: "changed-line-differs", fileLine: 1, expected: "b(2);", actual: "b(1);" });
  });
  test("guarded: a kept misquoted line is the file's own", () => {
    const r = merge({ file: "a();\nb(1);\nc();", old: "a();\nb(2);\nc();", neu: "A();\nb(2);\nc();", guard: true });
    expect(r).toEqual({ text: "A();\nb(1);\nc();" });
  });
  test("new lines in a block re-indented from spaces to the file's tabs, end to end", () => {
    const file = "class K {\n\trun() {\n\t\tstart();\n\t\tstop();\n\t}\n}\n";
    expectApplied(
      file,
      "    run() {\n        start();\n        stop();\n    }",
      "    run() {\n        start();\n        if (ok) {\n            wait();\n        }\n        stop();\n    }",
      "class K {\n\trun() {\n\t\tstart();\n\t\tif (ok) {\n\t\t\twait();\n\t\t}\n\t\tstop();\n\t}\n}\n",
      "indentation-flexible",
    );
  });
});

describe("new lines, SPEC §4.3 as amended", () => {
  test("without indentation drift, new lines keep new_string's indentation exactly (a typo elsewhere matched)", () => {
    const file = "def f(a):\n    if a:\n        go(a)\n    stop(a)\n    done()\n";
    expectApplied(
      file,
      "def f(a):\n    if a:\n        og(a)\n    stop(a)\n    done()",
      "def f(a):\n    if a:\n        og(a)\n      weird(a)\n    stop(a)\n    done()",
      "def f(a):\n    if a:\n        go(a)\n      weird(a)\n    stop(a)\n    done()\n",
      "block-anchor",
    );
  });
  test("all indentation stripped: an inserted line takes the following line's indentation", () => {
    const file = "def f(a):\n    if a:\n        go(a)\n    stop(a)\n";
    expectApplied(file, "go(a)\nstop(a)", "go(a)\nlog(a)\nstop(a)", "def f(a):\n    if a:\n        go(a)\n    log(a)\n    stop(a)\n", "indentation-flexible");
  });
  test("never at or left of a block opener above it: the file's block body decides", () => {
    const file = "def f(a):\n    if a:\n        go(a)\n    stop(a)\n";
    expectApplied(file, "if a:\ngo(a)", "if a:\nlog(a)\ngo(a)", "def f(a):\n    if a:\n        log(a)\n        go(a)\n    stop(a)\n", "indentation-flexible");
    // After the quote's last line, an opener: the file's next line is its body.
    const after = "def f(a):\n    stop(a)\n    if a:\n        go(a)\n";
    expectApplied(after, "stop(a)\nif a:", "stop(a)\nif a:\nlog(a)", "def f(a):\n    stop(a)\n    if a:\n        log(a)\n        go(a)\n", "indentation-flexible");
  });
  test("a block the model opens itself gets one more level for its body", () => {
    const file = "def f(a):\n    go(a)\n    stop(a)\n";
    expectApplied(file, "go(a)\nstop(a)", "go(a)\nif a:\nlog(a)\nstop(a)", "def f(a):\n    go(a)\n    if a:\n        log(a)\n    stop(a)\n", "indentation-flexible");
  });
  test("a YAML key ending in a colon whose file has no deeper body is no opener to push past", () => {
    const file = "root:\n  items:\n  - a\n  - b\n";
    expectApplied(file, "items:\n- a", "items:\n- z\n- a", "root:\n  items:\n  - z\n  - a\n  - b\n", "indentation-flexible");
  });
  test("the model's stray trailing whitespace is not written on new or changed lines", () => {
    expectApplied("a = 1\nb = 2\n", "a = 1 \nb = 2", "a = 1 \nx = 0  \nb = 3 ", "a = 1\nx = 0\nb = 3\n", "trailing-whitespace");
  });
  test("deleting one of two lines quoted alike that the file indents differently is refused, not guessed", () => {
    const file = "if (a) {\n  if (b) {\n    go();\n  }\n}\nend();\n";
    const r = expectNotApplied(file, "go();\n}\n}\nend();", "go();\n}\nend();");
    expect(r).toMatchObject({ kind: "refused", reason: "doubtful", doubt: "indistinct-lines" });
  });
});

describe("lines helper", () => {
  test("line numbers of offsets", () => {
    const text = "ab\ncd\n\nef";
    const starts = lineStarts(text);
    expect([...starts]).toEqual([0, 3, 6, 7]);
    expect([0, 2, 3, 5, 6, 7, 9].map((o) => lineOfOffset(starts, o))).toEqual([1, 1, 2, 2, 3, 4, 4]);
    expect(lineAt(text, 7)).toBe(4);
    expect(rangeOfSpan(starts, 3, 6)).toEqual({ startLine: 2, endLine: 2 });
    expect(rangeOfSpan(starts, 0, 8)).toEqual({ startLine: 1, endLine: 4 });
    expect(rangeOfSpan(starts, 4, 4)).toEqual({ startLine: 2, endLine: 2 });
  });
});
