// The supervisor: `kt __supervise <spec>`, started detached (its own session) by the kt
// call that launches a command. It runs the command as the leader of a new process group
// with stdout and stderr appended to the log from the first byte, holds the stdin FIFO
// open between kt calls, and records the exit in the index when the command ends — even
// when no kt call is waiting. It never reads the output, so no pipe can fill or hang.
import type { Database } from "bun:sqlite";
import { closeSync, constants, existsSync, openSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { openIndex } from "../core/state.ts";
import { endedStatus } from "./ending.ts";
import { processStart } from "./identity.ts";
import type { SupervisorSpec } from "./spawn.ts";

export async function supervise(argv: string[]): Promise<number> {
  const spec = parseSpec(argv[0]);
  if (!spec) {
    process.stderr.write("kt: __supervise is kt's own background-process supervisor, not a command to run by hand.\n");
    return 2;
  }
  const logFd = openSync(spec.log, constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND, 0o600);
  // Open read-write, the FIFO always has a writer: the command never sees end-of-file
  // between two kt writes, and a kt write never blocks for want of a reader.
  let holder = spec.stdin ? openSync(spec.stdin, constants.O_RDWR) : undefined;
  // `ps write` of a lone Ctrl-D asks for end of input: let go of the FIFO, so the command
  // reads end-of-file once the writer that asked has closed its end.
  process.on("SIGUSR2", () => {
    if (holder === undefined) return;
    closeSync(holder);
    holder = undefined;
  });
  const stdinFd = spec.stdin ? openSync(spec.stdin, constants.O_RDONLY) : undefined;
  let child: ReturnType<typeof Bun.spawn>;
  try {
    child = Bun.spawn(["bash", "-c", spec.command], {
      cwd: spec.cwd,
      env: process.env,
      stdin: stdinFd ?? "ignore",
      stdout: logFd,
      stderr: logFd,
      // setsid: the command leads its own process group, so a stop reaches its children.
      detached: true,
    });
  } catch (error) {
    record(spec, (db) =>
      db.query("UPDATE processes SET status = 'failed', error = ?, ended_at = ?, supervisor_pid = ? WHERE key = ?").run((error as Error).message, Date.now(), process.pid, spec.key),
    );
    return 1;
  } finally {
    closeSync(logFd);
    if (stdinFd !== undefined) closeSync(stdinFd);
  }

  const pgid = child.pid;
  const forward = () => {
    try {
      process.kill(-pgid, "SIGTERM");
    } catch {
      // Already gone.
    }
  };
  process.on("SIGTERM", forward);
  process.on("SIGINT", forward);

  const db = record(spec, (db) => {
    const changed = db
      .query(
        `UPDATE processes SET pid = ?, pid_start = ?, supervisor_pid = ?, supervisor_start = ?,
         status = CASE WHEN status = 'starting' THEN 'running' ELSE status END WHERE key = ?`,
      )
      .run(child.pid, processStart(child.pid) ?? null, process.pid, processStart(process.pid) ?? null, spec.key).changes;
    // The row vanished (the session was ended while this started): nobody owns the command.
    if (changed === 0) forward();
  });

  if (db) {
    try {
      (await import("./diskcap.ts")).maybeEnforceCap(spec.stateDir, db);
    } catch {
      // The cap is housekeeping; the command matters more.
    }
  }

  await child.exited;
  const signal = child.signalCode === null || child.signalCode === undefined ? null : String(child.signalCode);
  record(spec, (db) => {
    const stopRequested = (db.query("SELECT stop_requested FROM processes WHERE key = ?").get(spec.key) as { stop_requested: number } | null)?.stop_requested === 1;
    db.query(`UPDATE processes SET status = ?, exit_code = ?, signal = ?, ended_at = ? WHERE key = ? AND status IN ('starting', 'running', 'lost')`).run(
      endedStatus(stopRequested, signal),
      child.exitCode,
      signal,
      Date.now(),
      spec.key,
    );
  });
  if (holder !== undefined) closeSync(holder);
  if (spec.stdin) {
    try {
      unlinkSync(spec.stdin);
    } catch {
      // Removed by a prune or a session end.
    }
  }
  return 0;
}

/** Writes to the index, retrying through transient lock contention; the record must land. */
function record(spec: SupervisorSpec, write: (db: Database) => void): Database | undefined {
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

function parseSpec(arg: string | undefined): SupervisorSpec | undefined {
  try {
    const spec = JSON.parse(arg ?? "") as SupervisorSpec;
    return typeof spec.stateDir === "string" && typeof spec.log === "string" && typeof spec.command === "string" && Number.isInteger(spec.key) ? spec : undefined;
  } catch {
    return undefined;
  }
}
