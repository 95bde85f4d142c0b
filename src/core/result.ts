// The shared ground floor (STYLE: types everyone shares live at the ground floor): the
// result envelope every tool returns (SPEC §3.1), the error a tool throws, and the context
// a tool runs in. Imports nothing of kt, so every layer above can use it.

export type ErrorCode =
  | "INVALID_ARGS" | "FILE_NOT_FOUND" | "IS_DIRECTORY" | "NOT_A_DIRECTORY" | "BINARY_FILE"
  | "FILE_TOO_LARGE" | "OFFSET_BEYOND_EOF" | "PERMISSION_DENIED" | "OUTSIDE_ROOT" | "NOT_READ"
  | "STALE_FILE" | "NO_MATCH" | "AMBIGUOUS_MATCH" | "IDENTICAL_STRINGS" | "EMPTY_OLD_STRING"
  | "DISPROPORTIONATE_MATCH" | "ALREADY_APPLIED" | "INVALID_REGEX" | "INVALID_GLOB"
  | "SPAWN_FAILED" | "INTERACTIVE_COMMAND" | "STATE_ONLY_COMMAND" | "UNKNOWN_PROCESS"
  | "PROCESS_EXITED" | "TOO_MANY_PROCESSES" | "ALREADY_RUNNING" | "UNKNOWN_TOOL" | "CANCELLED" | "INTERNAL"
  | "FILE_EXISTS"
  // Round three (SPEC §8).
  | "NO_LANGUAGE_SERVER" | "SANDBOX_UNAVAILABLE" | "SANDBOX_DENIED" | "UNENCODABLE";

export interface Truncation {
  originalBytes: number;
  originalLines: number;
  shownHeadLines: number;
  shownTailLines: number;
  omittedLines: number;
  spillPath?: string;
}

export interface ToolMetadata {
  title: string;
  durationMs: number;
  diff?: string;
  additions?: number;
  deletions?: number;
  matches?: number;
  files?: number;
  /** grep, glob (SPEC §8.4): the files shown, in order. */
  paths?: string[];
  /** grep's count mode: each shown path's count, index for index with paths. */
  counts?: number[];
  /** grep's content mode: every matching line shown; `column` is the 1-based byte offset
   * of the line's first match (as rg --column counts), null when the match does not lie
   * within the line alone (multiline). */
  lines?: { path: string; line: number; column: number | null; text: string }[];
  /** grep, glob: the directories pruned at the walk's boundary, and the line saying so. */
  skipped?: {
    directories: number;
    ignored: number;
    noise: number;
    paths: { path: string; reason: string }[];
    line: string;
  };
  exitCode?: number | null;
  processId?: string;
  truncation?: Truncation;
  /** write, edit, apply_patch, undo, code rename (SPEC §8.1): per changed file, what its language server said, complete. */
  diagnostics?: readonly object[];
  extra?: Record<string, unknown>;
}

/**
 * A picture handed to the model beside the text (SPEC §7.5): the file's bytes in base64.
 * Adapters that carry images put it in their own image block; the others send `content` alone.
 */
export interface ImageBlock {
  type: "image";
  mediaType: "image/png" | "image/jpeg" | "image/gif" | "image/webp";
  /** The file's bytes, base64. */
  data: string;
  width: number;
  height: number;
}

export interface ToolResult {
  content: string;
  isError: boolean;
  error?: { name: string; code: ErrorCode };
  /** Present only when the model should also see a picture (read of an image). */
  image?: ImageBlock;
  metadata: ToolMetadata;
}

/** What a tool body returns: the content (and an image, if any) plus every metadata field but the duration. */
export type ToolOutput = { content: string; image?: ImageBlock } & Omit<ToolMetadata, "durationMs">;

/**
 * `error.name` of each code: one name per failure class, so a program can branch on the class
 * and the code tells the recovery within it. The reference pipeline's names are kept where it
 * has the class (ToolArgsError, ToolNotFoundError, AbortError).
 */
export const ERROR_NAMES: Readonly<Record<ErrorCode, string>> = {
  INVALID_ARGS: "ToolArgsError",
  UNKNOWN_TOOL: "ToolNotFoundError",
  CANCELLED: "AbortError",
  INTERNAL: "InternalError",
  // The file named cannot be used as asked.
  FILE_NOT_FOUND: "FileError",
  IS_DIRECTORY: "FileError",
  NOT_A_DIRECTORY: "FileError",
  BINARY_FILE: "FileError",
  FILE_TOO_LARGE: "FileError",
  OFFSET_BEYOND_EOF: "FileError",
  PERMISSION_DENIED: "FileError",
  FILE_EXISTS: "FileError",
  OUTSIDE_ROOT: "ConfinementError",
  // Read before write (SPEC §3.4).
  NOT_READ: "ReadCheckError",
  STALE_FILE: "ReadCheckError",
  // old_string or a hunk against the file.
  NO_MATCH: "MatchError",
  AMBIGUOUS_MATCH: "MatchError",
  IDENTICAL_STRINGS: "MatchError",
  EMPTY_OLD_STRING: "MatchError",
  DISPROPORTIONATE_MATCH: "MatchError",
  ALREADY_APPLIED: "MatchError",
  INVALID_REGEX: "PatternError",
  INVALID_GLOB: "PatternError",
  // Commands and background processes.
  SPAWN_FAILED: "ProcessError",
  INTERACTIVE_COMMAND: "ProcessError",
  STATE_ONLY_COMMAND: "ProcessError",
  UNKNOWN_PROCESS: "ProcessError",
  PROCESS_EXITED: "ProcessError",
  TOO_MANY_PROCESSES: "ProcessError",
  ALREADY_RUNNING: "ProcessError",
  // Round three: code intelligence, the sandbox, encodings.
  NO_LANGUAGE_SERVER: "LanguageServerError",
  SANDBOX_UNAVAILABLE: "SandboxError",
  SANDBOX_DENIED: "SandboxError",
  UNENCODABLE: "EncodingError",
};

/** A failure the model can recover from. `message` is the model-facing repair prose; `name` is its class (ERROR_NAMES). */
export class KtError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly metadata: Partial<Omit<ToolMetadata, "durationMs">> = {},
  ) {
    super(message);
    this.name = ERROR_NAMES[code];
  }
}

/** CLI-only switches: never input fields, so a model cannot set them. */
export interface ToolFlags {
  skipReadCheck: boolean;
  dryRun: boolean;
  trace: boolean;
  strict: boolean;
  /** --no-diagnostics (SPEC §8.1): no language server is asked after a change. */
  noDiagnostics?: boolean;
}

/** SPEC §8.2: the sandbox policies, by Codex's names. */
export type SandboxMode = "read-only" | "workspace-write" | "off";

/**
 * What a sandboxed policy allows, as a person set it (src/sandbox/policy.ts builds it, and is
 * the one place that decides what it allows). Paths are absolute and real.
 */
export interface SandboxPolicy {
  mode: SandboxMode;
  /** Where commands and kt's file tools may write besides `tmp`: the root (or working directory) and each --writable; empty for read-only. */
  writable: readonly string[];
  /** The system temp directory, writable under both sandboxed policies. */
  tmp: string;
  /** --allow-network. */
  network: boolean;
  /** Unreadable inside: the well-known secret stores and each --deny-read. */
  denyRead: readonly string[];
  /** Who set the mode, for prose: "--sandbox", "KT_SANDBOX", "the default of kt mcp". */
  from: string;
}

export interface ToolContext {
  /** Absolute working directory that relative paths resolve against. */
  cwd: string;
  session: string;
  /** The adapter's call id (e.g. a tool_use id) or a generated one; names spill files. */
  callId: string;
  stateDir: string;
  /** Real path of the confinement root, when confined (§3.6). */
  root?: string;
  flags: ToolFlags;
  signal?: AbortSignal;
  /** The sandbox a person chose (SPEC §8.2); absent: off. */
  sandbox?: SandboxPolicy;
  /** A process whose end ends the session (the server of a generated MCP session): background commands stop when it is gone. */
  sessionOwner?: number;
  /** Human-facing diagnostics (stderr). Never model text. */
  warn(message: string): void;
  /** Human-facing output a person asked for, such as --trace (stderr, unlabelled). Optional for embedders. */
  info?(message: string): void;
  /** A person watches a terminal: a command's output, as it comes (kt bash; stderr). */
  stream?(bytes: Uint8Array): void;
}

/** The next step INVALID_ARGS prose gives unless a caller knows a more precise one. */
export const REWRITE = "Please rewrite the input so it satisfies the expected schema.";

/**
 * The prose of an invalid input (SPEC §3.3), in one shape everywhere: the tool as the model
 * knows it, what is wrong, then the next step (`next`, "" for none).
 */
export function invalidInput(tool: string, detail: string, next: string = REWRITE): string {
  return `Invalid input for tool "${tool}": ${detail}${detail.endsWith("?") ? "" : "."}${next ? ` ${next}` : ""}`;
}
