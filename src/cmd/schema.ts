// `kt schema [--format json|anthropic|openai|openai-responses|mcp] [--strict] [tool]`: every
// tool's name, description and input JSON Schema, in kt's own shape or the shape a framework's API takes.
import type { CommandDef } from "citty";
import { FORMATS, shape, type Format } from "../adapter/shape.ts";
import { loadAllTools, loadTool } from "../tools/registry.ts";
import type { Tool } from "../tools/tool.ts";
import { UsageError } from "./_args.ts";
import { EXIT, writeAll } from "./_run.ts";

export { FORMATS, shape, type Format } from "../adapter/shape.ts";

/** The formats whose API has a strict mode that `--strict` targets. */
const STRICT_FORMATS: readonly Format[] = ["openai", "openai-responses"];

// A plain CommandDef (citty loads only to render help).
export const command: CommandDef = {
  meta: { name: "schema", description: "Print every tool's name, description and input JSON Schema" },
  args: {
    tool: { type: "positional", required: false, description: "Only this tool (e.g. edit, or process for ps)" },
    format: { type: "enum", options: [...FORMATS], description: "Shape of the output", default: "json" },
    strict: { type: "boolean", description: "openai, openai-responses: schemas OpenAI's strict mode accepts (optional fields nullable), \"strict\": true" },
  },
};

export async function run(argv: string[]): Promise<number> {
  let format: Format = "json";
  let only: string | undefined;
  let strict = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--strict") {
      strict = true;
    } else if (arg === "--format" || arg.startsWith("--format=")) {
      const value = arg.includes("=") ? arg.slice(9) : argv[++i];
      if (!FORMATS.includes(value as Format)) throw new UsageError(`--format must be one of ${FORMATS.join(", ")}`);
      format = value as Format;
    } else if (arg.startsWith("-")) {
      throw new UsageError(`unknown option ${arg}`);
    } else if (only === undefined) {
      only = arg;
    } else {
      throw new UsageError(`too many arguments`);
    }
  }
  if (strict && !STRICT_FORMATS.includes(format)) {
    throw new UsageError(`--strict applies to --format ${STRICT_FORMATS.join(" and ")} (OpenAI's strict mode), not to ${format}`);
  }
  let tools: Tool[];
  if (only !== undefined) {
    const tool = await loadTool(only);
    if (!tool) throw new UsageError(`unknown tool "${only}"`);
    tools = [tool];
  } else {
    tools = await loadAllTools();
  }
  const shaped = tools.map((t) => shape(t, format, strict));
  writeAll(1, `${JSON.stringify(only !== undefined ? shaped[0] : shaped, null, 2)}\n`);
  return EXIT.ok;
}
