// The diff of a patched file's spans (src/patch/diff.ts) answers as diffArrays does: its
// shortcut, taken when the shortest edit is certain, must give the very parts Myers gives,
// on random spans over small alphabets (many repeated lines, where a wrong shortcut shows).
import { describe, expect, test } from "bun:test";
import { diffArrays } from "diff";
import { spanParts } from "../src/patch/diff.ts";
import { mulberry32 } from "../bench/_random.ts";

const shape = (parts: readonly { value: readonly string[]; added?: boolean; removed?: boolean }[]) =>
  parts.filter((p) => p.value.length > 0).map((p) => `${p.added ? "+" : p.removed ? "-" : "="}${p.value.join("|")}`);

describe("spanParts", () => {
  test("agrees with diffArrays on 50,000 random spans", () => {
    const r = mulberry32(7);
    for (let t = 0; t < 50_000; t++) {
      const k = 2 + Math.floor(r() * 6);
      const a = Array.from({ length: Math.floor(r() * 10) }, () => `l${Math.floor(r() * k)}`);
      const b = Array.from({ length: Math.floor(r() * 10) }, () => `l${Math.floor(r() * k)}`);
      const want = shape(diffArrays(a, b));
      const got = shape(spanParts(a, b));
      if (got.join("\n") !== want.join("\n")) expect({ a, b, got }).toEqual({ a, b, got: want });
    }
  });

  test("a hunk's usual span: context, removed, added, context", () => {
    const a = ["c1", "c2", "c3", "old1", "old2", "c4", "c5", "c6"];
    const b = ["c1", "c2", "c3", "new1", "new2", "new3", "c4", "c5", "c6"];
    expect(shape(spanParts(a, b))).toEqual(shape(diffArrays(a, b)));
    expect(shape(spanParts(a, b))).toEqual(["=c1|c2|c3", "-old1|old2", "+new1|new2|new3", "=c4|c5|c6"]);
  });

  test("an added line equal to a line of the common end: the shortcut is not taken, Myers decides", () => {
    // Trimming the common end first would say "+x +b =b"; Myers says "+x =b +b".
    expect(shape(spanParts(["b"], ["x", "b", "b"]))).toEqual(shape(diffArrays(["b"], ["x", "b", "b"])));
    expect(shape(spanParts(["b"], ["x", "b", "b"]))).toEqual(["+x", "=b", "+b"]);
    expect(shape(spanParts(["}", ""], ["}", "", "f() {", "}", ""]))).toEqual(shape(diffArrays(["}", ""], ["}", "", "f() {", "}", ""])));
  });
});
