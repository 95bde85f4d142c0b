// The tool core: defineTool, which owns validation, the 64 KB backstop and the turning of
// thrown KtErrors into error results. The envelope and KtError live in core/result.ts.
// A tool body returns a ToolOutput or throws a KtError — nothing else.
import { accept, dropNulls, type Infer, type ObjectParam } from "./params.ts";
import { backstop } from "../core/truncate.ts";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { deadOwnedSessions, endDeadSessions } from "../process/owner.ts";
import { isStateFault, safeName, StateError, stateProblem } from "../core/state.ts";
import { invalidInput, KtError, type ToolContext, type ToolOutput, type ToolResult } from "../core/result.ts";

export type { ErrorCode, ImageBlock, ToolContext, ToolFlags, ToolMetadata, ToolOutput, ToolResult, Truncation } from "../core/result.ts";
export { KtError } from "../core/result.ts";

export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
}

export interface ToolSpec<S extends ObjectParam = ObjectParam> {
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
  execute(input: Infer<S>, ctx: ToolContext): Promise<ToolOutput>;
}

export interface Tool<S extends ObjectParam = ObjectParam> extends ToolSpec<S> {
  run(raw: unknown, ctx: ToolContext): Promise<ToolResult>;
}

export function defineTool<S extends ObjectParam>(spec: ToolSpec<S>): Tool<S> {
  const tool: Tool<S> = {
    ...spec,
    async run(raw, ctx) {
      const started = performance.now();
      let result: ToolResult;
      // Validation prose names the tool as the model knows it ("process", not "ps").
      const parsed = await parseInput(spec.schemaName ? { ...tool, name: spec.schemaName } : tool, raw);
      if (!parsed.ok) {
        result = errorResult(spec.name, new KtError("INVALID_ARGS", parsed.prose), started);
      } else {
        try {
          const out = await spec.execute(parsed.input as Infer<S>, ctx);
          // The metadata as the tool gave it, getters kept: a field made when first read (replace's
          // diff) is made only for an answer that shows it (--json, an MCP client).
          const metadata = Object.defineProperties({}, Object.getOwnPropertyDescriptors(out)) as ToolResult["metadata"] & { content?: unknown; image?: unknown };
          delete metadata.content;
          delete metadata.image;
          metadata.durationMs = 0;
          result = { content: out.content, isError: false, ...(out.image ? { image: out.image } : {}), metadata };
        } catch (error) {
          if (error instanceof KtError) result = errorResult(spec.name, error, started);
          else if (isStateFault(error) && !(error instanceof StateError)) throw new StateError(stateProblem(ctx.stateDir, error));
          else throw error;
        }
      }
      backstop(result, spec.name, ctx);
      try {
        if (startedProcesses(ctx)) (await import("../process/notices.ts")).appendNotices(result, ctx);
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

/**
 * The session has started a process, so it may have completion notices (SPEC §4.7): the
 * check process/notices.ts begins with, made here so that a session that never started one
 * does not load the process registry on every call.
 */
function startedProcesses(ctx: ToolContext): boolean {
  return existsSync(join(ctx.stateDir, "sessions", safeName(ctx.session), "proc"));
}

export function errorResult(tool: string, error: KtError, started = performance.now()): ToolResult {
  return {
    content: error.message,
    isError: true,
    error: { name: error.name, code: error.code },
    metadata: { title: `${tool} failed · ${error.code}`, ...error.metadata, durationMs: Math.round((performance.now() - started) * 10) / 10 },
  };
}

export type Parsed = { ok: true; input: unknown } | { ok: false; prose: string };

type Parses = Pick<ToolSpec, "name" | "parameters" | "aliases" | "normalize">;

/**
 * Maps aliases onto canonical names, drops optional fields sent as null (SPEC §7.5: OpenAI
 * strict mode sends every field, null for "not given"), then validates against the tool's
 * parameters. A call that passes costs no zod; any other goes to zod (src/tools/_zod.ts),
 * which gives the same answer every call once had, with its prose.
 */
export async function parseInput(tool: Parses, raw: unknown): Promise<Parsed> {
  const input = quickParse(tool, raw);
  if (input !== undefined) return { ok: true, input };
  return (await import("./_zod.ts")).parseWithZod(tool, raw);
}

/**
 * Moves each alias given in `input` to its canonical field (a null alias is dropped);
 * returns the first [canonical, alias] given with different values, left in place, else null.
 */
export function mergeAliases(aliases: Record<string, string> | undefined, input: Record<string, unknown>): [string, string] | null {
  for (const [alias, canonical] of Object.entries(aliases ?? {})) {
    if (!(alias in input)) continue;
    if (input[alias] === null) {
      delete input[alias];
      continue;
    }
    if (!(canonical in input)) input[canonical] = input[alias];
    else if (input[canonical] !== input[alias]) return [canonical, alias];
    delete input[alias];
  }
  return null;
}

/** parseInput's way without zod: the parsed input, or undefined for zod to decide. */
export function quickParse(tool: Parses, raw: unknown): Record<string, unknown> | undefined {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return undefined;
  const input: Record<string, unknown> = { ...(raw as Record<string, unknown>) };
  if (mergeAliases(tool.aliases, input) !== null) return undefined;
  const given = dropNulls(tool.parameters, input) as Record<string, unknown>;
  if ((tool.normalize?.(given) ?? null) !== null) return undefined;
  return accept(tool.parameters, given);
}

/** Model-facing prose for a KtError raised by a tool body for a conditional requirement. */
export function invalidArgs(tool: string, detail: string): KtError {
  return new KtError("INVALID_ARGS", invalidInput(tool, detail));
}
