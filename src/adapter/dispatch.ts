// One decoded call → one result: find the tool by any name a framework uses for it, then
// run it. Shared by `kt call`, `kt call --jsonl` and `kt mcp`.
import { distance } from "fastest-levenshtein";
import { loadAllTools, loadTool, loadUnlistedTool, schemaName } from "../tools/registry.ts";
import { errorResult, KtError, type Tool, type ToolContext, type ToolResult } from "../tools/tool.ts";
import { invalidInput, REWRITE } from "../core/result.ts";
import type { Call } from "./call.ts";
import { fromClaudeCode, widensSandbox } from "./claude-code.ts";
import { noWideningField } from "../sandbox/prose.ts";

/** A tool by subcommand or schema name; case-insensitively, since some frameworks capitalize ("Read"). */
export async function resolveTool(name: string): Promise<Tool | undefined> {
  return (await loadTool(name)) ?? (name.toLowerCase() !== name ? loadTool(name.toLowerCase()) : undefined);
}

export async function runCall(call: Call, ctx: ToolContext): Promise<ToolResult> {
  const claude = fromClaudeCode(call.name, call.arguments.ok ? call.arguments.value : undefined);
  if (claude) {
    const tool = ((await loadTool(claude.tool)) ?? (await loadUnlistedTool(claude.tool)))!;
    if (!call.arguments.ok) return badArguments(tool, call.arguments.why);
    // Off, the field asks for nothing more than there is; sandboxed, it is refused, not run.
    const widen = ctx.sandbox && widensSandbox(call.name, call.arguments.value);
    if (widen) return errorResult(tool.name, new KtError("SANDBOX_DENIED", noWideningField(ctx.sandbox!.mode, widen)));
    if (claude.invalid) return errorResult(tool.name, new KtError("INVALID_ARGS", invalidInput(call.name, claude.invalid)));
    return tool.run(claude.args, ctx);
  }
  const tool = await resolveTool(call.name);
  if (!tool) return errorResult(clip(call.name), await unknownTool(call.name));
  if (!call.arguments.ok) return badArguments(tool, call.arguments.why);
  return tool.run(call.arguments.value, ctx);
}

function badArguments(tool: Tool, why: string): ToolResult {
  return errorResult(
    tool.name,
    new KtError(
      "INVALID_ARGS",
      invalidInput(schemaName(tool), `the arguments string is not valid JSON (${why})`, `Send the arguments as one JSON object of parameters. ${REWRITE}`),
    ),
  );
}

/** UNKNOWN_TOOL prose naming every tool (by the names models see) and the nearest one. */
export async function unknownTool(name: string): Promise<KtError> {
  const names = (await loadAllTools()).map(schemaName);
  const want = name.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of names) {
    const d = distance(want, candidate);
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  const hint = best !== undefined && bestDistance <= 2 && bestDistance < best.length - 1 ? ` Did you mean "${best}"?` : "";
  return new KtError("UNKNOWN_TOOL", `Unknown tool "${clip(name)}".${hint} The available tools are: ${names.join(", ")}. Call one of them by its exact name.`);
}

/**
 * The result for a call whose tool crashed (a bug in kt): the pairing of call and result
 * stays valid for the framework, and the stack goes to stderr for a human.
 */
export function internalResult(name: string, error: unknown, warn: (message: string) => void): ToolResult {
  const message = (error as Error)?.message ?? String(error);
  if ((error as Error)?.name === "StateError") {
    // The environment, not kt: its prose already says what the person can do.
    warn(`kt: ${message}`);
    return errorResult(
      clip(name),
      // PERMISSION_DENIED: the state directory is someone else's (or open to them), refused by design.
      new KtError((error as { code?: "INTERNAL" | "PERMISSION_DENIED" }).code ?? "INTERNAL", `The tool "${clip(name)}" could not run: ${message} This is a problem of the machine kt runs on, not of your input; tell the user.`),
    );
  }
  warn(`kt: internal error in ${clip(name)}: ${(error as Error)?.stack ?? message}`);
  return errorResult(
    clip(name),
    new KtError("INTERNAL", `The tool "${clip(name)}" failed with an internal error in kt (${message}). This is a bug in kt, not in your input; nothing on disk was left half-written. Try a different approach or report it to the user.`),
  );
}

/** A caller-chosen name echoed in prose, kept short. */
function clip(name: string): string {
  return name.length > 80 ? `${name.slice(0, 80)}…` : name;
}
