// How a managed process ended, in one place (SPEC §4.7, KHAELOR §8.2): the one word that
// ps list, completion notices and metadata carry, the phrases every result builds from it,
// and the two sentences made of them (ps's statusSentence, the notices' noticeLine). Free of imports beyond format.ts, so the notice check every kt call makes
// stays cheap.
import { clock, shortCommand } from "./format.ts";

/**
 * `exited` on its own (with a code), `killed` by a signal it did not get from kt, `stopped`
 * by ps stop (or a session end), `failed` to start, `lost` without its end recorded.
 */
export type EndWord = "exited" | "killed" | "stopped" | "failed" | "lost";

export const END_WORDS: readonly EndWord[] = ["exited", "killed", "stopped", "failed", "lost"];

export interface EndFacts {
  status: string;
  pid?: number | null;
  exit_code: number | null;
  signal: string | null;
  error: string | null;
  started_at: number;
  ended_at: number | null;
}

/** The word for a finished row; an `exited` row that carries only a signal was killed. */
export function endWord(row: Pick<EndFacts, "status" | "exit_code" | "signal">): EndWord {
  if (row.status === "exited" && row.exit_code === null && row.signal) return "killed";
  return (END_WORDS as readonly string[]).includes(row.status) ? (row.status as EndWord) : "lost";
}

/** The status a supervisor records for a command that ended on its own or by a signal. */
export function endedStatus(stopRequested: boolean, signal: string | null | undefined): EndWord {
  if (stopRequested) return "stopped";
  return signal ? "killed" : "exited";
}

/** `code 1`, or `SIGTERM` for a process ended by a signal: how the last process of it went. */
export function exitCause(row: Pick<EndFacts, "exit_code" | "signal">): string {
  if (row.exit_code !== null) return `code ${row.exit_code}`;
  return row.signal ?? "no exit code";
}

/** What ps list shows after the status word: `code 1  ran 00:03`, `by SIGKILL  ran 00:03`. */
export function endDetail(row: EndFacts, now = Date.now()): string {
  const ran = `ran ${clock((row.ended_at ?? now) - row.started_at)}`;
  switch (endWord(row)) {
    case "failed":
      return `could not start: ${row.error ?? "unknown error"}`;
    case "lost":
      return `pid ${row.pid ?? "?"} gone, exit not recorded`;
    case "killed":
      return `by ${row.signal ?? "a signal"}  ${ran}`;
    case "stopped":
      return `by ps stop (${row.signal ?? exitCause(row)})  ${ran}`;
    default:
      return `${exitCause(row)}  ${ran}`;
  }
}

/**
 * The end as a predicate of the process's name, with how long it ran:
 * `exited with code 1 after 06:12`, `was killed by SIGKILL after 06:12`,
 * `was stopped (by ps stop; it ended on SIGTERM) after 06:12`, `failed to start: …`,
 * `is gone: …`. No final full stop.
 */
export function howEnded(row: EndFacts, now = Date.now()): string {
  const after = `after ${clock((row.ended_at ?? now) - row.started_at)}`;
  switch (endWord(row)) {
    case "failed":
      return `failed to start: ${row.error ?? "unknown error"}`;
    case "lost":
      return "is gone: it stopped running without its exit being recorded (killed from outside, or the machine restarted)";
    case "killed":
      return `was killed by ${row.signal ?? "a signal"} ${after}`;
    case "stopped":
      return `was stopped by ps stop ${after} (${endedOn(row)})`;
    default:
      return `exited with code ${row.exit_code} ${after}`;
  }
}

/**
 * The end of a process as a sentence about it, named by its id: what ps read, write and stop
 * say of a finished process (`p3 exited with code 1 after 06:12. Full log: …`).
 */
export function statusSentence(row: EndFacts & { id: string | null; log_path: string }, withLog = true): string {
  return `${row.id} ${howEnded(row)}.${withLog ? ` Full log: ${row.log_path}` : ""}`;
}

/** The completion notice of a process (SPEC §4.7): the same end, named with its command, in brackets. */
export function noticeLine(row: EndFacts & { id: string; command: string }): string {
  const name = `Process ${row.id} (${shortCommand(row.command)})`;
  const next = row.status === "failed" ? "" : ` Use ps read ${row.id} for its output.`;
  return `[${name} ${howEnded(row)}.${next}]`;
}

/** bash's closing line: `exit code 0`, `killed by SIGKILL`, or that the exit is unknown. */
export function shellEnd(row: Pick<EndFacts, "status" | "exit_code" | "signal">): string {
  if (row.status === "lost") return "exit code unknown (the process vanished)";
  return row.exit_code === null && row.signal ? `killed by ${row.signal}` : `exit code ${row.exit_code}`;
}

/** ps start's report of a command that ended within its first wait. */
export function endedImmediately(row: Pick<EndFacts, "status" | "exit_code" | "signal">): string {
  return endWord(row) === "killed" ? `was killed immediately by ${row.signal}` : `exited immediately with code ${row.exit_code}`;
}

/** `it ended on SIGTERM`, `it exited with code 0`: what the stop came down to. */
export function endedOn(row: Pick<EndFacts, "exit_code" | "signal">): string {
  if (row.signal) return `it ended on ${row.signal}`;
  return row.exit_code !== null ? `it exited with code ${row.exit_code}` : "its exit code was not recorded";
}

/** ps list's detail for a running command whose shell has exited while what it started runs on. */
export function leftDetail(row: Pick<EndFacts, "exit_code" | "signal">, left: { pid: number; comm: string }[]): string {
  const shell = row.exit_code === null && row.signal ? `killed by ${row.signal}` : `exited (code ${row.exit_code})`;
  const list = left.slice(0, 3).map((p) => `pid ${p.pid} (${p.comm})`).join(", ") + (left.length > 3 ? `, ${left.length - 3} more` : "");
  return `shell ${shell}; left running: ${list || "none"}`;
}

/** What survived a stop, said plainly: the model (or a person) must deal with it. */
export function escapedSentence(procs: { pid: number; comm: string }[]): string {
  const list = procs.slice(0, 5).map((p) => `pid ${p.pid} (${p.comm})`).join(", ") + (procs.length > 5 ? `, and ${procs.length - 5} more` : "");
  return `${procs.length === 1 ? "1 process it started" : `${procs.length} processes it started`} survived SIGKILL and still run${procs.length === 1 ? "s" : ""}: ${list}. kt cannot stop ${procs.length === 1 ? "it" : "them"} (another user's, or stuck in the kernel).`;
}
