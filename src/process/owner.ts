// The owner of a generated MCP session (SPEC §8.7): `kt mcp` writes `owners/<id>` (its
// session, its pid and that pid's start time) as it starts, and ends the session itself as it
// exits. A server killed with SIGKILL cannot: its commands stop on their own (their
// supervisors watch the owner), but its rows and logs stay. The next kt call that finds such a
// session — its owner provably dead, the same pid no longer running the same process — ends it.
// The owners have a folder of their own, so that every kt call looks at the live servers only
// (usually none or one), not at every session folder an ended session's history keeps for days
// (300 of them cost each call about 1 ms).
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { safeName } from "../core/state.ts";
import { privateSubdir } from "../core/statefs.ts";
import { isSameProcess, processStart } from "./identity.ts";

export const OWNERS = "owners";

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
    writeFileSync(join(privateSubdir(stateDir, OWNERS), safeName(session)), `${JSON.stringify(owner)}\n`, { mode: 0o600, flag: "w" });
  } catch {
    // Housekeeping: without the file, a killed server's session stays until `session end`.
  }
}

/** The session's owner forgotten (its session ended); the folder is not made for it. */
export function forgetOwner(stateDir: string, session: string): void {
  if (!existsSync(join(stateDir, OWNERS))) return;
  // Checked as every use checks it (a real directory of this user's): removal never goes through a link.
  rmSync(join(privateSubdir(stateDir, OWNERS), safeName(session)), { force: true });
}

/** The sessions of this state directory whose recorded owner is dead, other than `except`. One readdir, and one small read per live server. */
export function deadOwnedSessions(stateDir: string, except?: string): string[] {
  let names: string[];
  try {
    names = readdirSync(join(stateDir, OWNERS));
  } catch {
    return [];
  }
  const dead: string[] = [];
  for (const name of names) {
    let owner: Owner;
    try {
      owner = JSON.parse(readFileSync(join(stateDir, OWNERS, name), "utf8")) as Owner;
    } catch {
      continue;
    }
    if (typeof owner?.session !== "string" || !Number.isInteger(owner.pid) || typeof owner.start !== "string") continue;
    // The file is the session's own: one named for another session is no record of it.
    if (safeName(owner.session) !== name) continue;
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
