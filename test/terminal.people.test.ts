// People at a terminal (SPEC §8.6), on a real pseudo-terminal (util-linux `script`): bash's
// output streamed to stderr as it comes, coloured dry-run diffs and traces (none under
// NO_COLOR, none through a pipe), progress for a long search, --help fitted to the width.
// None of it reaches what a pipe reads.
import { describe, expect, test } from "bun:test";
import { closeSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { KT, kt, tempDir } from "./_helpers.ts";
import { fitHelp, progress } from "../src/cmd/terminal.ts";

const HAVE_SCRIPT = Bun.which("script") !== null;
const quote = (a: string) => `'${a.replace(/'/g, "'\\''")}'`;

/** Runs kt on a terminal of `cols` columns; every chunk of what the terminal shows, with when it came (ms). */
async function onTerminal(args: string[], opts: { cwd: string; state: string; env?: Record<string, string>; cols?: number }): Promise<{ text: string; chunks: { at: number; text: string }[] }> {
  const started = performance.now();
  const proc = Bun.spawn(["script", "-qfec", `stty cols ${opts.cols ?? 100} rows 40; ${[KT, ...args].map(quote).join(" ")}`, "/dev/null"], {
    cwd: opts.cwd,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", TERM: "xterm", KT_STATE_DIR: opts.state, ...opts.env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const chunks: { at: number; text: string }[] = [];
  const decoder = new TextDecoder();
  for await (const chunk of proc.stdout) chunks.push({ at: performance.now() - started, text: decoder.decode(chunk, { stream: true }) });
  await proc.exited;
  return { text: chunks.map((c) => c.text).join("").replace(/\r\n/g, "\n"), chunks };
}

describe.skipIf(!HAVE_SCRIPT)("kt bash on a terminal", () => {
  test("streams the command's output to stderr as it comes: it arrives before the command ends", async () => {
    using tmp = tempDir();
    const run = await onTerminal(["bash", "echo early; sleep 2; echo late"], { cwd: tmp.path, state: join(tmp.path, ".s") });
    const early = run.chunks.find((c) => c.text.includes("early"))!;
    const late = run.chunks.find((c) => c.text.includes("late"))!;
    expect(early).toBeDefined();
    // "early" was shown while the command still slept; the model's text came at the end.
    expect(late.at - early.at).toBeGreaterThan(1500);
    expect(run.text).toEndWith(`$ echo early; sleep 2; echo late\nearly\nlate\n` + run.text.slice(run.text.lastIndexOf("[exit code 0")));
  });

  test("through a pipe: nothing streamed, stderr empty, stdout the model's text alone", () => {
    using tmp = tempDir();
    const r = kt(["bash", "echo early"], { cwd: tmp.path, stateDir: join(tmp.path, ".s") });
    expect(r.stderr).toBe("");
    expect(r.stdout).toStartWith("$ echo early\nearly\n[exit code 0");
  });
});

describe.skipIf(!HAVE_SCRIPT)("colour on a terminal, NO_COLOR respected", () => {
  function setup(tmp: { path: string }) {
    writeFileSync(join(tmp.path, "f.txt"), "a\nb\n");
    return ["edit", "f.txt", "--old-string", "b", "--new-string", "B", "--dry-run", "--trace", "--skip-read-check"];
  }
  const RED_LINE = "\x1b[31m-b\x1b[0m";
  const GREEN_LINE = "\x1b[32m+B\x1b[0m";
  const TAKEN = "\x1b[32mtaken\x1b[0m";

  test("the --dry-run diff and the --trace are coloured on a terminal", async () => {
    using tmp = tempDir();
    const run = await onTerminal(setup(tmp), { cwd: tmp.path, state: join(tmp.path, ".s") });
    expect(run.text).toContain(`${RED_LINE}\n${GREEN_LINE}`);
    expect(run.text).toContain(`\x1b[1m--- a/f.txt\x1b[0m`);
    expect(run.text).toContain(`1. exact: ${TAKEN} — `);
  });

  test("none under NO_COLOR", async () => {
    using tmp = tempDir();
    const run = await onTerminal(setup(tmp), { cwd: tmp.path, state: join(tmp.path, ".s"), env: { NO_COLOR: "1" } });
    expect(run.text).toContain("-b\n+B");
    expect(run.text).not.toContain("\x1b[");
  });

  test("none when not a terminal: the text is byte for byte the model's", () => {
    using tmp = tempDir();
    const r = kt(setup(tmp), { cwd: tmp.path, stateDir: join(tmp.path, ".s"), env: { NO_COLOR: "" } });
    expect(r.exitCode).toBe(0);
    expect(r.stdout + r.stderr).not.toContain("\x1b[");
    expect(r.stdout).toContain("--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n");
  });
});

describe("progress for a long search", () => {
  test("after 1 s, on the given stream, rewritten in place and erased at the end", async () => {
    using tmp = tempDir();
    const path = join(tmp.path, "err");
    const fd = openSync(path, "w");
    const stop = progress("kt grep: searching", fd);
    await Bun.sleep(500);
    expect(readFileSync(path, "utf8")).toBe("");
    await Bun.sleep(1700);
    stop();
    closeSync(fd);
    expect(readFileSync(path, "utf8")).toBe("\r\x1b[2Kkt grep: searching… 1 s\r\x1b[2Kkt grep: searching… 2 s\r\x1b[2K");
  });

  test("a quick search shows none", async () => {
    using tmp = tempDir();
    const path = join(tmp.path, "err");
    const fd = openSync(path, "w");
    progress("kt grep: searching", fd)();
    await Bun.sleep(1200);
    closeSync(fd);
    expect(readFileSync(path, "utf8")).toBe("");
  });

  test.skipIf(!HAVE_SCRIPT)("kt grep over a large tree on a terminal shows it; through a pipe, stderr stays empty", async () => {
    using tmp = tempDir();
    // The built-in engine over /usr with a pattern nothing matches: seconds on a shared machine.
    const args = ["grep", "zq_no_such_text_qz", "/usr", "--fixed-strings"];
    const env = { KT_GREP_ENGINE: "builtin", KT_THREADS: "1", KT_GREP_TIMEOUT_MS: "2500" };
    const started = performance.now();
    const run = await onTerminal(args, { cwd: tmp.path, state: join(tmp.path, ".s"), env });
    if (performance.now() - started > 1500) expect(run.text).toContain("kt grep: searching… 1 s");
    expect(run.text).toContain("No matches for \"zq_no_such_text_qz\" in /usr");
    const piped = kt(args, { cwd: tmp.path, stateDir: join(tmp.path, ".s"), env });
    expect(piped.stderr).toBe("");
  });
});

describe("--help fits the terminal", () => {
  test.skipIf(!HAVE_SCRIPT)("on a terminal of 80 columns, no line is wider; through a pipe, no line ends in padding", async () => {
    using tmp = tempDir();
    const run = await onTerminal(["replace", "--help"], { cwd: tmp.path, state: join(tmp.path, ".s"), cols: 80, env: { NO_COLOR: "1" } });
    const lines = run.text.split("\n");
    expect(lines.length).toBeGreaterThan(10);
    for (const line of lines) expect(Array.from(line).length, line).toBeLessThanOrEqual(80);
    const piped = kt(["--help"], { cwd: tmp.path, stateDir: join(tmp.path, ".s") });
    expect(piped.stdout.split("\n").filter((l) => / $/.test(l))).toEqual([]);
  });

  test("fitHelp wraps an option's description under its own column", () => {
    const text = `  --flag=<x>    ${"word ".repeat(20).trim()}    `;
    expect(fitHelp(text, 50)).toBe(["  --flag=<x>    word word word word word word word", "                word word word word word word word", "                word word word word word word"].join("\n"));
    expect(fitHelp("abc   ")).toBe("abc");
  });
});
