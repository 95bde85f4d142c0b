// glob cases that need trees built at test time, compared whole in-process and through
// dist/kt.
import { describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { callTool, expectedExit, KT, kt, tempDir } from "./_helpers.ts";
import { ageInOrder, writeTree } from "./_search.ts";
import picomatch from "picomatch";
import { fixedDepth, globMatcher, scanGlob } from "../src/search/globscan.ts";
import { globTest } from "../src/search/globlang.ts";
import { onOneLine } from "../src/search/plan.ts";
import { threadCount } from "../src/search/threads.ts";

async function glob(root: string, input: Record<string, unknown>, env: Record<string, string> = {}) {
  const stateDir = join(root, "..", "state");
  mkdirSync(stateDir, { recursive: true });
  const saved = { ...process.env };
  Object.assign(process.env, env);
  let r;
  try {
    r = await callTool("glob", input, { cwd: root, stateDir, callId: "g1" });
  } finally {
    for (const key of Object.keys(env)) {
      if (saved[key] === undefined) delete process.env[key];
      else process.env[key] = saved[key];
    }
  }
  const cli = kt(["glob", "--call-id", "g1"], { cwd: root, stateDir, stdin: JSON.stringify(input), env });
  expect(cli.stdout).toBe(`${r.content}\n`);
  expect(cli.exitCode).toBe(expectedExit("glob", r));
  return r;
}

describe("odd names", () => {
  test("a newline, tab or escape character in a name is written as an escape, one entry per line", async () => {
    expect(onOneLine("a\nb\tc\u001bd\re\u007f")).toBe("a\\nb\\tc\\x1bd\\re\\x7f");
    expect(onOneLine("plain/ü name.ts")).toBe("plain/ü name.ts");
    using tmp = tempDir();
    const root = join(tmp.path, "tree");
    writeTree(root, { "new\nline.ts": "", "ok.ts": "" });
    ageInOrder(root, ["new\nline.ts", "ok.ts"]);
    const r = await glob(root, { pattern: "**/*.ts" });
    expect(r.content).toBe('2 files match "**/*.ts" (newest first):\nok.ts\nnew\\nline.ts');
  });
});

describe("glob matcher", () => {
  test("the quick shapes match exactly what picomatch matches", () => {
    const globs = ["**", "**/*", "**/*.ts", "**/package.json", "**/*.{js,ts}", "**/.*", "**/[a-c]*.md", "**/*.@(js|cjs)", "**/!(*.js)", "**/!x.ts", "**/a**b", "src/**/*.ts", "*.ts"];
    const paths = ["a.ts", "src/a.ts", "src/deep/b.js", ".hidden/c.ts", "x/.env", "x/.d.ts", "pkg/package.json", "package.json", "a/b/c.md", "d.cjs", "x.ts", "!x.ts", "a/aXb", "q/a/b"];
    for (const glob of globs) {
      const reference = picomatch(glob, { dot: true });
      const quick = globMatcher(glob);
      for (const path of paths) expect({ glob, path, match: quick(path) }).toEqual({ glob, path, match: reference(path) });
    }
  });
});

describe("glob's depth pruning", () => {
  test("a pattern said to be of fixed depth matches only paths with that many slashes", () => {
    // Random globs over a small alphabet of segment shapes, against random paths: wherever
    // fixedDepth gives a depth, no path of another depth matches (picomatch decides).
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n);
    const parts = ["*", "a", "b*", "?", "*.ts", ".*", "a?c", "x.*", "!a", "**", "{a,b/c}", "@(a|b)", "[ab]", "[!a]", "a\\*", "*/"];
    const names = ["a", "b", "abc", "x.ts", ".env", "bb", "c", "a.b", "!a"];
    let fixed = 0;
    for (let i = 0; i < 4000; i++) {
      const glob = Array.from({ length: 1 + rand(3) }, () => parts[rand(parts.length)]).join("/");
      const depth = fixedDepth(glob);
      if (depth === null) continue;
      fixed++;
      const test = globTest(glob, { dot: true });
      for (let j = 0; j < 20; j++) {
        const path = Array.from({ length: 1 + rand(4) }, () => names[rand(names.length)]).join("/");
        if (test(path)) expect({ glob, path, slashes: path.split("/").length - 1 }).toEqual({ glob, path, slashes: depth });
      }
    }
    expect(fixed).toBeGreaterThan(500);
    expect(fixedDepth("*.json")).toBe(0);
    expect(fixedDepth("src/*/index.ts")).toBe(2);
    for (const open of ["**/*.ts", "src/**", "{a,b/c}", "!*.js", "@(a|b/c)", "[/]x", "a\\/b"]) expect(fixedDepth(open)).toBeNull();
  });

  test("a shallow pattern finds what the whole walk finds; with no match the hint is the whole walk's", async () => {
    using tmp = tempDir();
    const root = join(tmp.path, "tree");
    const names = ["a.json", "b.md", "src/c.json", "src/deep/d.json", "src/deep/e.ts", "x/y/z/f.json", "x/g.ts"];
    writeTree(root, Object.fromEntries(names.map((n) => [n, ""])));
    ageInOrder(root, names);
    const top = await glob(root, { pattern: "*.json" });
    expect(top.content).toBe('1 file matches "*.json":\na.json');
    const two = await glob(root, { pattern: "*/*/*.json" });
    expect(two.content).toBe('1 file matches "*/*/*.json":\nsrc/deep/d.json');
    // Nothing at the top: the deeper files that would match are counted, as before pruning.
    const none = await glob(root, { pattern: "*.ts" });
    expect(none.content).toBe(`No files match "*.ts" under ${root} at the top level ("*" does not cross directories). "**/*.ts" matches 2 files at any depth.`);
    const spelled = await glob(root, { pattern: "**/*.ts" });
    expect(spelled.metadata.files).toBe(2);
  });
});

describe("glob's shared walk", () => {
  test("a worker thread that fails mid-walk: the walk is done again on this thread, with the same result", async () => {
    using tmp = tempDir();
    const root = join(tmp.path, "tree");
    const names = Array.from({ length: 60 }, (_, i) => `d${i % 12}/e${i % 5}/f${i}.ts`);
    writeTree(root, Object.fromEntries(names.map((n) => [n, ""])));
    ageInOrder(root, names);
    const bad = join(tmp.path, "bad-worker.ts");
    // A helper says it is up by setting its state word to IDLE (2, parallel.ts's State).
    const up = "if (e.data.type === 'walk') Atomics.store(new Int32Array(e.data.state), 0, 2);";
    writeFileSync(bad, `self.onmessage = (e) => { ${up} if (e.data.type === 'dirs') throw new Error('boom'); };\n`);
    const config = { real: root, walkRoot: root, walkRel: "", glob: "**/*.ts", hidden: true, noise: ["node_modules", "dist", ".git"], deadline: Date.now() + 10_000, statRelative: false };
    const saved = process.env.KT_GLOB_PARALLEL_AFTER;
    process.env.KT_GLOB_PARALLEL_AFTER = "0";
    try {
      const failed = await scanGlob(config, bad);
      expect(failed.threads).toBe(1);
      expect(failed.rels).toEqual([...names].reverse());
      // A worker that exits without a word is a failure too, not a wait for ever.
      const quitter = join(tmp.path, "quit-worker.ts");
      writeFileSync(quitter, `self.onmessage = (e) => { ${up} if (e.data.type === 'dirs') process.exit(0); };\n`);
      const quit = await scanGlob(config, quitter);
      expect(quit.threads).toBe(1);
      expect(quit.rels).toEqual(failed.rels);
      const shared = await scanGlob(config);
      expect(shared.threads).toBe(threadCount());
      expect(shared.rels).toEqual(failed.rels);
      // More threads than cores (KT_THREADS): every helper shares the walk, same result.
      process.env.KT_THREADS = "4";
      const four = await scanGlob(config);
      delete process.env.KT_THREADS;
      expect(four.threads).toBe(4);
      expect(four.rels).toEqual(failed.rels);
    } finally {
      if (saved === undefined) delete process.env.KT_GLOB_PARALLEL_AFTER;
      else process.env.KT_GLOB_PARALLEL_AFTER = saved;
    }
  });
});

describe("glob", () => {
  test("over 100 files: the newest 100, the full list in a spill file", async () => {
    using tmp = tempDir();
    const root = join(tmp.path, "tree");
    const names = Array.from({ length: 312 }, (_, i) => `d${i % 7}/f${String(i).padStart(3, "0")}.ts`);
    writeTree(root, Object.fromEntries(names.map((n) => [n, ""])));
    ageInOrder(root, names);
    const r = await glob(root, { pattern: "**/*.ts" });
    const spill = r.metadata.truncation!.spillPath!;
    const newest = [...names].reverse();
    expect(r.content).toBe(['312 files match "**/*.ts" (newest first):', ...newest.slice(0, 100), `[Showing 100 of 312. Full list: ${spill} — or narrow the pattern.]`].join("\n"));
    expect(readFileSync(spill, "utf8")).toBe(['312 files match "**/*.ts" (newest first):', ...newest].join("\n") + "\n");
    expect(r.metadata).toMatchObject({
      title: "Glob **/*.ts · 312 files (showing 100)",
      files: 312,
      truncation: { originalLines: 313, shownHeadLines: 101, shownTailLines: 0, omittedLines: 212, spillPath: spill },
    });
  });

  test("long paths: fewer than 100 are shown when 100 would not fit well under 64 KB", async () => {
    using tmp = tempDir();
    const root = join(tmp.path, "tree");
    const dir = Array.from({ length: 8 }, (_, i) => `${"d".repeat(120)}${i}`).join("/");
    const names = Array.from({ length: 120 }, (_, i) => `${dir}/f${String(i).padStart(3, "0")}.txt`);
    writeTree(root, Object.fromEntries(names.map((n) => [n, ""])));
    ageInOrder(root, names);
    const r = await glob(root, { pattern: "**/*.txt" });
    const lines = r.content.split("\n");
    expect(lines.length - 2).toBe(Math.floor((56 * 1024) / (names[0]!.length + 1)));
    expect(lines.at(-1)).toBe(`[Showing ${lines.length - 2} of 120. Full list: ${r.metadata.truncation!.spillPath} — or narrow the pattern.]`);
  });

  test("when the spill file cannot be written, the truncation line says so", async () => {
    using tmp = tempDir();
    writeTree(tmp.path, Object.fromEntries(Array.from({ length: 120 }, (_, i) => [`f${i}.ts`, ""])));
    const stateDir = "/dev/null/state";
    const r = await callTool("glob", { pattern: "*.ts" }, { cwd: tmp.path, stateDir });
    expect(r.content.split("\n").at(-1)).toBe("[Showing 100 of 120 (the full list could not be saved). Narrow the pattern.]");
    expect(r.warnings[0]).toStartWith("kt: could not save the full output to the state directory:");
    expect(kt(["glob", "*.ts"], { cwd: tmp.path, stateDir }).stdout).toBe(`${r.content}\n`);
  });

  test("a pattern that names no files is refused", async () => {
    using tmp = tempDir();
    const root = join(tmp.path, "tree");
    mkdirSync(root);
    const r = await glob(root, { pattern: "./" });
    expect(r.content).toBe('Invalid glob pattern "./": it names no files. Use "**/*" for every file, or a pattern such as "**/*.ts".');
    expect(r.error?.code).toBe("INVALID_GLOB");
  });

  test("symlinks are not followed, so a loop is harmless", async () => {
    using tmp = tempDir();
    const root = join(tmp.path, "tree");
    writeTree(root, { "a/x.ts": "" });
    symlinkSync("..", join(root, "a", "loop"));
    symlinkSync("x.ts", join(root, "a", "y.ts"));
    const r = await glob(root, { pattern: "**/*.ts" });
    expect(r.content).toBe('1 file matches "**/*.ts":\na/x.ts');
  });

  test("a very long pattern is repeated cut to 200 characters", async () => {
    using tmp = tempDir();
    const root = join(tmp.path, "tree");
    writeTree(root, { "a.ts": "" });
    const long = `${"x".repeat(300)}.ts`;
    const r = await glob(root, { pattern: long });
    expect(r.content.split("\n")[0]).toStartWith(`No files match "${"x".repeat(200)}…" under ${root}`);
  });

  test("the time limit marks a partial list", async () => {
    using tmp = tempDir();
    const root = join(tmp.path, "tree");
    writeTree(root, { "a.ts": "", "sub/b.ts": "" });
    const r = await glob(root, { pattern: "**/*.ts" }, { KT_GREP_TIMEOUT_MS: "0" });
    expect(r.content).toBe(
      '1 file matches "**/*.ts" (partial):\na.ts\n[The walk stopped at the 0 s time limit, so this list is partial. Narrow the pattern or path to search fewer directories.]',
    );
    expect(r.metadata.extra).toEqual({ partial: true, threads: 1 });
    const none = await glob(root, { pattern: "**/*.md" }, { KT_GREP_TIMEOUT_MS: "0" });
    expect(none.content).toBe(`No files match "**/*.md" under ${root} before the 0 s time limit, so the search is partial. Narrow the pattern or path to search fewer directories.`);
  });

  test("a missing path is FILE_NOT_FOUND with suggestions", async () => {
    using tmp = tempDir();
    const root = join(tmp.path, "tree");
    writeTree(root, { "src/a.ts": "" });
    const r = await glob(root, { pattern: "*.ts", path: "scr" });
    expect(r.content).toBe(`File not found: ${root}/scr. Did you mean one of these? src`);
    expect(r.error?.code).toBe("FILE_NOT_FOUND");
  });

  test("pattern and path are positional on the command line", () => {
    using tmp = tempDir();
    writeTree(tmp.path, { "src/a.ts": "", "src/b.js": "" });
    const r = kt(["glob", "*.ts", "src"], { cwd: tmp.path, stateDir: join(tmp.path, ".state") });
    expect(r.stdout).toBe('1 file matches "*.ts":\nsrc/a.ts\n');
  });

  const root0 = process.getuid?.() === 0;
  const SETPRIV = Bun.which("setpriv");
  test.skipIf(root0 && !SETPRIV)("an unreadable directory is listed; an ignored one is pruned before it is read (run as nobody)", () => {
    using tmp = tempDir();
    chmodSync(tmp.path, 0o755);
    const root = join(tmp.path, "tree");
    writeTree(root, { "a.ts": "", "locked/b.ts": "", "ignored/c.ts": "", ".ignore": "ignored/\n" });
    chmodSync(join(root, "locked"), 0o000);
    chmodSync(join(root, "ignored"), 0o000);
    const stateDir = join(tmp.path, "state");
    mkdirSync(stateDir);
    chmodSync(stateDir, 0o777);
    const prefix = root0 ? [SETPRIV!, "--reuid=65534", "--regid=65534", "--clear-groups"] : [];
    const proc = Bun.spawnSync([...prefix, KT, "glob", "**/*.ts"], {
      cwd: root,
      env: { PATH: process.env.PATH ?? "", HOME: "/tmp", NO_COLOR: "1", KT_STATE_DIR: stateDir },
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(proc.stderr.toString()).toBe("");
    expect(proc.stdout.toString()).toBe('1 file matches "**/*.ts":\na.ts\n[1 directory could not be read (permission denied) and was not searched: locked.]\n');
  });
});
