// `kt mcp [--root DIR]`: an MCP server over stdio. stdout carries protocol messages only;
// everything a human should see goes to stderr.
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { CommandDef } from "citty";
import { version } from "../../package.json" with { type: "json" };
import { inside } from "../core/paths.ts";
import { KtError } from "../tools/tool.ts";
import { baseOptions, UsageError, type Options } from "./_args.ts";
import { log } from "./_log.ts";
import { contextFrom, EXIT, newCallId } from "./_run.ts";
import { parseSwitches, switchArgs } from "./switches.ts";

export const command: CommandDef = {
  meta: { name: "mcp", description: "Serve kt's tools over the Model Context Protocol on stdio" },
  args: switchArgs("mcp"),
};

export function parseMcpArgv(argv: readonly string[]): Options & { structured: boolean } {
  const { values, positionals } = parseSwitches("mcp", argv);
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}: kt mcp takes only options (--root DIR, --session ID, --state-dir DIR, --structured)`);
  return { ...baseOptions(), structured: false, ...(values as Partial<Options & { structured: boolean }>) };
}

export async function run(argv: string[]): Promise<number> {
  const options = parseMcpArgv(argv);
  // Confined by default: to the directory the server started in (SPEC §3.6).
  options.root ??= process.env.KT_ROOT || process.cwd();
  // One session per server process unless one is named: a generated one dies with the server.
  const ownSession = options.session === undefined && !process.env.KT_SESSION;
  options.session ??= process.env.KT_SESSION || `mcp-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  let base;
  try {
    base = contextFrom(options);
  } catch (error) {
    if (error instanceof KtError) throw new UsageError(error.message);
    throw error;
  }
  const root = base.root!;
  // A server started outside its root (e.g. by a desktop client, in /) resolves relative paths against the root.
  const cwd = inside(root, base.cwd) ? base.cwd : root;

  guardStdout();
  const [{ serve }, { LineTransport }] = await Promise.all([import("../adapter/mcp.ts"), import("../adapter/stdio.ts")]);
  const transport = new LineTransport();
  const ended = new Promise<"end" | "gone" | NodeJS.Signals>((resolve) => {
    process.stdin.once("end", () => resolve("end"));
    process.stdin.once("close", () => resolve("end"));
    // The client stopped reading (it died, or closed its end): nobody can use the answers.
    transport.gone.then(() => resolve("gone"));
    for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.once(signal, () => resolve(signal));
  });
  transport.onerror = (error) => log().warn(`kt mcp: ${error.message}`);
  // A generated session dies with this server, even a killed one: its commands watch this pid.
  const mcp = await serve({ version, base: { ...base, cwd, ...(ownSession ? { sessionOwner: process.pid } : {}) }, newCallId, structured: options.structured }, transport);
  if (options.verbose) log().info(`kt mcp ${version}: serving on stdio; root ${root}; cwd ${cwd}; session ${base.session}`);

  const why = await ended;
  // The client is done sending: answer what is still running. A signal, or a client that
  // can no longer hear, means leave now.
  if (why === "end") await Promise.race([mcp.idle(), transport.gone]);
  if (why !== "gone") await Promise.race([new Promise((resolve) => process.stdout.write("", resolve)), transport.gone]);
  await mcp.server.close();
  if (why === "gone" && options.verbose) log().info("kt mcp: stdout was closed (the client is gone); ending");
  if (ownSession) await endOwnSession(base, options.verbose);
  return EXIT.ok;
}

/**
 * Nobody can name a generated session once its server is gone: its background processes
 * are stopped (each announced on stderr) and its stamps and files removed, so that a
 * closed client leaves no orphan behind.
 */
async function endOwnSession(ctx: { stateDir: string; session: string; warn(message: string): void }, verbose: boolean): Promise<void> {
  // A state directory removed while the server ran holds nothing of the session: do not recreate it.
  if (!existsSync(join(ctx.stateDir, "index.db"))) return;
  const { endSession } = await import("../process/teardown.ts");
  const ended = await endSession(ctx, (line) => log().warn(`kt mcp: ${line}`));
  if (verbose) log().info(`kt mcp: ended session ${ctx.session} (${ended.stopped} processes stopped, ${ended.files} files removed)`);
  // What the agent changed outlives the server (SPEC §8.6): say how to find and revert it.
  const [{ index }, { HISTORY_DAYS, sessionChanges }] = await Promise.all([import("../core/state.ts"), import("../core/history.ts")]);
  const changes = sessionChanges(ctx, index(ctx)).filter((c) => c.state === "live").length;
  if (changes > 0) {
    log().warn(`kt mcp: session ${ctx.session} made ${changes} ${changes === 1 ? "change" : "changes"}, kept for ${HISTORY_DAYS} days: kt history --session ${ctx.session} lists them, kt undo --last --session ${ctx.session} reverts the newest.`);
  }
}

/** Anything that would print to stdout through console goes to stderr: stdout is the protocol's. */
function guardStdout(): void {
  const toStderr = (...args: unknown[]) => log().log(...(args as [string]));
  console.log = toStderr;
  console.info = toStderr;
  console.debug = toStderr;
}
