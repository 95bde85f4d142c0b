// SPEC §3.2: middle-out truncation, the marker line, spill files, the 64 KB backstop and
// UTF-8-safe cuts.
import { describe, expect, test } from "bun:test";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { p } from "../src/tools/params.ts";
import { backstop, cutToBytes, middleOut, omissionMarker } from "../src/core/truncate.ts";
import { defineTool, type ToolContext } from "../src/tools/tool.ts";
import { tempDir } from "./_helpers.ts";

const limits = { maxLines: 10, maxBytes: 10_000, headLines: 6, tailLines: 4 };

describe("middleOut", () => {
  test("text within the limits is untouched and nothing is spilled", () => {
    let spilled = false;
    const cut = middleOut("a\nb\nc", limits, () => ((spilled = true), "/x"));
    expect(cut).toEqual({ text: "a\nb\nc" });
    expect(spilled).toBe(false);
  });

  test("keeps head and tail lines with one marker between them", () => {
    const text = Array.from({ length: 25 }, (_, i) => `line ${i + 1}`).join("\n");
    const cut = middleOut(text, limits, () => "/state/spill/bash-c1.txt");
    expect(cut.text.split("\n")).toEqual([
      "line 1", "line 2", "line 3", "line 4", "line 5", "line 6",
      "[... 15 lines omitted (118 bytes). Full output: /state/spill/bash-c1.txt — read or grep that file for the rest.]",
      "line 22", "line 23", "line 24", "line 25",
    ]);
    expect(cut.truncation).toEqual({
      originalBytes: Buffer.byteLength(text),
      originalLines: 25,
      shownHeadLines: 6,
      shownTailLines: 4,
      omittedLines: 15,
      spillPath: "/state/spill/bash-c1.txt",
    });
  });

  test("the byte limit binds too, and a single huge line is cut without splitting a character", () => {
    const text = "é".repeat(50_000); // 100,000 bytes on one line
    const cut = middleOut(text, { maxLines: 400, maxBytes: 30_000, headLines: 250, tailLines: 150 }, () => undefined);
    expect(Buffer.byteLength(cut.text)).toBeLessThanOrEqual(30_000 + 200);
    expect(cut.text).not.toContain("\uFFFD");
    expect(cut.text).toContain("lines omitted");
    expect(Buffer.from(cut.text, "utf8").toString("utf8")).toBe(cut.text);
  });

  test("the marker counts with thousands separators and names no path when none was saved", () => {
    expect(omissionMarker(1842, 58 * 1024, "/p/s.txt")).toBe("[... 1,842 lines omitted (58 KB). Full output: /p/s.txt — read or grep that file for the rest.]");
    expect(omissionMarker(3, 12, undefined)).toBe("[... 3 lines omitted (12 bytes).]");
  });
});

describe("cutToBytes", () => {
  test("never splits a multi-byte character or a surrogate pair, from either end", () => {
    const s = "ab😀cd€";
    for (let n = 0; n <= Buffer.byteLength(s); n++) {
      for (const fromEnd of [false, true]) {
        const cut = cutToBytes(s, n, fromEnd);
        expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(n);
        expect(cut).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
        expect(fromEnd ? s.endsWith(cut) : s.startsWith(cut)).toBe(true);
      }
    }
  });
});

describe("the 64 KB backstop", () => {
  test("caps any tool's result, spills the whole text and reports the truncation", async () => {
    using tmp = tempDir();
    const ctx: ToolContext = {
      cwd: tmp.path, session: "s1", callId: "call_9", stateDir: join(tmp.path, "state"),
      flags: { skipReadCheck: false, dryRun: false, trace: false, strict: false }, warn: () => {},
    };
    const big = Array.from({ length: 20_000 }, (_, i) => `row ${i} ${"x".repeat(20)}`).join("\n");
    const tool = defineTool({
      name: "noisy",
      description: "test",
      parameters: p.object({}),
      primary: "x",
      annotations: { readOnlyHint: true, destructiveHint: false },
      execute: async () => ({ content: big, title: "noisy" }),
    });
    const r = await tool.run({}, ctx);
    expect(Buffer.byteLength(r.content)).toBeLessThanOrEqual(64 * 1024);
    expect(r.content.startsWith("row 0 ")).toBe(true);
    expect(r.content.endsWith(`row 19999 ${"x".repeat(20)}`)).toBe(true);
    const spill = join(tmp.path, "state", "sessions", "s1", "spill", "noisy-call_9.txt");
    expect(r.metadata.truncation?.spillPath).toBe(spill);
    expect(r.content).toContain(`Full output: ${spill} — read or grep that file for the rest.]`);
    expect(readFileSync(spill, "utf8")).toBe(big);
    expect(statSync(spill).mode & 0o777).toBe(0o600);
    expect(statSync(join(tmp.path, "state", "sessions", "s1")).mode & 0o777).toBe(0o700);
  });

  test("leaves a result under 64 KB alone", () => {
    const result = { content: "small", isError: false, metadata: { title: "t", durationMs: 0 } };
    backstop(result, "t", {} as ToolContext);
    expect(result).toEqual({ content: "small", isError: false, metadata: { title: "t", durationMs: 0 } });
  });
});
