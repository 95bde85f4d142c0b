// replace's diff is worked out from its spans (only the lines they touch), for files that
// end in a line break and for files that do not (most of a node_modules); it must be the
// diff of the file as it was and as the replace leaves it: jsdiff's applyPatch and git apply
// turn the one into the other, on random texts and replacements (a replacement may add line
// breaks, even at the end of the file).
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { applyPatch } from "diff";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { diffOf } from "../src/tools/replace.ts";
import { countsOf, findByLines, spanEdits } from "../src/search/rewrite.ts";
import { certainParts, lines } from "../src/replacer/parts.ts";
import { applySpans, findLiteral, findReplacements, parseTemplate } from "../src/replacer/substitute.ts";
import { compilePattern } from "../src/search/regex.ts";
import { unifiedDiff } from "../src/core/diff.ts";
import { tempDir } from "./_helpers.ts";

const word = fc.constantFrom("foo", "bar", "x", "", "  foo()", "foofoo", "end");
const text = fc.tuple(fc.array(word, { minLength: 1, maxLength: 40 }), fc.boolean()).map(([lines, final]) => lines.join("\n") + (final ? "\n" : ""));
const replacement = fc.constantFrom("F", "", "foo\nbar", "baz\n", "\n", "q\n\nr", "foo");

function change(before: string, repl: string) {
  const spans = findLiteral(before, "foo", repl);
  return { spans, after: applySpans(before, spans) };
}

function counted(patch: string): { additions: number; deletions: number } {
  let additions = 0;
  let deletions = 0;
  for (const l of patch.split("\n").slice(2)) {
    if (l.startsWith("+")) additions++;
    else if (l.startsWith("-")) deletions++;
  }
  return { additions, deletions };
}

describe("replace's diff from its spans", () => {
  test("applied to the file as it was, gives the file as the replace leaves it (jsdiff), with its counts", () => {
    fc.assert(
      fc.property(text, replacement, (before, repl) => {
        const { spans, after } = change(before, repl);
        if (spans.length === 0 || after === before) return;
        const diff = diffOf("f.js", before, after, spans);
        expect(applyPatch(before, diff.patch)).toBe(after);
        expect(counted(diff.patch)).toEqual({ additions: diff.additions, deletions: diff.deletions });
      }),
      { numRuns: 3000 },
    );
  });

  test("the lines counted without the diff (history, title, metadata of a plain answer) are the diff's counts", () => {
    let quick = 0;
    let moved = 0;
    fc.assert(
      fc.property(text, replacement, (before, repl) => {
        const { spans, after } = change(before, repl);
        if (spans.length === 0 || after === before) return;
        const diff = diffOf("f.js", before, after, spans);
        const counts = countsOf(before, after, spans);
        // Counted without the diff exactly where the diff is made from the spans of text ending
        // in a line break, and no edit's lines need a diff to be counted (replacer/parts.ts).
        const needsDiff = spanEdits(before, spans).some((e) => certainParts(lines(before.slice(e.start, e.end)), lines(e.text)) === null);
        if (needsDiff) moved++;
        expect(counts === undefined).toBe(!before.endsWith("\n") || !after.endsWith("\n") || needsDiff);
        if (counts === undefined) return;
        quick++;
        expect(counts).toEqual({ added: diff.additions, removed: diff.deletions });
      }),
      { numRuns: 3000 },
    );
    expect(quick).toBeGreaterThan(500);
    // Some runs hold replacements whose lines a diff must count (the generator makes them).
    expect(moved).toBeGreaterThan(0);
  });

  test("a file without a final line break: the same lines as the whole-file diff marks, where both are one hunk", () => {
    // Both diffs of a change to the last line: identical text.
    const before = "a\nb\nc\nfoo\nd\ne\nfoo";
    const { spans, after } = change(before, "F");
    expect(diffOf("f.js", before, after, spans).patch).toBe(unifiedDiff("f.js", before, after).patch);
    // A line break added after the last line: the last line is removed and added again.
    const grown = change("a\nfoo", "foo\nbar");
    expect(diffOf("f.js", "a\nfoo", grown.after, grown.spans).patch).toBe("--- a/f.js\n+++ b/f.js\n@@ -1,2 +1,3 @@\n a\n-foo\n\\ No newline at end of file\n+foo\n+bar\n\\ No newline at end of file\n");
  });

  test("git apply takes it", () => {
    using tmp = tempDir("kt-replace-diff-");
    const repo = join(tmp.path, "r");
    mkdirSync(repo);
    expect(Bun.spawnSync(["git", "init", "-q", repo]).exitCode).toBe(0);
    const samples = fc.sample(fc.tuple(text, replacement), { numRuns: 60, seed: 7 });
    let applied = 0;
    for (const [before, repl] of samples) {
      const { spans, after } = change(before, repl);
      if (spans.length === 0 || after === before) continue;
      writeFileSync(join(repo, "f.js"), before);
      writeFileSync(join(tmp.path, "p.diff"), diffOf("f.js", before, after, spans).patch);
      const r = Bun.spawnSync(["git", "apply", "--whitespace=nowarn", join(tmp.path, "p.diff")], { cwd: repo, stderr: "pipe" });
      expect(r.stderr.toString()).toBe("");
      expect(readFileSync(join(repo, "f.js"), "utf8")).toBe(after);
      applied++;
    }
    expect(applied).toBeGreaterThan(20);
  });
});

describe("replace's regex matches, found line by line from the pattern's required text", () => {
  test("the same spans and replacements as the whole text searched at once", () => {
    const patterns = ["([A-Za-z_]+)\\.startswith\\(", "^foo(\\w*)", "bar$", "(?i)FOO\\(\\)", "\\bend\\b", "x+foo", "[a-z]+foo(bar)?", "(?<w>\\w+)\\s*foo\\(", "foo\\(\\)$"];
    const line = fc.constantFrom("foo", "bar", "x.startswith(", "  foo()", "foofoo end", "xxfoo", "", "FOO()", "é.startswith(", "a\tfoobar", "startswith(");
    const body = fc.tuple(fc.array(line, { minLength: 1, maxLength: 30 }), fc.boolean()).map(([ls, final]) => ls.join("\n") + (final ? "\n" : ""));
    fc.assert(
      fc.property(body, fc.constantFrom(...patterns), fc.boolean(), fc.boolean(), (text, pattern, insensitive, word) => {
        const compiled = compilePattern(pattern, insensitive ? "insensitive" : "sensitive", false, true);
        expect(compiled.prefilter).not.toBeNull();
        const re = compiled.jsValid;
        // --word, as replace wraps the pattern.
        const js = word ? new RegExp(`(?<![0-9A-Za-z_])(?:${re.source})(?![0-9A-Za-z_])`, re.flags) : re;
        const replacement = { parts: parseTemplate("<$1>") };
        expect(findByLines(text, compiled.prefilter!, js, replacement)).toEqual(findReplacements(text, js, replacement));
      }),
      { numRuns: 3000 },
    );
  });
});
