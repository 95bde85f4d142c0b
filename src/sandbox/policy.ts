// The sandbox policy (SPEC §8.2): what a person chose — the mode, the directories added, the
// network, the paths kept unreadable — made into one SandboxPolicy, and the one place that
// decides what it allows kt's own file tools. Commands get the same boundary from the OS
// (bwrap.ts, seatbelt.ts); these checks make the file tools agree with it.
import { realpathSync, statSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { KtError, type SandboxMode, type SandboxPolicy, type ToolContext } from "../core/result.ts";
import { deniedRead, deniedWrite } from "./prose.ts";

export const SANDBOX_MODES: readonly SandboxMode[] = ["read-only", "workspace-write", "off"];

/** The well-known secret stores, relative to the home directory: unreadable in both sandboxed policies. */
export const SECRET_STORES: readonly string[] = [".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".docker/config.json", ".netrc"];

export interface PolicyInput {
  mode: SandboxMode;
  /** The root kt is confined to, else the working directory: what workspace-write may change. */
  workspace: string;
  /** --writable, as given (relative to cwd). */
  writable: readonly string[];
  allowNetwork: boolean;
  /** --deny-read, as given (relative to cwd, `~` expanded). */
  denyRead: readonly string[];
  cwd: string;
  home: string;
  /** The system temp directory. */
  tmp: string;
  /** Where the mode came from, for prose ("--sandbox", "KT_SANDBOX", "kt mcp's default"). */
  from: string;
}

/** The policy, or undefined for off. Throws INVALID_ARGS for a switch that cannot be honoured. */
export function policyOf(input: PolicyInput): SandboxPolicy | undefined {
  if (input.mode === "off") {
    const widening = input.writable.length > 0 ? "--writable" : input.allowNetwork ? "--allow-network" : input.denyRead.length > 0 ? "--deny-read" : undefined;
    if (widening) {
      throw new KtError("INVALID_ARGS", `${widening} shapes a sandbox, and the sandbox is off (${input.from}). Add --sandbox workspace-write (or read-only) to run commands in one, or leave ${widening} out.`);
    }
    return undefined;
  }
  const writable: string[] = [];
  if (input.mode === "workspace-write") {
    writable.push(real(input.workspace));
    for (const dir of input.writable) {
      let r: string;
      try {
        r = realpathSync(resolve(input.cwd, dir));
        if (!statSync(r).isDirectory()) throw new Error("not a directory");
      } catch {
        throw new KtError("INVALID_ARGS", `The directory ${JSON.stringify(dir)} given with --writable does not exist or is not a directory. Give an existing directory, or leave --writable out.`);
      }
      if (!writable.includes(r)) writable.push(r);
    }
  } else if (input.writable.length > 0) {
    throw new KtError("INVALID_ARGS", "--writable adds directories commands may write, and the read-only sandbox writes none but the temp directory. Use --sandbox workspace-write with --writable, or leave --writable out.");
  }
  const denyRead = SECRET_STORES.map((p) => join(input.home, p));
  for (const p of input.denyRead) {
    if (p === "") throw new KtError("INVALID_ARGS", "A path given with --deny-read is empty. Give the file or directory to keep unreadable.");
    const abs = p === "~" || p.startsWith("~/") ? join(input.home, p.slice(1)) : isAbsolute(p) ? resolve(p) : resolve(input.cwd, p);
    denyRead.push(abs);
  }
  return { mode: input.mode, writable, tmp: real(input.tmp), network: input.allowNetwork, denyRead: [...new Set(denyRead.map(real))], from: input.from };
}

/** The real path of `p`, or of its nearest existing ancestor plus the rest. */
export function real(p: string): string {
  const abs = resolve(p);
  try {
    return realpathSync(abs);
  } catch {
    const parent = resolve(abs, "..");
    return parent === abs ? abs : join(real(parent), abs.slice(parent.length + (parent.endsWith("/") ? 0 : 1)));
  }
}

export function isUnder(dir: string, p: string): boolean {
  return p === dir || p.startsWith(dir.endsWith("/") ? dir : `${dir}/`);
}

/** The secret store or --deny-read path that holds `real`, if any. */
export function hiddenBy(policy: SandboxPolicy, real: string): string | undefined {
  return policy.denyRead.find((d) => isUnder(d, real));
}

/** The directories a policy lets anything write: the writable set, then the temp directory. */
export function writableDirs(policy: SandboxPolicy): string[] {
  return policy.writable.includes(policy.tmp) ? [...policy.writable] : [...policy.writable, policy.tmp];
}

/**
 * kt's write, edit, apply_patch and undo ask before they change `real` (a real path): the
 * read-only policy changes nothing; workspace-write changes only what a command could.
 */
export function refuseWrite(ctx: Pick<ToolContext, "sandbox">, real: string, display: string): void {
  const policy = ctx.sandbox;
  if (!policy || policy.mode === "off") return;
  const hidden = hiddenBy(policy, real);
  if (hidden) throw new KtError("SANDBOX_DENIED", deniedRead(policy, display, hidden, "write"));
  if (policy.mode === "read-only" || !writableDirs(policy).some((d) => isUnder(d, real))) {
    throw new KtError("SANDBOX_DENIED", deniedWrite(policy, display));
  }
}

/** kt's read asks before it opens `real`: what a sandboxed command cannot read, neither can kt's tools. */
export function refuseRead(ctx: Pick<ToolContext, "sandbox">, real: string, display: string): void {
  const policy = ctx.sandbox;
  if (!policy || policy.mode === "off") return;
  const hidden = hiddenBy(policy, real);
  if (hidden) throw new KtError("SANDBOX_DENIED", deniedRead(policy, display, hidden, "read"));
}
