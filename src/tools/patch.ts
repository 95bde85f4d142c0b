// apply_patch (SPEC §7.1): parse the patch, locate every hunk of every file, compute every
// new content, and only then write them all through the multi-file commit — or nothing.
// All model-facing patch prose is here.
import { p } from "./params.ts";
import { existsSync, lstatSync, statSync, type Stats } from "node:fs";
import { basename, dirname, isAbsolute, join } from "node:path";
import { toolText } from "./_text.ts" with { type: "macro" };
import { defineTool, KtError, type ToolContext } from "./tool.ts";
import { absolutePath, fsError, onOneLine, realPath } from "../core/paths.ts";
import { getStamps, sha256, type Stamp } from "../core/stamps.ts";
import { dominantEol, MAX_FILE_BYTES } from "../core/text.ts";
import { decodeFile, describe, encodeText, UTF8 } from "../core/encoding.ts";
import { formatBytes } from "../core/truncate.ts";
import { sharingEditorconfigs } from "../core/editorconfig.ts";
import { freshContent, readIfExists, stateFilesGuard } from "../core/writer.ts";
import { commitChanges, type Change } from "../core/commit.ts";
import { withDiagnostics } from "./diagnostics.ts";
import { diffPath, unifiedDiff } from "../core/diff.ts";
import { refuseWrite } from "../sandbox/policy.ts";
import { suggestions } from "../core/suggest.ts";
import { excerpt, Lf, SNIPPET_CONTEXT, snippetOf, SnippetLines } from "./_snippets.ts";
import { parsePatch, type FileOp, type Hunk, type PatchForm } from "../patch/parse.ts";
import { applyHunks, type HunkFailure, type HunkPlacement } from "../patch/apply.ts";
import { editsDiff } from "../patch/diff.ts";
import type { NearMiss, TraceStep } from "../replacer/index.ts";

const description = toolText("patch");

export const Parameters = p.object({
  patch: p.string({ description: 'The whole patch: "*** Begin Patch" … "*** End Patch" with "*** Add File:", "*** Delete File:", "*** Update File:" (optional "*** Move to:") sections, or a unified diff.' }),
});

/** A patch over this many characters is large: its garbage is collected between the steps. */
const LARGE_PATCH = 8 * 1024 * 1024;

/** At most this many snippets in the answer; the rest are counted. */
const MAX_SNIPPETS = 12;

export default defineTool({
  name: "patch",
  schemaName: "apply_patch",
  description: description.trim(),
  parameters: Parameters,
  primary: "patch",
  longText: ["patch"],
  examples: [
    "kt patch --patch-file change.patch",
    "git diff | kt patch --patch-file - --dry-run",
    "kt patch --patch-file fix.patch --trace",
  ],
  // Codex's function-style apply_patch names the field "input".
  aliases: { input: "patch", diff: "patch" },
  annotations: { readOnlyHint: false, destructiveHint: true },
  async execute(input, ctx) {
    const parsed = parsePatch(input.patch);
    if (!parsed.ok) throw parseFailure(parsed, input.patch.trim() === "");
    // A large patch leaves its parse's line arrays as garbage: collected before the next copies
    // are made, the peak stays near what is live (issue 29: ≤ 3× the patch plus its files).
    const large = input.patch.length > LARGE_PATCH;
    if (large) Bun.gc(true);
    const base = parsed.form === "unified" ? patchBase(ctx, parsed.ops) : ctx;
    // kt's own state is never a target: its real path resolved once for every file (a dry run refuses what the commit would).
    const refuse = stateFilesGuard(ctx);
    const plans = parsed.ops.map((op) => resolve(base, op, refuse));
    duplicates(plans);
    // The session's stamps of every file the patch changes or removes, in one query, asked
    // where the first file's was (a refusal before it still comes first).
    let stamps: ReadonlyMap<string, Stamp> | undefined;
    const stampOf = (real: string) => (stamps ??= getStamps(ctx, plans.filter((p) => p.op.kind !== "add").map((p) => p.real))).get(real);
    const done = sharingEditorconfigs(() =>
      plans.map((plan) => {
        const d = compute(ctx, plan, parsed.form, stampOf);
        if (large) Bun.gc(true);
        return d;
      }),
    );

    // An update whose file a parallel kt call of this session changed meanwhile is worked
    // out again under the commit's lock, from the file as it is then (SPEC §7.5).
    let redone = false;
    const changes = done.flatMap((d, i) => {
      const plan = plans[i]!;
      const op = plan.op;
      if (op.kind !== "update" || !redoable(plan)) return d.changes;
      return d.changes.map((c) => ({
        ...c,
        redo(now: Uint8Array) {
          const again = fromBytes(ctx, plan, op, parsed.form, statSync(c.real), now);
          done[i] = again;
          redone = true;
          return again.changes[0]!.bytes!;
        },
      }));
    });
    // The answer is written while the disk flushes the new contents; a change worked out
    // again under the lock writes it again.
    let answer: Answer | undefined;
    if (!ctx.flags.dryRun) await commitChanges(ctx, changes, { tool: "patch", verb: "patch", whileSyncing: () => void (answer = answerOf(done, ctx.flags.dryRun)) });
    if (answer === undefined || redone) answer = answerOf(done, ctx.flags.dryRun);
    const { diff, additions, deletions, content } = answer;

    const trace = done.flatMap((d) => d.placements.map((p) => ({ path: d.abs, hunk: p.index + 1, patchLine: p.patchLine, strategy: p.strategy, startLine: p.startLine, endLine: p.endLine, trace: p.trace })));
    if (ctx.flags.trace) (ctx.info ?? ctx.warn)(renderTrace(done));
    const changed = done.flatMap((d) => d.changes.map((c) => ({ display: c.display, real: c.real, before: c.previous, after: c.bytes })));
    return withDiagnostics(ctx, {
      content: ctx.flags.dryRun ? `${content}\n\n${diff.trimEnd()}` : content,
      title: `Patch ${done.length} ${done.length === 1 ? "file" : "files"} · +${additions} −${deletions}`,
      diff,
      additions,
      deletions,
      extra: {
        files: done.map((d) => ({ path: d.abs, action: d.action, ...(d.movedFrom ? { movedFrom: d.movedFrom } : {}), additions: d.diff.additions, deletions: d.diff.deletions })),
        form: parsed.form,
        dryRun: ctx.flags.dryRun,
        ...(ctx.flags.trace ? { trace } : {}),
      },
    }, changed);
  },
});

interface Plan {
  op: FileOp;
  /**
   * What a delete, or the source side of a move, removes: the named path itself when it is a
   * symbolic link (the link goes, its target stays), else the real path.
   */
  removal: string;
  /** The absolute path as shown (control characters escaped, issue 11 item 17). */
  abs: string;
  /** The absolute path as given, for looking up near names. */
  given: string;
  real: string;
  /** Move destination. */
  to?: { abs: string; given: string; real: string };
}

type Action = "add" | "update" | "delete" | "move";

interface Done {
  action: Action;
  abs: string;
  movedFrom?: string;
  changes: Change[];
  placements: HunkPlacement[];
  /** The new text (LF), for snippets. */
  lf?: string;
  diff: ReturnType<typeof unifiedDiff>;
}

/**
 * Where a unified diff's paths are resolved (SPEC §8.6): from the working directory, unless
 * a file it changes or removes is not there but every such file is there from the top of the
 * enclosing git repository — a `git diff` names its files from the top, and `git apply` in a
 * subdirectory reads them so.
 */
function patchBase(ctx: ToolContext, ops: readonly FileOp[]): ToolContext {
  const existing = ops.filter((op) => op.kind !== "add" && !isAbsolute(op.path));
  const here = (dir: string, op: FileOp) => exists(join(dir, op.path)) || (op.kind === "update" && op.altPath !== undefined && exists(join(dir, op.altPath)));
  if (existing.length === 0 || existing.every((op) => here(ctx.cwd, op))) return ctx;
  const top = gitTop(ctx.cwd);
  if (top === null || top === ctx.cwd || !existing.every((op) => here(top, op))) return ctx;
  return { ...ctx, cwd: top };
}

/** The top of the git work tree holding `dir` (the nearest directory with a .git), or null. */
function gitTop(dir: string): string | null {
  for (let d = dir; ; d = dirname(d)) {
    if (existsSync(join(d, ".git"))) return d;
    if (dirname(d) === d) return null;
  }
}

function resolve(ctx: ToolContext, op: FileOp, refuseState: (real: string, display: string) => void): Plan {
  let abs = absolutePath(ctx, op.path);
  if (op.kind === "update" && op.altPath !== undefined && !exists(realPath(ctx, abs))) {
    const alt = absolutePath(ctx, op.altPath);
    if (exists(realPath(ctx, alt))) abs = alt;
  }
  const real = realPath(ctx, abs);
  // Every path the patch names is shown on one line: a newline or escape in it (a quoted
  // git path can hold one) must not forge a line of the answer or reach a terminal raw.
  const shown = onOneLine(abs);
  refuseState(real, shown);
  refuseWrite(ctx, real, shown);
  if (op.kind === "update" && op.moveTo !== undefined) {
    const toAbs = absolutePath(ctx, op.moveTo);
    const toReal = realPath(ctx, toAbs);
    refuseState(toReal, onOneLine(toAbs));
    refuseWrite(ctx, toReal, onOneLine(toAbs));
    return { op, abs: shown, given: abs, real, removal: removalPath(ctx, abs, real), to: { abs: onOneLine(toAbs), given: toAbs, real: toReal } };
  }
  return { op, abs: shown, given: abs, real, removal: op.kind === "delete" ? removalPath(ctx, abs, real) : real };
}

function removalPath(ctx: ToolContext, abs: string, real: string): string {
  try {
    if (!lstatSync(abs).isSymbolicLink()) return real;
  } catch {
    return real;
  }
  return join(realPath(ctx, dirname(abs)), basename(abs));
}

function exists(real: string): boolean {
  try {
    statSync(real);
    return true;
  } catch {
    return false;
  }
}

/** One file, one section: two sections on one file would each be computed from the old content. */
function duplicates(plans: readonly Plan[]): void {
  const seen = new Map<string, string>();
  for (const p of plans) {
    for (const target of [p.real, p.to?.real]) {
      if (target === undefined) continue;
      const first = seen.get(target);
      if (first !== undefined) {
        throw new KtError(
          "INVALID_ARGS",
          `Invalid patch: ${first} is changed by two sections of the patch (the second at patch line ${p.op.patchLine}). Nothing was changed. Put every change to one file in one "*** Update File" section, hunks in file order.`,
        );
      }
      seen.set(target, target === p.real ? p.abs : p.to!.abs);
    }
  }
}

function compute(ctx: ToolContext, plan: Plan, form: PatchForm, stampOf: (real: string) => Stamp | undefined): Done {
  const { op, abs, real } = plan;
  if (op.kind === "add") {
    const st = statOrNull(real, abs);
    if (st) {
      throw new KtError(
        "FILE_EXISTS",
        st.isDirectory()
          ? `Refusing to add ${abs}: a directory of that name exists. Nothing was changed. Choose another path for the new file.`
          : `Refusing to add ${abs}: the file already exists. Nothing was changed. To change it, read it and use "*** Update File: ${onOneLine(op.path)}" with hunks instead; to replace it whole, use "*** Delete File" and "*** Add File" in two steps, or the write tool.`,
      );
    }
    const bytes = encodeText(op.content, UTF8, abs);
    // The metadata's diff of a huge new file would be a second copy of it that no UI shows
    // whole: only its count is kept (a dry run, whose answer is the diff, still makes it).
    const diff = op.content.length > LARGE_PATCH && !ctx.flags.dryRun
      ? { ...unifiedDiff(diffPath(ctx, plan.given), "", "", { change: "create" }), additions: lineCount(op.content) }
      : unifiedDiff(diffPath(ctx, plan.given), "", op.content, { change: "create" });
    return {
      action: "add",
      abs,
      changes: [{ display: abs, real, baseSha: null, previous: null, bytes, ...(op.mode !== undefined ? { mode: op.mode } : {}) }],
      placements: [],
      lf: op.content,
      diff,
    };
  }

  const verb = op.kind === "delete" ? "delete" : "update";
  const st = statOrNull(real, abs);
  if (!st) {
    const near = suggestions(ctx, plan.given);
    const miss = near.length > 0 ? ` Did you mean one of these? ${near.join(", ")}.` : "";
    const create = op.kind === "update" ? ` To create it, use "*** Add File: ${onOneLine(op.path)}".` : "";
    throw new KtError("FILE_NOT_FOUND", `Refusing to ${verb} ${abs}: the file does not exist. Nothing was changed.${miss}${create}`);
  }
  if (st.isDirectory()) throw new KtError("IS_DIRECTORY", `Refusing to ${verb} ${abs}: it is a directory, not a file. Nothing was changed. Name a file inside it.`);
  if (!st.isFile()) throw new KtError("INVALID_ARGS", `Refusing to ${verb} ${abs}: it is not a regular file (a device, socket or pipe). Nothing was changed.`);
  if (st.size > MAX_FILE_BYTES) {
    throw new KtError("FILE_TOO_LARGE", `${abs} is ${formatBytes(st.size)}, over the 10 MB limit for patch. Nothing was changed. Change it with bash (e.g. sed) or split the file.`);
  }
  // Read through a descriptor checked inside the root: content from outside it must never
  // reach a diff, a dry run or a near-miss.
  const read = readIfExists(real, abs, ctx);
  if (read === null) throw new KtError("FILE_NOT_FOUND", `Refusing to ${verb} ${abs}: the file does not exist. Nothing was changed.`);
  // A file the session has read must not have changed since (a stamp that lags a parallel
  // kt write of this session is settled under the lock); one it never read may be patched,
  // since the hunks' context lines prove what the model saw (SPEC §7.1). Each content is
  // hashed once: for the check and as the hash the change is computed from.
  const sha = sha256(read);
  const stamp = stampOf(real);
  const bytes = stamp ? freshContent(ctx, abs, real, read, "patch", { stamp, sha }) : read;
  return fromBytes(ctx, plan, op, form, st, bytes, bytes === read ? sha : undefined);
}

/**
 * Whether a change to this file may be worked out again from the content a parallel kt call
 * of the session left (SPEC §7.5): an update in place may; a delete or a move keeps the
 * content it was computed from, or is STALE_FILE.
 */
function redoable(plan: Plan): boolean {
  return plan.op.kind === "update" && !(plan.to && plan.to.real !== plan.real);
}

/** The change to an existing file (delete, update, move), computed from its bytes (whose sha256 is `sha`, when known). */
function fromBytes(ctx: ToolContext, plan: Plan, op: Exclude<FileOp, { kind: "add" }>, form: PatchForm, st: Stats, bytes: Uint8Array, sha?: string): Done {
  const { abs, real } = plan;
  const baseSha = sha ?? sha256(bytes);
  const file = decodeFile(real, bytes);

  if (op.kind === "delete") {
    return {
      action: "delete",
      abs,
      changes: [{ display: abs, real: plan.removal, baseSha, previous: bytes, bytes: null }],
      placements: [],
      diff: unifiedDiff(diffPath(ctx, plan.given), file.kind === "text" ? file.text : "", "", { change: "remove" }),
    };
  }

  if (file.kind === "binary") throw new KtError("BINARY_FILE", `${abs} is a binary file (${file.what}, ${formatBytes(bytes.length)}); patch changes text files only. Nothing was changed.`);
  if (file.kind === "undecodable") {
    throw new KtError(
      "BINARY_FILE",
      file.why === "invalid-utf-8"
        ? `${abs} is not valid UTF-8 text; patch refuses it because changing it would corrupt the bytes that cannot be decoded. Nothing was changed. Convert it first with bash (e.g. iconv).`
        : `${abs} is not ${file.encoding.label} text throughout (${describe(file.encoding)}): its bytes from line ${file.line} on do not decode and re-encode to themselves, so patch refuses it rather than change bytes outside the patch. Nothing was changed. Convert it first with bash (e.g. iconv).`,
    );
  }
  const before = file.text;
  const hadNewline = before === "" || before.endsWith("\n");
  const mapped = Lf.of(before);
  const lf = mapped.lf;
  const applied = applyHunks(lf, op.hunks);
  if (!applied.ok) throw hunkFailure(ctx, abs, applied.index, applied.hunk, applied.failure, form);
  // The edits are spans of the text with a final line break; mapped back onto the file's
  // own bytes, every line outside them keeps its line ending.
  let after = (hadNewline ? mapped : Lf.of(before + dominantEol(before))).apply(applied.edits);
  if (!applied.finalNewline) after = after.replace(/\r?\n$/, "");
  const newBytes = encodeText(after, file.encoding, abs);
  // Named as git names them (relative to the root or the working directory); a move from its old name.
  const diffOf = (abs: string, from?: string) => {
    const path = diffPath(ctx, abs);
    return hadNewline && applied.finalNewline ? editsDiff(path, lf, applied.edits, applied.editLines, from) : unifiedDiff(path, before, after, from === undefined ? {} : { from });
  };

  if (plan.to && plan.to.real !== real) {
    const dest = statOrNull(plan.to.real, plan.to.abs);
    if (dest) {
      throw new KtError(
        "FILE_EXISTS",
        `Refusing to move ${abs} to ${plan.to.abs}: ${plan.to.abs} already exists${dest.isDirectory() ? " (a directory)" : ""}. Nothing was changed. Choose a destination that does not exist yet.`,
      );
    }
    return {
      action: "move",
      abs: plan.to.abs,
      movedFrom: abs,
      changes: [
        { display: plan.to.abs, real: plan.to.real, baseSha: null, previous: null, bytes: newBytes, mode: st.mode & 0o7777 },
        { display: abs, real: plan.removal, baseSha, previous: bytes, bytes: null },
      ],
      placements: applied.placements,
      lf: applied.lf,
      diff: diffOf(plan.to.given, diffPath(ctx, plan.given)),
    };
  }
  const diff = diffOf(plan.given);
  return {
    action: "update",
    abs,
    // The diff has counted the lines added and removed: the commit does not count them again.
    changes: [{ display: abs, real, baseSha, previous: bytes, bytes: newBytes, counts: { added: diff.additions, removed: diff.deletions } }],
    placements: applied.placements,
    lf: applied.lf,
    diff,
  };
}

interface Answer {
  diff: string;
  additions: number;
  deletions: number;
  /** The success text. */
  content: string;
}

function answerOf(done: readonly Done[], dryRun: boolean): Answer {
  return {
    diff: done.map((d) => d.diff.patch).join(""),
    additions: done.reduce((n, d) => n + d.diff.additions, 0),
    deletions: done.reduce((n, d) => n + d.diff.deletions, 0),
    content: success(done, dryRun),
  };
}

function lineCount(text: string): number {
  if (text === "") return 0;
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return text.endsWith("\n") ? n : n + 1;
}

function statOrNull(real: string, display: string): Stats | null {
  try {
    return statSync(real);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return null;
    throw fsError(error, display);
  }
}

// ---------------------------------------------------------------------------------------
// Prose

const NOT_APPLIED = "Patch not applied:";
const NOTHING = "Nothing was written: a patch applies whole or not at all.";

function quote(line: string): string {
  return excerpt(line, 1);
}

function parseFailure(p: Extract<ReturnType<typeof parsePatch>, { ok: false }>, empty: boolean): KtError {
  const at = empty ? "the patch is empty" : p.found === undefined ? `the patch ends at line ${p.line - 1}` : `line ${p.line} is ${quote(p.found)}`;
  const forms = p.form === undefined
    ? ' A patch starts with "*** Begin Patch" and ends with "*** End Patch", or is a unified diff (diff -u / git diff).'
    : "";
  return new KtError("INVALID_ARGS", `Invalid patch: ${at}, but expected ${p.expected}.${forms} Nothing was changed. Fix the patch and send it whole again.`, {
    extra: { line: p.line, expected: p.expected, ...(p.form ? { form: p.form } : {}) },
  });
}

/** "hunk 2 of /abs/a.ts (patch line 14, first line "def foo():")". */
function hunkName(abs: string, index: number, hunk: Hunk): string {
  const first = hunk.lines.find((l) => l.kind !== "+") ?? hunk.lines[0];
  const line = first && first.text.trim() !== "" ? `, first line ${quote(first.text)}` : "";
  return `hunk ${index + 1} of ${abs} (patch line ${hunk.patchLine}${line})`;
}

function hunkFailure(ctx: ToolContext, abs: string, index: number, hunk: Hunk, f: HunkFailure, form: PatchForm): KtError {
  const name = hunkName(abs, index, hunk);
  const steps = "trace" in f ? f.trace : [];
  if (ctx.flags.trace) (ctx.info ?? ctx.warn)([`patch trace for ${abs}, hunk ${index + 1} (patch line ${hunk.patchLine}): not applied (${f.kind})`, ...traceSteps(steps)].join("\n"));
  const traced = ctx.flags.trace ? { trace: steps } : {};
  const extra = (more: Record<string, unknown>) => ({ extra: { path: abs, hunk: index + 1, patchLine: hunk.patchLine, ...more, ...traced } });
  const order = index > 0 ? ` (searched after hunk ${index}, since hunks of one file apply in file order)` : "";
  switch (f.kind) {
    case "anchor-not-found":
      if (f.earlier !== undefined) {
        return new KtError(
          "NO_MATCH",
          `${NOT_APPLIED} the header of ${name}, "@@ ${f.anchor}", names line ${f.earlier}, which is above hunk ${index}'s place: hunks of one file must come in file order, top to bottom. Reorder the hunks and send the patch again. ${NOTHING}`,
          extra({ anchor: f.anchor, earlier: f.earlier }),
        );
      }
      return new KtError(
        "NO_MATCH",
        `${NOT_APPLIED} the header of ${name}, "@@ ${f.anchor}", names a line that is not in the file${order}. Read the file and give a line that is there (e.g. the signature of the enclosing function), or a plain "@@". ${NOTHING}`,
        extra({ anchor: f.anchor }),
      );
    case "ambiguous": {
      const shown = f.lines.slice(0, 20).join(", ");
      const more = f.lines.length > 20 ? `, … and ${f.lines.length - 20} more` : "";
      const narrow = form === "envelope"
        ? ` Add context lines above or below the change until it fits one place only, or open the hunk with "@@ <line>" naming a unique line above it (e.g. the enclosing function's signature).`
        : " Add context lines above or below the change (e.g. diff -U5) until it fits one place only.";
      return new KtError(
        "AMBIGUOUS_MATCH",
        `${NOT_APPLIED} ${name} fits ${f.lines.length} places in the file${order} (lines ${shown}${more}); kt never picks one.${narrow} ${NOTHING}`,
        extra({ lines: f.lines, strategy: f.strategy }),
      );
    }
    case "not-found": {
      if (f.alreadyApplied !== undefined) {
        return new KtError(
          "ALREADY_APPLIED",
          `${NOT_APPLIED} ${name} was not found, but its new lines already stand in the file at line ${f.alreadyApplied}: the hunk seems to have been applied already. Read the file around line ${f.alreadyApplied}; if so, leave that hunk out of the patch. ${NOTHING}`,
          extra({ alreadyApplied: f.alreadyApplied, ...(f.nearMiss ? { nearMiss: f.nearMiss } : {}) }),
        );
      }
      if (f.earlier !== undefined) {
        return new KtError(
          "NO_MATCH",
          `${NOT_APPLIED} ${name} fits line ${f.earlier}, which is above hunk ${index}'s place: hunks of one file must come in file order, top to bottom. Reorder the hunks and send the patch again. ${NOTHING}`,
          extra({ earlier: f.earlier }),
        );
      }
      return new KtError("NO_MATCH", `${NOT_APPLIED} ${name} was not found in the file${order}.\n${nearMissSentence(f.nearMiss)} ${NOTHING}`, extra(f.nearMiss ? { nearMiss: f.nearMiss } : {}));
    }
  }
}

function nearMissSentence(near: NearMiss | undefined): string {
  if (!near) return `Read the file (or the region you mean to change) and write the hunk's context and "-" lines exactly as they appear, one per line.`;
  const region = near.startLine === near.endLine ? `line ${near.startLine}` : `lines ${near.startLine}–${near.endLine}`;
  const differs = near.whitespaceOnly ? `differs in whitespace on line ${near.line}` : `differs on line ${near.line} at column ${near.column}`;
  return `Closest near-miss is at ${region} (${differs}: expected ${excerpt(near.expected, near.column)}, file has ${excerpt(near.actual, near.column)}). Read that region and write the hunk's context and "-" lines exactly as they appear in the file.`;
}

const HOW: Record<string, string> = {
  "trailing-whitespace": "matched with trailing whitespace ignored",
  "indentation-flexible": "matched with indentation adjusted",
  "escape-normalized": "matched with typographic quotes, dashes and spaces folded",
};

function success(done: readonly Done[], dryRun: boolean): string {
  const letter: Record<Action, string> = { add: "A", update: "M", delete: "D", move: "M" };
  const lines = done.map((d) => {
    const fuzzy = d.placements.filter((p) => HOW[p.strategy]);
    const how = fuzzy.map((p) => `hunk ${p.index + 1} ${HOW[p.strategy]}`).join("; ");
    const moved = d.movedFrom ? `moved from ${d.movedFrom}` : "";
    const note = [moved, how].filter(Boolean).join("; ");
    return `${letter[d.action]} ${d.abs}${note ? ` (${note})` : ""}`;
  });
  const out = [`Success. Updated the following files:${dryRun ? " (dry run: nothing was written)" : ""}`, ...lines];
  const snippets: string[] = [];
  let omitted = 0;
  for (const d of done) {
    if (d.lf === undefined || d.placements.length === 0) continue;
    let lines: SnippetLines | undefined;
    for (const region of regions(d.placements)) {
      if (snippets.length >= MAX_SNIPPETS) {
        omitted++;
        continue;
      }
      lines ??= SnippetLines.of(d.lf);
      snippets.push(`${d.abs}\n${snippetOf(lines, region.startLine, region.endLine)}`);
    }
  }
  if (snippets.length > 0) {
    out.push("", snippets.join("\n\n"));
    if (omitted > 0) out.push(`[${omitted} more edited ${omitted === 1 ? "region" : "regions"} not shown; read the files to see them.]`);
    out.push("Review the changes. Patch or edit the files again if the result is not what you intended.");
  }
  return out.join("\n");
}

/** The written ranges of a file's hunks, those whose snippets would touch merged into one. */
function regions(placements: readonly HunkPlacement[]): { startLine: number; endLine: number }[] {
  const out: { startLine: number; endLine: number }[] = [];
  for (const p of placements) {
    const r = { startLine: p.written.startLine, endLine: Math.max(p.written.startLine, p.written.endLine) };
    const last = out[out.length - 1];
    if (last && r.startLine - last.endLine <= 2 * SNIPPET_CONTEXT + 1) last.endLine = Math.max(last.endLine, r.endLine);
    else out.push(r);
  }
  return out;
}

/** How each hunk was located, as a person debugging a patch reads it (stderr). */
function renderTrace(done: readonly Done[]): string {
  const out: string[] = [];
  for (const d of done) {
    if (d.placements.length === 0) {
      out.push(`patch trace for ${d.abs}: ${d.action} (no hunks to locate)`);
      continue;
    }
    for (const p of d.placements) {
      const where = p.startLine > p.endLine ? `inserted before line ${p.startLine}` : p.startLine === p.endLine ? `line ${p.startLine}` : `lines ${p.startLine}–${p.endLine}`;
      out.push(`patch trace for ${d.abs}, hunk ${p.index + 1} (patch line ${p.patchLine}): ${p.strategy}${p.variant ? ` (${p.variant})` : ""}, ${where}`);
      out.push(...traceSteps(p.trace));
    }
  }
  return out.join("\n");
}

function traceSteps(trace: readonly TraceStep[]): string[] {
  const out: string[] = [];
  trace.forEach((step, i) => {
    const n = step.candidateCount;
    out.push(`  ${i + 1}. ${step.strategy}: ${step.decision} — ${step.reason}${n > 0 ? ` (${n} ${n === 1 ? "candidate" : "candidates"})` : ""}`);
    for (const c of step.candidates) out.push(`       ${c.accepted ? "+" : "-"} ${c.startLine === c.endLine ? `line ${c.startLine}` : `lines ${c.startLine}–${c.endLine}`}`);
  });
  return out;
}
