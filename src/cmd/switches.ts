// The switches of kt's subcommands in one table: each one's name, whether it takes a value,
// which subcommands take it, and its help. Every subcommand's parsing (parseSwitches) and
// --help (switchArgs) read this table, so a switch is declared once; a tool's input fields
// are flags too, but they come from its schema (_args.ts), never from here.
import type { ArgsDef } from "citty";
// The format names alone: adapter/shape.ts would load zod's JSON Schema conversion on every call.
import { FORMATS, REPLY_FORMATS } from "../adapter/formats.ts";
import { SANDBOX_MODES } from "../sandbox/policy.ts";
import { UsageError } from "./exit.ts";

/** In `commands`: every tool subcommand (kt read, kt edit, …). */
export const TOOLS = "<tool>";

export interface Switch {
  /** `--name` (also spelled with underscores); its value is kept under the name in camelCase. */
  name: string;
  /** Valued: the word help shows for the value (`--session=<id>`). A flag when absent. */
  value?: string;
  /** The only values a valued switch accepts. */
  choices?: readonly string[];
  /** The default help names. */
  default?: string;
  /** Subcommands that take it: their names, TOOLS for every tool, or a tool's name. */
  commands: readonly string[];
  help: string;
  /** Help that differs by subcommand (the same switch means more, or less, there). */
  helpOf?: Readonly<Record<string, string>>;
  /** Valued and given any number of times: every value is kept, in order, as a list. */
  repeat?: boolean;
}

const STATE_DIR = "State directory (default: $KT_STATE_DIR, $XDG_STATE_HOME/kt or ~/.local/state/kt)";
const SESSION = 'Session id (default: $KT_SESSION or "default")';
const ROOT = "Refuse paths outside this directory (default: $KT_ROOT)";
/** SPEC §8.2: the sandbox is set by a person, on every subcommand that runs a tool. */
const SANDBOXED = [TOOLS, "call", "mcp", "undo"];

export const SWITCHES: readonly Switch[] = [
  { name: "format", value: "format", choices: REPLY_FORMATS, commands: ["call"], help: "Shape of the answer (default: text; with --jsonl: json, the kt envelope)" },
  { name: "format", value: "format", choices: FORMATS, default: "json", commands: ["schema"], help: "Shape of the output" },
  { name: "json", commands: [TOOLS, "call"], help: "Print the whole result envelope as JSON", helpOf: { call: "Same as --format json: the whole result envelope" } },
  { name: "jsonl", commands: ["call"], help: "Many calls, one JSON object per line; one result per line, in order" },
  { name: "root", value: "dir", commands: ["mcp"], help: "Refuse paths outside this directory (default: $KT_ROOT, else the directory kt mcp started in)" },
  { name: "steps", value: "n", commands: ["undo"], help: "How many of kt's changes to the file to go back (default 1)" },
  { name: "last", commands: ["undo"], help: "Undo the session's last change: every file of a patch together" },
  { name: "force", commands: ["undo"], help: "Undo even if the file changed since kt last wrote it" },
  {
    name: "session",
    value: "id",
    commands: [TOOLS, "call", "mcp", "session", "history", "undo"],
    help: SESSION,
    helpOf: { mcp: "Session id (default: $KT_SESSION, else one new session per server process)" },
  },
  { name: "all", commands: ["session"], help: "End every session of the state directory, and stop orphaned background commands too" },
  { name: "state-dir", value: "dir", commands: [TOOLS, "call", "mcp", "session", "history", "undo"], help: STATE_DIR },
  { name: "root", value: "dir", commands: [TOOLS, "call", "history", "undo"], help: ROOT },
  { name: "call-id", value: "id", commands: [TOOLS], help: "Name this call's spill files after ID (default: a new id per call)" },
  {
    name: "skip-read-check",
    commands: ["write", "edit", "call"],
    help: "Allow changing files this session never read (staleness is still checked)",
    helpOf: { call: "Allow write/edit of files this session never read (staleness is still checked)" },
  },
  {
    name: "no-diagnostics",
    commands: ["write", "edit", "patch", "code", "call", "mcp", "undo"],
    help: "Do not ask language servers what the change broke (also KT_DIAGNOSTICS=0)",
    helpOf: { call: "write/edit/patch: do not ask language servers what the change broke (also KT_DIAGNOSTICS=0)", mcp: "Do not ask language servers what a change broke (also KT_DIAGNOSTICS=0)" },
  },
  {
    name: "dry-run",
    commands: ["write", "edit", "patch", "replace", "call"],
    help: "Do everything but write; print the result and the diff",
    helpOf: {
      patch: "Do everything but write; print the result and the diff of the whole change",
      replace: "Do everything but write; print the summary and the diff of the whole change",
      call: "write/edit/patch/replace: do everything but write",
    },
  },
  {
    name: "trace",
    commands: ["edit", "patch", "call"],
    help: "Print the matching cascade on stderr",
    helpOf: { patch: "Print how each hunk was located on stderr", call: "edit/patch: print the matching cascade (how each hunk was located) on stderr" },
  },
  {
    name: "strict",
    commands: ["edit", "call", "schema"],
    help: "Exact matching only",
    helpOf: { call: "edit: exact matching only", schema: 'openai, openai-responses: schemas OpenAI\'s strict mode accepts (optional fields nullable), "strict": true' },
  },
  // Read by src/cmd/orphans.ts, which main.ts runs instead of the tool for `kt ps list --orphans`.
  { name: "orphans", commands: ["ps"], help: "With list: the background commands no session can reach any more (for people, not a model)" },
  { name: "structured", commands: ["mcp"], help: "Also send each result whole as structuredContent, with an outputSchema per tool" },
  { name: "verbose", commands: [TOOLS, "call", "mcp"], help: "More diagnostics on stderr" },
  {
    name: "sandbox",
    value: "mode",
    choices: SANDBOX_MODES,
    commands: SANDBOXED,
    help: "Run commands in a sandbox: read-only, workspace-write or off (default: $KT_SANDBOX, else off)",
    helpOf: { mcp: "Run commands in a sandbox: read-only, workspace-write or off (default: $KT_SANDBOX, else workspace-write)" },
  },
  { name: "writable", value: "dir", repeat: true, commands: SANDBOXED, help: "With --sandbox workspace-write: commands and file tools may also write here (repeatable)" },
  { name: "allow-network", commands: SANDBOXED, help: "With a sandbox: let commands use the network" },
  { name: "deny-read", value: "path", repeat: true, commands: SANDBOXED, help: "With a sandbox: keep this path unreadable too, beside ~/.ssh, ~/.aws and the other secret stores (repeatable)" },
];

/** The switch `name` as `command` takes it; `tool`: the command is a tool subcommand. */
function lookup(command: string, tool: boolean, name: string): Switch | undefined {
  return SWITCHES.find((s) => s.name === name && takes(s, command, tool));
}

function takes(s: Switch, command: string, tool: boolean): boolean {
  return s.commands.includes(command) || (tool && s.commands.includes(TOOLS));
}

/** "state-dir" → "stateDir": the key a switch's value is kept under. */
export function keyOf(name: string): string {
  return name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** The citty definitions `--help` renders for the switches `command` takes, in table order. */
export function switchArgs(command: string, tool = false): ArgsDef {
  const args: ArgsDef = {};
  for (const s of SWITCHES) {
    if (!takes(s, command, tool)) continue;
    const description = s.helpOf?.[command] ?? s.help;
    if (s.choices) args[s.name] = { type: "enum", options: [...s.choices], description, ...(s.default !== undefined ? { default: s.default } : {}) };
    else if (s.value) args[s.name] = { type: "string", description, valueHint: s.value };
    else args[s.name] = { type: "boolean", description };
  }
  return args;
}

export interface Switched {
  /** Each switch given, by keyOf(name): its value, or true/false for a flag (the last one given wins), or every value of a repeatable one. */
  values: Record<string, string | boolean | string[]>;
  /** The switches as given, in order, for commands where two of them can conflict. */
  given: { key: string; value: string | boolean }[];
  /** The arguments that are not switches, in order (everything after `--` among them). */
  positionals: string[];
}

/**
 * Parses `argv` against the switches `command` takes. A `--name` the table does not give
 * `command` goes to `other` when there is one (a tool's input fields), which returns how
 * many of the following arguments it used, or undefined for an unknown option.
 */
export function parseSwitches(
  command: string,
  argv: readonly string[],
  opts: {
    tool?: boolean;
    other?: (name: string, inline: string | undefined, next: string | undefined) => number | undefined;
    /** Appended to "unknown option --x" (a did-you-mean). */
    hint?: (name: string) => string;
  } = {},
): Switched {
  const values: Switched["values"] = {};
  const given: Switched["given"] = [];
  const set = (key: string, value: string | boolean) => {
    values[key] = value;
    given.push({ key, value });
  };
  const positionals: string[] = [];
  const tool = opts.tool ?? false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    // No option holds a line break before its "=": such an argument is text (a unified diff
    // given whole starts with "--- "), never an unknown option.
    if (arg.includes("\n") && !/^--[A-Za-z][\w-]*=/.test(arg)) {
      positionals.push(arg);
      continue;
    }
    if (!arg.startsWith("--")) {
      if (arg.startsWith("-") && arg !== "-" && !/^-\d/.test(arg)) throw new UsageError(`unknown option ${arg}`);
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const spelled = arg.slice(2, eq === -1 ? undefined : eq);
    const name = spelled.replace(/_/g, "-");
    const inline = eq === -1 ? undefined : arg.slice(eq + 1);
    const sw = lookup(command, tool, name);
    if (!sw) {
      const used = opts.other?.(spelled, inline, argv[i + 1]);
      if (used !== undefined) {
        i += used;
        continue;
      }
      if (SWITCHES.some((s) => s.name === name)) throw new UsageError(`option --${spelled} does not apply to kt ${command}`);
      throw new UsageError(`unknown option ${opts.hint ? `--${spelled}${opts.hint(spelled)}` : arg}`);
    }
    if (!sw.value) {
      set(keyOf(sw.name), flag(spelled, inline));
      continue;
    }
    let value = inline;
    if (value === undefined) {
      value = argv[++i];
      if (value === undefined) throw new UsageError(sw.choices ? `--${sw.name} must be one of ${sw.choices.join(", ")}` : `option --${spelled} needs a value`);
    }
    if (sw.choices && !sw.choices.includes(value)) throw new UsageError(`--${sw.name} must be one of ${sw.choices.join(", ")}`);
    if (sw.repeat) {
      const key = keyOf(sw.name);
      const before = values[key];
      values[key] = [...(Array.isArray(before) ? before : []), value];
      given.push({ key, value });
    } else set(keyOf(sw.name), value);
  }
  return { values, given, positionals };
}

/** A flag's value: `--name`, `--name=true|1`, `--name=false|0`. */
export function flag(name: string, inline: string | undefined): boolean {
  if (inline === undefined || inline === "true" || inline === "1") return true;
  if (inline === "false" || inline === "0") return false;
  throw new UsageError(`option --${name} is a switch: use --${name} or --${name}=false`);
}
