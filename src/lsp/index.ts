// The language servers as the tools above see them (SPEC §8.1): the diagnostics block that
// write, edit, apply_patch and undo append, and the code tool's requests. The servers run in
// this process's pool, or — for a one-shot kt call — in the session's host, asked over its
// socket; a host that cannot be reached leaves the call to a pool of its own.
import type { ToolContext } from "../core/result.ts";
import { index, sessionDir } from "../core/state.ts";
import type { Diagnostic } from "./client.ts";
import { diffDiagnostics } from "./diff.ts";
import { configBase, routing } from "./gate.ts";
import { Pool } from "./pool.ts";
import { renderReports, type FileReport } from "./render.ts";
import { code, diagnose, type ChangedFile, type CodeAnswer, type CodeRequest, type DiagnoseRequest, type RawReport } from "./service.ts";

export type { CodeAnswer, CodeAction, Place, OutlineItem, TextChange } from "./service.ts";
export type { Diagnostic } from "./client.ts";
export { diagnosticLine } from "./render.ts";

/** How long a change waits for its diagnostics (KT_DIAGNOSTICS_MS). */
export const DIAGNOSTICS_MS = 2000;
/** How long a code request waits, a start included (KT_CODE_MS). */
export const CODE_MS = 15_000;

function envMs(name: string, fallback: number): number {
  const given = Number(process.env[name]);
  return Number.isFinite(given) && given >= 0 && process.env[name] !== "" ? given : fallback;
}

export function diagnosticsBudget(): number {
  return envMs("KT_DIAGNOSTICS_MS", DIAGNOSTICS_MS);
}

let local: Pool | undefined;

/** This process's pool, whose servers die with it at the latest. */
export function localPool(): Pool {
  if (!local) {
    const pool = new Pool();
    local = pool;
    process.once("exit", () => pool.killAll());
  }
  return local;
}

/** Stops this process's servers (kt mcp at its end; tests). */
export async function stopLocalServers(): Promise<void> {
  const pool = local;
  local = undefined;
  await pool?.stopAll();
}

/** One entry of metadata.diagnostics: everything the servers said about one changed file. */
export interface FileDiagnostics {
  path: string;
  server: string;
  status: RawReport["status"];
  introduced?: Diagnostic[];
  fixed?: Diagnostic[];
  kept?: Diagnostic[];
  /** The complete lists, every severity, before and after the change. */
  before?: Diagnostic[];
  after?: Diagnostic[];
}

export interface Changed {
  /** Real path. */
  path: string;
  /** As the model sees it. */
  display: string;
  before: string | null;
  after: string | null;
}

/** The block a change appends (undefined: nothing to say) and the full lists for metadata. */
export async function afterChange(ctx: ToolContext, files: readonly Changed[]): Promise<{ text?: string; diagnostics?: FileDiagnostics[] }> {
  const budgetMs = diagnosticsBudget();
  const req: DiagnoseRequest = {
    files: files.map((f): ChangedFile => ({ path: f.path, before: f.before, after: f.after })),
    ...(ctx.root ? { limit: ctx.root } : {}),
    base: configBase(ctx),
    budgetMs,
  };
  const raw = await run<RawReport[]>(ctx, { op: "diagnose", req }, budgetMs, () => diagnose(localPool(), req));
  if (raw === undefined) return {};
  const byPath = new Map(files.map((f) => [f.path, f]));
  const reports: FileReport[] = [];
  const meta: FileDiagnostics[] = [];
  for (const r of raw) {
    const f = byPath.get(r.path);
    if (!f) continue;
    const path = f.display;
    if ("notice" in r && r.notice) reports.push({ path, server: r.server, status: "fault", prose: r.notice });
    if (r.status === "checked") {
      const beforeLines = (f.before ?? "").split(/\r?\n/);
      const lines = (f.after ?? "").split(/\r?\n/);
      const diff = diffDiagnostics(r.before, beforeLines, r.after, lines);
      reports.push({ path, server: r.server, status: "checked", diff, lines });
      meta.push({ path, server: r.server, status: r.status, ...diff, before: r.before, after: r.after });
    } else {
      if (r.status === "fault") reports.push({ path, server: r.server, status: "fault", prose: r.prose });
      else if (r.status === "starting" || r.status === "late") reports.push(r.status === "late" ? { path, server: r.server, status: "late", budgetMs } : { path, server: r.server, status: "starting" });
      meta.push({ path, server: r.server, status: r.status });
    }
  }
  const text = renderReports(reports, budgetMs);
  return { ...(text ? { text } : {}), ...(meta.length ? { diagnostics: meta } : {}) };
}

/** A code request, answered by the deadline of its budget. */
export async function codeRequest(ctx: ToolContext, req: Omit<CodeRequest, "budgetMs" | "base" | "limit">): Promise<CodeAnswer> {
  const budgetMs = envMs("KT_CODE_MS", CODE_MS);
  const full: CodeRequest = { ...req, ...(ctx.root ? { limit: ctx.root } : {}), base: configBase(ctx), budgetMs };
  const answer = await run<CodeAnswer>(ctx, { op: "code", req: full }, budgetMs, () => code(localPool(), full));
  return answer ?? { kind: "timeout", server: "the session's host" };
}

/** Runs `op` where the servers are: the session's host (one-shot calls) or this process. */
async function run<T>(ctx: ToolContext, message: { op: string; req: unknown }, budgetMs: number, here: () => Promise<T>): Promise<T | undefined> {
  if (routing.host) {
    // A host ends when its session's index is gone, and listens in the session's directory:
    // both must be there before it starts.
    try {
      index(ctx);
      sessionDir(ctx.stateDir, ctx.session);
    } catch {
      return here();
    }
    const { askHost } = await import("../process/host.ts");
    const answer = await askHost(ctx, ctx.stateDir, { lsp: message }, budgetMs + 1000);
    if (answer.reached) return answer.value as T | undefined;
  }
  return here();
}

/** The host's side: one request line in, the answer out (src/process/host.ts hands it over). */
export async function serveRequest(message: unknown): Promise<unknown> {
  const m = message as { op?: string; req?: unknown };
  if (m.op === "diagnose") return diagnose(localPool(), m.req as DiagnoseRequest);
  if (m.op === "code") return code(localPool(), m.req as CodeRequest);
  return undefined;
}

/** The host may end: no server is warm. */
export function serversIdle(): boolean {
  return local === undefined || local.idle();
}
