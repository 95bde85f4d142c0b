// The cascade's strategies run on a block of whole lines, for a caller that chooses which
// tolerances it allows and where in the file the block may start (apply_patch: after the
// previous hunk, or after an `@@ <line>` anchor). Same rules as the cascade: the first
// strategy with a match decides, more than one match position is ambiguous, and a fuzzy
// match's replacement is the strategy's own rewrite (lines the model kept are the file's).
// Strategies are chosen by name, so the cascade's order and membership can change freely.
import { Haystack } from "./_haystack.ts";
import { CASCADE } from "./cascade.ts";
import { nearMiss } from "./near-miss.ts";
import { looseKey } from "./_text.ts";
import type { Candidate, Edit, NearMiss, Strategy, TraceStep } from "./types.ts";

export interface LocateRequest {
  /** Strategy names, strictest first; names the cascade does not have are passed over. */
  tiers: readonly string[];
  /** Whole lines, each ending in "\n": what the file must hold. */
  oldText: string;
  /** What replaces it. */
  newText: string;
  /** 0-based line before which no match may start. */
  fromLine: number;
  /** The match must end the content (`*** End of File`). */
  atEnd: boolean;
  /** A strategy's candidate may be refused by the caller (e.g. only some readings of escape-normalized). */
  accept?(strategy: string, candidate: Candidate): boolean;
}

export type Located =
  | { kind: "ok"; strategy: string; variant?: string; edit: Edit; startLine: number; endLine: number; trace: TraceStep[] }
  | { kind: "not-found"; nearMiss?: NearMiss; trace: TraceStep[] }
  | { kind: "ambiguous"; strategy: string; lines: number[]; trace: TraceStep[] };

/**
 * `hay` is the whole content; the search runs on the part from `fromLine` on, so a match
 * before it can neither be taken nor make the block ambiguous.
 */
export function locate(hay: Haystack, req: LocateRequest): Located {
  const trace: TraceStep[] = [];
  const from = Math.min(req.fromLine, hay.lineCount);
  const base = from < hay.lineCount ? hay.starts[from]! : hay.content.length;
  const part = base === 0 ? hay : from < hay.lineCount ? hay.from(from) : new Haystack("");
  const step = (strategy: string, decision: TraceStep["decision"], reason: string, found: Candidate[] = []) =>
    trace.push({
      strategy: strategy as TraceStep["strategy"],
      decision,
      reason,
      candidates: found.slice(0, 20).map((c) => ({ startLine: c.startLine + from, endLine: c.endLine + from, accepted: decision === "taken" })),
      candidateCount: found.length,
    });

  for (const name of req.tiers) {
    const strategy: Strategy | undefined = CASCADE.find((s) => s.name === name);
    if (!strategy) continue;
    const finding = strategy.find(part, req.oldText);
    const seen = new Set<number>();
    const matches = finding.matches
      .filter((c) => (c.start === 0 || part.content.charCodeAt(c.start - 1) === 10) && (!req.atEnd || c.end === part.content.length))
      .filter((c) => req.accept?.(name, c) ?? true)
      .sort((a, b) => a.start - b.start)
      .filter((c) => !seen.has(c.start) && seen.add(c.start));
    if (matches.length === 0) {
      step(name, "no-match", finding.note ?? (finding.matches.length > 0 ? "matches only inside a line, before the search start, or not at the end of the file" : "no candidates"));
      continue;
    }
    if (matches.length > 1) {
      step(name, "ambiguous", `${matches.length} places fit`, matches);
      return { kind: "ambiguous", strategy: name, lines: matches.map((c) => c.startLine + from), trace };
    }
    const match = matches[0]!;
    const rewrite = strategy.rewrite(part, match, req.oldText, req.newText);
    if ("refusal" in rewrite) {
      step(name, "refused", "the strategy would not trust its own rewrite", matches);
      break;
    }
    const at = match.startLine === match.endLine ? `line ${match.startLine + from}` : `lines ${match.startLine + from}–${match.endLine + from}`;
    step(name, "taken", `1 match at ${at}${match.variant ? ` (${match.variant})` : ""}`, matches);
    return {
      kind: "ok",
      strategy: name,
      ...(match.variant ? { variant: match.variant } : {}),
      edit: { start: match.start + base, end: match.end + base, text: rewrite.text },
      startLine: match.startLine + from,
      endLine: match.endLine + from,
      trace,
    };
  }
  const near = nearMiss(hay, req.oldText, []);
  return { kind: "not-found", ...(near ? { nearMiss: near } : {}), trace };
}

/** 0-based lines at or after `fromLine` that equal `line` exactly, else once trimmed, else once trimmed and folded. */
export function findLine(hay: Haystack, line: string, fromLine: number): number[] {
  const want = line.trim();
  const trimmed = hay.linesWithId(hay.idOf(want)).filter((i) => i >= fromLine);
  const exact = trimmed.filter((i) => hay.line(i) === line);
  if (exact.length > 0) return exact;
  if (trimmed.length > 0) return trimmed;
  const key = looseKey(line);
  const out: number[] = [];
  for (let i = fromLine; i < hay.lineCount; i++) if (hay.looseKey(i) === key) out.push(i);
  return out;
}
