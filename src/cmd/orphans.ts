// `kt ps list --orphans`: background commands that nothing can list or stop any more —
// their state directory removed, their index replaced, the MCP server that owned their
// session killed, or their supervisor killed while what they started runs on. For people
// and scripts, not a model: it looks past the session, never past the state directory or the user.
import { resolveStateDir } from "../core/state.ts";
import { UsageError } from "./_args.ts";
import { EXIT, writeAll } from "./_run.ts";

export async function run(argv: string[]): Promise<number> {
  // The state directory whose orphans are asked for: --state-dir, else the environment's.
  let stateDir: string | undefined;
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--state-dir" || a === "--state_dir") stateDir = argv[++i];
    else if (a.startsWith("--state-dir=") || a.startsWith("--state_dir=")) stateDir = a.slice(a.indexOf("=") + 1);
    else if (a !== "list" && a !== "--orphans") rest.push(a);
  }
  if (argv[0] !== "list" || rest.length > 0 || stateDir === "") throw new UsageError(`--orphans goes with "kt ps list" alone: kt ps list --orphans [--state-dir DIR]`);
  const { findOrphans, orphanLines } = await import("../process/orphans.ts");
  const orphans = findOrphans(resolveStateDir(process.env, stateDir));
  if (orphans.length === 0) {
    writeAll(1, "No orphaned kt processes.\n");
    return EXIT.ok;
  }
  writeAll(1, `ORPHANS\n${orphanLines(orphans).join("\n")}\nStop them with: kt session end --all\n`);
  return EXIT.ok;
}
