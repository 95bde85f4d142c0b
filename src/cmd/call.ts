// `kt call [--jsonl] [--format …]`: a tool call in any framework's shape on stdin, the
// result in the shape that framework expects back. With --jsonl, one call per line and
// one result per line, in order, in this one process.
import { readFileSync } from "node:fs";
import type { CommandDef } from "citty";
import { decodeCallText } from "../adapter/call.ts";
import { internalResult, runCall } from "../adapter/dispatch.ts";
import { replyText, type ReplyFormat } from "../adapter/reply.ts";
import { errorResult, KtError, type ToolContext, type ToolResult } from "../tools/tool.ts";
import { baseOptions, strictText, UsageError, type Options } from "./_args.ts";
import { contextFrom, EXIT, newCallId, onTerminal, writeAll } from "./_run.ts";
import { routing } from "../lsp/gate.ts";
import { exitCode } from "./exit.ts";
import { stdinIsTerminal } from "./tool.ts";
import { parseSwitches, switchArgs } from "./switches.ts";

export const command: CommandDef = {
  meta: {
    name: "call",
    description: "Run one tool call given on stdin in Anthropic, OpenAI, MCP or kt shape; answer in the shape --format names",
  },
  args: switchArgs("call"),
};

interface CallArgs {
  options: Options;
  format: ReplyFormat;
  jsonl: boolean;
}

export function parseCallArgv(argv: readonly string[]): CallArgs {
  const { values, given, positionals } = parseSwitches("call", argv);
  if (positionals.length > 0) {
    throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}: kt call reads the call from stdin (e.g. echo '{"tool":"read","input":{"file_path":"a.ts"}}' | kt call)`);
  }
  // --json is --format json: two of them naming different shapes, in the order given, conflict.
  let format: ReplyFormat | undefined;
  let named = "";
  for (const { key, value } of given) {
    if (key !== "format" && !(key === "json" && value === true)) continue;
    const f = (key === "json" ? "json" : value) as ReplyFormat;
    const spelled = key === "json" ? "--json" : `--format ${f}`;
    if (format !== undefined && format !== f) throw new UsageError(`${spelled} conflicts with ${named}`);
    format = f;
    named = spelled;
  }
  const jsonl = values.jsonl === true;
  if (jsonl && format === "text") throw new UsageError("--format text cannot be used with --jsonl: a result's text spans lines. Use json, anthropic, openai, openai-responses or mcp");
  const options: Options = { ...baseOptions(), ...(values as Partial<Options>), json: format === "json" };
  return { options, format: format ?? (jsonl ? "json" : "text"), jsonl };
}

export async function run(argv: string[]): Promise<number> {
  const args = parseCallArgv(argv);
  let base: ToolContext;
  try {
    base = contextFrom(args.options);
  } catch (error) {
    if (!(error instanceof KtError)) throw error;
    // A bad --root/KT_ROOT is answered like any failed call, so a framework still gets a result.
    if (!args.jsonl) return answer(errorResult("call", error), args.format, newCallId());
    writeAll(2, `kt call: ${error.message}\n`);
    return EXIT.usage;
  }
  // One call: the language servers stay warm in the session's host; many: in this process.
  if (!args.jsonl) routing.host = true;
  return args.jsonl ? runLines(base, args.format) : runOne(base, args.format);
}

async function runOne(base: ToolContext, format: ReplyFormat): Promise<number> {
  if (stdinIsTerminal()) {
    throw new UsageError(`no call: pipe one tool call as JSON on stdin, e.g. echo '{"tool":"read","input":{"file_path":"a.ts"}}' | kt call`);
  }
  const text = strictText(readFileSync(0), "The call on stdin");
  if (text instanceof KtError) return answer(errorResult("call", text), format, base.callId);
  const decoded = decodeCallText(text, "stdin");
  if (!decoded.ok) return answer(errorResult("call", decoded.error), format, decoded.id ?? base.callId, decoded.rpcId);
  const callId = decoded.call.id ?? base.callId;
  const result = await runCall(decoded.call, { ...base, callId });
  return answer(result, format, callId, decoded.call.rpcId);
}

function answer(result: ToolResult, format: ReplyFormat, callId: string, rpcId?: string | number): number {
  const text = replyText(result, format, callId, rpcId);
  writeAll(1, format === "text" ? onTerminal(text) : text);
  return exitCode(result);
}

/**
 * One result line per non-blank input line, written as soon as it is known, so that a
 * framework may also drive kt interactively (write a call, wait for its line). A call
 * that crashes kt is answered with an INTERNAL error line and the stream goes on.
 */
async function runLines(base: ToolContext, format: ReplyFormat): Promise<number> {
  let lineNo = 0;
  for await (const line of stdinLines()) {
    lineNo++;
    const text = strictText(line, `Line ${lineNo} of the calls`);
    if (typeof text === "string" && text.trim() === "") continue;
    const decoded = typeof text === "string" ? decodeCallText(text, `line ${lineNo}`) : undefined;
    let callId: string;
    let result: ToolResult;
    if (!decoded) {
      callId = newCallId();
      result = errorResult("call", text as KtError);
    } else if (!decoded.ok) {
      callId = decoded.id ?? newCallId();
      result = errorResult("call", decoded.error);
    } else {
      callId = decoded.call.id ?? newCallId();
      try {
        result = await runCall(decoded.call, { ...base, callId });
      } catch (error) {
        result = internalResult(decoded.call.name, error, base.warn);
      }
    }
    // Nobody reads the results any more: running the calls still queued would change files
    // (or start commands) that no one will hear about.
    const rpcId = decoded === undefined ? undefined : decoded.ok ? decoded.call.rpcId : decoded.rpcId;
    if (!writeAll(1, replyText(result, format, callId, rpcId))) break;
  }
  return EXIT.ok;
}

/**
 * stdin split on "\n" (a trailing "\r" dropped), each line's bytes yielded as soon as it is
 * complete; each line is decoded on its own, so one that is not UTF-8 is refused alone.
 */
async function* stdinLines(): AsyncGenerator<Uint8Array> {
  // Pieces of the line still being received: a long line arriving in many chunks is
  // joined once, not re-copied per chunk.
  let parts: Uint8Array[] = [];
  const take = (last: Uint8Array): Uint8Array => {
    parts.push(last);
    const line = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
    parts = [];
    return line[line.length - 1] === 13 ? line.subarray(0, -1) : line;
  };
  for await (const chunk of Bun.stdin.stream()) {
    let start = 0;
    let nl: number;
    while ((nl = chunk.indexOf(10, start)) !== -1) {
      yield take(chunk.subarray(start, nl));
      start = nl + 1;
    }
    // Copied: the stream may reuse the chunk's memory.
    if (start < chunk.length) parts.push(Uint8Array.prototype.slice.call(chunk, start));
  }
  const last = take(new Uint8Array(0));
  if (last.length > 0) yield last;
}
