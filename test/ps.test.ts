// ps end to end through the compiled binary: every step is its own kt process, as an agent
// framework would run it. Each test ends every process it started (afterEach → kt session
// end, then SIGKILL to anything still recorded as alive).
import { afterEach, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { endSandboxes, groupAlive, ktAsync, norm, row, rows, sandbox, until } from "./_process.ts";
import { shortCommand } from "../src/process/format.ts";

function setup(session?: string) {
  const { tmp, stateDir, cwd } = sandbox();
  const env = { cwd, stateDir, ...(session ? { session } : {}) };
  const run = (...args: string[]) => ktAsync(args, env);
  const text = async (...args: string[]) => norm((await run(...args)).stdout, tmp);
  return { tmp, stateDir, cwd, env, run, text };
}

afterEach(endSandboxes);

const LOG = (id: string) => `<tmp>/state/sessions/default/proc/${id}.log`;
/** Shell that waits until the test creates `name` in the working directory: output timed by the test, not by sleeps. */
const gate = (name: string) => `until [ -e ${name} ]; do sleep 0.02; done`;
const esc = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

describe("a server-like process across kt calls", () => {
  test("start, list, read only new output twice, page with offset, stop (golden)", async () => {
    const { stateDir, cwd, run, text } = setup();
    writeFileSync(join(cwd, "server.sh"), `echo "listening on :8080"\n${gate("go1")}\nfor i in 1 2 3; do echo "request $i"; done\n${gate("go2")}\nfor i in 4 5; do echo "request $i"; done\nexec sleep 60\n`);
    expect(await text("ps", "start", "bash server.sh")).toBe(
      `Started p1 (pid <pid>): bash server.sh\ncwd <tmp>/work · log ${LOG("p1")}\nFirst output (waited up to 2s):\n  listening on :8080\nUse process {"action":"read","id":"p1"} for new output.\n`,
    );
    expect(await text("ps", "list")).toMatch(/^PROCESSES\np1 {2}bash server\.sh {2}running {2}<clock> {2}pid <pid>\n$/);

    writeFileSync(join(cwd, "go1"), "");
    await until("requests 1–3", () => readFileSync(join(stateDir, "sessions/default/proc/p1.log"), "utf8").includes("request 3"));
    expect(await text("ps", "read", "p1")).toBe("Output of p1 since last read (lines 2–4 of 4):\nrequest 1\nrequest 2\nrequest 3\n");
    expect(await text("ps", "read", "p1")).toBe(`No new output from p1 since last read (still running, 4 lines total). Use offset to re-read earlier output.\n`);
    writeFileSync(join(cwd, "go2"), "");
    await until("requests 4–5", () => readFileSync(join(stateDir, "sessions/default/proc/p1.log"), "utf8").includes("request 5"));
    expect(await text("ps", "read", "p1")).toBe("Output of p1 since last read (lines 5–6 of 6):\nrequest 4\nrequest 5\n");

    expect(await text("ps", "read", "p1", "--offset", "2")).toBe("Output of p1, lines 2–6 of 6:\nrequest 1\nrequest 2\nrequest 3\nrequest 4\nrequest 5\n");
    expect(await text("ps", "read", "p1", "5")).toBe("Output of p1, lines 5–6 of 6:\nrequest 4\nrequest 5\n");
    const beyond = await run("ps", "read", "p1", "--offset", "9");
    expect(beyond.exitCode).toBe(1);
    expect(beyond.stdout).toBe(`Offset 9 is beyond the end of p1's output (6 lines). Use offset ≤ 6, or omit offset for the output since your last read.\n`);

    const pid = row(stateDir, "p1")!.pid!;
    expect(await text("ps", "stop", "p1")).toBe(`Stopped p1 (bash server.sh) · ended on SIGTERM · ran <clock>. Full log: ${LOG("p1")}\n`);
    expect(groupAlive(pid)).toEqual([]);
    expect(await text("ps", "list")).toBe("PROCESSES\np1  bash server.sh  stopped  by ps stop (SIGTERM)  ran <clock>\n");
    expect(await text("ps", "stop", "p1")).toBe(`p1 (bash server.sh) is not running: p1 was stopped by ps stop after <clock> (it ended on SIGTERM). Nothing to stop.\n`);
  });

  test("reading in pages: new output middle-out with the log named; offset pages of 300 lines with the way on", async () => {
    const { stateDir, cwd, text } = setup();
    expect(await text("ps", "start", `echo ready; ${gate("go")}; seq 1 1000; exec sleep 60`)).toContain("First output (waited up to 2s):\n  ready\n");
    writeFileSync(join(cwd, "go"), "");
    await until("all 1000 lines", () => readFileSync(join(stateDir, "sessions/default/proc/p1.log"), "utf8").endsWith("1000\n"));
    const fresh = (await text("ps", "read", "p1")).split("\n");
    expect(fresh[0]).toBe("Output of p1 since last read (lines 2–1001 of 1001):");
    expect(fresh.slice(1, 101)).toEqual(Array.from({ length: 100 }, (_, i) => String(i + 1)));
    expect(fresh[101]).toBe(`[... 700 lines omitted (3 KB). Full output: ${LOG("p1")} — read or grep that file for the rest.]`);
    expect(fresh.slice(102, 302)).toEqual(Array.from({ length: 200 }, (_, i) => String(801 + i)));
    expect(fresh.length).toBe(303);
    const page = (await text("ps", "read", "p1", "--offset", "2")).split("\n");
    expect(page[0]).toBe("Output of p1, lines 2–301 of 1001:");
    expect(page.slice(1, 301)).toEqual(Array.from({ length: 300 }, (_, i) => String(i + 1)));
    expect(page[301]).toBe("(Showing lines 2–301 of 1001. Use offset=302 to continue.)");
    const last = (await text("ps", "read", "p1", "--offset", "902")).split("\n");
    expect(last[0]).toBe("Output of p1, lines 902–1001 of 1001:");
    expect(last.at(-2)).toBe("1000");
  });

  test("a 20 KB page ends on a whole line", async () => {
    const { stateDir, text } = setup();
    await text("ps", "start", "for i in $(seq 1 100); do printf '%04d %0500d\\n' $i 0; done; exec sleep 60");
    await until("100 long lines", () => readFileSync(join(stateDir, "sessions/default/proc/p1.log"), "utf8").split("\n").length === 101);
    const page = (await text("ps", "read", "p1", "--offset", "1")).split("\n");
    expect(page[0]).toBe("Output of p1, lines 1–40 of 100:");
    expect(page[40]).toStartWith("0040 000");
    expect(page[41]).toBe("(Showing lines 1–40 of 100. Use offset=41 to continue.)");
  });
});

/**
 * Writes and returns the program's answer. Within the 500 ms wait the answer comes in the
 * write result; on a loaded machine it may come later, through reads. Either way every
 * result must have its exact form.
 */
async function answer(text: (...args: string[]) => Promise<string>, id: string, input: string[], bytes: number, expected: string): Promise<void> {
  const w = await text("ps", "write", id, ...input);
  const head = `Sent ${bytes} bytes to ${id} stdin.\n`;
  const got: string[] = [];
  if (w.startsWith(`${head}Output:\n`)) got.push(w.slice(head.length + "Output:\n".length, -1));
  else expect(w).toBe(`${head}No output within 500 ms. Use {"action":"read","id":"${id}"} later for a slower answer.\n`);
  const deadline = performance.now() + 10_000;
  while (got.join("\n") !== expected && performance.now() < deadline) {
    await Bun.sleep(50);
    const r = await text("ps", "read", id);
    const m = r.match(/^Output of p\d+ since last read \(lines \d+–\d+ of \d+\):\n([^]*)\n$/);
    if (m) got.push(m[1]!);
    else expect(r).toMatch(/^No new output from p\d+ since last read \(still running, \d+ lines? total\)\. Use offset to re-read earlier output\.\n$/);
  }
  expect(got.join("\n")).toBe(expected);
}

describe("stdin", () => {
  test("write to a REPL and read its answer; write after exit is refused (golden)", async () => {
    const { tmp, stateDir, run, text } = setup();
    const started = await text("ps", "start", "python3 -u -i");
    expect(started).toContain("First output (waited up to 2s):");
    await until("the first prompt", () => readFileSync(join(stateDir, "sessions/default/proc/p1.log"), "utf8").endsWith(">>> "));
    if (!started.endsWith("  >>> \nUse process {\"action\":\"read\",\"id\":\"p1\"} for new output.\n")) await text("ps", "read", "p1");
    await answer(text, "p1", ["print(6*7)\\n"], 11, "42\n>>> ");
    await answer(text, "p1", ["--input", "x = 5\n"], 6, ">>> ");
    await answer(text, "p1", ["print(x + 1)\\n"], 13, "6\n>>> ");
    const bye = await text("ps", "write", "p1", "exit()\\n");
    if (bye !== `Sent 7 bytes to p1 stdin.\nNo output within 500 ms.\np1 exited with code 0 after <clock>. Full log: ${LOG("p1")}\n`) {
      expect(bye).toBe(`Sent 7 bytes to p1 stdin.\nNo output within 500 ms. Use {"action":"read","id":"p1"} later for a slower answer.\n`);
      await until("python to exit", () => row(stateDir, "p1")?.status === "exited");
      expect(await text("ps", "read", "p1")).toMatch(/^No new output from p1 since last read \(\d+ lines in all; use offset to re-read them\)\.\np1 exited with code 0 after <clock>\. Full log: .*\/p1\.log\n$/);
    }
    const after = await run("ps", "write", "p1", "1\\n");
    expect(after.exitCode).toBe(1);
    expect(norm(after.stdout, tmp)).toBe(
      `Cannot write to p1 (python3 -u -i): p1 exited with code 0 after <clock>. Nothing reads its stdin any more. Its output is in ${LOG("p1")}; read it with {"action":"read","id":"p1"}, or start the command again with {"action":"start","command":"..."}.\n`,
    );
  });

  test("a line-echo program keeps its stdin open between kt calls", async () => {
    const { text } = setup();
    await text("ps", "start", "echo ready; while read -r line; do echo \"got: $line\"; done");
    await answer(text, "p1", ["one\\n"], 4, "got: one");
    await answer(text, "p1", ["two\\nthree\\n"], 10, "got: two\ngot: three");
  });

  test("a lone Ctrl-D ends the input: a program that reads to end-of-file finishes (golden)", async () => {
    const { stateDir, text } = setup();
    await text("ps", "start", "sort");
    const sent = await text("ps", "write", "p1", "pear\\napple\\n");
    expect(sent).toStartWith("Sent 11 bytes to p1 stdin.\n");
    const closed = await text("ps", "write", "p1", "\\x04");
    const ended = await until("sort to exit", () => {
      const r = row(stateDir, "p1");
      return r && r.status === "exited" ? r : undefined;
    });
    expect(ended.exit_code).toBe(0);
    // On a slow machine sort's answer may come after the 500 ms wait: then ps read has it.
    const answerText = closed.includes("Output:") ? closed : await text("ps", "read", "p1");
    expect(answerText).toContain("apple\npear\n");
    expect(closed).toStartWith("Closed p1 stdin (end of input): the program now reads end-of-file, and later writes are not read.\n");
    expect(readFileSync(join(stateDir, "sessions/default/proc/p1.log"), "utf8")).toBe("apple\npear\n");
  });
});

describe("stop", () => {
  test("SIGTERM, 3 s grace, SIGKILL: no process of the group survives, grandchildren included", async () => {
    const { stateDir, text } = setup();
    await text("ps", "start", `sleep 300 & (trap "" TERM; sleep 300; true) & bash -c 'sleep 300; true' & echo ready; wait`);
    const pid = row(stateDir, "p1")!.pid!;
    await until("four members in the group", () => groupAlive(pid).length >= 5);
    const stopped = await text("ps", "stop", "p1");
    expect(stopped).toMatch(/^Stopped p1 \(.*\) · ended on SIGTERM, and SIGKILL ended what ignored SIGTERM · ran <clock>\. Full log: /);
    expect(groupAlive(pid)).toEqual([]);
  }, 15_000);
});

describe("the index keeps the facts", () => {
  test("the exit is recorded with nobody reading", async () => {
    const { stateDir, cwd, run } = setup();
    await run("ps", "start", `echo working; ${gate("go")}; exit 7`);
    writeFileSync(join(cwd, "go"), "");
    const ended = await until("the exit to be recorded", () => {
      const r = row(stateDir, "p1");
      return r && r.status === "exited" ? r : undefined;
    });
    expect(ended.exit_code).toBe(7);
    expect(ended.ended_at).toBeGreaterThan(0);
    expect(ended.notified).toBe(0);
  });

  test("reading a finished process: its end stated once more, and a removed log named (golden)", async () => {
    const { stateDir, cwd, text } = setup();
    await text("ps", "start", `echo one; ${gate("go")}; echo two; exit 5`);
    writeFileSync(join(cwd, "go"), "");
    await until("the exit", () => row(stateDir, "p1")?.status === "exited");
    expect(await text("ps", "read", "p1")).toBe(`Output of p1 since last read (lines 2–2 of 2):\ntwo\np1 exited with code 5 after <clock>. Full log: ${LOG("p1")}\n`);
    expect(await text("ps", "read", "p1")).toBe(`No new output from p1 since last read (2 lines in all; use offset to re-read them).\np1 exited with code 5 after <clock>. Full log: ${LOG("p1")}\n`);
    rmSync(join(stateDir, "sessions/default/proc/p1.log"));
    expect(await text("ps", "read", "p1")).toBe(`The log of p1 was removed (to keep the state directory under its size cap), so its output is gone. p1 exited with code 5 after <clock>.\n`);
  });

  test("an immediate exit is reported inline (golden)", async () => {
    const { text } = setup();
    expect(await text("ps", "start", "echo 'Error: port 5173 in use' >&2; exit 1")).toBe(
      `Process p1 exited immediately with code 1:\n  Error: port 5173 in use\ncwd <tmp>/work · log ${LOG("p1")}\n`,
    );
    expect(await text("ps", "start", "true")).toBe(`Process p2 exited immediately with code 0 (no output).\ncwd <tmp>/work · log ${LOG("p2")}\n`);
  });

  test("the log keeps escape sequences; the model text does not", async () => {
    const { stateDir, text } = setup();
    await text("ps", "start", "printf '\\033[32mgreen\\033[0m\\n'; exec sleep 60");
    expect(readFileSync(join(stateDir, "sessions/default/proc/p1.log"), "utf8")).toBe("\x1b[32mgreen\x1b[0m\n");
    expect(await text("ps", "read", "p1", "--offset", "1")).toBe("Output of p1, lines 1–1 of 1:\ngreen\n");
  });
});

describe("completion notices", () => {
  test("delivered exactly once, by one of two concurrent kt calls (golden)", async () => {
    const { stateDir, cwd, env, run } = setup();
    writeFileSync(join(cwd, "f.txt"), "x\n");
    for (let round = 1; round <= 4; round++) {
      const command = `echo hi; ${gate(`go${round}`)}; exit ${round}`;
      await run("ps", "start", command);
      writeFileSync(join(cwd, `go${round}`), "");
      await until("the exit", () => row(stateDir, `p${round}`)?.status === "exited");
      const [a, b] = await Promise.all([ktAsync(["read", "f.txt"], env), ktAsync(["read", "f.txt"], env)]);
      const line = new RegExp(`^${esc(`[Process p${round} (${command}) exited with code ${round} after `)}\\d\\d:\\d\\d${esc(`. Use ps read p${round} for its output.]`)}$`, "m");
      expect([a, b].filter((r) => line.test(r.stdout)).length).toBe(1);
      const third = await ktAsync(["read", "f.txt"], env);
      expect(third.stdout).toBe(`${cwd}/f.txt\n     1→x\n`);
    }
  });

  test("a notice ends any result, even an error; a list that showed the exit counts as delivered", async () => {
    const { stateDir, cwd, run } = setup();
    await run("ps", "start", `echo a; ${gate("go")}; exit 2`);
    writeFileSync(join(cwd, "go"), "");
    await until("the exit", () => row(stateDir, "p1")?.status === "exited");
    const err = await run("read", "missing.txt");
    expect(err.exitCode).toBe(1);
    expect(norm(err.stdout, cwd)).toEndWith(`\n\n[Process p1 (echo a; ${gate("go")}; exit 2) exited with code 2 after <clock>. Use ps read p1 for its output.]\n`);
    await run("ps", "start", `echo b; ${gate("go2")}; exit 3`);
    writeFileSync(join(cwd, "go2"), "");
    await until("the exit", () => row(stateDir, "p2")?.status === "exited");
    expect(row(stateDir, "p2")!.notified).toBe(0);
    const list = await run("ps", "list");
    expect(list.stdout).not.toContain("[Process");
    expect((await run("bash", "true")).stdout).not.toContain("[Process");
  });

  test("sessions are separate", async () => {
    const a = setup("alpha");
    await a.run("ps", "start", `echo a; ${gate("go")}; exit 1`);
    writeFileSync(join(a.cwd, "go"), "");
    await until("the exit", () => row(a.stateDir, "p1")?.status === "exited");
    const other = await ktAsync(["ps", "list"], { ...a.env, session: "beta" });
    expect(other.stdout).toBe(`No background processes in this session. Start one with {"action":"start","command":"..."}.\n`);
    expect((await a.run("ps", "list")).stdout).toContain(`p1  ${shortCommand(`echo a; ${gate("go")}; exit 1`, 40)}  exited  code 1`);
  });
});

describe("limits and guards", () => {
  test("the ninth concurrent start is refused (golden)", async () => {
    const { run, text } = setup();
    for (let i = 1; i <= 8; i++) expect((await run("ps", "start", `echo up ${i}; exec sleep 60`)).exitCode).toBe(0);
    const ninth = await run("ps", "start", "echo nine");
    expect(ninth.exitCode).toBe(1);
    expect(ninth.stdout).toBe(
      `Refusing to start another process: 8 are already running in this session, the most allowed (8). Running: ${Array.from({ length: 8 }, (_, i) => `p${i + 1} (echo up ${i + 1}; exec sleep 60)`).join(", ")}. Stop one you no longer need with {"action":"stop","id":"p1"}, or use bash for a command that finishes on its own.\n`,
    );
    await run("ps", "stop", "p3");
    expect(await text("ps", "start", "echo nine; exec sleep 60")).toStartWith("Started p9 (pid <pid>): echo nine; exec sleep 60\n");
  }, 30_000);

  test("unknown ids (golden)", async () => {
    const { run } = setup();
    const none = await run("ps", "read", "p7");
    expect(none.exitCode).toBe(1);
    expect(none.stdout).toBe(`No process "p7". Active: none. Use {"action":"list"} to see all.\n`);
    await run("ps", "start", "echo dev; exec sleep 60");
    expect((await run("ps", "stop", "p7")).stdout).toBe(`No process "p7". Active: p1 (echo dev; exec sleep 60, running). Use {"action":"list"} to see all.\n`);
    expect((await run("ps", "read")).stdout).toBe(`Invalid input for tool "process": action "read" needs parameter "id", the process id (e.g. "p3"). Please rewrite the input so it satisfies the expected schema.\n`);
  });

  test("the PID-reuse guard: a recorded pid now owned by another process reads as lost and is never signalled", async () => {
    const { stateDir, run, text } = setup();
    await run("ps", "list");
    const db = new Database(join(stateDir, "index.db"));
    db.exec("PRAGMA busy_timeout = 5000");
    db.query(
      `INSERT INTO processes (session, id, seq, origin, command, cwd, log_path, stdin_path, pid, pid_start, supervisor_pid, supervisor_start, status, started_at)
       VALUES ('default', 'p1', 1, 'ps', 'npm run dev', '/tmp', '/nonexistent/p1.log', NULL, ?, 'bogus:1', ?, 'bogus:1', 'running', ?)`,
    ).run(process.pid, process.pid, Date.now() - 60_000);
    db.query("INSERT INTO process_seq (session, next) VALUES ('default', 2)").run();
    db.close();
    expect(await text("ps", "list")).toBe("PROCESSES\np1  npm run dev  lost  pid <pid> gone, exit not recorded\n");
    expect(await text("ps", "stop", "p1")).toBe(
      "p1 (npm run dev) is not running: p1 is gone: it stopped running without its exit being recorded (killed from outside, or the machine restarted). Nothing to stop.\n",
    );
    expect(row(stateDir, "p1")!.status).toBe("lost");
  });

  test("a process whose supervisor was killed and which then died reads as lost", async () => {
    const { stateDir, run, text } = setup();
    await text("ps", "start", "echo up; exec sleep 60");
    const r = rows(stateDir)[0]! as ReturnType<typeof rows>[number] & { supervisor_pid: number };
    process.kill(r.supervisor_pid, "SIGKILL");
    await until("the supervisor to die", () => groupAlive(r.supervisor_pid).length === 0);
    expect(await text("ps", "list")).toMatch(/^PROCESSES\np1 {2}echo up; exec sleep 60 {2}running {2}<clock> {2}pid <pid>\n$/);
    process.kill(-r.pid!, "SIGKILL");
    await until("the command to die", () => groupAlive(r.pid!).length === 0);
    // The next result of any tool announces the loss once (issue 18 item 5), with the word in metadata.
    const read = JSON.parse((await run("glob", "*.none", "--json")).stdout);
    expect(read.content).toEndWith("[Process p1 (echo up; exec sleep 60) is gone: it stopped running without its exit being recorded (killed from outside, or the machine restarted). Use ps read p1 for its output.]");
    expect(read.metadata.extra.ended).toEqual([{ id: "p1", status: "lost" }]);
    expect(await text("ps", "list")).toBe("PROCESSES\np1  echo up; exec sleep 60  lost  pid <pid> gone, exit not recorded\n");
    // metadata carries the same word as the list (issue 18 item 5).
    expect(JSON.parse((await run("ps", "list", "--json")).stdout).metadata.extra.statuses).toEqual({ p1: "lost" });
    expect(JSON.parse((await run("ps", "read", "p1", "--json")).stdout).metadata.extra.status).toBe("lost");
  });

  test("a process bash moved to the background takes no input (golden)", async () => {
    const { run } = setup();
    await run("bash", "--timeout", "100", "sleep 0.3; sleep 60");
    const w = await run("ps", "write", "p1", "x\\n");
    expect(w.exitCode).toBe(1);
    expect(w.stdout).toBe(`p1 takes no input: it was moved to the background by bash, which runs commands with stdin closed. To talk to a program, start it with {"action":"start","command":"..."} and write to that process.\n`);
  });

  test("ps start is the way to run what bash refuses; an empty command is invalid", async () => {
    const { run } = setup();
    const r = await run("ps", "start");
    expect(r.stdout).toBe(`Invalid input for tool "process": action "start" needs parameter "command", the shell command to launch. Please rewrite the input so it satisfies the expected schema.\n`);
  });
});

describe("kt session end", () => {
  test("stops the session's processes, saying so, and removes its state", async () => {
    const { stateDir, cwd, run } = setup();
    writeFileSync(join(cwd, "f.txt"), "x\n");
    await run("read", "f.txt");
    await run("ps", "start", "echo one; exec sleep 60");
    await run("ps", "start", "echo two; exec sleep 60");
    const pids = rows(stateDir).map((r) => r.pid!);
    const end = await run("session", "end");
    expect(end.exitCode).toBe(0);
    expect(end.stderr).toBe("kt session: Stopping p1 (echo one; exec sleep 60, pid " + pids[0] + ").\nkt session: Stopping p2 (echo two; exec sleep 60, pid " + pids[1] + ").\n");
    expect(end.stdout).toMatch(/^Ended session "default": stopped 2 processes, removed 1 file stamp and 2 files \(\d+ bytes\)\.\n$/);
    for (const pid of pids) expect(groupAlive(pid)).toEqual([]);
    expect(rows(stateDir)).toEqual([]);
    expect(existsSync(join(stateDir, "sessions", "default"))).toBe(false);
    expect((await run("ps", "list")).stdout).toBe(`No background processes in this session. Start one with {"action":"start","command":"..."}.\n`);
    expect((await run("session", "bogus")).exitCode).toBe(2);
  });
});

describe("pruning", () => {
  test("32 entries are kept: the oldest finished ones go with their logs, running ones never", async () => {
    const { stateDir, run } = setup();
    await run("ps", "start", "echo keep; exec sleep 60");
    for (let i = 2; i <= 34; i++) await run("ps", "start", `exit ${i % 7}`);
    const ids = rows(stateDir).filter((r) => r.id !== null).map((r) => r.id);
    expect(ids.length).toBe(32);
    expect(ids).toContain("p1");
    expect(ids).not.toContain("p2");
    expect(ids).not.toContain("p3");
    expect(existsSync(join(stateDir, "sessions/default/proc/p2.log"))).toBe(false);
    expect(existsSync(join(stateDir, "sessions/default/proc/p4.log"))).toBe(true);
    expect((await run("ps", "read", "p2")).stdout).toStartWith(`No process "p2". Active: p1 (echo keep; exec sleep 60, running).`);
  }, 30_000);
});
