// The tool core: defineTool, which owns validation, the 64 KB backstop and the turning of
// thrown KtErrors into error results. The envelope and KtError live in core/result.ts.
// A tool body returns a ToolOutput or throws a KtError — nothing else.
import * as z from "zod/mini";
import { validationProse } from "./_validate.ts";
import { backstop } from "../core/truncate.ts";
import { appendNotices } from "../process/notices.ts";
import { deadOwnedSessions, endDeadSessions } from "../process/owner.ts";
import { isStateFault, StateError, stateProblem } from "../core/state.ts";
import { invalidInput, KtError, type ToolContext, type ToolOutput, type ToolResult } from "../core/result.ts";

export type { ErrorCode, ImageBlock, ToolContext, ToolFlags, ToolMetadata, ToolOutput, ToolResult, Truncation } from "../core/result.ts";
export { KtError } from "../core/result.ts";

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
  positionals?: readonly string[] | ((args: string[]) => Record<string, string | string[]>);
  /** Command lines shown under EXAMPLES in `kt <tool> --help`. */
  examples?: readonly string[];
  /** Spellings of other frameworks → canonical field name. */
  aliases?: Readonly<Record<string, string>>;
  /** Other frameworks' spellings that are more than a rename (Claude Code's "-i": true is
   * grep's case_sensitive: false), rewritten in place after the aliases; returns prose
   * for a contradiction, else null. */
  normalize?(input: Record<string, unknown>): string | null;
  annotations: ToolAnnotations;
  /** Its results may hold an image beside the text (read of a picture). */
  showsImages?: boolean;
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
      // SPEC §8.7: a session whose MCP server was killed is ended by the next kt call.
      if (deadOwnedSessions(ctx.stateDir, ctx.session).length > 0) await endDeadSessions(ctx).catch(() => 0);
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
        prose: invalidInput(tool.name, `parameters "${canonical}" and "${alias}" are the same field with different values`, `Please rewrite the input with only "${canonical}".`),
      };
    }
    delete input[alias];
  }
  const given = dropNulls(tool.parameters, input) as Record<string, unknown>;
  const contradiction = tool.normalize?.(given) ?? null;
  if (contradiction !== null) return { ok: false, prose: invalidInput(tool.name, contradiction, "") };
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
  return new KtError("INVALID_ARGS", invalidInput(tool, detail));
}
