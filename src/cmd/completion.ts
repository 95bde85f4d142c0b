// `kt completion bash|zsh|fish`: a completion script for the shell. It is written from the
// tables `kt --help` renders (every subcommand's arguments; each tool's flags come from its
// input fields, aliases and switches) plus the tools' enum fields, so a new tool, field or
// option is completed as soon as help shows it.
import type { ArgDef, ArgsDef, CommandDef, Resolvable } from "citty";
import { unwrap, type Param } from "../tools/params.ts";
import { version } from "../../package.json" with { type: "json" };
import type { Subcommand } from "./subcommand.ts";
import { loadTool } from "../tools/registry.ts";
import type { Tool } from "../tools/tool.ts";
import { UsageError } from "./_args.ts";
import { EXIT, writeAll } from "./_run.ts";
import { parseSwitches } from "./switches.ts";

export const SHELLS = ["bash", "zsh", "fish"] as const;
type Shell = (typeof SHELLS)[number];

export const command: CommandDef = {
  meta: { name: "completion", description: "Print a completion script for bash, zsh or fish" },
  args: {
    shell: { type: "positional", required: true, description: `${SHELLS.join(", ")} (e.g. source <(kt completion bash))` },
  },
};

/** What a flag takes: nothing, any word, a file, a directory, or one of a list. */
export type Takes = "none" | "word" | "file" | "dir" | readonly string[];

export interface FlagSpec {
  name: string;
  description: string;
  takes: Takes;
}

export interface CommandSpec {
  name: string;
  description: string;
  flags: FlagSpec[];
  /** The first positional: a list of words, or "file" (anything, with file names offered). */
  first: "file" | readonly string[];
}

/** Positional words of subcommands whose help cannot list them. */
const FIRST_WORDS: Record<string, readonly string[]> = { completion: SHELLS };

/** `main` is the command `kt --help` renders; every subcommand in it is described. */
export function subcommand(main: () => CommandDef): Subcommand {
  return {
    command,
    async run(argv) {
      const { positionals } = parseSwitches("completion", argv);
      const shell = positionals[0];
      if (positionals.length > 1) throw new UsageError("too many arguments: kt completion takes one shell");
      if (!shell) throw new UsageError(`missing shell: kt completion ${SHELLS.join("|")}`);
      if (!(SHELLS as readonly string[]).includes(shell)) throw new UsageError(`unknown shell "${shell}": kt completion knows ${SHELLS.join(", ")}`);
      writeAll(1, script(shell as Shell, await describe(main())));
      return EXIT.ok;
    },
  };
}

async function resolve<T>(value: Resolvable<T> | undefined): Promise<T | undefined> {
  return typeof value === "function" ? (value as () => T | Promise<T>)() : value;
}

export async function describe(main: CommandDef): Promise<CommandSpec[]> {
  const subs = (await resolve(main.subCommands)) ?? {};
  return Promise.all(
    Object.entries(subs).map(async ([name, def]) => {
      const cmd = (await resolve(def))!;
      const meta = await resolve(cmd.meta);
      const args: ArgsDef = (await resolve(cmd.args)) ?? {};
      const tool = await loadTool(name);
      const spec: CommandSpec = { name, description: oneLine(meta?.description ?? ""), flags: [], first: FIRST_WORDS[name] ?? "file" };
      const enums = tool ? enumFields(tool) : new Map<string, readonly string[]>();
      for (const [key, arg] of Object.entries(args)) {
        if (arg.type === "positional") continue;
        spec.flags.push({ name: key, description: oneLine(arg.description ?? ""), takes: takes(key, arg, enums) });
      }
      spec.flags.push({ name: "help", description: "Show help", takes: "none" });
      if (tool) {
        const first = Array.isArray(tool.positionals) ? tool.positionals[0] : tool.primary;
        const words = first === undefined ? undefined : enums.get(first);
        if (words) spec.first = words;
      }
      return spec;
    }),
  );
}

function takes(key: string, arg: ArgDef, enums: Map<string, readonly string[]>): Takes {
  if (arg.type === "boolean") return "none";
  if (arg.type === "enum" && arg.options) return arg.options;
  const field = enums.get(key.replace(/-/g, "_"));
  if (field) return field;
  const hint = `${arg.valueHint ?? ""} ${key}`;
  if (/\bdir\b|workdir|cwd/.test(hint)) return "dir";
  if (/path|file/.test(hint)) return "file";
  return "word";
}

/** Input fields whose schema is an enum, with their values. */
function enumFields(tool: Tool): Map<string, readonly string[]> {
  const found = new Map<string, readonly string[]>();
  for (const [field, param] of Object.entries(tool.parameters.shape as Record<string, Param>)) {
    const def = unwrap(param);
    if (def.kind === "enum") found.set(field, def.values);
  }
  return found;
}

/** The first sentence on one line, short enough for a completion menu. */
function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const end = flat.search(/(?<!\b(?:e\.g|i\.e|etc))\. /);
  const first = end === -1 ? flat : flat.slice(0, end);
  return (first.length > 80 ? `${first.slice(0, 79)}…` : first).replace(/\.$/, "");
}

const WORD = /^[A-Za-z0-9_.+-]+$/;

/** Words that are safe unquoted in every shell's word list; anything else is left out. */
function words(list: readonly string[]): string {
  return list.filter((w) => WORD.test(w)).join(" ");
}

export function script(shell: Shell, commands: CommandSpec[]): string {
  switch (shell) {
    case "bash":
      return bash(commands);
    case "zsh":
      return zsh(commands);
    case "fish":
      return fish(commands);
  }
}

const TOP = [
  { name: "help", description: "Show help" },
  { name: "version", description: "Show the version and the commit kt was built from" },
];

function header(shell: Shell, load: string, keep: string): string {
  return `# ${shell} completion for kt ${version}, written by \`kt completion ${shell}\` (run it again after upgrading kt).
# Load it in this shell:  ${load}
# Load it in every shell: ${keep}
`;
}

function bash(commands: CommandSpec[]): string {
  const cases = commands.map((c) => {
    // Flags grouped by what their value completes to; a free word offers nothing.
    const byAction = new Map<string, string[]>();
    for (const f of c.flags) {
      if (f.takes === "none") continue;
      const action =
        f.takes === "word" ? "return ;;" : `COMPREPLY=($(${f.takes === "file" ? "compgen -f" : f.takes === "dir" ? "compgen -d" : `compgen -W '${words(f.takes as readonly string[])}'`} -- "$cur")); return ;;`;
      byAction.set(action, [...(byAction.get(action) ?? []), `--${f.name}`]);
    }
    const valueCases = [...byAction].map(([action, names]) => `        ${names.join("|")}) ${action}`);
    const first = c.first === "file" ? "" : `\n      ((COMP_CWORD == 2)) && [[ $cur != -* ]] && { COMPREPLY=($(compgen -W '${words(c.first)}' -- "$cur")); return; }`;
    return `    ${c.name})
      flags='${c.flags.map((f) => `--${f.name}`).join(" ")}'
      case $prev in
${valueCases.join("\n")}
      esac${first}
      ;;`;
  });
  return `${header("bash", "source <(kt completion bash)", "kt completion bash > ~/.local/share/bash-completion/completions/kt")}
_kt() {
  local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD-1]} flags=
  # bash splits --flag=value at the "=": complete the value of the flag before it.
  if [[ $cur == = ]]; then
    cur=
  elif [[ $prev == = ]] && ((COMP_CWORD > 2)); then
    prev=\${COMP_WORDS[COMP_CWORD-2]}
  fi
  if ((COMP_CWORD == 1)); then
    COMPREPLY=($(compgen -W '${commands.map((c) => c.name).join(" ")} ${TOP.map((t) => `--${t.name}`).join(" ")}' -- "$cur"))
    return
  fi
  case \${COMP_WORDS[1]} in
${cases.join("\n")}
    *) return ;;
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
    return
  fi
  COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -o bashdefault -F _kt kt
`;
}

/** Text inside single quotes for zsh, with _arguments' own specials escaped. */
function zq(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/[[\]:]/g, (c) => `\\${c}`).replace(/'/g, `'\\''`);
}

function zshAction(takes: Takes, name: string): string {
  if (takes === "file") return `:${name}:_files`;
  if (takes === "dir") return `:${name}:_files -/`;
  if (takes === "word") return `:${name}: `;
  return `:${name}:(${words(takes as readonly string[])})`;
}

function zsh(commands: CommandSpec[]): string {
  // _describe splits name from description at the first colon; the description is literal.
  const list = commands.map((c) => `    '${zq(c.name)}:${c.description.replace(/'/g, `'\\''`)}'`);
  const cases = commands.map((c) => {
    const specs = c.flags.map((f) => {
      const desc = `[${zq(f.description)}]`;
      return f.takes === "none" ? `'--${f.name}${desc}'` : `'--${f.name}=${desc}${zshAction(f.takes, f.name)}'`;
    });
    specs.push(c.first === "file" ? `'*:file:_files'` : `'1:${c.name}:(${words(c.first)})' '*:file:_files'`);
    return `    ${c.name})\n      _arguments -S \\\n        ${specs.join(" \\\n        ")}\n      ;;`;
  });
  return `#compdef kt
${header("zsh", "source <(kt completion zsh)", 'kt completion zsh > "${fpath[1]}/_kt" (then start a new shell)')}
_kt() {
  local curcontext=$curcontext state line
  local -a commands
  commands=(
${list.join("\n")}
  )
  _arguments -C \\
    ${TOP.map((t) => `'(- *)--${t.name}[${zq(t.description)}]'`).join(" \\\n    ")} \\
    '1:command:->command' \\
    '*::argument:->argument'
  case $state in
    command) _describe -t commands 'kt command' commands ;;
    argument)
      case $words[1] in
${cases.map((c) => c.replace(/^/gm, "    ")).join("\n")}
      esac
      ;;
  esac
}

if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
  _kt "$@"
else
  compdef _kt kt
fi
`;
}

/** Text inside single quotes for fish. */
function fq(text: string): string {
  return `'${text.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
}

function fish(commands: CommandSpec[]): string {
  const lines: string[] = [];
  for (const t of TOP) lines.push(`complete -c kt -n __kt_no_command -l ${t.name} -d ${fq(t.description)}`);
  for (const c of commands) lines.push(`complete -c kt -n __kt_no_command -a ${c.name} -d ${fq(c.description)}`);
  for (const c of commands) {
    const when = `-n '__kt_command ${c.name}'`;
    if (c.first === "file") lines.push(`complete -c kt ${when} -F`);
    else lines.push(`complete -c kt -n '__kt_command ${c.name}; and __kt_arg_count 2' -a ${fq(words(c.first))}`);
    for (const f of c.flags) {
      const value =
        f.takes === "none" ? "" : f.takes === "file" ? " -r -F" : f.takes === "dir" ? " -x -a '(__fish_complete_directories)'" : f.takes === "word" ? " -x" : ` -x -a ${fq(words(f.takes as readonly string[]))}`;
      lines.push(`complete -c kt ${when} -l ${f.name}${value} -d ${fq(f.description)}`);
    }
  }
  return `${header("fish", "kt completion fish | source", "kt completion fish > ~/.config/fish/completions/kt.fish")}
function __kt_no_command
    test (count (commandline -opc)) -eq 1
end

function __kt_command
    set -l words (commandline -opc)
    test (count $words) -ge 2; and test $words[2] = $argv[1]
end

function __kt_arg_count
    test (count (commandline -opc)) -eq $argv[1]
end

complete -c kt -f
${lines.join("\n")}
`;
}
