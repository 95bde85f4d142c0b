// The launcher: what process/spawn asks before it runs a command — the argv prefix that puts
// `bash -c …` inside the policy, or a refusal when this machine cannot provide the policy.
// Never a silent run outside: a sandboxed call that cannot be sandboxed runs nothing.
//
// Linux has bubblewrap. Landlock alone is not used where bubblewrap is missing: it cannot give
// the same boundary — its network rules know TCP ports, not addresses (the network cannot be
// closed while loopback stays open) and nothing of UDP (DNS), and it cannot hide kt's host
// socket from a command that connects to it — so a machine without a working bubblewrap is
// told so instead. macOS has sandbox-exec with a generated profile; Windows has neither.
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { KtError, type ToolContext } from "../core/result.ts";
import { bwrapArgv } from "./bwrap.ts";
import { probeBwrap } from "./probe.ts";
import { unavailable, type Unavailable } from "./prose.ts";
import { seatbeltProfile } from "./seatbelt.ts";

const SANDBOX_EXEC = "/usr/bin/sandbox-exec";

/**
 * The argv a command (`bash -c …`) is appended to, for the context's policy; undefined when
 * the sandbox is off. Throws SANDBOX_UNAVAILABLE when the machine cannot sandbox.
 */
export function sandboxPrefix(ctx: Pick<ToolContext, "sandbox" | "stateDir">, cwd: string, env: Record<string, string | undefined> = process.env, platform: NodeJS.Platform = process.platform): string[] | undefined {
  const policy = ctx.sandbox;
  if (!policy || policy.mode === "off") return undefined;
  const stateDir = resolve(ctx.stateDir);
  const refuse = (u: Unavailable) => new KtError("SANDBOX_UNAVAILABLE", unavailable(policy.mode, policy.from, u));
  if (platform === "linux") {
    const probe = probeBwrap(stateDir, env);
    if (!probe.ok) throw refuse(probe.unavailable);
    return bwrapArgv(policy, { bwrap: probe.bwrap, stateDir, cwd, uid: process.getuid?.() ?? 0, env, disableUserns: probe.disableUserns });
  }
  if (platform === "darwin") {
    if (!existsSync(SANDBOX_EXEC)) throw refuse({ why: `${SANDBOX_EXEC} is missing`, fix: "use a macOS that has sandbox-exec (every release since 10.5 ships it)" });
    return [SANDBOX_EXEC, "-p", seatbeltProfile(policy, stateDir)];
  }
  if (platform === "win32") {
    throw refuse({ why: "kt has no sandbox for Windows (neither bubblewrap nor Seatbelt exists there)", fix: "run kt inside WSL 2 with bubblewrap installed" });
  }
  throw refuse({ why: `kt has no sandbox for ${platform}`, fix: "run kt on Linux with bubblewrap, or on macOS" });
}
