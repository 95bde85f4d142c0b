// The owner of a generated MCP session (SPEC §8.7): `kt mcp` writes `sessions/<id>/owner`
// (its pid and that pid's start time) as it starts, and ends the session itself as it exits.
// A server killed with SIGKILL cannot: its commands stop on their own (their supervisors
// watch the owner), but its rows and logs stay. The next kt call that finds such a session —
// its owner provably dead, the same pid no longer running the same process — ends it.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sessionDir } from "../core/state.ts";
import { isSameProcess, processStart } from "./identity.ts";

const OWNER = "owner";

interface Owner {
  session: string;
  pid: number;
  start: string;
}

export function recordOwner(stateDir: string, session: string, pid: number): void {
  const start = processStart(pid);
  if (start === undefined) return;
  const owner: Owner = { session, pid, start };
  try {
    writeFileSync(join(sessionDir(stateDir, session), OWNER), `${JSON.stringify(owner)}\n`, { mode: 0o600, flag: "w" });
  } catch {
    // Housekeeping: without the file, a killed server's session stays until `session end`.
  }
}

/** The sessions of this state directory whose recorded owner is dead, other than `except`. One readdir, and one small read per session directory. */
export function deadOwnedSessions(stateDir: string, except?: string): string[] {
  let dirs: string[];
  try {
    dirs = readdirSync(join(stateDir, "sessions"));
  } catch {
    return [];
  }
  const dead: string[] = [];
  for (const dir of dirs) {
    let owner: Owner;
    try {
      owner = JSON.parse(readFileSync(join(stateDir, "sessions", dir, OWNER), "utf8")) as Owner;
    } catch {
      continue;
    }
    if (typeof owner?.session !== "string" || !Number.isInteger(owner.pid) || typeof owner.start !== "string") continue;
    if (owner.session === except || isSameProcess(owner.pid, owner.start)) continue;
    dead.push(owner.session);
  }
  return dead;
}

/** Ends every session whose owner is dead (saying so through `warn`); the number ended. */
export async function endDeadSessions(ctx: { stateDir: string; session: string; warn(message: string): void }): Promise<number> {
  const dead = deadOwnedSessions(ctx.stateDir, ctx.session);
  if (dead.length === 0) return 0;
  const { endSession } = await import("./teardown.ts");
  // Two kt calls may both find a session dead: ending it twice stops nothing twice and removes nothing twice.
  for (const session of dead) {
    const ended = await endSession({ stateDir: ctx.stateDir, session, warn: ctx.warn }, () => {});
    ctx.warn(`ended session "${session}": its MCP server is gone (killed without ending it); ${ended.stopped} processes stopped, ${ended.files} files removed.`);
  }
  return dead.length;
}
