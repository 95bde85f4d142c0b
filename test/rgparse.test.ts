// The reader of rg's --heading --null output (src/search/rgparse.ts) on output written
// here byte by byte after what rg 13 prints: what it reports must not depend on where
// the output is cut into chunks.
import { describe, expect, test } from "bun:test";
import { RgOutput, type RgFormat, type RgSink } from "../src/search/rgparse.ts";

type Event = ["file", string] | ["line", number, number, string, boolean] | ["counted"] | ["binary"];

/** Records what the reader reports. */
function recorder(unread: readonly string[] = []): RgSink & { events: Event[] } {
  const events: Event[] = [];
  return {
    events,
    file(raw) {
      events.push(["file", raw]);
      return !unread.includes(raw);
    },
    line(number, column, text, valid, buf, from) {
      // The text is what buf holds from `from` to the end of the line.
      const nl = buf.indexOf(10, from);
      expect(buf.toString("utf8", from, nl === -1 ? buf.length : nl)).toBe(text);
      events.push(["line", number, column, text, valid]);
    },
    counted() {
      events.push(["counted"]);
    },
    binary() {
      events.push(["binary"]);
    },
  };
}

/** The pattern of SAMPLE: "one", or the "12:t" of the unterminated line. */
const WITH_COLUMNS: RgFormat = { columns: true, matches: (text) => /one|12:t/.test(text) };

const STATS = "5 matches\n5 matched lines\n5 files contained matches\n6 files searched\n92 bytes printed\n35 bytes searched\n0.000031 seconds spent searching\n0.008017 seconds\n";

const SAMPLE = Buffer.concat([
  Buffer.from("./a.txt\x001:7:alpha one\r\n3:1:one more\n\n"),
  // A path holding a newline arrives as two lines.
  Buffer.from("./new\nline.txt\x001:1:one\n\n"),
  // Latin-1: the é of "xé one" is the single byte 0xe9.
  Buffer.from("./lat.txt\x001:4:x\xe9 one\n2:1:one\n\n", "latin1"),
  Buffer.from('./big.bin\x001:1:one\n./big.bin: WARNING: stopped searching binary file after match (found "\\0" byte around offset 200005)\n\n'),
  // A column, then a text that starts with digits and a colon, under --crlf.
  Buffer.from("./d/crlf.txt\x001:4:12:one\r\n\n"),
  // No column (an empty match at the end of an unterminated last line): "12:" is the text's.
  Buffer.from("./d/unterm.txt\x002:12:tail\r\n\n"),
  Buffer.from(STATS),
]);

const EXPECTED: Event[] = [
  ["file", "./a.txt"],
  ["line", 1, 7, "alpha one\r", true],
  ["line", 3, 1, "one more", true],
  ["file", "./new\nline.txt"],
  ["line", 1, 1, "one", true],
  ["file", "./lat.txt"],
  ["line", 1, 4, "x\ufffd one", false],
  ["line", 2, 1, "one", true],
  ["file", "./big.bin"],
  ["line", 1, 1, "one", true],
  ["binary"],
  ["file", "./d/crlf.txt"],
  ["line", 1, 4, "12:one\r", true],
  ["file", "./d/unterm.txt"],
  ["line", 2, 0, "12:tail\r", true],
];

/** Feeds `output` to a reader in chunks cut at `cuts`; each chunk is zeroed once pushed,
 * as a reused read buffer would be. */
function read(output: Buffer, cuts: number[], format: RgFormat = WITH_COLUMNS, unread: readonly string[] = []): { events: Event[]; summary: boolean } {
  const sink = recorder(unread);
  const reader = new RgOutput(sink, format);
  let start = 0;
  for (const cut of [...cuts, output.length]) {
    const chunk = Uint8Array.from(output.subarray(start, cut));
    reader.push(chunk);
    chunk.fill(0);
    start = cut;
  }
  reader.end();
  return { events: sink.events, summary: reader.summary };
}

describe("rg output reader", () => {
  test("the sample in one chunk", () => {
    expect(read(SAMPLE, [])).toEqual({ events: EXPECTED, summary: true });
  });

  test("the same reports wherever the output is cut in two", () => {
    const failures: number[] = [];
    for (let cut = 0; cut <= SAMPLE.length; cut++) {
      if (!Bun.deepEquals(read(SAMPLE, [cut]), { events: EXPECTED, summary: true })) failures.push(cut);
    }
    expect(failures).toEqual([]);
  });

  test("the same reports when each byte is a chunk", () => {
    const cuts = Array.from({ length: SAMPLE.length }, (_, i) => i);
    expect(read(SAMPLE, cuts)).toEqual({ events: EXPECTED, summary: true });
  });

  test("an unterminated last line is read at the end", () => {
    expect(read(Buffer.from("./a.txt\x001:1:one\n2:1:two"), [], WITH_COLUMNS).events).toEqual([
      ["file", "./a.txt"],
      ["line", 1, 1, "one", true],
      ["line", 2, 1, "two", true],
    ]);
  });

  test("push counts the bytes read in place, not those of a line joined from earlier chunks", () => {
    const reader = new RgOutput(recorder(), WITH_COLUMNS);
    const pushed = ["./a.txt\x001:1:one\n2:1:tw", "o, still", " two\n3:1:one\n", "4:1:x"].map((chunk) => reader.push(Buffer.from(chunk)));
    expect(pushed).toEqual(["./a.txt\x001:1:one".length, 0, "3:1:one".length, 0]);
  });

  test("a binary note after a match marks that file only", () => {
    const output = Buffer.from("./b.bin\x001:1:one\n\n./c.txt\x001:1:one\n./b.bin: binary file matches (found \"\\0\" byte around offset 9)\n");
    expect(read(output, []).events).toEqual([
      ["file", "./b.bin"],
      ["line", 1, 1, "one", true],
      ["file", "./c.txt"],
      ["line", 1, 1, "one", true],
    ]);
  });

  test("a binary note for a path holding a newline", () => {
    const output = Buffer.from("./x\ny.bin\x001:1:one\n./x\ny.bin: binary file matches (found \"\\0\" byte around offset 9)\n");
    expect(read(output, []).events).toEqual([["file", "./x\ny.bin"], ["line", 1, 1, "one", true], ["binary"]]);
  });

  test("without --column, the digits after the line number are the text's", () => {
    expect(read(Buffer.from("./d/crlf.txt\x001:4:12:one\r\n"), [], { columns: false, matches: null }).events).toEqual([
      ["file", "./d/crlf.txt"],
      ["line", 1, 0, "4:12:one\r", true],
    ]);
  });

  test("a pattern that cannot tell keeps what looks like a column", () => {
    expect(read(Buffer.from("./d/unterm.txt\x002:12:tail\r\n"), [], { columns: true, matches: null }).events).toEqual([
      ["file", "./d/unterm.txt"],
      ["line", 2, 12, "tail\r", true],
    ]);
  });

  test("a column is taken as the text's start only on a line ending in CR", () => {
    expect(read(Buffer.from("./e.txt\x002:12:tail\n"), []).events).toEqual([
      ["file", "./e.txt"],
      ["line", 2, 12, "tail", true],
    ]);
  });

  test("the lines of a file not read are only counted", () => {
    expect(read(SAMPLE, [], WITH_COLUMNS, ["./a.txt", "./lat.txt"]).events).toEqual([
      ["file", "./a.txt"],
      ["counted"],
      ["counted"],
      ...EXPECTED.slice(3, 5),
      ["file", "./lat.txt"],
      ["counted"],
      ["counted"],
      ...EXPECTED.slice(8),
    ]);
  });

  test("no summary when rg stopped before its --stats block", () => {
    const cut = SAMPLE.indexOf(STATS);
    expect(read(SAMPLE.subarray(0, cut), [])).toEqual({ events: EXPECTED, summary: false });
  });

  test("a path holding two newlines", () => {
    expect(read(Buffer.from("\n./a\nb\nc.txt\x001:1:one\n"), []).events).toEqual([
      ["file", "./a\nb\nc.txt"],
      ["line", 1, 1, "one", true],
    ]);
  });
});
