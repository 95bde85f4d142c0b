// A tool result in the shape each framework expects back (SPEC §1, `kt call --format`).
// Pure: the same envelope always gives the same reply.
import type { ToolResult } from "../tools/tool.ts";
import { REPLY_FORMATS } from "./formats.ts";

export { REPLY_FORMATS };
export type ReplyFormat = (typeof REPLY_FORMATS)[number];

/** Anthropic Messages API `tool_result` content block: the text alone, or text and image blocks. */
export interface AnthropicToolResult {
  type: "tool_result";
  tool_use_id: string;
  content: string | Array<{ type: "text"; text: string } | { type: "image"; source: { type: "base64"; media_type: string; data: string } }>;
  is_error: boolean;
}

/**
 * OpenAI Chat Completions tool message. A tool message carries text only (string or text
 * parts), so an image result sends its one line of text.
 */
export interface OpenAIToolMessage {
  role: "tool";
  tool_call_id: string;
  content: string;
}

/** OpenAI Responses API `function_call_output` input item; unlike a Chat tool message, its output may hold an image. */
export interface OpenAIResponsesOutput {
  type: "function_call_output";
  call_id: string;
  output: string | Array<{ type: "input_text"; text: string } | { type: "input_image"; image_url: string }>;
}

export type McpContent = { type: "text"; text: string } | { type: "image"; data: string; mimeType: string };

/** MCP `CallToolResult` (SPEC §7.6). */
export interface McpCallToolResult {
  [key: string]: unknown;
  content: McpContent[];
  isError: boolean;
  structuredContent?: McpStructured;
}

/** What `kt mcp --structured` sends as `structuredContent`: the complete result, the text included. */
export interface McpStructured {
  [key: string]: unknown;
  text: string;
  isError: boolean;
  error?: ToolResult["error"];
  metadata: ToolResult["metadata"];
}

export function anthropicReply(result: ToolResult, callId: string): AnthropicToolResult {
  const content: AnthropicToolResult["content"] = result.image
    ? [{ type: "text", text: result.content }, { type: "image", source: { type: "base64", media_type: result.image.mediaType, data: result.image.data } }]
    : result.content;
  return { type: "tool_result", tool_use_id: callId, content, is_error: result.isError };
}

export function openaiReply(result: ToolResult, callId: string): OpenAIToolMessage {
  return { role: "tool", tool_call_id: callId, content: result.content };
}

export function openaiResponsesReply(result: ToolResult, callId: string): OpenAIResponsesOutput {
  const output: OpenAIResponsesOutput["output"] = result.image
    ? [{ type: "input_text", text: result.content }, { type: "input_image", image_url: `data:${result.image.mediaType};base64,${result.image.data}` }]
    : result.content;
  return { type: "function_call_output", call_id: callId, output };
}

/**
 * By default the model text is the only text item, and there is no `structuredContent`:
 * clients that prefer structured content (OpenAI Agents SDK, LangChain) would otherwise
 * hand the model JSON instead of kt's text. `structured` adds the complete result — except
 * to a result with an image, which those clients would hand the model as JSON without it.
 */
export function mcpReply(result: ToolResult, opts: { structured?: boolean } = {}): McpCallToolResult {
  const content: McpContent[] = [{ type: "text", text: result.content }];
  if (result.image) content.push({ type: "image", data: result.image.data, mimeType: result.image.mediaType });
  if (!opts.structured || result.image) return { content, isError: result.isError };
  const structuredContent: McpStructured = {
    text: result.content,
    isError: result.isError,
    ...(result.error ? { error: result.error } : {}),
    metadata: result.metadata,
  };
  return { content, isError: result.isError, structuredContent };
}

/** The JSON Schema of `McpStructured`, listed as every tool's `outputSchema` under `kt mcp --structured`. */
export const MCP_OUTPUT_SCHEMA = {
  type: "object",
  properties: {
    text: { type: "string", description: "The model-facing text, exactly as in content." },
    isError: { type: "boolean" },
    error: {
      type: "object",
      properties: { name: { type: "string" }, code: { type: "string", description: "kt's error code, e.g. NO_MATCH or STALE_FILE." } },
      required: ["name", "code"],
    },
    metadata: {
      type: "object",
      description: "For UIs, logs and scripts; never shown to the model.",
      properties: {
        title: { type: "string" },
        durationMs: { type: "number" },
        diff: { type: "string" },
        additions: { type: "integer" },
        deletions: { type: "integer" },
        matches: { type: "integer" },
        files: { type: "integer" },
        exitCode: { type: ["integer", "null"] },
        processId: { type: "string" },
        truncation: { type: "object" },
        extra: { type: "object" },
      },
      required: ["title", "durationMs"],
    },
  },
  required: ["text", "isError", "metadata"],
} as const;

/**
 * The reply as the text kt prints for it: the content plus one newline, or one line of JSON.
 * `rpcId`: the call came as a whole JSON-RPC request, and MCP's answer is its JSON-RPC response.
 */
export function replyText(result: ToolResult, format: ReplyFormat, callId: string, rpcId?: string | number): string {
  switch (format) {
    case "text":
      return `${result.content}\n`;
    case "json":
      return `${JSON.stringify(result)}\n`;
    case "anthropic":
      return `${JSON.stringify(anthropicReply(result, callId))}\n`;
    case "openai":
      return `${JSON.stringify(openaiReply(result, callId))}\n`;
    case "openai-responses":
      return `${JSON.stringify(openaiResponsesReply(result, callId))}\n`;
    case "mcp":
      if (rpcId !== undefined) return `${JSON.stringify({ jsonrpc: "2.0", id: rpcId, result: mcpReply(result) })}\n`;
      return `${JSON.stringify(mcpReply(result))}\n`;
  }
}
