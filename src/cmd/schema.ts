// `kt schema [--format json|anthropic|openai|openai-responses|mcp] [--strict] [tool]`: every
// tool's name, description and input JSON Schema, in kt's own shape or the shape a framework's API takes.
import type { CommandDef } from "citty";
import { shape, type Format } from "../adapter/shape.ts";
import { loadAllTools, loadTool } from "../tools/registry.ts";
import type { Tool } from "../tools/tool.ts";
import { UsageError } from "./_args.ts";
import { EXIT, writeAll } from "./_run.ts";
import { parseSwitches, switchArgs } from "./switches.ts";

export { FORMATS, shape, type Format } from "../adapter/shape.ts";

/** The formats whose API has a strict mode that `--strict` targets. */
const STRICT_FORMATS: readonly Format[] = ["openai", "openai-responses"];

// A plain CommandDef (citty loads only to render help).
export const command: CommandDef = {
  meta: { name: "schema", description: "Print every tool's name, description and input JSON Schema" },
  args: {
    tool: { type: "positional", required: false, description: "Only this tool (e.g. edit, or process for ps)" },
    ...switchArgs("schema"),
  },
};

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseSwitches("schema", argv);
  if (positionals.length > 1) throw new UsageError(`too many arguments`);
  const only = positionals[0];
  const format = (values.format ?? "json") as Format;
  const strict = values.strict === true;
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
