// grep cases that need trees built at test time (sizes, permissions, symlinks, encodings,
// line endings) and the command line around it. Every model-facing string is compared
// whole, in-process and through dist/kt, and for both engines when rg is installed.
import { describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { callTool, expectedExit, KT, kt, tempDir } from "./_helpers.ts";
import { ageInOrder, RG, writeTree } from "./_search.ts";
import type { ToolMetadata } from "../src/tools/tool.ts";
import { grepWalk, grepWalkConfig } from "../src/search/builtin.ts";
import { walkParallel } from "../src/search/parallel.ts";
import { compilePattern } from "../src/search/regex.ts";
import { searchRg } from "../src/search/rg.ts";
import { probeFor } from "../src/search/nearmiss.ts";
import { makePlan } from "../src/search/plan.ts";
import { threadCount } from "../src/search/threads.ts";
import { Collector } from "../src/search/collect.ts";

const ENGINES = RG ? ["builtin", "rg"] : ["builtin"];

interface Ran {
  content: string;
  isError: boolean;
  metadata: ToolMetadata;
  code?: string;
}

/** grep in-process and through dist/kt with each engine; all must print the same bytes. */
async function grep(root: string, input: Record<string, unknown>, opts: { env?: Record<string, string>; engines?: string[] } = {}): Promise<Ran> {
  const stateDir = join(root, "..", "state");
  mkdirSync(stateDir, { recursive: true });
  let first: Ran | undefined;
  for (const engine of opts.engines ?? ENGINES) {
    const env = { KT_GREP_ENGINE: engine, ...opts.env };
    const saved = { ...process.env };
    Object.assign(process.env, env);
    let r;
    try {
      r = await callTool("grep", input, { cwd: root, stateDir, callId: "g1" });
    } finally {
      for (const key of Object.keys(env)) {
        if (saved[key] === undefined) delete process.env[key];
        else process.env[key] = saved[key];
      }
    }
    expect(r.warnings).toEqual([]);
    const ran: Ran = { content: r.content, isError: r.isError, metadata: r.metadata, code: r.error?.code };
    if (!r.isError) expect(r.metadata.extra?.engine).toBe(engine);
    const cli = kt(["grep", "--call-id", "g1"], { cwd: root, stateDir, stdin: JSON.stringify(input), env });
    expect(cli.stdout).toBe(`${r.content}\n`);
    expect(cli.exitCode).toBe(expectedExit("grep", r));
    if (first) expect({ engine, content: ran.content }).toEqual({ engine, content: first.content });
    first ??= ran;
  }
  return first!;
}

describe("truncation and spill", () => {
  test("over 100 matching lines: the first 100, newest files first, the rest in a spill file", async () => {
    using tmp = tempDir();
    const root = join(tmp.path, "tree");
    const files: Record<string, string> = {};
    for (let f = 0; f < 12; f++) files[`f${String(f).padStart(2, "0")}.txt`] = Array.from({ length: 40 }, (_, i) => (i % 2 ? `hit ${f}.${i}` : "miss")).join("\n");
    writeTree(root, files);
    ageInOrder(root, Object.keys(files));
    const r = await grep(root, { pattern: "hit" });
    const spill = r.metadata.truncation!.spillPath!;
    expect(spill).toBe(join(tmp.path, "state", "sessions", "default", "spill", "grep-g1.txt"));
    const group = (f: number, from = 1, to = 39) =>
      [`f${String(f).padStart(2, "0")}.txt`, ...Array.from({ length: 20 }, (_, k) => 2 * k + 1).filter((i) => i >= from && i <= to).map((i) => `  ${i + 1}: hit ${f}.${i}`)];
    expect(r.content).toBe(
      [
        'Showing first 100 of 240 matching lines (12 files) for "hit":',
        "",
        ...group(11), ...group(10), ...group(9), ...group(8), ...group(7, 1, 39),
        `[Results truncated. Full results: ${spill} — or use a more specific pattern, path, or include filter.]`,
      ].join("\n"),
    );
    const full = readFileSync(spill, "utf8");
    expect(full).toBe([
      '240 matches in 12 files for "hit":', "",
      ...[11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0].flatMap((f) => group(f)),
    ].join("\n") + "\n");
    expect(r.metadata).toMatchObject({
      title: 'Search "hit" · 240 matches in 12 files (showing 100)',
      matches: 240,
      files: 12,
      truncation: { originalLines: 254, shownHeadLines: 107, shownTailLines: 0, omittedLines: 147, spillPath: spill },
    });
  });

  test("when the spill file cannot be written, the truncation line says so", async () => {
    using tmp = tempDir();
    writeTree(tmp.path, { "a.txt": "hit\n".repeat(150) });
    const stateDir = "/dev/null/state";
    const r = await callTool("grep", { pattern: "hit" }, { cwd: tmp.path, stateDir });
    const lines = r.content.split("\n");
    expect(lines[0]).toBe('Showing first 100 of 150 matching lines (1 file) for "hit":');
    expect(lines.at(-1)).toBe("[Results truncated (the full results could not be saved). Use a more specific pattern, path, or include filter.]");
    expect(r.metadata.truncation?.spillPath).toBeUndefined();
    expect(r.warnings[0]).toStartWith("kt: could not save the full output to the state directory:");
    const cli = kt(["grep", "hit"], { cwd: tmp.path, stateDir });
    expect(cli.stdout).toBe(`${r.content}\n`);
    expect(cli.stderr).toContain("could not save the full output to the state directory");
  });

  test("many files past 20,000 lines: files too old to keep a line are still counted", async () => {
    using tmp = tempDir();
    const root = join(tmp.path, "tree");
    const names = Array.from({ length: 40 }, (_, i) => `d${i % 4}/f${String(i).padStart(2, "0")}.txt`);
    writeTree(root, Object.fromEntries(names.map((n) => [n, "x\n".repeat(1000)])));
    ageInOrder(root, names);
    for (const after of ["1000000000", "0"]) {
      const r = await grep(root, { pattern: "x" }, { env: { KT_GREP_PARALLEL_AFTER: after } });
      expect(r.metadata.matches).toBe(40_000);
      expect(r.metadata.files).toBe(40);
      const full = readFileSync(r.metadata.truncation!.spillPath!, "utf8").split("\n");
      expect(full[0]).toBe('40,000 matches in 40 files for "x":');
      // The 10 newest files' lines, newest first; nothing of the 30 others.
      expect(full.filter((l) => !l.startsWith("  ") && l.endsWith(".txt"))).toEqual([...names].reverse().slice(0, 10));
      expect(full.filter((l) => l.startsWith("  ")).length).toBe(10_000);
    }
  });

  test("past 20,000 lines the spill keeps the newest files' lines and says what it left out", async () => {
    using tmp = tempDir();
    const root = join(tmp.path, "tree");
    writeTree(root, { "a.txt": "x\n".repeat(15_000), "b.txt": "x\n".repeat(15_000) });
    ageInOrder(root, ["a.txt", "b.txt"]);
    const r = await grep(root, { pattern: "x" });
    expect(r.metadata.matches).toBe(30_000);
    const full = readFileSync(r.metadata.truncation!.spillPath!, "utf8").split("\n");
    expect(full[0]).toBe('30,000 matches in 2 files for "x":');
    expect(full[2]).toBe("b.txt");
    expect(full.at(-2)).toBe("[… 20,000 more matching lines not saved: too many results. Narrow the pattern, path or include to see them.]");
    expect(full.filter((l) => l.startsWith("  ")).length).toBe(10_000);
  });
});

describe("files and lines", () => {
  test("CRLF: $ matches before \\r\\n and no \\r reaches the output", async () => {
    using tmp = tempDir();
    const root = join(tmp.path, "tree");
    writeTree(root, { "win.txt": "first\r\nneedle here\r\nlast needle\r\n" });
    const r = await grep(root, { pattern: "here$" });
    expect(r.content).toBe('1 match in 1 file for "here$":\n\nwin.txt\n  2: needle here');
    const all = await grep(root, { pattern: "needle" });
    expect(all.content).not.toContain("\r");
    expect(all.content).toBe('2 matches in 1 file for "needle":\n\nwin.txt\n  2: needle here\n  3: last needle');
  });

  test("binary: a NUL anywhere skips the file, even after the first chunk", async () => {
    using tmp = tempDir();
    const root = join(tmp.path, "tree");
    writeTree(root, { "late.bin": `${"needle\n".repeat(60_000)}\0tail\n`, "early.bin": "\0needle\n", "ok.txt": "needle\n" });
    const r = await grep(root, { pattern: "needle" });
    expect(r.content).toBe('1 match in 1 file for "needle":\n\nok.txt\n  1: needle');
  });

  test("encodings: a UTF-8 BOM is not part of line 1, UTF-16 with a BOM is searched, invalid UTF-8 is shown as U+FFFD", async () => {
    using tmp = tempDir();
    const root = join(tmp.path, "tree");
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("wide needle\nother\n", "utf16le")]);
    writeTree(root, { "bom.txt": "\uFEFFneedle first\n", "u16.txt": utf16, "latin1.txt": Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65, 0x0a]) });
    ageInOrder(root, ["bom.txt", "u16.txt", "latin1.txt"]);
    const r = await grep(root, { pattern: "needle" });
    expect(r.content).toBe('3 matches in 3 files for "needle":\n\nlatin1.txt\n  1: caf\uFFFD needle\nu16.txt\n  1: wide needle\nbom.txt\n  1: needle first');
    const anchored = await grep(root, { pattern: "^needle" });
    expect(anchored.content).toBe('1 match in 1 file for "^needle":\n\nbom.txt\n  1: needle first');
  });

  test("line numbers stay right across chunk boundaries and in lines longer than a chunk", async () => {
    using tmp = tempDir();
    const root = join(tmp.path, "tree");
    const lines = Array.from({ length: 60_000 }, (_, i) => (i % 9973 === 0 ? `needle ${i + 1}` : `line ${i + 1} ${"pad".repeat(3)}`));
    lines[30_000] = `${"z".repeat(400_000)} needle long`;
    writeTree(root, { "big.txt": lines.join("\n") });
    const r = await grep(root, { pattern: "needle" });
    const expected = [1, 9974, 19947, 29920, 30001, 39893, 49866, 59839];
    expect(r.content.split("\n").slice(3).map((l) => Number(l.trim().split(":")[0]))).toEqual(expected);
    // The window keeps 250 characters: it ends with the line, so it starts before the match.
    expect(r.content).toContain(`\n  30001: …${"z".repeat(238)} needle long\n`);
  });

  test("chunks skipped undecoded (case-sensitive literal absent) still count their lines", async () => {
    using tmp = tempDir();
    const root = join(tmp.path, "tree");
    const lines = Array.from({ length: 90_000 }, (_, i) => `line ${i + 1} needle but lowercase`);
    for (const at of [70_000, 85_000]) lines[at - 1] = `Needle at ${at}`;
    writeTree(root, { "big.txt": `\uFEFF${lines.join("\n")}` });
    const r = await grep(root, { pattern: "Needle" });
    expect(r.content).toBe('2 matches in 1 file for "Needle":\n\nbig.txt\n  70000: Needle at 70000\n  85000: Needle at 85000');
  });

  test("symlinks are not followed, so a loop is harmless", async () => {
    using tmp = tempDir();
    const root = join(tmp.path, "tree");
    writeTree(root, { "a/needle.txt": "needle\n" });
    symlinkSync("..", join(root, "a", "loop"));
    symlinkSync("needle.txt", join(root, "a", "link.txt"));
    const r = await grep(root, { pattern: "needle" });
    expect(r.content).toBe('1 match in 1 file for "needle":\n\na/needle.txt\n  1: needle');
  });

  test("an include whose segment starts with a dot sees hidden files", async () => {
    using tmp = tempDir();
    const root = join(tmp.path, "tree");
    writeTree(root, { ".env.local": "KEY=needle\n", ".env": "KEY=needle\n", "env.txt": "needle\n", ".git/config": "needle\n" });
    ageInOrder(root, [".env", ".env.local"]);
    const r = await grep(root, { pattern: "needle", include: ".env*" });
    expect(r.content).toBe('2 matches in 2 files for "needle":\n\n.env.local\n  1: KEY=needle\n.env\n  1: KEY=needle');
  });
});

describe("limits and permissions", () => {
  test("issue 11 item 19: a file the built-in engine gives up on is reported as skipped, and the result is partial", () => {
    using tmp = tempDir();
    const root = join(tmp.path, "tree");
    // JavaScriptCore's regex gives up on the x's after a backtracking limit and answers
    // "no match" for the rest of the text; rg finds the line after them.
    writeTree(root, { "a.txt": `${"x".repeat(26)}z\nxxy\n`, "b.txt": "xxy here\n" });
    ageInOrder(root, ["a.txt", "b.txt"]);
    const r = kt(["grep", "(x+x+)+y", "--json"], { cwd: root, stateDir: join(tmp.path, "state"), env: { KT_GREP_ENGINE: "builtin", KT_GREP_TIMEOUT_MS: "60000" } });
    const result = JSON.parse(r.stdout);
    expect(result.content).toBe(
      [
        '2 matches in 2 files for "(x+x+)+y":',
        "",
        "b.txt",
        "  1: xxy here",
        "a.txt",
        "  2: xxy",
        "[1 file could not be searched completely (the pattern backtracked too long on a line, or reading failed), so these results are partial: a.txt. Simplify the pattern (no nested repetition such as (a+)+), or search that file with rg through bash.]",
      ].join("\n"),
    );
    expect(result.metadata.extra).toEqual({ engine: "builtin", partial: true, unreadable: 0, skipped: 1, threads: 1 });
  }, 30_000);

  test("a long line is shown around its first match, found where the engine found it (multi-byte text before it, a regex that backtracks)", async () => {
    using tmp = tempDir();
    const long = `${"é".repeat(200)}${"日本🎉".repeat(60)} the Error( x ${"w".repeat(400)}Error( y`;
    writeTree(tmp.path, { "a.txt": `${long}\nshort AbcError( z\n` });
    const shown = async (pattern: string) => (await grep(tmp.path, { pattern })).content.split("\n")[3]!;
    // The first "Error(" lies past the 250th character: the line is shown around it (the
    // engines and the binary print the same bytes: grep() checks).
    for (const pattern of [String.raw`Error\(`, String.raw`e Error\(`, String.raw`[^a-z]Error\(`]) {
      const line = await shown(pattern);
      expect({ pattern, start: line.slice(0, 6), around: line.includes("日本🎉 the Error( x www") }).toEqual({ pattern, start: "  1: …", around: true });
      expect(line.length).toBeLessThan(260);
    }
    // \w+Error\( first matches from the start of the 400 w's ("the Error(" has a space
    // before it): shown from 40 characters before them.
    const words = await shown(String.raw`\w+Error\(`);
    expect(words.startsWith("  1: …") && words.endsWith("…")).toBe(true);
    expect(words).toContain(`🎉 the Error( x ${"w".repeat(100)}`);
  });

  test("wide lines: fewer than 100 are shown when 100 would not fit well under 64 KB", async () => {
    using tmp = tempDir();
    const root = join(tmp.path, "tree");
    const wide = "漢".repeat(240);
    writeTree(root, { "cjk.txt": Array.from({ length: 120 }, (_, i) => `${wide} 針 ${i + 1}`).join("\n") });
    const r = await grep(root, { pattern: "針" });
    const spill = r.metadata.truncation!.spillPath!;
    const lines = r.content.split("\n");
    expect(lines[0]).toBe('Showing first 64 of 120 matching lines (1 file) for "針":');
    expect(lines.filter((l) => l.startsWith("  ")).length).toBe(64);
    expect(lines.at(-1)).toBe(`[Results truncated. Full results: ${spill} — or use a more specific pattern, path, or include filter.]`);
    expect(Buffer.byteLength(r.content)).toBeLessThan(60 * 1024);
    expect(readFileSync(spill, "utf8").split("\n").filter((l) => l.startsWith("  ")).length).toBe(120);
  });

  test("confinement: an include naming a symlinked directory outside --root is refused", () => {
    using tmp = tempDir();
    const root = join(tmp.path, "in");
    writeTree(tmp.path, { "in/a.txt": "needle\n", "out/b.txt": "needle\n" });
    symlinkSync(join(tmp.path, "out"), join(root, "link"));
    const r = kt(["grep", "needle", "--include", "link/*.txt", "--root", root], { cwd: root, stateDir: join(tmp.path, "state") });
    expect(r.stdout).toBe(`Refusing to access ${root}/link (through a symbolic link, its real path is ${tmp.path}/out): it is outside the root directory ${root}, and kt is confined to that directory. Use a path inside ${root}.\n`);
    expect(r.exitCode).toBe(2);
  });

  test("the time limit marks partial results (KT_GREP_TIMEOUT_MS, for tests)", async () => {
    using tmp = tempDir();
    const root = join(tmp.path, "tree");
    writeTree(root, { "a.txt": "needle\n", "sub/b.txt": "needle\n", "sub/c.txt": "needle\n" });
    const r = await grep(root, { pattern: "needle" }, { env: { KT_GREP_TIMEOUT_MS: "0" }, engines: ["builtin"] });
    expect(r.content).toBe(
      [
        '1 match in 1 file for "needle" (partial: stopped at the 0 s limit):',
        "",
        "a.txt",
        "  1: needle",
        "[The search stopped at the 0 s time limit, so these results are partial. Narrow path or include to search fewer files.]",
      ].join("\n"),
    );
    expect(r.metadata.extra).toEqual({ engine: "builtin", partial: true, unreadable: 0, threads: 1 });
    writeFileSync(join(root, "a.txt"), "nothing\n");
    const none = await grep(root, { pattern: "needle" }, { env: { KT_GREP_TIMEOUT_MS: "0" }, engines: ["builtin"] });
    expect(none.content).toBe(`No matches for "needle" in ${root} before the 0 s time limit, so the search is partial. Narrow path or include to search fewer files.`);
  });

  const root0 = process.getuid?.() === 0;
  const SETPRIV = Bun.which("setpriv");
  test.skipIf(root0 && !SETPRIV)("unreadable files and directories are listed, not fatal (run as nobody: root reads everything)", () => {
    using tmp = tempDir();
    chmodSync(tmp.path, 0o755);
    const root = join(tmp.path, "tree");
    writeTree(root, { "a.txt": "needle\n", "secret.txt": "needle\n", "locked/b.txt": "needle\n", "ignored/c.txt": "needle\n", ".ignore": "ignored/\n" });
    chmodSync(join(root, "secret.txt"), 0o000);
    chmodSync(join(root, "locked"), 0o000);
    chmodSync(join(root, "ignored"), 0o000);
    const stateDir = join(tmp.path, "state");
    mkdirSync(stateDir, { mode: 0o777 });
    chmodSync(stateDir, 0o777);
    const prefix = root0 ? [SETPRIV!, "--reuid=65534", "--regid=65534", "--clear-groups"] : [];
    const outputs = ENGINES.map((engine) => {
      const proc = Bun.spawnSync([...prefix, KT, "grep", "needle"], {
        cwd: root,
        env: { PATH: process.env.PATH ?? "", HOME: "/tmp", NO_COLOR: "1", KT_STATE_DIR: stateDir, KT_GREP_ENGINE: engine },
        stdout: "pipe",
        stderr: "pipe",
      });
      expect(proc.stderr.toString()).toBe("");
      expect(proc.exitCode).toBe(0);
      return proc.stdout.toString();
    });
    // The ignored directory is pruned before it is read: it is not reported.
    for (const out of outputs) {
      expect(out).toBe('1 match in 1 file for "needle":\n\na.txt\n  1: needle\n[2 paths could not be read (permission denied) and were not searched: locked, secret.txt.]\n');
    }
  });
});

describe("command line and engines", () => {
  test("pattern and path are positional; include is a flag", () => {
    using tmp = tempDir();
    const root = join(tmp.path, "tree");
    writeTree(root, { "src/a.ts": "TODO one\n", "src/b.js": "TODO two\n", "c.ts": "TODO three\n" });
    const r = kt(["grep", "TODO", "src", "--include", "*.ts"], { cwd: root, stateDir: join(tmp.path, "state") });
    expect(r.stdout).toBe('1 match in 1 file for "TODO":\n\nsrc/a.ts\n  1: TODO one\n');
    expect(r.exitCode).toBe(0);
    const json = JSON.parse(kt(["grep", "TODO", "src", "--json"], { cwd: root, stateDir: join(tmp.path, "state") }).stdout);
    expect(json.metadata).toMatchObject({ title: 'Search "TODO" · 2 matches in 2 files', matches: 2, files: 2 });
  });

  test("KT_GREP_ENGINE=rg without rg on PATH warns and uses the built-in engine; a bad value warns", () => {
    using tmp = tempDir();
    const root = join(tmp.path, "tree");
    writeTree(root, { "a.txt": "needle\n" });
    const noRg = kt(["grep", "needle", "--json"], { cwd: root, stateDir: join(tmp.path, "state"), env: { KT_GREP_ENGINE: "rg", PATH: "/nonexistent" } });
    expect(JSON.parse(noRg.stdout).metadata.extra.engine).toBe("builtin");
    expect(noRg.stderr).toContain("KT_GREP_ENGINE=rg but rg is not on PATH; using the built-in engine");
    const bad = kt(["grep", "needle"], { cwd: root, stateDir: join(tmp.path, "state"), env: { KT_GREP_ENGINE: "fast" } });
    expect(bad.stderr).toContain("KT_GREP_ENGINE=fast is not auto, builtin or rg; using auto");
    expect(bad.stdout).toBe('1 match in 1 file for "needle":\n\na.txt\n  1: needle\n');
  });

  test("an rg that fails to run the search: a warning, then the built-in engine's answer", () => {
    using tmp = tempDir();
    const root = join(tmp.path, "tree");
    writeTree(root, { "a.txt": "needle\n" });
    const bin = join(tmp.path, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "rg"), "#!/bin/sh\necho 'regex parse error: something rg dislikes' >&2\nexit 2\n", { mode: 0o755 });
    const r = kt(["grep", "needle", "--json"], { cwd: root, stateDir: join(tmp.path, "state"), env: { KT_GREP_ENGINE: "rg", PATH: `${bin}:${process.env.PATH}` } });
    const result = JSON.parse(r.stdout);
    expect(result.content).toBe('1 match in 1 file for "needle":\n\na.txt\n  1: needle');
    expect(result.metadata.extra.engine).toBe("builtin");
    expect(r.stderr).toContain("rg could not run this search (regex parse error: something rg dislikes); using the built-in engine");
  });

  test("worker threads: the binary searches with its embedded worker and prints the same bytes", () => {
    using tmp = tempDir();
    const root = join(tmp.path, "tree");
    writeTree(root, Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`d${i % 17}/f${i}.txt`, `needle ${i}\nother\n`])));
    const o = { cwd: root, stateDir: join(tmp.path, "state") };
    const alone = JSON.parse(kt(["grep", "needle", "--json"], { ...o, env: { KT_GREP_ENGINE: "builtin", KT_GREP_PARALLEL_AFTER: "1000000000" } }).stdout);
    const threaded = JSON.parse(kt(["grep", "needle", "--json"], { ...o, env: { KT_GREP_ENGINE: "builtin", KT_GREP_PARALLEL_AFTER: "0" } }).stdout);
    expect(alone.metadata.extra.threads).toBe(1);
    expect(threaded.metadata.extra.threads).toBe(threadCount());
    // Threads follow the machine's cores or KT_THREADS, with no cap below them.
    const many = JSON.parse(kt(["grep", "needle", "--json"], { ...o, env: { KT_GREP_ENGINE: "builtin", KT_GREP_PARALLEL_AFTER: "0", KT_THREADS: "5" } }).stdout);
    expect(many.metadata.extra.threads).toBe(5);
    expect(many.content.replace(/grep-\w+\.txt/, "")).toBe(alone.content.replace(/grep-\w+\.txt/, ""));
    expect(threaded.content.replace(/grep-\w+\.txt/, "")).toBe(alone.content.replace(/grep-\w+\.txt/, ""));
    expect(threaded.metadata.matches).toBe(300);
  });

  test("helpers start once the walk has run a while with directories left, not on a tree done at once", async () => {
    using tmp = tempDir();
    const small = join(tmp.path, "small");
    writeTree(small, { "a.txt": "needle\n", "b.txt": "needle\n" });
    const one = await grep(small, { pattern: "needle" }, { env: { KT_THREADS: "3" }, engines: ["builtin"] });
    expect(one.metadata.extra?.threads).toBe(1);
    // Thousands of files in many directories: far more than the time alone allows.
    const large = join(tmp.path, "large");
    writeTree(large, Object.fromEntries(Array.from({ length: 6000 }, (_, i) => [`d${i % 60}/e${i % 7}/f${i}.txt`, i % 100 ? "other\n".repeat(20) : "needle\n"])));
    const many = await grep(large, { pattern: "needle" }, { env: { KT_THREADS: "3" }, engines: ["builtin"] });
    expect(many.metadata.extra?.threads).toBe(3);
    expect(many.metadata.matches).toBe(60);
  }, 30_000);

  test("helpers give each other directories: an idle one is claimed by whichever busy thread sees it first; every count of threads finds the same", async () => {
    using tmp = tempDir();
    const root = join(tmp.path, "tree");
    writeTree(root, Object.fromEntries(Array.from({ length: 6000 }, (_, i) => [`d${i % 60}/e${i % 5}/g${i % 7}/f${i}.txt`, i % 3 ? "other\n".repeat(50) : `needle ${i}\n`])));
    const plan = makePlan({ cwd: root, root: undefined } as never, { tool: "grep", path: root, glob: undefined, basename: true });
    const config = grepWalkConfig(plan, compilePattern("needle"), null);
    const lines = (found: { snapshot: { lines: number } }[]) => found.reduce((n, f) => n + f.snapshot.lines, 0);
    // One helper has no other to give to.
    const two = await walkParallel(grepWalk, config, 0, 2);
    expect({ threads: two.threads, lines: lines(two.found), peerGives: two.peerGives }).toEqual({ threads: 2, lines: 2000, peerGives: 0 });
    let peerGives = 0;
    for (const threads of [3, 5, 8, 8, 8, 8, 16]) {
      for (const after of [0, null]) {
        const many = await walkParallel(grepWalk, config, after, threads);
        expect({ threads, lines: lines(many.found) }).toEqual({ threads, lines: 2000 });
        peerGives += many.peerGives;
      }
    }
    expect(peerGives).toBeGreaterThan(0);
  }, 60_000);

  test("a helper that fails, or ends without a word, once up: the search is done again on this thread; one never up holds nothing back", async () => {
    using tmp = tempDir();
    const root = join(tmp.path, "tree");
    writeTree(root, Object.fromEntries(Array.from({ length: 6000 }, (_, i) => [`d${i % 60}/e${i % 5}/f${i}.txt`, i % 3 ? "other\n".repeat(50) : `needle ${i}\n`])));
    const plan = makePlan({ cwd: root, root: undefined } as never, { tool: "grep", path: root, glob: undefined, basename: true });
    const config = grepWalkConfig(plan, compilePattern("needle"), null);
    const lines = (found: { snapshot: { lines: number } }[]) => found.reduce((n, f) => n + f.snapshot.lines, 0);
    const shared = await walkParallel(grepWalk, config, 0, 2);
    expect(shared.threads).toBe(2);
    expect(lines(shared.found)).toBe(2000);
    // A helper says it is up by setting its state word to IDLE (2, parallel.ts's State).
    const up = "if (e.data.type === 'walk') Atomics.store(new Int32Array(e.data.state), 0, 2);";
    const bad = join(tmp.path, "bad-worker.ts");
    writeFileSync(bad, `self.onmessage = (e) => { ${up} if (e.data.type === 'dirs') throw new Error('boom'); };\n`);
    const failed = await walkParallel(grepWalk, config, 0, 2, bad);
    // Done again alone: one thread.
    expect(failed.threads).toBe(1);
    expect(failed.found).toHaveLength(1);
    expect(lines(failed.found)).toBe(2000);
    const quitter = join(tmp.path, "quit-worker.ts");
    writeFileSync(quitter, `self.onmessage = (e) => { ${up} if (e.data.type === 'dirs') process.exit(0); };\n`);
    const quit = await walkParallel(grepWalk, config, 0, 2, quitter);
    expect(quit.threads).toBe(1);
    expect(lines(quit.found)).toBe(2000);
    // One that never comes up is given nothing and not waited for: this thread walks all
    // (helpers started by time, as outside tests; the walk lasts far past ALONE_MS).
    const never = join(tmp.path, "never-worker.ts");
    writeFileSync(never, "self.onmessage = () => {};\n");
    const began = performance.now();
    const alone = await walkParallel(grepWalk, config, null, 2, never);
    // Not held until the 10 s limit, with a partial result.
    expect(performance.now() - began).toBeLessThan(8000);
    expect(alone.found[0]!.timedOut).toBe(false);
    expect(alone.threads).toBe(2);
    expect(alone.found).toHaveLength(1);
    expect(lines(alone.found)).toBe(2000);
  }, 30_000);

  test.skipIf(!RG)("rg engine: one pass with the probe; given up and run again without it once a match is in and the probe's lines pile up", async () => {
    using tmp = tempDir();
    const files: Record<string, string> = {
      // 30,000 probe lines ("todo" in other cases; halves "TO"/"DO") and one match.
      "noise.txt": "to do, or not to do\n".repeat(30_000),
      "hit.ts": "// TODO: the one match\n",
      "near.ts": "// TOD0 near\n",
    };
    writeTree(tmp.path, files);
    const searchWith = async (pattern: string, tree: string) => {
      const compiled = compilePattern(pattern);
      const ctx = { cwd: tree, root: undefined } as never;
      const plan = makePlan(ctx, { tool: "grep", path: tree, glob: undefined, basename: true });
      const collector = new Collector();
      const outcome = await searchRg(RG!, plan, compiled, collector, probeFor(compiled));
      return { outcome, lines: collector.lines };
    };
    const busy = await searchWith("TODO", tmp.path);
    expect({ passes: busy.outcome.passes, lines: busy.lines, probed: busy.outcome.probed }).toEqual({ passes: 2, lines: 1, probed: null });
    // Few probe lines: the match comes from the single pass.
    const quiet = await searchWith("the one match", tmp.path);
    expect({ passes: quiet.outcome.passes, lines: quiet.lines, probed: quiet.outcome.probed }).toEqual({ passes: 1, lines: 1, probed: null });
    // No match: one pass, and what the probe found is kept for the hint.
    const none = await searchWith("TOD0 nearr", tmp.path);
    expect(none.outcome.passes).toBe(1);
    expect(none.lines).toBe(0);
    expect(none.outcome.probed?.files.map((f) => f.rel)).toEqual(["near.ts"]);
    const r = await grep(tmp.path, { pattern: "TOD0 nearr" });
    expect(r.content).toBe(`No matches for "TOD0 nearr" in ${tmp.path}. Check the regex (did you mean "TOD0 near"?) or broaden the scope.`);
  });

  test.skipIf(!RG)("auto picks rg when it is on PATH", () => {
    using tmp = tempDir();
    writeTree(tmp.path, { "a.txt": "needle\n" });
    const r = kt(["grep", "needle", "--json"], { cwd: tmp.path, stateDir: join(tmp.path, ".s"), env: { KT_GREP_ENGINE: "auto" } });
    expect(JSON.parse(r.stdout).metadata.extra.engine).toBe("rg");
  });

  test("confinement: a path outside --root is refused", () => {
    using tmp = tempDir();
    mkdirSync(join(tmp.path, "in"));
    const r = kt(["grep", "x", "/etc", "--root", join(tmp.path, "in")], { cwd: join(tmp.path, "in"), stateDir: join(tmp.path, "state") });
    expect(r.stdout).toBe(`Refusing to access /etc: it is outside the root directory ${join(tmp.path, "in")}, and kt is confined to that directory. Use a path inside ${join(tmp.path, "in")}.\n`);
    expect(r.exitCode).toBe(2);
  });

  test("a very long pattern is repeated cut to 200 characters", async () => {
    using tmp = tempDir();
    writeTree(tmp.path, { "a.txt": `${"ab".repeat(300)}\n` });
    const long = "ab".repeat(300);
    const found = await grep(tmp.path, { pattern: long });
    expect(found.content.split("\n")[0]).toBe(`1 match in 1 file for "${"ab".repeat(100)}…":`);
    const none = await grep(tmp.path, { pattern: `${long}x` });
    expect(none.content).toBe(`No matches for "${"ab".repeat(100)}…" in ${tmp.path}. Check the regex or broaden the scope.`);
  });

  test("an empty pattern is invalid input", async () => {
    using tmp = tempDir();
    const r = await callTool("grep", { pattern: "" }, { cwd: tmp.path, stateDir: join(tmp.path, "s") });
    expect(r.content).toBe('Invalid input for tool "grep": parameter "pattern" must be at least 1 characters long, got "" (a string). Please rewrite the input so it satisfies the expected schema.');
    expect(r.error?.code).toBe("INVALID_ARGS");
  });
});
