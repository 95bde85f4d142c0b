// The shared path from a parsed command line to stdout and an exit code.
import { realpathSync, statSync } from "node:fs";
import { onOneLine } from "../core/paths.ts";
import { resolveStateDir } from "../core/state.ts";
import type { SandboxMode } from "../core/result.ts";
import { policyOf, SANDBOX_MODES } from "../sandbox/policy.ts";
import { KtError, type ToolContext, type ToolResult } from "../tools/tool.ts";
import type { Options } from "./_args.ts";
import { log } from "./_log.ts";
import { exitCode, writeAll } from "./exit.ts";
import { colourOn, isTerminal, paintDryRun, paintTrace } from "./terminal.ts";

export { EXIT, writeAll } from "./exit.ts";

export function newCallId(): string {
  return `k${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
}

/**
 * The context a tool runs in, from switches, the environment and the working directory.
 * `sandboxDefault`: the policy when neither --sandbox nor KT_SANDBOX names one (SPEC §8.2:
 * off for the CLI, workspace-write for kt mcp).
 */
export function contextFrom(options: Options, env = process.env, sandboxDefault: SandboxMode = "off"): ToolContext {
  // An empty --root (a script's unset variable) must not mean "no confinement"; an empty
  // KT_ROOT is unset, as empty environment variables usually are.
  if (options.root === "") {
    throw new KtError("INVALID_ARGS", "The root given with --root is empty. Give the directory kt is to be confined to, or leave --root out.");
  }
  const rootFlag = options.root ?? env.KT_ROOT;
  let root: string | undefined;
  if (rootFlag) {
    const from = options.root ? "--root" : "KT_ROOT";
    try {
      root = realpathSync(rootFlag);
    } catch {
      throw new KtError("INVALID_ARGS", `The root directory ${onOneLine(rootFlag)} (from ${from}) does not exist. Give an existing directory.`);
    }
    if (!statSync(root).isDirectory()) {
      throw new KtError("INVALID_ARGS", `The root ${onOneLine(rootFlag)} (from ${from}) is a file, not a directory. Give the directory kt is to be confined to.`);
    }
  }
  const cwd = process.cwd();
  const sandbox = sandboxFrom(options, env, sandboxDefault, root ?? cwd, cwd);
  return {
    cwd,
    session: options.session ?? env.KT_SESSION ?? "default",
    callId: options.callId ?? newCallId(),
    stateDir: resolveStateDir(env, options.stateDir),
    ...(root ? { root } : {}),
    ...(sandbox ? { sandbox } : {}),
    flags: { skipReadCheck: options.skipReadCheck, dryRun: options.dryRun, trace: options.trace, strict: options.strict, ...(options.noDiagnostics ? { noDiagnostics: true } : {}) },
    warn: (message) => log().warn(message),
    info: (message) => log().log(colourOn(2) ? paintTrace(message) : message),
  };
}

/** The sandbox a person chose: --sandbox beats KT_SANDBOX beats the subcommand's default. */
function sandboxFrom(options: Options, env: Record<string, string | undefined>, fallback: SandboxMode, workspace: string, cwd: string) {
  const fromEnv = env.KT_SANDBOX || undefined;
  if (fromEnv !== undefined && !(SANDBOX_MODES as readonly string[]).includes(fromEnv)) {
    throw new KtError("INVALID_ARGS", `KT_SANDBOX is ${JSON.stringify(onOneLine(fromEnv))}, which is no sandbox policy. Set it to ${SANDBOX_MODES.join(", ")}, or unset it.`);
  }
  const mode = (options.sandbox ?? fromEnv ?? fallback) as SandboxMode;
  const from = options.sandbox ? "--sandbox" : fromEnv ? "KT_SANDBOX" : fallback === "off" ? "the default" : "the default of kt mcp";
  return policyOf({
    mode,
    from,
    workspace,
    cwd,
    writable: options.writable ?? [],
    allowNetwork: options.allowNetwork ?? false,
    denyRead: options.denyRead ?? [],
    // Asked only of a sandbox that is on: node:os costs every call more than the answer is worth.
    get home() {
      return env.HOME || os().homedir();
    },
    get tmp() {
      return os().tmpdir();
    },
  });
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const os = (): typeof import("node:os") => require("node:os") as typeof import("node:os");

/** Prints a result the way the options ask and returns the exit code. */
export function emit(result: ToolResult, options: Pick<Options, "json"> & Partial<Pick<Options, "dryRun">>, tool?: string): number {
  // A dry run's diff is coloured for a person at a terminal; a pipe gets the text as it is.
  const shown = options.dryRun && !result.isError && colourOn(1) ? paintDryRun(onTerminal(result.content)) : onTerminal(result.content);
  writeAll(1, options.json ? `${JSON.stringify(result)}\n` : `${shown}\n`);
  return exitCode(result, tool);
}

const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/**
 * The model gets content byte for byte; a person's terminal would obey the escape sequences,
 * bells and backspaces in it (recolour, retitle, rewrite what is shown). On a terminal each
 * control character but newline and tab is shown as its picture (␛, ␇, ␈, ␍) or, for C1, as
 * its code point.
 */
export function onTerminal(text: string, fd = 1): string {
  if (!isTerminal(fd)) return text;
  return text.replace(CONTROLS, (c) => {
    const code = c.charCodeAt(0);
    if (code < 0x20) return String.fromCharCode(0x2400 + code);
    if (code === 0x7f) return "\u2421";
    return `\\u${code.toString(16).padStart(4, "0")}`;
  });
}
