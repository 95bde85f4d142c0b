// A tool's definition in the shape each framework's API takes (kt's own, Anthropic,
// OpenAI chat and Responses, MCP): what `kt schema` prints and `kt mcp` lists.
import { inputSchema, mcpSchema, strictSchema } from "../tools/jsonschema.ts";
import { schemaName } from "../tools/registry.ts";
import type { Tool } from "../tools/tool.ts";
import { FORMATS } from "./formats.ts";

export { FORMATS };
export type Format = (typeof FORMATS)[number];

export function shape(tool: Tool, format: Format, strict = false): Record<string, unknown> {
  const name = schemaName(tool);
  const schema = strict ? strictSchema(inputSchema(tool)) : inputSchema(tool);
  switch (format) {
    case "anthropic":
      return { name, description: tool.description, input_schema: schema };
    case "openai":
      return { type: "function", function: { name, description: tool.description, parameters: schema, ...(strict ? { strict: true } : {}) } };
    case "openai-responses":
      // The Responses API reads a missing "strict" as true, so it is always spelled out.
      return { type: "function", name, description: tool.description, parameters: schema, strict };
    case "mcp":
      return { name, description: tool.description, inputSchema: strict ? schema : mcpSchema(schema), annotations: { ...tool.annotations } };
    case "json":
      return { name, command: tool.name, description: tool.description, input_schema: schema, annotations: { ...tool.annotations } };
  }
}
