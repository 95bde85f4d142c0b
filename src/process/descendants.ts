// Everything a command started, so that stopping it or ending its session leaves nothing
// behind (issue 11.14). A process group alone does not hold a command: a job put in the
// background outlives its leader, and `setsid` (or a daemon's double fork) leaves the
// group altogether. Three facts are combined, on Linux:
// - the process group the command leads;
// - the supervisor's descendants: the supervisor is a child subreaper
//   (prctl PR_SET_CHILD_SUBREAPER), so what its command orphans is re-parented to it
//   rather than to init, and stays in its tree for as long as it lives;
// - a marker in the environment (src/process/env.ts) that every process the command starts
//   inherits unless it clears its environment, found by a sweep of /proc — this still
//   works when the supervisor is gone.
// Elsewhere only the process group is known. cgroups would hold a command tighter, but
// an unprivileged user can seldom create one (cgroup v1, or v2 without delegation), so kt
// does not depend on them; what survives a stop is reported, never passed over.
import { readdirSync, readFileSync } from "node:fs";
import { MARKER } from "./env.ts";
import { LINUX_PROC, procPath } from "./procfs.ts";
import { isMine } from "./identity.ts";

export interface Proc {
  pid: number;
  ppid: number;
  pgrp: number;
  state: string;
  /** The executable's name as the kernel keeps it (at most 15 characters). */
  comm: string;
  /** It has begun to exit, and is not yet a zombie (tearing down a namespace can take milliseconds). */
  exiting?: boolean;
}

const dead = (state: string) => state === "Z" || state === "X" || state === "x";
/** PF_EXITING, of field 9 of /proc/<pid>/stat: the process has begun to exit and runs no more of its own code. */
const PF_EXITING = 0x4;

function stat(pid: string): Proc | undefined {
  let text: string;
  try {
    text = readFileSync(procPath(`${pid}/stat`), "utf8");
  } catch {
    return undefined;
  }
  const close = text.lastIndexOf(")");
  const fields = text.slice(close + 2).split(" ");
  return { pid: Number(pid), comm: text.slice(text.indexOf("(") + 1, close), state: fields[0] ?? "", ppid: Number(fields[1]), pgrp: Number(fields[2]), exiting: (Number(fields[6]) & PF_EXITING) !== 0 };
}

function pids(): string[] {
  try {
    return readdirSync(procPath()).filter((name) => name.charCodeAt(0) >= 48 && name.charCodeAt(0) <= 57);
  } catch {
    return [];
  }
}

/** Every process of the machine this user can see, from /proc (empty elsewhere). */
export function snapshot(): Map<number, Proc> {
  const all = new Map<number, Proc>();
  for (const pid of pids()) {
    const p = stat(pid);
    if (p) all.set(p.pid, p);
  }
  return all;
}

/** True when `pid`'s environment holds `MARKER=value` exactly. */
export function carriesMarker(pid: number, value: string): boolean {
  let env: Buffer;
  try {
    env = readFileSync(procPath(`${pid}/environ`));
  } catch {
    return false;
  }
  const want = Buffer.from(`${MARKER}=${value}\0`);
  const at = env.indexOf(want);
  return at === 0 || (at > 0 && env[at - 1] === 0);
}

/** The value of the marker in `pid`'s environment, if it has one. */
export function markerOf(pid: number): string | undefined {
  let env: string;
  try {
    env = readFileSync(procPath(`${pid}/environ`), "latin1");
  } catch {
    return undefined;
  }
  for (const entry of env.split("\0")) if (entry.startsWith(`${MARKER}=`)) return Buffer.from(entry.slice(MARKER.length + 1), "latin1").toString("utf8");
  return undefined;
}

/**
 * This process's children, from /proc/self/task/<tid>/children: a few small reads instead
 * of a walk of /proc. Undefined where the kernel does not offer the file.
 */
export function ownChildren(): number[] | undefined {
  let tasks: string[];
  try {
    tasks = readdirSync(procPath("self/task"));
  } catch {
    return undefined;
  }
  const kids: number[] = [];
  for (const tid of tasks) {
    let text: string;
    try {
      text = readFileSync(procPath(`self/task/${tid}/children`), "utf8");
    } catch {
      return undefined;
    }
    for (const pid of text.split(" ")) if (pid.trim() !== "") kids.push(Number(pid));
  }
  return kids;
}

/** Every live process carrying a marker, by marker value: what kt commands started, wherever they went. */
export function marked(all = snapshot()): Map<string, Proc[]> {
  const byValue = new Map<string, Proc[]>();
  for (const p of all.values()) {
    if (dead(p.state) || p.pid === process.pid) continue;
    const value = markerOf(p.pid);
    if (value === undefined || !isMine(p.pid)) continue;
    const list = byValue.get(value);
    if (list) list.push(p);
    else byValue.set(value, [p]);
  }
  return byValue;
}

/** Whether process group `pgid` has any member at all (zombies included): one kill(2). */
export function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

export interface Holds {
  /** The process group the command leads (its leader's pid). */
  pgid?: number | null;
  /** A live supervisor: its descendants are the command's. */
  root?: number | null;
  /** The marker value the command's processes carry. */
  marker?: string;
  /** A live leader in a session's host: it and its descendants are the command's. */
  tree?: number | null;
}

/** Live processes the command holds (never the supervisor itself, nor the caller). */
export function held(holds: Holds, all = snapshot()): Proc[] {
  const found = new Map<number, Proc>();
  if (!LINUX_PROC) {
    if (holds.pgid) {
      try {
        process.kill(-holds.pgid, 0);
        found.set(holds.pgid, { pid: holds.pgid, ppid: 0, pgrp: holds.pgid, state: "R", comm: "?" });
      } catch {
        // The group is empty.
      }
    }
    return [...found.values()];
  }
  const children = new Map<number, Proc[]>();
  for (const p of all.values()) {
    if (dead(p.state)) continue;
    if (holds.pgid && p.pgrp === holds.pgid) found.set(p.pid, p);
    const list = children.get(p.ppid);
    if (list) list.push(p);
    else children.set(p.ppid, [p]);
  }
  if (holds.root) {
    const stack = [...(children.get(holds.root) ?? [])];
    while (stack.length > 0) {
      const p = stack.pop()!;
      found.set(p.pid, p);
      stack.push(...(children.get(p.pid) ?? []));
    }
  }
  if (holds.tree) {
    const top = all.get(holds.tree);
    // Still the leader of the command's group: a reused pid leads a group of its own, or none.
    const stack = top && !dead(top.state) && (!holds.pgid || top.pgrp === holds.pgid) ? [top] : [];
    while (stack.length > 0) {
      const p = stack.pop()!;
      found.set(p.pid, p);
      stack.push(...(children.get(p.pid) ?? []));
    }
  }
  if (holds.marker !== undefined) {
    // A marker names the command only in this user's processes: anyone may set one in their own.
    for (const p of all.values()) if (!dead(p.state) && !found.has(p.pid) && carriesMarker(p.pid, holds.marker) && isMine(p.pid)) found.set(p.pid, p);
  }
  found.delete(process.pid);
  if (holds.root) found.delete(holds.root);
  return [...found.values()].sort((a, b) => a.pid - b.pid);
}

/**
 * A `held` to call again and again while a command is being stopped: the group and the
 * supervisor's tree each time (one pass over /proc/<pid>/stat), the processes found by
 * their marker kept, and the sweep of every environment only every `sweepEvery` calls —
 * reading every process's environment each 25 ms would cost more than the stop.
 */
export function tracker(holds: Holds, sweepEvery = 8): () => Proc[] {
  const known = new Set<number>();
  let calls = 0;
  return () => {
    const all = snapshot();
    const sweep = holds.marker !== undefined && calls++ % sweepEvery === 0;
    const found = held(sweep ? holds : { ...holds, marker: undefined }, all);
    const ids = new Set(found.map((p) => p.pid));
    for (const pid of known) {
      const p = all.get(pid);
      if (p && !dead(p.state) && !ids.has(pid)) {
        found.push(p);
        ids.add(pid);
      }
    }
    for (const pid of ids) known.add(pid);
    return found;
  };
}

// ---- the supervisor's side: a subreaper that reaps what it adopts --------------------

interface Libc {
  prctl(option: number, a: number, b: number, c: number, d: number): number;
  waitpid(pid: number, status: null, options: number): number;
}

let libc: Libc | null | undefined;

function loadLibc(): Libc | null {
  if (libc !== undefined) return libc;
  libc = null;
  if (!LINUX_PROC) return libc;
  try {
    const { dlopen, FFIType } = require("bun:ffi") as typeof import("bun:ffi");
    for (const name of ["libc.so.6", "libc.musl-x86_64.so.1", "libc.musl-aarch64.so.1", "libc.so"]) {
      try {
        const lib = dlopen(name, {
          prctl: { args: [FFIType.i32, FFIType.u64, FFIType.u64, FFIType.u64, FFIType.u64], returns: FFIType.i32 },
          waitpid: { args: [FFIType.i32, FFIType.ptr, FFIType.i32], returns: FFIType.i32 },
        });
        libc = lib.symbols as unknown as Libc;
        break;
      } catch {
        // Try the next name.
      }
    }
  } catch {
    // No FFI in this runtime: the group and the marker still hold the command.
  }
  return libc;
}

const PR_SET_CHILD_SUBREAPER = 36;
const WNOHANG = 1;

/** Makes this process the reaper of its orphaned descendants; false when it cannot. */
export function becomeSubreaper(): boolean {
  const c = loadLibc();
  if (!c) return false;
  try {
    return c.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) === 0;
  } catch {
    return false;
  }
}

/**
 * Reaps the zombies among this process's children that are not in `keep` (the leaders of the
 * commands it runs, which the runtime waits for itself): adopted orphans that ended. Returns
 * the others, which are not zombies (some may be exiting).
 */
export function reapAdopted(keep: ReadonlySet<number>, children = ownChildren()): Proc[] {
  const c = loadLibc();
  if (!c || !children) return [];
  const left: Proc[] = [];
  for (const pid of children) {
    if (keep.has(pid)) continue;
    const p = stat(String(pid));
    if (!p) continue;
    if (!dead(p.state)) {
      left.push(p);
      continue;
    }
    try {
      c.waitpid(pid, null, WNOHANG);
    } catch {
      // Reaped meanwhile.
    }
  }
  return left;
}

/**
 * For a subreaper: whether anything a command started is still alive besides the `leaders`.
 * Every live descendant has a live child of this process above it (what is orphaned is
 * re-parented here), so the children alone answer — a few small reads, not a walk of /proc.
 * A host supervises many commands: `mine` tells which of its children are this command's
 * (by process group or marker). Undefined where the kernel does not list children.
 */
export function anyChildLeft(leaders: ReadonlySet<number>, mine?: (pid: number, pgrp: number) => boolean): boolean | undefined {
  const kids = ownChildren();
  if (!kids) return undefined;
  reapAdopted(leaders, kids);
  return kids.some((pid) => {
    if (leaders.has(pid)) return false;
    const p = stat(String(pid));
    return p !== undefined && !dead(p.state) && (mine === undefined || mine(pid, p.pgrp));
  });
}
