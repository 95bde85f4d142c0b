// `kt <tool> …`: flags or JSON on stdin in, the model text (or the envelope) out.
import { readFileSync } from "node:fs";
import type { ArgsDef, CommandDef } from "citty";
import { unwrap, type Param } from "../tools/params.ts";
import { errorResult, KtError, type Tool, type ToolResult } from "../tools/tool.ts";
import { invalidInput, REWRITE } from "../core/result.ts";
import { fieldKinds, parseToolArgv, strictText, UsageError, type Options } from "./_args.ts";
import { contextFrom, emit } from "./_run.ts";
import { switchArgs } from "./switches.ts";
import { routing } from "../lsp/routing.ts";
import { isTerminal, progress, streamTo } from "./terminal.ts";

/** Subcommands that walk a tree and may take a while: progress on a terminal after 1 s. */
const SEARCHES: ReadonlySet<string> = new Set(["grep", "glob", "replace"]);

/** The citty command for one tool; `run` returns the exit code through `result`. */
export function toolCommand(tool: Tool): CommandDef {
  return {
    meta: { name: tool.name, description: firstSentence(tool.description) },
    args: helpArgs(tool),
    run: ({ rawArgs }) => runTool(tool, rawArgs),
  };
}

export async function runTool(tool: Tool, argv: readonly string[]): Promise<number> {
  const parsed = parseToolArgv(tool, argv);
  if (parsed.problem) return finish(errorResult(tool.name, parsed.problem), parsed.options, tool.name);
  let raw: unknown = parsed.input;
  if (!parsed.given) {
    // The help to run is said once, by the usage error's own last line.
    if (stdinIsTerminal()) throw new UsageError(`no input: give ${tool.primary.toUpperCase()} or flags, or pipe a JSON object on stdin`);
    const text = strictText(readFileSync(0), "stdin", tool.name);
    if (text instanceof KtError) return finish(errorResult(tool.name, text), parsed.options, tool.name);
    const decoded = decodeJson(tool.name, text);
    if (decoded instanceof KtError) return finish(errorResult(tool.name, decoded), parsed.options, tool.name);
    raw = decoded;
  }
  let ctx;
  try {
    ctx = contextFrom(parsed.options);
  } catch (error) {
    if (error instanceof KtError) return finish(errorResult(tool.name, error), parsed.options, tool.name);
    throw error;
  }
  // A one-shot call: the language servers stay warm in the session's host, not in this process.
  routing.host = true;
  // A person at a terminal sees bash's output as it comes, and that a long search is going on (stderr).
  if (tool.name === "bash" && isTerminal(2)) ctx.stream = streamTo(2);
  const stop = SEARCHES.has(tool.name) && isTerminal(2) ? progress(`kt ${tool.name}: searching`) : undefined;
  let result: ToolResult;
  try {
    result = await tool.run(raw, ctx);
  } finally {
    stop?.();
  }
  return finish(result, parsed.options, tool.name);
}

function finish(result: ToolResult, options: Options, tool: string): number {
  return emit(result, options, tool);
}

/** True when stdin is a terminal (nothing will be piped). */
export function stdinIsTerminal(): boolean {
  return isTerminal(0);
}

/** Parses stdin as the tool input, or explains why it is not one. */
export function decodeJson(tool: string, text: string): unknown {
  if (text.trim() === "") {
    return new KtError("INVALID_ARGS", invalidInput(tool, "stdin was empty", "Give the input as flags or as one JSON object on stdin."));
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    const why = (error as Error).message.replace(/^JSON Parse error: /, "");
    return new KtError("INVALID_ARGS", invalidInput(tool, `stdin is not valid JSON (${why})`, `Send exactly one JSON object of parameters. ${REWRITE}`));
  }
}

function firstSentence(text: string): string {
  const end = text.search(/(?<!\b(?:e\.g|i\.e|etc))\. /);
  return end === -1 ? text : text.slice(0, end + 1);
}

/** The EXAMPLES section appended to `kt <tool> --help`. */
export function examplesSection(tool: Tool): string {
  return tool.examples?.length ? `\nEXAMPLES\n\n${tool.examples.map((e) => `  ${e}`).join("\n")}\n` : "";
}

/** Argument definitions used only to render `kt <tool> --help`. */
function helpArgs(tool: Tool): ArgsDef {
  const args: ArgsDef = {};
  const kinds = fieldKinds(tool);
  const shape = tool.parameters.shape as Record<string, Param>;
  const positional = typeof tool.positionals === "function" ? [] : tool.positionals ?? [tool.primary];
  for (const [field, kind] of kinds) {
    const description = describeField(shape[field]);
    if (positional.includes(field)) {
      args[field] = { type: "positional", description, required: false };
      continue;
    }
    args[field.replace(/_/g, "-")] = kind === "boolean" ? { type: "boolean", description } : { type: "string", description, valueHint: kind === "number" ? "n" : field };
  }
  for (const field of tool.longText ?? []) {
    args[`${field.replace(/_/g, "-")}-file`] = { type: "string", description: `Read ${field} from a file ("-" = stdin)`, valueHint: "path" };
  }
  Object.assign(args, switchArgs(tool.name, true));
  return args;
}

function describeField(param: Param | undefined): string {
  const def = param && unwrap(param);
  return def && "description" in def && def.description ? def.description : "";
}
