// The data the cascade speaks: requests, candidate spans, strategy findings, the tagged
// result and its trace. No prose for the model lives here; the edit tool writes it.
import type { Haystack } from "./_haystack.ts";

export type StrategyName =
  | "exact"
  | "trailing-whitespace"
  | "indentation-flexible"
  | "whitespace-normalized"
  | "escape-normalized"
  | "trimmed-boundary"
  | "block-anchor"
  | "context-aware"
  | "multi-occurrence";

/** Inputs are already LF-normalized and BOM-free (the edit tool does that). */
export interface ReplaceRequest {
  content: string;
  oldString: string;
  newString: string;
  replaceAll: boolean;
  strict: boolean;
}

/** 1-based, inclusive. */
export interface LineRange {
  startLine: number;
  endLine: number;
}

/** One replacement: `content.slice(start, end)` becomes `text`. */
export interface Edit {
  start: number;
  end: number;
  text: string;
}

/** A span of the original content that a strategy claims old_string stands for. */
export interface Candidate extends LineRange {
  /** Offsets into the original content, `[start, end)`. */
  start: number;
  end: number;
  /** 0..1 for scored strategies (block-anchor, context-aware). */
  score?: number;
  /** Which reading of old_string matched (escape-normalized: "unescape", "typographic", "unescape+typographic"). */
  variant?: string;
  /** The line strategy the reading matched through, when it did not occur verbatim (escape-normalized). */
  via?: StrategyName;
  /**
   * Line alignment for scored strategies: `pairs[i]` is the line of the span (0-based, counted
   * from `startLine`) that line i of old_string stands for, or -1 when the file has no such line.
   */
  pairs?: number[];
}

export type DoubtKind =
  /** Two candidate blocks score within the margin of each other. */
  | "close-scores"
  /** The anchors bound another block that also passes the threshold. */
  | "rival-block"
  /** A line the model changes or deletes is not, even loosely, the file's line. */
  | "changed-line-differs"
  /** The file has a line the model never quoted inside the region it rewrites. */
  | "unquoted-line"
  /** The model deletes one of two neighbouring lines it quoted alike and the file has differently. */
  | "indistinct-lines";

export type Refusal =
  | {
      reason: "disproportionate";
      startLine: number;
      endLine: number;
      /** Length of the candidate span and the largest span allowed for this old_string. */
      matchedChars: number;
      limitChars: number;
    }
  | {
      reason: "doubtful";
      doubt: DoubtKind;
      /** The candidates behind the doubt, best first. */
      candidates: ScoredRange[];
      /** For changed-line-differs / unquoted-line: the file line (1-based) and both texts. */
      line?: number;
      expected?: string;
      actual?: string;
    };

export interface ScoredRange extends LineRange {
  score: number;
}

/** What one strategy saw. `matches.length ≥ 1` means the strategy fires. */
export interface Finding {
  matches: Candidate[];
  /** Total matches when `matches` was capped (exact on a one-character old_string…). */
  total?: number;
  /** Scored candidates that stayed below the threshold, best first: near-miss material. */
  rejected?: Candidate[];
  /** The strategy saw candidates it will not trust; the cascade stops and refuses. */
  refusal?: Refusal;
  /** Why nothing matched, for the trace. */
  note?: string;
}

/**
 * The replacement text for one match, or the reason writing it would be a guess. `guessed`: the
 * lines of `text` (0-based) inserted at a depth the model's indentation did not give.
 */
export type Rewrite = { text: string; guessed?: number[] } | { refusal: Refusal };

export interface Strategy {
  readonly name: StrategyName;
  /** Fuzzy strategies (2–8) carry the "change only what the model meant" rewrite. */
  readonly fuzzy: boolean;
  /** Scored strategies (7–8) are subject to the disproportionate-match guard. */
  readonly scored: boolean;
  /** Candidate spans of `find` in `hay.content` (offsets into the original text). */
  find(hay: Haystack, find: string): Finding;
  /** The text that replaces `match` when the model asked to turn `oldString` into `newString`. */
  rewrite(hay: Haystack, match: Candidate, oldString: string, newString: string): Rewrite;
}

export interface TraceCandidate extends LineRange {
  score?: number;
  accepted: boolean;
}

export interface TraceStep {
  strategy: StrategyName;
  decision: "taken" | "no-match" | "ambiguous" | "refused" | "skipped";
  reason: string;
  /** At most 20, best first for scored strategies, in file order otherwise. */
  candidates: TraceCandidate[];
  candidateCount: number;
}

export interface NearMiss extends LineRange {
  /** The first line that differs: 1-based file line and 1-based column. */
  line: number;
  column: number;
  /** That line as old_string has it, and as the file has it. */
  expected: string;
  actual: string;
  whitespaceOnly: boolean;
  /** How the region was found. */
  source: "trimmed-boundary" | "block-anchor" | "context-aware" | "line-votes" | "line-similarity";
  score: number;
}

/**
 * old_string carried a display's line numbers on every line and was looked for without them —
 * or, with `partial`, on some lines only, and was not.
 */
export interface Numbered {
  numbering?: { kind: "read" | "cat-n"; prefix: string; partial?: true };
}

export interface GuessedDepth {
  line: number;
  /** The indentation it was given, and the neighbouring line (1-based, new content) indented alike, if one is. */
  lead: string;
  like?: number;
}

export interface CascadeOk extends Numbered {
  kind: "ok";
  strategy: StrategyName;
  variant?: string;
  via?: StrategyName;
  score?: number;
  replacements: number;
  /** Sorted, non-overlapping spans of `content` and the text that replaces each. */
  edits: Edit[];
  newContent: string;
  /** Lines of the first edit: as matched in the old content, and as written in the new one. */
  matched: LineRange;
  written: LineRange;
  /** Lines of the new content (1-based) inserted at a depth the quote did not give: the result names them. */
  guessed?: GuessedDepth[];
  trace: TraceStep[];
}

export interface CascadeNotFound extends Numbered {
  kind: "not-found";
  nearMiss?: NearMiss;
  /** new_string already occurs exactly once: the edit was probably applied before. */
  alreadyApplied?: { line: number };
  trace: TraceStep[];
}

export interface CascadeAmbiguous extends Numbered {
  kind: "ambiguous";
  strategy: StrategyName;
  /** Number of distinct match positions (may exceed `lines.length` when capped). */
  count: number;
  /** 1-based start line of every match, in file order (capped at 1000). */
  lines: number[];
  trace: TraceStep[];
}

export type CascadeRefused = Numbered & {
  kind: "refused";
  strategy: StrategyName;
  /** The region the model should re-read, when one is known. */
  nearMiss?: NearMiss;
  trace: TraceStep[];
} & Refusal;

export type CascadeResult = CascadeOk | CascadeNotFound | CascadeAmbiguous | CascadeRefused;
