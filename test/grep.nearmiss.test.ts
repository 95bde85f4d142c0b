// The zero-match re-probe (src/search/nearmiss.ts): the edit-distance probe is written as
// a trie for JavaScript and as a flat alternation for rg, and both must select the same
// lines; the hint is the closest text found.
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { distance } from "fastest-levenshtein";
import { compilePattern } from "../src/search/regex.ts";
import { searchText } from "../src/search/searcher.ts";
import { Collector } from "../src/search/collect.ts";
import { edits, nearest, probeFor } from "../src/search/nearmiss.ts";
import { tempDir } from "./_helpers.ts";
import { RG } from "./_search.ts";

const WORD = "ContextEngine";

/** Lines with the word changed by 0, 1 or 2 random edits, inside noise. */
function lines(seed: number, n: number): string[] {
  let s = seed;
  const rnd = () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648);
  const alphabet = "abcdeEgiontxC_ .";
  const edit = (w: string): string => {
    const i = Math.floor(rnd() * w.length);
    const c = alphabet[Math.floor(rnd() * alphabet.length)]!;
    switch (Math.floor(rnd() * 4)) {
      case 0: return w.slice(0, i) + w.slice(i + 1);
      case 1: return w.slice(0, i) + c + w.slice(i + 1);
      case 2: return w.slice(0, i) + c + w.slice(i);
      default: return i + 1 < w.length ? w.slice(0, i) + w[i + 1] + w[i] + w.slice(i + 2) : w;
    }
  };
  return Array.from({ length: n }, () => {
    let w = rnd() < 0.5 ? WORD.toLowerCase() : WORD;
    const edits = Math.floor(rnd() * 3);
    for (let k = 0; k < edits; k++) w = edit(w);
    return `${"x".repeat(Math.floor(rnd() * 5))} ${w} ${"y".repeat(Math.floor(rnd() * 5))}`;
  });
}

function builtinLines(pattern: ReturnType<typeof probeFor>, text: string): number[] {
  const out = { hits: [] as { line: number; text: string }[], count: 0, cut: false };
  searchText(text, pattern!.jsValid, 1, out, pattern!.prefilter);
  return out.hits.map((h) => h.line);
}

describe("near-miss probe", () => {
  test("the JavaScript trie selects exactly the lines within one edit", () => {
    const probe = probeFor(compilePattern(`${WORD}x`))!;
    const sample = lines(7, 400);
    const expected = sample
      .map((line, i) => ({ line, i }))
      .filter(({ line }) => {
        const lower = line.toLowerCase();
        const want = `${WORD}x`.toLowerCase();
        for (let len = want.length - 1; len <= want.length + 1; len++) {
          for (let at = 0; at + len <= lower.length; at++) if (distance(lower.slice(at, at + len), want) <= 1) return true;
        }
        return false;
      })
      .map(({ i }) => i + 1);
    expect(expected.length).toBeGreaterThan(20);
    expect(builtinLines(probe, sample.join("\n"))).toEqual(expected);
  });

  test.skipIf(!RG)("rg's literals find every line the trie accepts (the rg engine then checks them)", () => {
    using tmp = tempDir();
    const sample = lines(11, 600);
    const file = join(tmp.path, "s.txt");
    writeFileSync(file, sample.join("\n"));
    for (const word of [WORD, "ContextEnginee", "contxtEngine", "abcd", "abcde"]) {
      const probe = probeFor(compilePattern(word))!;
      expect(probe.verify).toBe(true);
      const proc = Bun.spawnSync([RG!, "-n", "--no-config", "--crlf", "-i", "-e", probe.rust, "--", file], { stdout: "pipe", stderr: "pipe" });
      expect(proc.stderr.toString()).toBe("");
      const candidates = proc.stdout.toString().split("\n").filter(Boolean);
      const checked = candidates.filter((l) => probe.jsValid.test(l.slice(l.indexOf(":") + 1)) && ((probe.jsValid.lastIndex = 0), true)).map((l) => Number(l.split(":")[0]));
      const all = sample.map((_, i) => i + 1).filter((n) => {
        probe.jsValid.lastIndex = 0;
        return probe.jsValid.test(sample[n - 1]!);
      });
      probe.jsValid.lastIndex = 0;
      expect({ word, lines: checked }).toEqual({ word, lines: all });
      expect({ word, lines: builtinLines(probe, sample.join("\n")) }).toEqual({ word, lines: all });
    }
  });

  test("the hint is the found text closest to the pattern", () => {
    const hint = (pattern: string, text: string) => {
      const compiled = compilePattern(pattern);
      const probe = probeFor(compiled)!;
      const found = new Collector();
      const out = { hits: [] as { line: number; text: string }[], count: 0, cut: false };
      searchText(text, probe.jsValid, 1, out, probe.prefilter);
      if (out.count > 0) found.add("f.ts", "/nonexistent", out.hits, out.count, false);
      return nearest(compiled, probe, found);
    };
    const text = "export class ContextEngine {}\nconst contextengine = 1;\n";
    expect(hint("contextEngine", text)).toBe("ContextEngine");
    expect(hint("ContextEnigne", text)).toBe("ContextEngine");
    expect(hint("ContxtEngine", text)).toBe("ContextEngine");
    expect(hint("ContextEngines", text)).toBe("ContextEngine");
    expect(hint("a\\.b\\(c\\)", "a.b(d)\n")).toBe("a\\.b\\(d\\)");
    expect(hint("zebra", text)).toBeNull();
    // A swap is one edit: the common word wins over a rarer text one deletion away.
    expect(hint("licnese", "MIT license\nthe license\nlinese\n")).toBe("license");
  });

  test("edits counts a swap of neighbours as one edit", () => {
    expect(edits("license", "licnese")).toBe(1);
    expect(edits("abc", "abc")).toBe(0);
    expect(edits("", "abc")).toBe(3);
    expect(edits("kitten", "sitting")).toBe(3);
    expect(edits("ca", "abc")).toBe(3);
    expect(edits("😀a", "a😀")).toBe(1);
  });

  test("no probe for short plain text that already matched case-insensitively", () => {
    expect(probeFor(compilePattern("abc"))).toBeNull();
    expect(probeFor(compilePattern("a+b"))).toBeNull();
    expect(probeFor(compilePattern("A+b"))?.caseInsensitive).toBe(true);
  });
});
