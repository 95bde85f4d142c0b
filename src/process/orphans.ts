// Commands nothing can list or stop any more (issue 11.15): their state directory was
// removed, their index replaced, the MCP server that owned their session killed, or their
// supervisor killed while what they started runs on. They are found without any index —
// supervisors by their command line (`kt __supervise <spec>`), the command's processes by
// the marker in their environment — for `kt ps list --orphans` and `kt session end --all`.
// Only this state directory's, and only this user's (SPEC §8.7): another state directory's
// commands are its own business, and another user's processes are never kt's to stop.
import { constants, Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { ensureStateDir } from "../core/state.ts";
import { lstatOrUndefined } from "../core/statefs.ts";
import { held, marked, snapshot, type Proc } from "./descendants.ts";
import { markerValue, parseMarker } from "./env.ts";
import { HOST, isMine, isSameProcess, specOnCommandLine, SUPERVISE } from "./identity.ts";
import { byKey } from "./registry.ts";
import { terminate, type Termination } from "./kill-tree.ts";
import type { SupervisorSpec } from "./spawn.ts";
import type { HostSpec } from "./host.ts";

export type Why = "state directory gone" | "not in its index" | "its MCP server is gone" | "its supervisor is gone";

export interface Orphan {
  stateDir: string;
  key: number;
  command?: string;
  why: Why;
  supervisor?: Proc;
  /** The command's live processes (the supervisor not included). */
  procs: Proc[];
}

interface Found {
  stateDir: string;
  key: number;
  spec?: SupervisorSpec;
  supervisor?: Proc;
  /** The session's host that supervises the command (never stopped for it: it serves the whole session). */
  host?: { proc: Proc; spec: HostSpec };
  procs: Map<number, Proc>;
}

/** The spec of a session's host, read from its command line. */
function hostSpec(pid: number): HostSpec | undefined {
  const spec = specOnCommandLine(pid, HOST) as HostSpec | undefined;
  return spec && typeof spec.stateDir === "string" ? spec : undefined;
}

/** The spec of a kt supervisor, read from its command line. */
function supervisorSpec(pid: number): SupervisorSpec | undefined {
  const spec = specOnCommandLine(pid, SUPERVISE) as SupervisorSpec | undefined;
  return spec && typeof spec.stateDir === "string" && Number.isInteger(spec.key) ? spec : undefined;
}

interface RowFacts {
  command: string;
  status: string;
}

/**
 * The row of `key`: null when there is no index at all, undefined when the index has no such
 * row, "unknown" when the index could not be asked (busy, damaged): never taken for gone.
 */
function rowOf(stateDir: string, key: number, cache: Map<string, Database | null | "unknown">): RowFacts | null | undefined | "unknown" {
  let db = cache.get(stateDir);
  if (db === undefined) {
    const file = join(stateDir, "index.db");
    if (!existsSync(file)) db = null;
    else {
      try {
        db = new Database(file, constants.SQLITE_OPEN_READONLY | ((constants as Record<string, number>).SQLITE_OPEN_NOFOLLOW ?? 0x01000000));
        db.exec("PRAGMA busy_timeout = 5000");
      } catch {
        db = "unknown";
      }
    }
    cache.set(stateDir, db);
  }
  if (db === null || db === "unknown") return db;
  try {
    return byKey(db, key);
  } catch {
    return "unknown";
  }
}

/**
 * Every orphaned command of state directory `stateDir` that this user started (Linux; empty
 * elsewhere). A state directory that is there must be this user's own (or this refuses, as
 * every use of it does); one that is gone still has its orphans found, by their markers.
 */
export function findOrphans(stateDir: string): Orphan[] {
  const mine = resolve(stateDir);
  if (lstatOrUndefined(mine)) ensureStateDir(mine);
  const all = snapshot();
  const groups = new Map<string, Found>();
  const group = (stateDir: string, key: number): Found => {
    const id = markerValue(stateDir, key);
    let g = groups.get(id);
    if (!g) groups.set(id, (g = { stateDir, key, procs: new Map() }));
    return g;
  };
  for (const p of all.values()) {
    if (p.pid === process.pid) continue;
    const spec = supervisorSpec(p.pid);
    if (!spec || spec.stateDir !== mine || !isMine(p.pid)) continue;
    const g = group(spec.stateDir, spec.key);
    g.spec = spec;
    g.supervisor = p;
    for (const d of held({ root: p.pid }, all)) g.procs.set(d.pid, d);
  }
  // Sessions' hosts: a command whose processes descend from its state directory's host is supervised by it.
  const hosts = new Map<number, HostSpec>();
  for (const p of all.values()) {
    if (p.pid === process.pid) continue;
    const spec = hostSpec(p.pid);
    if (spec && spec.stateDir === mine && isMine(p.pid)) hosts.set(p.pid, spec);
  }
  const hostOf = (p: Proc, stateDir: string): { proc: Proc; spec: HostSpec } | undefined => {
    for (let at: Proc | undefined = p, hops = 0; at && hops < 64; at = all.get(at.ppid), hops++) {
      const spec = hosts.get(at.ppid);
      if (spec && spec.stateDir === stateDir) return { proc: all.get(at.ppid)!, spec };
    }
    return undefined;
  };
  for (const [value, procs] of marked(all)) {
    const parsed = parseMarker(value);
    // marked() gives this user's processes only.
    if (!parsed || parsed.stateDir !== mine) continue;
    const g = group(parsed.stateDir, parsed.key);
    for (const p of procs) {
      if (p.pid === g.supervisor?.pid) continue;
      g.procs.set(p.pid, p);
      if (!g.supervisor && !g.host) g.host = hostOf(p, parsed.stateDir);
    }
  }
  const indexes = new Map<string, Database | null | "unknown">();
  const orphans: Orphan[] = [];
  for (const g of groups.values()) {
    const row = rowOf(g.stateDir, g.key, indexes);
    if (row === "unknown") continue;
    let why: Why | undefined;
    if (row === null) why = "state directory gone";
    else if (row === undefined) why = "not in its index";
    else if (g.spec?.owner && !isSameProcess(g.spec.owner.pid, g.spec.owner.start)) why = "its MCP server is gone";
    else if (g.host?.spec.owner && !isSameProcess(g.host.spec.owner.pid, g.host.spec.owner.start)) why = "its MCP server is gone";
    else if (!g.supervisor && !g.host && g.procs.size > 0) why = "its supervisor is gone";
    if (!why) continue;
    const command = g.spec?.command ?? row?.command;
    orphans.push({ stateDir: g.stateDir, key: g.key, ...(command !== undefined ? { command } : {}), why, ...(g.supervisor ? { supervisor: g.supervisor } : {}), procs: [...g.procs.values()] });
  }
  for (const db of indexes.values()) if (db instanceof Database) db.close();
  return orphans.sort((a, b) => a.stateDir.localeCompare(b.stateDir) || a.key - b.key);
}

/** Stops orphans: their processes first (SIGTERM, grace, SIGKILL), then any supervisor left. */
export async function stopOrphans(orphans: Orphan[]): Promise<Termination> {
  const pids = new Set(orphans.flatMap((o) => o.procs.map((p) => p.pid)));
  const supervisors = new Set(orphans.flatMap((o) => (o.supervisor ? [o.supervisor.pid] : [])));
  const alive = (set: Set<number>) => () => {
    const now = snapshot();
    return [...set].flatMap((pid) => {
      const p = now.get(pid);
      return p && p.state !== "Z" && p.state !== "X" ? [p] : [];
    });
  };
  const ended = await terminate(alive(pids));
  // A supervisor exits once its command has; one that does not is stopped too.
  const rest = await terminate(alive(supervisors), 1000);
  return { ...(ended.signal ? { signal: ended.signal } : {}), escaped: [...ended.escaped, ...rest.escaped] };
}

/** One line per orphan, for people and scripts (never model text). */
export function orphanLines(orphans: Orphan[]): string[] {
  return orphans.map((o) => {
    const procs = o.procs.length === 0 ? "no process left but its supervisor" : o.procs.slice(0, 5).map((p) => `pid ${p.pid} (${p.comm})`).join(", ") + (o.procs.length > 5 ? `, ${o.procs.length - 5} more` : "");
    const sup = o.supervisor ? ` · supervisor pid ${o.supervisor.pid}` : "";
    return `${o.command === undefined ? "(command unknown)" : JSON.stringify(o.command)} · ${o.why} (${o.stateDir}, entry ${o.key}) · ${procs}${sup}`;
  });
}
