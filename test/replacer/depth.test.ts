// Guessed depth (SPEC §8.3): an inserted line whose depth the quote does not give is placed by the
// blank lines around it and reported, so the model can check it; a depth the quote gives is not.
import { describe, expect, test } from "bun:test";
import { run } from "./_helpers.ts";

const file = "def f(xs):\n    for x in xs:\n        if x:\n            a(x)\n\n    return xs\n";
const old = "if x:\na(x)\n\nreturn xs";

describe("guessed depth", () => {
  test("straight after a block's last line, before the blank line closing it: the block's depth", () => {
    const r = run(file, old, "if x:\na(x)\nb(x)\n\nreturn xs");
    expect(r.kind === "ok" && r.newContent).toBe(file.replace("a(x)\n", "a(x)\n            b(x)\n"));
    expect(r.kind === "ok" && r.guessed).toEqual([{ line: 5, lead: "            ", like: 4 }]);
  });

  test("straight before a line, after the blank one: that line's depth", () => {
    const r = run(file, old, "if x:\na(x)\n\nb(x)\nreturn xs");
    expect(r.kind === "ok" && r.newContent).toBe(file.replace("\n    return", "\n    b(x)\n    return"));
    expect(r.kind === "ok" && r.guessed).toEqual([{ line: 6, lead: "    ", like: 7 }]);
  });

  test("between two lines with no blank either side: the following line's depth, said", () => {
    const tight = "def f(xs):\n    for x in xs:\n        a(x)\n    return xs\n";
    const r = run(tight, "for x in xs:\na(x)\nreturn xs", "for x in xs:\na(x)\nb(x)\nreturn xs");
    expect(r.kind === "ok" && r.newContent).toBe(tight.replace("a(x)\n", "a(x)\n    b(x)\n"));
    expect(r.kind === "ok" && r.guessed?.map((g) => g.line)).toEqual([4]);
  });

  test("after a block opener both readings land in its body: no guess to report", () => {
    const r = run(file, "if x:\na(x)", "if x:\nb(x)\na(x)");
    expect(r.kind === "ok" && r.newContent).toBe(file.replace("if x:\n", "if x:\n            b(x)\n"));
    expect(r.kind === "ok" && r.guessed).toBeUndefined();
  });

  test("a depth the quote gives (indentation shifted, not stripped) is not reported", () => {
    const r = run(file, "    if x:\n        a(x)\n\nreturn xs", "    if x:\n        a(x)\n        b(x)\n\nreturn xs");
    expect(r.kind === "ok" && r.newContent).toBe(file.replace("a(x)\n", "a(x)\n            b(x)\n"));
    expect(r.kind === "ok" && r.guessed).toBeUndefined();
  });

  test("neighbours at one depth: nothing to guess", () => {
    const flat = "def f():\n    a()\n\n    c()\n";
    const r = run(flat, "a()\n\nc()", "a()\nb()\n\nc()");
    expect(r.kind === "ok" && r.newContent).toBe("def f():\n    a()\n    b()\n\n    c()\n");
    expect(r.kind === "ok" && r.guessed).toBeUndefined();
  });
});

// Issue 26's slip: old_string quoted without its indentation, new_string written with the file's.
describe("new_string in another indentation than old_string's quote", () => {
  const fn = "def g():\n    x = f(a,\n          b)\n    return x\n";

  test("with the file's own: the continuation line stays where the file has it", () => {
    const r = run(fn, "x = f(a,\nb)\nreturn x", "    x = f(a, c,\n          b)\n    return x");
    expect(r.kind === "ok" && r.newContent).toBe("def g():\n    x = f(a, c,\n          b)\n    return x\n");
  });

  test("with the file's, a line moved deeper on purpose keeps its depth", () => {
    const flat = "def g():\n    x = f(a)\n    return x\n";
    const r = run(flat, "x = f(a)\nreturn x", "    if c:\n        x = f(a)\n    return x");
    expect(r.kind === "ok" && r.newContent).toBe("def g():\n    if c:\n        x = f(a)\n    return x\n");
  });

  test("must not read it so: a new opener at the quote's depth nests the quote (relative, as before)", () => {
    const deep = "def g():\n    if a:\n        x = f(a)\n        return x\n";
    const r = run(deep, "x = f(a)\nreturn x", "if c:\n    x = f(a)\n    return x");
    expect(r.kind === "ok" && r.newContent).toBe("def g():\n    if a:\n        if c:\n            x = f(a)\n            return x\n");
  });

  test("must not read it so: new_string keeping old_string's own indentation on a kept line", () => {
    // Line 2 kept at the quote's depth: the model writes in the quote's style, so line 1's extra
    // indentation is its own change, relative to the quote.
    const flat = "def g():\n    x = f(a)\n    y = 1\n    return x\n";
    const r = run(flat, "x = f(a)\ny = 1\nreturn x", "    x = f(a)\ny = 1\nreturn x");
    expect(r.kind === "ok" && r.newContent).toBe("def g():\n        x = f(a)\n    y = 1\n    return x\n");
  });

  test("tabs for the file's spaces, old_string unindented: the file's depths", () => {
    const r = run(fn, "x = f(a,\nb)\nreturn x", "\tx = f(a, c,\n\t\t  b)\n\treturn x");
    expect(r.kind === "ok" && r.newContent).toBe("def g():\n    x = f(a, c,\n          b)\n    return x\n");
  });
});

test("deleting one of two lines quoted alike while rewriting the other is refused, not guessed", () => {
  // Which "}" the model dropped cannot be told from an unindented quote: the file has them at two depths.
  const go = "func f() {\n\tfor {\n\t\tif ok {\n\t\t\tg()\n\t\t\t}\n\t\t}\n\t\tif err != nil {\n\t\t\treturn\n\t\t}\n\t}\n}\n";
  const r = run(go, "}\n}\nif err != nil {\nreturn\n}\n}", "  \t\t}\n  \t\tif err != nil {\n  \t\t\treturn\n  \t\t}\n  \t}");
  expect(r.kind).not.toBe("ok");
});
