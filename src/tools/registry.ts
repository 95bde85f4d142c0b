// Every tool kt has, loaded lazily so that a `kt read` never pays for the others.
import type { Tool } from "./tool.ts";

const loaders: Record<string, () => Promise<{ default: Tool }>> = {
  read: () => import("./read.ts"),
  write: () => import("./write.ts"),
  edit: () => import("./edit.ts"),
  grep: () => import("./grep.ts"),
  glob: () => import("./glob.ts"),
  bash: () => import("./bash.ts"),
  ps: () => import("./ps.ts"),
  patch: () => import("./patch.ts"),
  code: () => import("./code.ts"),
  replace: () => import("./replace.ts"),
};

/** Subcommand names, in the order help and `kt schema` list them. */
export const TOOL_NAMES: readonly string[] = Object.keys(loaders);

/**
 * Tools that answer another framework's call shape and are not listed as kt's own (no
 * subcommand, no schema): Claude Code's NotebookEdit, which edit already covers for kt.
 */
const unlisted: Record<string, () => Promise<{ default: Tool }>> = {
  notebook_edit: () => import("./notebook-edit.ts"),
};

/** The tool a subcommand name or a schema name (e.g. "process" for ps) refers to. */
export async function loadTool(name: string): Promise<Tool | undefined> {
  // Own keys only: a model-chosen name such as "__proto__" or "constructor" is no tool.
  const key = Object.hasOwn(loaders, name) ? name : Object.hasOwn(SCHEMA_ALIASES, name) ? SCHEMA_ALIASES[name]! : undefined;
  return key === undefined ? undefined : (await loaders[key]!()).default;
}

/** A tool only another framework's shape reaches (see `unlisted`). */
export async function loadUnlistedTool(name: string): Promise<Tool | undefined> {
  return Object.hasOwn(unlisted, name) ? (await unlisted[name]!()).default : undefined;
}

/** Names frameworks know a tool by, when they differ from the subcommand. */
const SCHEMA_ALIASES: Record<string, string> = { process: "ps", apply_patch: "patch" };

export async function loadAllTools(): Promise<Tool[]> {
  return Promise.all(TOOL_NAMES.map(async (name) => (await loaders[name]!()).default));
}

/** The name a model sees for a tool. */
export function schemaName(tool: Tool): string {
  return tool.schemaName ?? tool.name;
}
