// "Change only what the model meant to change": indentation, spacing and characters of the
// file survive wherever the model did not change them.
import { describe, expect, test } from "bun:test";
import { detectUnit, merge, mergeLoose, reindent } from "../../src/replacer/_merge.ts";
import { lineAt, lineOfOffset, lineStarts, rangeOfSpan } from "../../src/replacer/index.ts";
import { expectApplied } from "./_helpers.ts";

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
