// The separator at a mid-line edge of a match (issue 26's wrong edit: `y = a if cond else b`,
// old_string "  cond else b", new_string " flag else b" gave `y = a ifflag else b`). Every strategy
// that can match inside a line, at both edges, with spaces and tabs in the file, in old_string and
// in new_string: the whitespace between the span and the rest of its line is a separator, and the
// result's separator is
//   - the file's plus new_string's, when old_string quoted no separator there (new_string adds one);
//   - new_string's, when old_string quoted the file's separator exactly (its change is meant);
//   - the file's, when old_string quoted it inexactly (the quote's spacing there was a slip).
// So a separator new_string asks for is never dropped, and none is made where the file has one.
import { describe, expect, test } from "bun:test";
import { expectOnlySpansChanged, run } from "./_helpers.ts";
import type { StrategyName } from "../../src/replacer/index.ts";

type Edge = "start" | "end";

/** How each strategy is made to be the one that matches: the body of old_string and new_string around the edge. */
interface Reading {
  strategy: StrategyName;
  variant?: string;
  replaceAll?: boolean;
  /** The quoted text before the edited word (end edge) and after it (start edge), as the model quotes it. */
  before: string;
  after: string;
  /** Separators old_string may quote at the edge (besides none). */
  quoted: (fileSep: string) => string[];
  /** The part of the file's separator the match covers when old_string quotes `oldSep` there. */
  covers: (fileSep: string, oldSep: string) => string;
}

// The file's line: `y = f("a") – 1 if<SEP>cond<SEP>else f("b") – 1` (the en dash gives the typographic fold something to fold).
const BEFORE = 'y = f("a") \u2013 1 if';
const AFTER = 'else f("b") \u2013 1';
const horizontal = (sep: string) => [sep, sep === " " ? "\t" : " ", sep + sep];
/** A reading that compares whitespace exactly quotes part of the file's separator, or all of it. */
const parts = (sep: string) => Array.from({ length: sep.length }, (_, k) => sep.slice(0, k + 1));
const exactly = { quoted: parts, covers: (_: string, oldSep: string) => oldSep };

const READINGS: Reading[] = [
  { strategy: "exact", before: BEFORE, after: AFTER, ...exactly },
  { strategy: "multi-occurrence", replaceAll: true, before: BEFORE, after: AFTER, ...exactly },
  // An extra space inside the quote: equal only once whitespace runs are collapsed.
  { strategy: "whitespace-normalized", before: 'y = f("a")  \u2013 1 if', after: 'else  f("b") \u2013 1', quoted: horizontal, covers: (sep, oldSep) => (oldSep === "" ? "" : sep) },
  // Curly quotes and a hyphen for the file's straight quotes and en dash.
  { strategy: "escape-normalized", variant: "typographic", before: "y = f(\u201ca\u201d) - 1 if", after: "else f(\u201cb\u201d) - 1", ...exactly },
  // Over-escaped quotes; the en dash as the file has it (this reading folds nothing).
  { strategy: "escape-normalized", variant: "unescape", before: 'y = f(\\"a\\") \u2013 1 if', after: 'else f(\\"b\\") \u2013 1', ...exactly },
  { strategy: "escape-normalized", variant: "unescape+typographic", before: 'y = f(\\"a\\") - 1 if', after: 'else f(\\"b\\") - 1', ...exactly },
  // A line break quoted where the file has spaces: only trimming the boundary finds it.
  { strategy: "trimmed-boundary", before: BEFORE, after: AFTER, quoted: () => ["\n", "\n  ", "\n\t"], covers: () => "" },
];

const FILE_SEPS = [" ", "\t", "   "];
const NEW_SEPS = ["", " ", "\t", "  "];

function fileOf(edge: Edge, sep: string): string {
  const line = edge === "start" ? `${BEFORE}${sep}cond ${AFTER}` : `${BEFORE} cond${sep}${AFTER}`;
  return `def g():\n    ${line}\n    return y\n`;
}

/**
 * The separator the result must have at the edge (see the header): the part of the file's the
 * match does not cover stays, on the far side; the covered part is rewritten by the rule.
 */
function expectedSep(edge: Edge, covered: string, fileSep: string, oldSep: string, newSep: string): string {
  const outside = fileSep.slice(covered.length);
  const inside = oldSep === "" ? covered + newSep : oldSep === covered ? newSep : covered;
  return edge === "start" ? outside + inside : inside + outside;
}

interface Case {
  name: string;
  reading: Reading;
  content: string;
  old: string;
  neu: string;
  expected: string;
}

function cases(): Case[] {
  const out: Case[] = [];
  for (const reading of READINGS) {
    for (const edge of ["start", "end"] as const) {
      for (const fileSep of FILE_SEPS) {
        // Quoting no separator is exact text for trimmed-boundary's reading: exact matches it first.
        for (const oldSep of [...(reading.strategy === "trimmed-boundary" ? [] : [""]), ...reading.quoted(fileSep)]) {
          for (const newSep of NEW_SEPS) {
            const content = fileOf(edge, fileSep);
            const old = edge === "start" ? `${oldSep}cond ${reading.after}` : `${reading.before} cond${oldSep}`;
            const neu = edge === "start" ? `${newSep}flag ${reading.after}` : `${reading.before} flag${newSep}`;
            const sep = expectedSep(edge, reading.covers(fileSep, oldSep), fileSep, oldSep, newSep);
            const line = edge === "start" ? `${BEFORE}${sep}flag ${AFTER}` : `${BEFORE} flag${sep}${AFTER}`;
            const expected = `def g():\n    ${line}\n    return y\n`;
            const name = `${reading.strategy}${reading.variant ? `/${reading.variant}` : ""} ${edge} file ${JSON.stringify(fileSep)} old ${JSON.stringify(oldSep)} new ${JSON.stringify(newSep)}`;
            out.push({ name, reading, content, old, neu, expected });
          }
        }
      }
    }
  }
  return out;
}

describe("the separator at a mid-line edge of a match", () => {
  const all = cases();

  test("the reported case: the space new_string asks for is kept", () => {
    const r = run("y = a if cond else b\n", "  cond else b", " flag else b");
    expect(r.kind).toBe("ok");
    if (r.kind !== "ok") return;
    expect(r.strategy).toBe("whitespace-normalized");
    expect(r.newContent).toBe("y = a if flag else b\n");
  });

  test(`every strategy × edge × separator (${all.length} cases): exactly the expected line, by the strategy meant`, () => {
    const wrong: string[] = [];
    const reached = new Map<string, number>();
    for (const c of all) {
      const r = run(c.content, c.old, c.neu, { replaceAll: c.reading.replaceAll ?? false });
      const key = `${c.reading.strategy}${c.reading.variant ? `/${c.reading.variant}` : ""}`;
      if (r.kind !== "ok") {
        wrong.push(`${c.name}: ${r.kind}`);
        continue;
      }
      if (r.strategy !== c.reading.strategy || (c.reading.variant && r.variant !== c.reading.variant)) {
        wrong.push(`${c.name}: matched by ${r.strategy}${r.variant ? `/${r.variant}` : ""}`);
        continue;
      }
      reached.set(key, (reached.get(key) ?? 0) + 1);
      expectOnlySpansChanged(c.content, r);
      if (r.newContent !== c.expected) wrong.push(`${c.name}: wrote ${JSON.stringify(r.newContent.split("\n")[1])}`);
    }
    expect(wrong).toEqual([]);
    // Not vacuous: each reading was the one that matched in every one of its cases.
    for (const reading of READINGS) {
      const key = `${reading.strategy}${reading.variant ? `/${reading.variant}` : ""}`;
      expect(reached.get(key) ?? 0, key).toBe(all.filter((c) => c.reading === reading).length);
    }
  });

  test("a separator spanning a line break at the edge: new_string's line break is the model's own", () => {
    // The quote has the file's separator exactly and new_string breaks the line there: as asked.
    const r = run("y = a if cond  else b\n", " cond else b", "\n    flag else b");
    expect(r.kind === "ok" && r.newContent).toBe("y = a if\n    flag  else b\n");
  });

  test("a mid-line start on a multi-line match whose other lines drift: the separator is no indentation", () => {
    const content = 'def g():\n    y = f(a) if cond else h(\n        "b")\n    return y\n';
    for (const [oldSep, newSep, sep] of [["  ", " ", " "], ["\t", " ", " "], [" ", "", ""], ["  ", "", " "], ["", " ", "  "]] as const) {
      const r = run(content, `${oldSep}cond else h(\n  "b")`, `${newSep}flag else h(\n  "b")`);
      expect(r.kind, `${JSON.stringify(oldSep)} → ${JSON.stringify(newSep)}`).toBe("ok");
      if (r.kind !== "ok") continue;
      expect(r.newContent, `${JSON.stringify(oldSep)} → ${JSON.stringify(newSep)}`).toBe(`def g():\n    y = f(a) if${sep}flag else h(\n        "b")\n    return y\n`);
    }
  });

  test("a quote that breaks the line elsewhere than the file (written wholesale): the separator rule still holds", () => {
    for (const [oldSep, newSep, sep] of [["  ", " ", " "], ["\t", "", " "], [" ", "", ""], ["", " ", "  "]] as const) {
      const r = run("y = a if cond else b  # c\n", `${oldSep}cond\nelse b`, `${newSep}flag\nelse b`);
      expect(r.kind === "ok" && r.strategy).toBe("whitespace-normalized");
      expect(r.kind === "ok" && r.newContent, `${JSON.stringify(oldSep)} → ${JSON.stringify(newSep)}`).toBe(`y = a if${sep}flag\nelse b  # c\n`);
      const end = run("y = a if cond else b  # c\n", `a if\ncond${oldSep}`, `a if\nflag${newSep}`);
      expect(end.kind === "ok" && end.newContent, `end ${JSON.stringify(oldSep)} → ${JSON.stringify(newSep)}`).toBe(`y = a if\nflag${sep}else b  # c\n`);
    }
  });

  test("a match ending with its line break ends no line in the middle: new_string's trailing spaces are the merge's to judge", () => {
    // Whole lines; old_string caught the next line's indentation after its last break.
    const content = "def g():\n    a = 1\n    b = 2\n";
    const r = run(content, "a = 1\n  ", "a = 2\n  ");
    expect(r.kind === "ok" && r.newContent).toBe("def g():\n    a = 2\n    b = 2\n");
  });

  test("must not match: a separator quoted where the file glues the words", () => {
    // `ifcond` is one token: no strategy may read "  cond" into it.
    const r = run("y = a ifcond else b\n", "  cond else b", " flag else b");
    expect(r.kind).not.toBe("ok");
  });
});
