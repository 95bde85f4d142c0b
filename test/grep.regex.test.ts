// grep's regex subset (src/search/regex.ts): what is accepted means the same in both
// engines (checked line by line against rg itself), what is refused says why and what
// to write instead.
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { compilePattern } from "../src/search/regex.ts";
import { anchorsOf, holds } from "../src/search/anchor.ts";
import { searchText } from "../src/search/searcher.ts";
import { KtError } from "../src/tools/tool.ts";
import { kt, tempDir } from "./_helpers.ts";
import { RG } from "./_search.ts";

/** Lines the built-in engine reports for `pattern` in `text`. */
function builtinLines(pattern: string, text: string): number[] {
  const c = compilePattern(pattern);
  const out = { hits: [] as { line: number; text: string }[], count: 0, cut: false };
  searchText(text, c.jsValid, 1, out, c.prefilter);
  return out.hits.map((h) => h.line);
}

function refusal(pattern: string): string {
  try {
    compilePattern(pattern);
  } catch (error) {
    expect(error).toBeInstanceOf(KtError);
    expect((error as KtError).code).toBe("INVALID_REGEX");
    return (error as KtError).message;
  }
  throw new Error(`${pattern} was accepted`);
}

const SAMPLE = [
  "export class ContextEngine {",
  "  contextengine.run();",
  "const x = a.b(c) + d[0];",
  "price: $42.50 and 7 items",
  "tab\there",
  "crlf line\r",
  "ends with space ",
  "",
  "   ",
  "naïve café Ωmega",
  "foo_bar FOO-BAR foo.bar",
  "if (x) { return y; }",
  "path/to/file.ts:12",
  "日本語のテキスト",
  "emoji 🎉 party",
  "a\rb lone carriage return",
  "x",
].join("\n");

const ACCEPTED = [
  "contextengine", "ContextEngine", "^export", "\\{$", "^$", "^\\s*$", "space $", "a.b", "a\\.b", "\\d+", "\\d{2}\\.\\d{2}",
  "\\bfoo\\b", "foo\\B", "\\w+_\\w+", "\\W", "[^a-z ]", "[A-Z]{3}", "[\\s\\S]", "[\\w.-]+\\.ts", "caf.", "[^\\x00-\\x7f]",
  "\\p{Greek}", "\\P{L}", "\\p{Lu}", "(?i)FOO", "foo|bar", "(foo|bar)+", "(?:ab)?c", "(?<name>fo+)", "x*", "\\$\\d+", "\\/",
  "{ return", "if \\(x\\)", "[]a]", "a{,2}b", "\\u00e9", "\\x{65E5}", "é", "[é-ü]", "\\t", "line$", "crlf line$", "lone.*return",
  "a.b lone", "[^\\w\\s]", "🎉", ".{40,}", "\\.ts:\\d+$", "[[]", "a]", "\\-",
];

describe("accepted patterns", () => {
  test("match the lines one expects in the built-in engine", () => {
    expect(builtinLines("contextengine", SAMPLE)).toEqual([1, 2]);
    expect(builtinLines("ContextEngine", SAMPLE)).toEqual([1]);
    expect(builtinLines("^$", SAMPLE)).toEqual([8]);
    expect(builtinLines("crlf line$", SAMPLE)).toEqual([6]);
    expect(builtinLines("space $", SAMPLE)).toEqual([7]);
    expect(builtinLines("\\{$", SAMPLE)).toEqual([1]);
    expect(builtinLines("{ return", SAMPLE)).toEqual([12]);
    expect(builtinLines("a.b lone", SAMPLE)).toEqual([]); // "\r" is never matched
    expect(builtinLines("\\bfoo\\b", SAMPLE)).toEqual([11]);
    expect(builtinLines("caf.", SAMPLE)).toEqual([10]);
    expect(builtinLines("\\p{Greek}", SAMPLE)).toEqual([10]);
    expect(builtinLines("x*", SAMPLE)).toEqual(Array.from({ length: 17 }, (_, i) => i + 1));
  });

  test("smart case: insensitive unless a written character is uppercase", () => {
    expect(compilePattern("foo\\W\\S\\D\\B\\P{L}").caseInsensitive).toBe(true);
    expect(compilePattern("Foo").caseInsensitive).toBe(false);
    expect(compilePattern("[A-Z]").caseInsensitive).toBe(false);
    expect(compilePattern("(?i)Foo").caseInsensitive).toBe(true);
    expect(compilePattern("\\x41").caseInsensitive).toBe(true);
  });

  test("a plain-text pattern is known as a literal; a required literal prefilters", () => {
    expect(compilePattern("a\\.b\\(").literal).toBe("a.b(");
    expect(compilePattern("a.b").literal).toBeNull();
    expect(compilePattern("\\w+Error\\(").prefilter?.source).toBe("Error\\(");
    expect(compilePattern("foo|barbaz").prefilter).toBeNull();
    expect(compilePattern("ab?cde").prefilter?.source).toBe("cde");
  });

  test.skipIf(!RG)("match exactly the lines rg matches", () => {
    using tmp = tempDir();
    const file = join(tmp.path, "sample.txt");
    writeFileSync(file, SAMPLE);
    for (const pattern of ACCEPTED) {
      const c = compilePattern(pattern);
      const proc = Bun.spawnSync([RG!, "--json", "--no-config", "--crlf", c.caseInsensitive ? "-i" : "-s", "-e", c.rust, "--", file], { stdout: "pipe", stderr: "pipe" });
      expect(proc.stderr.toString(), `rg rejected ${pattern} as ${c.rust}`).toBe("");
      const rgLines = proc.stdout
        .toString()
        .split("\n")
        .filter((l) => l.startsWith('{"type":"match"'))
        .map((l) => JSON.parse(l).data.line_number as number);
      expect({ pattern, lines: builtinLines(pattern, SAMPLE) }).toEqual({ pattern, lines: rgLines });
    }
  });
});

/** Every refusal, checked in-process here, is also checked through dist/kt below. */
const ALL_REFUSALS: [string, string][] = [];

describe("refused patterns name the construct and an alternative", () => {
  const TAIL = "is not supported (grep accepts the regex syntax that ripgrep and JavaScript share)";
  const cases: [string, string][] = [
    ["foo(?=bar)", `Invalid regex "foo(?=bar)": look-ahead (?=…) ${TAIL}. Match the following text directly (foo(?=bar) → foobar), or search for the wider text and read the lines.`],
    ["foo(?!bar)", `Invalid regex "foo(?!bar)": negative look-ahead (?!…) ${TAIL}. Search for the text itself and narrow the results with path or include, or read the lines around the matches.`],
    ["(?<=\\$)\\d+", `Invalid regex "(?<=\\$)\\d+": look-behind (?<=…) ${TAIL}. Include the preceding text in the pattern ((?<=\\$)\\d+ → \\$\\d+).`],
    ["(?<!x)y", `Invalid regex "(?<!x)y": negative look-behind (?<!…) ${TAIL}. Search for the text itself and narrow the results with path or include, or read the lines around the matches.`],
    ["(a)\\1", `Invalid regex "(a)\\1": the backreference \\1 ${TAIL}. Spell the repeated text out ((a)\\1 → aa), or search for the first occurrence and read the line.`],
    ["(?<q>a)\\k<q>", `Invalid regex "(?<q>a)\\k<q>": the backreference \\k<…> ${TAIL}. Spell the repeated text out, or search for its first occurrence and read the line.`],
    ["(?>ab)", `Invalid regex "(?>ab)": the atomic group (?>…) ${TAIL}. Use a plain group (…).`],
    ["a*+", `Invalid regex "a*+": the possessive quantifier *+ ${TAIL}. Drop the trailing + (* instead of *+).`],
    ["a(?s).b", `Invalid regex "a(?s).b": the inline flag group (?s) ${TAIL}. grep uses smart case — case-insensitive when the pattern has no uppercase letter, case-sensitive otherwise; a leading (?i) is the only inline flag accepted.`],
    ["(?i:a)b", `Invalid regex "(?i:a)b": the inline flag group (?i: ${TAIL}. grep uses smart case — case-insensitive when the pattern has no uppercase letter, case-sensitive otherwise; a leading (?i) is the only inline flag accepted.`],
    ["[[:alpha:]]+", `Invalid regex "[[:alpha:]]+": the POSIX class [:alpha:] ${TAIL}. Use [a-zA-Z] instead.`],
    ["\\Afoo", `Invalid regex "\\Afoo": the anchor \\A ${TAIL}. Use ^ and $ (grep matches line by line).`],
    ["\\Qa.b\\E", `Invalid regex "\\Qa.b\\E": quoting with \\Q ${TAIL}. Escape each metacharacter with a backslash instead (a\\.b for a.b).`],
    ["[^\\W]", `Invalid regex "[^\\W]": a negated shorthand (\\D, \\W, \\S) inside [^…] ${TAIL}. Write the class out, e.g. [^a-zA-Z0-9_,] or use the positive shorthand.`],
  ];
  ALL_REFUSALS.push(...cases);
  for (const [pattern, prose] of cases) test(pattern, () => expect(refusal(pattern)).toBe(prose));
});

describe("malformed patterns say where and how to fix them", () => {
  const cases: [string, string][] = [
    ["foo(bar", `Invalid regex "foo(bar": unclosed ( at position 4. Balance the parentheses, or escape a literal one as \\(.`],
    ["foo)bar", `Invalid regex "foo)bar": unmatched ) at position 4. Balance the parentheses, or escape a literal one as \\).`],
    ["[abc", `Invalid regex "[abc": unterminated [ at position 1. Close the class with ], or escape a literal [ as \\[.`],
    ["*foo", `Invalid regex "*foo": quantifier * has nothing to repeat at position 1. Escape it to match it literally (\\*).`],
    ["a**", `Invalid regex "a**": quantifier * follows another quantifier at position 3. Escape it to match it literally (\\*), or group first: (…)*.`],
    ["^*", `Invalid regex "^*": quantifier * has nothing to repeat at position 2. Escape it to match it literally (e.g. \\*).`],
    ["[z-a]", `Invalid regex "[z-a]": the range z-a is out of order at position 1. Write the range low to high.`],
    ["a{5,3}", `Invalid regex "a{5,3}": repetition {5,3} has its maximum below its minimum at position 2. Write the smaller number first.`],
    ["a{2000}", `Invalid regex "a{2000}": repetition count over 1000 at position 2. Use a smaller count, or + / * for "one or more" / "any number".`],
    ["foo\\", `Invalid regex "foo\\": a lone backslash at the end at position 4. Escape a literal backslash as \\\\.`],
    ["\\y", `Invalid regex "\\y": \\y is not an escape sequence at position 1. To match "y", write it without the backslash.`],
    ["a\\nb", `Invalid regex "a\\nb": a line break (\\n) at position 2. grep matches within single lines, so a pattern cannot contain a line break (set multiline to let a match span lines). Search for one line's text, then read the file around the match.`],
    ["a\\r$", `Invalid regex "a\\r$": a carriage return (\\r) at position 2. Line endings are not part of a line; use $ to anchor at the end of a line.`],
    ["\\xZZ", `Invalid regex "\\xZZ": \\x needs hex digits at position 1. Write \\x41 or \\x{263A}.`],
    ["\\p{Nope}", `Invalid regex "\\p{Nope}": \\p{Nope} is not a Unicode property at position 1. Write \\p{L} (letters), \\p{Nd} (digits) or \\p{Greek}.`],
    ["(?P=x)", `Invalid regex "(?P=x)": an unknown group syntax (? at position 1. Use (…) or (?:…) for a group, or escape a literal parenthesis as \\(.`],
  ];
  ALL_REFUSALS.push(...cases);
  for (const [pattern, prose] of cases) test(pattern, () => expect(refusal(pattern)).toBe(prose));

  test("a very long pattern is quoted in part", () => {
    const long = `${"a".repeat(300)}(?=b)`;
    expect(refusal(long)).toStartWith(`Invalid regex "${"a".repeat(200)}…": look-ahead`);
  });
});

describe("refusals through dist/kt", () => {
  // SPEC §8.6: kt grep's errors exit 2, as ripgrep's do (it was 1 before round three).
  test("print the same prose, exit 2, code INVALID_REGEX", () => {
    using tmp = tempDir();
    for (const [pattern, prose] of ALL_REFUSALS) {
      const r = kt(["grep", "--json", "--", pattern], { cwd: tmp.path, stateDir: join(tmp.path, "state") });
      const result = JSON.parse(r.stdout);
      expect({ pattern, content: result.content, code: result.error.code, exit: r.exitCode }).toEqual({ pattern, content: prose, code: "INVALID_REGEX", exit: 2 });
    }
  });
});

describe("anchors", () => {
  test("a case-insensitive literal's anchors are the case spellings of its rarest ASCII window, found in every spelling of it", () => {
    expect(anchorsOf("readFileSync", true)!.map((a) => String(a.bytes))).toContain("ync");
    expect(anchorsOf("the_zone", true)!.map((a) => String(a.bytes))).toContain("_zo");
    expect(anchorsOf("日本語", true)).toBeNull();
    expect(anchorsOf("kiss", true)).toBeNull();
    for (const word of ["readFileSync", "ContextEngine", "the_zone", "a-b-c-d", "x1y2z3"]) {
      const anchors = anchorsOf(word, true)!;
      for (const spelling of [word, word.toLowerCase(), word.toUpperCase(), word.replace(/./g, (c, i) => (i % 2 ? c.toUpperCase() : c.toLowerCase()))]) {
        const text = Buffer.from(`some text before ${spelling} and after`);
        expect({ word, spelling, found: anchors.some((a) => holds(text, a)) }).toEqual({ word, spelling, found: true });
      }
    }
  });
});

describe("anchor words", () => {
  test("a buffer holding a case-insensitive match always holds an anchor (Kelvin sign and long s included); a chunk with the letters but not the word does not", () => {
    const pieces = ["a", "K", "k", "\u212a", "s", "S", "\u017f", "y", "n", "c", "e", "l", "_", "é", "\u0130", " "];
    let seed = 7;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    for (const word of ["leSync", "Sync", "lesync", "bakery_tray", "Skyline", "queryKit", "quiz_mask", "kiss_keys"]) {
      const anchors = anchorsOf(word, true);
      if (anchors === null) {
        expect(word).toBe("kiss_keys");
        continue;
      }
      const re = new RegExp(word.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&"), "iu");
      for (let n = 0; n < 3000; n++) {
        let text = "";
        for (let k = Math.floor(rnd() * 12); k > 0; k--) text += pieces[Math.floor(rnd() * pieces.length)];
        if (rnd() < 0.5) {
          // A spelling of the word: each letter in either case, k and s sometimes as U+212A / U+017F.
          text += [...word].map((c) => (c === "k" || c === "K") && rnd() < 0.3 ? "\u212a" : (c === "s" || c === "S") && rnd() < 0.3 ? "\u017f" : rnd() < 0.5 ? c.toUpperCase() : c.toLowerCase()).join("");
        }
        for (let k = Math.floor(rnd() * 12); k > 0; k--) text += pieces[Math.floor(rnd() * pieces.length)];
        const buf = Buffer.from(text, "utf8");
        if (re.test(text)) expect({ word, text, held: anchors.some((a) => holds(buf, a)) }).toEqual({ word, text, held: true });
      }
    }
    const sync = anchorsOf("readFileSync", true)!;
    expect(sync.some((a) => holds(Buffer.from("async function fsync() {}"), a))).toBe(false);
    expect(sync.some((a) => holds(Buffer.from("x = READFILESYNC(y)"), a))).toBe(true);
  });
});
