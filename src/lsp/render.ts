// The model-facing text of diagnostics (SPEC §8.1), written in this one place from what the
// pool found: a pure function of the reports, so every phrase is golden-tested.
import type { Diagnostic } from "./client.ts";
import type { DiagnosticsDiff } from "./diff.ts";

/** At most this many introduced errors are shown per file. */
export const SHOWN = 10;

export type FileReport =
  | { path: string; server: string; status: "checked"; diff: DiagnosticsDiff; lines: readonly string[] }
  | { path: string; server: string; status: "starting" }
  | { path: string; server: string; status: "late"; budgetMs: number }
  /** The server failed: `prose` says how, the first time only (later: "quiet"). */
  | { path: string; server: string; status: "fault"; prose: string }
  | { path: string; server: string; status: "quiet" };

/** `line:col severity [source code] message`, then the line's code. */
export function diagnosticLine(d: Diagnostic, lines: readonly string[]): string {
  const tag = [d.source, d.code].filter(Boolean).join(" ");
  const head = `${d.line}:${d.col} ${d.severity}${tag ? ` [${tag}]` : ""} ${oneLine(d.message)}`;
  const code = (lines[d.line - 1] ?? "").trim();
  return code ? `${head}\n    ${clip(code, 200)}` : head;
}

function oneLine(s: string): string {
  return clip(s.replace(/\s*\n\s*/g, " ").trim(), 400);
}

function clip(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

function errors(n: number): string {
  return `${n} ${n === 1 ? "error" : "errors"}`;
}

/** "1 fixed · 5 were already in this file" */
function tally(diff: DiagnosticsDiff): string {
  const kept = diff.kept.length;
  return `${diff.fixed.length} fixed · ${kept} ${kept === 1 ? "was" : "were"} already in this file`;
}

export function renderReport(r: FileReport, budgetMs: number): string | undefined {
  switch (r.status) {
    case "quiet":
      return undefined;
    case "fault":
      return r.prose;
    case "starting":
      return `Diagnostics: ${r.server} is still starting, so ${r.path} was not checked this time; the next change will be (or call code with action "diagnostics").`;
    case "late":
      return `Diagnostics: ${r.server} did not report on ${r.path} within ${budgetMs.toLocaleString("en-US")} ms, so nothing is shown rather than something stale; call code with action "diagnostics" to ask again.`;
    case "checked": {
      const { introduced } = r.diff;
      if (introduced.length === 0) {
        if (r.diff.fixed.length === 0 && r.diff.kept.length === 0) return `Diagnostics (${r.server}): no errors in ${r.path}.`;
        return `Diagnostics (${r.server}): no new errors in ${r.path} · ${tally(r.diff)}.`;
      }
      const shown = introduced.slice(0, SHOWN).map((d) => diagnosticLine(d, r.lines));
      const more = introduced.length - shown.length;
      return [
        `This change introduced ${errors(introduced.length)} in ${r.path} (${r.server}):`,
        ...shown,
        ...(more > 0 ? [`… and ${more} more: call code with action "diagnostics" on ${r.path} for every one.`] : []),
        tally(r.diff),
      ].join("\n");
    }
  }
}

/** The block appended to a change's text: one part per file that has something to say. */
export function renderReports(reports: readonly FileReport[], budgetMs: number): string | undefined {
  const parts = reports.map((r) => renderReport(r, budgetMs)).filter((s): s is string => s !== undefined);
  return parts.length > 0 ? parts.join("\n\n") : undefined;
}

/** The prose of a server that failed, said once per server and project. */
export function faultProse(server: string, command: string, fault: { kind: string; detail: string; stderr: string }, restarts: "will" | "wont"): string {
  const what = {
    spawn: "could not be started",
    init: "did not complete its start (initialize failed)",
    exit: "stopped",
    garbage: "sent something that is not the Language Server Protocol",
    hang: "stopped answering",
  }[fault.kind] ?? "failed";
  const printed = fault.stderr.trim().split("\n").slice(-5).join("\n").slice(-600);
  const next = restarts === "will"
    ? "kt starts it again on the next change."
    : "Diagnostics and the code tool are off for its files until the session ends; the change itself was made.";
  return [`Language server ${server} (${command}) ${what}: ${fault.detail}.`, ...(printed ? [`It printed:\n${printed}`] : []), next].join("\n");
}
