// JSON Schema for a tool's input, derived from its zod schema (zod is the source of truth).
import * as z from "zod/mini";
import type { Tool } from "./tool.ts";

export type JsonSchema = Record<string, unknown>;

export function inputSchema(tool: Tool): JsonSchema {
  const schema = z.toJSONSchema(tool.parameters, { io: "input" }) as JsonSchema;
  delete schema.$schema;
  const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
  for (const prop of Object.values(props)) {
    // zod spells "any safe integer" as ±2^53 bounds; models and validators do not need them.
    if (prop.minimum === Number.MIN_SAFE_INTEGER) delete prop.minimum;
    if (prop.maximum === Number.MAX_SAFE_INTEGER) delete prop.maximum;
  }
  return schema;
}
