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
