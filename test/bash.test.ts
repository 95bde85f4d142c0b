// bash: output shape, process hygiene, guards, truncation, the timeout hand-over and the
// firehose — in-process and through the compiled binary, each kt call its own process.
import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadTool } from "../src/tools/registry.ts";
import type { ToolContext } from "../src/tools/tool.ts";
import { callTool, kt } from "./_helpers.ts";
import { endSandboxes, groupAlive, ktAsync, norm, row, rows, sandbox, until } from "./_process.ts";

function setup() {
  const { tmp, stateDir, cwd } = sandbox();
  return { tmp, stateDir, cwd, opts: { cwd, stateDir } };
}

afterEach(endSandboxes);

function killPid(pid: number) {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // Gone.
  }
}

describe("bash output", () => {
  test("command line, interleaved output, exit line; a non-zero exit is no tool error (golden, in-process and CLI)", async () => {
    const { cwd, opts } = setup();
    const command = "echo out1; echo err1 >&2; echo out2; exit 3";
    const r = await callTool("bash", { command }, opts);
    expect(r.isError).toBe(false);
    expect(norm(r.content, cwd)).toBe(`$ ${command}\nout1\nerr1\nout2\n[exit code 3 · <s> · cwd <tmp>]`);
    expect(r.metadata.exitCode).toBe(3);
    expect(r.metadata.extra).toMatchObject({ cwd, exitCode: 3 });
    expect(r.metadata.title).toMatch(/^Run echo out1; echo err1 >&2; echo out2; exit 3 · exit 3 · \d+\.\ds$/);
    const cli = kt(["bash", command], opts);
    expect(cli.exitCode).toBe(0);
    expect(norm(cli.stdout, cwd)).toBe(`${norm(r.content, cwd)}\n`);
  });

  test("no output, and an exit by signal", async () => {
    const { cwd, opts } = setup();
    expect(norm((await callTool("bash", { command: "true" }, opts)).content, cwd)).toBe("$ true\n[exit code 0 · <s> · cwd <tmp>]");
    const killed = await callTool("bash", { command: "echo bye; kill -9 $$" }, opts);
    expect(norm(killed.content, cwd)).toBe("$ echo bye; kill -9 $$\nbye\n[killed by SIGKILL · <s> · cwd <tmp>]");
    expect(killed.metadata.exitCode).toBeNull();
  });

  test("fresh bash -c: stdin is closed, own process group, pagers and prompts disarmed", async () => {
    const { opts } = setup();
    const r = await callTool("bash", { command: 'cat; echo "stdin:$?"; [ "$(ps -o pgid= -p $$ | tr -d " ")" = "$$" ] && echo leader; echo "$PAGER $GIT_PAGER $GIT_TERMINAL_PROMPT"; shopt -q login_shell || echo non-login' }, opts);
    expect(r.content.split("\n").slice(1, -1)).toEqual(["stdin:0", "leader", "cat cat 0", "non-login"]);
  });

  test("escape sequences are stripped from the model text", async () => {
    const { opts } = setup();
    const r = await callTool("bash", { command: "printf '\\033[1;31mred\\033[0m plain\\n'" }, opts);
    expect(r.content.split("\n")[1]).toBe("red plain");
  });

  test("the workdir, its aliases, and the errors for a missing or non-directory workdir (golden)", async () => {
    const { cwd, opts } = setup();
    mkdirSync(join(cwd, "sub"));
    writeFileSync(join(cwd, "file.txt"), "x");
    expect((await callTool("bash", { command: "pwd", workdir: "sub" }, opts)).content.split("\n")[1]).toBe(join(cwd, "sub"));
    expect((await callTool("bash", { cmd: "pwd", cwd: join(cwd, "sub"), timeout: 5000 }, opts)).content.split("\n")[1]).toBe(join(cwd, "sub"));
    const missing = await callTool("bash", { command: "pwd", workdir: "nope" }, opts);
    expect(missing.error?.code).toBe("FILE_NOT_FOUND");
    expect(norm(missing.content, cwd)).toBe("Working directory not found: <tmp>/nope. Give an existing directory as workdir, or omit workdir to run in <tmp>.");
    const file = await callTool("bash", { command: "pwd", workdir: "file.txt" }, opts);
    expect(file.error?.code).toBe("NOT_A_DIRECTORY");
    expect(norm(file.content, cwd)).toBe("workdir <tmp>/file.txt is not a directory. Give the directory to run in (e.g. <tmp>), not a file.");
  });

  test("an empty command and a bad timeout are invalid input", async () => {
    const { opts } = setup();
    const empty = await callTool("bash", { command: "  " }, opts);
    expect(empty.error?.code).toBe("INVALID_ARGS");
    expect(empty.content).toBe(`Invalid input for tool "bash": parameter "command" is empty; give the shell command to run. Please rewrite the input so it satisfies the expected schema.`);
    expect((await callTool("bash", { command: "true", timeout_ms: 0 }, opts)).error?.code).toBe("INVALID_ARGS");
    expect((await callTool("bash", { command: "true", timeout_ms: 10_000_000 }, opts)).isError).toBe(false);
  });

  test("refusals happen before anything runs", async () => {
    const { cwd, opts } = setup();
    const r = await callTool("bash", { command: "vim x && touch ran" }, opts);
    expect(r.error?.code).toBe("INTERACTIVE_COMMAND");
    const s = await callTool("bash", { command: "cd /tmp" }, opts);
    expect(s.error?.code).toBe("STATE_ONLY_COMMAND");
    expect(rows(opts.stateDir)).toEqual([]);
    expect(() => statSync(join(cwd, "ran"))).toThrow();
  });

  test("command not found gets the nearest name on PATH (golden, CLI)", () => {
    const { tmp, cwd, stateDir } = setup();
    const bin = join(tmp, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "frobnicate"), "#!/bin/sh\necho frob\n");
    chmodSync(join(bin, "frobnicate"), 0o755);
    const r = kt(["bash", "frobnicat --all"], { cwd, stateDir, env: { PATH: `${bin}:/usr/bin:/bin` } });
    expect(norm(r.stdout, cwd)).toBe(
      `$ frobnicat --all\nbash: line 1: frobnicat: command not found\n[exit code 127 · <s> · cwd <tmp>]\n"frobnicat" is not a command on PATH. Did you mean "frobnicate"?\n`,
    );
  });

  test("a finished command leaves no process entry behind", async () => {
    const { opts } = setup();
    await callTool("bash", { command: "echo hi" }, opts);
    expect(rows(opts.stateDir)).toEqual([]);
    expect((await callTool("ps", { action: "list" }, opts)).content).toBe(`No background processes in this session. Start one with {"action":"start","command":"..."}.`);
  });
});

describe("bash truncation", () => {
  test("over 400 lines: head 250, marker, tail 150, the full text in the spill file (golden)", async () => {
    const { tmp, opts } = setup();
    const r = await callTool("bash", { command: "seq 1 1000" }, { ...opts, callId: "call-7" });
    const spill = join(opts.stateDir, "sessions", "default", "spill", "bash-call-7.txt");
    const lines = r.content.split("\n");
    expect(lines[0]).toBe("$ seq 1 1000");
    expect(lines.slice(1, 251)).toEqual(Array.from({ length: 250 }, (_, i) => String(i + 1)));
    expect(norm(lines[251]!, tmp)).toBe(`[... 600 lines omitted (2 KB). Full output: <tmp>/state/sessions/default/spill/bash-call-7.txt — read or grep that file for the rest.]`);
    expect(lines.slice(252, 402)).toEqual(Array.from({ length: 150 }, (_, i) => String(851 + i)));
    expect(lines.length).toBe(403);
    expect(readFileSync(spill, "utf8")).toBe(Array.from({ length: 1000 }, (_, i) => String(i + 1)).join("\n"));
    expect(r.metadata.truncation).toEqual({ originalBytes: 3892, originalLines: 1000, shownHeadLines: 250, shownTailLines: 150, omittedLines: 600, spillPath: spill });
  });

  test("a firehose: kt's memory stays bounded and the log keeps every byte", async () => {
    const { cwd, stateDir } = setup();
    const small = await ktAsync(["bash", "true"], { cwd, stateDir });
    const total = 300_000_000;
    const big = await ktAsync(["bash", "--json", `yes | head -c ${total}`], { cwd, stateDir });
    expect(big.exitCode).toBe(0);
    const result = JSON.parse(big.stdout);
    const spill = result.metadata.truncation.spillPath as string;
    expect(statSync(spill).size).toBe(total);
    expect(result.metadata.truncation.originalLines).toBe(total / 2);
    expect(result.metadata.exitCode).toBe(0);
    const lines = (result.content as string).split("\n");
    expect(lines.length).toBe(1 + 250 + 1 + 150 + 1);
    expect(lines[251]).toStartWith(`[... ${(total / 2 - 400).toLocaleString("en-US")} lines omitted`);
    // Nothing of the 300 MB passes through kt: its peak memory is that of a trivial call.
    console.log(`kt bash true peak RSS ${(small.maxRSS / 2 ** 20).toFixed(1)} MB; 300 MB firehose ${(big.maxRSS / 2 ** 20).toFixed(1)} MB`);
    expect(big.maxRSS - small.maxRSS).toBeLessThan(48 * 1024 * 1024);
  }, 60_000);
});

describe("processes the command leaves behind", () => {
  test("a background grandchild holding the output open does not hang bash", async () => {
    const { cwd, opts } = setup();
    const started = performance.now();
    const r = await callTool("bash", { command: "sleep 30 & echo $!" }, opts);
    const r2 = await callTool("bash", { command: `(sleep 30 & echo $! > ${cwd}/pid) ; echo ok` }, opts);
    try {
      expect(performance.now() - started).toBeLessThan(15_000);
      expect(r.content).toMatch(/^\$ sleep 30 & echo \$!\n\d+\n\[exit code 0 · /);
      expect(r2.content.split("\n")[1]).toBe("ok");
    } finally {
      killPid(Number(r.content.split("\n")[1]));
      killPid(Number(readFileSync(join(cwd, "pid"), "utf8")));
    }
  });
});

describe("the timeout hand-over", () => {
  test("the command becomes pN, and its output continues with nothing lost or duplicated (CLI, golden)", async () => {
    const { tmp, cwd, stateDir } = setup();
    const env = { cwd, stateDir };
    const r = await ktAsync(["bash", "--timeout", "500", "echo start; sleep 2; echo done"], env);
    const handOver = (soFar: string) =>
      `Command still running after 0.5s — moved to background as process p1.\nOutput so far:\n${soFar}\nUse process {"action":"read","id":"p1"} to see new output, or {"action":"stop","id":"p1"} to stop it.\n`;
    // On a loaded machine "start" may not be out within 0.5 s; then the read must bring it.
    const early = r.stdout === handOver("start");
    if (!early) expect(r.stdout).toBe(handOver("(no output yet)"));
    const list = await ktAsync(["ps", "list"], env);
    expect(norm(list.stdout, cwd)).toMatch(/^PROCESSES\np1 {2}echo start; sleep 2; echo done {2}running {2}<clock> {2}pid <pid>\n$/);
    await until("p1 to end", () => row(stateDir, "p1")?.status === "exited");
    const read = await ktAsync(["ps", "read", "p1"], env);
    expect(norm(read.stdout, tmp)).toBe(
      `Output of p1 since last read (lines ${early ? "2–2" : "1–2"} of 2):\n${early ? "" : "start\n"}done\np1 exited with code 0 after <clock>. Full log: <tmp>/state/sessions/default/proc/bash-<name>.log\n`,
    );
    const log = row(stateDir, "p1")!.log_path;
    expect(readFileSync(log, "utf8")).toBe("start\ndone\n");
    // The read showed the exit: no completion notice follows.
    const next = await ktAsync(["ps", "list"], env);
    expect(next.stdout).not.toContain("[Process");
  });

  test("a command that ends right at the budget is an ordinary result, never both", async () => {
    const { opts } = setup();
    for (let i = 0; i < 3; i++) {
      const r = await callTool("bash", { command: "sleep 0.2; echo x", timeout_ms: 200 }, opts);
      if (r.metadata.processId) {
        expect(r.content).toStartWith("Command still running after 0.2s — moved to background as process");
        await until("it to end", () => row(opts.stateDir, r.metadata.processId!)?.status === "exited");
        const read = await callTool("ps", { action: "read", id: r.metadata.processId }, opts);
        expect(read.content.split("\n").filter((l) => l === "x").length + r.content.split("\n").filter((l) => l === "x").length).toBe(1);
      } else {
        expect(r.content).toMatch(/^\$ sleep 0.2; echo x\nx\n\[exit code 0 · /);
      }
    }
  });
});

describe("regressions", () => {
  test("a relative KT_STATE_DIR: the supervisor (which runs from /) still records into the same index", async () => {
    const { tmp } = setup();
    const env = { cwd: tmp, stateDir: "state" };
    const r = await ktAsync(["bash", "--timeout", "200", "sleep 0.4; echo late"], env);
    expect(r.stdout).toStartWith("Command still running after 0.2s — moved to background as process p1.");
    await until("p1 to end", () => row(join(tmp, "state"), "p1")?.status === "exited");
    expect((await ktAsync(["ps", "read", "p1"], env)).stdout).toStartWith("Output of p1 since last read (lines 1–1 of 1):\nlate\np1 exited with code 0");
    expect(row(join(tmp, "state"), "p1")!.log_path).toStartWith(`${tmp}/state/`);
  });
});

describe("cancellation", () => {
  test("an aborted call stops the command's whole process group", async () => {
    const { opts } = setup();
    const tool = (await loadTool("bash"))!;
    const controller = new AbortController();
    const ctx: ToolContext = {
      cwd: opts.cwd,
      session: "default",
      callId: "c1",
      stateDir: opts.stateDir,
      flags: { skipReadCheck: false, dryRun: false, trace: false, strict: false },
      signal: controller.signal,
      warn: () => {},
    };
    const running = tool.run({ command: "echo begun; sleep 30 & sleep 30" }, ctx);
    const pid = await until("the command to start", () => rows(opts.stateDir)[0]?.pid ?? undefined);
    controller.abort();
    const r = await running;
    expect(r.error?.code).toBe("CANCELLED");
    expect(r.content).toBe("[Tool execution cancelled by user] The command was stopped (its process group got SIGTERM).\n$ echo begun; sleep 30 & sleep 30\nbegun");
    expect(groupAlive(pid)).toEqual([]);
    expect(rows(opts.stateDir)).toEqual([]);
  });
});
