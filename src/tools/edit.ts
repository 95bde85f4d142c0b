// edit (SPEC §4.3): preconditions, then the replacer cascade on the LF-normalized text, then
// the edits mapped back onto the file's own bytes (its CRLFs, its BOM, every line outside
// the edits untouched) and written by the one writer. All model-facing edit prose is here.
import * as z from "zod/mini";
import { statSync, type Stats } from "node:fs";
import description from "./edit.txt" with { type: "text" };
import { defineTool, KtError, type ToolContext } from "./tool.ts";
import { absolutePath, fsError, onOneLine, realPath } from "../core/paths.ts";
import { assertFresh, sha256 } from "../core/stamps.ts";
import { BOM_BYTES, countLines, decodeUtf8, dominantEol, hasBom, sniffBinary } from "../core/text.ts";
import { formatBytes } from "../core/truncate.ts";
import { guardedWrite, readIfExists, refuseStateFiles } from "../core/writer.ts";
import { unifiedDiff } from "../core/diff.ts";
import { notFound } from "./_suggest.ts";
import { MAX_FILE_BYTES, MAX_LINE_CHARS } from "./read.ts";
import { replace } from "../replacer/index.ts";
import type { CascadeOk, CascadeResult, Edit, NearMiss, StrategyName, TraceStep } from "../replacer/index.ts";

export const Parameters = z.strictObject({
  file_path: z.string().check(z.describe("Path of the file to edit (absolute preferred).")),
  old_string: z.string().check(z.describe("The exact existing text to replace, with enough surrounding context to be unique in the file.")),
  new_string: z.string().check(z.describe("The replacement text. Must differ from old_string.")),
  replace_all: z.optional(z.boolean().check(z.describe("Replace every exact occurrence of old_string instead of requiring uniqueness. Default false."))),
});

/** Snippet: the edited region and this many lines either side, at most SNIPPET_MAX lines. */
export const SNIPPET_CONTEXT = 4;
export const SNIPPET_MAX = 60;

export default defineTool({
  name: "edit",
  description: description.trim(),
  parameters: Parameters,
  primary: "file_path",
  examples: [
    "kt edit src/a.ts --old-string 'const x = 1;' --new-string 'const x = 2;'",
    "kt edit src/a.ts --old-string-file old.txt --new-string-file new.txt --dry-run --trace",
    "kt edit src/a.ts --old-string oldName --new-string newName --replace-all",
  ],
  longText: ["old_string", "new_string"],
  aliases: { path: "file_path", filePath: "file_path", oldString: "old_string", newString: "new_string", replaceAll: "replace_all" },
  annotations: { readOnlyHint: false, destructiveHint: true },
  async execute(input, ctx) {
    const path = absolutePath(ctx, input.file_path);
    const real = realPath(ctx, path);
    // Every later mention of the path is for the model: shown on one line, controls escaped.
    const abs = onOneLine(path);
    refuseStateFiles(ctx, real, abs);
    const st = existing(ctx, abs, real);
    if (input.old_string === "") {
      throw new KtError(
        "EMPTY_OLD_STRING",
        `old_string is empty, so there is nothing to find in ${abs}. To replace the whole file, use the write tool; to change part of it, put the exact text to replace in old_string, with a few lines of context.`,
      );
    }
    const oldString = normalize(input.old_string);
    const newString = normalize(input.new_string);
    if (input.old_string === input.new_string || oldString === newString) {
      throw new KtError("IDENTICAL_STRINGS", "old_string and new_string are identical — there is nothing to change.");
    }
    if (st.size > MAX_FILE_BYTES) {
      throw new KtError("FILE_TOO_LARGE", `${abs} is ${formatBytes(st.size)}, over the 10 MB limit for edit. Change it with bash (e.g. sed) or split the file.`);
    }
    const bytes = readIfExists(real, abs, ctx);
    if (bytes === null) throw notFound(ctx, abs);
    // A NUL past the sniffed head makes the file binary too (as read says): its snippet would carry it.
    const kind = sniffBinary(real, bytes.subarray(0, 4096)) ?? (bytes.indexOf(0, 4096) !== -1 ? "NUL bytes past its start" : null);
    if (kind) throw new KtError("BINARY_FILE", `${abs} is a binary file (${kind}, ${formatBytes(bytes.length)}); edit changes text files only.`);
    const baseSha = sha256(bytes);
    assertFresh(ctx, abs, real, baseSha, "edit");
    const text = decodeUtf8(bytes);
    if (text === null) {
      throw new KtError(
        "BINARY_FILE",
        `${abs} is not valid UTF-8 text; edit refuses it because changing it would corrupt the bytes that cannot be decoded. Replace it with write, or convert it first with bash (e.g. iconv).`,
      );
    }

    const file = Lf.of(text);
    const result = replace({ content: file.lf, oldString, newString, replaceAll: input.replace_all ?? false, strict: ctx.flags.strict });
    if (ctx.flags.trace) (ctx.info ?? ctx.warn)(renderTrace(abs, result.trace));
    const traced = ctx.flags.trace ? { trace: result.trace } : {};
    if (result.kind !== "ok") throw failure(abs, result, oldString.length, traced);

    if (result.newContent === file.lf) {
      // A quote that differs from the file only where the file keeps its own text (spacing,
      // typography) makes no change: say so rather than report an edit.
      throw new KtError(
        "IDENTICAL_STRINGS",
        `${NOT_PERFORMED} old_string was found in ${abs} (${how(result)}), but new_string differs from it only where the file keeps its own text, so ${abs} would stay exactly as it is. Change what you mean to change in new_string.`,
        { extra: { path: abs, strategy: result.strategy, startLine: result.matched.startLine, endLine: result.matched.endLine, ...traced } },
      );
    }
    const after = file.apply(result.edits, dominantEol(text));
    const diff = unifiedDiff(abs, text, after);
    let note: string | undefined;
    if (!ctx.flags.dryRun) {
      const out = Buffer.from(after, "utf8");
      note = guardedWrite(ctx, { display: abs, real, baseSha, bytes: hasBom(bytes) ? Buffer.concat([BOM_BYTES, out]) : out, verb: "edit" }).note;
    }
    const said = success(abs, result, input.replace_all ?? false, ctx.flags.dryRun);
    const content = note ? `${said}\n${note}` : said;
    return {
      content: ctx.flags.dryRun ? `${content}\n\n${diff.patch.trimEnd()}` : content,
      title: `Edit ${abs} · +${diff.additions} −${diff.deletions}`,
      diff: diff.patch,
      additions: diff.additions,
      deletions: diff.deletions,
      extra: {
        path: abs,
        strategy: result.strategy,
        replacements: result.replacements,
        startLine: result.written.startLine,
        endLine: result.written.endLine,
        ...(result.variant ? { variant: result.variant } : {}),
        ...(result.score === undefined ? {} : { score: Math.round(result.score * 1000) / 1000 }),
        dryRun: ctx.flags.dryRun,
        ...traced,
      },
    };
  },
});

function existing(ctx: ToolContext, abs: string, real: string): Stats {
  let st: Stats;
  try {
    st = statSync(real);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") {
      const miss = notFound(ctx, abs).message;
      throw new KtError("FILE_NOT_FOUND", `${miss}${/[.!?]$/.test(miss) ? "" : "."} To create a new file, use the write tool.`);
    }
    throw fsError(error, abs);
  }
  if (st.isDirectory()) throw new KtError("IS_DIRECTORY", `${abs} is a directory, not a file. Give the path of a file inside it; read ${abs} lists its entries.`);
  if (!st.isFile()) throw new KtError("INVALID_ARGS", `${abs} is not a regular file (it is a device, socket or pipe); edit changes regular files only.`);
  return st;
}

/** old_string and new_string are matched as the file is: LF line breaks, no BOM. */
function normalize(s: string): string {
  return (s.startsWith("\uFEFF") ? s.slice(1) : s).replace(/\r\n/g, "\n");
}

/**
 * The file's text with CRLF read as LF, and the way back: offsets into the LF text map onto
 * the original, so that only the edited spans change and every other line keeps its own
 * ending — in a file with mixed endings too.
 */
class Lf {
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

  /** Each edit's text takes the line ending its span had (the file's dominant one when the span had none). */
  apply(edits: readonly Edit[], fileEol: "\r\n" | "\n"): string {
    let out = "";
    let at = 0;
    for (const e of edits) {
      const start = this.toOriginal(e.start);
      const end = this.toOriginal(e.end);
      const span = this.original.slice(start, end);
      const eol = span.includes("\n") ? dominantEol(span) : fileEol;
      out += this.original.slice(at, start) + (eol === "\n" ? e.text : e.text.replace(/\n/g, eol));
      at = end;
    }
    return out + this.original.slice(at);
  }
}

const LABELS: Record<StrategyName, string> = {
  exact: "matched exactly",
  "line-trimmed": "matched with indentation and trailing whitespace ignored",
  "whitespace-normalized": "matched with whitespace normalization",
  "indentation-flexible": "matched with indentation adjusted",
  "escape-normalized": "matched after unescaping",
  "trimmed-boundary": "matched with leading and trailing whitespace trimmed",
  "block-anchor": "matched by its first and last lines",
  "context-aware": "matched by its first and last lines",
  "multi-occurrence": "matched exactly",
};

/** The parenthesis of the success line: how old_string was found, when not verbatim. */
function how(r: CascadeOk): string {
  if (r.strategy === "escape-normalized") {
    if (r.variant === "typographic") return "matched with typographic quotes, dashes and spaces folded";
    if (r.variant === "unescape+typographic") return "matched after unescaping and folding typographic characters";
    return "matched after unescaping \\n, \\t and quotes";
  }
  if (r.strategy === "block-anchor") return `${LABELS[r.strategy]}, the lines between ${Math.round(r.score! * 100)}% similar`;
  if (r.strategy === "context-aware") return `${LABELS[r.strategy]}, ${Math.round(r.score! * 100)}% of the lines between them equal`;
  return LABELS[r.strategy];
}

function success(abs: string, r: CascadeOk, replaceAll: boolean, dryRun: boolean): string {
  const count = `${r.replacements} ${r.replacements === 1 ? "replacement" : "replacements"}`;
  const head = replaceAll ? `Edited ${abs} (${count}).` : `Edited ${abs} (${count}, ${how(r)}).`;
  return [
    dryRun ? `${head} (dry run: nothing was written)` : head,
    snippet(r.newContent, r.written.startLine, r.written.endLine),
    "Review the changes. Edit the file again if the result is not what you intended.",
  ].join("\n");
}

/** The edited region ± SNIPPET_CONTEXT lines with real line numbers, middle elided past SNIPPET_MAX lines. */
export function snippet(content: string, startLine: number, endLine: number): string {
  const total = countLines(content);
  if (total === 0) return "The file is now empty.";
  const lines = content.split("\n");
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

const NOT_PERFORMED = "No replacement was performed:";

function failure(abs: string, r: Exclude<CascadeResult, CascadeOk>, oldLength: number, traced: object): KtError {
  const data = (extra: Record<string, unknown>) => ({ extra: { path: abs, ...extra, ...traced } });
  switch (r.kind) {
    case "ambiguous": {
      const shown = r.lines.slice(0, 20).join(", ");
      const more = r.count > 20 ? `, … and ${r.count - 20} more` : "";
      return new KtError(
        "AMBIGUOUS_MATCH",
        `${NOT_PERFORMED} old_string matches ${r.count} locations in ${abs} (lines ${shown}${more}). Add more surrounding lines to old_string so it uniquely identifies one location, or set replace_all to true to change all ${r.count}.`,
        data({ strategy: r.strategy, count: r.count, lines: r.lines }),
      );
    }
    case "not-found": {
      if (r.alreadyApplied) {
        const line = r.alreadyApplied.line;
        return new KtError(
          "ALREADY_APPLIED",
          `${NOT_PERFORMED} old_string was not found in ${abs}, but new_string already appears there once, at line ${line}: the edit seems to have been applied already. Read the file around line ${line} to confirm before changing anything else.`,
          data({ alreadyApplied: r.alreadyApplied, ...(r.nearMiss ? { nearMiss: r.nearMiss } : {}) }),
        );
      }
      return new KtError("NO_MATCH", notFoundProse(abs, r.nearMiss), data(r.nearMiss ? { nearMiss: r.nearMiss } : {}));
    }
    case "refused": {
      if (r.reason === "disproportionate") {
        return new KtError(
          "DISPROPORTIONATE_MATCH",
          `${NOT_PERFORMED} the closest match for old_string in ${abs} is lines ${r.startLine}–${r.endLine}, ${r.matchedChars.toLocaleString("en")} characters for an old_string of ${oldLength.toLocaleString("en")}: too loose a match to trust. Re-read that region and provide old_string exactly as it appears in the file, with all the text you mean to replace.`,
          data({ strategy: r.strategy, refused: "disproportionate", startLine: r.startLine, endLine: r.endLine, matchedChars: r.matchedChars, limitChars: r.limitChars }),
        );
      }
      const others = r.candidates.slice(1).map((c) => (c.startLine === c.endLine ? `line ${c.startLine}` : `lines ${c.startLine}–${c.endLine}`));
      const also = others.length > 0 ? ` It also resembles ${others.join(", ")}.` : "";
      return new KtError(
        "NO_MATCH",
        notFoundProse(abs, r.nearMiss, also),
        data({ strategy: r.strategy, refused: "doubtful", doubt: r.doubt, candidates: r.candidates, ...(r.nearMiss ? { nearMiss: r.nearMiss } : {}) }),
      );
    }
  }
}

function notFoundProse(abs: string, near: NearMiss | undefined, also = ""): string {
  const first = `${NOT_PERFORMED} old_string was not found in ${abs}.`;
  if (!near) {
    return `${first}\nRead the file (or the region you mean to change) and provide old_string exactly as it appears, including whitespace and indentation.${also}`;
  }
  const region = near.startLine === near.endLine ? `line ${near.startLine}` : `lines ${near.startLine}–${near.endLine}`;
  const differs = near.whitespaceOnly ? `differs in whitespace on line ${near.line}` : `differs on line ${near.line} at column ${near.column}`;
  const expected = excerpt(near.expected, near.column);
  const actual = excerpt(near.actual, near.column);
  return `${first}\nClosest near-miss is at ${region} (${differs}: expected ${expected}, file has ${actual}).${also} Read that region and provide old_string exactly as it appears in the file.`;
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

function visible(s: string): string {
  return s.replace(/[\\"\t\r\u0000-\u001f\u007f\u00a0\u1680\u2000-\u200b\u2028\u2029\u202f\u205f\u3000\ufeff]/g, (c) => {
    if (c === "\\") return "\\\\";
    if (c === '"') return '\\"';
    if (c === "\t") return "\\t";
    if (c === "\r") return "\\r";
    return `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
  });
}

/** The cascade as a person debugging it reads it (stderr). */
export function renderTrace(abs: string, trace: readonly TraceStep[]): string {
  const out = [`edit trace for ${abs}:`];
  trace.forEach((step, i) => {
    const n = step.candidateCount;
    out.push(`  ${i + 1}. ${step.strategy}: ${step.decision} — ${step.reason}${n > 0 ? ` (${n} ${n === 1 ? "candidate" : "candidates"})` : ""}`);
    for (const c of step.candidates) {
      const lines = c.startLine === c.endLine ? `line ${c.startLine}` : `lines ${c.startLine}–${c.endLine}`;
      out.push(`       ${c.accepted ? "+" : "-"} ${lines}${c.score === undefined ? "" : ` score ${c.score.toFixed(3)}`}`);
    }
  });
  return out.join("\n");
}
