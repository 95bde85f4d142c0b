// kt mcp when its client goes (SPEC §8.7, issue 29): a client that dies cancels the calls in
// flight and the session's processes are gone within 2 s; a server killed with SIGKILL leaves
// rows and logs that the next kt call removes (only for an owner provably dead); a request line
// over 10 MiB is answered with its own id where it can be read; kt call --format mcp answers a
// whole JSON-RPC request with a JSON-RPC response. All through the compiled binary.
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { requestId } from "../src/adapter/stdio.ts";
import { isSameProcess } from "../src/process/identity.ts";
import { deadOwnedSessions } from "../src/process/owner.ts";
import { KT } from "./_helpers.ts";
import { endSandboxes, ktAsync, rows, sandbox, until } from "./_process.ts";

const clients: Bun.Subprocess[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.kill("SIGKILL");
  await endSandboxes();
});

const ENV = (stateDir: string) => ({ PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", NO_COLOR: "1", KT_STATE_DIR: stateDir });

/** A client of its own (a separate bun process) that starts kt mcp, initializes, calls bash 'sleep 300' and prints kt mcp's pid. */
const CLIENT = `
const [kt, cwd, stateDir] = process.argv.slice(2);
const server = Bun.spawn([kt, "mcp"], { cwd, stdin: "pipe", stdout: "pipe", stderr: "ignore", env: { PATH: process.env.PATH, HOME: process.env.HOME ?? "/tmp", KT_STATE_DIR: stateDir } });
const send = (m) => server.stdin.write(JSON.stringify(m) + "\\n");
send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "dying", version: "0" } } });
send({ jsonrpc: "2.0", method: "notifications/initialized" });
send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "bash", arguments: { command: "sleep 300" } } });
server.stdin.flush();
console.log(server.pid);
await Bun.sleep(1e9);
`;

/** Every process that belongs to the state directory: its kt mcp, hosts, supervisors, and the commands (by their marker). */
function alive(stateDir: string, mcpPid: number): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    try {
      const args = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      const environ = readFileSync(`/proc/${pid}/environ`, "utf8");
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) continue;
      if (pid === mcpPid || args.includes(stateDir) || environ.includes(`@${stateDir}\0`)) found.push(pid);
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

async function startDyingClient(cwd: string, stateDir: string, tmp: string): Promise<{ client: Bun.Subprocess; mcpPid: number }> {
  const script = join(tmp, "client.mjs");
  writeFileSync(script, CLIENT);
  const before = rows(stateDir).filter((r) => r.status === "running").length;
  const client = Bun.spawn([process.execPath, script, KT, cwd, stateDir], { stdout: "pipe", stderr: "inherit" });
  clients.push(client);
  const reader = client.stdout.getReader();
  const { value } = await reader.read();
  const mcpPid = Number(new TextDecoder().decode(value).trim());
  await until("sleep 300 running", () => rows(stateDir).filter((r) => r.status === "running" && r.pid !== null).length > before, 15_000);
  return { client, mcpPid };
}

describe("a client's death", () => {
  test("MCP client dies during bash 'sleep 300': every process of the session gone within 2 s", async () => {
    const { tmp, cwd, stateDir } = sandbox();
    const { client, mcpPid } = await startDyingClient(cwd, stateDir, tmp);
    const sleeper = rows(stateDir).find((r) => r.status === "running")!;
    expect(alive(stateDir, mcpPid).length).toBeGreaterThanOrEqual(3); // kt mcp, the host, sleep
    client.kill("SIGKILL");
    const killedAt = performance.now();
    await until("every process of the session gone", () => alive(stateDir, mcpPid).length === 0, 10_000);
    expect(performance.now() - killedAt).toBeLessThan(2000);
    expect(isSameProcess(sleeper.pid, sleeper.pid_start)).toBe(false);
    // The generated session ended with its server: no rows, no files.
    expect(rows(stateDir)).toEqual([]);
    expect(readdirSync(join(stateDir, "sessions"))).toEqual([]);
    expect(readdirSync(join(stateDir, "owners"))).toEqual([]);
  }, 30_000);

  test("kt mcp killed with SIGKILL: its commands stop, and the next kt call removes the session's rows and logs; a live server's session is left alone", async () => {
    const { tmp, cwd, stateDir } = sandbox();
    const live = await startDyingClient(cwd, stateDir, tmp);
    const liveSession = rows(stateDir)[0]!.session;
    const { client, mcpPid } = await startDyingClient(cwd, stateDir, tmp);
    const killed = rows(stateDir).find((r) => r.session !== liveSession)!;
    process.kill(mcpPid, "SIGKILL");
    // The command stops on its own (its supervisor watches the server); its row and log stay.
    await until("the killed server's command stopped", () => !isSameProcess(killed.pid, killed.pid_start), 10_000);
    await until("its end recorded", () => rows(stateDir).find((r) => r.key === killed.key)?.status !== "running", 10_000);
    expect(existsSync(killed.log_path)).toBe(true);
    writeFileSync(join(cwd, "a.txt"), "a\n");
    const next = await ktAsync(["read", "a.txt"], { cwd, stateDir });
    expect(next.exitCode).toBe(0);
    expect(next.stderr).toContain(`ended session "${killed.session}": its MCP server is gone (killed without ending it); 0 processes stopped`);
    expect(rows(stateDir).filter((r) => r.session === killed.session)).toEqual([]);
    expect(existsSync(join(stateDir, "sessions", killed.session))).toBe(false);
    // The live server's session and its running command are untouched.
    expect(rows(stateDir).filter((r) => r.session === liveSession && r.status === "running")).toHaveLength(1);
    expect(existsSync(join(stateDir, "owners", liveSession))).toBe(true);
    client.kill("SIGKILL");
    live.client.kill("SIGKILL");
    await until("the live server's session ended with its client", () => !existsSync(join(stateDir, "sessions", liveSession)), 10_000);
  }, 60_000);
});

describe("a server that ends with its client's stdin", () => {
  const session = (calls: object[]) => [
    { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "brief", version: "0" } } },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    ...calls,
  ].map((m) => `${JSON.stringify(m)}\n`).join("");

  // The session's owner file was left behind when no index existed yet (the CI failure of
  // stop 36): the next kt call then ended the session "killed without ending it", on stderr.
  test.each([
    ["only listed tools", [{ jsonrpc: "2.0", id: 2, method: "tools/list" }]],
    ["only read a file", [{ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "read", arguments: { path: "a.txt" } } }]],
    ["read a file in a state directory kt had never used", [{ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "read", arguments: { path: "a.txt" } } }]],
  ])("one that %s leaves no session behind, and the next kt call says nothing on stderr", async (what, calls) => {
    const { cwd, stateDir } = sandbox();
    writeFileSync(join(cwd, "a.txt"), "a\n");
    if (what.includes("never used")) rmSync(stateDir, { recursive: true });
    else expect((await ktAsync(["read", "a.txt"], { cwd, stateDir })).stderr).toBe("");
    const mcp = await ktAsync(["mcp"], { cwd, stateDir, stdin: session(calls) });
    expect(mcp.exitCode).toBe(0);
    expect(mcp.stderr).toBe("");
    expect(mcp.stdout.trimEnd().split("\n")).toHaveLength(2);
    for (const dir of ["sessions", "owners"]) expect(existsSync(join(stateDir, dir)) ? readdirSync(join(stateDir, dir)) : []).toEqual([]);
    const next = await ktAsync(["read", "a.txt"], { cwd, stateDir });
    expect(next.exitCode).toBe(0);
    expect(next.stderr).toBe("");
  }, 30_000);
});

describe("owners/: the live servers' records, apart from the sessions' folders", () => {
  test("a kt call looks at owners/ only: 300 ended sessions' kept folders are not read, a dead owner is found, a record named for another session is no record", () => {
    const { stateDir } = sandbox();
    for (let i = 0; i < 300; i++) mkdirSync(join(stateDir, "sessions", `mcp-old-${i}`, "history"), { recursive: true, mode: 0o700 });
    // An owner file left in a session folder (the old place) is not looked at.
    writeFileSync(join(stateDir, "sessions", "mcp-old-7", "owner"), JSON.stringify({ session: "mcp-old-7", pid: 999999, start: "1" }));
    expect(deadOwnedSessions(stateDir)).toEqual([]);
    mkdirSync(join(stateDir, "owners"), { mode: 0o700 });
    writeFileSync(join(stateDir, "owners", "mcp-dead"), JSON.stringify({ session: "mcp-dead", pid: 999999, start: "1" }), { mode: 0o600 });
    writeFileSync(join(stateDir, "owners", "mcp-other"), JSON.stringify({ session: "mcp-dead", pid: 999999, start: "1" }), { mode: 0o600 });
    writeFileSync(join(stateDir, "owners", "mcp-garbled"), "{not json", { mode: 0o600 });
    expect(deadOwnedSessions(stateDir)).toEqual(["mcp-dead"]);
    expect(deadOwnedSessions(stateDir, "mcp-dead")).toEqual([]);
  });
});

describe("an oversized request line", () => {
  test("answered with its id when the id is in its first or last bytes; with null and a stderr line when it is in neither", async () => {
    const { cwd, stateDir } = sandbox();
    const proc = Bun.spawn([KT, "mcp"], { cwd, env: ENV(stateDir), stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    const big = "x".repeat(11 * 1024 * 1024);
    const lines = [
      { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } },
      { jsonrpc: "2.0", id: 11, method: "tools/call", params: { name: "write", arguments: { file_path: "a", content: big } } },
      { jsonrpc: "2.0", method: "tools/call", params: { name: "write", arguments: { file_path: "b", content: big } }, id: "last" },
      { jsonrpc: "2.0", method: "tools/call", params: { name: "write", arguments: { file_path: "c", content: big }, id: 5 }, extra: big.slice(0, 100) },
      { jsonrpc: "2.0", id: 12, method: "tools/call", params: { name: "write", arguments: { file_path: "small.txt", content: "ok\n" } } },
    ];
    for (const l of lines) {
      proc.stdin.write(`${JSON.stringify(l)}\n`);
      proc.stdin.flush();
    }
    proc.stdin.end();
    const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
    expect(await proc.exited).toBe(0);
    const replies = out.trimEnd().split("\n").map((l) => JSON.parse(l) as { id: unknown; error?: { code: number; message: string }; result?: unknown });
    const tooLarge = (id: unknown) => replies.find((r) => r.id === id && r.error?.code === -32600);
    expect(tooLarge(11)?.error?.message).toStartWith("Message too large: a line of ");
    expect(tooLarge("last")).toBeDefined();
    expect(tooLarge(null)).toBeDefined();
    expect(replies.find((r) => r.id === 12)?.result).toMatchObject({ isError: false });
    expect(err).toContain("no request id could be read in its first or last 64 KB: it is answered with id null");
    expect(existsSync(join(cwd, "a"))).toBe(false);
  }, 60_000);

  test("the id reader (unit): top-level members only, from either end", () => {
    const B = (s: string) => Buffer.from(s);
    expect(requestId(B('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"x":"aaa'), B('aaa"}}'))).toBe(7);
    expect(requestId(B('{"method":"tools/call","params":{"arguments":{"id":3,"c":"aaa'), B('aaa"}},"id":"abc"}'))).toBe("abc");
    expect(requestId(B('{"method":"tools/call","params":{"arguments":{"id":3,"c":"aaa'), B('aaa"}}}'))).toBeNull();
    expect(requestId(B('{"a":true,"b":null,"c":[1,{"id":2}],"s":"\\"id\\":1","id":-4.5,'), B(""))).toBe(-4.5);
    expect(requestId(B("xxxx"), B("xxxx"))).toBeNull();
  });
});

describe("kt call --format mcp", () => {
  test("given a whole JSON-RPC request, answers a JSON-RPC response with its id (numeric or string, one call or --jsonl); a bare call gets a bare result", async () => {
    const { cwd, stateDir } = sandbox();
    writeFileSync(join(cwd, "a.txt"), "hi\n");
    const read = { name: "read", arguments: { file_path: "a.txt" } };
    const result = { content: [{ type: "text", text: `${cwd}/a.txt\n     1→hi` }], isError: false };
    const one = await ktAsync(["call", "--format", "mcp"], { cwd, stateDir, stdin: JSON.stringify({ jsonrpc: "2.0", id: 42, method: "tools/call", params: read }) });
    expect(JSON.parse(one.stdout)).toEqual({ jsonrpc: "2.0", id: 42, result });
    const jsonl = await ktAsync(["call", "--jsonl", "--format", "mcp"], {
      cwd,
      stateDir,
      stdin: [JSON.stringify({ jsonrpc: "2.0", id: "a-1", method: "tools/call", params: read }), JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { arguments: {} } }), JSON.stringify(read)].join("\n") + "\n",
    });
    const [first, second, third] = jsonl.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
    expect(first).toEqual({ jsonrpc: "2.0", id: "a-1", result });
    expect(second).toMatchObject({ jsonrpc: "2.0", id: 3, result: { isError: true } });
    expect(third).toEqual(result);
  });
});
