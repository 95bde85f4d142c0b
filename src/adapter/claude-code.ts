// Calls shaped like Claude Code's built-in tools, mapped onto kt's (SPEC §1, §7.5): a
// framework that hands the model Claude Code's tool names and fields gets kt's tools
// unchanged. Pure: names and fields in, kt's names and fields out.

type Args = Record<string, unknown>;

interface Mapping {
  /** The kt tool (subcommand name). */
  tool: string;
  /** Claude Code's fields → kt's; fields it does not know pass through, so that kt names them. */
  args(input: Args): Args;
}

/** Claude Code's Grep options, by the name kt's grep gives them (SPEC §7.3). */
const GREP_FIELDS: Record<string, string> = { glob: "include", "-A": "after", "-B": "before", "-C": "context" };

/** Claude Code's LSP operations, by the code action kt gives them. */
const LSP_OPERATIONS: Record<string, string> = {
  goToDefinition: "definition",
  findReferences: "references",
  hover: "hover",
  documentSymbol: "symbols",
  workspaceSymbol: "workspace_symbols",
};

const MAPPINGS: Record<string, Mapping> = {
  Read: { tool: "read", args: (a) => a },
  Write: { tool: "write", args: (a) => a },
  Edit: { tool: "edit", args: (a) => a },
  // SPEC §4.3's edits array is what Claude Code calls MultiEdit.
  MultiEdit: { tool: "edit", args: (a) => a },
  Glob: { tool: "glob", args: (a) => a },
  Grep: {
    tool: "grep",
    args(a) {
      const out: Args = {};
      for (const [key, value] of Object.entries(a)) {
        if (key === "-n") continue; // kt numbers every content line
        if (key === "-i") {
          // Claude Code searches case-sensitively unless -i; kt's smart case stays when -i is not given.
          if (typeof value === "boolean") out.case_sensitive = !value;
          else if (value !== null && value !== undefined) out.case_sensitive = value;
          continue;
        }
        out[GREP_FIELDS[key] ?? key] = value;
      }
      return out;
    },
  },
  Bash: {
    tool: "bash",
    args({ description: _, run_in_background: background, timeout, ...rest }) {
      if (background === true) return { action: "start", ...rest };
      return { ...rest, ...(timeout === undefined || timeout === null ? {} : { timeout_ms: timeout }) };
    },
  },
  // kt's process read has no filter: one sent as null (strict mode sends every field) is not given.
  BashOutput: { tool: "ps", args: ({ bash_id: id, filter, ...rest }) => ({ action: "read", id, ...rest, ...(filter === null || filter === undefined ? {} : { filter }) }) },
  KillShell: { tool: "ps", args: ({ shell_id: id, ...rest }) => ({ action: "stop", id, ...rest }) },
  // Claude Code's LSP tool: an operation at a 1-based line and character. Operations kt has
  // no action for (call hierarchy, implementation) pass through for validation to name.
  LSP: {
    tool: "code",
    args({ operation, filePath, line, character, ...rest }) {
      const action = typeof operation === "string" && Object.hasOwn(LSP_OPERATIONS, operation) ? LSP_OPERATIONS[operation] : operation;
      const at = typeof line === "number" && typeof character === "number" ? `${line}:${character}` : line;
      return { action, ...(filePath === undefined ? {} : { file_path: filePath }), ...(at === undefined || at === null ? {} : { line: at }), ...rest };
    },
  },
};

/**
 * The kt call for a call to one of Claude Code's tools (exact, capitalized name), or
 * undefined for any other name. Arguments that are not an object are left for kt's
 * validation to explain.
 */
export function fromClaudeCode(name: string, args: unknown): { tool: string; args: unknown } | undefined {
  const mapping = Object.hasOwn(MAPPINGS, name) ? MAPPINGS[name]! : undefined;
  if (!mapping) return undefined;
  const isObject = typeof args === "object" && args !== null && !Array.isArray(args);
  let tool = mapping.tool;
  // A background Bash call is a process start.
  if (name === "Bash" && isObject && (args as Args).run_in_background === true) tool = "ps";
  return { tool, args: isObject ? mapping.args(args as Args) : args };
}

/** Claude Code's tool names kt answers to. */
export const CLAUDE_CODE_TOOLS: readonly string[] = Object.keys(MAPPINGS);
