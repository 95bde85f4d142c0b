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

/** Claude Code's Bash field that asks to run outside its sandbox (see widensSandbox). */
const DISABLE_SANDBOX = "dangerouslyDisableSandbox";

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
    args({ description: _, run_in_background: background, timeout, [DISABLE_SANDBOX]: __, ...rest }) {
      if (background === true) return { action: "start", ...rest };
      return { ...rest, ...(timeout === undefined || timeout === null ? {} : { timeout_ms: timeout }) };
    },
  },
  // kt's process read has no filter: one sent as null (strict mode sends every field) is not given.
  BashOutput: { tool: "ps", args: ({ bash_id: id, filter, ...rest }) => ({ action: "read", id, ...rest, ...(filter === null || filter === undefined ? {} : { filter }) }) },
  KillShell: { tool: "ps", args: ({ shell_id: id, ...rest }) => ({ action: "stop", id, ...rest }) },
  // A notebook's cell replaced, inserted or deleted: kt's edit on the cells as read shows them.
  NotebookEdit: { tool: "notebook_edit", args: (a) => a },
  // The newer names of the two above. TaskOutput blocks (block defaults to true) until the task
  // ends or `timeout` ms pass: kt's process wait without a pattern; block: false is a read.
  TaskOutput: {
    tool: "ps",
    args({ task_id: id, block, timeout, ...rest }) {
      if (block === false) return { action: "read", id, ...rest };
      return { action: "wait", id, ...rest, ...(timeout === undefined || timeout === null ? {} : { timeout_ms: timeout }) };
    },
  },
  TaskStop: { tool: "ps", args: ({ task_id: id, ...rest }) => ({ action: "stop", id, ...rest }) },
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
 * Claude Code's boolean fields, per tool (MultiEdit's inside each of its edits). Some
 * clients send them as the strings "true" and "false" (SPEC §8.8); kt takes those as the
 * booleans, and refuses any other value that is not a boolean rather than ignore it — a
 * `run_in_background: "yes"` run in the foreground is a call silently not done as asked.
 */
const BOOLEANS: Record<string, readonly string[]> = {
  Bash: ["run_in_background"],
  Edit: ["replace_all"],
  MultiEdit: ["replace_all"],
  Grep: ["-i", "-n", "multiline"],
  TaskOutput: ["block"],
};

/** `args` with its boolean fields taken as booleans, or why one cannot be. */
function booleans(name: string, args: Args): { ok: true; args: Args } | { ok: false; why: string } {
  const fields = BOOLEANS[name] ?? [];
  const fix = (record: Args, where: string): string | undefined => {
    for (const field of fields) {
      const value = record[field];
      if (value === "true" || value === "false") record[field] = value === "true";
      else if (value !== undefined && value !== null && typeof value !== "boolean") {
        return `parameter "${where}${field}" must be a boolean (true or false), got ${JSON.stringify(value)}`;
      }
    }
    return undefined;
  };
  const out: Args = { ...args };
  if (name === "MultiEdit" && Array.isArray(out.edits)) {
    const edits = out.edits.map((edit) => (typeof edit === "object" && edit !== null && !Array.isArray(edit) ? { ...(edit as Args) } : edit));
    for (const [i, edit] of edits.entries()) {
      if (typeof edit !== "object" || edit === null || Array.isArray(edit)) continue;
      const why = fix(edit as Args, `edits[${i}].`);
      if (why) return { ok: false, why };
    }
    out.edits = edits;
  }
  const why = fix(out, "");
  return why ? { ok: false, why } : { ok: true, args: out };
}

/**
 * The kt call for a call to one of Claude Code's tools (exact, capitalized name), or
 * undefined for any other name; `invalid` says why its arguments cannot be taken. Arguments
 * that are not an object are left for kt's validation to explain.
 */
export function fromClaudeCode(name: string, args: unknown): { tool: string; args: unknown; invalid?: string } | undefined {
  const mapping = Object.hasOwn(MAPPINGS, name) ? MAPPINGS[name]! : undefined;
  if (!mapping) return undefined;
  if (typeof args !== "object" || args === null || Array.isArray(args)) return { tool: mapping.tool, args };
  const taken = booleans(name, args as Args);
  if (!taken.ok) return { tool: mapping.tool, args, invalid: taken.why };
  // A background Bash call is a process start.
  const tool = name === "Bash" && taken.args.run_in_background === true ? "ps" : mapping.tool;
  return { tool, args: mapping.args(taken.args) };
}

/** Claude Code's tool names kt answers to. */
export const CLAUDE_CODE_TOOLS: readonly string[] = Object.keys(MAPPINGS);

/**
 * The field of a Claude Code call that asks to leave the sandbox — Bash's
 * `dangerouslyDisableSandbox`, the one its models retry with — or undefined. In kt only a
 * person sets the sandbox (SPEC §8.2): the mapping drops the field, and a sandboxed call that
 * sets it is refused, never run.
 */
export function widensSandbox(name: string, args: unknown): string | undefined {
  if (name !== "Bash" || typeof args !== "object" || args === null || Array.isArray(args)) return undefined;
  const value = (args as Args)[DISABLE_SANDBOX];
  return value === undefined || value === null || value === false || value === "false" ? undefined : DISABLE_SANDBOX;
}
