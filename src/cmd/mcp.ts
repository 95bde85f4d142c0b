// `kt mcp [--root DIR]`: an MCP server over stdio. stdout carries protocol messages only;
// everything a human should see goes to stderr.
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { CommandDef } from "citty";
import { version } from "../../package.json" with { type: "json" };
import { inside } from "../core/paths.ts";
import { STAMP_LOG } from "../core/state.ts";
import { KtError } from "../tools/tool.ts";
import { baseOptions, UsageError, type Options } from "./_args.ts";
import { log } from "./_log.ts";
import { contextFrom, EXIT, newCallId } from "./_run.ts";
import { parseSwitches, switchArgs } from "./switches.ts";

/** How often kt mcp checks that the process that started it (its client) is still there. */
const PARENT_WATCH_MS = 100;
/** How long cancelled calls get to stop their commands and answer when the client is gone. */
const CANCEL_GRACE_MS = 1500;

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
    base = contextFrom(options, process.env, "workspace-write");
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
  // SPEC §8.7: the client's death — the process that started this server gone, or stdout no
  // longer read — cancels every call still running at once.
  const parent = process.ppid;
  const parentGone = () => process.ppid !== parent;
  let watchParent: ReturnType<typeof setInterval> | undefined;
  const clientGone = new Promise<void>((resolve) => {
    transport.gone.then(() => resolve());
    watchParent = setInterval(() => {
      if (parentGone()) resolve();
    }, PARENT_WATCH_MS);
  });
  const ended = new Promise<"end" | "gone" | NodeJS.Signals>((resolve) => {
    // stdin closed by a client that is still there (it half-closed after its last request) is
    // answered; closed by one that died is not.
    const onEnd = () => resolve(parentGone() ? "gone" : "end");
    process.stdin.once("end", onEnd);
    process.stdin.once("close", onEnd);
    // The client stopped reading (it died, or closed its end): nobody can use the answers.
    clientGone.then(() => resolve("gone"));
    for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.once(signal, () => resolve(signal));
  });
  transport.onerror = (error) => log().warn(`kt mcp: ${error.message}`);
  const cancel = new AbortController();
  // A generated session dies with this server, even a killed one: its commands watch this pid,
  // and the next kt call that finds it dead removes what it left (src/process/owner.ts).
  if (ownSession) (await import("../process/owner.ts")).recordOwner(base.stateDir, base.session, process.pid);
  const mcp = await serve({ version, base: { ...base, cwd, ...(ownSession ? { sessionOwner: process.pid } : {}) }, newCallId, structured: options.structured, abort: cancel.signal }, transport);
  if (options.verbose) log().info(`kt mcp ${version}: serving on stdio; root ${root}; cwd ${cwd}; session ${base.session}`);

  let why = await ended;
  // The client is done sending: answer what is still running — unless it dies meanwhile. A
  // signal, or a client that can no longer hear, means leave now.
  if (why === "end") {
    const finished = await Promise.race([mcp.idle().then(() => "idle" as const), clientGone.then(() => "gone" as const)]);
    if (finished === "gone") why = "gone";
  }
  clearInterval(watchParent);
  if (why !== "end") {
    // Cancelled calls stop their commands (bash stops a foreground command's process group)
    // and answer; nobody may hear the answers, so they are not waited for long.
    cancel.abort();
    await Promise.race([mcp.idle(), Bun.sleep(CANCEL_GRACE_MS)]);
  }
  if (why !== "gone") await Promise.race([new Promise((resolve) => process.stdout.write("", resolve)), transport.gone]);
  await mcp.server.close();
  // The language servers this server kept warm end with it.
  await (await import("../lsp/index.ts")).stopLocalServers();
  if (why === "gone" && options.verbose) log().info("kt mcp: the client is gone (stdout closed, or the process that started kt mcp exited); ending");
  if (ownSession) await endOwnSession(base, options.verbose);
  return EXIT.ok;
}

/**
 * Nobody can name a generated session once its server is gone: its background processes
 * are stopped (each announced on stderr) and its stamps and files removed, so that a
 * closed client leaves no orphan behind.
 */
async function endOwnSession(ctx: { stateDir: string; session: string; warn(message: string): void }, verbose: boolean): Promise<void> {
  const { endSession, removeSessionFiles } = await import("../process/teardown.ts");
  // A state directory that never got an index or a log of reads (or was removed while the
  // server ran) holds only the session's own files, such as its owner record: those go, and
  // no index is made for them.
  if (!existsSync(join(ctx.stateDir, "index.db")) && !existsSync(join(ctx.stateDir, STAMP_LOG))) {
    removeSessionFiles(ctx);
    return;
  }
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
