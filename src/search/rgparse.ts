// rg's plain output under --heading --null -n (--column, --stats: rgargs.ts), read as it
// comes: which lines are headings, matches, notes and the summary, and a match line's
// number, column and text. What becomes of them is the caller's (rg.ts).
//
// rg prints each file's matches under its path: "path\0number:text" for the first, then
// "number:text", a blank line between files. Any other line is one of rg's notes (a NUL
// met after a match: the file is binary) or the --stats block. Lines are read from the
// bytes, so that a kept text is its own string and not a slice pinning a whole chunk of
// output.
import { isUtf8 } from "node:buffer";

/** What the output says, in its order. */
export interface RgSink {
  /** A heading: the path as rg printed it (relative to its working directory). False:
   * the file's lines are only counted (counted()), not decoded. */
  file(raw: string): boolean;
  /** A match line of the current file: its number, the 1-based byte column where its
   * first match starts (0: not known), its text and whether that is UTF-8, and where the
   * text's bytes start in buf (for the column's offset in the decoded text). */
  line(number: number, column: number, text: string, valid: boolean, buf: Buffer, from: number): void;
  /** A match line of a file whose lines are only counted. */
  counted(): void;
  /** rg's note that the current file is binary (it met a NUL after a match). */
  binary(): void;
  /** rg's note (under --binary) that a file with no heading of its own is binary and matches. */
  binaryFile?(raw: string): void;
}

export interface RgFormat {
  /** rg was given --column. */
  columns: boolean;
  /** Whether the pattern matches a line's text, to tell a column from a text that starts
   * like one (see match); null when it cannot tell (rg's part only prefilters). */
  matches: ((text: string, valid: boolean) => boolean) | null;
}

const BINARY_NOTE = /^([^]*): (?:WARNING: stopped searching binary file|binary file matches)/;

/** Reads rg's output as it comes, chunk by chunk, and tells `sink` what it says. */
export class RgOutput {
  /** rg printed its --stats summary: it ran the search to the end. */
  summary = false;
  /** The path of the last heading (rg's binary note names it). */
  private path: string | null = null;
  /** Whether the current file's lines are decoded (RgSink.file). */
  private reading = false;
  /** Lines since the last blank line that were neither a match nor a heading: the start
   * of the next heading when a path holds a newline ("a\nb.txt\0…" arrives as two lines). */
  private fragment: string | null = null;
  /** The pieces of a line not yet ended (a minified line can span hundreds of chunks:
   * they are joined once, when its newline comes, not chunk by chunk). */
  private pending: Buffer[] = [];

  constructor(
    private readonly sink: RgSink,
    private readonly format: RgFormat,
  ) {}

  /**
   * Reads the lines the chunk ends. Returns how many of its bytes were read in place, as
   * whole lines (not those of a line joined from earlier chunks): what rg.ts counts as
   * text dropped (collect.ts, garbage).
   */
  push(chunk: Uint8Array): number {
    let buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (this.pending.length > 0) {
      // Only the line cut at the end of the last chunk is joined, not the whole chunk.
      const nl = buf.indexOf(10);
      if (nl === -1) {
        this.pending.push(Buffer.from(buf));
        return 0;
      }
      this.pending.push(buf.subarray(0, nl + 1));
      const joined = Buffer.concat(this.pending);
      this.pending = [];
      this.lines(joined, joined.length - 1);
      buf = buf.subarray(nl + 1);
    }
    const last = buf.lastIndexOf(10);
    if (last === -1) {
      if (buf.length > 0) this.pending.push(Buffer.from(buf));
      return 0;
    }
    this.lines(buf, last);
    if (last + 1 < buf.length) this.pending.push(Buffer.from(buf.subarray(last + 1)));
    return last;
  }

  /** The output is over: its last line, if unterminated, is read. */
  end(): void {
    if (this.pending.length === 0) return;
    const rest = Buffer.concat(this.pending);
    this.pending = [];
    this.lines(rest, rest.length);
  }

  /** Reads each line of buf[0, end); `valid`: the whole range is UTF-8, each line need not be checked. */
  private lines(buf: Buffer, end: number): void {
    const valid = isUtf8(buf.subarray(0, end));
    let start = 0;
    for (let nl = buf.indexOf(10); nl !== -1 && nl < end; nl = buf.indexOf(10, start)) {
      this.line(buf, start, nl, valid);
      start = nl + 1;
    }
    if (start < end) this.line(buf, start, end, valid);
  }

  private line(buf: Buffer, start: number, end: number, valid: boolean): void {
    if (start === end) {
      this.fragment = null;
      return;
    }
    let colon = digitsThenColon(buf, start, end);
    if (colon === -1) {
      const z = buf.indexOf(0, start);
      if (z === -1 || z >= end) {
        this.note(buf.toString("utf8", start, end));
        return;
      }
      this.path = (this.fragment === null ? "" : `${this.fragment}\n`) + buf.toString("utf8", start, z);
      this.fragment = null;
      this.reading = this.sink.file(this.path);
      colon = buf.indexOf(58, z + 1);
      start = z + 1;
    }
    this.fragment = null;
    if (this.path === null) return;
    if (this.reading) this.match(buf, start, colon, end, valid);
    else this.sink.counted();
  }

  /** A match line: "number:text", or "number:column:text" with --column. */
  private match(buf: Buffer, start: number, colon: number, end: number, valid: boolean): void {
    const number = digits(buf, start, colon);
    let column = 0;
    let from = colon + 1;
    if (this.format.columns) {
      // rg gives no column for an empty match at the end of an unterminated last line.
      const second = digitsThenColon(buf, from, end);
      if (second !== -1) {
        column = digits(buf, from, second);
        from = second + 1;
      }
    }
    let ok = valid || isUtf8(buf.subarray(from, end));
    let text = buf.toString("utf8", from, end);
    // A line without its column (above) ends in the "\r\n" rg adds under --crlf: when what
    // looked like a column leaves a text the pattern does not match, it was the text's own start.
    if (column > 0 && buf[end - 1] === 13 && this.format.matches !== null && !this.format.matches(text, ok)) {
      column = 0;
      from = colon + 1;
      ok = valid || isUtf8(buf.subarray(from, end));
      text = buf.toString("utf8", from, end);
    }
    this.sink.line(number, column, text, ok, buf, from);
  }

  private note(line: string): void {
    if (line.endsWith(" files searched")) this.summary = true;
    const note = this.fragment === null ? line : `${this.fragment}\n${line}`;
    const binary = BINARY_NOTE.exec(note);
    if (binary && this.path !== null && this.path === binary[1]) {
      this.sink.binary();
      this.fragment = null;
    } else if (binary && this.sink.binaryFile) {
      this.sink.binaryFile(binary[1]!);
      this.fragment = null;
    } else this.fragment = note;
  }
}

/** The ":" that ends a run of digits opening buf[start, end), or -1. */
function digitsThenColon(buf: Buffer, start: number, end: number): number {
  let i = start;
  while (i < end && buf[i]! >= 48 && buf[i]! <= 57) i++;
  return i > start && i < end && buf[i] === 58 ? i : -1;
}

/** The decimal number buf[start, end), all digits. */
function digits(buf: Buffer, start: number, end: number): number {
  let n = 0;
  for (let i = start; i < end; i++) n = n * 10 + buf[i]! - 48;
  return n;
}
