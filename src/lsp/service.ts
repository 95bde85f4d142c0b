// What kt asks of its language servers, over a pool: the diagnostics of changed files for
// the exact content kt wrote, and the code tool's requests. Requests and answers are plain
// data, so the same functions serve a pool in this process and one in the session's host.
import { readFileSync } from "node:fs";
import type * as P from "vscode-languageserver-protocol";
import type { Diagnostic, LspClient } from "./client.ts";
import { locate, type Lookup } from "./locate.ts";
import type { Pool } from "./pool.ts";
import { extensionOf, languageId, type ServerEntry } from "./table.ts";
import { fromUri, toUri } from "./uri.ts";

export interface ChangedFile {
  /** Real path. */
  path: string;
  /** null: the file did not exist before (created) / does not exist after (deleted). */
  before: string | null;
  after: string | null;
}

export interface Where {
  /** kt's --root: the root search stops there. */
  limit?: string;
  /** The directory whose .kt/lsp.json applies. */
  base: string;
}

export interface DiagnoseRequest extends Where {
  files: ChangedFile[];
  budgetMs: number;
}

export type RawReport =
  | { path: string; server: string; status: "checked"; before: Diagnostic[]; after: Diagnostic[]; notice?: string }
  | { path: string; server: string; status: "starting" | "late"; notice?: string }
  | { path: string; server: string; status: "fault"; prose: string }
  | { path: string; server: string; status: "quiet" };

export async function diagnose(pool: Pool, req: DiagnoseRequest): Promise<RawReport[]> {
  const deadline = performance.now() + req.budgetMs;
  const looked = req.files.flatMap((f) => {
    const found = locate(f.path, req).found;
    return found ? [{ f, found }] : [];
  });
  // Files of one server are checked together: every file as it was, then every file as it is,
  // so that no "before" is taken while another changed file is already new (a rename's
  // importers would show errors it did not cause).
  const groups = new Map<string, typeof looked>();
  for (const l of looked) {
    const key = `${l.found.entry.id}\u0000${l.found.root}`;
    groups.set(key, [...(groups.get(key) ?? []), l]);
  }
  const reports = await Promise.all([...groups.values()].map((g) => diagnoseGroup(pool, g, deadline)));
  return reports.flat();
}

async function diagnoseGroup(pool: Pool, group: { f: ChangedFile; found: NonNullable<Lookup["found"]> }[], deadline: number): Promise<RawReport[]> {
  const found = group[0]!.found;
  const r = await ready(pool, found, group[0]!.f.path, deadline);
  if (!r.ok) return group.map(({ f }) => ({ ...r.report, path: f.path }) as RawReport);
  const { client, server } = r;
  // A restart's notice is told once, with the first file.
  const notice = (i: number) => (r.notice && i === 0 ? { notice: r.notice } : {});
  const fault = (path: string): RawReport => {
    const told = pool.tell(pool.slotOf(found)).notice;
    return told ? { path, server, status: "fault", prose: [r.notice, told].filter(Boolean).join("\n") } : { path, server, status: "quiet" };
  };
  const lang = (path: string) => languageId(extensionOf(path));
  const before = new Map<string, Diagnostic[]>();
  const existed = group.filter(({ f }) => f.before !== null);
  for (const { f } of existed) client.sync(f.path, f.before!, lang(f.path), true);
  const late = new Set<string>();
  await Promise.all(existed.map(async ({ f }) => {
    const got = await client.diagnostics(f.path, deadline);
    if (got === undefined) late.add(f.path);
    else before.set(f.path, got);
  }));
  if (client.fault) return group.map(({ f }, i) => (i === 0 ? fault(f.path) : { path: f.path, server, status: "quiet" }));
  const pending = group.filter(({ f }) => !late.has(f.path));
  for (const { f } of pending) {
    if (f.after === null) client.close(f.path);
    else client.sync(f.path, f.after, lang(f.path));
  }
  const after = new Map<string, Diagnostic[] | undefined>();
  await Promise.all(pending.map(async ({ f }) => {
    after.set(f.path, f.after === null ? [] : await client.diagnostics(f.path, deadline));
  }));
  if (client.fault) return group.map(({ f }, i) => (i === 0 ? fault(f.path) : { path: f.path, server, status: "quiet" }));
  return group.map(({ f }, i): RawReport => {
    const got = after.get(f.path);
    if (late.has(f.path) || got === undefined) return { path: f.path, server, status: "late", ...notice(i) };
    return { path: f.path, server, status: "checked", before: before.get(f.path) ?? [], after: got, ...notice(i) };
  });
}

type Ready = { ok: true; client: LspClient; server: string; notice?: string } | { ok: false; report: RawReport };

/** The started, initialized client for a located server, or the report of why not (by the deadline). */
async function ready(pool: Pool, found: NonNullable<Lookup["found"]>, path: string, deadline: number): Promise<Ready> {
  const server = found.entry.id;
  const got = pool.acquire(found);
  if (got.kind === "dead") return { ok: false, report: got.notice ? { path, server, status: "fault", prose: got.notice } : { path, server, status: "quiet" } };
  const client = got.client;
  if (!client.isReady && !client.fault) await Promise.race([client.ready, sleepUntil(deadline)]);
  if (client.fault) {
    const told = pool.tell(got.slot).notice;
    const prose = [got.notice, told].filter(Boolean).join("\n");
    return { ok: false, report: prose ? { path, server, status: "fault", prose } : { path, server, status: "quiet" } };
  }
  if (!client.isReady) return { ok: false, report: { path, server, status: "starting", ...(got.notice ? { notice: got.notice } : {}) } };
  return { ok: true, client, server, ...(got.notice ? { notice: got.notice } : {}) };
}

function sleepUntil(deadline: number): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, Math.max(0, deadline - performance.now()));
    t.unref?.();
  });
}

// ---- the code tool ------------------------------------------------------------------------

export type CodeAction = "definition" | "references" | "hover" | "symbols" | "workspace_symbols" | "diagnostics" | "rename";

export interface CodeRequest extends Where {
  action: CodeAction;
  /** Real path of the file the request is about (it names the server too). */
  path: string;
  /** 0-based position, for the actions that take one. */
  position?: { line: number; character: number };
  query?: string;
  budgetMs: number;
}

export interface Place {
  path: string;
  line: number;
  col: number;
  endLine: number;
  endCol: number;
  /** The text of the line (trimmed of its line break). */
  text: string;
}

export interface OutlineItem {
  name: string;
  kind: string;
  line: number;
  endLine: number;
  col: number;
  detail?: string;
  children: OutlineItem[];
  /** workspace symbols: where. */
  path?: string;
  container?: string;
}

export interface TextChange {
  line: number;
  character: number;
  endLine: number;
  endCharacter: number;
  newText: string;
}

export type CodeAnswer =
  | { kind: "none"; candidates: { id: string; language: string; command: string; install: string }[]; rootFound: boolean; configProblem?: string }
  | { kind: "unavailable"; report: RawReport }
  | { kind: "timeout"; server: string }
  | { kind: "failed"; server: string; message: string }
  | { kind: "places"; server: string; places: Place[] }
  | { kind: "hover"; server: string; text: string }
  | { kind: "outline"; server: string; items: OutlineItem[] }
  | { kind: "diagnostics"; server: string; diagnostics: Diagnostic[]; lines: string[] }
  | { kind: "edit"; server: string; files: { path: string; changes: TextChange[] }[]; unsupported?: string };

function candidatesOf(entries: readonly ServerEntry[]) {
  return entries.map((e) => ({ id: e.id, language: e.language, command: [e.command, ...e.args].join(" "), install: e.install }));
}

export async function code(pool: Pool, req: CodeRequest): Promise<CodeAnswer> {
  const deadline = performance.now() + req.budgetMs;
  const look = locate(req.path, req);
  if (!look.found) return { kind: "none", candidates: candidatesOf(look.candidates), rootFound: look.root !== undefined, ...(look.configProblem ? { configProblem: look.configProblem } : {}) };
  const r = await ready(pool, look.found, req.path, deadline);
  if (!r.ok) return { kind: "unavailable", report: r.report };
  const { client, server } = r;
  const text = readText(req.path);
  if (text !== undefined) client.sync(req.path, text, languageId(extensionOf(req.path)), req.action === "diagnostics");
  // A rename is computed from what the server has open: every open file as it is on disk now.
  if (req.action === "rename") client.resyncAll(readText);
  const uri = toUri(req.path);
  const pos = req.position ?? { line: 0, character: 0 };
  const ask = async <T>(method: string, params: unknown): Promise<{ ok: true; value: T | null } | { ok: false; answer: CodeAnswer }> => {
    try {
      const value = await client.request<T | null>(method, params, deadline);
      if (value === undefined) return { ok: false, answer: client.fault ? { kind: "unavailable", report: faultReport(pool, look.found!, req.path, server) } : { kind: "timeout", server } };
      return { ok: true, value };
    } catch (error) {
      return { ok: false, answer: { kind: "failed", server, message: (error as Error).message } };
    }
  };
  const lines = new Lines(client);
  switch (req.action) {
    case "definition":
    case "references": {
      const method = req.action === "definition" ? "textDocument/definition" : "textDocument/references";
      const params = { textDocument: { uri }, position: pos, ...(req.action === "references" ? { context: { includeDeclaration: true } } : {}) };
      const got = await ask<P.Location | P.Location[] | P.LocationLink[]>(method, params);
      if (!got.ok) return got.answer;
      const list = got.value === null ? [] : Array.isArray(got.value) ? got.value : [got.value];
      const places = list.flatMap((l) => {
        const target = "targetUri" in l ? { uri: l.targetUri, range: l.targetSelectionRange ?? l.targetRange } : l;
        const path = fromUri(target.uri);
        return path ? [lines.place(path, target.range)] : [];
      });
      return { kind: "places", server, places: sortPlaces(places) };
    }
    case "hover": {
      const got = await ask<P.Hover>("textDocument/hover", { textDocument: { uri }, position: pos });
      if (!got.ok) return got.answer;
      return { kind: "hover", server, text: got.value ? hoverText(got.value.contents) : "" };
    }
    case "symbols": {
      const got = await ask<P.DocumentSymbol[] | P.SymbolInformation[]>("textDocument/documentSymbol", { textDocument: { uri } });
      if (!got.ok) return got.answer;
      return { kind: "outline", server, items: outline(got.value ?? []) };
    }
    case "workspace_symbols": {
      const got = await ask<P.SymbolInformation[] | P.WorkspaceSymbol[]>("workspace/symbol", { query: req.query ?? "" });
      if (!got.ok) return got.answer;
      const items = (got.value ?? []).flatMap((s): OutlineItem[] => {
        const path = fromUri(s.location.uri);
        if (!path) return [];
        const range = "range" in s.location ? s.location.range : undefined;
        return [{ name: s.name, kind: kindName(s.kind), line: (range?.start.line ?? 0) + 1, endLine: (range?.end.line ?? 0) + 1, col: (range?.start.character ?? 0) + 1, children: [], path, ...(s.containerName ? { container: s.containerName } : {}) }];
      });
      return { kind: "outline", server, items };
    }
    case "diagnostics": {
      const got = await client.diagnostics(req.path, deadline);
      if (got === undefined) return client.fault ? { kind: "unavailable", report: faultReport(pool, look.found, req.path, server) } : { kind: "timeout", server };
      return { kind: "diagnostics", server, diagnostics: got, lines: (text ?? "").split(/\r?\n/) };
    }
    case "rename": {
      const got = await ask<P.WorkspaceEdit>("textDocument/rename", { textDocument: { uri }, position: pos, newName: req.query ?? "" });
      if (!got.ok) return got.answer;
      return workspaceEdit(server, got.value);
    }
  }
}

function faultReport(pool: Pool, found: NonNullable<Lookup["found"]>, path: string, server: string): RawReport {
  const told = pool.tell(pool.slotOf(found)).notice;
  return told ? { path, server, status: "fault", prose: told } : { path, server, status: "quiet" };
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/** Line texts of files, from the text the server has open or else the disk. */
class Lines {
  private readonly cache = new Map<string, string[]>();
  constructor(private readonly client: LspClient) {}

  of(path: string): string[] {
    let lines = this.cache.get(path);
    if (!lines) {
      lines = (this.client.openText(path) ?? readText(path) ?? "").split(/\r?\n/);
      this.cache.set(path, lines);
    }
    return lines;
  }

  place(path: string, range: P.Range): Place {
    const text = this.of(path)[range.start.line] ?? "";
    return { path, line: range.start.line + 1, col: range.start.character + 1, endLine: range.end.line + 1, endCol: range.end.character + 1, text };
  }
}

function sortPlaces(places: Place[]): Place[] {
  const seen = new Set<string>();
  return places
    .filter((p) => {
      const k = `${p.path}:${p.line}:${p.col}`;
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    })
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.line - b.line || a.col - b.col));
}

function hoverText(contents: P.Hover["contents"]): string {
  const part = (c: P.MarkedString | P.MarkupContent): string => (typeof c === "string" ? c : "kind" in c ? c.value : `\`\`\`${c.language}\n${c.value}\n\`\`\``);
  return (Array.isArray(contents) ? contents.map(part) : [part(contents)]).join("\n\n").trim();
}

const KINDS = [
  "", "file", "module", "namespace", "package", "class", "method", "property", "field", "constructor", "enum", "interface",
  "function", "variable", "constant", "string", "number", "boolean", "array", "object", "key", "null", "enum member", "struct",
  "event", "operator", "type parameter",
];

function kindName(kind: number): string {
  return KINDS[kind] ?? "symbol";
}

function outline(symbols: readonly (P.DocumentSymbol | P.SymbolInformation)[]): OutlineItem[] {
  return symbols.map((s): OutlineItem => {
    if ("location" in s) {
      const r = s.location.range;
      return { name: s.name, kind: kindName(s.kind), line: r.start.line + 1, endLine: r.end.line + 1, col: r.start.character + 1, children: [], ...(s.containerName ? { container: s.containerName } : {}) };
    }
    return {
      name: s.name,
      kind: kindName(s.kind),
      line: s.range.start.line + 1,
      endLine: s.range.end.line + 1,
      col: s.selectionRange.start.character + 1,
      ...(s.detail ? { detail: s.detail } : {}),
      children: outline(s.children ?? []).sort((a, b) => a.line - b.line || a.col - b.col),
    };
  }).sort((a, b) => a.line - b.line || a.col - b.col);
}

function workspaceEdit(server: string, edit: P.WorkspaceEdit | null): CodeAnswer {
  const files = new Map<string, TextChange[]>();
  let unsupported: string | undefined;
  const add = (uri: string, edits: readonly (P.TextEdit | P.AnnotatedTextEdit | P.SnippetTextEdit)[]) => {
    const path = fromUri(uri);
    if (!path) {
      unsupported = `an edit of ${uri}, which is not a file`;
      return;
    }
    const list = files.get(path) ?? [];
    for (const e of edits) {
      const newText = "newText" in e ? e.newText : e.snippet.value;
      list.push({ line: e.range.start.line, character: e.range.start.character, endLine: e.range.end.line, endCharacter: e.range.end.character, newText });
    }
    files.set(path, list);
  };
  for (const [uri, edits] of Object.entries(edit?.changes ?? {})) add(uri, edits);
  for (const change of edit?.documentChanges ?? []) {
    if ("kind" in change) unsupported = `a file ${change.kind} (${"uri" in change ? change.uri : change.oldUri})`;
    else add(change.textDocument.uri, change.edits);
  }
  return { kind: "edit", server, files: [...files].map(([path, changes]) => ({ path, changes })), ...(unsupported ? { unsupported } : {}) };
}
