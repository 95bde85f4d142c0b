// Who a pid is. A recorded pid is trusted only together with its start time, so a pid the
// kernel recycled (after a reboot, or a long uptime) is never taken for the process kt
// started: a vanished process reads as "gone", never as somebody else's.
import { readFileSync, readdirSync } from "node:fs";
import { LINUX_PROC, procPath } from "./procfs.ts";

let bootId: string | undefined;

function boot(): string {
  if (bootId === undefined) {
    try {
      bootId = readFileSync(procPath("sys/kernel/random/boot_id"), "utf8").trim();
    } catch {
      bootId = "";
    }
  }
  return bootId;
}

interface Stat {
  state: string;
  ppid: number;
  pgrp: number;
  start: string;
}

/** Fields of /proc/<pid>/stat that matter here; undefined when there is no such process. */
function procStat(pid: number | string): Stat | undefined {
  let text: string;
  try {
    text = readFileSync(procPath(`${pid}/stat`), "utf8");
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses: split after the last ")".
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  // fields[0] is field 3 (state), fields[1] field 4 (ppid), fields[2] field 5 (pgrp), fields[19] field 22 (starttime).
  return { state: fields[0] ?? "", ppid: Number(fields[1]), pgrp: Number(fields[2]), start: fields[19] ?? "" };
}

const dead = (state: string) => state === "Z" || state === "X" || state === "x";

/**
 * A token naming this incarnation of `pid` (boot id + start time on Linux, the `ps` start
 * time elsewhere), or undefined when no live process has that pid. Zombies count as dead.
 */
export function processStart(pid: number): string | undefined {
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  if (LINUX_PROC) {
    const stat = procStat(pid);
    if (!stat || dead(stat.state)) return undefined;
    return `${boot()}:${stat.start}`;
  }
  const ps = Bun.spawnSync(["ps", "-o", "stat=", "-o", "lstart=", "-p", String(pid)], { stdout: "pipe", stderr: "ignore" });
  const out = ps.stdout.toString().trim();
  if (ps.exitCode !== 0 || out === "" || out.startsWith("Z")) return undefined;
  return out.replace(/^\S+\s+/, "");
}

/** True when `pid` is alive and is the same incarnation that `start` recorded. */
export function isSameProcess(pid: number | null, start: string | null): boolean {
  if (pid === null || start === null) return false;
  return processStart(pid) === start;
}

/** Live (non-zombie) members of process group `pgid`. */
export function groupMembers(pgid: number): number[] {
  if (!LINUX_PROC) {
    try {
      process.kill(-pgid, 0);
      return [pgid];
    } catch {
      return [];
    }
  }
  // kill(-pgid, 0) also succeeds while only unreaped zombies remain, so look at /proc.
  try {
    process.kill(-pgid, 0);
  } catch {
    return [];
  }
  const members: number[] = [];
  for (const name of readdirSync(procPath())) {
    const c = name.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    const stat = procStat(name);
    if (stat && stat.pgrp === pgid && !dead(stat.state)) members.push(Number(name));
  }
  return members;
}

/** The hidden mode of a session's host (src/process/host.ts). */
export const HOST = "__host";

/** Whether `pid` is a session's host, which supervises every command of its session: its tree is not one command's. */
export function isHost(pid: number): boolean {
  try {
    return readFileSync(procPath(`${pid}/cmdline`), "utf8").split("\0").includes(HOST);
  } catch {
    return false;
  }
}

/** The parent of `pid` (Linux), or undefined. */
export function parentOf(pid: number): number | undefined {
  if (LINUX_PROC) return procStat(pid)?.ppid;
  // Without /proc (macOS, or the portable path forced): ps knows the parent everywhere.
  const ps = Bun.spawnSync(["ps", "-o", "ppid=", "-p", String(pid)], { stdout: "pipe", stderr: "ignore" });
  const ppid = Number(ps.stdout.toString().trim());
  return ps.exitCode === 0 && Number.isInteger(ppid) && ppid > 0 ? ppid : undefined;
}

/** The real uid `pid` runs as (Linux: /proc/<pid>/status), or undefined when it cannot be known. */
export function processUid(pid: number): number | undefined {
  try {
    const m = /^Uid:\s+(\d+)/m.exec(readFileSync(procPath(`${pid}/status`), "utf8"));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether `pid` runs as this user: a row or a marker never makes kt signal another user's
 * process (SPEC §8.7). Where there are no uids to compare (no /proc), nothing is refused.
 */
export function isMine(pid: number): boolean {
  const uid = process.getuid?.();
  if (uid === undefined || !LINUX_PROC) return true;
  return processUid(pid) === uid;
}

/**
 * The JSON spec a kt `__supervise` or `__host` process was started with, read from its
 * command line (world-readable, but only this user's kt starts this user's supervisors).
 */
export function specOnCommandLine(pid: number, mode: string): Record<string, unknown> | undefined {
  let argv: string[];
  if (LINUX_PROC) {
    try {
      argv = readFileSync(procPath(`${pid}/cmdline`), "utf8").split("\0");
    } catch {
      return undefined;
    }
  } else {
    // Without /proc, ps prints the arguments joined by spaces: the spec is kt's last argument,
    // so everything after the mode's word is its JSON.
    const ps = Bun.spawnSync(["ps", "-ww", "-o", "args=", "-p", String(pid)], { stdout: "pipe", stderr: "ignore" });
    const line = ps.exitCode === 0 ? ps.stdout.toString().replace(/\n$/, "") : "";
    const word = line.indexOf(` ${mode} `);
    if (word === -1) return undefined;
    argv = [mode, line.slice(word + mode.length + 2)];
  }
  const at = argv.indexOf(mode);
  if (at === -1) return undefined;
  try {
    const spec = JSON.parse(argv[at + 1] ?? "") as unknown;
    return typeof spec === "object" && spec !== null && !Array.isArray(spec) ? (spec as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The hidden mode of a command's own supervisor (src/process/supervisor.ts). */
export const SUPERVISE = "__supervise";
