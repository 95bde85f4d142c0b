// Terminals in-process (SPEC §7.4): named keys as an xterm sends them, and what the
// emulator makes of a log (src/process/keys.ts, src/process/emulator.ts).
import { describe, expect, test } from "bun:test";
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { keyBytes, keysToBytes, needsCursorMode } from "../src/process/keys.ts";
import { emulatedLines, plainLines, renderLines, screenOf, terminalView } from "../src/process/emulator.ts";
import { createTerm, currentSize, recordSize, takeResizeRequest, requestResize } from "../src/process/terminal.ts";
import { READ_LIMITS } from "../src/tools/ps.ts";
import { tempDir } from "./_helpers.ts";

describe("keys", () => {
  test("named keys, Ctrl and Alt, single characters", () => {
    const table: [string, string][] = [
      ["Enter", "\r"],
      ["enter", "\r"],
      ["Tab", "\t"],
      ["S-Tab", "\x1b[Z"],
      ["Esc", "\x1b"],
      ["Space", " "],
      ["Backspace", "\x7f"],
      ["Delete", "\x1b[3~"],
      ["PageUp", "\x1b[5~"],
      ["PageDown", "\x1b[6~"],
      ["F1", "\x1bOP"],
      ["F2", "\x1bOQ"],
      ["F5", "\x1b[15~"],
      ["F12", "\x1b[24~"],
      ["C-c", "\x03"],
      ["C-C", "\x03"],
      ["Ctrl+d", "\x04"],
      ["C-[", "\x1b"],
      ["C-Space", "\x00"],
      ["M-x", "\x1bx"],
      ["M-Enter", "\x1b\r"],
      ["q", "q"],
      [":", ":"],
      ["é", "é"],
    ];
    for (const [name, bytes] of table) expect([name, keyBytes(name, false)]).toEqual([name, bytes]);
  });

  test("arrows, Home and End follow the cursor-key mode", () => {
    expect(keyBytes("Up", false)).toBe("\x1b[A");
    expect(keyBytes("Up", true)).toBe("\x1bOA");
    expect(keyBytes("Left", true)).toBe("\x1bOD");
    expect(keyBytes("Home", false)).toBe("\x1b[H");
    expect(keyBytes("End", true)).toBe("\x1bOF");
    expect(needsCursorMode(["Enter", "q"])).toBe(false);
    expect(needsCursorMode(["M-Up"])).toBe(true);
  });

  test("a list is sent in order; an unknown name is reported", () => {
    expect(keysToBytes(["Esc", ":", "w", "q", "Enter"], false)).toEqual({ bytes: "\x1b:wq\r" });
    expect(keysToBytes(["Enter", "Hyper-x", "Nope"], false)).toEqual({ unknown: "Hyper-x" });
    expect(keysToBytes(["C-é"], false)).toEqual({ unknown: "C-é" });
  });
});

describe("the emulator", () => {
  test("carriage returns, erasures and colours are applied; wrapped lines are whole", async () => {
    const raw = Buffer.from("\x1b[31mred\x1b[0m plain\r\nprogress 10%\rprogress 100%\r\nabc\x1b[2K\rxyz\r\n" + "w".repeat(30) + "\r\n");
    expect(await renderLines(raw, { cols: 20, rows: 5 })).toEqual(["red plain", "progress 100%", "xyz", "w".repeat(30)]);
  });

  test("lines that need no emulator read as the emulator shows them; anything else goes to it", async () => {
    const size = { cols: 20, rows: 5 };
    const samples = [
      "plain\r\nlines\r\n",
      "\x1b[1;31mred\x1b[0m and \x1b[38:2::1:2:3mtrue colour\x1b[m\r\n",
      "\r\n\r\nafter blank lines\r\n\r\n\r\n",
      "a line longer than twenty columns, with  spaces   where it wraps and trailing spaces   \r\n",
      "ünïcödé ✓ 字\r\nno final newline",
      "   \r\n  indented\r\n",
    ];
    for (const sample of samples) {
      const raw = Buffer.from(sample);
      const plain = plainLines(raw);
      expect(plain, JSON.stringify(sample)).toBeDefined();
      expect([sample, plain]).toEqual([sample, await emulatedLines(raw, size)]);
    }
    for (const needsIt of ["over\rwrite\r\n", "erase\x1b[2K\r\n", "\x1b[Hhome", "tab\there\r\n", "lone\nfeed", "back\bspace"]) {
      expect(plainLines(Buffer.from(needsIt)), JSON.stringify(needsIt)).toBeUndefined();
    }
  });

  test("rows above the first thing drawn are no output", async () => {
    expect(await renderLines(Buffer.from("\x1b[5;3Hhere"), { cols: 20, rows: 10 })).toEqual(["  here"]);
  });

  test("a long region keeps its head and tail and counts the log's lines", async () => {
    using tmp = tempDir();
    const log = join(tmp.path, "p1.log");
    writeFileSync(log, Array.from({ length: 5000 }, (_, i) => `\x1b[32mline ${i + 1}\x1b[0m\r\n`).join(""));
    createTerm(log, { cols: 80, rows: 24 });
    const view = await terminalView(log, 0, Bun.file(log).size, READ_LIMITS, () => log);
    expect(view.lines).toBe(5000);
    expect(view.newlines).toBe(5000);
    const lines = view.text.split("\n");
    expect(lines[0]).toBe("line 1");
    expect(lines[99]).toBe("line 100");
    expect(lines[100]).toMatch(/^\[\.\.\. 4,700 lines omitted \(.*\)\. Full output: .*p1\.log — read or grep that file for the rest\.\]$/);
    expect(lines[lines.length - 1]).toBe("line 5000");
    expect(view.truncation?.omittedLines).toBe(4700);
  });

  test("the screen is rebuilt at the sizes the log had, with modes set long before", async () => {
    using tmp = tempDir();
    const log = join(tmp.path, "p1.log");
    // Application cursor keys and the alternate screen, then more than the replayed bytes.
    writeFileSync(log, "\x1b[?1h\x1b[?1049h" + "x\r\n".repeat(200_000));
    createTerm(log, { cols: 40, rows: 10 });
    appendFileSync(log, "\x1b[H\x1b[2Jtop line\r\nsecond");
    const screen = await screenOf(log);
    expect(screen).toMatchObject({ cols: 40, rows: 10, applicationCursor: true, alternate: true, cursor: { row: 2, col: 7 } });
    expect(screen.lines.slice(0, 3)).toEqual(["top line", "second", ""]);
    // A resize recorded at the end applies from there on.
    recordSize(log, Bun.file(log).size, { cols: 30, rows: 6 });
    expect(currentSize(log)).toEqual({ cols: 30, rows: 6 });
    expect((await screenOf(log)).rows).toBe(6);
  });

  test("a resize request is consumed once and clamped", () => {
    using tmp = tempDir();
    const log = join(tmp.path, "p1.log");
    requestResize(log, { cols: 5000, rows: 2 });
    expect(takeResizeRequest(log)).toEqual({ cols: 500, rows: 5 });
    expect(takeResizeRequest(log)).toBeUndefined();
  });
});
