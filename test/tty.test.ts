// Terminals (SPEC §7.4) end to end through the compiled binary: every step is its own kt
// process, as an agent framework would run it. A program a test needs that is not installed
// skips that test, naming the program (.ci/run installs them).
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { endSandboxes, ktAsync, norm, row, sandbox, until } from "./_process.ts";

function setup() {
  const { tmp, stateDir, cwd } = sandbox();
  const env = { cwd, stateDir };
  /** One kt call with a JSON input, as a framework makes it. */
  const ps = async (input: Record<string, unknown>) => {
    const r = await ktAsync(["ps", "--json"], { ...env, stdin: JSON.stringify(input) });
    const envelope = JSON.parse(r.stdout) as { content: string; isError: boolean; error?: { code: string }; metadata?: Record<string, unknown> };
    return { ...envelope, text: norm(envelope.content, tmp) };
  };
  const bash = async (input: Record<string, unknown>) => {
    const r = await ktAsync(["bash", "--json"], { ...env, stdin: JSON.stringify(input) });
    return JSON.parse(r.stdout) as { content: string; isError: boolean; error?: { code: string } };
  };
  /** Polls the screen of `id` until `ok` holds for it (each poll is a kt call). */
  const screenUntil = async (id: string, what: string, ok: (screen: string) => boolean, ms = 10_000) => {
    let last = "";
    const deadline = performance.now() + ms;
    for (;;) {
      last = (await ps({ action: "read", id, screen: true })).content;
      if (ok(last)) return last;
      if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}; last screen:\n${last}`);
      await Bun.sleep(100);
    }
  };
  const log = (id: string) => join(stateDir, "sessions/default/proc", `${id}.log`);
  return { tmp, stateDir, cwd, env, ps, bash, screenUntil, log };
}

afterEach(endSandboxes);

const has = (program: string) => Bun.which(program) !== null;
/** A test that needs `program`: skipped, with the reason in its name, where it is missing. */
function needs(program: string, name: string, body: () => Promise<void>, timeout = 60_000) {
  if (has(program)) test(name, body, timeout);
  else test.skip(`${name} — skipped: ${program} is not installed (apt-get install ${program === "top" ? "procps" : program})`, body);
}

describe("programs that need a terminal", () => {
  needs("python3", "python3 without -i answers over a PTY, and the REPL ends on Ctrl-D", async () => {
    const { ps, stateDir } = setup();
    const started = await ps({ action: "start", command: "python3", tty: true });
    expect(started.text).toStartWith(`Started p1 (pid <pid>, on a 120×40 terminal): python3\ncwd <tmp>/work · log <tmp>/state/sessions/default/proc/p1.log\n`);
    expect(started.text).toEndWith(`Use process {"action":"read","id":"p1"} for new output, {"action":"read","id":"p1","screen":true} for the screen, {"action":"write","id":"p1","keys":["Enter"]} to type.`);
    const answered = await ps({ action: "write", id: "p1", input: "print(6*7)\n" });
    let seen = answered.content;
    await until("the answer 42", async () => {
      if (/^42$/m.test(seen)) return true;
      seen += (await ps({ action: "read", id: "p1" })).content;
      return false;
    });
    expect(seen).toMatch(/^>>>/m);
    // Ctrl-D is the byte itself on a terminal: the REPL reads end of input and exits.
    await ps({ action: "write", id: "p1", keys: ["C-d"] });
    const ended = await until("python3 to exit", () => (row(stateDir, "p1")?.status === "exited" ? true : undefined));
    expect(ended).toBe(true);
  });

  needs("vim", "vim opens a file, takes typing and :wq — the file changed", async () => {
    const { ps, cwd, screenUntil, stateDir } = setup();
    writeFileSync(join(cwd, "a.txt"), "hello\n");
    await ps({ action: "start", command: "vim -u NONE -i NONE -N a.txt", tty: true, cols: 80, rows: 12 });
    await screenUntil("p1", "vim's status line", (s) => s.includes('"a.txt"'));
    const typed = await ps({ action: "write", id: "p1", input: "Goworld", keys: ["Esc"] });
    expect(typed.text).toStartWith("Sent 8 bytes to p1's terminal (the input, then keys Esc).\n");
    const screen = await screenUntil("p1", "the typed line", (s) => /^hello\nworld\n~/m.test(s.split("\n").slice(1).join("\n")));
    expect(screen).toMatch(/^Screen of p1 \(80×12, cursor at row 2, column \d+\):\nhello\nworld\n~\n/);
    await ps({ action: "write", id: "p1", input: ":wq", keys: ["Enter"] });
    await until("vim to exit", () => row(stateDir, "p1")?.status === "exited");
    expect(row(stateDir, "p1")!.exit_code).toBe(0);
    expect(readFileSync(join(cwd, "a.txt"), "utf8")).toBe("hello\nworld\n");
  });

  needs("top", "top's screen shows its header; q quits it", async () => {
    const { ps, screenUntil, stateDir } = setup();
    await ps({ action: "start", command: "top -d 1", tty: true, cols: 100, rows: 20 });
    const screen = await screenUntil("p1", "top's header", (s) => /\ntop - \d\d:\d\d:\d\d up /.test(s) && /\nTasks: +\d+ total/.test(s) && /\n +PID USER /.test(s));
    expect(screen).toMatch(/^Screen of p1 \(100×20, cursor at row \d+, column \d+\):\n/);
    await ps({ action: "write", id: "p1", keys: ["q"] });
    await until("top to exit", () => row(stateDir, "p1")?.status === "exited");
  });

  needs("less", "less pages with Space and quits with q", async () => {
    const { ps, cwd, screenUntil, stateDir } = setup();
    writeFileSync(join(cwd, "n.txt"), Array.from({ length: 200 }, (_, i) => `line ${i + 1}`).join("\n") + "\n");
    await ps({ action: "start", command: "less n.txt", tty: true, cols: 80, rows: 10 });
    await screenUntil("p1", "the first page", (s) => s.split("\n")[1] === "line 1");
    const paged = await ps({ action: "write", id: "p1", keys: ["Space"] });
    // less is a full-screen program: the answer to a key is its screen.
    let screen = paged.content.split("\n").slice(1).join("\n");
    if (!screen.startsWith("Screen of p1")) screen = await screenUntil("p1", "the second page", (s) => s.split("\n")[1] === "line 10");
    expect(screen.split("\n").slice(1, 10)).toEqual(Array.from({ length: 9 }, (_, i) => `line ${i + 10}`));
    await ps({ action: "write", id: "p1", keys: ["q"] });
    await until("less to exit", () => row(stateDir, "p1")?.status === "exited");
    expect(row(stateDir, "p1")!.exit_code).toBe(0);
  });

  needs("tput", "ps resize is seen by tput cols, and recorded beside the log", async () => {
    const { ps, log } = setup();
    await ps({ action: "start", command: "while read l; do echo \"size $(tput cols)x$(tput lines)\"; done", tty: true, cols: 90, rows: 30 });
    const collect = async (want: string) => {
      let seen = (await ps({ action: "write", id: "p1", keys: ["Enter"] })).content;
      await until(want, async () => {
        if (seen.includes(want)) return true;
        seen += (await ps({ action: "read", id: "p1" })).content;
        return false;
      });
    };
    await collect("size 90x30");
    const resized = await ps({ action: "resize", id: "p1", cols: 70, rows: 20 });
    expect(resized.text).toStartWith("Resized p1's terminal from 90×30 to 70×20.\n");
    await collect("size 70x20");
    expect(readFileSync(log("p1").replace(/\.log$/, ".term"), "utf8")).toMatch(/^0 90 30\n\d+ 70 20\n$/);
    const listed = await ps({ action: "list" });
    expect(listed.text).toMatch(/ {2}pid <pid> {2}tty 70×20\n?$/);
  });

  test("colour is stripped from what the model reads, and kept in the log", async () => {
    const { ps, log } = setup();
    const started = await ps({ action: "start", command: `printf '\\033[31mred\\033[0m \\033[1;32mgreen bold\\033[0m\\nprogress 10%%\\rprogress 100%%\\n'; [ -t 1 ] && echo on-a-tty`, tty: true });
    expect(started.text).toBe(`Process p1 exited immediately with code 0:\n  red green bold\n  progress 100%\n  on-a-tty\ncwd <tmp>/work · log <tmp>/state/sessions/default/proc/p1.log`);
    const raw = readFileSync(log("p1"), "utf8");
    expect(raw).toContain("\x1b[31mred\x1b[0m \x1b[1;32mgreen bold\x1b[0m\r\n");
    expect(raw).toContain("progress 10%\rprogress 100%\r\n");
    const page = await ps({ action: "read", id: "p1", offset: 1 });
    expect(page.text).toStartWith("Output of p1, lines 1–3 of 3:\nred green bold\nprogress 100%\non-a-tty\n");
  });

  test("Ctrl-C through keys interrupts a running program", async () => {
    const { ps, stateDir } = setup();
    await ps({ action: "start", command: "trap 'echo interrupted; exit 3' INT; echo ready; while :; do sleep 0.1; done", tty: true });
    const sent = await ps({ action: "write", id: "p1", keys: ["C-c"] });
    await until("the program to end", () => row(stateDir, "p1")?.status === "exited");
    const all = sent.content + (await ps({ action: "read", id: "p1" })).content;
    expect(all).toContain("interrupted");
    expect(row(stateDir, "p1")!.exit_code).toBe(3);
  });

  test("bash with tty runs the command on a terminal; without it, on pipes", async () => {
    const { bash } = setup();
    const probe = "[ -t 0 ] && [ -t 1 ] && echo terminal $(tput cols) || echo pipes; printf '\\033[35mmagenta\\033[0m\\n'";
    const onTty = await bash({ command: probe, tty: true, cols: 100 });
    expect(onTty.content).toMatch(/^\$ .*\nterminal 100\nmagenta\n\[exit code 0 · \d+\.\ds · cwd .*\]$/);
    const onPipes = await bash({ command: probe });
    expect(onPipes.content).toMatch(/^\$ .*\npipes\nmagenta\n\[exit code 0 /);
  });
});

describe("terminal actions refused with prose", () => {
  test("keys, screen and resize on a process on pipes; an unknown key; cols without tty", async () => {
    const { ps, bash } = setup();
    await ps({ action: "start", command: "cat" });
    const keys = await ps({ action: "write", id: "p1", keys: ["C-c"] });
    expect(keys.error?.code).toBe("INVALID_ARGS");
    expect(keys.text).toBe(
      `p1 (cat) runs on pipes, not on a terminal: named keys mean nothing to it (C-c would reach it as a byte, not as an interrupt). Send text with "input" (a lone \\u0004 closes stdin), stop it with {"action":"stop","id":"p1"}, or start the command with "tty": true to drive it with keys.`,
    );
    const screen = await ps({ action: "read", id: "p1", screen: true });
    expect(screen.text).toBe(`p1 (cat) runs on pipes, not on a terminal: it has no screen. Read its output with {"action":"read","id":"p1"}, or start the command with "tty": true to see its screen.`);
    const resize = await ps({ action: "resize", id: "p1", cols: 80 });
    expect(resize.text).toBe(`p1 (cat) runs on pipes, not on a terminal: it has no window to resize. Start the command with "tty": true (and "cols", "rows") to give it one.`);

    await ps({ action: "start", command: "cat -u", tty: true });
    const unknown = await ps({ action: "write", id: "p2", keys: ["Enter", "Hyper-x"] });
    expect(unknown.error?.code).toBe("INVALID_ARGS");
    expect(unknown.text).toBe(
      `Invalid input for tool "process": keys: "Hyper-x" names no key. Keys are Enter, Tab, S-Tab, Esc, Space, Backspace, Delete, Insert, Up, Down, Left, Right, Home, End, PageUp, PageDown, F1–F12; C-x for Ctrl+x (C-c, C-d, C-z, C-[), M-x for Alt+x; or one character. Send text with "input". Please rewrite the input so it satisfies the expected schema.`,
    );
    const nothing = await ps({ action: "write", id: "p2" });
    expect(nothing.text).toBe(`Invalid input for tool "process": action "write" needs parameter "input" (text to type; end it with \\n to submit a line) or "keys" (named keys such as ["Enter"] or ["C-c"]). Please rewrite the input so it satisfies the expected schema.`);
    const noSize = await ps({ action: "resize", id: "p2" });
    expect(noSize.text).toBe(`Invalid input for tool "process": action "resize" needs "cols" or "rows" (or both), the new terminal size. Please rewrite the input so it satisfies the expected schema.`);

    const sized = await ps({ action: "start", command: "sleep 5", cols: 80 });
    expect(sized.text).toBe(`Invalid input for tool "process": "cols" and "rows" size a terminal: give "tty": true with them to start the command on one, or leave them out for pipes. Please rewrite the input so it satisfies the expected schema.`);
    const bashSized = await bash({ command: "true", rows: 10 });
    expect(bashSized.content).toBe(`Invalid input for tool "bash": "cols" and "rows" size a terminal: give "tty": true with them to run the command on one, or leave them out for pipes. Please rewrite the input so it satisfies the expected schema.`);
  });
});

describe("8 terminals at once", () => {
  test("each printing a firehose: every ps read stays under 4× its idle time, and no output is lost from the logs", async () => {
    const { ps, log, env, stateDir } = setup();
    const { cwd } = env;
    const timed = async (id: string) => {
      const t0 = performance.now();
      const r = await ktAsync(["ps", "read", id], env);
      expect(r.exitCode).toBe(0);
      return performance.now() - t0;
    };
    // Each prints numbered lines as fast as its terminal takes them (paced at 512 KB/s, see
    // src/process/pty.ts), holding still while the file "pause" exists, until "stop" does.
    const hose = (n: number) => `i=0; until [ -e stop ]; do while [ -e pause ]; do sleep 0.05; done; seq $i $((i+49999)); i=$((i+50000)); done; echo "done $i ${n}"`;
    // Started at once: a start waits up to 2 s for its output to pause, and a firehose never does.
    const started = await Promise.all(Array.from({ length: 8 }, (_, n) => ps({ action: "start", command: hose(n), tty: true })));
    const ids = started.map((s) => s.metadata?.processId as string);
    expect(new Set(ids).size).toBe(8);
    const sizes = () => ids.map((id) => Bun.file(log(id)).size).join(" ");
    const still = async () => {
      let last = sizes();
      for (let quiet = 0; quiet < 3; ) {
        await Bun.sleep(100);
        const now = sizes();
        quiet = now === last ? quiet + 1 : 0;
        last = now;
      }
    };
    // For each terminal in turn, the same read twice: once while every firehose holds still (its
    // idle time: the output it printed since its last read, read with nothing else running), then
    // of what it printed in the next 300 ms, while all eight print. Taken back to back, so that
    // load from outside the test weighs on both alike.
    const report: string[] = [];
    for (const id of ids) {
      writeFileSync(join(cwd, "pause"), "");
      await still();
      const idle = await timed(id);
      rmSync(join(cwd, "pause"));
      await Bun.sleep(300);
      const loaded = await timed(id);
      report.push(`${id} ${idle.toFixed(0)}→${loaded.toFixed(0)} ms`);
      expect(loaded, `ps read ${id} took ${loaded.toFixed(0)} ms under 8 firehoses against ${idle.toFixed(0)} ms idle`).toBeLessThan(4 * idle);
    }
    if (process.env.KT_TTY_STRESS_REPORT) console.error(`ps read idle→under 8 firehoses: ${report.join(", ")}`);
    for (const id of ids) expect(row(stateDir, id)?.status, `${id} was still printing while it was read`).toBe("running");
    writeFileSync(join(cwd, "stop"), "");
    for (const id of ids) await until(`${id} to end`, () => (row(stateDir, id)?.status === "exited" ? true : undefined), 60_000);
    for (const [n, id] of ids.entries()) {
      const lines = readFileSync(log(id), "utf8").split("\r\n");
      expect(lines.pop()).toBe("");
      const done = /^done (\d+) (\d+)$/.exec(lines.pop()!);
      expect(done?.[2]).toBe(String(n));
      const count = Number(done![1]);
      expect(count).toBeGreaterThanOrEqual(50_000);
      // Every number, in order: nothing lost, nothing doubled.
      expect(lines.length).toBe(count);
      expect(lines.every((l, i) => l === String(i))).toBe(true);
    }
  }, 120_000);
});

test("a finished bash command on a terminal leaves no file behind; a session end removes a terminal's", async () => {
  const { bash, ps, stateDir, env } = setup();
  const proc = join(stateDir, "sessions/default/proc");
  await bash({ command: "echo hi", tty: true });
  expect(readdirSync(proc)).toEqual([]);
  await ps({ action: "start", command: "exec sleep 60", tty: true });
  expect(readdirSync(proc).sort()).toEqual(["p1.in", "p1.log", "p1.term"]);
  await ktAsync(["session", "end"], env);
  expect(existsSync(proc)).toBe(false);
});
