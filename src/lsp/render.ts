// The model-facing text of diagnostics (SPEC §8.1), written in this one place from what the
// pool found: a pure function of the reports, so every phrase is golden-tested.
import type { Diagnostic } from "./client.ts";
import type { DiagnosticsDiff } from "./diff.ts";
import { grouped } from "../core/text.ts";

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
      return `Diagnostics: ${r.server} did not report on ${r.path} within ${grouped(budgetMs)} ms, so nothing is shown rather than something stale; call code with action "diagnostics" to ask again.`;
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

/** Past this many files of one kind (one server, one outcome), one line says them all. */
export const GROUPED = 4;

/** Files whose new errors are shown; past them, one line counts the rest. */
export const SHOWN_FILES = 10;

function files(paths: readonly string[]): string {
  const first = paths.slice(0, 5).join(", ");
  return `${paths.length} files (${first}${paths.length > 5 ? ` and ${paths.length - 5} more` : ""})`;
}

/** One line for several files of one server and one outcome. */
function renderGroup(kind: "clean" | "starting" | "late", server: string, group: readonly FileReport[], budgetMs: number): string {
  const paths = group.map((r) => r.path);
  if (kind === "starting") return `Diagnostics: ${server} is still starting, so ${files(paths)} were not checked this time; the next change will be (or call code with action "diagnostics").`;
  if (kind === "late") return `Diagnostics: ${server} did not report on ${files(paths)} within ${grouped(budgetMs)} ms, so nothing is shown rather than something stale; call code with action "diagnostics" to ask again.`;
  let fixed = 0;
  let kept = 0;
  for (const r of group) {
    if (r.status !== "checked") continue;
    fixed += r.diff.fixed.length;
    kept += r.diff.kept.length;
  }
  if (fixed === 0 && kept === 0) return `Diagnostics (${server}): no errors in ${files(paths)}.`;
  return `Diagnostics (${server}): no new errors in ${files(paths)} · ${fixed} fixed · ${kept} ${kept === 1 ? "was" : "were"} already in them.`;
}

function kindOf(r: FileReport): "clean" | "starting" | "late" | null {
  if (r.status === "checked") return r.diff.introduced.length === 0 ? "clean" : null;
  return r.status === "starting" || r.status === "late" ? r.status : null;
}

/**
 * The block appended to a change's text: one part per file that has something to say, in
 * order; a change of many files (a replace) says the files of one server and one outcome
 * (no new errors, still starting, too late) in one line once there are GROUPED of them, and
 * shows the new errors of SHOWN_FILES files at most.
 */
export function renderReports(reports: readonly FileReport[], budgetMs: number): string | undefined {
  const groups = new Map<string, FileReport[]>();
  for (const r of reports) {
    const kind = kindOf(r);
    if (kind === null) continue;
    const key = `${kind}\u0000${r.server}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const parts: string[] = [];
  const said = new Set<string>();
  let erring = 0;
  let unshown = 0;
  for (const r of reports) {
    const kind = kindOf(r);
    const key = kind === null ? null : `${kind}\u0000${r.server}`;
    const group = key === null ? undefined : groups.get(key);
    if (kind !== null && key !== null && group && group.length >= GROUPED) {
      if (!said.has(key)) parts.push(renderGroup(kind, r.server, group, budgetMs));
      said.add(key);
      continue;
    }
    if (r.status === "checked" && r.diff.introduced.length > 0 && ++erring > SHOWN_FILES) {
      unshown++;
      continue;
    }
    const text = renderReport(r, budgetMs);
    if (text !== undefined) parts.push(text);
  }
  if (unshown > 0) parts.push(`… and ${unshown} more ${unshown === 1 ? "file" : "files"} with errors this change introduced: call code with action "diagnostics" (without file_path: every file this session changed) for all of them.`);
  return parts.length > 0 ? parts.join("\n\n") : undefined;
}

/** Said when a change covered more files than were checked (a replace checks at most that many). */
export function uncheckedLine(checked: number, covered: number): string {
  return `Diagnostics were asked for the first ${checked} of the ${covered} changed files a language server may cover; call code with action "diagnostics" (without file_path: every file this session changed) for the others.`;
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
