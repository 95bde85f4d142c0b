// What a change did to a file's diagnostics (SPEC §8.1), as a pure function: the errors
// present after and not before are the ones it introduced. Two diagnostics are the same
// when their code, message and the text of their line agree — not their line number, so a
// change that only moves lines introduces nothing. Each earlier diagnostic matches at most
// one later one (a second copy of the same error is new).
import type { Diagnostic } from "./client.ts";

export interface DiagnosticsDiff {
  /** In the new content, not in the old: what the change broke. */
  introduced: Diagnostic[];
  /** In the old content, not in the new. */
  fixed: Diagnostic[];
  /** In both. */
  kept: Diagnostic[];
}

/** Only errors count: warnings and hints are in the full lists, not in what the model is told. */
export function isError(d: Diagnostic): boolean {
  return d.severity === "error";
}

function key(d: Diagnostic, lines: readonly string[]): string {
  return `${d.source ?? ""}\u0000${d.code ?? ""}\u0000${d.message}\u0000${(lines[d.line - 1] ?? "").trim()}`;
}

export function diffDiagnostics(before: readonly Diagnostic[], beforeLines: readonly string[], after: readonly Diagnostic[], afterLines: readonly string[]): DiagnosticsDiff {
  const waiting = new Map<string, Diagnostic[]>();
  for (const d of before.filter(isError)) {
    const k = key(d, beforeLines);
    const list = waiting.get(k);
    if (list) list.push(d);
    else waiting.set(k, [d]);
  }
  const introduced: Diagnostic[] = [];
  const kept: Diagnostic[] = [];
  for (const d of after.filter(isError)) {
    const list = waiting.get(key(d, afterLines));
    if (list && list.length > 0) {
      list.shift();
      kept.push(d);
    } else introduced.push(d);
  }
  const fixed = [...waiting.values()].flat();
  const order = (a: Diagnostic, b: Diagnostic) => a.line - b.line || a.col - b.col;
  return { introduced: introduced.sort(order), fixed: fixed.sort(order), kept: kept.sort(order) };
}
