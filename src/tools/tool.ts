// The tool core: the result envelope, KtError, and defineTool, which owns validation,
// the 64 KB backstop and the turning of thrown KtErrors into error results.
// A tool body returns a ToolOutput or throws a KtError — nothing else.
import * as z from "zod/mini";
import { validationProse } from "./_validate.ts";
import { backstop } from "../core/truncate.ts";
import { appendNotices } from "../process/notices.ts";
import { isStateFault, StateError, stateProblem } from "../core/state.ts";

export type ErrorCode =
  | "INVALID_ARGS" | "FILE_NOT_FOUND" | "IS_DIRECTORY" | "NOT_A_DIRECTORY" | "BINARY_FILE"
  | "FILE_TOO_LARGE" | "OFFSET_BEYOND_EOF" | "PERMISSION_DENIED" | "OUTSIDE_ROOT" | "NOT_READ"
  | "STALE_FILE" | "NO_MATCH" | "AMBIGUOUS_MATCH" | "IDENTICAL_STRINGS" | "EMPTY_OLD_STRING"
  | "DISPROPORTIONATE_MATCH" | "ALREADY_APPLIED" | "INVALID_REGEX" | "INVALID_GLOB"
  | "SPAWN_FAILED" | "INTERACTIVE_COMMAND" | "STATE_ONLY_COMMAND" | "UNKNOWN_PROCESS"
  | "PROCESS_EXITED" | "TOO_MANY_PROCESSES" | "ALREADY_RUNNING" | "UNKNOWN_TOOL" | "CANCELLED" | "INTERNAL"
  | "FILE_EXISTS";

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
  exitCode?: number | null;
  processId?: string;
  truncation?: Truncation;
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

/** A failure the model can recover from. `message` is the model-facing repair prose. */
export class KtError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly metadata: Partial<Omit<ToolMetadata, "durationMs">> = {},
  ) {
    super(message);
    this.name = "KtError";
  }
}

/** CLI-only switches: never input fields, so a model cannot set them. */
export interface ToolFlags {
  skipReadCheck: boolean;
  dryRun: boolean;
  trace: boolean;
  strict: boolean;
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
  /** A process whose end ends the session (the server of a generated MCP session): background commands stop when it is gone. */
  sessionOwner?: number;
  /** Human-facing diagnostics (stderr). Never model text. */
  warn(message: string): void;
  /** Human-facing output a person asked for, such as --trace (stderr, unlabelled). Optional for embedders. */
  info?(message: string): void;
}

export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
}

export interface ToolSpec<S extends z.ZodMiniObject> {
  name: string;
  /** The name other frameworks see in `kt schema` (e.g. "process" for kt ps). */
  schemaName?: string;
  description: string;
  parameters: S;
  /** The field that is also positional on the command line. */
  primary: string;
  /** Fields that accept --<field>-file PATH|-. */
  longText?: readonly string[];
  /**
   * How command-line positionals map onto fields: a list (first positional → first field …;
   * defaults to [primary]) or a function for tools whose positionals depend on each other.
   */
  positionals?: readonly string[] | ((args: string[]) => Record<string, string>);
  /** Command lines shown under EXAMPLES in `kt <tool> --help`. */
  examples?: readonly string[];
  /** Spellings of other frameworks → canonical field name. */
  aliases?: Readonly<Record<string, string>>;
  /** Other frameworks' spellings that are more than a rename (Claude Code's "-i": true is
   * grep's case_sensitive: false), rewritten in place after the aliases; returns prose
   * for a contradiction, else null. */
  normalize?(input: Record<string, unknown>): string | null;
  annotations: ToolAnnotations;
  execute(input: z.infer<S>, ctx: ToolContext): Promise<ToolOutput>;
}

export interface Tool<S extends z.ZodMiniObject = z.ZodMiniObject> extends ToolSpec<S> {
  run(raw: unknown, ctx: ToolContext): Promise<ToolResult>;
}

export function defineTool<S extends z.ZodMiniObject>(spec: ToolSpec<S>): Tool<S> {
  const tool: Tool<S> = {
    ...spec,
    async run(raw, ctx) {
      const started = performance.now();
      let result: ToolResult;
      // Validation prose names the tool as the model knows it ("process", not "ps").
      const parsed = parseInput(spec.schemaName ? { ...tool, name: spec.schemaName } : tool, raw);
      if (!parsed.ok) {
        result = errorResult(spec.name, new KtError("INVALID_ARGS", parsed.prose), started);
      } else {
        try {
          const out = await spec.execute(parsed.input as z.infer<S>, ctx);
          const { content, image, ...meta } = out;
          result = { content, isError: false, ...(image ? { image } : {}), metadata: { ...meta, durationMs: 0 } };
        } catch (error) {
          if (error instanceof KtError) result = errorResult(spec.name, error, started);
          else if (isStateFault(error) && !(error instanceof StateError)) throw new StateError(stateProblem(ctx.stateDir, error));
          else throw error;
        }
      }
      backstop(result, spec.name, ctx);
      try {
        appendNotices(result, ctx);
      } catch (error) {
        // A result already computed is not withheld for want of the index: notices wait.
        if (!isStateFault(error)) throw error;
        ctx.warn(`completion notices skipped. ${stateProblem(ctx.stateDir, error)}`);
      }
      result.metadata.durationMs = Math.round((performance.now() - started) * 10) / 10;
      return result;
    },
  };
  return tool;
}

export function errorResult(tool: string, error: KtError, started = performance.now()): ToolResult {
  return {
    content: error.message,
    isError: true,
    error: { name: error.name, code: error.code },
    metadata: { title: `${tool} failed · ${error.code}`, ...error.metadata, durationMs: Math.round((performance.now() - started) * 10) / 10 },
  };
}

type Parsed = { ok: true; input: unknown } | { ok: false; prose: string };

/**
 * Maps aliases onto canonical names, drops optional fields sent as null (SPEC §7.5: OpenAI
 * strict mode sends every field, null for "not given"), then validates with the tool's zod schema.
 */
export function parseInput(tool: Pick<ToolSpec<z.ZodMiniObject>, "name" | "parameters" | "aliases" | "normalize">, raw: unknown): Parsed {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return { ok: false, prose: validationProse(tool.name, tool.parameters, raw, []) };
  }
  const input: Record<string, unknown> = { ...(raw as Record<string, unknown>) };
  for (const [alias, canonical] of Object.entries(tool.aliases ?? {})) {
    if (!(alias in input)) continue;
    if (input[alias] === null) {
      delete input[alias];
      continue;
    }
    if (!(canonical in input)) input[canonical] = input[alias];
    else if (input[canonical] !== input[alias]) {
      return {
        ok: false,
        prose: `Invalid input for tool "${tool.name}": parameters "${canonical}" and "${alias}" are the same field with different values. Please rewrite the input with only "${canonical}".`,
      };
    }
    delete input[alias];
  }
  const given = dropNulls(tool.parameters, input) as Record<string, unknown>;
  const contradiction = tool.normalize?.(given) ?? null;
  if (contradiction !== null) return { ok: false, prose: `Invalid input for tool "${tool.name}": ${contradiction}.` };
  const result = tool.parameters.safeParse(given);
  if (result.success) return { ok: true, input: result.data };
  return { ok: false, prose: validationProse(tool.name, tool.parameters, given, result.error.issues) };
}

type Def = { type: string; innerType?: z.ZodMiniType; shape?: Record<string, z.ZodMiniType>; element?: z.ZodMiniType };

/** `value` without the null values of fields the schema marks optional, at every depth (a copy where anything changed). */
function dropNulls(schema: z.ZodMiniType, value: unknown): unknown {
  let def = schema._zod.def as Def;
  while (def.innerType && (def.type === "optional" || def.type === "default" || def.type === "nonoptional" || def.type === "readonly")) {
    def = def.innerType._zod.def as Def;
  }
  if (def.type === "object" && def.shape && typeof value === "object" && value !== null && !Array.isArray(value)) {
    const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    for (const [key, field] of Object.entries(def.shape)) {
      if (!Object.hasOwn(out, key)) continue;
      if (out[key] === null && (field._zod.def as Def).type === "optional") delete out[key];
      else out[key] = dropNulls(field, out[key]);
    }
    return out;
  }
  if (def.type === "array" && def.element && Array.isArray(value)) return value.map((item) => dropNulls(def.element!, item));
  return value;
}

/** Model-facing prose for a KtError raised by a tool body for a conditional requirement. */
export function invalidArgs(tool: string, detail: string): KtError {
  return new KtError(
    "INVALID_ARGS",
    `Invalid input for tool "${tool}": ${detail}. Please rewrite the input so it satisfies the expected schema.`,
  );
}
