// ps wait (SPEC §8.7, issue 29): a wait that ends at the first new line matching a pattern,
// at the process's end, or at the timeout — each outcome's text golden, in-process and
// through the compiled binary, through kt mcp, and timed against the line's own timestamp.
import { afterEach, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { callTool, KT } from "./_helpers.ts";
import { endSandboxes, ktAsync, norm, sandbox, until } from "./_process.ts";
import { scanner } from "../src/process/watch.ts";

afterEach(endSandboxes);

function setup() {
  const { tmp, stateDir, cwd } = sandbox();
  const env = { cwd, stateDir };
  const run = (...args: string[]) => ktAsync(args, env);
  const text = async (...args: string[]) => norm((await run(...args)).stdout, tmp);
  return { tmp, stateDir, cwd, env, run, text };
}

const LOG = (id: string) => `<tmp>/state/sessions/default/proc/${id}.log`;
const gate = (name: string) => `until [ -e ${name} ]; do sleep 0.01; done`;
const logOf = (stateDir: string, id: string) => readFileSync(join(stateDir, "sessions/default/proc", `${id}.log`), "utf8");

describe("ps wait: the three outcomes (golden)", () => {
  test("a match: the output since the last read up to and including the matching line; what follows stays unread", async () => {
    const { cwd, stateDir, text } = setup();
    expect(await text("ps", "start", `echo booting; ${gate("go")}; echo "compiling"; echo "listening on :8080"; echo "GET /"; exec sleep 60`)).toContain("First output (waited up to 2s):\n  booting\n");
    const waiting = text("ps", "wait", "p1", "listening on :\\d+");
    await Bun.sleep(300);
    writeFileSync(join(cwd, "go"), "");
    expect(await waiting).toBe(`Line 3 of p1's output matches "listening on :\\\\d+". Output since last read (lines 2–3):\ncompiling\nlistening on :8080\n`);
    await until("GET /", () => logOf(stateDir, "p1").includes("GET /"));
    expect(await text("ps", "read", "p1")).toBe("Output of p1 since last read (lines 4–4 of 4):\nGET /\n");
  });

  test("lines already read (here by ps start) do not match again", async () => {
    const { text } = setup();
    await text("ps", "start", "echo one; echo two; echo three; exec sleep 60");
    await text("ps", "read", "p1", "--offset", "1");
    const started = performance.now();
    // ps start's first output counts as read: "one".."three" were shown by it.
    expect(await text("ps", "wait", "p1", "two", "--timeout-ms", "1000")).toBe(
      `No new line matched "two" within 1s; p1 is still running. No new output meanwhile.\nWait again with {"action":"wait","id":"p1","pattern":"two"}, or stop it with {"action":"stop","id":"p1"}.\n`,
    );
    expect(performance.now() - started).toBeGreaterThan(900);
  });

  test("unread output that matches returns without waiting", async () => {
    const { cwd, stateDir, text } = setup();
    await text("ps", "start", `echo start; ${gate("go")}; echo alpha; echo beta; exec sleep 60`);
    writeFileSync(join(cwd, "go"), "");
    await until("beta", () => logOf(stateDir, "p1").includes("beta"));
    const started = performance.now();
    expect(await text("ps", "wait", "p1", "alpha")).toBe(`Line 2 of p1's output matches "alpha". Output since last read (line 2):\nalpha\n`);
    expect(performance.now() - started).toBeLessThan(5000);
    // An uppercase letter makes the pattern case-sensitive (as grep's smart case): "BETA" is not "beta".
    expect(await text("ps", "wait", "p1", "BETA|gamma", "--timeout-ms", "500")).toBe(
      `No new line matched "BETA|gamma" within <s>; p1 is still running. Output meanwhile (line 3):\nbeta\nWait again with {"action":"wait","id":"p1","pattern":"BETA|gamma"}, or stop it with {"action":"stop","id":"p1"}.\n`,
    );
  });

  test("the end: its status, and the output that came; without a pattern, the wait is for the end", async () => {
    const { cwd, text } = setup();
    await text("ps", "start", `echo start; ${gate("go")}; echo "error: boom"; exit 2`);
    const waiting = text("ps", "wait", "p1", "ready");
    await Bun.sleep(300);
    writeFileSync(join(cwd, "go"), "");
    expect(await waiting).toBe(`p1 ended before a line matched "ready". Output since last read (line 2):\nerror: boom\np1 exited with code 2 after <clock>. Full log: ${LOG("p1")}\n`);
    // The end was shown: no completion notice follows, and a second wait says it at once.
    expect(await text("ps", "wait", "p1")).toBe(`p1 ended, with no new output since last read.\np1 exited with code 2 after <clock>. Full log: ${LOG("p1")}\n`);

    await text("ps", "start", `echo start; ${gate("go2")}; echo done`);
    const waitingEnd = text("ps", "wait", "p2");
    await Bun.sleep(300);
    writeFileSync(join(cwd, "go2"), "");
    expect(await waitingEnd).toBe(`p2 ended. Output since last read (line 2):\ndone\np2 exited with code 0 after <clock>. Full log: ${LOG("p2")}\n`);
  });

  test("the timeout: what came meanwhile, and how to go on", async () => {
    const { cwd, text } = setup();
    await text("ps", "start", `echo start; ${gate("go")}; echo "progress 50%"; exec sleep 60`);
    const waiting = text("ps", "wait", "p1", "done", "--timeout-ms", "1500");
    await Bun.sleep(300);
    writeFileSync(join(cwd, "go"), "");
    expect(await waiting).toBe(
      `No new line matched "done" within <s>; p1 is still running. Output meanwhile (line 2):\nprogress 50%\nWait again with {"action":"wait","id":"p1","pattern":"done"}, or stop it with {"action":"stop","id":"p1"}.\n`,
    );
    expect(await text("ps", "wait", "p1", "--timeout-ms", "200")).toBe(`p1 is still running after <s>. No new output meanwhile.\nWait again with {"action":"wait","id":"p1"}, or stop it with {"action":"stop","id":"p1"}.\n`);
  });

  test("bad input: an invalid regex, pattern on another action, an unknown id (golden)", async () => {
    const { run, text } = setup();
    await text("ps", "start", "echo start; exec sleep 60");
    const bad = await run("ps", "wait", "p1", "(unclosed");
    expect(bad.exitCode).toBe(1);
    expect(bad.stdout).toBe(`Invalid regex "(unclosed": unclosed ( at position 1. Balance the parentheses, or escape a literal one as \\(.\n`);
    const wrong = await run("ps", "read", "p1", "--pattern", "x");
    expect(wrong.exitCode).toBe(1);
    expect(wrong.stdout).toBe(
      `Invalid input for tool "process": "pattern" and "timeout_ms" belong to action "wait" (wait for a line of output that matches, or for the end); leave them out for "read". Please rewrite the input so it satisfies the expected schema.\n`,
    );
    expect((await run("ps", "wait")).stdout).toBe(`Invalid input for tool "process": action "wait" needs parameter "id", the process id (e.g. "p3"). Please rewrite the input so it satisfies the expected schema.\n`);
    expect((await run("ps", "wait", "p9", "x")).stdout).toMatch(/^No process "p9"\. Active: p1 \(echo start; exec sleep 60, running\)\. Use \{"action":"list"\} to see all\.\n$/);
  });
});

describe("ps wait: timing", () => {
  // The line carries the moment it was written (date +%s%N, just before the echo): the wait
  // must answer within 200 ms of it. In-process the answer is the tool's own; through the
  // binary it includes kt's exit.
  for (const mode of ["in-process", "binary"] as const) {
    test(`returns within 200 ms of the matching line being written (${mode})`, async () => {
      const { cwd, stateDir, env } = setup();
      await ktAsync(["ps", "start", `echo start; ${gate("go")}; echo "ready at $(date +%s%N)"; exec sleep 60`], env);
      const waiting =
        mode === "in-process"
          ? callTool("ps", { action: "wait", id: "p1", pattern: "^ready at" }, { cwd, stateDir }).then((r) => ({ text: r.content, at: Date.now() }))
          : ktAsync(["ps", "wait", "p1", "^ready at"], env).then((r) => ({ text: r.stdout, at: Date.now() }));
      await Bun.sleep(400);
      writeFileSync(join(cwd, "go"), "");
      const got = await waiting;
      const written = Number(/ready at (\d+)/.exec(got.text)![1]) / 1e6;
      expect(got.text).toStartWith(`Line 2 of p1's output matches "^ready at".`);
      expect(got.at - written).toBeLessThan(200);
    });
  }
});

describe("ps wait through kt mcp", () => {
  test("start, wait for a match, then for the end, over the SDK client", async () => {
    const { tmp, cwd, stateDir } = setup();
    const transport = new StdioClientTransport({ command: KT, args: ["mcp"], cwd, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", NO_COLOR: "1", KT_STATE_DIR: stateDir }, stderr: "pipe" });
    const client = new Client({ name: "kt-test", version: "0.0.0" });
    await client.connect(transport);
    try {
      const textOf = (r: unknown) => norm(((r as { content: { text: string }[] }).content[0]!).text, tmp);
      const started = textOf(await client.callTool({ name: "process", arguments: { action: "start", command: `echo start; ${gate("go")}; echo "server ready"; ${gate("stop")}; echo bye` } }));
      expect(started).toStartWith("Started p1 (pid <pid>)");
      const waiting = client.callTool({ name: "process", arguments: { action: "wait", id: "p1", pattern: "ready", timeout_ms: 20000 } });
      await Bun.sleep(300);
      writeFileSync(join(cwd, "go"), "");
      expect(textOf(await waiting)).toBe(`Line 2 of p1's output matches "ready". Output since last read (line 2):\nserver ready`);
      const ending = client.callTool({ name: "process", arguments: { action: "wait", id: "p1" } });
      await Bun.sleep(300);
      writeFileSync(join(cwd, "stop"), "");
      const ended = textOf(await ending);
      expect(ended).toMatch(/^p1 ended\. Output since last read \(line 3\):\nbye\np1 exited with code 0 after <clock>\. Full log: <tmp>\/state\/sessions\/mcp-[^/]+\/proc\/p1\.log$/);
    } finally {
      await client.close();
    }
  });
});

describe("the log scanner", () => {
  test("complete lines in order, a final partial line (a prompt), a line longer than a chunk, escapes removed", () => {
    const { tmp } = setup();
    const log = join(tmp, "scan.log");
    writeFileSync(log, "one\n\x1b[31mtwo\x1b[0m\r\nthree");
    const seen: string[] = [];
    const s = scanner(log, 0, (line) => (seen.push(line), line === "two"));
    expect(s.advance()).toBe(Buffer.byteLength("one\n\x1b[31mtwo\x1b[0m\r\n"));
    expect(seen).toEqual(["one", "two"]);
    const prompt = scanner(log, 0, (line) => line === "three");
    expect(prompt.advance()).toBe(Buffer.byteLength("one\n\x1b[31mtwo\x1b[0m\r\nthree"));
    const none = scanner(log, 0, () => false);
    expect(none.advance()).toBeUndefined();
    expect(none.position()).toBe(Buffer.byteLength("one\n\x1b[31mtwo\x1b[0m\r\n"));
    const long = join(tmp, "long.log");
    writeFileSync(long, `${"x".repeat(3 * 1024 * 1024)}needle\nafter\n`);
    expect(scanner(long, 0, (line) => line.includes("needle")).advance()).toBeGreaterThan(2 * 1024 * 1024);
    expect(scanner(long, 0, (line) => line === "after").advance()).toBe(3 * 1024 * 1024 + 13);
  });
});
