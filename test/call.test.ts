// `kt call` and `kt call --jsonl` (SPEC §1), golden-tested through the compiled binary.
// Each folder in test/fixtures/call/ is one scenario: `call.json` (one call on stdin) or
// `calls.jsonl` (a stream), optional `args` (one per line), and `expected/<format>.out`
// for each --format it is run with (plus `expected/exit` for a single call). In the
// goldens `$WORK` stands for the working directory, generated call ids read `$GENERATED`
// durations 0 and `$TOOLS` the list of registered tools (so that a new tool changes no
// golden). Regenerate only on purpose: KT_UPDATE_GOLDENS=1 bun test test/call.test.ts
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadAllTools, schemaName, TOOL_NAMES } from "../src/tools/registry.ts";
import { kt, tempDir } from "./_helpers.ts";

const FIXTURES = join(import.meta.dir, "fixtures", "call");
const UPDATE = process.env.KT_UPDATE_GOLDENS === "1";
const TOOLS = (await loadAllTools()).map(schemaName).join(", ");

function setup(tmp: { path: string }): { work: string; stateDir: string } {
  const work = join(tmp.path, "work");
  mkdirSync(work);
  writeFileSync(join(work, "a.txt"), "alpha\nbeta\n");
  return { work, stateDir: join(tmp.path, "state") };
}

export function normalize(out: string, work: string): string {
  return out
    .split(work)
    .join("$WORK")
    .split(`The available tools are: ${TOOLS}.`)
    .join("The available tools are: $TOOLS.")
    .replace(/"durationMs":[0-9.e-]+/g, '"durationMs":0')
    .replace(/"(tool_use_id|tool_call_id|call_id)":"k[0-9a-z]{8,}"/g, '"$1":"$GENERATED"');
}

describe("kt call goldens", () => {
  for (const name of readdirSync(FIXTURES).sort()) {
    const dir = join(FIXTURES, name);
    const stream = existsSync(join(dir, "calls.jsonl"));
    const stdin = readFileSync(join(dir, stream ? "calls.jsonl" : "call.json"), "utf8");
    const formats = readdirSync(join(dir, "expected")).filter((f) => f.endsWith(".out")).map((f) => f.slice(0, -4)).sort();
    test(name, () => {
      expect(formats.length).toBeGreaterThan(0);
      using tmp = tempDir();
      const { work, stateDir } = setup(tmp);
      const extra = existsSync(join(dir, "args")) ? readFileSync(join(dir, "args"), "utf8").split("\n").filter(Boolean).map((a) => a.replace("$WORK", work)) : [];
      const exits = new Set<number>();
      for (const format of formats) {
        // A fresh working copy per format, so that a stream that writes sees the same start.
        writeFileSync(join(work, "a.txt"), "alpha\nbeta\n");
        const r = kt(["call", ...(stream ? ["--jsonl"] : []), "--format", format, ...extra], { cwd: work, stateDir: join(stateDir, format), stdin });
        const golden = join(dir, "expected", `${format}.out`);
        const got = normalize(r.stdout, work);
        if (UPDATE) writeFileSync(golden, got);
        expect(got, `${name} --format ${format}`).toBe(readFileSync(golden, "utf8"));
        expect(r.stderr, `${name} --format ${format}: stderr`).toBe("");
        exits.add(r.exitCode);
      }
      // The exit code depends on the result, never on the format.
      expect(exits.size).toBe(1);
      const exit = [...exits][0]!;
      if (stream) expect(exit).toBe(0);
      else {
        if (UPDATE) writeFileSync(join(dir, "expected", "exit"), `${exit}\n`);
        expect(exit).toBe(Number(readFileSync(join(dir, "expected", "exit"), "utf8")));
      }
    });
  }
});

describe("kt call", () => {
  test("the default is the model text; --json is --format json; --jsonl defaults to the envelope per line", () => {
    using tmp = tempDir();
    const { work, stateDir } = setup(tmp);
    const call = '{"tool":"read","input":{"file_path":"a.txt"}}';
    const text = kt(["call"], { cwd: work, stateDir, stdin: call });
    expect(text.stdout).toBe(`${work}/a.txt\n     1→alpha\n     2→beta\n`);
    expect(text.exitCode).toBe(0);
    const json = kt(["call", "--json"], { cwd: work, stateDir, stdin: call });
    const asFormat = kt(["call", "--format=json"], { cwd: work, stateDir, stdin: call });
    expect(normalize(json.stdout, work)).toBe(normalize(asFormat.stdout, work));
    const lines = kt(["call", "--jsonl"], { cwd: work, stateDir, stdin: `${call}\n${call}\n` });
    expect(normalize(lines.stdout, work)).toBe(normalize(json.stdout, work).repeat(2));
  });

  test("the tool output matches the tool subcommand's byte for byte", () => {
    using tmp = tempDir();
    const { work, stateDir } = setup(tmp);
    const direct = kt(["read", "a.txt", "--offset", "2"], { cwd: work, stateDir });
    const viaCall = kt(["call"], { cwd: work, stateDir, stdin: '{"name":"read","arguments":"{\\"file_path\\":\\"a.txt\\",\\"offset\\":2}"}' });
    expect(viaCall).toEqual(direct);
  });

  test("--session and --state-dir scope the stamps as for tool commands", () => {
    using tmp = tempDir();
    const { work, stateDir } = setup(tmp);
    const state2 = join(tmp.path, "state2");
    const read = '{"tool":"read","input":{"file_path":"a.txt"}}';
    const write = '{"tool":"write","input":{"file_path":"a.txt","content":"x\\n"}}';
    kt(["call", "--session", "s1", "--state-dir", state2], { cwd: work, stateDir, stdin: read });
    const otherSession = kt(["call", "--session", "s2", "--state-dir", state2], { cwd: work, stateDir, stdin: write });
    expect(otherSession.exitCode).toBe(1);
    expect(otherSession.stdout).toStartWith(`Refusing to overwrite ${work}/a.txt: you have not read this file in this session.`);
    const otherState = kt(["call", "--session", "s1"], { cwd: work, stateDir, stdin: write });
    expect(otherState.exitCode).toBe(1);
    const same = kt(["call", "--session=s1", "--state-dir", state2], { cwd: work, stateDir, stdin: write });
    expect(same.stdout).toBe(`Replaced ${work}/a.txt (was 2 lines, now 1 line).\n`);
    expect(same.exitCode).toBe(0);
    expect(kt(["call", "--skip-read-check", "--session", "s3"], { cwd: work, stateDir, stdin: write }).exitCode).toBe(0);
  });

  test("usage errors exit 2 with nothing on stdout", () => {
    using tmp = tempDir();
    const { work, stateDir } = setup(tmp);
    const call = '{"tool":"read","input":{"file_path":"a.txt"}}';
    const cases: [string[], string][] = [
      [["call", "a.txt"], 'kt call: unexpected argument "a.txt"'],
      [["call", "--format", "xml"], "kt call: --format must be one of text, json, anthropic, openai, openai-responses, mcp"],
      [["call", "--jsonl", "--format", "text"], "kt call: --format text cannot be used with --jsonl"],
      [["call", "--json", "--format", "openai"], "kt call: --format openai conflicts with --json"],
      [["call", "--limit", "3"], "kt call: unknown option --limit"],
      [["call", "--session"], "kt call: option --session needs a value"],
    ];
    for (const [args, message] of cases) {
      const r = kt(args, { cwd: work, stateDir, stdin: call });
      expect(r.exitCode, args.join(" ")).toBe(2);
      expect(r.stdout, args.join(" ")).toBe("");
      expect(r.stderr, args.join(" ")).toStartWith(message);
    }
  });

  test("a missing --root directory is answered as a failed call (single) or a usage error (stream)", () => {
    using tmp = tempDir();
    const { work, stateDir } = setup(tmp);
    const call = '{"type":"tool_use","id":"toolu_r","name":"read","input":{"file_path":"a.txt"}}';
    const one = kt(["call", "--root", join(tmp.path, "missing"), "--format", "anthropic"], { cwd: work, stateDir, stdin: call });
    expect(one.exitCode).toBe(1);
    expect(JSON.parse(one.stdout)).toMatchObject({ type: "tool_result", is_error: true, content: `The root directory ${join(tmp.path, "missing")} (from --root) does not exist. Give an existing directory.` });
    const stream = kt(["call", "--jsonl", "--root", join(tmp.path, "missing")], { cwd: work, stateDir, stdin: call });
    expect(stream.exitCode).toBe(2);
    expect(stream.stdout).toBe("");
  });

  test("--jsonl answers each line as soon as it arrives (a framework may wait for each answer)", async () => {
    using tmp = tempDir();
    const { work, stateDir } = setup(tmp);
    const { KT } = await import("./_helpers.ts");
    const proc = Bun.spawn([KT, "call", "--jsonl", "--format", "openai"], {
      cwd: work,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", KT_STATE_DIR: stateDir },
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    const reader = proc.stdout.getReader();
    const decoder = new TextDecoder();
    let buffered = "";
    const nextLine = async (): Promise<string> => {
      while (!buffered.includes("\n")) {
        const { value, done } = await reader.read();
        if (done) throw new Error("stdout ended early");
        buffered += decoder.decode(value, { stream: true });
      }
      const nl = buffered.indexOf("\n");
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      return line;
    };
    for (let i = 1; i <= 3; i++) {
      proc.stdin.write(`{"id":"call_${i}","name":"read","arguments":"{\\"file_path\\":\\"a.txt\\",\\"offset\\":${1 + (i % 2)}}"}\n`);
      await proc.stdin.flush();
      const reply = JSON.parse(await nextLine()) as { tool_call_id: string; content: string };
      expect(reply.tool_call_id).toBe(`call_${i}`);
      expect(reply.content.split("\n")[1]).toStartWith(`     ${1 + (i % 2)}→`);
    }
    await proc.stdin.end();
    expect(await proc.exited).toBe(0);
  });

  test("a long stream: one result per call, in order", () => {
    using tmp = tempDir();
    const { work, stateDir } = setup(tmp);
    const calls: string[] = [];
    for (let i = 0; i < 300; i++) calls.push(JSON.stringify({ type: "tool_use", id: `toolu_${i}`, name: "read", input: { file_path: "a.txt", offset: 1 + (i % 2) } }));
    const r = kt(["call", "--jsonl", "--format", "anthropic"], { cwd: work, stateDir, stdin: calls.join("\n") });
    const replies = r.stdout.trimEnd().split("\n").map((l) => JSON.parse(l) as { tool_use_id: string; content: string; is_error: boolean });
    expect(replies.length).toBe(300);
    replies.forEach((reply, i) => {
      expect(reply.tool_use_id).toBe(`toolu_${i}`);
      expect(reply.is_error).toBe(false);
      expect(reply.content).toBe(i % 2 === 0 ? `${work}/a.txt\n     1→alpha\n     2→beta` : `${work}/a.txt\n     2→beta`);
    });
  });

  test("a line of several megabytes is one call", () => {
    using tmp = tempDir();
    const { work, stateDir } = setup(tmp);
    const content = "x".repeat(3 * 1024 * 1024);
    const call = JSON.stringify({ tool: "write", input: { file_path: "big.txt", content } });
    const r = kt(["call", "--jsonl"], { cwd: work, stateDir, stdin: `${call}\n${call}\n` });
    const results = r.stdout.trimEnd().split("\n").map((l) => JSON.parse(l) as { isError: boolean; content: string });
    expect(results.length).toBe(2);
    expect(results[0]!.content).toBe(`Wrote ${work}/big.txt (1 line).`);
    expect(readFileSync(join(work, "big.txt"), "utf8").length).toBe(content.length);
  });

  test.skipIf(!TOOL_NAMES.includes("bash"))("the call id names the spill file", () => {
    using tmp = tempDir();
    const { work, stateDir } = setup(tmp);
    const call = JSON.stringify({ type: "tool_use", id: "toolu_spill/../x", name: "bash", input: { command: "seq 1 5000" } });
    const r = kt(["call", "--format", "anthropic", "--session", "s"], { cwd: work, stateDir, stdin: call });
    const reply = JSON.parse(r.stdout) as { tool_use_id: string; content: string };
    expect(reply.tool_use_id).toBe("toolu_spill/../x");
    // Issue 11 item 13: names map to file names one-to-one, "/" written as %2F.
    const spill = join(stateDir, "sessions", "s", "spill", "bash-toolu_spill%2F..%2Fx.txt");
    expect(reply.content).toContain(spill);
    expect(readFileSync(spill, "utf8")).toContain("\n4999\n");
  });
});
