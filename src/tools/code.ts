// code (SPEC §8.1): definition, references, hover, symbols, workspace_symbols, diagnostics
// and rename, asked of the project's language server. A position is a line and the symbol's
// name on it (models are poor at columns). rename applies the server's workspace edit through
// the multi-file commit (SPEC §7.1): stale checks, all or nothing, one history entry.
import { p, type Infer } from "./params.ts";
import { toolText } from "./_text.ts" with { type: "macro" };
import { defineTool, invalidArgs, KtError, type ToolContext, type ToolOutput } from "./tool.ts";
import { absolutePath, onOneLine, realPath } from "../core/paths.ts";
import { getStamp, sha256 } from "../core/stamps.ts";
import { BOM_BYTES, decodeUtf8, grouped, hasBom } from "../core/text.ts";
import { freshContent, readIfExists, refuseStateFiles } from "../core/writer.ts";
import { commitChanges, type Change } from "../core/commit.ts";
import { unifiedDiff } from "../core/diff.ts";
import { changedFiles } from "../core/history.ts";
import { index } from "../core/state.ts";
import { spillFile } from "../core/truncate.ts";
import { withDiagnostics } from "./diagnostics.ts";
import { applyEdits } from "../replacer/index.ts";
import type { CodeAnswer, Diagnostic, OutlineItem, Place, TextChange } from "../lsp/index.ts";

const description = toolText("code");

export const ACTIONS = ["definition", "references", "hover", "symbols", "workspace_symbols", "diagnostics", "rename"] as const;
type Action = (typeof ACTIONS)[number];
const POSITIONED: readonly Action[] = ["definition", "references", "hover", "rename"];

export const Parameters = p.object({
  action: p.enum(ACTIONS, { description: "What to ask: definition, references, hover, symbols (the file's outline), workspace_symbols (query), diagnostics, rename (query = the new name)." }),
  file_path: p.optional(p.string({ description: "The file (absolute preferred). Required except for diagnostics, which without it covers every file changed in this session." })),
  line: p.optional(p.union([p.int({ minimum: 1 }), p.string()], { description: '1-based line of the symbol, or "line:col" (1-based column).' })),
  symbol: p.optional(p.string({ description: "The symbol's name as written on that line (definition, references, hover, rename)." })),
  query: p.optional(p.string({ description: "workspace_symbols: the name to search for; rename: the new name." })),
});

type Input = Infer<typeof Parameters>;

/** Places shown before the rest goes to a spill file. */
export const MAX_SHOWN = 100;

export default defineTool({
  name: "code",
  description: description.trim(),
  parameters: Parameters,
  primary: "action",
  positionals: ["action", "file_path"],
  examples: [
    "kt code definition src/cli.ts --line 12 --symbol parseArgs",
    "kt code references src/cli.ts --line 12:17",
    "kt code symbols src/cli.ts",
    "kt code workspace_symbols src/cli.ts --query Parser",
    "kt code rename src/cli.ts --line 12 --symbol parseArgs --query parseArguments",
  ],
  aliases: { path: "file_path", filePath: "file_path", newName: "query", new_name: "query" },
  annotations: { readOnlyHint: false, destructiveHint: true },
  async execute(input, ctx) {
    if (input.action === "diagnostics" && input.file_path === undefined) return sessionDiagnostics(ctx);
    if (input.file_path === undefined) throw invalidArgs("code", `parameter "file_path" is required for action "${input.action}"`);
    const abs = absolutePath(ctx, input.file_path);
    const real = realPath(ctx, abs);
    const shown = onOneLine(abs);
    const text = readIfExists(real, shown, ctx);
    if (text === null) throw new KtError("FILE_NOT_FOUND", `${shown} does not exist. Give the path of an existing source file.`);
    const decoded = decodeUtf8(text) ?? "";
    const lines = decoded.replace(/^\uFEFF/, "").split(/\r?\n/);
    if ((input.action === "workspace_symbols" || input.action === "rename") && !input.query) {
      throw invalidArgs("code", input.action === "rename" ? `parameter "query" (the new name) is required for action "rename"` : `parameter "query" (the name to look for) is required for action "workspace_symbols"`);
    }
    const at = POSITIONED.includes(input.action) ? position(input, lines, shown) : undefined;
    const { codeRequest } = await import("../lsp/index.ts");
    const answer = await codeRequest(ctx, { action: input.action, path: real, ...(at ? { position: { line: at.line - 1, character: at.character } } : {}), ...(input.query !== undefined ? { query: input.query } : {}) });
    const subject = at ? `${at.symbol ?? "the symbol"} at ${shown}:${at.line}:${at.character + 1}` : shown;
    return present(ctx, input, answer, { shown, real, subject, symbol: at?.symbol });
  },
});

interface At {
  line: number;
  /** 0-based UTF-16 column. */
  character: number;
  symbol?: string;
}

function wordAt(text: string, symbol: string): number {
  const escaped = symbol.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const m = new RegExp(`(?<![\\p{L}\\p{N}_$])${escaped}(?![\\p{L}\\p{N}_$])`, "u").exec(text);
  if (m) return m.index;
  // A name that is a plain identifier is found only whole ("item" is not in "items"); one with
  // other characters (an operator, a path) is found as written.
  return /^[\p{L}\p{N}_$]+$/u.test(symbol) ? -1 : text.indexOf(symbol);
}

/** The position a line (or line:col) and a symbol name mean, or prose on why there is none. */
function position(input: Input, lines: readonly string[], shown: string): At {
  let line: number | undefined;
  let col: number | undefined;
  if (typeof input.line === "string") {
    const m = /^\s*(\d+)\s*(?::\s*(\d+)\s*)?$/.exec(input.line);
    if (!m || Number(m[1]) < 1 || (m[2] !== undefined && Number(m[2]) < 1)) throw invalidArgs("code", `parameter "line" must be a line number or "line:col" (both 1-based), got ${JSON.stringify(input.line)}`);
    line = Number(m[1]);
    if (m[2] !== undefined) col = Number(m[2]);
  } else line = input.line;
  const symbol = input.symbol?.trim() || undefined;
  if (line === undefined) {
    if (!symbol) throw invalidArgs("code", `action "${input.action}" needs a position: "line" and "symbol" (the name on that line), or "line" as "line:col"`);
    const i = lines.findIndex((l) => wordAt(l, symbol) >= 0);
    if (i < 0) throw new KtError("NO_MATCH", `"${symbol}" does not appear in ${shown}. Give the file where it is used, with its line (grep finds it).`);
    return { line: i + 1, character: wordAt(lines[i]!, symbol), symbol };
  }
  if (line > lines.length) throw new KtError("OFFSET_BEYOND_EOF", `Line ${line} is past the end of ${shown} (${lines.length} lines). Give a line of the file.`);
  const text = lines[line - 1]!;
  if (col !== undefined) return { line, character: Math.min(col - 1, text.length), ...(symbol ? { symbol } : {}) };
  if (!symbol) {
    const first = text.search(/\S/);
    return { line, character: first < 0 ? 0 : first };
  }
  const found = wordAt(text, symbol);
  if (found >= 0) return { line, character: found, symbol };
  const near = nearest(lines, line, symbol);
  throw new KtError(
    "NO_MATCH",
    `"${symbol}" is not on line ${line} of ${shown} (the line is: ${JSON.stringify(text.trim().slice(0, 120))}).${near ? ` It appears on line ${near}.` : ` It does not appear in ${shown}.`} Give the line where the symbol is written, or "line:col".`,
  );
}

function nearest(lines: readonly string[], line: number, symbol: string): number | undefined {
  for (let d = 1; d < lines.length; d++) {
    for (const i of [line - 1 - d, line - 1 + d]) if (i >= 0 && i < lines.length && wordAt(lines[i]!, symbol) >= 0) return i + 1;
  }
  return undefined;
}

interface Shown {
  shown: string;
  real: string;
  subject: string;
  symbol?: string | undefined;
}

async function present(ctx: ToolContext, input: Input, answer: CodeAnswer, s: Shown): Promise<ToolOutput> {
  const title = `code ${input.action} ${s.shown}`;
  switch (answer.kind) {
    case "none":
      throw noServer(s.shown, answer);
    case "unavailable": {
      const r = answer.report;
      if (r.status === "starting") throw new KtError("NO_LANGUAGE_SERVER", `${r.server} is still starting for ${s.shown}. Call code again in a few seconds.`);
      if (r.status === "fault") throw new KtError("NO_LANGUAGE_SERVER", r.prose);
      throw new KtError("NO_LANGUAGE_SERVER", `${r.server} failed earlier in this session and is not started again, so code cannot answer for ${s.shown}. Use grep and read instead.`);
    }
    case "timeout":
      throw new KtError("CANCELLED", `${answer.server} did not answer ${input.action} for ${s.subject} in time. It may still be loading the project: call code again shortly, or use grep.`);
    case "failed":
      throw new KtError("INVALID_ARGS", `${answer.server} refused ${input.action} for ${s.subject}: ${answer.message.split("\n")[0]}`);
    case "hover":
      return { content: answer.text ? `${s.subject} (${answer.server}):\n${answer.text}` : `${answer.server} has nothing to show for ${s.subject}. Check the line and symbol, or use definition.`, title };
    case "places":
      return places(ctx, input, answer.server, answer.places, s, title);
    case "outline":
      return input.action === "symbols" ? outlineOf(answer.server, answer.items, s, title) : workspaceSymbols(ctx, input, answer.server, answer.items, title);
    case "diagnostics":
      return { content: diagnosticsText(s.shown, answer.server, answer.diagnostics, answer.lines), title, diagnostics: [{ path: s.shown, server: answer.server, status: "checked", after: answer.diagnostics }] };
    case "edit":
      return rename(ctx, input, answer, s, title);
  }
}

/** NO_LANGUAGE_SERVER: what kt knows for the language and how to install one. */
function noServer(shown: string, answer: Extract<CodeAnswer, { kind: "none" }>): KtError {
  const problem = answer.configProblem ? ` (${answer.configProblem})` : "";
  if (answer.candidates.length === 0) {
    return new KtError("NO_LANGUAGE_SERVER", `kt knows no language server for files like ${shown}${problem}. A project can add one in .kt/lsp.json ({"servers": {"name": {"command": …, "args": […], "extensions": […], "rootMarkers": […]}}). Use grep and read instead.`);
  }
  const language = answer.candidates[0]!.language;
  if (!answer.rootFound) {
    return new KtError("NO_LANGUAGE_SERVER", `No ${language} project holds ${shown}: none of its directories up to the root has a project file (${rootMarkersHint(language)}), so no language server is started for it. Use grep and read instead.`);
  }
  const list = answer.candidates.map((c) => `- ${c.id} (${c.command}): ${c.install}`).join("\n");
  return new KtError("NO_LANGUAGE_SERVER", `No ${language} language server is installed for ${shown}${problem}. kt looks on PATH and in the project's node_modules/.bin for:\n${list}\nInstall one (or name yours in .kt/lsp.json), or use grep and read instead.`);
}

function rootMarkersHint(language: string): string {
  return {
    "TypeScript/JavaScript": "tsconfig.json, jsconfig.json or package.json",
    Python: "pyproject.toml, pyrightconfig.json, setup.py, setup.cfg, requirements.txt or Pipfile",
    Go: "go.mod or go.work",
    Rust: "Cargo.toml",
    "C/C++": "compile_commands.json, compile_flags.txt, .clangd, CMakeLists.txt, Makefile or meson.build",
  }[language] ?? "its root markers";
}

function count(n: number, one: string, many: string): string {
  return `${grouped(n)} ${n === 1 ? one : many}`;
}

/** `path:line:col: text`, a blank line between files. */
function placeLines(places: readonly Place[]): string[] {
  const out: string[] = [];
  let file: string | undefined;
  for (const p of places) {
    if (file !== undefined && p.path !== file) out.push("");
    file = p.path;
    out.push(`${onOneLine(p.path)}:${p.line}:${p.col}: ${p.text.trim().slice(0, 300)}`);
  }
  return out;
}

function bounded(ctx: ToolContext, head: string, lines: string[], title: string, extra: Record<string, unknown>): ToolOutput {
  if (lines.length <= MAX_SHOWN) return { content: [head, ...lines].join("\n"), title, extra };
  const full = [head, ...lines].join("\n");
  const spillPath = spillFile(ctx, "code", `${full}\n`);
  const shown = lines.slice(0, MAX_SHOWN);
  const tail = spillPath ? `[${grouped(lines.length - MAX_SHOWN)} more lines. Full results: ${spillPath} — read or grep that file for the rest.]` : `[${grouped(lines.length - MAX_SHOWN)} more lines not shown (the full results could not be saved).]`;
  return {
    content: [head, ...shown, tail].join("\n"),
    title,
    extra,
    truncation: { originalBytes: Buffer.byteLength(full), originalLines: lines.length + 1, shownHeadLines: MAX_SHOWN + 1, shownTailLines: 0, omittedLines: lines.length - MAX_SHOWN, ...(spillPath ? { spillPath } : {}) },
  };
}

function places(ctx: ToolContext, input: Input, server: string, list: Place[], s: Shown, title: string): ToolOutput {
  const name = s.symbol ?? "the symbol";
  const files = new Set(list.map((p) => p.path)).size;
  const extra = { server, places: list.map(({ text: _, ...p }) => p) };
  if (list.length === 0) {
    const what = input.action === "definition" ? "no definition" : "no references";
    return { content: `${server} found ${what} of ${s.subject}. Check the line and symbol (hover shows what is there), or use grep.`, title, extra, matches: 0, files: 0 };
  }
  const head = input.action === "definition"
    ? `${list.length === 1 ? "Definition" : `${list.length} definitions`} of ${name} (${server}):`
    : `${count(list.length, "reference", "references")} to ${name} in ${count(files, "file", "files")} (${server}):`;
  return { ...bounded(ctx, head, placeLines(list), title, extra), matches: list.length, files };
}

function outlineOf(server: string, items: OutlineItem[], s: Shown, title: string): ToolOutput {
  if (items.length === 0) return { content: `${server} found no symbols in ${s.shown}.`, title };
  const out: string[] = [];
  const walk = (list: OutlineItem[], depth: number) => {
    for (const item of list) {
      if (out.length >= 1000) return;
      const range = item.endLine > item.line ? `${item.line}–${item.endLine}` : `${item.line}`;
      out.push(`${"  ".repeat(depth)}${item.kind} ${item.name}${item.detail ? ` ${item.detail}` : ""}  ${range}`);
      walk(item.children, depth + 1);
    }
  };
  walk(items, 0);
  return { content: [`Symbols in ${s.shown} (${server}):`, ...out].join("\n"), title, extra: { server, symbols: items } };
}

function workspaceSymbols(ctx: ToolContext, input: Input, server: string, items: OutlineItem[], title: string): ToolOutput {
  const query = input.query ?? "";
  if (items.length === 0) return { content: `${server} found no symbols matching "${query}".`, title };
  const sorted = [...items].sort((a, b) => (a.path! < b.path! ? -1 : a.path! > b.path! ? 1 : a.line - b.line));
  const lines: string[] = [];
  let file: string | undefined;
  for (const item of sorted) {
    if (file !== undefined && item.path !== file) lines.push("");
    file = item.path;
    lines.push(`${onOneLine(item.path!)}:${item.line}:${item.col}: ${item.kind} ${item.name}${item.container ? ` (in ${item.container})` : ""}`);
  }
  const files = new Set(items.map((i) => i.path)).size;
  return { ...bounded(ctx, `${count(items.length, "symbol", "symbols")} matching "${query}" in ${count(files, "file", "files")} (${server}):`, lines, title, { server }), matches: items.length, files };
}

function diagnosticsText(shown: string, server: string, list: readonly Diagnostic[], lines: readonly string[]): string {
  if (list.length === 0) return `No diagnostics in ${shown} (${server}).`;
  const order = { error: 0, warning: 1, info: 2, hint: 3 } as const;
  const sorted = [...list].sort((a, b) => order[a.severity] - order[b.severity] || a.line - b.line || a.col - b.col);
  const by = (sev: Diagnostic["severity"]) => list.filter((d) => d.severity === sev).length;
  const parts = [count(by("error"), "error", "errors"), count(by("warning"), "warning", "warnings")];
  if (by("info") + by("hint") > 0) parts.push(count(by("info") + by("hint"), "note", "notes"));
  return [`${count(list.length, "diagnostic", "diagnostics")} in ${shown} (${server}): ${parts.join(", ")}`, ...sorted.slice(0, 50).map((d) => lineOf(d, lines)), ...(sorted.length > 50 ? [`[${sorted.length - 50} more not shown; fix these first.]`] : [])].join("\n");
}

function lineOf(d: Diagnostic, lines: readonly string[]): string {
  const tag = [d.source, d.code].filter(Boolean).join(" ");
  const code = (lines[d.line - 1] ?? "").trim();
  return `${d.line}:${d.col} ${d.severity}${tag ? ` [${tag}]` : ""} ${d.message.replace(/\s*\n\s*/g, " ")}${code ? `\n    ${code.slice(0, 200)}` : ""}`;
}

/** diagnostics without file_path: every file the session changed that a server covers. */
async function sessionDiagnostics(ctx: ToolContext): Promise<ToolOutput> {
  const files = changedFiles(ctx, index(ctx));
  const { codeRequest } = await import("../lsp/index.ts");
  const parts: string[] = [];
  const meta: object[] = [];
  for (const f of files.slice(0, 20)) {
    if (readIfExists(f.path, f.display, ctx) === null) continue;
    const answer = await codeRequest(ctx, { action: "diagnostics", path: f.path });
    if (answer.kind !== "diagnostics") continue;
    parts.push(diagnosticsText(f.display, answer.server, answer.diagnostics, answer.lines));
    meta.push({ path: f.display, server: answer.server, status: "checked", after: answer.diagnostics });
  }
  if (parts.length === 0) {
    const none = files.length === 0 ? "This session has changed no files yet" : "No file this session changed is covered by a language server";
    return { content: `${none}. Give file_path to ask about one file.`, title: "code diagnostics" };
  }
  return { content: parts.join("\n\n"), title: "code diagnostics", diagnostics: meta };
}

/** The server's workspace edit, applied to every file in one commit. */
async function rename(ctx: ToolContext, input: Input, answer: Extract<CodeAnswer, { kind: "edit" }>, s: Shown, title: string): Promise<ToolOutput> {
  if (answer.unsupported) throw new KtError("INVALID_ARGS", `${answer.server}'s rename of ${s.subject} also asks for ${answer.unsupported}, which kt does not apply. Nothing was changed. Rename the file with bash, then the symbol with code.`);
  const edits = answer.files.filter((f) => f.changes.length > 0);
  if (edits.length === 0) throw new KtError("NO_MATCH", `${answer.server} found nothing to rename for ${s.subject}. Check the line and symbol (hover shows what is there).`);
  const changes: Change[] = [];
  const report: { display: string; count: number; before: string; after: string }[] = [];
  for (const f of edits) {
    const display = onOneLine(f.path);
    const real = realPath(ctx, f.path);
    refuseStateFiles(ctx, real, display);
    const read = readIfExists(real, display, ctx);
    if (read === null) throw new KtError("FILE_NOT_FOUND", `${answer.server}'s rename changes ${display}, which does not exist any more. Nothing was changed.`);
    const bytes = getStamp(ctx, real) ? freshContent(ctx, display, real, read, "rename") : read;
    const text = decodeUtf8(bytes);
    if (text === null) throw new KtError("BINARY_FILE", `${display} is not valid UTF-8 text, so ${answer.server}'s rename cannot be applied to it. Nothing was changed.`);
    const bom = hasBom(bytes);
    const body = bom ? text.replace(/^\uFEFF/, "") : text;
    const after = applyChanges(body, f.changes, display);
    const out = Buffer.from(after, "utf8");
    changes.push({ display, real, baseSha: sha256(bytes), previous: bytes, bytes: bom ? Buffer.concat([BOM_BYTES, out]) : out });
    report.push({ display, count: f.changes.length, before: body, after });
  }
  if (!ctx.flags.dryRun) await commitChanges(ctx, changes, { tool: "rename", verb: "rename" });
  const diffs = report.map((r) => unifiedDiff(r.display, r.before, r.after));
  const total = report.reduce((n, r) => n + r.count, 0);
  const dry = ctx.flags.dryRun ? " (dry run: nothing was written)" : "";
  const content = [
    `Renamed ${s.symbol ?? "the symbol"} to ${input.query}: ${count(total, "change", "changes")} in ${count(report.length, "file", "files")} (${answer.server})${dry}.`,
    ...report.map((r) => `M ${r.display} (${r.count})`),
    ...(ctx.flags.dryRun ? [] : ["kt undo --last reverts every file of it."]),
  ].join("\n");
  const out: ToolOutput = {
    content: ctx.flags.dryRun ? `${content}\n\n${diffs.map((d) => d.patch).join("").trimEnd()}` : content,
    title: `Rename ${s.symbol ?? ""} → ${input.query} · ${report.length} files`,
    diff: diffs.map((d) => d.patch).join(""),
    additions: diffs.reduce((n, d) => n + d.additions, 0),
    deletions: diffs.reduce((n, d) => n + d.deletions, 0),
    extra: { server: answer.server, files: report.map((r) => ({ path: r.display, changes: r.count })), dryRun: ctx.flags.dryRun },
  };
  return withDiagnostics(ctx, out, changes.map((c) => ({ display: c.display, real: c.real, before: c.previous, after: c.bytes })));
}

/** `text` with the server's edits (0-based line/UTF-16 character ranges) applied; overlapping edits are refused. */
export function applyChanges(text: string, edits: readonly TextChange[], display: string): string {
  const starts = [0];
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  const offset = (line: number, character: number): number => {
    if (line >= starts.length) return text.length;
    const start = starts[line]!;
    const end = line + 1 < starts.length ? starts[line + 1]! - 1 : text.length;
    const lineEnd = end > start && text[end - 1] === "\r" ? end - 1 : end;
    return Math.min(start + character, lineEnd);
  };
  const spans = edits
    .map((e) => ({ start: offset(e.line, e.character), end: offset(e.endLine, e.endCharacter), text: e.newText }))
    .sort((a, b) => a.start - b.start || a.end - b.end);
  for (let i = 1; i < spans.length; i++) {
    if (spans[i]!.start < spans[i - 1]!.end) throw new KtError("INVALID_ARGS", `The language server's rename has overlapping edits in ${display}, so kt does not apply it. Nothing was changed.`);
  }
  return applyEdits(text, spans);
}
