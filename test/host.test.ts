// The session's host (src/process/host.ts): one detached process per session supervises every
// command on pipes; it ends with its session or when idle, and kt falls back to a supervisor
// of the command's own when no host can be reached. Everything through dist/kt.
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { endSandboxes, ktAsync, norm, row, rows, sandbox, until } from "./_process.ts";
import { snapshot } from "../src/process/descendants.ts";

function setup(stateName = "state", extraEnv: Record<string, string> = {}) {
  const { tmp, stateDir, cwd } = sandbox(stateName);
  const run = (...args: string[]) => ktAsync(args, { cwd, stateDir, env: extraEnv });
  const text = async (...args: string[]) => norm((await run(...args)).stdout, tmp);
  return { tmp, stateDir, cwd, run, text };
}

afterEach(endSandboxes);

function argv(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
  } catch {
    return [];
  }
}

function isAlive(pid: number): boolean {
  const p = snapshot().get(pid);
  return p !== undefined && p.state !== "Z" && p.state !== "X";
}

/** The live hosts of a state directory. */
function hostsOf(stateDir: string): number[] {
  return [...snapshot().values()].filter((p) => p.state !== "Z" && argv(p.pid).includes("__host") && argv(p.pid).some((a) => a.includes(JSON.stringify(stateDir).slice(1, -1)))).map((p) => p.pid);
}

describe.if(process.platform === "linux")("the session's host", () => {
  test("every command of a session, ps and bash, runs under one host; another session has its own", async () => {
    const { stateDir, run, text } = setup();
    await run("ps", "start", "echo one; exec sleep 60");
    await run("ps", "start", "echo two; exec sleep 61");
    expect(await text("bash", "echo three")).toContain("three");
    const [p1, p2] = rows(stateDir) as ({ supervisor_pid: number } & ReturnType<typeof rows>[number])[];
    expect(p1!.supervisor_pid).toBe(p2!.supervisor_pid);
    expect(argv(p1!.supervisor_pid)).toContain("__host");
    expect(hostsOf(stateDir)).toEqual([p1!.supervisor_pid]);
    // The host runs without the JIT's compiling tiers (less resident memory; the JIT itself stays
    // on for bun:ffi's peer check, issue 23); its commands keep the caller's environment.
    const environ = (pid: number) => readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
    expect(environ(p1!.supervisor_pid)).toEqual(expect.arrayContaining(["BUN_JSC_useBaselineJIT=0", "BUN_JSC_useDFGJIT=0", "BUN_JSC_useFTLJIT=0"]));
    expect(environ(p1!.supervisor_pid).some((v) => v.startsWith("BUN_JSC_useJIT="))).toBe(false);
    expect(environ(p1!.pid!).some((v) => v.startsWith("BUN_JSC_"))).toBe(false);
    await ktAsync(["ps", "start", "echo other; exec sleep 62"], { cwd: join(stateDir, ".."), stateDir, session: "other" });
    const other = rows(stateDir).find((r) => r.session === "other") as { supervisor_pid: number } | undefined;
    expect(other!.supervisor_pid).not.toBe(p1!.supervisor_pid);
    expect(hostsOf(stateDir).sort()).toEqual([p1!.supervisor_pid, other!.supervisor_pid].sort());
  });

  test("a killed host: its commands that ended are lost, and the next command starts a new host over the stale socket", async () => {
    const { stateDir, run, text } = setup();
    await run("ps", "start", "echo up; exec sleep 60");
    const first = row(stateDir, "p1") as { supervisor_pid: number; pid: number } & ReturnType<typeof row>;
    process.kill(first!.supervisor_pid, "SIGKILL");
    process.kill(first!.pid, "SIGKILL");
    await until("the host to die", () => !isAlive(first!.supervisor_pid));
    // The socket file is still there; nobody listens on it.
    expect(existsSync(join(stateDir, "sessions", "default", "host.sock"))).toBe(true);
    expect(await text("ps", "list")).toMatch(/p1  echo up; exec sleep 60  lost/);
    expect(await text("bash", "echo again")).toMatch(/^\$ echo again\nagain\n\[exit code 0 /);
    await run("ps", "start", "echo up2; exec sleep 61");
    const second = row(stateDir, "p2") as { supervisor_pid: number } & ReturnType<typeof row>;
    expect(second!.supervisor_pid).not.toBe(first!.supervisor_pid);
    expect(argv(second!.supervisor_pid)).toContain("__host");
  });

  test("kt session end ends the host", async () => {
    const { stateDir, run } = setup();
    await run("ps", "start", "echo up; exec sleep 60");
    const host = (row(stateDir, "p1") as { supervisor_pid: number } & ReturnType<typeof row>)!.supervisor_pid;
    expect((await run("session", "end")).exitCode).toBe(0);
    await until("the host to exit", () => !isAlive(host), 5000);
  });

  test("a deleted state directory: the host stops its commands and exits", async () => {
    const { stateDir, run } = setup();
    await run("ps", "start", "echo up; exec sleep 60");
    await run("ps", "start", "echo up; exec sleep 61");
    const [p1, p2] = rows(stateDir) as ({ supervisor_pid: number; pid: number } & ReturnType<typeof rows>[number])[];
    rmSync(stateDir, { recursive: true, force: true });
    await until("the commands to stop", () => !isAlive(p1!.pid) && !isAlive(p2!.pid), 8000);
    await until("the host to exit", () => !isAlive(p1!.supervisor_pid), 5000);
  }, 20_000);

  test("a host with nothing to run exits after its idle time; one with a command running stays", async () => {
    const { stateDir, run, text } = setup("state", { KT_HOST_IDLE_MS: "1500" });
    await run("ps", "start", "echo up; exec sleep 60");
    const host = (row(stateDir, "p1") as { supervisor_pid: number } & ReturnType<typeof row>)!.supervisor_pid;
    await Bun.sleep(3000);
    expect(isAlive(host)).toBe(true);
    expect(await text("ps", "stop", "p1")).toStartWith("Stopped p1 (");
    await until("the idle host to exit", () => !isAlive(host), 6000);
    expect(existsSync(join(stateDir, "sessions", "default", "host.sock"))).toBe(false);
  }, 20_000);

  test("a state directory too deep for a Unix socket: each command gets a supervisor of its own, as before", async () => {
    const { stateDir, run, text } = setup(`${"d".repeat(60)}/${"e".repeat(60)}/state`);
    await run("ps", "start", "echo up; exec sleep 60");
    const p1 = row(stateDir, "p1") as { supervisor_pid: number } & ReturnType<typeof row>;
    expect(argv(p1!.supervisor_pid)).toContain("__supervise");
    expect(await text("bash", "echo deep")).toContain("deep");
    expect(hostsOf(stateDir)).toEqual([]);
  });

  test("terminals run in the host too, each on a thread of its own: a resize reaches only the terminal it names", async () => {
    const { stateDir, run, text } = setup();
    await run("ps", "start", "--tty", "--cols", "70", "bash -c 'trap \"tput cols\" WINCH; tput cols; while :; do sleep 0.05; done'");
    await run("ps", "start", "--tty", "--cols", "80", "bash -c 'trap \"tput cols\" WINCH; tput cols; while :; do sleep 0.05; done' # the second");
    await run("ps", "start", "echo pipes; exec sleep 60");
    const [p1, p2, p3] = rows(stateDir) as ({ supervisor_pid: number } & ReturnType<typeof rows>[number])[];
    expect(new Set([p1!.supervisor_pid, p2!.supervisor_pid, p3!.supervisor_pid]).size).toBe(1);
    expect(argv(p1!.supervisor_pid)).toContain("__host");
    expect(await text("ps", "resize", "p2", "--cols", "90")).toStartWith("Resized p2's terminal from 80×40 to 90×40.");
    await until("p2 to print its new width", () => readFileSync(p2!.log_path, "utf8").includes("90"));
    expect(await text("ps", "list")).toMatch(/p1 .*tty 70×40\n/);
    expect(readFileSync(p1!.log_path, "utf8").trim()).toBe("70");
  });

  test("the end of input reaches a command of the host, and only that command", async () => {
    const { stateDir, text } = setup();
    await text("ps", "start", "cat");
    await text("ps", "start", "wc -c");
    await text("ps", "write", "p2", "--input", "abc");
    expect(await text("ps", "write", "p2", "--input", "\u0004")).toStartWith("Closed p2 stdin (end of input)");
    await until("wc to end", () => row(stateDir, "p2")?.status === "exited");
    const shown = await text("ps", "list");
    expect(shown).toMatch(/p1  cat\s+running/);
    expect(shown).toMatch(/p2  wc -c\s+exited/);
  });
});

describe("a request's secret is compared whole (sameSecret)", () => {
  test("the same secret, one differing anywhere, one of another length", async () => {
    const { sameSecret } = await import("../src/process/host.ts");
    const kept = "0123456789abcdef".repeat(4);
    expect(sameSecret(kept, kept)).toBe(true);
    expect(sameSecret(kept, `1${kept.slice(1)}`)).toBe(false);
    expect(sameSecret(kept, `${kept.slice(0, -1)}0`)).toBe(false);
    expect(sameSecret(kept, kept.slice(1))).toBe(false);
    expect(sameSecret(kept, "")).toBe(false);
  });
});
