// Repair prose for invalid tool input (SPEC §3.3): names the tool, the field and what
// is expected, so the model can rewrite its call in one step.
import type * as z from "zod/mini";
import { closest, distance } from "fastest-levenshtein";
import { invalidInput } from "../core/result.ts";

type Issue = z.core.$ZodIssue;

export function validationProse(tool: string, schema: z.ZodMiniObject, input: unknown, issues: readonly Issue[]): string {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return invalidInput(tool, `expected a JSON object of parameters, got ${describe(input)}`);
  }
  const fields = Object.keys(schema.shape);
  const record = input as Record<string, unknown>;
  const unknown: string[] = [];
  const rest: string[] = [];
  const guessed = new Set<string>();
  for (const issue of issues) {
    if (issue.code !== "unrecognized_keys") continue;
    if (issue.path.length > 0) {
      // Inside a list item (edit's edits[0]): name where, and what an item takes.
      const inner = Object.keys(shapeAt(schema, issue.path) ?? {});
      const where = fieldName(issue.path);
      for (const key of issue.keys) {
        const guess = inner.length > 0 ? closest(key, inner) : undefined;
        unknown.push(guess && similar(key, guess)
          ? `unknown parameter "${key}" in ${where} — did you mean "${guess}"?`
          : `unknown parameter "${key}" in ${where} (expected: ${inner.map((f) => `"${f}"`).join(", ")})`);
      }
      continue;
    }
    for (const key of issue.keys) {
      const guess = fields.length > 0 ? closest(key, fields) : undefined;
      if (guess && similar(key, guess)) {
        guessed.add(guess);
        unknown.push(`unknown parameter "${key}" — did you mean "${guess}"?`);
      } else {
        unknown.push(`unknown parameter "${key}" (expected parameters: ${fields.map((f) => `"${f}"`).join(", ")})`);
      }
    }
  }
  for (const issue of issues) {
    if (issue.code === "unrecognized_keys") continue;
    const field = fieldName(issue.path);
    const value = valueAt(record, issue.path);
    if (value === undefined && issue.path.length >= 1) {
      // A misspelt required field is already named by its "did you mean".
      if (!guessed.has(field)) rest.push(`parameter "${field}" is required`);
    } else {
      rest.push(`parameter "${field}" ${expectation(issue, schema.shape[field] as z.ZodMiniType | undefined)}, got ${describe(value)}`);
    }
  }
  const parts = [...unknown, ...rest];
  if (parts.length === 0) parts.push("the input does not match the expected schema");
  return invalidInput(tool, parts.join("; "));
}

function expectation(issue: Issue, field: z.ZodMiniType | undefined): string {
  switch (issue.code) {
    case "invalid_type":
      return issue.expected === "int" || isInteger(field) ? "must be an integer" : `must be ${article(issue.expected)}`;
    case "invalid_value":
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "too_small":
      if (issue.origin === "array") return `must hold at least ${issue.minimum} ${issue.minimum === 1 ? "item" : "items"}`;
      return issue.origin === "string" ? `must be at least ${issue.minimum} characters long` : `must be ≥ ${issue.minimum}`;
    case "too_big":
      return issue.origin === "string" ? `must be at most ${issue.maximum} characters long` : `must be ≤ ${issue.maximum}`;
    default:
      return "is not valid";
  }
}

/** A field's name as the model wrote it: edits[0].new_string. */
function fieldName(path: readonly PropertyKey[]): string {
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : `${i > 0 ? "." : ""}${String(p)}`)).join("");
}

function valueAt(record: Record<string, unknown>, path: readonly PropertyKey[]): unknown {
  let at: unknown = record;
  for (const key of path) {
    if (typeof at !== "object" || at === null) return undefined;
    at = (at as Record<PropertyKey, unknown>)[key as string];
  }
  return at;
}

/** The object shape a path leads to through optional wrappers and list items, if any. */
function shapeAt(schema: z.ZodMiniObject, path: readonly PropertyKey[]): Record<string, unknown> | undefined {
  let def = schema._zod.def as { type: string; shape?: Record<string, z.ZodMiniType>; innerType?: z.ZodMiniType; element?: z.ZodMiniType };
  for (const key of path) {
    while (def.innerType) def = def.innerType._zod.def as typeof def;
    if (typeof key === "number") {
      if (!def.element) return undefined;
      def = def.element._zod.def as typeof def;
    } else {
      const next = def.shape?.[key as string];
      if (!next) return undefined;
      def = next._zod.def as typeof def;
    }
  }
  while (def.innerType) def = def.innerType._zod.def as typeof def;
  return def.shape;
}

function isInteger(field: z.ZodMiniType | undefined): boolean {
  let def = field?._zod.def as { type: string; format?: string; innerType?: z.ZodMiniType } | undefined;
  while (def?.innerType) def = def.innerType._zod.def as typeof def;
  return def?.format === "safeint" || def?.format === "int32";
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return value.length === 0 ? "an empty array" : "an array";
  switch (typeof value) {
    case "string": {
      const shown = value.length > 40 ? `${value.slice(0, 40)}…` : value;
      return `${JSON.stringify(shown)} (a string)`;
    }
    case "number":
      return `${value}`;
    case "boolean":
      return `${value} (a boolean)`;
    case "object":
      return "an object";
    default:
      return typeof value;
  }
}

function similar(a: string, b: string): boolean {
  const norm = (s: string) => s.toLowerCase().replace(/[-_]/g, "");
  if (norm(a) === norm(b)) return true;
  const la = norm(a), lb = norm(b);
  return la.includes(lb) || lb.includes(la) || distance(la, lb) <= Math.max(2, Math.floor(Math.max(la.length, lb.length) / 3));
}
