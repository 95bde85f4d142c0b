// Whether a terminal process is waiting for input (SPEC §8.7): shown as `waiting for input` in
// ps list and ps read once it has been blocked reading with no new output for QUIET_MS.
//
// The signal, from /proc (Linux): the terminal's foreground process group (field 8, tpgid, of
// the leader's stat) has a member blocked in a system call that waits on the terminal —
//   - read/readv/pread on a descriptor that is the terminal (its rdev is the leader's tty_nr),
//   - select/pselect6 whose descriptor range holds only the terminal (a REPL, vim, bash's
//     readline: `pselect6(1, …)` on stdin),
//   - epoll_wait whose epoll set (listed in /proc/<pid>/fdinfo) watches the terminal for input
//     (node's REPL);
// as /proc/<pid>/syscall reports it (the number and arguments of the call it sleeps in). poll
// and ppoll carry their descriptors in the process's memory, which kt does not read: a program
// waiting in poll is not reported. Quiet: the log (the terminal's whole output) not modified.
import { readFileSync, readlinkSync, statSync } from "node:fs";
import { groupMembers, isSameProcess } from "./identity.ts";

export const QUIET_MS = 10_000;

interface Calls {
  read: number[];
  select: number[];
  epoll: number[];
}

/** System call numbers by architecture (the kernel's unistd tables). */
const CALLS: Record<string, Calls> = {
  x64: { read: [0, 17, 19, 295], select: [23, 270], epoll: [232, 281, 441] },
  arm64: { read: [63, 65, 67, 69], select: [72], epoll: [22, 441] },
};

export interface InputWait {
  /** The process blocked on the terminal. */
  pid: number;
  /** Milliseconds since the last output. */
  quietMs: number;
}

/**
 * The process of a terminal command (its leader `pid`, `pidStart`) that is blocked reading the
 * terminal after QUIET_MS without output to `log`, or undefined.
 */
export function waitingForInput(pid: number | null, pidStart: string | null, log: string, now = Date.now()): InputWait | undefined {
  if (process.platform !== "linux" || pid === null || !isSameProcess(pid, pidStart)) return undefined;
  const calls = CALLS[process.arch];
  if (!calls) return undefined;
  let quietMs: number;
  try {
    quietMs = now - statSync(log).mtimeMs;
  } catch {
    return undefined;
  }
  if (quietMs < QUIET_MS) return undefined;
  const leader = stat(pid);
  if (!leader || leader.ttyNr === 0 || leader.tpgid <= 0) return undefined;
  for (const member of groupMembers(leader.tpgid)) {
    if (blockedOnTerminal(member, leader.ttyNr, calls)) return { pid: member, quietMs };
  }
  return undefined;
}

function stat(pid: number): { ttyNr: number; tpgid: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    // fields[4] is field 7 (tty_nr), fields[5] field 8 (tpgid).
    return { ttyNr: Number(fields[4]), tpgid: Number(fields[5]) };
  } catch {
    return undefined;
  }
}

function blockedOnTerminal(pid: number, ttyNr: number, calls: Calls): boolean {
  let words: string[];
  try {
    words = readFileSync(`/proc/${pid}/syscall`, "utf8").trim().split(" ");
  } catch {
    return false;
  }
  // "running", or a number followed by six arguments (hex), the stack and program counters.
  const nr = Number(words[0]);
  if (!Number.isInteger(nr) || words.length < 3) return false;
  const arg = (i: number) => Number.parseInt(words[i + 1] ?? "", 16);
  const isTerminal = (fd: number) => rdevOf(pid, fd) === ttyNr;
  if (calls.read.includes(nr)) return isTerminal(arg(0));
  if (calls.select.includes(nr)) {
    const nfds = arg(0);
    if (!(nfds > 0 && nfds <= 64)) return false;
    let any = false;
    for (let fd = 0; fd < nfds; fd++) {
      const rdev = rdevOf(pid, fd);
      if (rdev === undefined) continue;
      if (rdev !== ttyNr) return false;
      any = true;
    }
    return any;
  }
  if (calls.epoll.includes(nr)) return epollWatchesTerminal(pid, arg(0), isTerminal);
  return false;
}

/** The device number of a character device open as `fd`, undefined for anything else or a closed fd. */
function rdevOf(pid: number, fd: number): number | undefined {
  if (!Number.isInteger(fd) || fd < 0) return undefined;
  try {
    const st = statSync(`/proc/${pid}/fd/${fd}`);
    return st.isCharacterDevice() ? st.rdev : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the epoll instance `epfd` of `pid` waits for input (EPOLLIN) on a terminal descriptor. */
function epollWatchesTerminal(pid: number, epfd: number, isTerminal: (fd: number) => boolean): boolean {
  let info: string;
  try {
    if (!readlinkSync(`/proc/${pid}/fd/${epfd}`).includes("eventpoll")) return false;
    info = readFileSync(`/proc/${pid}/fdinfo/${epfd}`, "utf8");
  } catch {
    return false;
  }
  for (const m of info.matchAll(/^tfd:\s*(\d+)\s+events:\s*([0-9a-f]+)/gm)) {
    if ((Number.parseInt(m[2]!, 16) & 0x1) !== 0 && isTerminal(Number(m[1]))) return true;
  }
  return false;
}
