// Issue 18 items 3–5 and issue 11 items 14–15, through the compiled binary: duplicate running
// commands, the command environment, how a process ended, everything a command starts, and
// commands whose state is gone. Each test ends every process it started.
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { KT } from "./_helpers.ts";
import { endSandboxes, ktAsync, norm, row, rows, sandbox, until } from "./_process.ts";
import { snapshot } from "../src/process/descendants.ts";
import { escapedSentence } from "../src/process/ending.ts";
import { shortCommand } from "../src/process/format.ts";

const pids: number[] = [];

function setup(session?: string) {
  const { tmp, stateDir, cwd } = sandbox();
  const env = { cwd, stateDir, ...(session ? { session } : {}) };
  const run = (...args: string[]) => ktAsync(args, env);
  const text = async (...args: string[]) => norm((await run(...args)).stdout, tmp);
  return { tmp, stateDir, cwd, env, run, text };
}

afterEach(async () => {
  await endSandboxes();
  for (const pid of pids.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone, as it should be.
    }
  }
});

/** Live (non-zombie) processes among `list`. */
function alive(list: number[]): number[] {
  const all = snapshot();
  return list.filter((pid) => {
    const p = all.get(pid);
    return p !== undefined && p.state !== "Z" && p.state !== "X";
  });
}

/** Pids of live processes whose command line holds `needle` (a unique token of the test). */
function withArg(needle: string): number[] {
  const found: number[] = [];
  for (const p of snapshot().values()) {
    if (p.state === "Z" || p.state === "X") continue;
    try {
      if (readFileSync(`/proc/${p.pid}/cmdline`, "utf8").split("\0").includes(needle)) found.push(p.pid);
    } catch {
      // Gone.
    }
  }
  return found;
}

/** A sleep that only this test runs: `sleep <unique seconds>`, found again by its argument. */
let unique = 7000 + Math.floor(Math.random() * 1000) * 10;
function sleeper(): { cmd: string; arg: string } {
  unique += 1;
  return { cmd: `sleep ${unique}`, arg: String(unique) };
}

const gate = (name: string) => `until [ -e ${name} ]; do sleep 0.02; done`;

describe("18.3 duplicate running commands", () => {
  test("a second ps start of a running command in the same directory is refused, naming the first (golden)", async () => {
    const { cwd, stateDir, run, text } = setup();
    await run("ps", "start", "echo up; exec sleep 60");
    const second = await run("ps", "start", "echo up; exec sleep 60", "--json");
    expect(second.exitCode).toBe(1);
    const result = JSON.parse(second.stdout);
    expect(result.error.code).toBe("ALREADY_RUNNING");
    expect(result.metadata.processId).toBe("p1");
    expect(norm(result.content, cwd)).toBe(`p1 is already running "echo up; exec sleep 60" in <tmp>: read it with ps read p1, or stop it first. Nothing new was started.`);
    expect(rows(stateDir).length).toBe(1);
    // bash refuses it too: the model that forgot its dev server would start a second one.
    expect(await text("bash", "echo up; exec sleep 60")).toBe(`p1 is already running "echo up; exec sleep 60" in <tmp>/work: read it with ps read p1, or stop it first. Nothing new was started.\n`);
  });

  test("a bash call handed to the background is a running twin: ps start and bash of it are refused (golden)", async () => {
    const { stateDir, text } = setup();
    expect(await text("bash", "echo up; exec sleep 63", "--timeout-ms", "500")).toBe(
      'Command still running after <s> — moved to background as process p1.\nOutput so far:\nup\nUse process {"action":"read","id":"p1"} to see new output, or {"action":"stop","id":"p1"} to stop it.\n',
    );
    const refusal = `p1 is already running "echo up; exec sleep 63" in <tmp>/work: read it with ps read p1, or stop it first. Nothing new was started.\n`;
    expect(await text("ps", "start", "echo up; exec sleep 63")).toBe(refusal);
    expect(await text("bash", "echo up; exec sleep 63", "--timeout-ms", "500")).toBe(refusal);
    expect(rows(stateDir).length).toBe(1);
  }, 20_000);

  test("a finished twin or another directory is a new run", async () => {
    const { cwd, env, run, text } = setup();
    expect(await text("ps", "start", "echo once")).toStartWith("Process p1 exited immediately with code 0");
    expect(await text("ps", "start", "echo once")).toStartWith("Process p2 exited immediately with code 0");
    await run("ps", "start", "echo up; exec sleep 60");
    mkdirSync(join(cwd, "other"));
    const elsewhere = await ktAsync(["ps", "start", "echo up; exec sleep 60"], { ...env, cwd: join(cwd, "other") });
    expect(elsewhere.exitCode).toBe(0);
    expect(elsewhere.stdout).toStartWith("Started p4 ");
    await run("ps", "stop", "p3");
    expect((await run("ps", "start", "echo up; exec sleep 60")).stdout).toStartWith("Started p5 ");
  }, 30_000);

  test("two concurrent ps start calls of one command: exactly one runs", async () => {
    const { stateDir, env } = setup();
    for (let round = 1; round <= 3; round++) {
      const command = `echo round ${round}; exec sleep 60`;
      const both = await Promise.all([ktAsync(["ps", "start", command], env), ktAsync(["ps", "start", command], env)]);
      expect(both.map((r) => r.exitCode).sort()).toEqual([0, 1]);
      const refused = both.find((r) => r.exitCode === 1)!;
      expect(refused.stdout).toMatch(new RegExp(`^p\\d+ is already running "echo round ${round}; exec sleep 60" in `));
      const live = rows(stateDir).filter((r) => r.status === "running" || r.status === "starting");
      expect(live.length).toBe(round);
    }
  });
});

describe("18.3 in the tool descriptions", () => {
  test("kt schema: ps and bash say what they refuse, within KHAELOR's 90–130 words", async () => {
    const { run } = setup();
    for (const [tool, sentence] of [
      ["process", "a command identical to one still running in the same directory is refused, naming that process: read or stop it instead."],
      ["bash", "Refused: interactive programs (editors, pagers, bare REPLs), and a command identical to one still running in the background in the same directory."],
    ] as const) {
      const schema = JSON.parse((await run("schema", tool)).stdout) as { description: string };
      expect(schema.description).toContain(sentence);
      const words = schema.description.split(/\s+/).length;
      expect(words).toBeGreaterThanOrEqual(90);
      expect(words).toBeLessThanOrEqual(130);
    }
  });
});

describe("18.4 command environment", () => {
  test("commands run without KT_* and NO_COLOR, with pagers disarmed and kt's marker", async () => {
    const { cwd, stateDir, env } = setup("envcheck");
    const extra = { KT_ROOT: cwd, KT_GREP_ENGINE: "builtin", KT_THREADS: "3", KT_ANYTHING: "x", NO_COLOR: "1" };
    const seen = await ktAsync(["bash", "env | sort"], { ...env, env: extra });
    const lines = seen.stdout.split("\n");
    expect(lines.filter((l) => l.startsWith("KT_") || l.startsWith("NO_COLOR="))).toEqual([]);
    expect(lines).toContain("PAGER=cat");
    expect(lines).toContain("GIT_PAGER=cat");
    expect(lines.find((l) => l.startsWith("__KT_PROCESS="))).toMatch(new RegExp(`^__KT_PROCESS=\\d+@${stateDir.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`));
    // A kt called inside a command uses its own defaults unless the command sets them.
    expect((await ktAsync(["bash", 'echo "session=${KT_SESSION-unset} state=${KT_STATE_DIR-unset}"'], { ...env, env: extra })).stdout).toContain("session=unset state=unset\n");
    const started = await ktAsync(["ps", "start", "env | grep -c '^KT_\\|^NO_COLOR=' ; true"], { ...env, env: extra });
    expect(started.stdout).toContain("exited immediately with code 0:\n  0\n");
  });

  test("programs keep their colours in the log; the model's text is stripped", async () => {
    const { stateDir, text } = setup();
    const colour = `[ -z "\${NO_COLOR+set}" ] && printf '\\033[31mred\\033[0m\\n' || echo plain; exec sleep 60`;
    expect(await text("ps", "start", colour)).toContain("First output (waited up to 2s):\n  red\n");
    expect(readFileSync(join(stateDir, "sessions/default/proc/p1.log"), "utf8")).toBe("\x1b[31mred\x1b[0m\n");
    expect(await text("bash", `[ -z "\${NO_COLOR+set}" ] && printf '\\033[32mgreen\\033[0m\\n'`)).toStartWith("$ [ -z \"${NO_COLOR+set}\" ] && printf '\\033[32mgreen\\033[0m\\n'\ngreen\n[exit code 0 ·");
  });
});

describe("18.5 process states", () => {
  test("exited, killed, stopped and failed: ps list and metadata carry the same word (golden)", async () => {
    const { stateDir, cwd, env, run, text } = setup();
    await run("ps", "start", "echo a; exit 3");
    await run("ps", "start", "echo b; exec sleep 60");
    await run("ps", "start", "echo c; exec sleep 61");
    expect(row(stateDir, "p1")?.status).toBe("exited");
    process.kill(row(stateDir, "p2")!.pid!, "SIGKILL");
    await until("p2 to be recorded as killed", () => row(stateDir, "p2")?.status === "killed");
    expect(row(stateDir, "p2")!.signal).toBe("SIGKILL");
    const notices = JSON.parse((await run("ps", "list", "--json")).stdout);
    expect(notices.metadata.extra.statuses).toEqual({ p1: "exited", p2: "killed", p3: "running" });
    expect(await text("ps", "stop", "p3")).toBe(`Stopped p3 (echo c; exec sleep 61) · ended on SIGTERM · ran <clock>. Full log: <tmp>/state/sessions/default/proc/p3.log\n`);
    // A PATH with mkfifo (kt needs it for the stdin FIFO) but no bash: the command cannot start.
    mkdirSync(join(cwd, "bin"));
    symlinkSync(Bun.which("mkfifo")!, join(cwd, "bin", "mkfifo"));
    const failed = await ktAsync(["ps", "start", "echo never"], { ...env, env: { PATH: join(cwd, "bin") } });
    expect(failed.exitCode).toBe(1);
    expect(failed.stdout).toStartWith("Command failed to start: ");
    expect(row(stateDir, "p4")!.status).toBe("failed");
    expect(await text("ps", "list")).toBe(
      [
        "PROCESSES",
        'p4  echo never             failed   could not start: Executable not found in $PATH: "bash"',
        "p3  echo c; exec sleep 61  stopped  by ps stop (SIGTERM)  ran <clock>",
        "p2  echo b; exec sleep 60  killed   by SIGKILL  ran <clock>",
        "p1  echo a; exit 3         exited   code 3  ran <clock>",
        "",
      ].join("\n"),
    );
    const read = JSON.parse((await run("ps", "read", "p2", "--json")).stdout);
    expect(read.metadata.extra.status).toBe("killed");
    expect(norm(read.content, join(cwd, ".."))).toBe("No new output from p2 since last read (1 line in all; use offset to re-read them).\np2 was killed by SIGKILL after <clock>. Full log: <tmp>/state/sessions/default/proc/p2.log");
  }, 20_000);

  test("completion notices name the word and metadata lists it", async () => {
    const { stateDir, cwd, run } = setup();
    await run("ps", "start", `echo a; ${gate("go")}; exit 4`);
    await run("ps", "start", "echo up; exec sleep 62");
    writeFileSync(join(cwd, "go"), "");
    await until("p1 to exit", () => row(stateDir, "p1")?.status === "exited");
    process.kill(row(stateDir, "p2")!.pid!, "SIGTERM");
    await until("p2 to be recorded", () => row(stateDir, "p2")?.status === "killed");
    writeFileSync(join(cwd, "f.txt"), "x\n");
    const r = JSON.parse((await run("read", "f.txt", "--json")).stdout);
    expect(norm(r.content, cwd)).toBe(
      `<tmp>/f.txt\n     1→x\n\n[Process p1 (echo a; ${gate("go")}; exit 4) exited with code 4 after <clock>. Use ps read p1 for its output.]\n[Process p2 (echo up; exec sleep 62) was killed by SIGTERM after <clock>. Use ps read p2 for its output.]`,
    );
    expect(r.metadata.extra.ended).toEqual([
      { id: "p1", status: "exited" },
      { id: "p2", status: "killed" },
    ]);
  });

  test("bash names a command killed by a signal, with the word in metadata", async () => {
    const { cwd, run } = setup();
    const r = JSON.parse((await run("bash", "echo bye; kill -TERM $$", "--json")).stdout);
    expect(norm(r.content, cwd)).toBe("$ echo bye; kill -TERM $$\nbye\n[killed by SIGTERM · <s> · cwd <tmp>]");
    expect(r.metadata.extra).toMatchObject({ status: "killed", signal: "SIGTERM", exitCode: null });
    const ok = JSON.parse((await run("bash", "true", "--json")).stdout);
    expect(ok.metadata.extra).toMatchObject({ status: "exited", exitCode: 0 });
  });
});

describe("11.14 everything a command starts", () => {
  test("a leader that exits while its group lives on: shown as running, and ps stop ends it (golden)", async () => {
    const { stateDir, text } = setup();
    const s = sleeper();
    expect(await text("ps", "start", `${s.cmd} >/dev/null 2>&1 & echo launched`)).toBe(
      `Started p1 (pid <pid>): ${s.cmd} >/dev/null 2>&1 & echo launched\ncwd <tmp>/work · log <tmp>/state/sessions/default/proc/p1.log\nFirst output (waited up to 2s):\n  launched\nUse process {"action":"read","id":"p1"} for new output.\n`,
    );
    const left = await until("the sleep", () => (withArg(s.arg).length === 1 ? withArg(s.arg) : undefined));
    pids.push(...left);
    await until("the shell's exit to be recorded", () => row(stateDir, "p1")?.exit_code === 0);
    const shown = shortCommand(`${s.cmd} >/dev/null 2>&1 & echo launched`, 40);
    expect(await text("ps", "list")).toBe(`PROCESSES\np1  ${shown}  running  <clock>  shell exited (code 0); left running: pid <pid> (sleep)\n`);
    expect(await text("ps", "stop", "p1")).toBe(`Stopped p1 (${s.cmd} >/dev/null 2>&1 & echo launched) · ended on SIGTERM · ran <clock>. Full log: <tmp>/state/sessions/default/proc/p1.log\n`);
    expect(alive(left)).toEqual([]);
    expect(await text("ps", "list")).toBe(`PROCESSES\np1  ${shown}  stopped  by ps stop (SIGTERM)  ran <clock>\n`);
  });

  test("a setsid grandchild, a double-forked daemon and one that cleared its environment do not survive ps stop", async () => {
    const { stateDir, text } = setup();
    const [a, b, c] = [sleeper(), sleeper(), sleeper()];
    await text("ps", "start", `setsid ${a.cmd} & (setsid bash -c '${b.cmd} & exit' &) ; env -i setsid /bin/sleep ${c.arg} & echo up; exec sleep 60`);
    const started = await until("all three sleeps", () => {
      const found = [a, b, c].map((s) => withArg(s.arg));
      return found.every((f) => f.length === 1) ? found.flat() : undefined;
    });
    pids.push(...started);
    const leader = row(stateDir, "p1")!.pid!;
    // None of them is in the command's process group any more.
    expect(started.filter((pid) => snapshot().get(pid)!.pgrp === leader)).toEqual([]);
    expect(await text("ps", "stop", "p1")).toStartWith("Stopped p1 (");
    expect(alive(started)).toEqual([]);
  }, 15_000);

  test("kt bash 'sleep N &': the leftover is handed to ps as pN, never left without an id (golden)", async () => {
    const { text } = setup();
    const s = sleeper();
    const out = await text("bash", `${s.cmd} &`);
    const left = withArg(s.arg);
    pids.push(...left);
    expect(left.length).toBe(1);
    expect(out).toBe(
      `$ ${s.cmd} &\n[exit code 0 · <s> · cwd <tmp>/work]\nThe command left 1 process running (pid <pid> sleep): kt keeps it as background process p1. Use process {"action":"read","id":"p1"} for new output, or {"action":"stop","id":"p1"} to stop it.\n`,
    );
    expect(await text("ps", "list")).toMatch(new RegExp(`^PROCESSES\\np1  ${s.cmd} &  running  <clock>  shell exited \\(code 0\\); left running: pid <pid> \\(sleep\\)\\n$`));
    // Not a duplicate (18.3): its shell has ended, and a build that leaves a daemon behind
    // (Gradle, sccache) must be able to run again.
    expect(await text("bash", `${s.cmd} &`)).toContain("kt keeps it as background process p2.");
    const both = withArg(s.arg);
    pids.push(...both);
    expect(both.length).toBe(2);
    expect(await text("ps", "stop", "p1")).toStartWith(`Stopped p1 (${s.cmd} &) · ended on SIGTERM`);
    expect(await text("ps", "stop", "p2")).toStartWith(`Stopped p2 (${s.cmd} &) · ended on SIGTERM`);
    expect(alive(both)).toEqual([]);
  });

  test("kt session end leaves nothing behind, even what a killed supervisor left", async () => {
    // Per-command supervisors (KT_NO_HOST, also the fallback when the session's host cannot
    // be reached): one of them is killed while the other lives on.
    const { stateDir, env } = setup();
    const run = (...args: string[]) => ktAsync(args, { ...env, env: { KT_NO_HOST: "1" } });
    const [a, b] = [sleeper(), sleeper()];
    await run("ps", "start", `${a.cmd} >/dev/null & echo one`);
    await run("ps", "start", `setsid ${b.cmd} & echo up; exec sleep 60`);
    const started = await until("both sleeps", () => {
      const found = [a, b].map((s) => withArg(s.arg));
      return found.every((f) => f.length === 1) ? found.flat() : undefined;
    });
    pids.push(...started);
    // p2's supervisor dies: only the marker still ties its processes to the session.
    const p2 = rows(stateDir).find((r) => r.id === "p2")! as ReturnType<typeof rows>[number] & { supervisor_pid: number };
    process.kill(p2.supervisor_pid, "SIGKILL");
    await until("the supervisor to die", () => alive([p2.supervisor_pid]).length === 0);
    const ended = await run("session", "end");
    expect(ended.exitCode).toBe(0);
    expect(ended.stderr).toContain("Stopping p1 (");
    expect(alive(started)).toEqual([]);
  }, 15_000);

  test("kt session end leaves nothing behind, even what a killed session host left", async () => {
    const { stateDir, run } = setup();
    const [a, b] = [sleeper(), sleeper()];
    await run("ps", "start", `${a.cmd} >/dev/null & echo one`);
    await run("ps", "start", `setsid ${b.cmd} & echo up; exec sleep 60`);
    const started = await until("both sleeps", () => {
      const found = [a, b].map((s) => withArg(s.arg));
      return found.every((f) => f.length === 1) ? found.flat() : undefined;
    });
    pids.push(...started);
    // One host supervises both: killed, only the markers still tie their processes to the session.
    const [p1, p2] = rows(stateDir) as (ReturnType<typeof rows>[number] & { supervisor_pid: number })[];
    expect(p1!.supervisor_pid).toBe(p2!.supervisor_pid);
    expect(readFileSync(`/proc/${p1!.supervisor_pid}/cmdline`, "utf8").split("\0")).toContain("__host");
    process.kill(p1!.supervisor_pid, "SIGKILL");
    await until("the host to die", () => alive([p1!.supervisor_pid]).length === 0);
    const ended = await run("session", "end");
    expect(ended.exitCode).toBe(0);
    expect(ended.stderr).toContain("Stopping p2 (");
    expect(ended.stderr).toContain("left behind by the session's commands");
    expect(alive(started)).toEqual([]);
  }, 15_000);

  test("a lost command (supervisor and shell killed) is not 'nothing to stop' while what it started runs on (golden)", async () => {
    const { stateDir, text } = setup();
    const s = sleeper();
    await text("ps", "start", `${s.cmd} >/dev/null & echo up; exec sleep 60`);
    const left = await until("the sleep", () => (withArg(s.arg).length === 1 ? withArg(s.arg) : undefined));
    pids.push(...left);
    const r = rows(stateDir)[0]! as ReturnType<typeof rows>[number] & { supervisor_pid: number };
    process.kill(r.supervisor_pid, "SIGKILL");
    process.kill(r.pid!, "SIGKILL");
    await until("both to die", () => alive([r.supervisor_pid, r.pid!]).length === 0);
    expect(await text("ps", "stop", "p1")).toBe(
      `p1 (${s.cmd} >/dev/null & echo up; exec sleep 60) was not running: p1 is gone: it stopped running without its exit being recorded (killed from outside, or the machine restarted). But 1 process it started was still running (pid <pid> sleep): stopped with SIGTERM.\n`,
    );
    expect(alive(left)).toEqual([]);
    expect(await text("ps", "stop", "p1")).toStartWith("p1 (");
    expect(await text("ps", "stop", "p1")).toEndWith("Nothing to stop.\n");
  }, 15_000);

  test("what survives SIGKILL is said plainly (golden)", () => {
    expect(escapedSentence([{ pid: 12, comm: "fuse" }])).toBe("1 process it started survived SIGKILL and still runs: pid 12 (fuse). kt cannot stop it (another user's, or stuck in the kernel).");
    expect(escapedSentence([{ pid: 12, comm: "a" }, { pid: 13, comm: "b" }])).toBe("2 processes it started survived SIGKILL and still run: pid 12 (a), pid 13 (b). kt cannot stop them (another user's, or stuck in the kernel).");
  });
});

describe("11.15 commands whose state is gone", () => {
  test("deleting the state directory: the supervisor notices and stops its command, leftovers included", async () => {
    const { stateDir, run } = setup();
    const [a, b] = [sleeper(), sleeper()];
    await run("ps", "start", `${a.cmd} & echo up; exec ${b.cmd}`);
    const started = await until("both sleeps", () => {
      const found = [a, b].map((s) => withArg(s.arg));
      return found.every((f) => f.length === 1) ? found.flat() : undefined;
    });
    pids.push(...started);
    rmSync(stateDir, { recursive: true, force: true });
    await until("the command to be stopped", () => alive(started).length === 0, 10_000);
    expect(existsSync(stateDir)).toBe(false);
  }, 15_000);

  test("a replaced index: the supervisor stops its command too", async () => {
    const { stateDir, run } = setup();
    const s = sleeper();
    await run("ps", "start", `echo up; exec ${s.cmd}`);
    const started = await until("the sleep", () => (withArg(s.arg).length === 1 ? withArg(s.arg) : undefined));
    pids.push(...started);
    for (const suffix of ["", "-wal", "-shm"]) rmSync(join(stateDir, `index.db${suffix}`), { force: true });
    expect((await run("ps", "list")).stdout).toStartWith("No background processes in this session.");
    await until("the command to be stopped", () => alive(started).length === 0, 10_000);
  }, 15_000);

  test("SIGKILL of kt mcp: the commands of its session stop", async () => {
    const { cwd, stateDir } = setup();
    const s = sleeper();
    const transport = new StdioClientTransport({
      command: KT,
      args: ["mcp"],
      cwd,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", KT_STATE_DIR: stateDir },
      stderr: "pipe",
    });
    const client = new Client({ name: "kt-test", version: "0.0.0" });
    await client.connect(transport);
    try {
      const started = await client.callTool({ name: "process", arguments: { action: "start", command: `echo up; exec ${s.cmd}` } });
      expect((started.content as { text: string }[])[0]!.text).toStartWith("Started p1 ");
      const sleeping = await until("the sleep", () => (withArg(s.arg).length === 1 ? withArg(s.arg) : undefined));
      pids.push(...sleeping);
      process.kill(transport.pid!, "SIGKILL");
      await until("the command to be stopped", () => alive(sleeping).length === 0, 10_000);
      await until("the stop to be recorded", () => rows(stateDir).find((x) => x.id === "p1")?.status === "stopped");
    } finally {
      await client.close().catch(() => {});
    }
  }, 20_000);

  test("kt ps list --orphans finds a command whose supervisor was killed; kt session end --all stops it", async () => {
    const { tmp, stateDir, run } = setup("orph");
    const s = sleeper();
    await run("ps", "start", `echo up; exec ${s.cmd}`);
    const sleeping = await until("the sleep", () => (withArg(s.arg).length === 1 ? withArg(s.arg) : undefined));
    pids.push(...sleeping);
    const r = rows(stateDir)[0]! as ReturnType<typeof rows>[number] & { supervisor_pid: number };
    process.kill(r.supervisor_pid, "SIGKILL");
    await until("the supervisor to die", () => alive([r.supervisor_pid]).length === 0);
    const listed = await run("ps", "list", "--orphans");
    expect(listed.exitCode).toBe(0);
    const mine = listed.stdout.split("\n").filter((l) => l.includes(tmp));
    expect(mine).toEqual([`"echo up; exec ${s.cmd}" · its supervisor is gone (${stateDir}, entry ${r.key}) · pid ${sleeping[0]} (sleep)`]);
    expect(listed.stdout).toContain("Stop them with: kt session end --all\n");
    const ended = await run("session", "end", "--all");
    expect(ended.exitCode).toBe(0);
    expect(ended.stdout).toStartWith(`Ended 1 session ("orph"): stopped 1 process,`);
    expect(alive(sleeping)).toEqual([]);
    expect((await run("ps", "list", "--orphans")).stdout.split("\n").filter((l) => l.includes(tmp))).toEqual([]);
  }, 20_000);

  test("--orphans and --all are refused where they do not belong", async () => {
    const { run } = setup();
    const a = await run("ps", "read", "p1", "--orphans");
    expect(a.exitCode).toBe(2);
    expect(a.stderr).toContain(`--orphans goes with "kt ps list" alone: kt ps list --orphans`);
    const b = await run("session", "end", "--all", "--session", "x");
    expect(b.exitCode).toBe(2);
    expect(b.stderr).toContain("--all ends every session: give either --all or --session");
  });
});
