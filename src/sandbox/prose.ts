// Every sentence the sandbox says to a model, in one place (SPEC §8.2): refusals of kt's own
// tools (SANDBOX_DENIED), a machine that cannot sandbox (SANDBOX_UNAVAILABLE), the line added
// to a command that hit the boundary, and what kt mcp tells its client.
import type { SandboxMode, SandboxPolicy } from "../core/result.ts";
import { writableDirs } from "./policy.ts";

/** "a", "a and b", "a, b and c". */
export function spoken(items: readonly string[]): string {
  if (items.length <= 1) return items[0] ?? "";
  return `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

export function deniedWrite(policy: SandboxPolicy, display: string): string {
  if (policy.mode === "read-only") {
    return `Refusing to change ${display}: kt runs in the read-only sandbox, where its tools change no file and commands write only to ${policy.tmp}. If this change is needed, tell the user, who can start kt with --sandbox workspace-write.`;
  }
  return `Refusing to change ${display}: the workspace-write sandbox lets kt change files only under ${spoken(writableDirs(policy))}. Work inside ${policy.writable[0] ?? policy.tmp}; if the change is needed where it is, tell the user, who can add a directory by starting kt with --writable DIR.`;
}

export function deniedRead(policy: SandboxPolicy, display: string, store: string, verb: "read" | "write"): string {
  const what = store === display ? store : `${display}, inside ${store}`;
  return `Refusing to ${verb} ${what}: the ${policy.mode} sandbox keeps it unreadable, for it may hold secrets (keys, tokens, passwords), and commands cannot see it either. Do without it; if it is truly needed, tell the user — only they can lift this (--sandbox off).`;
}

/** Why this machine cannot sandbox, and what a person can do about it. */
export interface Unavailable {
  /** What is missing, as a clause: "bubblewrap (bwrap) is not installed". */
  why: string;
  /** What a person installs or enables to have the sandbox. */
  fix: string;
}

export function unavailable(mode: SandboxMode, from: string, u: Unavailable): string {
  return `Command not run: kt is set to run commands in the ${mode} sandbox (${from}), and this machine cannot provide it: ${u.why}. Nothing was run, and kt never runs a command outside the sandbox it was given. Tell the user: ${u.fix}; or they can start kt with --sandbox off (or KT_SANDBOX=off) to run commands without a sandbox. kt's file tools work as before.`;
}

export function noWideningField(mode: SandboxMode, field: string): string {
  return `Refusing "${field}": commands run in the ${mode} sandbox the user chose when starting kt, and no tool input can leave or widen it. Nothing was run. Send the call again without "${field}"; if the command truly needs more (the network, a directory outside), tell the user, who can start kt with --allow-network, --writable DIR or --sandbox off.`;
}

/** What a policy blocks, as the clause the boundary line and kt mcp's instructions share. */
function blocks(policy: SandboxPolicy): string {
  return `writes outside ${spoken(writableDirs(policy))} are blocked; network is ${policy.network ? "allowed" : "off"}`;
}

/** The one line added to a command's output when it failed at the boundary; `hidden`: the unreadable path it named. */
export function boundaryLine(policy: SandboxPolicy, hidden?: string): string {
  return `[sandbox ${policy.mode}: ${blocks(policy)}${hidden ? `; ${hidden} is unreadable` : ""}]`;
}

/** The sentence kt mcp adds to its server instructions. */
export function instructionsLine(policy: SandboxPolicy | undefined): string {
  if (!policy) return "Commands (bash, process) run without a sandbox.";
  const tools = policy.mode === "read-only" ? "write, edit and apply_patch are refused" : `write, edit and apply_patch change files only there`;
  return `Commands (bash, process) run in the ${policy.mode} sandbox: ${blocks(policy)}, and secret stores (~/.ssh, ~/.aws and the like) are unreadable; ${tools}. Only the user can change the sandbox.`;
}
