// `kt session end [--session ID] [--state-dir DIR]`: stops the session's background
// processes (saying so on stderr) and removes its stamps, processes and files.
import type { CommandDef } from "citty";
import { resolveStateDir } from "../core/state.ts";
import { formatBytes } from "../core/truncate.ts";
import { UsageError } from "./_args.ts";
import { log } from "./_log.ts";
import { writeAll } from "./_run.ts";
import { exitCode } from "./exit.ts";
import { parseSwitches, switchArgs } from "./switches.ts";

export const command: CommandDef = {
  meta: { name: "session", description: "End a session: stop its background processes and remove its state" },
  args: {
    action: { type: "positional", required: true, description: "end" },
    ...switchArgs("session"),
  },
};

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseSwitches("session", argv);
  if (positionals.length > 1) throw new UsageError(`too many arguments`);
  const action = positionals[0];
  const session = values.session as string | undefined;
  const stateDir = values.stateDir as string | undefined;
  const all = values.all === true;
  if (action !== "end") throw new UsageError(action === undefined ? `missing action: kt session end` : `unknown action "${action}": the only action is "end"`);
  const ctx = {
    stateDir: resolveStateDir(process.env, stateDir),
    session: session ?? process.env.KT_SESSION ?? "default",
    warn: (message: string) => log().warn(message),
  };
  if (all && session !== undefined) throw new UsageError(`--all ends every session: give either --all or --session`);
  const { endSession } = await import("../process/teardown.ts");
  const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`;
  if (all) return endAll(ctx, plural);
  const ended = await endSession(ctx, (line) => writeAll(2, `kt session: ${line}\n`));
  writeAll(
    1,
    `Ended session "${ctx.session}": stopped ${ended.stopped} ${ended.stopped === 1 ? "process" : "processes"}, removed ${plural(ended.stamps, "file stamp")} and ${plural(ended.files, "file")} (${formatBytes(ended.bytes)}).\n`,
  );
  return exitCode({ isError: false });
}

/** `kt session end --all`: every session of the state directory, then every orphan (src/process/orphans.ts). */
async function endAll(ctx: { stateDir: string; warn(message: string): void }, plural: (n: number, one: string) => string): Promise<number> {
  const [{ endSession, sessionNames }, { findOrphans, orphanLines, stopOrphans }, { escapedSentence }] = await Promise.all([
    import("../process/teardown.ts"),
    import("../process/orphans.ts"),
    import("../process/ending.ts"),
  ]);
  const names = sessionNames(ctx.stateDir);
  let stopped = 0;
  let stamps = 0;
  let files = 0;
  let bytes = 0;
  for (const session of names) {
    const ended = await endSession({ ...ctx, session }, (line) => writeAll(2, `kt session: ${session}: ${line}\n`));
    stopped += ended.stopped + ended.strays;
    stamps += ended.stamps;
    files += ended.files;
    bytes += ended.bytes;
  }
  const orphans = findOrphans(ctx.stateDir);
  for (const line of orphanLines(orphans)) writeAll(2, `kt session: stopping orphan ${line}\n`);
  const swept = orphans.length > 0 ? await stopOrphans(orphans) : { escaped: [] };
  if (swept.escaped.length > 0) writeAll(2, `kt session: ${escapedSentence(swept.escaped)}\n`);
  const orphanProcs = orphans.reduce((n, o) => n + o.procs.length, 0);
  writeAll(
    1,
    `Ended ${plural(names.length, "session")}${names.length > 0 ? ` (${names.map((n) => JSON.stringify(n)).join(", ")})` : ""}: stopped ${stopped} ${stopped === 1 ? "process" : "processes"}, removed ${plural(stamps, "file stamp")} and ${plural(files, "file")} (${formatBytes(bytes)}); stopped ${orphanProcs} orphaned ${orphanProcs === 1 ? "process" : "processes"} of ${plural(orphans.length, "command")} no session could reach.\n`,
  );
  // A process that escaped the sweep is the command failing at what it was asked to do.
  return exitCode({ isError: swept.escaped.length > 0 });
}
