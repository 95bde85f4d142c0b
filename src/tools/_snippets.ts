// What edit and patch both show of a change: the text with CRLF read as LF and the way back,
// the snippet of an edited region, a line quoted with its whitespace visible. Apart from the
// tools so that patch does not load edit (its schema, the notebook editor) to show them.
import { MAX_LINE_CHARS } from "../core/text.ts";
import { spliceKeepingEndings } from "../core/eol.ts";
import { applyEdits, type Edit } from "../replacer/index.ts";

/** Snippet: the edited region and this many lines either side, at most SNIPPET_MAX lines. */
export const SNIPPET_CONTEXT = 4;
export const SNIPPET_MAX = 60;

/**
 * The file's text with CRLF read as LF, and the way back: offsets into the LF text map onto
 * the original, so that only the edited spans change and every other line keeps its own
 * ending — in a file with mixed endings too.
 */
export class Lf {
  private constructor(
    readonly original: string,
    readonly lf: string,
    /** LF-text offsets of the "\n"s that were "\r\n", ascending. */
    private readonly crlf: number[],
  ) {}

  static of(original: string): Lf {
    const crlf: number[] = [];
    if (!original.includes("\r\n")) return new Lf(original, original, crlf);
    let lf = "";
    let from = 0;
    for (let i = original.indexOf("\r\n"); i !== -1; i = original.indexOf("\r\n", i + 2)) {
      lf += original.slice(from, i);
      crlf.push(lf.length);
      lf += "\n";
      from = i + 2;
    }
    return new Lf(original, lf + original.slice(from), crlf);
  }

  /** The original offset of an LF-text offset: each CRLF before it adds one "\r". */
  toOriginal(offset: number): number {
    let lo = 0;
    let hi = this.crlf.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.crlf[mid]! < offset) lo = mid + 1;
      else hi = mid;
    }
    return offset + lo;
  }

  /** The edits applied to the original, each line ending kept line by line (core/eol.ts says how). */
  apply(edits: readonly Edit[]): string {
    if (this.crlf.length === 0) return applyEdits(this.original, edits);
    return spliceKeepingEndings(this.original, edits.map((e) => ({ start: this.toOriginal(e.start), end: this.toOriginal(e.end), text: e.text })));
  }
}

/** The edited region ± SNIPPET_CONTEXT lines with real line numbers, middle elided past SNIPPET_MAX lines. */
export function snippet(content: string, startLine: number, endLine: number): string {
  return snippetOf(SnippetLines.of(content), startLine, endLine);
}

/** A text split into lines once, for several snippets of it. */
export class SnippetLines {
  private constructor(
    readonly lines: readonly string[],
    /** As countLines counts: a final newline does not open a line. */
    readonly total: number,
  ) {}

  static of(content: string): SnippetLines {
    const lines = content === "" ? [] : content.split("\n");
    return new SnippetLines(lines, lines.length - (content.endsWith("\n") ? 1 : 0));
  }
}

export function snippetOf({ lines, total }: SnippetLines, startLine: number, endLine: number): string {
  if (total === 0) return "The file is now empty.";
  const from = Math.max(1, Math.min(startLine, total) - SNIPPET_CONTEXT);
  const to = Math.min(total, Math.max(endLine, startLine) + SNIPPET_CONTEXT);
  const row = (n: number) => {
    const line = lines[n - 1]!;
    return `${String(n).padStart(6)}→${line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}… [line truncated]` : line}`;
  };
  const rows: string[] = [];
  const span = to - from + 1;
  if (span <= SNIPPET_MAX) for (let n = from; n <= to; n++) rows.push(row(n));
  else {
    const head = Math.ceil((SNIPPET_MAX - 1) / 2);
    const tail = SNIPPET_MAX - 1 - head;
    for (let n = from; n < from + head; n++) rows.push(row(n));
    rows.push(`[... ${span - head - tail} lines omitted ...]`);
    for (let n = to - tail + 1; n <= to; n++) rows.push(row(n));
  }
  const range = from === to ? `line ${from}` : `lines ${from}–${to}`;
  return `Snippet of the edited region (${range}):\n${rows.join("\n")}`;
}

const EXCERPT = 80;

/** A line quoted with its whitespace visible; a long one cut around the column where it differs. */
export function excerpt(line: string, column: number): string {
  let text = line;
  let before = "";
  let after = "";
  if (line.length > EXCERPT) {
    const start = Math.max(0, Math.min(column - 1 - 30, line.length - EXCERPT));
    text = line.slice(start, start + EXCERPT);
    if (start > 0) before = "…";
    if (start + EXCERPT < line.length) after = "…";
  }
  return `"${before}${visible(text)}${after}"`;
}

export function visible(s: string): string {
  return s.replace(/[\\"\t\r\u0000-\u001f\u007f\u00a0\u1680\u2000-\u200b\u2028\u2029\u202f\u205f\u3000\ufeff]/g, (c) => {
    if (c === "\\") return "\\\\";
    if (c === '"') return '\\"';
    if (c === "\t") return "\\t";
    if (c === "\r") return "\\r";
    return `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
  });
}
