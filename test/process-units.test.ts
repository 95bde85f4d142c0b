// Small pieces of the process layer: the shared size cap, notice lines, time formats, the
// unescaping of `kt ps write` arguments, and the identity of a pid.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openIndex } from "../src/core/state.ts";
import { enforceCap } from "../src/process/diskcap.ts";
import { endDetail, endedStatus, endWord, exitCause, leftDetail, shellEnd } from "../src/process/ending.ts";
import { commandEnv, markerValue, NO_EDITOR, NO_EDITOR_MESSAGE, parseMarker } from "../src/process/env.ts";
import { budget, clock, seconds, shortCommand } from "../src/process/format.ts";
import { isSameProcess, processStart } from "../src/process/identity.ts";
import { noticeLine } from "../src/process/notices.ts";
import { missingCommands } from "../src/process/not-found.ts";
import { unescape } from "../src/tools/ps.ts";
import { tempDir } from "./_helpers.ts";

describe("the size cap on spill files and logs", () => {
  test("the oldest sessions' files go first; a log still being written stays", () => {
    using tmp = tempDir();
    const state = tmp.path;
    const db = openIndex(state, { warn: () => {} });
    const file = (session: string, sub: string, name: string, bytes: number, ageS: number) => {
      const dir = join(state, "sessions", session, sub);
      mkdirSync(dir, { recursive: true });
      const path = join(dir, name);
      writeFileSync(path, Buffer.alloc(bytes));
      const t = new Date(Date.now() - ageS * 1000);
      utimesSync(path, t, t);
      return path;
    };
    const oldLive = file("old", "proc", "p1.log", 400, 300);
    const oldSpill = file("old", "spill", "bash-1.txt", 400, 290);
    const midSpill = file("mid", "spill", "bash-2.txt", 400, 200);
    const newSpill = file("new", "spill", "bash-3.txt", 400, 10);
    db.query(`INSERT INTO processes (session, id, seq, origin, command, cwd, log_path, status, started_at) VALUES ('old', 'p1', 1, 'ps', 'x', '/', ?, 'running', 0)`).run(oldLive);
    expect(enforceCap(state, db, 900)).toBe(800);
    expect([oldLive, oldSpill, midSpill, newSpill].map(existsSync)).toEqual([true, false, false, true]);
    expect(enforceCap(state, db, 10_000)).toBe(0);
  });
});

describe("notice lines (golden)", () => {
  const base = { key: 1, id: "p3", command: "npm run dev", error: null, started_at: 0, ended_at: 372_000 };
  test("each way a process can end", () => {
    expect(noticeLine({ ...base, status: "exited", exit_code: 1, signal: null })).toBe("[Process p3 (npm run dev) exited with code 1 after 06:12. Use ps read p3 for its output.]");
    expect(noticeLine({ ...base, status: "exited", exit_code: null, signal: "SIGKILL" })).toBe("[Process p3 (npm run dev) was killed by SIGKILL after 06:12. Use ps read p3 for its output.]");
    expect(noticeLine({ ...base, status: "killed", exit_code: null, signal: "SIGSEGV" })).toBe("[Process p3 (npm run dev) was killed by SIGSEGV after 06:12. Use ps read p3 for its output.]");
    expect(noticeLine({ ...base, status: "stopped", exit_code: null, signal: "SIGTERM" })).toBe("[Process p3 (npm run dev) was stopped by ps stop after 06:12 (it ended on SIGTERM). Use ps read p3 for its output.]");
    expect(noticeLine({ ...base, status: "stopped", exit_code: 0, signal: null })).toBe("[Process p3 (npm run dev) was stopped by ps stop after 06:12 (it exited with code 0). Use ps read p3 for its output.]");
    expect(noticeLine({ ...base, status: "failed", exit_code: null, signal: null, error: "No such file or directory" })).toBe("[Process p3 (npm run dev) failed to start: No such file or directory.]");
    expect(noticeLine({ ...base, status: "lost", exit_code: null, signal: null })).toBe(
      "[Process p3 (npm run dev) is gone: it stopped running without its exit being recorded (killed from outside, or the machine restarted). Use ps read p3 for its output.]",
    );
  });
});

describe("formats", () => {
  test("clock, seconds, budget, exit phrase, short command", () => {
    expect([clock(0), clock(59_999), clock(372_000), clock(3_723_000)]).toEqual(["00:00", "00:59", "06:12", "1:02:03"]);
    expect([seconds(3210), seconds(45), seconds(123_456)]).toEqual(["3.2s", "0.0s", "123s"]);
    expect([budget(120_000), budget(500), budget(1500)]).toEqual(["120s", "0.5s", "1.5s"]);
    expect([exitCause({ exit_code: 0, signal: null }), exitCause({ exit_code: null, signal: "SIGTERM" })]).toEqual(["code 0", "SIGTERM"]);
    expect(shortCommand("npm   run\n dev")).toBe("npm run dev");
    expect(shortCommand("x".repeat(70))).toBe(`${"x".repeat(59)}…`);
  });
  test("kt ps write arguments: backslash escapes decoded", () => {
    expect(unescape("q\\n")).toBe("q\n");
    expect(unescape("a\\tb\\r\\n\\\\n\\x04\\e[A")).toBe("a\tb\r\n\\n\x04\x1b[A");
    expect(unescape("plain")).toBe("plain");
  });
  test("names bash reports as not found", () => {
    expect(missingCommands("bash: line 1: npmm: command not found\nbash: line 2: gti: command not found\n")).toEqual(["npmm", "gti"]);
    expect(missingCommands("all fine")).toEqual([]);
  });
});

describe("pid identity", () => {
  test("this process is itself, a wrong start time is not, a dead pid is nobody", async () => {
    const start = processStart(process.pid);
    expect(start).toBeDefined();
    expect(isSameProcess(process.pid, start!)).toBe(true);
    expect(isSameProcess(process.pid, "bogus:1")).toBe(false);
    expect(isSameProcess(null, start!)).toBe(false);
    const child = Bun.spawn(["true"]);
    await child.exited;
    expect(processStart(child.pid)).toBeUndefined();
  });
});

describe("18.4 the command environment (unit)", () => {
  test("kt's variables and NO_COLOR are dropped, pagers disarmed, the marker set", () => {
    const env = commandEnv({ PATH: "/bin", KT_STATE_DIR: "/s", KT_SESSION: "x", KT_THREADS: "4", NO_COLOR: "1", __KT_PROCESS: "1@/outer", HOME: "/h", NOT_KT_X: "y" }, markerValue("/state", 7));
    // Issue 29 (SPEC §8.7) added the editors that fail, batch-mode ssh for git and Debian's defaults.
    expect(env).toEqual({
      PATH: "/bin", HOME: "/h", NOT_KT_X: "y", PAGER: "cat", GIT_PAGER: "cat", GIT_TERMINAL_PROMPT: "0",
      __KT_NO_EDITOR: NO_EDITOR_MESSAGE, GIT_EDITOR: NO_EDITOR, GIT_SEQUENCE_EDITOR: NO_EDITOR, EDITOR: NO_EDITOR, VISUAL: NO_EDITOR,
      GCM_INTERACTIVE: "never", DEBIAN_FRONTEND: "noninteractive", GIT_SSH_COMMAND: "ssh -o BatchMode=yes", __KT_PROCESS: "7@/state",
    });
    // A caller's own ssh command for git is kept; a terminal ps start drives keeps the caller's editor.
    expect(commandEnv({ GIT_SSH_COMMAND: "ssh -i key" }).GIT_SSH_COMMAND).toBe("ssh -i key");
    expect(commandEnv({ EDITOR: "vim" }, undefined, true)).toEqual({ EDITOR: "vim", PAGER: "cat", GIT_PAGER: "cat" });
    expect(parseMarker("7@/state/with@at")).toEqual({ key: 7, stateDir: "/state/with@at" });
    expect(parseMarker("x@/s")).toBeUndefined();
  });
});

describe("18.5 one word per way a process ends (unit)", () => {
  const base = { error: null, started_at: 0, ended_at: 372_000, pid: 41 };
  test("words, list details and bash's closing line", () => {
    expect(endedStatus(true, "SIGTERM")).toBe("stopped");
    expect(endedStatus(false, "SIGKILL")).toBe("killed");
    expect(endedStatus(false, null)).toBe("exited");
    expect(endWord({ status: "exited", exit_code: null, signal: "SIGKILL" })).toBe("killed");
    expect(endDetail({ ...base, status: "exited", exit_code: 2, signal: null })).toBe("code 2  ran 06:12");
    expect(endDetail({ ...base, status: "killed", exit_code: null, signal: "SIGSEGV" })).toBe("by SIGSEGV  ran 06:12");
    expect(endDetail({ ...base, status: "stopped", exit_code: 0, signal: null })).toBe("by ps stop (code 0)  ran 06:12");
    expect(endDetail({ ...base, status: "failed", exit_code: null, signal: null, error: "boom" })).toBe("could not start: boom");
    expect(endDetail({ ...base, status: "lost", exit_code: null, signal: null })).toBe("pid 41 gone, exit not recorded");
    expect(shellEnd({ status: "killed", exit_code: null, signal: "SIGINT" })).toBe("killed by SIGINT");
    expect(shellEnd({ status: "lost", exit_code: null, signal: null })).toBe("exit code unknown (the process vanished)");
    expect(leftDetail({ exit_code: 0, signal: null }, [{ pid: 5, comm: "node" }])).toBe("shell exited (code 0); left running: pid 5 (node)");
  });
});
