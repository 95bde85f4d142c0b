// A tool call in any common framework's shape → the tool name, its arguments and the
// framework's call id (SPEC §1, `kt call`). Pure: no I/O, no tool loading.
import { KtError } from "../tools/tool.ts";

export type CallShape = "anthropic" | "openai" | "mcp" | "kt";

/** The arguments of a call: decoded, or the reason they could not be (a bad JSON string). */
export type CallArguments = { ok: true; value: unknown } | { ok: false; why: string };

export interface Call {
  shape: CallShape;
  /** The tool name exactly as the caller spelled it. */
  name: string;
  arguments: CallArguments;
  /** The framework's id for this call (tool_use id, tool_call_id, JSON-RPC id, …). */
  id?: string;
  /** The id of a whole JSON-RPC request, as it was sent (a number stays a number): its answer is a JSON-RPC response (SPEC §8.7). */
  rpcId?: string | number;
}

/** A call, or the repair prose for a value that is not one (code INVALID_ARGS), with its id when one was found. */
export type Decoded = { ok: true; call: Call } | { ok: false; error: KtError; id?: string; rpcId?: string | number };

export const SHAPES_HINT =
  'Send one tool call as a JSON object in one of these shapes: {"type":"tool_use","id":"…","name":"read","input":{…}} (Anthropic), ' +
  '{"id":"…","type":"function","function":{"name":"read","arguments":"{…}"}} or {"name":"read","arguments":"{…}"} (OpenAI), ' +
  '{"name":"read","arguments":{…}} (MCP tools/call params) or {"tool":"read","input":{…}} (kt).';

/**
 * Parses `text` as one call. `where` names the source in prose ("stdin", "line 3").
 * JSON that parses but is no call is explained the same way as JSON that does not parse.
 */
export function decodeCallText(text: string, where: string): Decoded {
  if (text.trim() === "") return invalid(`${where} was empty`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return invalid(`${where} is not valid JSON (${jsonWhy(error)})`);
  }
  return decodeCall(value, where);
}

/** Recognizes the shape of an already-parsed call. */
export function decodeCall(value: unknown, where = "the call"): Decoded {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return invalid(`${where} holds ${describe(value)}, not a tool call object`);
  }
  const v = value as Record<string, unknown>;
  // A whole JSON-RPC tools/call request: its params are the call, its id the call id.
  if (v.method === "tools/call" && isObject(v.params)) {
    const inner = decodeCall(v.params, where);
    const id = idOf(v.id);
    const rpc = id !== undefined ? { id, rpcId: v.id as string | number } : {};
    if (inner.ok) return { ok: true, call: { ...inner.call, ...rpc } };
    return { ...inner, ...rpc };
  }
  const id = idOf(v.type === "function_call" ? (v.call_id ?? v.id) : v.id);
  const withId = (shape: CallShape, name: unknown, args: CallArguments, field: string): Decoded => {
    if (typeof name !== "string" || name === "") {
      return invalid(`${where} has no tool name (a non-empty string in "${field}")`, id);
    }
    return { ok: true, call: { shape, name, arguments: args, ...(id !== undefined ? { id } : {}) } };
  };

  if (v.type === "tool_use" || (v.type === undefined && "name" in v && "input" in v)) {
    return withId("anthropic", v.name, objectArgs(v.input), "name");
  }
  if (isObject(v.function)) {
    const fn = v.function as Record<string, unknown>;
    return withId("openai", fn.name, encodedArgs(fn.arguments), "function.name");
  }
  if (v.type === "function_call") {
    // OpenAI Responses API output item: {type:"function_call", call_id, name, arguments}.
    return withId("openai", v.name, encodedArgs(v.arguments), "name");
  }
  if ("tool" in v) return withId("kt", v.tool, objectArgs(v.input), "tool");
  if ("name" in v) {
    // OpenAI spells arguments as a JSON string; MCP as an object (or not at all).
    return withId(typeof v.arguments === "string" ? "openai" : "mcp", v.name, encodedArgs(v.arguments), "name");
  }
  return invalid(`${where} is a JSON object without a tool name (no "name", "tool" or "function" field)`, id);
}

function objectArgs(input: unknown): CallArguments {
  return { ok: true, value: input === undefined ? {} : input };
}

/** Arguments given as a JSON string (OpenAI) or as an object (MCP, some OpenAI-compatible servers). */
function encodedArgs(args: unknown): CallArguments {
  if (args === undefined || args === null) return { ok: true, value: {} };
  if (typeof args !== "string") return { ok: true, value: args };
  if (args.trim() === "") return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(args) };
  } catch (error) {
    return { ok: false, why: jsonWhy(error) };
  }
}

function idOf(id: unknown): string | undefined {
  if (typeof id === "string" && id !== "") return id;
  if (typeof id === "number" && Number.isFinite(id)) return String(id);
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function invalid(problem: string, id?: string): Decoded {
  return { ok: false, error: new KtError("INVALID_ARGS", `Invalid tool call: ${problem}. ${SHAPES_HINT}`), ...(id !== undefined ? { id } : {}) };
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return "an array";
  if (value === null) return "null";
  return `a ${typeof value}`;
}

export function jsonWhy(error: unknown): string {
  return String((error as Error)?.message ?? error).replace(/^JSON Parse error: /, "");
}
