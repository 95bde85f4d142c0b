// The shortcuts taken for apply_patch's speed (issue 12) and for read's start-up (issue 32)
// answer exactly what the plain computations they replace answer: each is checked against that plain computation, kept
// here as the reference, on random inputs built to hit the edges (line breaks at the cut,
// CRLF, no final newline, empty and absent sides, control bytes around the 10% line).
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { closeSync, openSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { lineChanges } from "../src/core/history.ts";
import { readOpened } from "../src/core/paths.ts";
import { tempDir } from "./_helpers.ts";
import { grouped, sniffBinary, utf8Length } from "../src/core/text.ts";
import { imageInfo, looksLikeImage } from "../src/core/image.ts";
import { looksLikePdf } from "../src/documents/pdf.ts";
import { createTwoFilesPatch } from "diff";
import { parsePatch } from "../src/patch/parse.ts";
import { applyHunks } from "../src/patch/apply.ts";
import { editsDiff } from "../src/patch/diff.ts";

/** The multiset count over every line of both sides, as history first computed it. */
function referenceLineChanges(before: Uint8Array | null, after: Uint8Array | null): { added: number; removed: number } {
  const count = new Map<string, number>();
  const lines = (b: Uint8Array | null) => (b === null || b.length === 0 ? [] : Buffer.from(b).toString("utf8").replace(/\r\n/g, "\n").replace(/\n$/, "").split("\n"));
  for (const l of lines(before)) count.set(l, (count.get(l) ?? 0) + 1);
  let added = 0;
  for (const l of lines(after)) {
    const n = count.get(l) ?? 0;
    if (n > 0) count.set(l, n - 1);
    else added++;
  }
  let removed = 0;
  for (const n of count.values()) removed += n;
  return { added, removed };
}

/** The byte loop sniffBinary first was. */
function referenceSniff(sample: Uint8Array): boolean {
  if (sample.length === 0) return false;
  let control = 0;
  for (const b of sample) {
    if (b === 0) return true;
    if (b < 32 && b !== 9 && b !== 10 && b !== 11 && b !== 12 && b !== 13 && b !== 27) control++;
  }
  return control / sample.length > 0.1;
}

const line = fc.constantFrom("a", "b", "c", "", "a\r", "é", "x y", "\r");
const text = fc.array(line, { maxLength: 12 }).chain((ls) => fc.constantFrom(ls.join("\n"), ls.join("\n") + "\n", ls.join("\r\n") + "\r\n"));
const bytes = (s: string) => new Uint8Array(Buffer.from(s, "utf8"));

describe("history's line counts", () => {
  test("equal the count over whole files, for random edits of one text", () => {
    fc.assert(
      fc.property(text, fc.nat(40), fc.nat(40), text, fc.boolean(), (base, at, len, insert, swap) => {
        const cut = Math.min(at, base.length);
        const edited = base.slice(0, cut) + insert + base.slice(Math.min(base.length, cut + len));
        const [x, y] = swap ? [edited, base] : [base, edited];
        const want = referenceLineChanges(bytes(x), bytes(y));
        expect(lineChanges(bytes(x), bytes(y))).toEqual(want);
        // Tiny pieces too, so the runs set aside from the middle are tried on every input.
        expect(lineChanges(bytes(x), bytes(y), 0)).toEqual(want);
        expect(lineChanges(bytes(x), bytes(y), 3)).toEqual(want);
      }),
      { numRuns: 3000 },
    );
  });

  test("equal the count over whole files, for unrelated texts and absent sides", () => {
    fc.assert(
      fc.property(fc.option(text), fc.option(text), (x, y) => {
        const a = x === null ? null : bytes(x);
        const b = y === null ? null : bytes(y);
        const want = referenceLineChanges(a, b);
        expect(lineChanges(a, b)).toEqual(want);
        expect(lineChanges(a, b, 0)).toEqual(want);
      }),
      { numRuns: 2000 },
    );
  });

  test("equal the count over whole files when edits far apart move and repeat lines", () => {
    const block = fc.array(fc.constantFrom("a", "b", "c", "", "x\r", "é"), { minLength: 1, maxLength: 30 });
    fc.assert(
      fc.property(block, block, block, block, block, fc.boolean(), (p, q, r, s, t, crlf) => {
        const eol = crlf ? "\r\n" : "\n";
        const x = [...p, ...q, ...r, ...s].join(eol) + eol;
        // q and s swapped, r edited: lines that move between the edits must still cancel.
        const y = [...p, ...s, ...t, ...r, ...q].join(eol);
        for (const min of [0, 2, 16, 512]) expect(lineChanges(bytes(x), bytes(y), min)).toEqual(referenceLineChanges(bytes(x), bytes(y)));
      }),
      { numRuns: 1500 },
    );
  });

  test("count a change in the middle of a long file", () => {
    const base = Array.from({ length: 500 }, (_, i) => `line ${i % 37}`).join("\n") + "\n";
    const after = base.replace("line 12\nline 13\n", "line 12\nchanged\nline 14\nline 13\n");
    expect(lineChanges(bytes(base), bytes(after))).toEqual({ added: 2, removed: 0 });
    expect(lineChanges(bytes(base), bytes(after))).toEqual(referenceLineChanges(bytes(base), bytes(after)));
    const twice = after.replace("line 30\nline 31\n", "line 30\n").replace("line 4\n", "line 4\nline 31\n");
    expect(lineChanges(bytes(base), bytes(twice))).toEqual(referenceLineChanges(bytes(base), bytes(twice)));
  });
});

describe("binary sniffing", () => {
  test("calls the same samples binary as the byte loop", () => {
    const byte = fc.oneof(fc.integer({ min: 0, max: 255 }), fc.constantFrom(9, 10, 11, 12, 13, 27, 1, 8, 14, 26, 28, 31, 32, 0x7f), fc.integer({ min: 32, max: 126 }));
    fc.assert(
      fc.property(fc.array(byte, { maxLength: 64 }), fc.integer({ min: 0, max: 8 }), (xs, offset) => {
        // A view into a larger buffer, as `bytes.subarray(0, 4096)` is.
        const backing = new Uint8Array(offset + xs.length + 3);
        backing.set(xs, offset);
        const sample = backing.subarray(offset, offset + xs.length);
        expect(sniffBinary("x.txt", sample) !== null).toBe(referenceSniff(sample));
      }),
      { numRuns: 5000 },
    );
  });

  test("a sample just over and just under a tenth control bytes", () => {
    const of = (controls: number) => new Uint8Array([...Array(controls).fill(1), ...Array(100 - controls).fill(97)]);
    expect(sniffBinary("x.txt", of(10))).toBeNull();
    expect(sniffBinary("x.txt", of(11))).toBe("binary data");
    expect(sniffBinary("x.txt", new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 0]))).toBe("ELF executable");
  });
});

describe("a patched file's diff", () => {
  test("is the same whether the edits' lines are counted or taken from where the hunks were found", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom("a", "b", "c", "d", "e", ""), { minLength: 1, maxLength: 60 }), fc.array(fc.tuple(fc.nat(59), fc.nat(3), fc.constantFrom("x", "y\nz", "")), { maxLength: 6 }), (base, cuts) => {
        const before = base.map((l, i) => `${l}${i}`);
        const after = [...before];
        for (const [at, len, text] of [...cuts].sort((p, q) => q[0] - p[0])) after.splice(Math.min(at, after.length), len, ...(text === "" ? [] : text.split("\n")));
        const a = `${before.join("\n")}\n`;
        const b = after.length === 0 ? "" : `${after.join("\n")}\n`;
        const parsed = parsePatch(createTwoFilesPatch("a/f", "b/f", a, b, "", "", { context: 2 }));
        if (!parsed.ok || parsed.ops.length === 0) return;
        const op = parsed.ops[0]!;
        if (op.kind !== "update") return;
        const applied = applyHunks(a, op.hunks);
        expect(applied.ok).toBe(true);
        if (!applied.ok) return;
        expect(applied.lf).toBe(b);
        expect(editsDiff("f", a, applied.edits, applied.editLines)).toEqual(editsDiff("f", a, applied.edits));
      }),
      { numRuns: 300 },
    );
  });
});

describe("readOpened: one read to the end of a file whose size fstat told", () => {
  test("the same bytes as readFileSync, for every size (empty, exact, grown since the fstat, shrunk since)", () => {
    using tmp = tempDir("kt-readopened-");
    const path = join(tmp.path, "f");
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 70_000 }), fc.integer({ min: -3, max: 3 }), (bytes, skew) => {
        writeFileSync(path, bytes);
        const fd = openSync(path, "r");
        try {
          // The size a stale fstat would have given: a few bytes off either way.
          const told = Math.max(0, bytes.length + skew);
          expect(Buffer.compare(Buffer.from(readOpened(fd, told)), Buffer.from(bytes))).toBe(0);
        } finally {
          closeSync(fd);
        }
      }),
      { numRuns: 300 },
    );
  });

  test("a file longer than its buffer is read on to its end", () => {
    using tmp = tempDir("kt-readopened-");
    const path = join(tmp.path, "f");
    const bytes = Buffer.alloc(300_000, 7);
    writeFileSync(path, bytes);
    const fd = openSync(path, "r");
    try {
      expect(readOpened(fd, 10).length).toBe(300_000);
    } finally {
      closeSync(fd);
    }
  });
});

describe("read's start-up shortcuts (issue 32): no Buffer, no spread on a small read's path", () => {
  test("utf8Length counts what Buffer.byteLength counts, lone surrogates included", () => {
    const unit = fc.oneof(fc.integer({ min: 0, max: 0x7f }), fc.integer({ min: 0x80, max: 0x7ff }), fc.integer({ min: 0x800, max: 0xffff }), fc.constantFrom(0xd800, 0xdbff, 0xdc00, 0xdfff, 0xfeff));
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 40 }), fc.string({ unit: "binary", maxLength: 20 }), (units, text) => {
        const raw = String.fromCharCode(...units);
        expect(utf8Length(raw)).toBe(Buffer.byteLength(raw));
        expect(utf8Length(text)).toBe(Buffer.byteLength(text));
        expect(utf8Length(raw + text)).toBe(Buffer.byteLength(raw + text));
      }),
      { numRuns: 5000 },
    );
  });

  test("looksLikePdf answers what the first KB's Latin-1 view said, wherever the magic falls", () => {
    const reference = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, Math.min(b.byteLength, 1024)).toString("latin1").includes("%PDF-");
    const magic = [0x25, 0x50, 0x44, 0x46, 0x2d];
    for (const at of [0, 1, 500, 1018, 1019, 1020, 1023, 1024, 2000]) {
      for (const size of [at + 5, at + 3, 1024, 1030, 4096]) {
        const bytes = new Uint8Array(Math.max(size, 0)).fill(0x25);
        bytes.fill(0x20, 0, bytes.length);
        bytes.set(magic.slice(0, Math.max(0, Math.min(5, bytes.length - at))), Math.min(at, bytes.length));
        expect(looksLikePdf(bytes)).toBe(reference(bytes));
      }
    }
    fc.assert(
      fc.property(fc.array(fc.constantFrom(0x25, 0x50, 0x44, 0x46, 0x2d, 0x20, 0), { maxLength: 1100 }), fc.integer({ min: 0, max: 4 }), (xs, offset) => {
        const backing = new Uint8Array(offset + xs.length);
        backing.set(xs, offset);
        const bytes = backing.subarray(offset);
        expect(looksLikePdf(bytes)).toBe(reference(bytes));
      }),
      { numRuns: 2000 },
    );
  });

  test("images are told by their first bytes as before", () => {
    const referenceLooks = (h: Uint8Array) => {
      const starts = (sig: number[]) => h.length >= sig.length && sig.every((v, i) => h[i] === v);
      const ascii = (at: number, n: number) => (h.length < at + n ? "" : String.fromCharCode(...h.subarray(at, at + n)));
      return starts([0x89, 0x50, 0x4e, 0x47]) || starts([0xff, 0xd8, 0xff]) || ascii(0, 4) === "GIF8" || (ascii(0, 4) === "RIFF" && ascii(8, 4) === "WEBP");
    };
    const heads = [[0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], [0xff, 0xd8, 0xff], [...Buffer.from("GIF89a")], [...Buffer.from("RIFF\0\0\0\0WEBPVP8 ")]];
    const byte = fc.oneof(fc.integer({ min: 0, max: 255 }), fc.constantFrom(0x89, 0x50, 0x4e, 0x47, 0xff, 0xd8, 0x47, 0x49, 0x46, 0x38, 0x52));
    fc.assert(
      fc.property(fc.constantFrom(...heads), fc.nat(12), fc.array(byte, { maxLength: 16 }), (head, cut, tail) => {
        const bytes = new Uint8Array([...head.slice(0, cut), ...tail]);
        expect(looksLikeImage(bytes)).toBe(referenceLooks(bytes));
        if (cut >= head.length) expect(imageInfo(bytes)?.format ?? null).toBe(imageInfo(new Uint8Array([...head, ...tail]))?.format ?? null);
      }),
      { numRuns: 3000 },
    );
  });
});

describe("grouped: counts written as toLocaleString(\"en-US\") writes them, without loading ICU's number formats", () => {
  test("every safe integer, and what is not one left to toLocaleString", () => {
    const edges = [0, -0, 1, -1, 9, 10, 99, 100, 999, 1000, -1000, 9999, 10_000, 123_456, 999_999, 1_000_000, 2 ** 31, 2 ** 32, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 1.5, -2.25, 1234.5678, 2 ** 53, 1e21, Number.NaN, Number.POSITIVE_INFINITY];
    for (const n of edges) expect(grouped(n), String(n)).toBe(n.toLocaleString("en-US"));
    fc.assert(
      fc.property(fc.oneof(fc.integer(), fc.maxSafeInteger(), fc.nat({ max: 99_999 }), fc.double()), (n) => {
        expect(grouped(n)).toBe(n.toLocaleString("en-US"));
      }),
      { numRuns: 20_000 },
    );
  });
});
