// The supervisor: `kt __supervise <spec>`, started detached (its own session) by the kt
// call that launches a command. It runs the command as the leader of a new process group
// with stdout and stderr appended to the log from the first byte, holds the stdin FIFO
// open between kt calls, and records the exit in the index when the command ends — even
// when no kt call is waiting. It never reads the output, so no pipe can fill or hang.
import type { Database } from "bun:sqlite";
import { closeSync, constants, existsSync, openSync, statSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { openIndex } from "../core/state.ts";
import { openStateFile } from "../core/statefs.ts";
import { recordEnd, recordLeaderExit, recordSpawnFailure, recordStarted, unlinkQuietly } from "./registry.ts";
import { endOfInputRequest } from "./stdin.ts";
import { commandEnv, markerValue } from "./env.ts";
import { anyChildLeft, becomeSubreaper, carriesMarker, groupExists, held, reapAdopted, type Proc } from "./descendants.ts";
import { GRACE_MS, terminate } from "./kill-tree.ts";
import { isSameProcess, processStart } from "./identity.ts";
import type { SupervisorSpec } from "./spawn.ts";
import { spawnOnTerminal, type Leader, type OnTerminal } from "./pty.ts";

export async function supervise(argv: string[]): Promise<number> {
  const spec = parseSpec(argv[0]);
  if (!spec) {
    process.stderr.write("kt: __supervise is kt's own background-process supervisor, not a command to run by hand.\n");
    return 2;
  }
  return run(spec, SOLO);
}

/**
 * Where a command is supervised: alone in its own `kt __supervise` (the process is the
 * command's), or as one of many in the session's host (src/process/host.ts), whose signals,
 * subreaper and index are shared by every command of the session.
 */
export interface Runner {
  hosted: boolean;
  /** The leaders of every command this process supervises: never reaped as adopted orphans. */
  leaders: Set<number>;
  /** Whether this process is a subreaper now (asked for once, after SUBREAPER_AFTER_MS). */
  subreaper(): boolean;
  /** Called for `ps write` of a lone Ctrl-D: the command's stdin is to be let go of. */
  onEndOfInput(spec: SupervisorSpec, close: () => void): () => void;
  /** Called for SIGTERM/SIGINT to the supervising process. */
  onStop(forward: () => void): () => void;
  /** A host's terminals, resized on its SIGWINCH (a supervisor of its own listens itself). */
  terminals?: Set<OnTerminal>;
  /** The index to record in, or undefined when there is none. */
  record(spec: SupervisorSpec, write: (db: Database) => void): Database | undefined;
}

let soloSubreaper = false;
const SOLO: Runner = {
  hosted: false,
  leaders: new Set(),
  subreaper: () => soloSubreaper,
  onEndOfInput(spec, close) {
    const onSignal = () => {
      if (spec.stdin) unlinkQuietly(endOfInputRequest(spec.stdin));
      close();
    };
    process.on("SIGUSR2", onSignal);
    return () => process.off("SIGUSR2", onSignal);
  },
  onStop(forward) {
    process.on("SIGTERM", forward);
    process.on("SIGINT", forward);
    return () => {
      process.off("SIGTERM", forward);
      process.off("SIGINT", forward);
    };
  },
  record: (spec, write) => record(spec, write),
};

/** Supervises one command until its end is recorded (SPEC §4.7); 0, or 1 when it could not start. */
export async function run(spec: SupervisorSpec, runner: Runner): Promise<number> {
  const logFd = openStateFile(spec.log, constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND);
  // Open read-write, the FIFO always has a writer: the command never sees end-of-file
  // between two kt writes, and a kt write never blocks for want of a reader.
  let holder = spec.stdin ? openStateFile(spec.stdin, constants.O_RDWR, "fifo") : undefined;
  // `ps write` of a lone Ctrl-D asks for end of input: let go of the FIFO, so the command
  // reads end-of-file once the writer that asked has closed its end.
  const offEndOfInput = runner.onEndOfInput(spec, () => {
    // On a terminal, end of input is the Ctrl-D byte itself (the terminal makes it end-of-file).
    if (holder === undefined || spec.tty) return;
    closeSync(holder);
    holder = undefined;
  });
  let onTerminal: OnTerminal | undefined;
  const stdinFd = spec.stdin && !spec.tty ? openStateFile(spec.stdin, constants.O_RDONLY, "fifo") : undefined;
  let child: Leader;
  try {
    // SPEC §7.4: on a pseudo-terminal, which the supervisor reads into the log itself — in a
    // host, on a thread of its own (src/process/pty-thread.ts).
    if (spec.tty) {
      const opts = { command: spec.command, cwd: spec.cwd, env: commandEnv(spec.env ?? process.env, markerValue(spec.stateDir, spec.key), spec.interactive === true), log: spec.log, ...(spec.stdin ? { stdin: spec.stdin } : {}), size: spec.tty, ...(spec.sandbox ? { sandbox: spec.sandbox } : {}) };
      onTerminal = runner.hosted ? await (await import("./pty-thread.ts")).startTerminalThread(opts) : spawnOnTerminal(opts);
      child = onTerminal.child;
      runner.terminals?.add(onTerminal);
    } else child = Bun.spawn([...(spec.sandbox ?? []), "bash", "-c", spec.command], {
      cwd: spec.cwd,
      env: commandEnv(spec.env ?? process.env, markerValue(spec.stateDir, spec.key), spec.interactive === true),
      stdin: stdinFd ?? "ignore",
      stdout: logFd,
      stderr: logFd,
      // setsid: the command leads its own process group, so a stop reaches its children.
      detached: true,
    });
  } catch (error) {
    runner.record(spec, (db) => recordSpawnFailure(db, spec.key, (error as Error).message, process.pid));
    offEndOfInput();
    if (holder !== undefined) closeSync(holder);
    return 1;
  } finally {
    closeSync(logFd);
    if (stdinFd !== undefined) closeSync(stdinFd);
  }

  // Loading the FFI takes milliseconds (2–13 ms on a loaded machine): a command that is over
  // sooner (most bash calls) must not wait for it. What a command orphans before this goes
  // to init instead — still found through its process group or its marker.
  const subreaperTimer = runner.hosted
    ? undefined
    : setTimeout(() => {
        soloSubreaper = becomeSubreaper();
      }, SUBREAPER_AFTER_MS);
  const pgid = child.pid;
  runner.leaders.add(pgid);
  const marker = markerValue(spec.stateDir, spec.key);
  // What the command holds: its group, and — as a subreaper of this command alone — this
  // supervisor's whole tree; without a subreaper, or in a host that supervises other commands
  // too, the processes carrying its marker.
  const holds = () => held({ pgid, ...(runner.hosted ? { tree: pgid, marker } : runner.subreaper() ? { root: process.pid } : { marker }) });
  const forward = () => {
    try {
      process.kill(-pgid, "SIGTERM");
    } catch {
      // Already gone.
    }
    for (const p of holds()) {
      try {
        process.kill(p.pid, "SIGTERM");
      } catch {
        // Already gone.
      }
    }
  };
  const offStop = runner.onStop(forward);

  const index = indexIdentity(spec.stateDir);
  // Test seam (KT_RECORD_DELAY_MS): a loaded machine's pause between the spawn and its record.
  const delay = Number((spec.env ?? process.env).KT_RECORD_DELAY_MS);
  if (delay > 0) await Bun.sleep(delay);
  const db = runner.record(spec, (db) => {
    const changed = recordStarted(db, spec.key, child.pid, processStart(child.pid) ?? null, process.pid, processStart(process.pid) ?? null);
    // The row vanished (the session was ended while this started): nobody owns the command.
    if (!changed) forward();
  });

  if (db) {
    try {
      (await import("./diskcap.ts")).maybeEnforceCap(spec.stateDir, db);
    } catch {
      // The cap is housekeeping; the command matters more.
    }
  }

  // Issue 11.15: a command nobody can list or stop any more (its state directory removed,
  // its index replaced, or the server that owned its session killed) is stopped here.
  let orphaned: Abandoned | undefined;
  let ending: Promise<unknown> | undefined;
  const watch = setInterval(() => {
    if (orphaned !== undefined) return;
    orphaned = abandoned(spec, index);
    if (orphaned !== undefined) ending = terminate(holds, GRACE_MS, pgid);
  }, WATCH_MS);

  await child.exited;
  clearTimeout(subreaperTimer);
  const subreaper = runner.subreaper();
  const signal = child.signalCode === null || child.signalCode === undefined ? null : String(child.signalCode);
  if (ending) await ending;
  // Every process of a sandboxed command lives in bubblewrap's pid namespace, whose init
  // (this process's child once bwrap is gone, in the command's group) waits for each of them
  // before it exits: an init on its way out — tearing the namespaces down, 1–3 ms here —
  // leaves nothing of the command, though the group lasts until it is reaped. Only with a
  // pid namespace (sandbox/bwrap.ts always asks for one): without, an exiting process's
  // children are not yet re-parented here, and could be missed.
  const pidNamespace = spec.sandbox?.includes("--unshare-pid") === true;
  const groupLeft = (): Proc[] => reapAdopted(runner.leaders).filter((p) => p.pgrp === pgid);
  // `left`: this process's children in the group, reaped of zombies.
  const onlyInitEnding = (left: readonly Proc[]): boolean => pidNamespace && left.length > 0 && left.every((p) => p.exiting === true);
  // Issue 11.14: the leader is gone, but what it started may run on (`server &`, a daemon
  // that forked away). The command is over only when nothing it holds is left.
  const anyLeft = (): boolean => {
    if (pidNamespace && subreaper && onlyInitEnding(groupLeft())) return false;
    const kids = subreaper ? anyChildLeft(runner.leaders, runner.hosted ? (pid, pgrp) => pgrp === pgid || carriesMarker(pid, marker) : undefined) : undefined;
    if (kids === true) return true;
    // No child left (or no subreaper yet) and an empty process group — one kill(2) — is
    // taken for nothing left; a daemon that left the group before the subreaper was set is
    // still found by its marker when the session ends.
    if (!groupExists(pgid)) return false;
    return holds().length > 0;
  };
  // A zombie this subreaper adopted (the sandbox's init) keeps the group in existence until
  // it is reaped: reaped at once.
  const emptied = (): boolean => {
    if (!groupExists(pgid)) return true;
    if (!subreaper) return false;
    const left = groupLeft();
    return !groupExists(pgid) || onlyInitEnding(left);
  };
  if ((await settle(anyLeft, emptied)) && orphaned === undefined) {
    runner.record(spec, (db) => recordLeaderExit(db, spec.key, child.exitCode, signal));
    do await Bun.sleep(subreaper ? LEFT_POLL_MS : LEFT_SWEEP_MS);
    while (anyLeft());
  }
  clearInterval(watch);
  if (ending) await ending;
  // Nothing holds the terminal any more: its last bytes reach the log before the end is recorded.
  if (onTerminal) {
    await onTerminal.drained(TERMINAL_DRAIN_MS);
    onTerminal.close();
    runner.terminals?.delete(onTerminal);
  }
  // A removed or replaced index has no row of this command to update.
  if (orphaned === undefined || orphaned === "owner gone") {
    runner.record(spec, (db) => recordEnd(db, spec.key, child.exitCode, signal, orphaned !== undefined));
  }
  runner.leaders.delete(pgid);
  offStop();
  offEndOfInput();
  if (holder !== undefined) closeSync(holder);
  if (spec.stdin) {
    unlinkQuietly(endOfInputRequest(spec.stdin));
    try {
      unlinkSync(spec.stdin);
    } catch {
      // Removed by a prune or a session end.
    }
  }
  return 0;
}

const WATCH_MS = 1000;
/** How long the last output of a terminal whose command ended may take to arrive. */
const TERMINAL_DRAIN_MS = 1000;
export const SUBREAPER_AFTER_MS = 25;
const LEFT_POLL_MS = 200;
const LEFT_SWEEP_MS = 1000;
/** A job the leader started may be ending as the leader ends: give it this long. */
const SETTLE_MS = 100;

/** Whether anything is still left after up to SETTLE_MS. */
async function settle(anyLeft: () => boolean, emptied: () => boolean): Promise<boolean> {
  const deadline = performance.now() + SETTLE_MS;
  // What is left a moment after the leader is most often already ending (a sandboxed
  // command's bwrap init, which `emptied` counts as gone once it is exiting). For a few ms
  // kill(2) alone is asked whether the group has emptied (with its adopted zombies reaped),
  // before /proc is scanned: soon at first, then every 20 ms.
  for (let i = 0; i < 4 && !emptied(); i++) await Bun.sleep(1);
  for (let wait = 1; ; wait = Math.min(wait * 3, 20)) {
    if (!anyLeft()) return false;
    if (performance.now() >= deadline) return true;
    await Bun.sleep(wait);
  }
}

interface FileIdentity {
  dev: number;
  ino: number;
}

export function indexIdentity(stateDir: string): FileIdentity | undefined {
  try {
    const st = statSync(join(stateDir, "index.db"));
    return { dev: st.dev, ino: st.ino };
  } catch {
    return undefined;
  }
}

type Abandoned = "state gone" | "index replaced" | "owner gone";

/** Why nobody can reach this command any more, or undefined while somebody can. */
function abandoned(spec: SupervisorSpec, was: FileIdentity | undefined): Abandoned | undefined {
  const now = indexIdentity(spec.stateDir);
  if (!now) return "state gone";
  if (was && (now.dev !== was.dev || now.ino !== was.ino)) return "index replaced";
  if (spec.owner && !isSameProcess(spec.owner.pid, spec.owner.start)) return "owner gone";
  return undefined;
}

/** Writes to the index, retrying through transient lock contention; the record must land. */
export function record(spec: SupervisorSpec, write: (db: Database) => void): Database | undefined {
  // An index that is gone (the state directory removed, or the index deleted) has no row to
  // update: recreating it would only leave an empty state directory behind.
  if (!existsSync(join(spec.stateDir, "index.db"))) return undefined;
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      const db = openIndex(spec.stateDir, { warn: () => {} });
      write(db);
      return db;
    } catch {
      Bun.sleepSync(50 * (attempt + 1));
    }
  }
  return undefined;
}

export function parseSpec(arg: string | undefined): SupervisorSpec | undefined {
  try {
    const spec = JSON.parse(arg ?? "") as SupervisorSpec;
    return typeof spec.stateDir === "string" && typeof spec.log === "string" && typeof spec.command === "string" && Number.isInteger(spec.key) ? spec : undefined;
  } catch {
    return undefined;
  }
}
