// `kt history PATH` and `kt undo PATH [--steps N] [--force]` / `kt undo --last` (SPEC §7.2):
// CLI only, never model tools. An undo is a change like any other: written through the
// multi-file commit (so it is kept in history too), refused when the file changed since kt
// last wrote it unless --force.
import type { CommandDef } from "citty";
import { closeSync, constants, openSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { absolutePath, onOneLine, realPath, verifyOpened } from "../core/paths.ts";
import { index } from "../core/state.ts";
import { sha256 } from "../core/stamps.ts";
import { readIfExists } from "../core/writer.ts";
import { commitChanges, type Change } from "../core/commit.ts";
import { dirIdentity, fileHistory, HISTORY_DAYS, interruptedChanges, keptBytes, lastLiveGroup, removeJournal, sessionChanges, type HistoryRow, type Journal } from "../core/history.ts";
import { KtError, type ToolContext } from "../tools/tool.ts";
import { baseOptions, UsageError, type Options } from "./_args.ts";
import { refuseWrite } from "../sandbox/policy.ts";
import { contextFrom, writeAll } from "./_run.ts";
import { exitCode } from "./exit.ts";
import { routing } from "../lsp/gate.ts";
import { diagnoseChange } from "../tools/diagnostics.ts";
import { parseSwitches, switchArgs } from "./switches.ts";

export const historyCommand: CommandDef = {
  meta: { name: "history", description: "List the session's changes, or the versions of a file kt kept before changing it" },
  args: { path: { type: "positional", required: false, description: "The file (none: every change of the session)" }, ...switchArgs("history") },
};

export const undoCommand: CommandDef = {
  meta: { name: "undo", description: "Put back a file (or the files of the session's last change) as they were before kt changed them" },
  args: {
    path: { type: "positional", required: false, description: "The file (or --last)" },
    ...switchArgs("undo"),
  },
};

interface Args {
  path?: string;
  steps: number;
  last: boolean;
  force: boolean;
  session?: string;
  stateDir?: string;
  root?: string;
  sandbox: Partial<Options>;
  noDiagnostics?: boolean;
}

function parse(argv: readonly string[], command: "history" | "undo"): Args {
  const { values, positionals } = parseSwitches(command, argv);
  if (positionals.length > 1) throw new UsageError(`too many arguments: kt ${command} takes one PATH`);
  const args: Args = { steps: 1, last: values.last === true, force: values.force === true, sandbox: {} };
  // Undo changes files: the sandbox a person chose decides where (SPEC §8.2).
  for (const key of ["sandbox", "writable", "allowNetwork", "denyRead"] as const) if (values[key] !== undefined) Object.assign(args.sandbox, { [key]: values[key] });
  if (positionals[0] !== undefined) args.path = positionals[0];
  if (values.session !== undefined) args.session = values.session as string;
  if (values.stateDir !== undefined) args.stateDir = values.stateDir as string;
  if (values.root !== undefined) args.root = values.root as string;
  if (values.noDiagnostics === true) args.noDiagnostics = true;
  if (values.steps !== undefined) {
    const raw = values.steps as string;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1) throw new UsageError(`--steps must be a whole number of at least 1 (got ${JSON.stringify(raw)})`);
    args.steps = n;
  }
  return args;
}

function context(args: Args): ToolContext {
  try {
    return contextOf(args);
  } catch (error) {
    // A root that does not exist, is a file or is empty: the command line is wrong.
    if (error instanceof KtError) throw new UsageError(error.message);
    throw error;
  }
}

function contextOf(args: Args): ToolContext {
  return contextFrom({ ...baseOptions(), ...(args.session ? { session: args.session } : {}), ...(args.stateDir ? { stateDir: args.stateDir } : {}), ...(args.root !== undefined ? { root: args.root } : {}), ...args.sandbox, ...(args.noDiagnostics ? { noDiagnostics: true } : {}) });
}

/** Every change of an undo goes through commitChanges, after the sandbox allows each file. */
async function commitUndo(ctx: ToolContext, changes: Change[], opts: Parameters<typeof commitChanges>[2]): Promise<void> {
  for (const change of changes) refuseWrite(ctx, change.real, change.display);
  await commitChanges(ctx, changes, opts);
}

/** Runs `fn` and prints its text, or a KtError's prose as a failed result; exit.ts picks the code. */
async function guarded(fn: () => string | Promise<string>): Promise<number> {
  let result: { text: string; isError: boolean };
  try {
    result = { text: await fn(), isError: false };
  } catch (error) {
    if (!(error instanceof KtError)) throw error;
    result = { text: error.message, isError: true };
  }
  writeAll(1, `${result.text}\n`);
  return exitCode(result);
}

function when(at: number): string {
  const d = new Date(at);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

function what(row: HistoryRow): string {
  if (row.prevSha === null) return "created the file";
  if (row.newSha === null) return "removed the file";
  return `+${row.added} −${row.removed} lines`;
}

export async function runHistory(argv: string[]): Promise<number> {
  const args = parse(argv, "history");
  const ctx = context(args);
  if (args.path === undefined) return guarded(() => sessionHistory(ctx));
  return guarded(() => {
    const abs = absolutePath(ctx, args.path!);
    const real = realPath(ctx, abs);
    if (isDirectory(real)) {
      throw new KtError(
        "IS_DIRECTORY",
        `${onOneLine(abs)} is a directory: kt history lists the versions of one file (kt history PATH), or, without a path, every change of the session (kt history).`,
      );
    }
    const rows = fileHistory(ctx, index(ctx), real);
    if (rows.length === 0) return `kt has kept no versions of ${abs} in session "${ctx.session}": it has not changed that file in this session.`;
    const lines = rows.map((r, i) => {
      const state = r.state === "undone" ? " (undone)" : r.state === "undo" ? "" : "";
      return `${String(i + 1).padStart(3)}. ${when(r.at)}  ${r.tool.padEnd(5)}  ${what(r)}${state}`;
    });
    const live = rows.filter((r) => r.state === "live").length;
    const tail = live === 0
      ? "Every change listed is undone already or is itself an undo."
      : `kt undo ${abs} restores the version before the newest change that is not undone${live > 1 ? `; --steps N goes back N such changes (at most ${live})` : ""}.`;
    return [`${rows.length} ${rows.length === 1 ? "change" : "changes"} kt made to ${abs} in session "${ctx.session}", newest first (the version before each is kept):`, ...lines, tail].join("\n");
  });
}

/** `kt history` without a path: the session's changes, newest first (SPEC §8.6). */
function sessionHistory(ctx: ToolContext): string {
  const changes = sessionChanges(ctx, index(ctx));
  if (changes.length === 0) return `kt has kept no changes in session "${ctx.session}" (it has changed no file, or its history is older than ${HISTORY_DAYS} days).`;
  const tools = Math.max(...changes.map((c) => c.tool.length));
  const lines = changes.map((c, i) => {
    const files = `${c.files.length} ${c.files.length === 1 ? "file " : "files"}`;
    const shown = c.files.slice(0, 3).join(", ") + (c.files.length > 3 ? `, … ${c.files.length - 3} more` : "");
    const state = c.state === "undone" ? " (undone)" : "";
    return `${String(i + 1).padStart(3)}. ${when(c.at)}  ${c.tool.padEnd(tools)}  ${files}  +${c.added} −${c.removed}  ${shown}${state}`;
  });
  const live = changes.some((c) => c.state === "live");
  const tail = live
    ? `kt undo --last${ctx.session === "default" ? "" : ` --session ${ctx.session}`} reverts the newest change that is not undone (every file of it); kt history PATH lists one file's versions. Kept for ${HISTORY_DAYS} days.`
    : "Every change listed is undone already or is itself an undo.";
  return [`kt made ${changes.length} ${changes.length === 1 ? "change" : "changes"} in session "${ctx.session}", newest first:`, ...lines, tail].join("\n");
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

export { undoCommand as command, runUndo as run };

export async function runUndo(argv: string[]): Promise<number> {
  const args = parse(argv, "undo");
  if (args.last && args.path !== undefined) throw new UsageError("give either PATH or --last, not both");
  if (!args.last && args.path === undefined) throw new UsageError("missing PATH: kt undo PATH [--steps N] [--force], or kt undo --last");
  if (args.last && args.steps !== 1) throw new UsageError("--steps applies to kt undo PATH, not to --last");
  const ctx = context(args);
  routing.host = true;
  return guarded(() => (args.last ? undoLast(ctx, args.force) : undoFile(ctx, args.path!, args.steps, args.force)));
}

/** What kt last wrote to a file in this session (its newest history row's result). */
function changedSince(ctx: ToolContext, row: HistoryRow, display: string, current: Uint8Array | null, force: boolean): void {
  if (force) return;
  const sha = current === null ? null : sha256(current);
  if (sha === row.newSha) return;
  const now = current === null ? "it was removed" : "its content differs";
  throw new KtError(
    "STALE_FILE",
    `Refusing to undo ${display}: it changed since kt last wrote it (${row.tool} at ${when(row.at)}; ${now}), and undoing would discard that change. Check the file first; kt undo --force restores the kept version anyway.`,
  );
}

/**
 * The file's directory is still the one kt wrote it in (SPEC §7.2): same real path, no link
 * put on the way, same device and inode. Otherwise an undo would write, or remove, a file kt
 * never wrote — through a directory swapped for a symbolic link, or in one made anew — so it
 * is refused unless --force. A directory that is gone holds no other file: the content check
 * decides. Rows of an older kt carry no identity and are not checked.
 */
function sameDirectory(row: HistoryRow, display: string, force: boolean, forceCommand: string): void {
  if (force || row.dir === null) return;
  const dir = dirname(row.path);
  let why: string | undefined;
  const now = realPath({}, dir);
  if (now !== dir) why = `it now leads to ${onOneLine(now)} through a symbolic link`;
  else {
    let fd: number | undefined;
    try {
      fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return;
      if (code !== "ENOTDIR" && code !== "ELOOP") throw error;
      why = "it is no longer a directory";
    }
    if (fd !== undefined) {
      try {
        const opened = verifyOpened({}, fd, display, dir);
        if (opened !== dir) why = `it now leads to ${onOneLine(opened)} through a symbolic link`;
        else if (dirIdentity(fd) !== row.dir) why = "it was replaced by another directory since";
      } finally {
        closeSync(fd);
      }
    }
  }
  if (why === undefined) return;
  throw new KtError(
    "STALE_FILE",
    `Refusing to undo ${display}: its directory ${onOneLine(dir)} is not the one kt wrote the file in (${why}; ${row.tool} at ${when(row.at)}), and undoing would write a file kt never wrote. Nothing was changed. Check the directory first; ${forceCommand} writes there anyway.`,
  );
}

function keptOrFail(ctx: ToolContext, row: HistoryRow, display: string): Uint8Array | null {
  if (row.prevSha === null) return null;
  const bytes = keptBytes(ctx, row.prevSha, row.prevAt);
  if (bytes === null) {
    throw new KtError("FILE_NOT_FOUND", `Cannot undo ${display}: the version before the ${row.tool} of ${when(row.at)} is no longer kept (the state directory's size cap removed it). Nothing was changed.`);
  }
  return bytes;
}

async function undoFile(ctx: ToolContext, path: string, steps: number, force: boolean): Promise<string> {
  const abs = absolutePath(ctx, path);
  const real = realPath(ctx, abs);
  const db = index(ctx);
  const rows = fileHistory(ctx, db, real);
  if (rows.length === 0) throw new KtError("FILE_NOT_FOUND", `Nothing to undo: kt has not changed ${abs} in session "${ctx.session}" (or its history was removed). kt history ${abs} lists what is kept.`);
  const live = rows.filter((r) => r.state === "live");
  if (live.length === 0) throw new KtError("INVALID_ARGS", `Nothing to undo: every change kt made to ${abs} in session "${ctx.session}" is undone already.`);
  if (steps > live.length) {
    throw new KtError("INVALID_ARGS", `Cannot go back ${steps} changes: kt kept ${live.length} ${live.length === 1 ? "change" : "changes"} of ${abs} that can be undone. Use --steps ${live.length} or less. Nothing was changed.`);
  }
  sameDirectory(rows[0]!, abs, force, "kt undo --force");
  const current = readIfExists(real, abs);
  changedSince(ctx, rows[0]!, abs, current, force);
  const target = live[steps - 1]!;
  const bytes = keptOrFail(ctx, target, abs);
  const change: Change = { display: abs, real, baseSha: current === null ? null : sha256(current), previous: current, bytes, ...(target.prevMode !== null ? { mode: target.prevMode } : {}) };
  if (!(bytes === null && current === null)) await commitUndo(ctx, [change], { tool: "undo", verb: "undo", undoes: live.slice(0, steps).map((r) => r.seq), historyState: "undo" });
  const back = `${steps} ${steps === 1 ? "step" : "steps"} back`;
  if (bytes === null) return `Removed ${abs}: the ${target.tool} of ${when(target.at)} created it (${back}).`;
  return withDiagnostics(ctx, `Restored ${abs} to the version before the ${target.tool} of ${when(target.at)} (${back}).`, [change]);
}

async function undoLast(ctx: ToolContext, force: boolean): Promise<string> {
  const db = index(ctx);
  const torn = interruptedChanges(ctx, db)[0];
  if (torn) return undoInterrupted(ctx, torn.path, torn.journal, force);
  const group = lastLiveGroup(ctx, db).filter((r) => r.state === "live");
  if (group.length === 0) throw new KtError("INVALID_ARGS", `Nothing to undo: kt has no change in session "${ctx.session}" that is not undone already.`);
  const changes: Change[] = [];
  const said: string[] = [];
  for (const row of group) {
    const newest = fileHistory(ctx, db, row.path)[0]!;
    sameDirectory(newest, row.display, force, "kt undo --last --force");
    const current = readIfExists(row.path, row.display);
    changedSince(ctx, newest, row.display, current, force);
    const bytes = keptOrFail(ctx, row, row.display);
    if (bytes === null && current === null) continue;
    changes.push({ display: row.display, real: row.path, baseSha: current === null ? null : sha256(current), previous: current, bytes, ...(row.prevMode !== null ? { mode: row.prevMode } : {}) });
    said.push(bytes === null ? `D ${row.display} (the ${row.tool} created it)` : current === null ? `A ${row.display} (the ${row.tool} removed it)` : `M ${row.display}`);
  }
  if (changes.length > 0) await commitUndo(ctx, changes, { tool: "undo", verb: "undo", undoes: group.map((r) => r.seq), historyState: "undo" });
  const head = group[0]!;
  return withDiagnostics(ctx, [`Undid the ${head.tool} of ${when(head.at)} (${group.length} ${group.length === 1 ? "file" : "files"}):`, ...said].join("\n"), changes);
}

/** The undo's text with what the language servers say of the files it put back (SPEC §8.1). */
async function withDiagnostics(ctx: ToolContext, text: string, changes: readonly Change[]): Promise<string> {
  const got = await diagnoseChange(ctx, changes.map((c) => ({ display: c.display, real: c.real, before: c.previous, after: c.bytes })));
  return got.text ? `${text}\n\n${got.text}` : text;
}

/** A change kt was killed while installing: each file is old or new; the new ones go back. */
async function undoInterrupted(ctx: ToolContext, path: string, journal: Journal, force: boolean): Promise<string> {
  const changes: Change[] = [];
  const said: string[] = [];
  for (const f of journal.files) {
    const current = readIfExists(f.real, f.display);
    const sha = current === null ? null : sha256(current);
    if (sha === f.prevSha) {
      said.push(`= ${f.display} (not installed before kt stopped; unchanged)`);
      continue;
    }
    if (sha !== f.newSha && !force) {
      throw new KtError(
        "STALE_FILE",
        `Refusing to undo the interrupted ${journal.tool} of ${when(journal.at)}: ${f.display} changed since (it is neither its old nor its new version), and undoing would discard that change. Nothing was changed. Check the file first; kt undo --last --force restores the kept versions anyway.`,
      );
    }
    const bytes = f.prevSha === null ? null : keptBytes(ctx, f.prevSha, f.prevAt ?? null);
    if (f.prevSha !== null && bytes === null) {
      throw new KtError("FILE_NOT_FOUND", `Cannot undo ${f.display}: its version before the interrupted ${journal.tool} of ${when(journal.at)} is no longer kept (the state directory's size cap removed it). Nothing was changed.`);
    }
    if (bytes === null && current === null) continue;
    changes.push({ display: f.display, real: f.real, baseSha: sha, previous: current, bytes, ...(f.prevMode !== null ? { mode: f.prevMode } : {}) });
    said.push(bytes === null ? `D ${f.display} (the ${journal.tool} created it)` : current === null ? `A ${f.display} (the ${journal.tool} removed it)` : `M ${f.display}`);
  }
  if (changes.length > 0) await commitUndo(ctx, changes, { tool: "undo", verb: "undo", historyState: "undo" });
  removeJournal(path);
  return [`Undid the ${journal.tool} of ${when(journal.at)}, which kt was stopped while installing (${journal.files.length} files):`, ...said].join("\n");
}
