// `kt session end [--session ID] [--state-dir DIR]`: stops the session's background
// processes (saying so on stderr) and removes its stamps, processes and files.
import type { CommandDef } from "citty";
import { resolveStateDir } from "../core/state.ts";
import { formatBytes } from "../core/truncate.ts";
import { UsageError } from "./_args.ts";
import { log } from "./_log.ts";
import { EXIT, writeAll } from "./_run.ts";

export const command: CommandDef = {
  meta: { name: "session", description: "End a session: stop its background processes and remove its state" },
  args: {
    action: { type: "positional", required: true, description: "end" },
    session: { type: "string", description: 'Session id (default: $KT_SESSION or "default")', valueHint: "id" },
    "state-dir": { type: "string", description: "State directory (default: $KT_STATE_DIR, $XDG_STATE_HOME/kt or ~/.local/state/kt)", valueHint: "dir" },
  },
};

export async function run(argv: string[]): Promise<number> {
  let action: string | undefined;
  let session: string | undefined;
  let stateDir: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.indexOf("=");
    const name = arg.startsWith("--") ? arg.slice(2, eq === -1 ? undefined : eq) : undefined;
    const value = () => {
      if (eq !== -1) return arg.slice(eq + 1);
      const next = argv[++i];
      if (next === undefined) throw new UsageError(`option --${name} needs a value`);
      return next;
    };
    if (name === "session") session = value();
    else if (name === "state-dir" || name === "state_dir") stateDir = value();
    else if (name !== undefined || arg.startsWith("-")) throw new UsageError(`unknown option ${arg}`);
    else if (action === undefined) action = arg;
    else throw new UsageError(`too many arguments`);
  }
  if (action !== "end") throw new UsageError(action === undefined ? `missing action: kt session end` : `unknown action "${action}": the only action is "end"`);
  const ctx = {
    stateDir: resolveStateDir(process.env, stateDir),
    session: session ?? process.env.KT_SESSION ?? "default",
    warn: (message: string) => log().warn(message),
  };
  const { endSession } = await import("../process/teardown.ts");
  const ended = await endSession(ctx, (line) => writeAll(2, `kt session: ${line}\n`));
  const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`;
  writeAll(
    1,
    `Ended session "${ctx.session}": stopped ${ended.stopped} ${ended.stopped === 1 ? "process" : "processes"}, removed ${plural(ended.stamps, "file stamp")} and ${plural(ended.files, "file")} (${formatBytes(ended.bytes)}).\n`,
  );
  return EXIT.ok;
}
