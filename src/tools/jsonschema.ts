// JSON Schema for a tool's input, derived by zod from the schema its parameter description builds.
import * as z from "zod/mini";
import type { Tool } from "./tool.ts";
import { zodSchema } from "./_zod.ts";

export type JsonSchema = Record<string, unknown>;

export function inputSchema(tool: Tool): JsonSchema {
  const schema = z.toJSONSchema(zodSchema(tool.parameters), { io: "input" }) as JsonSchema;
  delete schema.$schema;
  const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
  for (const prop of Object.values(props)) {
    // zod spells "any safe integer" as ±2^53 bounds; models and validators do not need them.
    if (prop.minimum === Number.MIN_SAFE_INTEGER) delete prop.minimum;
    if (prop.maximum === Number.MAX_SAFE_INTEGER) delete prop.maximum;
  }
  return schema;
}

/**
 * The keywords OpenAI's strict function calling is documented to accept everywhere. Numeric
 * and length bounds (minimum, minLength, …) are left out: some models and API versions
 * refuse them, and kt's own validation enforces them on every call anyway.
 */
export const STRICT_KEYWORDS: ReadonlySet<string> = new Set([
  "type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf", "description", "$ref", "$defs",
]);

/**
 * `schema` rewritten for OpenAI strict mode (SPEC §7.5): at every object level every property
 * is required and no other property allowed; a property that was optional may be null
 * (kt reads null as "not given"); keywords strict mode does not know are dropped.
 */
export function strictSchema(schema: JsonSchema): JsonSchema {
  return strictNode(schema, false, true);
}

/**
 * `schema` as `kt mcp` lists it (SPEC §8.8): only the keywords of strict mode, and every
 * optional property may also be null, while `required` stays as it is. Clients check the
 * model's call against the listed schema before kt sees it (LangChain refused the
 * `offset: null` that OpenAI's strict mode sends for an absent field), or convert the
 * listed schema to strict mode themselves keeping whatever keywords it has (the OpenAI
 * Agents SDK kept `minLength`); kt's own validation still enforces every bound on each call.
 */
export function mcpSchema(schema: JsonSchema): JsonSchema {
  return strictNode(schema, false, false);
}

/** `allRequired`: strict mode's every-property-required, no-other-property objects; otherwise each object keeps its own `required` and `additionalProperties`. */
function strictNode(node: JsonSchema, nullable: boolean, allRequired: boolean): JsonSchema {
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (!STRICT_KEYWORDS.has(key)) continue;
    if (key === "properties") {
      const required = new Set((node.required as string[] | undefined) ?? []);
      const props: Record<string, JsonSchema> = {};
      for (const [name, prop] of Object.entries(value as Record<string, JsonSchema>)) props[name] = strictNode(prop, !required.has(name), allRequired);
      out.properties = props;
      if (allRequired) out.required = Object.keys(props);
    } else if (key === "items") {
      out.items = strictNode(value as JsonSchema, false, allRequired);
    } else if (key === "anyOf") {
      out.anyOf = (value as JsonSchema[]).map((branch) => strictNode(branch, false, allRequired));
    } else if (key === "$defs") {
      out.$defs = Object.fromEntries(Object.entries(value as Record<string, JsonSchema>).map(([name, def]) => [name, strictNode(def, false, allRequired)]));
    } else if (allRequired && (key === "required" || key === "additionalProperties")) {
      // Written below, for every object.
    } else {
      out[key] = value;
    }
  }
  if (allRequired && (out.type === "object" || out.properties)) {
    out.properties ??= {};
    out.required ??= [];
    out.additionalProperties = false;
  }
  return nullable ? orNull(out) : out;
}

function orNull(node: JsonSchema): JsonSchema {
  if (typeof node.type === "string" || Array.isArray(node.type)) {
    const types = [node.type].flat() as string[];
    const out: JsonSchema = { ...node, type: types.includes("null") ? types : [...types, "null"] };
    if (Array.isArray(node.enum) && !node.enum.includes(null)) out.enum = [...node.enum, null];
    return out;
  }
  if (Array.isArray(node.anyOf)) return { ...node, anyOf: [...(node.anyOf as JsonSchema[]), { type: "null" }] };
  const { description, ...rest } = node;
  return { ...(description === undefined ? {} : { description }), anyOf: [rest, { type: "null" }] };
}
