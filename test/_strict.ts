// OpenAI's documented strict-mode rules as a checker of its own, shared by the tests of kt's
// strict schemas (schema.strict.test.ts) and of what clients make of kt's MCP schemas
// (mcp-clients.test.ts).

type Schema = Record<string, unknown>;

/**
 * OpenAI's documented strict-mode rules, as a checker independent of the code that writes
 * the schemas: the root is an object (not anyOf); every object lists all its properties in
 * `required` and sets `additionalProperties: false`; only the supported keywords appear
 * (type, properties, required, additionalProperties, items, enum, const, anyOf,
 * description, $ref, $defs — numeric and string bounds excluded, as some models refuse
 * them); every schema has a type (or is an anyOf or a $ref); at most 10 levels of nesting;
 * an optional value is spelled as a union with null.
 */
export function strictViolations(schema: Schema): string[] {
  const allowed = new Set(["type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf", "description", "$ref", "$defs"]);
  const problems: string[] = [];
  if (schema.type !== "object") problems.push("root: type must be \"object\"");
  if ("anyOf" in schema) problems.push("root: must not be anyOf");
  const visit = (node: Schema, at: string, depth: number) => {
    if (depth > 10) problems.push(`${at}: nested deeper than 10 levels`);
    for (const key of Object.keys(node)) if (!allowed.has(key)) problems.push(`${at}: unsupported keyword "${key}"`);
    // A schema without a type (e.g. {} for "anything") is refused: each one says what it is.
    if (!("type" in node) && !("anyOf" in node) && !("$ref" in node)) problems.push(`${at}: no type`);
    const types = [node.type].flat();
    if (types.includes("object") || "properties" in node) {
      const props = (node.properties ?? {}) as Record<string, Schema>;
      if (node.additionalProperties !== false) problems.push(`${at}: additionalProperties must be false`);
      const required = (node.required ?? []) as string[];
      for (const name of Object.keys(props)) if (!required.includes(name)) problems.push(`${at}: "${name}" not in required`);
      for (const name of required) if (!(name in props)) problems.push(`${at}: required "${name}" is no property`);
      for (const [name, prop] of Object.entries(props)) visit(prop, `${at}.${name}`, depth + 1);
    }
    if (node.items) visit(node.items as Schema, `${at}[]`, depth + 1);
    for (const [i, branch] of ((node.anyOf ?? []) as Schema[]).entries()) visit(branch, `${at}|${i}`, depth + 1);
    for (const [name, def] of Object.entries((node.$defs ?? {}) as Record<string, Schema>)) visit(def, `$defs.${name}`, depth + 1);
    for (const t of types) {
      if (t !== undefined && !["string", "number", "integer", "boolean", "object", "array", "null"].includes(t as string)) problems.push(`${at}: unknown type ${String(t)}`);
    }
  };
  visit(schema, "parameters", 0);
  return problems;
}
