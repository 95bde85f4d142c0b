// The cascade: strategies from strictest to loosest; the first that yields a match decides, and
// later ones never run. Guards apply to whatever it found: one match position only (unless
// replace_all), no disproportionate span for the scored strategies, no doubtful alignment.
//
// Doubt is reported as `kind: "refused", reason: "doubtful"` with the near-miss of the region
// concerned, so a caller can word it as a not-found with that near-miss (SPEC §4.3 asks for the
// near-miss prose) while scripts and --trace still see why the edit was refused.
import type {
  Candidate, CascadeResult, Edit, Finding, GuessedDepth, LineRange, ReplaceRequest, Strategy, TraceCandidate, TraceStep,
} from "./types.ts";
import { Haystack } from "./_haystack.ts";
import { isBlank, leadOf, occurrences, splitModel } from "./_text.ts";
import { nearMiss, describe, focus, type Hint } from "./near-miss.ts";
import { exact } from "./exact.ts";
import { trailingWhitespace } from "./trailing-whitespace.ts";
import { indentationFlexible } from "./indentation-flexible.ts";
import { whitespaceNormalized } from "./whitespace-normalized.ts";
import { escapeNormalized } from "./escape-normalized.ts";
import { trimmedBoundary } from "./trimmed-boundary.ts";
import { blockAnchor } from "./block-anchor.ts";
import { contextAware } from "./context-aware.ts";
import { multiOccurrence } from "./multi-occurrence.ts";
import { someNumbered, unnumbered } from "./line-numbers.ts";

/** SPEC §4.3, in order. */
export const CASCADE: readonly Strategy[] = [
  exact,
  trailingWhitespace,
  indentationFlexible,
  whitespaceNormalized,
  escapeNormalized,
  trimmedBoundary,
  blockAnchor,
  contextAware,
  multiOccurrence,
];

/** The longest span a scored strategy may match for an old_string of this length. */
export function disproportionLimit(oldLength: number): number {
  return Math.max(3 * oldLength, oldLength + 1000);
}

const TRACE_CANDIDATES = 20;

function skipReason(strategy: Strategy, req: ReplaceRequest): string | undefined {
  if (strategy.name === "multi-occurrence") return req.replaceAll ? undefined : "runs only with replace_all";
  if (req.replaceAll) return "replace_all uses exact matches only (multi-occurrence)";
  if (req.strict && strategy.name !== "exact") return "strict: exact matching only";
  return undefined;
}

function traceCandidates(finding: Finding): { candidates: TraceCandidate[]; candidateCount: number } {
  const all = [
    ...finding.matches.map((c) => ({ c, accepted: true })),
    ...(finding.rejected ?? []).map((c) => ({ c, accepted: false })),
  ];
  const candidates = all.slice(0, TRACE_CANDIDATES).map(({ c, accepted }) => ({
    startLine: c.startLine,
    endLine: c.endLine,
    ...(c.score === undefined ? {} : { score: Math.round(c.score * 1000) / 1000 }),
    accepted,
  }));
  const listed = finding.matches.length + (finding.rejected?.length ?? 0);
  return { candidates, candidateCount: Math.max(listed, finding.total ?? 0) };
}

function lines(r: LineRange): string {
  return r.startLine === r.endLine ? `line ${r.startLine}` : `lines ${r.startLine}–${r.endLine}`;
}

/** Distinct match positions: one candidate per start offset, in file order. */
function distinct(matches: Candidate[]): Candidate[] {
  const seen = new Set<number>();
  return [...matches].sort((a, b) => a.start - b.start).filter((c) => !seen.has(c.start) && seen.add(c.start));
}

export function applyEdits(content: string, edits: readonly Edit[]): string {
  let out = "";
  let at = 0;
  for (const e of edits) {
    out += content.slice(at, e.start) + e.text;
    at = e.end;
  }
  return out + content.slice(at);
}

/** Lines the first edit occupies in the new content (its prefix is unchanged, so it starts on the same line). */
function written(startLine: number, text: string): LineRange {
  let breaks = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) breaks++;
  if (text.endsWith("\n")) breaks--;
  return { startLine, endLine: startLine + Math.max(0, breaks) };
}

/**
 * The cascade on old_string as given; when it is found nowhere and every line of it carries a
 * display's line numbers (read's `   435→`, cat -n's), on the quote without them — taken only
 * where the bare quote starts a line, as the text after a display's number does.
 */
export function replace(req: ReplaceRequest): CascadeResult {
  const hay = new Haystack(req.content);
  const first = cascade(hay, req);
  if (first.kind !== "not-found" || req.strict) return first;
  const bare = unnumbered(req.oldString, req.newString);
  if (!bare) {
    const some = someNumbered(req.oldString);
    return some ? { ...first, numbering: { kind: some.numbering, prefix: some.prefix, partial: true } } : first;
  }
  const numbering = { kind: bare.numbering, prefix: bare.prefix };
  const second = cascade(hay, { ...req, oldString: bare.old, newString: bare.neu });
  const trace = [...first.trace, ...second.trace.map((step) => ({ ...step, reason: `without the line numbers: ${step.reason}` }))];
  if (second.kind === "ok" && !second.edits.every((e) => e.start === 0 || req.content.charCodeAt(e.start - 1) === 10)) {
    return { ...first, numbering, trace };
  }
  return { ...second, numbering, trace };
}

function cascade(hay: Haystack, req: ReplaceRequest): CascadeResult {
  const trace: TraceStep[] = [];
  const hints: Hint[] = [];
  const boundary: Hint[] = [];
  if (req.oldString === "") {
    trace.push({ strategy: "exact", decision: "skipped", reason: "old_string is empty", candidates: [], candidateCount: 0 });
    return { kind: "not-found", trace };
  }

  for (const strategy of CASCADE) {
    const skip = skipReason(strategy, req);
    if (skip) {
      trace.push({ strategy: strategy.name, decision: "skipped", reason: skip, candidates: [], candidateCount: 0 });
      continue;
    }
    const finding = strategy.find(hay, req.oldString);
    const seen = traceCandidates(finding);
    const step = (decision: TraceStep["decision"], reason: string) => trace.push({ strategy: strategy.name, decision, reason, ...seen });
    if (strategy.scored) {
      for (const c of finding.rejected ?? []) hints.push({ source: strategy.name as Hint["source"], candidate: c });
    }
    // The trimmed text occurs verbatim there, refused only for gluing onto a token: the nearest miss of all.
    if (strategy.name === "trimmed-boundary") {
      const shift = boundaryBreaks(req.oldString);
      for (const c of finding.rejected ?? []) boundary.push({ source: "trimmed-boundary", candidate: c, shift });
    }

    if (finding.refusal) {
      const r = finding.refusal;
      step("refused", r.reason === "doubtful" ? doubtReason(r.doubt, r.candidates) : "refused");
      const best = finding.rejected?.[0];
      const near = best ? describe(hay, splitModel(req.oldString).lines, best.startLine - 1, best.pairs, strategy.name as Hint["source"], best.score ?? 0) : undefined;
      return { kind: "refused", strategy: strategy.name, ...r, ...(near ? { nearMiss: near } : {}), trace };
    }
    if (finding.matches.length === 0) {
      step("no-match", finding.note ?? "no candidates");
      continue;
    }

    if (strategy.name === "multi-occurrence") {
      const edits = finding.matches.map((m) => ({ start: m.start, end: m.end, text: req.newString }));
      step("taken", `${edits.length} exact ${edits.length === 1 ? "occurrence" : "occurrences"} replaced`);
      return ok(req, strategy, finding.matches[0]!, edits, trace);
    }

    const positions = distinct(finding.matches);
    const count = Math.max(positions.length, finding.total ?? 0);
    if (count > 1) {
      step("ambiguous", `${count} distinct matches and replace_all is false`);
      return { kind: "ambiguous", strategy: strategy.name, count, lines: positions.map((c) => c.startLine), trace };
    }
    const match = positions[0]!;
    const limit = disproportionLimit(req.oldString.length);
    if (strategy.scored && match.end - match.start > limit) {
      step("refused", `the block at ${lines(match)} spans ${match.end - match.start} characters, more than the ${limit} allowed for old_string`);
      const near = describe(hay, splitModel(req.oldString).lines, match.startLine - 1, match.pairs, strategy.name as Hint["source"], match.score ?? 0);
      return {
        kind: "refused",
        strategy: strategy.name,
        ...(near ? { nearMiss: near } : {}),
        reason: "disproportionate",
        startLine: match.startLine,
        endLine: match.endLine,
        matchedChars: match.end - match.start,
        limitChars: limit,
        trace,
      };
    }
    const rewrite = strategy.rewrite(hay, match, req.oldString, req.newString);
    if ("refusal" in rewrite) {
      const r = rewrite.refusal;
      step("refused", r.reason === "doubtful" ? doubtReason(r.doubt, r.candidates, r.line) : "refused");
      const source = strategy.name as Hint["source"];
      const near = r.reason === "doubtful" && r.doubt === "changed-line-differs" && r.line !== undefined && r.expected !== undefined
        ? focus(hay, match, r.line, r.expected, source, match.score ?? 0)
        : describe(hay, splitModel(req.oldString).lines, match.startLine - 1, match.pairs, source, match.score ?? 0);
      return { kind: "refused", strategy: strategy.name, ...r, ...(near ? { nearMiss: near } : {}), trace };
    }
    const score = match.score === undefined ? "" : `, score ${match.score.toFixed(2)}`;
    const variant = match.variant ? ` (${match.variant}${match.via ? `, ${match.via}` : ""})` : "";
    step("taken", `1 match at ${lines(match)}${score}${variant}`);
    const done = ok(req, strategy, match, [{ start: match.start, end: match.end, text: rewrite.text }], trace);
    return rewrite.guessed && done.kind === "ok" ? { ...done, guessed: depths(rewrite.text, rewrite.guessed, match.startLine) } : done;
  }

  const found = nearMiss(hay, req.oldString, [...boundary, ...hints.sort((a, b) => (b.candidate.score ?? 0) - (a.candidate.score ?? 0))]);
  const applied = alreadyApplied(hay, req);
  return {
    kind: "not-found",
    ...(found ? { nearMiss: found } : {}),
    ...(applied ? { alreadyApplied: applied } : {}),
    trace,
  };
}

/**
 * The guessed lines of a rewrite as lines of the new content (the rewrite starts on the match's
 * first line), each with the nearest non-blank line above or else below it indented alike, if any.
 */
function depths(text: string, guessed: readonly number[], startLine: number): GuessedDepth[] {
  const rows = text.split("\n");
  const solid = (k: number) => k >= 0 && k < rows.length && !guessed.includes(k) && !isBlank(rows[k]!);
  return guessed.map((g) => {
    const lead = leadOf(rows[g]!);
    let above = g - 1;
    while (above >= 0 && !solid(above)) above--;
    let below = g + 1;
    while (below < rows.length && !solid(below)) below++;
    const like = [above, below].find((k) => solid(k) && leadOf(rows[k]!) === lead);
    return { line: startLine + g, lead, ...(like === undefined ? {} : { like: startLine + like }) };
  });
}

/** Line breaks in old_string's leading whitespace. */
function boundaryBreaks(find: string): number {
  const lead = find.slice(0, find.length - find.trimStart().length);
  let n = 0;
  for (const c of lead) if (c === "\n") n++;
  return n;
}

function ok(req: ReplaceRequest, strategy: Strategy, first: Candidate, edits: Edit[], trace: TraceStep[]): CascadeResult {
  return {
    kind: "ok",
    strategy: strategy.name,
    ...(first.variant ? { variant: first.variant } : {}),
    ...(first.via ? { via: first.via } : {}),
    ...(first.score === undefined ? {} : { score: first.score }),
    replacements: edits.length,
    edits,
    newContent: applyEdits(req.content, edits),
    matched: { startLine: first.startLine, endLine: first.endLine },
    written: written(first.startLine, edits[0]!.text),
    trace,
  };
}

/**
 * new_string occurring exactly once where old_string occurs nowhere suggests the edit was made
 * already. Not when new_string is blank or part of old_string: its presence would prove nothing.
 */
// A short new_string ("x", "foo") occurs by chance: only a substantial one, found whole
// (not inside a longer identifier), is evidence that the edit already happened.
const MIN_APPLIED_CHARS = 12;

function alreadyApplied(hay: Haystack, req: ReplaceRequest): { line: number } | undefined {
  if (req.newString.replace(/\s/g, "").length < MIN_APPLIED_CHARS || req.oldString.includes(req.newString)) return undefined;
  const { offsets, total } = occurrences(hay.content, req.newString, 1);
  if (total !== 1) return undefined;
  const at = offsets[0]!;
  const word = /[\p{L}\p{N}_$]/u;
  const glued = (inside: string | undefined, outside: string | undefined) => inside !== undefined && outside !== undefined && word.test(inside) && word.test(outside);
  if (glued(req.newString[0], hay.content[at - 1]) || glued(req.newString.at(-1), hay.content[at + req.newString.length])) return undefined;
  return { line: hay.lineOf(at) };
}

function doubtReason(doubt: string, candidates: readonly LineRange[], line?: number): string {
  const where = candidates.map((c) => lines(c)).join(", ");
  switch (doubt) {
    case "close-scores":
      return `blocks at ${where} score within the margin of each other`;
    case "rival-block":
      return `the anchors also bound another passing block (${where})`;
    case "changed-line-differs":
      return `old_string changes ${line ? `line ${line}` : "a line"} that the file does not have as quoted`;
    case "indistinct-lines":
      return `old_string deletes one of two neighbouring lines it quotes alike (${line ? `line ${line}` : "a line"} and its neighbour), which the file indents differently`;
    case "unquoted-line":
      return `the change would remove ${line ? `line ${line}` : "a line"}, which old_string never quoted`;
    default:
      return doubt;
  }
}
