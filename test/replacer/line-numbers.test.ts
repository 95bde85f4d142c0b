// Pasted line numbers (SPEC §8.3): old_string copied from read's display or from cat -n is
// matched without the numbers when every line carries them in sequence, and only then; the
// file's own text is looked for first.
import { describe, expect, test } from "bun:test";
import { someNumbered, unnumbered } from "../../src/replacer/line-numbers.ts";
import { expectOnlySpansChanged, run } from "./_helpers.ts";

const file = ["def load(path):", "    with open(path) as f:", "        data = f.read()", "", "    return data", ""].join("\n");
const lines = file.split("\n");
const read = (a: number, b: number, ls = lines) => ls.slice(a - 1, b).map((l, i) => `${String(a + i).padStart(6)}→${l}`).join("\n");
const cat = (a: number, b: number, ls = lines) => ls.slice(a - 1, b).map((l, i) => `${String(a + i).padStart(6)}\t${l}`).join("\n");

describe("pasted line numbers", () => {
  test("read's display: taken off old_string and new_string, and the result says so", () => {
    const r = run(file, read(2, 3), read(2, 3).replace("f.read()", "f.read(10)"));
    expect(r.kind).toBe("ok");
    if (r.kind !== "ok") return;
    expect(r.numbering).toEqual({ kind: "read", prefix: "     2→" });
    expect(r.newContent).toBe(file.replace("f.read()", "f.read(10)"));
    expectOnlySpansChanged(file, r);
  });

  test("read's display with a blank line, a final newline, and the padding lost", () => {
    const quote = `${read(3, 5)}\n`;
    const r = run(file, quote, quote.replace("return data", "return data.strip()"));
    expect(r.kind === "ok" && r.newContent).toBe(file.replace("return data", "return data.strip()"));
    const bare = "2→    with open(path) as f:\n3→        data = f.read()";
    expect(run(file, bare, bare.replace("read()", "read(1)")).kind).toBe("ok");
  });

  test("numbers of seven digits and more stand without padding in read's display", () => {
    expect(unnumbered("1234567→a\n1234568→b", "1234567→a\n1234568→c")).toMatchObject({ old: "a\nb", neu: "a\nc" });
  });

  test("cat -n's display, right-aligned in six columns; a blank line whose tab was trimmed", () => {
    const r = run(file, cat(3, 5).replace("     4\t", "     4"), cat(3, 5).replace("return data", "return None"));
    expect(r.kind === "ok" && r.numbering).toEqual({ kind: "cat-n", prefix: "     3\t" });
    expect(r.kind === "ok" && r.newContent).toBe(file.replace("return data", "return None"));
  });

  test("new_string's own lines, without a number, are written as given", () => {
    const neu = `${read(2, 2)}\n        log(path)\n${read(3, 3)}`;
    const r = run(file, read(2, 3), neu);
    expect(r.kind === "ok" && r.newContent).toBe(file.replace("as f:\n", "as f:\n        log(path)\n"));
  });

  test("must not strip: not every line numbered", () => {
    const quote = `${read(2, 2)}\n        data = f.read()`;
    expect(unnumbered(quote, quote)).toBeUndefined();
    const r = run(file, quote, quote.replace("read()", "read(1)"));
    expect(r.kind).toBe("not-found");
    expect(r.kind !== "ok" && r.numbering).toEqual({ kind: "read", prefix: "     2→", partial: true });
  });

  test("must not strip: numbers not consecutive (a gap, a repeat, counting down)", () => {
    for (const quote of [
      `${read(2, 2)}\n${read(5, 5)}`,
      `${read(2, 2)}\n${read(2, 2)}`,
      `${read(3, 3)}\n${read(2, 2)}`,
    ]) {
      expect(unnumbered(quote, quote), quote).toBeUndefined();
      expect(run(file, quote, `${quote}x`).kind).not.toBe("ok");
    }
  });

  test("must not strip: cat -n's number without its padding (a digit and a tab are data)", () => {
    const tsv = "1\tapple\n2\tpear\n";
    expect(unnumbered("1\tapple\n2\tpear", "1\tapple\n2\tplum")).toBeUndefined();
    expect(someNumbered("1\tapple")).toBeUndefined();
    // Row 2's text alone occurs in the file, inside another row: a stripped quote would land there.
    expect(run("7\tapple\n8\tpear\n", "1\tapple\n2\tpear", "1\tapple\n2\tplum").kind).not.toBe("ok");
    expect(run(tsv, "3\tapple\n4\tpear", "3\tapple\n4\tplum").kind).not.toBe("ok");
  });

  test("must not strip: read's padding wider than read prints it", () => {
    expect(unnumbered("       2→a\n       3→b", "x")).toBeUndefined();
  });

  test("must not take a bare quote that starts inside a line: the text after a number starts one", () => {
    const content = "x = load(path)\ny = 1\n";
    const quote = "     4→load(path)\n     5→y = 1";
    const r = run(content, quote, quote.replace("y = 1", "y = 2"));
    expect(r.kind).not.toBe("ok");
  });

  test("the file's own numbered text is matched as it is (exact first)", () => {
    const listing = `Session:\n${read(2, 3)}\nend\n${lines.slice(1, 3).join("\n")}\n`;
    const r = run(listing, read(2, 3), read(2, 3).replace("read()", "read(1)"));
    expect(r.kind === "ok" && r.strategy).toBe("exact");
    expect(r.kind === "ok" && r.numbering).toBeUndefined();
    expect(r.kind === "ok" && r.newContent).toBe(listing.replace("f.read()", "f.read(1)"));
  });

  test("ambiguous without the numbers: ambiguous, and said", () => {
    const twice = `${file}\n${file}`;
    const r = run(twice, read(2, 3), read(2, 3).replace("read()", "read(1)"));
    expect(r.kind).toBe("ambiguous");
    expect(r.kind === "ambiguous" && r.numbering?.kind).toBe("read");
  });

  test("strict matching takes no numbers off", () => {
    expect(run(file, read(2, 3), read(2, 3).replace("read()", "read(1)"), { strict: true }).kind).toBe("not-found");
  });

  test("only numbers: nothing left to find", () => {
    expect(unnumbered("     4→\n     5→", "x")).toBeUndefined();
  });
});

test("the trace shows both passes, the second one marked", () => {
  const file = "a = 1\nb = 2\n";
  const r = run(file, "     1→a = 1\n     2→b = 2", "     1→a = 1\n     2→b = 3");
  expect(r.kind).toBe("ok");
  const exact = r.trace.filter((s) => s.strategy === "exact");
  expect(exact.map((s) => [s.decision, s.reason.startsWith("without the line numbers: ")])).toEqual([["no-match", false], ["taken", true]]);
});
