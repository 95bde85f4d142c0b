// The kt binary. Subcommands load lazily so a `kt read` pays only for read; this is the
// only module that calls process.exit, with the code src/cmd/exit.ts decides (SPEC §1).
import type { CommandDef } from "citty";
import { version } from "../package.json" with { type: "json" };
import { EXIT, fatal, UsageError, writeAll } from "./cmd/exit.ts";
import { loadTool, TOOL_NAMES } from "./tools/registry.ts";
import type { Subcommand } from "./cmd/subcommand.ts";

const OTHER: Record<string, () => Promise<Subcommand>> = {
  schema: () => import("./cmd/schema.ts"),
  call: () => import("./cmd/call.ts"),
  mcp: () => import("./cmd/mcp.ts"),
  session: () => import("./cmd/session.ts"),
  history: () => import("./cmd/history.ts"),
  undo: () => import("./cmd/undo.ts"),
  // Written from the table help renders, so it completes every subcommand and flag help lists.
  completion: async () => (await import("./cmd/completion.ts")).subcommand(mainCommand),
};

async function toolSubcommand(name: string): Promise<Subcommand> {
  const [{ toolCommand, runTool, examplesSection }, tool] = await Promise.all([import("./cmd/tool.ts"), loadTool(name)]);
  return {
    get helpTail() {
      return examplesSection(tool!);
    },
    // Built only for --help: describing every field is work a tool call does not need.
    get command() {
      return toolCommand(tool!);
    },
    run: (argv) => runTool(tool!, argv),
  };
}

function mainCommand(): CommandDef {
  const subCommands: Record<string, () => Promise<CommandDef>> = {};
  for (const name of TOOL_NAMES) subCommands[name] = async () => (await toolSubcommand(name)).command;
  for (const [name, load] of Object.entries(OTHER)) subCommands[name] = async () => (await load()).command;
  return {
    meta: { name: "kt", version, description: "The tool layer a coding agent stands on" },
    subCommands,
  };
}

/** citty renders help; it decides on colour when loaded, so say first whether the output is a terminal. */
async function loadCitty(fd: number): Promise<typeof import("citty")> {
  const { isatty } = await import("node:tty");
  if (!isatty(fd)) process.env.NO_COLOR = "1";
  return import("citty");
}

function wantsHelp(argv: readonly string[]): boolean {
  for (const arg of argv) {
    if (arg === "--") return false;
    if (arg === "--help" || arg === "-h") return true;
  }
  return false;
}

/**
 * The binary starts with the JIT's tier-up thresholds scaled up (package.json "build":
 * --compile-jit-policy): code that runs once while a call starts (node:fs defining its
 * functions, opening the index) stays in the interpreter instead of starting a JIT thread
 * to compile it, about 1 ms of CPU. A one-shot file tool keeps that policy; anything that
 * may run long (a search, a server, a host of processes) gets the normal one back.
 * Worker threads (grep's searchers) start with the normal policy whatever this one is.
 */
const ONE_SHOT: ReadonlySet<string> = new Set(["read", "write", "edit", "patch", "--version", "-v"]);

function jitPolicy(first: string | undefined): void {
  if (first !== undefined && ONE_SHOT.has(first)) return;
  Bun.unsafe?.setJITPolicy?.(1);
}

async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  jitPolicy(first);
  // Hidden: the detached owner of a background command (src/process/supervisor.ts).
  if (first === "__supervise") return (await import("./process/supervisor.ts")).supervise(rest);
  // Hidden: the session's host of background commands (src/process/host.ts).
  if (first === "__host") return (await import("./process/host.ts")).serveHost(rest, { lsp: () => import("./lsp/index.ts") });
  if (first === "--version" || first === "-v") {
    writeAll(1, `${(await import("./cmd/version.ts")).versionLine()}\n`);
    return EXIT.ok;
  }
  if (first === undefined || first === "--help" || first === "-h" || first === "help") {
    const fd = first === undefined ? 2 : 1;
    const [{ renderUsage }, { fitHelp, terminalWidth }] = await Promise.all([loadCitty(fd), import("./cmd/terminal.ts")]);
    const usage = fitHelp(await renderUsage(mainCommand()), terminalWidth(fd));
    writeAll(fd, `${usage}\n`);
    return first === undefined ? EXIT.usage : EXIT.ok;
  }
  const load = TOOL_NAMES.includes(first) ? () => toolSubcommand(first) : Object.hasOwn(OTHER, first) ? OTHER[first] : undefined;
  if (!load) throw new UsageError(`unknown command "${first}". Commands: ${[...TOOL_NAMES, ...Object.keys(OTHER)].join(", ")}`);
  // Not a tool call: what no session can see any more (src/cmd/orphans.ts).
  if (first === "ps" && rest.includes("--orphans") && !wantsHelp(rest)) return (await import("./cmd/orphans.ts")).run(rest);
  const sub = await load();
  if (wantsHelp(rest)) {
    const [{ renderUsage }, { fitHelp, terminalWidth }] = await Promise.all([loadCitty(1), import("./cmd/terminal.ts")]);
    writeAll(1, `${fitHelp(await renderUsage(sub.command, mainCommand()), terminalWidth(1))}\n${sub.helpTail ?? ""}`);
    return EXIT.ok;
  }
  return sub.run(rest);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    const name = process.argv[2] ?? "";
    const sub = TOOL_NAMES.includes(name) || Object.hasOwn(OTHER, name) ? name : "";
    const { text, code } = fatal(error, sub, Boolean(process.env.KT_DEBUG) || process.argv.includes("--verbose"));
    writeAll(2, text);
    process.exit(code);
  },
);
