// edit (SPEC §4.3): preconditions, then the replacer cascade on the LF-normalized text, then
// the edits mapped back onto the file's own bytes (its CRLFs, its BOM, every line outside
// the edits untouched) and written by the one writer. All model-facing edit prose is here.
import { p, type Infer } from "./params.ts";
import { statSync, type Stats } from "node:fs";
import { toolText } from "./_text.ts" with { type: "macro" };
import { defineTool, invalidArgs, KtError, type ToolContext } from "./tool.ts";
import { absolutePath, fsError, onOneLine, realPath } from "../core/paths.ts";
import { sha256 } from "../core/stamps.ts";
import { countLines, grouped, linesOf, MAX_FILE_BYTES } from "../core/text.ts";
import { decodeFile, describe, encodeText, UTF8, type Encoding } from "../core/encoding.ts";
import { formatBytes } from "../core/truncate.ts";
import { freshContent, guardedWrite, readIfExists, refuseStateFiles } from "../core/writer.ts";
import { diffPath, unifiedDiff } from "../core/diff.ts";
import { refuseWrite } from "../sandbox/policy.ts";
import { withDiagnostics } from "./diagnostics.ts";
import { notFound } from "../core/suggest.ts";
import { replace } from "../replacer/index.ts";
import { notebookEdit, type NotebookPlan } from "./_notebook.ts";
import { excerpt, Lf, snippet, visible } from "./_snippets.ts";
export { excerpt, snippet } from "./_snippets.ts";
import type { CascadeOk, CascadeResult, GuessedDepth, NearMiss, StrategyName, TraceStep } from "../replacer/index.ts";

const description = toolText("edit");

/** One change: the text to find and what replaces it. */
export const EditPair = p.object({
  old_string: p.string({ description: "The exact existing text to replace." }),
  new_string: p.string({ description: "The replacement text. Must differ from old_string." }),
  replace_all: p.optional(p.boolean({ description: "Replace every exact occurrence of old_string. Default false." })),
});

export const Parameters = p.object({
  file_path: p.string({ description: "Path of the file to edit (absolute preferred)." }),
  old_string: p.optional(p.string({ description: "The exact existing text to replace, with enough surrounding context to be unique in the file. Required unless edits is given." })),
  new_string: p.optional(p.string({ description: "The replacement text. Must differ from old_string. Required unless edits is given." })),
  replace_all: p.optional(p.boolean({ description: "Replace every exact occurrence of old_string instead of requiring uniqueness. Default false." })),
  edits: p.optional(
    p.array(EditPair, { minLength: 1, description: "Several changes to this one file, instead of old_string/new_string: applied in order, each to the result of the one before, all or none." }),
  ),
});

type Input = Infer<typeof Parameters>;
type Pair = Infer<typeof EditPair>;

/** The edit's pairs: `edits`, or the one pair of the top-level fields — never both, never neither. */
function pairsOf(input: Input): Pair[] {
  const single = input.old_string !== undefined || input.new_string !== undefined || input.replace_all !== undefined;
  if (input.edits !== undefined) {
    if (single) throw invalidArgs("edit", `give either "edits" or "old_string"/"new_string", not both`);
    return input.edits;
  }
  if (input.old_string === undefined) throw invalidArgs("edit", `parameter "old_string" is required (or "edits", a list of {old_string, new_string} changes)`);
  if (input.new_string === undefined) throw invalidArgs("edit", `parameter "new_string" is required`);
  return [{ old_string: input.old_string, new_string: input.new_string, ...(input.replace_all === undefined ? {} : { replace_all: input.replace_all }) }];
}

/** One applied pair: how the cascade placed it (absent for an empty file filled). */
interface Step {
  result?: CascadeOk;
  replaceAll: boolean;
}

export default defineTool({
  name: "edit",
  description: description.trim(),
  parameters: Parameters,
  primary: "file_path",
  examples: [
    "kt edit src/a.ts --old-string 'const x = 1;' --new-string 'const x = 2;'",
    "kt edit src/a.ts --old-string-file old.txt --new-string-file new.txt --dry-run --trace",
    "kt edit src/a.ts --old-string oldName --new-string newName --replace-all",
    "kt edit src/a.ts --edits-file changes.json   # [{\"old_string\": …, \"new_string\": …}, …]",
  ],
  longText: ["old_string", "new_string", "edits"],
  aliases: { path: "file_path", filePath: "file_path", oldString: "old_string", newString: "new_string", replaceAll: "replace_all" },
  annotations: { readOnlyHint: false, destructiveHint: true },
  async execute(input, ctx) {
    const path = absolutePath(ctx, input.file_path);
    const real = realPath(ctx, path);
    // Every later mention of the path is for the model: shown on one line, controls escaped.
    const abs = onOneLine(path);
    refuseStateFiles(ctx, real, abs);
    refuseWrite(ctx, real, abs);
    const pairs = pairsOf(input);
    const multi = input.edits !== undefined;
    const creates = pairs[0]!.old_string === "";
    const st = existing(ctx, abs, real, creates);
    // SPEC §4.3's preconditions come before the read check: each pair must say something to do.
    pairs.forEach((pair, i) => {
      const at = multi ? { index: i, total: pairs.length } : undefined;
      try {
        precheck(abs, pair, i > 0 || (st !== undefined && st.size > 0));
      } catch (error) {
        throw error instanceof KtError && at ? numbered(error, at, undefined) : error;
      }
    });
    if (st && st.size > MAX_FILE_BYTES) {
      throw new KtError("FILE_TOO_LARGE", `${abs} is ${formatBytes(st.size)}, over the 10 MB limit for edit. Change it with bash (e.g. sed) or split the file.`);
    }
    const read = st ? readIfExists(real, abs, ctx) : null;
    if (st && read === null) throw notFound(ctx, abs);
    // Decoded once (core/encoding.ts): a binary file, or one whose bytes would not survive
    // their encoding's round trip, is refused before anything else.
    let decoded: { bytes: Uint8Array; file: ReturnType<typeof decodeFile> } | undefined;
    const decode = (bytes: Uint8Array): { text: string; encoding: Encoding } => {
      // The same bytes are decoded once (the check before the read check, then the plan).
      if (decoded?.bytes !== bytes) decoded = { bytes, file: decodeFile(real, bytes) };
      const file = decoded.file;
      // A NUL past the sniffed head makes the file binary too (as read says): its snippet would carry it.
      if (file.kind === "binary") throw new KtError("BINARY_FILE", `${abs} is a binary file (${file.what}, ${formatBytes(bytes.length)}); edit changes text files only.`);
      if (file.kind === "undecodable") {
        throw new KtError(
          "BINARY_FILE",
          file.why === "invalid-utf-8"
            ? `${abs} is not valid UTF-8 text; edit refuses it because changing it would corrupt the bytes that cannot be decoded. Replace it with write, or convert it first with bash (e.g. iconv).`
            : `${abs} is not ${file.encoding.label} text throughout (${describe(file.encoding)}): its bytes from line ${file.line} on do not decode and re-encode to themselves, so edit refuses it rather than change bytes outside the edit. Nothing was written. Replace it with write, or convert it first with bash (e.g. iconv).`,
        );
      }
      return file;
    };
    if (read !== null) decode(read);
    const bytes = read === null ? null : freshContent(ctx, abs, real, read, "edit");
    // Decode, apply every pair, encode: run once, and again under the writer's lock on what a
    // parallel edit of this session wrote meanwhile (SPEC §7.5).
    const plan = (bytes: Uint8Array | null) => {
      let text = "";
      let encoding = UTF8;
      if (bytes !== null) ({ text, encoding } = decode(bytes));
      // A notebook is edited as the text of its cells that read shows (SPEC §8.5).
      const notebook: NotebookPlan | undefined = bytes !== null ? notebookEdit(abs, real, text) : undefined;
      if (notebook) text = notebook.view;
      const traces: TraceStep[][] = [];
      const steps: Step[] = [];
      let current = text;
      for (let i = 0; i < pairs.length; i++) {
        const at = multi ? { index: i, total: pairs.length } : undefined;
        try {
          const { next, step } = applyPair(abs, current, pairs[i]!, ctx.flags, text, (trace) => {
            traces.push(trace);
            if (ctx.flags.trace) (ctx.info ?? ctx.warn)(renderTrace(abs, trace, at));
          });
          current = next;
          steps.push(step);
        } catch (error) {
          if (error instanceof KtError && at) throw numbered(error, at, ctx.flags.trace ? traces : undefined);
          throw error;
        }
      }
      if (bytes !== null && current === text) {
        const r = steps[steps.length - 1]!.result;
        // A quote that differs from the file only where the file keeps its own text (spacing,
        // typography) makes no change: say so rather than report an edit.
        throw new KtError(
          "IDENTICAL_STRINGS",
          multi || !r
            ? `${NOT_PERFORMED} every old_string was found in ${abs}, but the edits together leave it exactly as it is. Change what you mean to change in new_string.`
            : `${NOT_PERFORMED} old_string was found in ${abs} (${how(r)}), but new_string differs from it only where the file keeps its own text, so ${abs} would stay exactly as it is. Change what you mean to change in new_string.`,
          { extra: { path: abs, ...(r ? { strategy: r.strategy, startLine: r.matched.startLine, endLine: r.matched.endLine } : {}), ...(ctx.flags.trace ? { trace: multi ? traces : traces[0] } : {}) } },
        );
      }
      const written = notebook?.write(current);
      return { text, current, steps, traces, notes: written?.note, out: encodeText(written ? written.text : current, encoding, abs) };
    };
    const created = bytes === null;
    let planned = plan(bytes);
    let note: string | undefined;
    if (!ctx.flags.dryRun) {
      note = guardedWrite(ctx, {
        display: abs,
        real,
        baseSha: bytes === null ? null : sha256(bytes),
        bytes: planned.out,
        verb: "edit",
        mkdirs: created,
        redo: (now) => (planned = plan(now)).out,
      }).note;
    }
    const { text, current, steps, traces, notes } = planned;
    const diff = unifiedDiff(diffPath(ctx, abs), text, current, { change: created ? "create" : "update" });
    const traced = ctx.flags.trace ? { trace: multi ? traces : traces[0] } : {};
    const reported = report(abs, text, current, steps, { multi, created, dryRun: ctx.flags.dryRun });
    const done = notes ? { ...reported, content: `${reported.content}\n${notes}` } : reported;
    return withDiagnostics(ctx, {
      content: ctx.flags.dryRun ? `${done.content}\n\n${diff.patch.trimEnd()}` : note ? `${done.content}\n${note}` : done.content,
      title: created ? `Edit ${abs} · new file · ${linesOf(countLines(current))}` : `Edit ${abs} · +${diff.additions} −${diff.deletions}`,
      diff: diff.patch,
      additions: diff.additions,
      deletions: diff.deletions,
      extra: { path: abs, ...done.extra, ...(created ? { created: true } : {}), dryRun: ctx.flags.dryRun, ...traced },
    }, [{ display: abs, real, before: created ? null : text, after: current }]);
  },
});

/**
 * One pair applied to the file's current text (its own line endings): the cascade on the
 * LF-normalized text, its edits mapped back so that every untouched line keeps its ending.
 */
function applyPair(
  abs: string, current: string, pair: Pair, flags: ToolContext["flags"], original: string, traced: (trace: TraceStep[]) => void,
): { next: string; step: Step } {
  const replaceAll = pair.replace_all ?? false;
  precheck(abs, pair, current !== "");
  // An empty file takes new_string as given, in the line endings the model wrote.
  if (pair.old_string === "") return { next: pair.new_string, step: { replaceAll } };
  const oldString = normalize(pair.old_string);
  const newString = normalize(pair.new_string);
  const file = Lf.of(current);
  const result = replace({ content: file.lf, oldString, newString, replaceAll, strict: flags.strict });
  traced(result.trace);
  if (result.kind !== "ok") throw failure(abs, result, oldString.length, flags.trace ? { trace: result.trace } : {});
  return { next: file.apply(result.edits), step: { result, replaceAll } };
}

/** An empty old_string only where there is nothing to find (a missing or empty file); never old_string = new_string. */
function precheck(abs: string, pair: Pair, nonEmpty: boolean): void {
  if (pair.old_string === "" && nonEmpty) {
    throw new KtError(
      "EMPTY_OLD_STRING",
      `old_string is empty, so there is nothing to find in ${abs}. To replace the whole file, use the write tool; to change part of it, put the exact text to replace in old_string, with a few lines of context.`,
    );
  }
  if (pair.old_string === pair.new_string || normalize(pair.old_string) === normalize(pair.new_string)) {
    throw new KtError("IDENTICAL_STRINGS", "old_string and new_string are identical — there is nothing to change.");
  }
}

/** A failed pair of several: which one, and that none was applied, before its own prose. */
function numbered(error: KtError, at: { index: number; total: number }, traces: TraceStep[][] | undefined): KtError {
  const before = at.index > 0 ? ` It was looked for in the file as the edits before it left it.` : "";
  const head = at.total === 1
    ? "edits[0] failed, so nothing was written."
    : `edits[${at.index}] (edit ${at.index + 1} of ${at.total}) failed, so none of the ${at.total} edits was applied.${before}`;
  const extra = { ...(error.metadata.extra ?? {}), edit: at.index, ...(traces ? { trace: traces } : {}) };
  return new KtError(error.code, `${head}\n${error.message}`, { ...error.metadata, extra });
}

/** The model-facing success text and the metadata facts of the whole edit. */
function report(
  abs: string, before: string, after: string, steps: Step[], opts: { multi: boolean; created: boolean; dryRun: boolean },
): { content: string; extra: Record<string, unknown> } {
  const dry = opts.dryRun ? " (dry run: nothing was written)" : "";
  const lf = after.replace(/\r\n/g, "\n");
  const lines = countLines(lf);
  if (steps.length === 1 && !steps[0]!.result) {
    const verb = opts.created ? `Created ${abs}` : `Filled the empty file ${abs}`;
    return {
      content: `${verb} with new_string (${lines} ${lines === 1 ? "line" : "lines"}).${dry}`,
      extra: { replacements: 1, startLine: 1, endLine: Math.max(1, lines) },
    };
  }
  if (!opts.multi) {
    const r = steps[0]!.result!;
    return {
      content: success(abs, r, steps[0]!.replaceAll, opts.dryRun),
      extra: {
        strategy: r.strategy,
        replacements: r.replacements,
        startLine: r.written.startLine,
        endLine: r.written.endLine,
        ...(r.variant ? { variant: r.variant } : {}),
        ...(r.via ? { via: r.via } : {}),
        ...(r.score === undefined ? {} : { score: Math.round(r.score * 1000) / 1000 }),
        ...(r.numbering ? { numbering: r.numbering.kind } : {}),
        ...(r.guessed ? { guessedDepth: r.guessed.map((g) => g.line) } : {}),
      },
    };
  }
  const replacements = steps.reduce((n, s) => n + (s.result?.replacements ?? 1), 0);
  const fuzzy = steps.map((s, i) => (s.result && s.result.strategy !== "exact" && s.result.strategy !== "multi-occurrence" ? `edits[${i}] ${how(s.result)}` : "")).filter(Boolean);
  const matched = fuzzy.length > 0 ? fuzzy.join("; ") : steps.length === 1 ? "matched exactly" : "all matched exactly";
  const region = changedRegion(before.replace(/\r\n/g, "\n"), lf);
  const head = `Edited ${abs} (${steps.length} ${steps.length === 1 ? "edit" : "edits"}, ${replacements} ${replacements === 1 ? "replacement" : "replacements"}; ${matched}).${dry}`;
  const said = steps.flatMap((s, i) => (s.result ? notes(s.result).map((n) => `edits[${i}]: ${n}`) : []));
  return {
    content: [head, ...said, snippet(lf, region.startLine, region.endLine), "Review the changes. Edit the file again if the result is not what you intended."].join("\n"),
    extra: {
      replacements,
      startLine: region.startLine,
      endLine: region.endLine,
      edits: steps.map((s) => (s.result
        ? { strategy: s.result.strategy, replacements: s.result.replacements, ...(s.result.variant ? { variant: s.result.variant } : {}) }
        : { strategy: "empty-file", replacements: 1 })),
    },
  };
}

/** Lines of `after` that differ from `before`: everything between their common first and last lines. */
function changedRegion(before: string, after: string): { startLine: number; endLine: number } {
  const a = before.split("\n");
  const b = after.split("\n");
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const startLine = head + 1;
  return { startLine, endLine: Math.max(startLine, b.length - tail) };
}

/** The file's stat; undefined for a missing file that an empty old_string creates. */
function existing(ctx: ToolContext, abs: string, real: string, creates: boolean): Stats | undefined {
  let st: Stats;
  try {
    st = statSync(real);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") {
      if (creates) return undefined;
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

const LABELS: Record<StrategyName, string> = {
  exact: "matched exactly",
  "trailing-whitespace": "matched with trailing whitespace ignored",
  "indentation-flexible": "matched with indentation adjusted",
  "whitespace-normalized": "matched with whitespace normalization",
  "escape-normalized": "matched after unescaping",
  "trimmed-boundary": "matched with leading and trailing whitespace trimmed",
  "block-anchor": "matched by its first and last lines",
  "context-aware": "matched by its first and last lines",
  "multi-occurrence": "matched exactly",
};

/** What a fuzzy strategy forgave, for an ambiguity found only with its help. */
const FORGIVEN: Record<StrategyName, string> = {
  exact: "",
  "trailing-whitespace": "once trailing whitespace is ignored",
  "indentation-flexible": "once indentation is ignored",
  "whitespace-normalized": "once whitespace is normalized",
  "escape-normalized": "once escapes and typographic characters are normalized",
  "trimmed-boundary": "once its leading and trailing whitespace is trimmed",
  "block-anchor": "by its first and last lines",
  "context-aware": "by its first and last lines",
  "multi-occurrence": "",
};

/** The parenthesis of the success line: how old_string was found, when not verbatim. */
function how(r: CascadeOk): string {
  if (r.strategy === "escape-normalized") {
    // Read line by line as well (two slips at once): how the lines were compared too.
    const also = r.via ? `, ${LABELS[r.via].replace(/^matched /, "")}` : "";
    if (r.variant === "typographic") return `matched with typographic quotes, dashes and spaces folded${also}`;
    if (r.variant === "unescape+typographic") return `matched after unescaping and folding typographic characters${also}`;
    return `matched after unescaping backslash escapes${also}`;
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
    ...notes(r),
    snippet(r.newContent, r.written.startLine, r.written.endLine),
    "Review the changes. Edit the file again if the result is not what you intended.",
  ].join("\n");
}

/** What the model should know of how its quote was read, beyond the strategy: one sentence each. */
function notes(r: CascadeOk): string[] {
  return [...(r.numbering ? [numberedNote(r.numbering)] : []), ...guessedNotes(r.guessed ?? [])];
}

/**
 * SPEC §8.3 "Guessed depth is said": one sentence per run of consecutive inserted lines given
 * one depth that old_string's indentation did not give.
 */
function guessedNotes(guessed: readonly GuessedDepth[]): string[] {
  const runs: GuessedDepth[][] = [];
  for (const g of guessed) {
    const run = runs[runs.length - 1];
    const last = run?.[run.length - 1];
    if (run && last && last.line + 1 === g.line && last.lead === g.lead) run.push(g);
    else runs.push([g]);
  }
  return runs.map((run) => {
    const first = run[0]!;
    const last = run[run.length - 1]!;
    const which = run.length === 1 ? `line ${first.line} goes` : `lines ${first.line}–${last.line} go`;
    const alike = first.like ?? last.like;
    const like = alike === undefined ? "" : `, like line ${alike}`;
    return `old_string's indentation did not say how deep ${which}, so ${run.length === 1 ? "it was" : "they were"} ${depthWords(first.lead)}${like}; check that this is the depth you meant.`;
  });
}

function depthWords(lead: string): string {
  if (lead === "") return "not indented";
  const tabs = [...lead].filter((c) => c === "\t").length;
  const spaces = lead.length - tabs;
  const count = (n: number, unit: string) => `${n} ${unit}${n === 1 ? "" : "s"}`;
  return `indented ${[tabs > 0 ? count(tabs, "tab") : "", spaces > 0 ? count(spaces, "space") : ""].filter(Boolean).join(" and ")}`;
}

function display(n: NonNullable<CascadeOk["numbering"]>): string {
  return `line numbers as ${n.kind === "read" ? "read shows them" : "cat -n prints them"} ("${visible(n.prefix)}")`;
}

/** SPEC §8.3: old_string pasted with a display's line numbers was matched without them. */
function numberedNote(n: NonNullable<CascadeOk["numbering"]>): string {
  return `old_string's lines began with ${display(n)}, which are not part of the file: it was matched without them, and new_string was written without them.`;
}

/** The same, when even without them old_string was not found (or not uniquely). */
function numberedFailure(n: NonNullable<CascadeOk["numbering"]>): string {
  if (n.partial) {
    return `old_string has ${display(n)}, which are not part of the file; they were left in, since they do not number each of its lines in sequence. Leave them out of old_string and new_string.`;
  }
  return `old_string's lines began with ${display(n)}, which are not part of the file, so it was also looked for without them. Leave them out of old_string and new_string.`;
}

const NOT_PERFORMED = "No replacement was performed:";

function failure(abs: string, r: Exclude<CascadeResult, CascadeOk>, oldLength: number, traced: object): KtError {
  const error = failureOf(abs, r, oldLength, traced);
  if (!r.numbering) return error;
  // The numbers were taken off to look again (not when only some lines carry them: then left in).
  const extra = { ...(error.metadata.extra ?? {}), ...(r.numbering.partial ? {} : { numbering: r.numbering.kind }) };
  return new KtError(error.code, `${error.message} ${numberedFailure(r.numbering)}`, { ...error.metadata, extra });
}

function failureOf(abs: string, r: Exclude<CascadeResult, CascadeOk>, oldLength: number, traced: object): KtError {
  const data = (extra: Record<string, unknown>) => ({ extra: { path: abs, ...extra, ...traced } });
  switch (r.kind) {
    case "ambiguous": {
      const shown = r.lines.slice(0, 20).join(", ");
      const more = r.count > 20 ? `, … and ${r.count - 20} more` : "";
      return new KtError(
        "AMBIGUOUS_MATCH",
        r.strategy === "exact"
          ? `${NOT_PERFORMED} old_string matches ${r.count} locations in ${abs} (lines ${shown}${more}). Add more surrounding lines to old_string so it uniquely identifies one location, or set replace_all to true to change all ${r.count}.`
          : `${NOT_PERFORMED} old_string matches ${r.count} locations in ${abs} ${FORGIVEN[r.strategy]} (lines ${shown}${more}), and none exactly. Add more surrounding lines to old_string so it uniquely identifies one location, and quote it exactly as it appears in the file (replace_all changes exact matches only).`,
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
        const near = r.nearMiss;
        const first = near ? ` Its first line that differs from old_string is line ${near.line} (expected ${excerpt(near.expected, near.column)}, file has ${excerpt(near.actual, near.column)}).` : "";
        return new KtError(
          "DISPROPORTIONATE_MATCH",
          `${NOT_PERFORMED} the closest match for old_string in ${abs} is lines ${r.startLine}–${r.endLine}, ${grouped(r.matchedChars)} characters for an old_string of ${grouped(oldLength)}: too loose a match to trust.${first} Re-read that region and provide old_string exactly as it appears in the file, with all the text you mean to replace.`,
          data({ strategy: r.strategy, refused: "disproportionate", startLine: r.startLine, endLine: r.endLine, matchedChars: r.matchedChars, limitChars: r.limitChars, ...(near ? { nearMiss: near } : {}) }),
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

/** The cascade as a person debugging it reads it (stderr). */
export function renderTrace(abs: string, trace: readonly TraceStep[], at?: { index: number; total: number }): string {
  const out = [`edit trace for ${abs}${at ? ` (edits[${at.index}], ${at.index + 1} of ${at.total})` : ""}:`];
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
