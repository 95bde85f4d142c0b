// `kt ps list --orphans`: background commands that nothing can list or stop any more —
// their state directory removed, their index replaced, the MCP server that owned their
// session killed, or their supervisor killed while what they started runs on. For people
// and scripts, not a model: it looks past the session and the state directory.
import { UsageError } from "./_args.ts";
import { EXIT, writeAll } from "./_run.ts";

export async function run(argv: string[]): Promise<number> {
  const rest = argv.filter((a) => a !== "list" && a !== "--orphans");
  if (argv[0] !== "list" || rest.length > 0) throw new UsageError(`--orphans goes with "kt ps list" alone: kt ps list --orphans`);
  const { findOrphans, orphanLines } = await import("../process/orphans.ts");
  const orphans = findOrphans();
  if (orphans.length === 0) {
    writeAll(1, "No orphaned kt processes.\n");
    return EXIT.ok;
  }
  writeAll(1, `ORPHANS\n${orphanLines(orphans).join("\n")}\nStop them with: kt session end --all\n`);
  return EXIT.ok;
}
