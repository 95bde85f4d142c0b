// Each strategy: one quote it must accept (producing exactly the intended file through the
// cascade) and one it must refuse (checked on the strategy alone).
import { describe, expect, test } from "bun:test";
import {
  CASCADE, Haystack, blockAnchor, contextAware, escapeNormalized, exact, indentationFlexible, lineTrimmed,
  multiOccurrence, trailingWhitespace, trimmedBoundary, whitespaceNormalized,
} from "../../src/replacer/index.ts";
import type { StrategyName } from "../../src/replacer/index.ts";
import { expectApplied, expectNotApplied, run } from "./_helpers.ts";

const find = (strategy: { find: (h: Haystack, f: string) => { matches: unknown[] } }, content: string, f: string) =>
  strategy.find(new Haystack(content), f).matches.length;

describe("1 exact", () => {
  test("replaces a verbatim occurrence with new_string as given", () => {
    expectApplied("a\nb\nc\n", "b", "B  \n", "a\nB  \n\nc\n", "exact");
  });
  test("does not match text that differs in one character", () => {
    expect(find(exact, "a\nb\nc\n", "B")).toBe(0);
  });
});

describe("2 trailing-whitespace", () => {
  const file = "def f(x):\n    if x:\n        return 1\n    return 2\n";
  test("matches lines quoted with trailing spaces; the model's stray trailing spaces are not written", () => {
    expectApplied(
      file,
      "    if x:  \n        return 1 ",
      "    if x:  \n        log(x)  \n        return 3 ",
      "def f(x):\n    if x:\n        log(x)\n        return 3\n    return 2\n",
      "trailing-whitespace",
    );
  });
  test("does not match a line indented differently", () => {
    expect(find(trailingWhitespace, file, "if x:  \n        return 1")).toBe(0);
    expect(find(indentationFlexible, file, "if x:  \n        return 1")).toBe(1);
  });
  test("the stricter tier wins: one place differs in trailing whitespace only, another in indentation too", () => {
    const two = "a:\n    go()\nb:\n        go()\n";
    expectApplied(two, "    go()  ", "    stop()", "a:\n    stop()\nb:\n        go()\n", "trailing-whitespace");
  });
});

describe("3 indentation-flexible", () => {
  const file = "class A {\n\tm() {\n\t\tif (x) {\n\t\t\treturn 1;  \n\t\t}\n\t}\n}\n";
  test("matches lines quoted at another indentation; kept lines stay the file's, new ones take its tabs", () => {
    expectApplied(
      file,
      "        if (x) {\n            return 1;\n        }",
      "        if (x) {\n            log(x);\n            return 2;\n        }",
      "class A {\n\tm() {\n\t\tif (x) {\n\t\t\tlog(x);\n\t\t\treturn 2;  \n\t\t}\n\t}\n}\n",
      "indentation-flexible",
    );
  });
  test("does not match when a line differs inside, not only at its ends", () => {
    expect(find(lineTrimmed, file, "        if (x)  {\n            return 1;")).toBe(0);
  });
});

describe("4 whitespace-normalized", () => {
  const file = "const table = {\n  alpha:   1,\n  beta:    2,\n  gamma:   3,\n};\n";
  test("matches collapsed spacing and keeps the file's spacing in what the model did not change", () => {
    expectApplied(file, "  alpha: 1,\n  beta: 2,", "  alpha: 1,\n  beta: 20,", "const table = {\n  alpha:   1,\n  beta:    20,\n  gamma:   3,\n};\n", "whitespace-normalized");
  });
  test("matches across a different line break and then writes the model's text for the span", () => {
    expectApplied("call(a,\n     b);\nnext();\n", "call(a, b);", "call(a, c);", "call(a, c);\nnext();\n", "whitespace-normalized");
  });
  test("does not match where the file has whitespace and old_string has none", () => {
    expect(find(whitespaceNormalized, file, "alpha:1,")).toBe(0);
  });
  test("needs a non-space token", () => {
    expect(find(whitespaceNormalized, file, " \n\t ")).toBe(0);
  });
});

describe("3 indentation-flexible, a block at the wrong depth", () => {
  const file = "start();\n  if (a) {\n    b();\n  }\nend();\n";
  test("matches a block quoted at the wrong depth and rewrites at the file's", () => {
    const hay = new Haystack(file);
    const found = indentationFlexible.find(hay, "if (a) {\n  b();\n}");
    expect(found.matches.map((m) => [m.startLine, m.endLine])).toEqual([[2, 4]]);
    const rw = indentationFlexible.rewrite(hay, found.matches[0]!, "if (a) {\n  b();\n}", "if (a) {\n  b();\n  c();\n}");
    expect(rw).toEqual({ text: "  if (a) {\n    b();\n    c();\n  }" });
    expectApplied(file, "if (a) {\n  b();\n}", "if (a) {\n  b();\n  c();\n}", "start();\n  if (a) {\n    b();\n    c();\n  }\nend();\n", "indentation-flexible");
  });
  test("the first round's export lineTrimmed is this strategy", () => {
    expect(lineTrimmed).toBe(indentationFlexible);
  });
});

describe("5 escape-normalized", () => {
  test("unescapes an over-escaped old_string, and new_string the same way", () => {
    const r = expectApplied(
      'const s = "a";\nconst t = "b";\n',
      'const s = \\"a\\";\\nconst t = \\"b\\";',
      'const s = \\"a\\";\\nconst t = \\"c\\";',
      'const s = "a";\nconst t = "c";\n',
      "escape-normalized",
    );
    expect(r.variant).toBe("unescape");
  });
  test("folds typographic look-alikes; lines the model kept keep the file's curly quotes and dashes", () => {
    const r = expectApplied(
      "say(“Hello — world”);\nsay(“Bye”);\n",
      'say("Hello - world");\nsay("Bye");',
      'say("Hello - world");\nsay("Bye!");',
      "say(“Hello — world”);\nsay(“Bye!”);\n",
      "escape-normalized",
    );
    expect(r.variant).toBe("typographic");
  });
  test("folds curly quotes in old_string onto the file's straight ones", () => {
    expectApplied("x = it's;\n", "x = it’s;", "x = it’s ok;", "x = it's ok;\n", "escape-normalized");
  });
  test("does not match when the unescaped and folded text does not occur", () => {
    expect(find(escapeNormalized, 'const s = "a";\n', 'const s = \\"z\\";')).toBe(0);
    expect(find(escapeNormalized, "say(“Hi”);\n", "say(“Ho”);")).toBe(0);
  });
});

describe("6 trimmed-boundary", () => {
  test("drops the boundary whitespace the file does not have, from both strings", () => {
    expectApplied("foo();\nbar();\n", "\n\nfoo();", "\n\nbaz();", "baz();\nbar();\n", "trimmed-boundary");
  });
  test("never matches whitespace alone, nor a core that does not occur", () => {
    expect(find(trimmedBoundary, "a\n\n  \nb\n", "  \n  ")).toBe(0);
    expect(find(trimmedBoundary, "a\nb\n", "  nope()  ")).toBe(0);
  });
});

describe("7 block-anchor", () => {
  const file = [
    "function total(items) {",
    "  let sum = 0;",
    "  for (const item of items) {",
    "    sum += item.price;",
    "  }",
    "  return sum;",
    "}",
    "",
  ].join("\n");
  const quoted = file.replace("item.price", "item.cost").trimEnd();
  test("matches a block with a misremembered middle line; that line stays the file's", () => {
    const r = expectApplied(
      file,
      quoted,
      quoted.replace("return sum;", "return Math.round(sum);"),
      file.replace("return sum;", "return Math.round(sum);"),
      "block-anchor",
    );
    expect(r.score).toBeGreaterThan(0.9);
  });
  test("does not match when the middle is unrelated to the file's", () => {
    const garbage = "function total(items) {\n  zq.vx = wk(9);\n  yy();\n  if (kk) mm--;\n  pp = [];\n  qq ^= 4;\n}";
    expect(find(blockAnchor, file, garbage)).toBe(0);
    expectNotApplied(file, garbage, garbage.replace("yy", "y2"));
  });
});

describe("8 context-aware", () => {
  const file = ['switch (kind) {', '  case "a":', "    return handleA();", '  case "b":', "    return handleB();", "}", ""].join("\n");
  const quoted = ['switch (kind) {', '  case "a":', "    zz.qq.ww(1, 2, 3, 4, 5, 6);", '  case "b":', "    k9 = [];", "}"].join("\n");
  test("matches when half of the middle lines are the file's; the misquoted ones stay the file's", () => {
    expect(find(blockAnchor, file, quoted)).toBe(0);
    expectApplied(file, quoted, quoted.replace('case "b"', 'case "c"'), file.replace('case "b"', 'case "c"'), "context-aware");
  });
  test("does not match with fewer than half of the middle lines equal", () => {
    const worse = quoted.replace('  case "b":', "  qqq_www:");
    expect(find(contextAware, file, worse)).toBe(0);
  });
});

describe("9 multi-occurrence", () => {
  test("replace_all replaces every exact occurrence with new_string as given", () => {
    const r = expectApplied("foo(1);\nfoo(2);\nbar(foo);\n", "foo", "baz", "baz(1);\nbaz(2);\nbar(baz);\n", "multi-occurrence", { replaceAll: true });
    expect(r.replacements).toBe(3);
  });
  test("replace_all does not count overlapping occurrences twice", () => {
    const r = expectApplied("aaaa\n", "aa", "b", "bb\n", "multi-occurrence", { replaceAll: true });
    expect(r.replacements).toBe(2);
  });
  test("matches nothing but exact text", () => {
    expect(find(multiOccurrence, "\tfoo();\n", "    foo();")).toBe(0);
  });
});

describe("the cascade as amended (SPEC §4.3)", () => {
  test("nine strategies in the contract's order, each one reachable: it decides some quote", () => {
    expect(CASCADE.map((s) => s.name)).toEqual([
      "exact", "trailing-whitespace", "indentation-flexible", "whitespace-normalized", "escape-normalized",
      "trimmed-boundary", "block-anchor", "context-aware", "multi-occurrence",
    ]);
    const file = "function f(a) {\n  const x = \"a\";\n  if (a) {\n    go(a,  1);\n  }\n  const y = `v${a}`;\n  stop(a);\n  done(a);\n  return x;\n}\n";
    const cases: [StrategyName, string, string, boolean?][] = [
      ["exact", "  stop(a);", "  stop(b);"],
      ["trailing-whitespace", "  stop(a);  ", "  stop(b);"],
      ["indentation-flexible", "stop(a);\ndone(a);", "stop(b);\ndone(a);"],
      ["whitespace-normalized", "go(a, 1);", "go(a, 2);"],
      ["escape-normalized", "const y = \\`v\\${a}\\`;", "const y = \\`w\\${a}\\`;"],
      ["trimmed-boundary", "\n\n  return x;\n}\n\n\n", "\n\n  return y;\n}\n\n\n"],
      ["block-anchor", "  if (a) {\n    go(a, 1);\n  }\n  const y = `v${a}`;\n  stpo(a);\n  done(a);", "  if (a) {\n    go(a, 1);\n  }\n  const y = `v${a}`;\n  stpo(a);\n  done(b);"],
      ["context-aware", "  if (a) {\n    go(a,  1);\n  }\n  zq0.vx(0, \"kw0\");\n  zq1.vx(7, \"kw1\");\n  done(a);", "  if (a) {\n    go(a,  1);\n  }\n  zq0.vx(0, \"kw0\");\n  zq1.vx(7, \"kw1\");\n  done(b);"],
      ["multi-occurrence", "(a)", "(b)", true],
    ];
    for (const [strategy, old, neu, all] of cases) {
      const r = run(file, old, neu, { replaceAll: all ?? false });
      expect(r.kind === "ok" ? r.strategy : `${r.kind}`, strategy).toBe(strategy);
    }
  });
});
