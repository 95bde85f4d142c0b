// A tool result in the shape each framework expects back (SPEC §1, `kt call --format`).
// Pure: the same envelope always gives the same reply.
import type { ToolResult } from "../tools/tool.ts";

export const REPLY_FORMATS = ["text", "json", "anthropic", "openai", "mcp"] as const;
export type ReplyFormat = (typeof REPLY_FORMATS)[number];

/** Anthropic Messages API `tool_result` content block. */
export interface AnthropicToolResult {
  type: "tool_result";
  tool_use_id: string;
  content: string;
  is_error: boolean;
}

/** OpenAI Chat Completions tool message. */
export interface OpenAIToolMessage {
  role: "tool";
  tool_call_id: string;
  content: string;
}

/** MCP `CallToolResult`: the model text as one text item, the metadata as structured content. */
export interface McpCallToolResult {
  [key: string]: unknown;
  content: [{ type: "text"; text: string }];
  isError: boolean;
  structuredContent: Record<string, unknown>;
}

export function anthropicReply(result: ToolResult, callId: string): AnthropicToolResult {
  return { type: "tool_result", tool_use_id: callId, content: result.content, is_error: result.isError };
}

export function openaiReply(result: ToolResult, callId: string): OpenAIToolMessage {
  return { role: "tool", tool_call_id: callId, content: result.content };
}

/**
 * `structuredContent` is the metadata; a failure adds `error: {name, code}` so that a
 * client can branch on the code without parsing prose.
 */
export function mcpReply(result: ToolResult): McpCallToolResult {
  return {
    content: [{ type: "text", text: result.content }],
    isError: result.isError,
    structuredContent: { ...result.metadata, ...(result.error ? { error: result.error } : {}) },
  };
}

/** The reply as the text kt prints for it: the content plus one newline, or one line of JSON. */
export function replyText(result: ToolResult, format: ReplyFormat, callId: string): string {
  switch (format) {
    case "text":
      return `${result.content}\n`;
    case "json":
      return `${JSON.stringify(result)}\n`;
    case "anthropic":
      return `${JSON.stringify(anthropicReply(result, callId))}\n`;
    case "openai":
      return `${JSON.stringify(openaiReply(result, callId))}\n`;
    case "mcp":
      return `${JSON.stringify(mcpReply(result))}\n`;
  }
}
