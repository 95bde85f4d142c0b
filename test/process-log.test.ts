// Reading process logs: exact middle-out cuts for small regions, bounded streaming views of
// huge ones, line arithmetic for cursors and offsets, and the cleaning of terminal codes.
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { clean, countNewlines, lineStart, view } from "../src/process/log.ts";
import { tempDir } from "./_helpers.ts";

const LIMITS = { maxLines: 10, maxBytes: 1000, headLines: 4, tailLines: 6 };

describe("clean", () => {
  test("colours, cursor moves, OSC titles and links go; text stays", () => {
    expect(clean("\x1b[1;31mred\x1b[0m \x1b]0;title\x07plain \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\")).toBe("red plain link");
  });
  test("CRLF becomes LF; a carriage-return redraw keeps its last frame", () => {
    expect(clean("a\r\nb\r\n")).toBe("a\nb\n");
    expect(clean("10%\r50%\r100%\ndone")).toBe("100%\ndone");
  });
  test("other control bytes go, tabs stay", () => {
    expect(clean("a\tb\x07\x08c")).toBe("a\tbc");
  });
});

describe("view", () => {
  test("a small region is shown whole without its final newline", () => {
    using tmp = tempDir();
    const log = join(tmp.path, "l.log");
    writeFileSync(log, "one\ntwo\n");
    expect(view(log, 0, 8, LIMITS, () => "spill")).toEqual({ text: "one\ntwo", lines: 2, newlines: 2 });
    expect(view(log, 4, 8, LIMITS, () => "spill")).toEqual({ text: "two", lines: 1, newlines: 1 });
    expect(view(log, 0, 0, LIMITS, () => "spill")).toEqual({ text: "", lines: 0, newlines: 0 });
  });

  test("a partial last line counts as a line", () => {
    using tmp = tempDir();
    const log = join(tmp.path, "l.log");
    writeFileSync(log, "a\n>>> ");
    expect(view(log, 0, 6, LIMITS, () => undefined)).toEqual({ text: "a\n>>> ", lines: 2, newlines: 1 });
  });

  test("over the line limit: head and tail with the marker naming the spill", () => {
    using tmp = tempDir();
    const log = join(tmp.path, "l.log");
    const lines = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`);
    writeFileSync(log, `${lines.join("\n")}\n`);
    const v = view(log, 0, Buffer.byteLength(`${lines.join("\n")}\n`), LIMITS, () => "/spill/x.txt");
    expect(v.text).toBe(
      [...lines.slice(0, 4), "[... 20 lines omitted (156 bytes). Full output: /spill/x.txt — read or grep that file for the rest.]", ...lines.slice(24)].join("\n"),
    );
    expect(v.truncation).toEqual({ originalBytes: 230, originalLines: 30, shownHeadLines: 4, shownTailLines: 6, omittedLines: 20, spillPath: "/spill/x.txt" });
  });

  test("a region over 2 MB is streamed: bounded head and tail, exact counts, the spill named without the text", () => {
    using tmp = tempDir();
    const log = join(tmp.path, "big.log");
    const count = 400_000;
    const body = Array.from({ length: count }, (_, i) => `row ${i + 1}`).join("\n") + "\n";
    writeFileSync(log, body);
    let given: string | undefined = "unset";
    const v = view(log, 0, Buffer.byteLength(body), LIMITS, (full) => {
      given = full;
      return "/raw.log";
    });
    expect(given).toBeUndefined();
    expect(v.lines).toBe(count);
    expect(v.newlines).toBe(count);
    expect(v.text.split("\n")).toEqual([
      "row 1", "row 2", "row 3", "row 4",
      `[... ${(count - 10).toLocaleString("en-US")} lines omitted (${((Buffer.byteLength(body) - 6 * 4 - 6 * 11 - 2) / (1024 * 1024)).toFixed(1)} MB). Full output: /raw.log — read or grep that file for the rest.]`,
      "row 399995", "row 399996", "row 399997", "row 399998", "row 399999", "row 400000",
    ]);
    expect(v.truncation?.omittedLines).toBe(count - 10);
  });

  test("a streamed region that is one endless line is cut at both ends", () => {
    using tmp = tempDir();
    const log = join(tmp.path, "line.log");
    writeFileSync(log, "x".repeat(3 * 1024 * 1024));
    const v = view(log, 0, 3 * 1024 * 1024, LIMITS, () => "/raw.log");
    const [head, marker, tail] = v.text.split("\n");
    expect(head!.endsWith("x…")).toBe(true);
    expect(tail!.startsWith("…x")).toBe(true);
    expect(marker).toStartWith("[... 1 lines omitted");
    expect(v.lines).toBe(1);
  });
});

describe("line arithmetic", () => {
  test("countNewlines and lineStart agree, from 0 or from a known point", () => {
    using tmp = tempDir();
    const log = join(tmp.path, "l.log");
    writeFileSync(log, "a\nbb\nccc\ndddd");
    expect(countNewlines(log, 0, 14)).toBe(3);
    expect(countNewlines(log, 2, 14)).toBe(2);
    expect(lineStart(log, 1, 14, { byte: 0, line: 0 })).toBe(0);
    expect(lineStart(log, 2, 14, { byte: 0, line: 0 })).toBe(2);
    expect(lineStart(log, 4, 14, { byte: 0, line: 0 })).toBe(9);
    expect(lineStart(log, 4, 14, { byte: 5, line: 2 })).toBe(9);
    expect(lineStart(log, 3, 14, { byte: 5, line: 2 })).toBe(5);
    expect(lineStart(log, 5, 14, { byte: 0, line: 0 })).toBeUndefined();
  });
});
