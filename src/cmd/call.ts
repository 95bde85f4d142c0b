// `kt call [--jsonl] [--format …]`: a tool call in any framework's shape on stdin, the
// result in the shape that framework expects back. With --jsonl, one call per line and
// one result per line, in order, in this one process.
import { readFileSync } from "node:fs";
import type { CommandDef } from "citty";
import { decodeCallText } from "../adapter/call.ts";
import { internalResult, runCall } from "../adapter/dispatch.ts";
import { REPLY_FORMATS, replyText, type ReplyFormat } from "../adapter/reply.ts";
import { errorResult, KtError, type ToolContext, type ToolResult } from "../tools/tool.ts";
import { baseOptions, strictText, UsageError, type Options } from "./_args.ts";
import { contextFrom, EXIT, newCallId, onTerminal, writeAll } from "./_run.ts";
import { stdinIsTerminal } from "./tool.ts";

export const command: CommandDef = {
  meta: {
    name: "call",
    description: "Run one tool call given on stdin in Anthropic, OpenAI, MCP or kt shape; answer in the shape --format names",
  },
  args: {
    format: { type: "enum", options: [...REPLY_FORMATS], description: "Shape of the answer (default: text; with --jsonl: json, the kt envelope)" },
    json: { type: "boolean", description: "Same as --format json: the whole result envelope" },
    jsonl: { type: "boolean", description: "Many calls, one JSON object per line; one result per line, in order" },
    session: { type: "string", description: "Session id (default: $KT_SESSION or \"default\")", valueHint: "id" },
    "state-dir": { type: "string", description: "State directory (default: $KT_STATE_DIR, $XDG_STATE_HOME/kt or ~/.local/state/kt)", valueHint: "dir" },
    root: { type: "string", description: "Refuse paths outside this directory (default: $KT_ROOT)", valueHint: "dir" },
    "skip-read-check": { type: "boolean", description: "Allow write/edit of files this session never read (staleness is still checked)" },
    "dry-run": { type: "boolean", description: "write/edit/patch: do everything but write" },
    strict: { type: "boolean", description: "edit: exact matching only" },
    trace: { type: "boolean", description: "edit/patch: print the matching cascade (how each hunk was located) on stderr" },
    verbose: { type: "boolean", description: "More diagnostics on stderr" },
  },
};

interface CallArgs {
  options: Options;
  format: ReplyFormat;
  jsonl: boolean;
}

const VALUED: Record<string, "session" | "stateDir" | "root"> = { session: "session", "state-dir": "stateDir", root: "root" };
const SWITCHED: Record<string, "skipReadCheck" | "dryRun" | "strict" | "trace" | "verbose"> = {
  "skip-read-check": "skipReadCheck",
  "dry-run": "dryRun",
  strict: "strict",
  trace: "trace",
  verbose: "verbose",
};

export function parseCallArgv(argv: readonly string[]): CallArgs {
  const options = baseOptions();
  let format: ReplyFormat | undefined;
  let jsonl = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith("--")) {
      throw new UsageError(`unexpected argument ${JSON.stringify(arg)}: kt call reads the call from stdin (e.g. echo '{"tool":"read","input":{"file_path":"a.ts"}}' | kt call)`);
    }
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq === -1 ? undefined : eq).replace(/_/g, "-");
    const inline = eq === -1 ? undefined : arg.slice(eq + 1);
    const value = (): string => {
      if (inline !== undefined) return inline;
      const next = argv[++i];
      if (next === undefined) throw new UsageError(`option --${name} needs a value`);
      return next;
    };
    const flag = (): boolean => {
      if (inline === undefined || inline === "true" || inline === "1") return true;
      if (inline === "false" || inline === "0") return false;
      throw new UsageError(`option --${name} is a switch: use --${name} or --${name}=false`);
    };
    if (name === "format") {
      const f = value();
      if (!(REPLY_FORMATS as readonly string[]).includes(f)) throw new UsageError(`--format must be one of ${REPLY_FORMATS.join(", ")}`);
      if (format !== undefined && format !== f) throw new UsageError(`--format ${f} conflicts with --${format === "json" ? "json" : `format ${format}`}`);
      format = f as ReplyFormat;
    } else if (name === "json") {
      if (flag()) {
        if (format !== undefined && format !== "json") throw new UsageError(`--json conflicts with --format ${format}`);
        format = "json";
      }
    } else if (name === "jsonl") {
      jsonl = flag();
    } else if (name in VALUED) {
      options[VALUED[name]!] = value();
    } else if (name in SWITCHED) {
      options[SWITCHED[name]!] = flag();
    } else {
      throw new UsageError(`unknown option --${name}`);
    }
  }
  if (jsonl && format === "text") throw new UsageError("--format text cannot be used with --jsonl: a result's text spans lines. Use json, anthropic, openai, openai-responses or mcp");
  options.json = format === "json";
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
  return args.jsonl ? runLines(base, args.format) : runOne(base, args.format);
}

async function runOne(base: ToolContext, format: ReplyFormat): Promise<number> {
  if (stdinIsTerminal()) {
    throw new UsageError(`no call: pipe one tool call as JSON on stdin, e.g. echo '{"tool":"read","input":{"file_path":"a.ts"}}' | kt call`);
  }
  const text = strictText(readFileSync(0), "The call on stdin");
  if (text instanceof KtError) return answer(errorResult("call", text), format, base.callId);
  const decoded = decodeCallText(text, "stdin");
  if (!decoded.ok) return answer(errorResult("call", decoded.error), format, decoded.id ?? base.callId);
  const callId = decoded.call.id ?? base.callId;
  const result = await runCall(decoded.call, { ...base, callId });
  return answer(result, format, callId);
}

function answer(result: ToolResult, format: ReplyFormat, callId: string): number {
  const text = replyText(result, format, callId);
  writeAll(1, format === "text" ? onTerminal(text) : text);
  return result.isError ? EXIT.toolError : EXIT.ok;
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
    if (!writeAll(1, replyText(result, format, callId))) break;
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
