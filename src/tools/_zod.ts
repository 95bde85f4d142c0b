// zod, loaded only when a call needs it: the schema built from a tool's parameter
// description (src/tools/params.ts) for its JSON Schema, and the full parse of a call the
// fast check did not take, whose refusal prose comes from zod's issues (src/tools/_validate.ts).
import * as z from "zod/mini";
import { invalidInput } from "../core/result.ts";
import { validationProse } from "./_validate.ts";
import type { ObjectParam, Param, Shape } from "./params.ts";
import { mergeAliases, type Parsed, type ToolSpec } from "./tool.ts";

const built = new WeakMap<Param, z.ZodMiniType>();

/** The zod schema a description stands for, built as the tools once wrote it by hand (checks, then the description). */
export function zodSchema(param: ObjectParam): z.ZodMiniObject;
export function zodSchema(param: Param): z.ZodMiniType;
export function zodSchema(param: Param): z.ZodMiniType {
  let schema = built.get(param);
  if (!schema) {
    schema = build(param);
    built.set(param, schema);
  }
  return schema;
}

function build(param: Param): z.ZodMiniType {
  const described = (description: string | undefined) => (description === undefined ? [] : [z.describe(description)]);
  switch (param.kind) {
    case "string": {
      const checks = [...(param.minLength === undefined ? [] : [z.minLength(param.minLength)]), ...described(param.description)];
      return checks.length ? z.string().check(...checks) : z.string();
    }
    case "int": {
      const checks = [
        ...(param.minimum === undefined ? [] : [z.minimum(param.minimum)]),
        ...(param.maximum === undefined ? [] : [z.maximum(param.maximum)]),
        ...described(param.description),
      ];
      return checks.length ? z.int().check(...checks) : z.int();
    }
    case "boolean":
      return param.description === undefined ? z.boolean() : z.boolean().check(z.describe(param.description));
    case "enum": {
      const schema = z.enum(param.values as [string, ...string[]]);
      return param.description === undefined ? schema : schema.check(z.describe(param.description));
    }
    case "array": {
      const schema = z.array(zodSchema(param.element as Param));
      const checks = [...(param.minLength === undefined ? [] : [z.minLength(param.minLength)]), ...described(param.description)];
      return checks.length ? schema.check(...checks) : schema;
    }
    case "union": {
      const schema = z.union((param.options as readonly Param[]).map((option) => zodSchema(option)) as [z.ZodMiniType, ...z.ZodMiniType[]]);
      return param.description === undefined ? schema : schema.check(z.describe(param.description));
    }
    case "object":
      return z.strictObject(Object.fromEntries(Object.entries(param.shape as Shape).map(([key, field]) => [key, zodSchema(field)])));
    case "optional":
      return z.optional(zodSchema(param.inner as Param));
  }
}

/**
 * The whole parse with zod, as every call once took it: maps aliases onto canonical names,
 * drops optional fields sent as null (SPEC §7.5: OpenAI strict mode sends every field, null
 * for "not given"), then validates with the tool's zod schema; a refusal comes with its prose.
 */
export function parseWithZod(tool: Pick<ToolSpec, "name" | "parameters" | "aliases" | "normalize">, raw: unknown): Parsed {
  const schema = zodSchema(tool.parameters);
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return { ok: false, prose: validationProse(tool.name, schema, raw, []) };
  }
  const input: Record<string, unknown> = { ...(raw as Record<string, unknown>) };
  const conflict = mergeAliases(tool.aliases, input);
  if (conflict !== null) {
    const [canonical, alias] = conflict;
    return { ok: false, prose: invalidInput(tool.name, `parameters "${canonical}" and "${alias}" are the same field with different values`, `Please rewrite the input with only "${canonical}".`) };
  }
  const given = dropNulls(schema, input) as Record<string, unknown>;
  const contradiction = tool.normalize?.(given) ?? null;
  if (contradiction !== null) return { ok: false, prose: invalidInput(tool.name, contradiction, "") };
  const result = schema.safeParse(given);
  if (result.success) return { ok: true, input: result.data };
  return { ok: false, prose: validationProse(tool.name, schema, given, result.error.issues) };
}

type Def = { type: string; innerType?: z.ZodMiniType; shape?: Record<string, z.ZodMiniType>; element?: z.ZodMiniType };

/** `value` without the null values of fields the schema marks optional, at every depth (a copy where anything changed). */
function dropNulls(schema: z.ZodMiniType, value: unknown): unknown {
  let def = schema._zod.def as Def;
  while (def.innerType && (def.type === "optional" || def.type === "default" || def.type === "nonoptional" || def.type === "readonly")) {
    def = def.innerType._zod.def as Def;
  }
  if (def.type === "object" && def.shape && typeof value === "object" && value !== null && !Array.isArray(value)) {
    const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    for (const [key, field] of Object.entries(def.shape)) {
      if (!Object.hasOwn(out, key)) continue;
      if (out[key] === null && (field._zod.def as Def).type === "optional") delete out[key];
      else out[key] = dropNulls(field, out[key]);
    }
    return out;
  }
  if (def.type === "array" && def.element && Array.isArray(value)) return value.map((item) => dropNulls(def.element!, item));
  return value;
}
