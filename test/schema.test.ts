// `kt schema` (SPEC §5): every tool in every shape. The exact JSON is snapshot-tested per
// tool (test/__snapshots__/schema.test.ts.snap; a new tool adds its entry on its first
// local run, CI never writes one; change one on purpose with `bun test --update-snapshots`),
// and the rules every schema must keep are checked for whatever tools are registered.
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import Ajv from "ajv";
import { FORMATS, shape } from "../src/cmd/schema.ts";
import { inputSchema, mcpSchema, strictSchema } from "../src/tools/jsonschema.ts";
import { loadAllTools, loadTool, schemaName, TOOL_NAMES } from "../src/tools/registry.ts";
import { EXPECTED_ANNOTATIONS } from "./_annotations.ts";
import { kt, tempDir } from "./_helpers.ts";

const tools = await loadAllTools();

/** The fields SPEC §7.3 gives grep and glob (beyond §4's five). */
const SECTION_7_3: Record<string, string[]> = {
  grep: ["pattern", "path", "include", "output_mode", "context", "before", "after", "case_sensitive", "fixed_strings", "multiline", "type", "head_limit", "offset", "no_ignore"],
  glob: ["pattern", "path", "head_limit", "offset", "no_ignore"],
};
/** §4's fields of bash and process plus those SPEC §7.4 (terminals) adds: tty, cols, rows; keys and screen for process. */
const SECTION_7_4: Record<string, string[]> = {
  bash: ["command", "timeout_ms", "workdir", "tty", "cols", "rows"],
  process: ["action", "command", "id", "input", "offset", "keys", "screen", "tty", "cols", "rows"],
};
/** SPEC §8.7 (which wins over §7) gives process's wait its pattern and timeout_ms. */
const SECTION_8_7: Record<string, string[]> = { process: [...SECTION_7_4.process!, "pattern", "timeout_ms"] };
/** SPEC §8.6: replace's pattern and replacement, the file set grep would search (paths, include, type) and its three matching options. */
const SECTION_8_6: Record<string, string[]> = {
  replace: ["pattern", "replacement", "paths", "include", "type", "regex", "word", "ignore_case"],
};
/** Where §7 or §8 (which win over §4) give a tool more than five fields, exactly those. */
const SECTION_7: Record<string, string[]> = { ...SECTION_7_3, ...SECTION_7_4, ...SECTION_8_7, ...SECTION_8_6 };

describe("kt schema snapshots", () => {
  for (const tool of tools) {
    test(`${tool.name} in every format`, () => {
      // The text kt prints, so that key order and only what JSON carries are pinned.
      const all = {
        ...Object.fromEntries(FORMATS.map((format) => [format, shape(tool, format)])),
        "openai --strict": shape(tool, "openai", true),
        "openai-responses --strict": shape(tool, "openai-responses", true),
      };
      expect(JSON.stringify(all, null, 2)).toMatchSnapshot();
    });
  }
});

describe("descriptions say what the tool does", () => {
  const text = (name: string) => tools.find((t) => t.name === name)!.description;
  const words = (name: string) => text(name).split(/\s+/).length;

  test("read names its limits: the 50 KB page, the 2000-line page, the 2000-character line cut, the 10 MB refusal", () => {
    expect(text("read")).toContain("A page ends at 2000 lines or 50 KB, whichever comes first, and lines over 2000 characters are cut;");
    expect(text("read")).toContain("A file over 10 MB is refused unless you give offset or limit.");
  });

  test("grep: binary files are always skipped; .gitignore applies inside a git repository", () => {
    // SPEC §8.4: noise by evidence, no_ignore, and the "Not searched" line.
    expect(text("grep")).toEndWith(
      "Respects .ignore and .ktignore everywhere, .gitignore inside a git repository; hidden files and noise directories (.git, node_modules, __pycache__; any directory holding CACHEDIR.TAG or pyvenv.cfg) are skipped unless path or include names them (no_ignore includes ignored files and noise); an empty result names what it left out. Binaries are skipped.",
    );
  });

  test("edit and bash stay within 90–130 words", () => {
    for (const name of ["edit", "bash"]) expect({ name, words: words(name) >= 90 && words(name) <= 130 }).toEqual({ name, words: true });
  });
});

describe("every tool's schema", () => {
  for (const tool of tools) {
    test(tool.name, () => {
      const name = schemaName(tool);
      expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/); // what Anthropic and OpenAI accept
      expect(tool.description.length).toBeGreaterThan(50);
      expect(tool.description).not.toMatch(/KHAELOR/i);

      const schema = inputSchema(tool) as { type: string; properties: Record<string, { description?: string }>; required?: string[]; additionalProperties: boolean };
      expect(schema.type).toBe("object");
      expect(schema.additionalProperties).toBe(false);
      const fields = Object.keys(schema.properties);
      expect(fields.length).toBeGreaterThan(0);
      // SPEC §4: at most 5 model-facing parameters; §7.3 and §7.4 give grep, glob, bash and process exactly these.
      if (SECTION_7[name]) expect(fields).toEqual(SECTION_7[name]!);
      else expect(fields.length).toBeLessThanOrEqual(5);
      for (const field of fields) {
        expect(field).toMatch(/^[a-z][a-z0-9_]*$/); // snake_case, the canonical spelling
        expect(schema.properties[field]!.description, `${name}.${field} has no description`).toMatch(/\S/);
      }
      for (const field of schema.required ?? []) expect(fields).toContain(field);
      new Ajv({ strict: true }).compile(schema); // a valid JSON Schema, no unknown keywords

      expect(shape(tool, "anthropic")).toEqual({ name, description: tool.description, input_schema: schema });
      expect(shape(tool, "openai")).toEqual({ type: "function", function: { name, description: tool.description, parameters: schema } });
      expect(shape(tool, "openai-responses")).toEqual({ type: "function", name, description: tool.description, parameters: schema, strict: false });
      expect(shape(tool, "openai", true)).toEqual({ type: "function", function: { name, description: tool.description, parameters: strictSchema(schema), strict: true } });
      expect(shape(tool, "openai-responses", true)).toEqual({ type: "function", name, description: tool.description, parameters: strictSchema(schema), strict: true });
      expect(EXPECTED_ANNOTATIONS[name], `SPEC §5 names no annotations for ${name}`).toBeDefined();
      // SPEC §8.8: kt mcp lists the schema with only strict mode's keywords, each optional field nullable.
      expect(shape(tool, "mcp")).toEqual({ name, description: tool.description, inputSchema: mcpSchema(schema), annotations: EXPECTED_ANNOTATIONS[name]! });
      expect(shape(tool, "json")).toEqual({ name, command: tool.name, description: tool.description, input_schema: schema, annotations: EXPECTED_ANNOTATIONS[name]! });
    });
  }
});

describe("the schemas kt mcp lists (SPEC §8.8)", () => {
  /** Every keyword used anywhere in a schema. */
  const keywords = (node: unknown, into = new Set<string>()): Set<string> => {
    if (Array.isArray(node)) for (const item of node) keywords(item, into);
    else if (node && typeof node === "object") {
      for (const [key, value] of Object.entries(node)) {
        into.add(key);
        // A properties object's keys are field names, not keywords.
        if (key === "properties" || key === "$defs") for (const sub of Object.values(value as object)) keywords(sub, into);
        else keywords(value, into);
      }
    }
    return into;
  };
  for (const tool of tools) {
    test(`${tool.name}: the same fields and required ones; null accepted for each optional field only; no bound strict mode rejects`, () => {
      const plain = inputSchema(tool) as { properties: Record<string, Record<string, unknown>>; required?: string[] };
      const listed = (shape(tool, "mcp") as { inputSchema: typeof plain }).inputSchema;
      expect(Object.keys(listed.properties)).toEqual(Object.keys(plain.properties));
      expect(listed.required ?? []).toEqual(plain.required ?? []);
      for (const key of keywords(listed)) expect(["type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf", "description", "$ref", "$defs"]).toContain(key);
      const validate = new Ajv({ strict: true }).compile(listed);
      for (const field of Object.keys(listed.properties)) {
        const optional = !(plain.required ?? []).includes(field);
        const base = Object.fromEntries((plain.required ?? []).map((r) => [r, field === r ? null : sample(plain.properties[r]!)]));
        expect(validate({ ...base, [field]: null }), `${tool.name}.${field}: null`).toBe(optional);
      }
    });
  }
});

/** A value a field of this (plain) schema accepts. */
function sample(prop: Record<string, unknown>): unknown {
  if (Array.isArray(prop.enum)) return prop.enum[0];
  switch (prop.type) {
    case "string": return "x";
    case "integer": case "number": return 1;
    case "boolean": return true;
    case "array": return [];
    default: return {};
  }
}

describe("kt schema on the command line", () => {
  test("prints the same shapes, byte-identical across runs", () => {
    using tmp = tempDir();
    const o = { cwd: tmp.path, stateDir: join(tmp.path, ".s") };
    for (const format of FORMATS) {
      const first = kt(["schema", "--format", format], o);
      expect(first.exitCode).toBe(0);
      expect(first.stderr).toBe("");
      expect(first.stdout).toBe(`${JSON.stringify(tools.map((t) => shape(t, format)), null, 2)}\n`);
      expect(kt(["schema", `--format=${format}`], o).stdout).toBe(first.stdout);
    }
    expect(kt(["schema"], o).stdout).toBe(kt(["schema", "--format", "json"], o).stdout);
  });

  test("one tool, by subcommand or by schema name", async () => {
    using tmp = tempDir();
    const o = { cwd: tmp.path, stateDir: join(tmp.path, ".s") };
    for (const sub of TOOL_NAMES) {
      const tool = (await loadTool(sub))!;
      const bySub = kt(["schema", sub, "--format", "mcp"], o);
      expect(bySub.stdout).toBe(`${JSON.stringify(shape(tool, "mcp"), null, 2)}\n`);
      expect(kt(["schema", schemaName(tool), "--format", "mcp"], o).stdout).toBe(bySub.stdout);
    }
  });

  test("usage errors exit 2", () => {
    using tmp = tempDir();
    const o = { cwd: tmp.path, stateDir: join(tmp.path, ".s") };
    for (const [args, message] of [
      [["schema", "nope"], 'kt schema: unknown tool "nope"'],
      [["schema", "__proto__"], 'kt schema: unknown tool "__proto__"'],
      [["schema", "--format", "yaml"], "kt schema: --format must be one of json, anthropic, openai, openai-responses, mcp"],
      [["schema", "--format"], "kt schema: --format must be one of json, anthropic, openai, openai-responses, mcp"],
      [["schema", "--strict"], "kt schema: --strict applies to --format openai and openai-responses (OpenAI's strict mode), not to json"],
      [["schema", "--format", "anthropic", "--strict"], "kt schema: --strict applies to --format openai and openai-responses (OpenAI's strict mode), not to anthropic"],
      [["schema", "read", "write"], "kt schema: too many arguments"],
    ] as const) {
      const r = kt([...args], o);
      expect(r.exitCode, args.join(" ")).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toStartWith(message);
    }
  });
});
