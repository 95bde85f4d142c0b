// SPEC §8.4, issue 27: noise by evidence, the "Not searched" line and metadata.skipped,
// no_ignore, and the shown results in --json — through dist/kt, with both grep engines
// (the rg engine where rg is installed) and glob giving the same answers; and the
// differential suite against rg on real trees (the Python standard library, node_modules),
// its exceptions computed here by walking and checking the evidence, not listed by hand.
import { describe, expect, test } from "bun:test";
import { existsSync, lstatSync, readFileSync, realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import { kt, tempDir } from "./_helpers.ts";
import { RG, rgFiles, writeTree } from "./_search.ts";
import { summarize } from "../src/search/skipped.ts";

const ENGINES = RG ? ["builtin", "rg"] : ["builtin"];
const TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# a cache directory tag\n";

interface Json {
  content: string;
  metadata: { matches?: number; files?: number; paths?: string[]; counts?: number[]; lines?: { path: string; line: number; column: number | null; text: string }[]; skipped?: ReturnType<typeof summarize>; truncation?: { spillPath?: string } };
}

function run(root: string, args: string[], engine = "builtin"): Json {
  const r = kt([...args, "--json"], { cwd: root, stateDir: join(root, "..", "state"), env: { KT_GREP_ENGINE: engine } });
  return JSON.parse(r.stdout) as Json;
}

/** grep with every engine: the whole envelope but durationMs and extra (engine, threads)
 * must agree; the first is returned. */
function grepAll(root: string, args: string[]): Json {
  const outs = ENGINES.map((engine) => ({ engine, out: run(root, ["grep", ...args], engine) }));
  const comparable = (j: Json) => {
    const { durationMs: _d, extra: _e, ...meta } = j.metadata as Record<string, unknown>;
    return { content: j.content, meta };
  };
  for (const o of outs) expect({ engine: o.engine, ...comparable(o.out) }).toEqual({ engine: o.engine, ...comparable(outs[0]!.out) });
  return outs[0]!.out;
}

describe("the Not searched line: every form", () => {
  const show = (rel: string) => rel;
  const cases: [string, string[], string][] = [
    ["nothing left out", [], ""],
    ["one ignored directory", ["dist\0.gitignore"], "Not searched: 1 directory ignored by .gitignore (dist/). Name it as path, or set no_ignore."],
    ["two ignored", ["dist\0.gitignore", "coverage\0.gitignore"], "Not searched: 2 directories ignored by .gitignore (coverage/, dist/). Name one as path, or set no_ignore."],
    ["more than two ignored: the shallowest named", ["a/b/deep\0.gitignore", "dist\0.gitignore", "coverage\0.gitignore"], "Not searched: 3 directories ignored by .gitignore (coverage/, dist/, …). Name one as path, or set no_ignore."],
    ["ignored by two kinds of file", ["dist\0.ktignore", "logs\0.gitignore"], "Not searched: 2 directories ignored by .gitignore and .ktignore (dist/, logs/). Name one as path, or set no_ignore."],
    ["ignored by three kinds", ["a\0.ignore", "b\0.gitignore", "c\0.git/info/exclude"], "Not searched: 3 directories ignored by .gitignore, .ignore and .git/info/exclude (a/, b/, …). Name one as path, or set no_ignore."],
    ["one noise directory", ["node_modules\0noise"], "Not searched: node_modules/. Name it as path, or set no_ignore."],
    ["two noise", ["node_modules\0noise", "target\0noise"], "Not searched: 2 dependency and cache directories (node_modules/, target/). Name one as path, or set no_ignore."],
    ["many noise", ["pkg/node_modules\0noise", "node_modules\0noise", "a/__pycache__\0noise", "venv\0noise"], "Not searched: 4 dependency and cache directories (node_modules/, venv/, …). Name one as path, or set no_ignore."],
    ["both, as SPEC §8.4 writes it", ["dist\0.gitignore", "coverage\0.gitignore", "tmp\0.gitignore", "node_modules\0noise"], "Not searched: 3 directories ignored by .gitignore (coverage/, dist/, …) and node_modules/. Name one as path, or set no_ignore."],
    ["both, many of each", ["dist\0.gitignore", "coverage\0.gitignore", "tmp\0.gitignore", "node_modules\0noise", "target\0noise", "x/venv\0noise"], "Not searched: 3 directories ignored by .gitignore (coverage/, dist/, …) and 3 dependency and cache directories (node_modules/, target/, …). Name one as path, or set no_ignore."],
    ["one of each", ["dist\0.gitignore", "node_modules\0noise"], "Not searched: 1 directory ignored by .gitignore (dist/) and node_modules/. Name one as path, or set no_ignore."],
    ["the same directory twice (two threads, two walks) counts once", ["dist\0.gitignore", "dist\0.gitignore"], "Not searched: 1 directory ignored by .gitignore (dist/). Name it as path, or set no_ignore."],
  ];
  for (const [name, pruned, line] of cases) {
    test(name, () => {
      const s = summarize(pruned, show);
      expect(s.line).toBe(line);
      expect(s.directories).toBe(s.ignored + s.noise);
      expect(s.paths.length).toBe(s.directories);
    });
  }

  test("metadata.skipped lists at most 100 paths, shallowest first, and counts them all", () => {
    const pruned = Array.from({ length: 150 }, (_, i) => `d${String(i).padStart(3, "0")}/node_modules\0noise`).concat(["build\0.gitignore"]);
    const s = summarize(pruned, (rel) => `./${rel}`);
    expect({ directories: s.directories, ignored: s.ignored, noise: s.noise, listed: s.paths.length }).toEqual({ directories: 151, ignored: 1, noise: 150, listed: 100 });
    expect(s.paths[0]).toEqual({ path: "./build/", reason: ".gitignore" });
    expect(s.paths[1]).toEqual({ path: "./d000/node_modules/", reason: "noise" });
  });

  test("the order of metadata.skipped: depth, then the path by UTF-16 code units (a prefix first, a NUL-free reason never deciding)", () => {
    // Each shuffled, against the order a comparator of (depth, path) gives.
    const rels = ["b", "a", "a/b", "a-b", "a.b", "A", "é", "😀", "z/a", "a/b/c", "a/\u00e9", "ab", "a/b-c", "\u0001x", " "];
    const reasons = [".gitignore", "noise", ".git/info/exclude", ".ktignore"];
    const want = [...rels].sort((a, b) => a.split("/").length - b.split("/").length || (a < b ? -1 : a > b ? 1 : 0));
    for (let round = 0; round < 20; round++) {
      const shuffled = [...rels].sort(() => Math.random() - 0.5);
      const s = summarize(
        shuffled.map((rel, i) => `${rel}\0${reasons[i % reasons.length]}`),
        (rel) => rel,
      );
      expect(s.paths.map((p) => p.path)).toEqual(want.map((rel) => `${rel}/`));
      for (const p of s.paths) expect(p.reason).toBe(reasons[shuffled.indexOf(p.path.slice(0, -1)) % reasons.length]!);
    }
  });
});

/** A repository with gitignored directories, noise by name and by evidence, and source
 * packages named like noise. */
function repo(root: string): void {
  writeTree(root, {
    ".git/HEAD": "ref: refs/heads/main\n",
    ".gitignore": "/dist/\n/coverage/\n*.log\n",
    "src/app.ts": "const needle = 1;\n",
    "dist/app.js": "needle\n",
    "coverage/index.html": "needle\n",
    "node_modules/pkg/index.js": "needle\n",
    "node_modules/pkg/dist/pkg.js": "needle\n",
    "target/CACHEDIR.TAG": TAG,
    "target/debug/out.txt": "needle\n",
    "rust/target/release/keep.rs": "needle\n",
    "venv/pyvenv.cfg": "home = /usr/bin\n",
    "venv/lib/site.py": "needle\n",
    "lib/venv/__init__.py": "needle\n",
    "tools/build/__init__.py": "needle\n",
    "src/__pycache__/app.cpython-311.pyc": "needle\n",
  });
}

describe("noise by evidence, in both engines and glob", () => {
  test("each evidence rule: target/ and venv/ with and without their file, a build/ package, dist/ in a named node_modules package", () => {
    using tmp = tempDir();
    const root = join(tmp.path, "repo");
    repo(root);
    const r = grepAll(root, ["needle", "--output-mode", "files_with_matches"]);
    expect(r.content.split("\n")[0]).toBe('4 matches in 4 files for "needle":');
    expect(r.metadata.paths!.sort()).toEqual(["lib/venv/__init__.py", "rust/target/release/keep.rs", "src/app.ts", "tools/build/__init__.py"]);
    const glob = run(root, ["glob", "**/*"]);
    expect(glob.metadata.paths!.sort()).toEqual(["lib/venv/__init__.py", "rust/target/release/keep.rs", "src/app.ts", "tools/build/__init__.py"]);
    // Named: the package under node_modules, dist/ included; the tagged target/ itself.
    expect(grepAll(root, ["needle", "node_modules/pkg", "--output-mode", "files_with_matches"]).metadata.paths!.sort()).toEqual(["node_modules/pkg/dist/pkg.js", "node_modules/pkg/index.js"]);
    expect(grepAll(root, ["needle", "--include", "node_modules/pkg/**", "--output-mode", "files_with_matches"]).metadata.paths!.sort()).toEqual(["node_modules/pkg/dist/pkg.js", "node_modules/pkg/index.js"]);
    expect(grepAll(root, ["needle", "target"]).metadata.paths).toEqual(["target/debug/out.txt"]);
    expect(grepAll(root, ["needle", "--include", "venv/**"]).metadata.paths).toEqual(["venv/lib/site.py"]);
    expect(run(root, ["glob", "venv/**/*.py"]).metadata.paths).toEqual(["venv/lib/site.py"]);
    // A name written in the pattern exempts every directory of that name.
    expect(run(root, ["glob", "**/target/**/*"]).metadata.paths!.sort()).toEqual(["rust/target/release/keep.rs", "target/CACHEDIR.TAG", "target/debug/out.txt"]);
  });

  test("a directory that holds CACHEDIR.TAG as a directory, not a file, is no evidence", () => {
    using tmp = tempDir();
    const root = join(tmp.path, "repo");
    writeTree(root, { "out/CACHEDIR.TAG/x": "needle\n", "out/a.txt": "needle\n" });
    expect(grepAll(root, ["needle"]).metadata.paths!.sort()).toEqual(["out/CACHEDIR.TAG/x", "out/a.txt"]);
  });

  test("evidence inside an ignored or a noise directory is never read, and is not reported twice", () => {
    using tmp = tempDir();
    const root = join(tmp.path, "repo");
    writeTree(root, { ".git/HEAD": "", ".gitignore": "out/\n", "out/target/CACHEDIR.TAG": TAG, "out/target/x": "n\n", "a/CACHEDIR.TAG": TAG, "a/b/CACHEDIR.TAG": TAG, "a/b/x": "n\n", "keep.txt": "n\n" });
    const r = grepAll(root, ["zzz"]);
    expect(r.metadata.skipped!.paths).toEqual([
      { path: "a/", reason: "noise" },
      { path: "out/", reason: ".gitignore" },
    ]);
  });
});

describe("the Not searched line on zero results, and metadata.skipped always", () => {
  test("gitignored directories, noise directories and both: golden, the same in both engines and glob", () => {
    using tmp = tempDir();
    const both = join(tmp.path, "both");
    repo(both);
    const g = grepAll(both, ["zqxj"]);
    const line = "Not searched: 2 directories ignored by .gitignore (coverage/, dist/) and 4 dependency and cache directories (node_modules/, target/, …). Name one as path, or set no_ignore.";
    expect(g.content).toBe(`No matches for "zqxj" in ${both}. Check the regex or broaden the scope.\n${line}`);
    const glob = run(both, ["glob", "**/*.zqxj"]);
    expect(glob.content).toBe(`No files match "**/*.zqxj" under ${both}. No file here has the extension .zqxj; the most common are .py (2 files), .rs (1 file), .ts (1 file).\n${line}`);
    expect(glob.metadata.skipped).toEqual(g.metadata.skipped!);
    expect(g.metadata.skipped!.paths).toEqual([
      { path: "coverage/", reason: ".gitignore" },
      { path: "dist/", reason: ".gitignore" },
      { path: "node_modules/", reason: "noise" },
      { path: "target/", reason: "noise" },
      { path: "venv/", reason: "noise" },
      { path: "src/__pycache__/", reason: "noise" },
    ]);
    // With matches: no line in the text, the same metadata.
    const hit = grepAll(both, ["needle"]);
    expect(hit.content).not.toContain("Not searched");
    expect(hit.metadata.skipped).toEqual(g.metadata.skipped!);

    const ignoredOnly = join(tmp.path, "ignored");
    writeTree(ignoredOnly, { ".git/HEAD": "", ".gitignore": "dist/\n", "dist/a.js": "x\n", "src/a.ts": "x\n" });
    const gi = "Not searched: 1 directory ignored by .gitignore (dist/). Name it as path, or set no_ignore.";
    expect(grepAll(ignoredOnly, ["zqxj"]).content).toBe(`No matches for "zqxj" in ${ignoredOnly}. Check the regex or broaden the scope.\n${gi}`);
    expect(run(ignoredOnly, ["glob", "**/*.zqxj"]).content).toBe(`No files match "**/*.zqxj" under ${ignoredOnly}. No file here has the extension .zqxj; the most common are .ts (1 file).\n${gi}`);

    const noiseOnly = join(tmp.path, "noise");
    writeTree(noiseOnly, { "node_modules/x/a.js": "x\n", "src/a.ts": "x\n" });
    const nm = "Not searched: node_modules/. Name it as path, or set no_ignore.";
    expect(grepAll(noiseOnly, ["zqxj"]).content).toBe(`No matches for "zqxj" in ${noiseOnly}. Check the regex or broaden the scope.\n${nm}`);
    expect(run(noiseOnly, ["glob", "**/*.zqxj"]).content).toBe(`No files match "**/*.zqxj" under ${noiseOnly}. No file here has the extension .zqxj; the most common are .ts (1 file).\n${nm}`);

    // Nothing left out: no line, metadata.skipped still there.
    const clean = join(tmp.path, "clean");
    writeTree(clean, { "src/a.ts": "x\n", ".hidden/a": "x\n" });
    const c = grepAll(clean, ["zqxj"]);
    expect(c.content).toBe(`No matches for "zqxj" in ${clean}. Check the regex or broaden the scope.`);
    expect(c.metadata.skipped).toEqual({ directories: 0, ignored: 0, noise: 0, paths: [], line: "" });
  });

  test("paths in the line are as the model would give them: below a subdirectory searched, relative to the working directory", () => {
    using tmp = tempDir();
    const root = join(tmp.path, "repo");
    writeTree(root, { "pkg/node_modules/x/a.js": "x\n", "pkg/a.ts": "x\n" });
    expect(grepAll(root, ["zqxj", "pkg"]).metadata.skipped!.line).toBe("Not searched: pkg/node_modules/. Name it as path, or set no_ignore.");
  });

  test("glob counts only directories its pattern could enter", () => {
    using tmp = tempDir();
    const root = join(tmp.path, "repo");
    writeTree(root, { "a/node_modules/x/a.js": "x\n", "node_modules/y.js": "x\n", "top.ts": "x\n" });
    // "*.md" looks at the top level's files only, "*/*.md" one level down: a deeper
    // node_modules is no part of either (though glob walks the whole tree for its hint).
    expect(run(root, ["glob", "*.md"]).metadata.skipped!.paths).toEqual([]);
    expect(run(root, ["glob", "*/*.md"]).metadata.skipped!.paths).toEqual([{ path: "node_modules/", reason: "noise" }]);
  });
});

describe("no_ignore", () => {
  test("grep (both engines) and glob search ignored files and noise directories too; hidden entries stay a rule of their own", () => {
    using tmp = tempDir();
    const root = join(tmp.path, "repo");
    repo(root);
    writeTree(root, { ".ktignore": "lib/\n", "debug.log": "needle\n", ".hidden/a.txt": "needle\n" });
    const all = [
      "coverage/index.html",
      "debug.log",
      "dist/app.js",
      "lib/venv/__init__.py",
      "node_modules/pkg/dist/pkg.js",
      "node_modules/pkg/index.js",
      "rust/target/release/keep.rs",
      "src/__pycache__/app.cpython-311.pyc",
      "src/app.ts",
      "target/debug/out.txt",
      "tools/build/__init__.py",
      "venv/lib/site.py",
    ];
    const g = grepAll(root, ["needle", "--no-ignore", "--output-mode", "files_with_matches"]);
    expect(g.metadata.paths!.sort()).toEqual(all);
    expect(g.metadata.skipped).toEqual({ directories: 0, ignored: 0, noise: 0, paths: [], line: "" });
    const glob = run(root, ["glob", "**/*", "--no-ignore"]);
    expect(glob.metadata.paths!.filter((p) => !p.endsWith("pyvenv.cfg") && !p.endsWith("CACHEDIR.TAG")).sort()).toEqual(all);
    // Without it, .ktignore's lib/ is left out too, and said so.
    const without = grepAll(root, ["zqxj"]);
    expect(without.metadata.skipped!.paths).toContainEqual({ path: "lib/", reason: ".ktignore" });
  });

  test("JSON input takes it as a boolean, and a wrong type is repair prose", () => {
    using tmp = tempDir();
    const root = join(tmp.path, "repo");
    writeTree(root, { "node_modules/a.js": "needle\n" });
    const r = kt(["grep"], { cwd: root, stateDir: join(tmp.path, "state"), stdin: JSON.stringify({ pattern: "needle", no_ignore: true }) });
    expect(r.stdout).toBe('1 match in 1 file for "needle":\n\nnode_modules/a.js\n  1: needle\n');
    const bad = kt(["glob"], { cwd: root, stateDir: join(tmp.path, "state"), stdin: JSON.stringify({ pattern: "**", no_ignore: "yes" }) });
    expect(bad.stdout).toContain('parameter "no_ignore"');
  });
});

describe("--json: what is shown, for scripts", () => {
  test("content mode: every shown line with path, line, column (rg's) and text; paths; the same in both engines", () => {
    using tmp = tempDir();
    const root = join(tmp.path, "repo");
    const long = `${"x".repeat(400)}é needle ${"y".repeat(300)}`;
    writeTree(root, { "a.txt": "one needle\n  needle two\nnone\n", "b/c.txt": `héllo needle\n${long}\n` });
    const r = grepAll(root, ["needle"]);
    expect(r.metadata.lines!.map((l) => ({ ...l, text: l.text.length > 20 ? `${l.text.slice(0, 5)}…` : l.text })).sort((a, b) => (a.path + a.line < b.path + b.line ? -1 : 1))).toEqual([
      { path: "a.txt", line: 1, column: 5, text: "one needle" },
      { path: "a.txt", line: 2, column: 3, text: "  needle two" },
      { path: "b/c.txt", line: 1, column: 8, text: "héllo needle" },
      { path: "b/c.txt", line: 2, column: 404, text: "…xxxx…" },
    ]);
    if (RG) {
      // The column is rg's own (bytes, 1-based).
      const rg = Bun.spawnSync([RG, "--column", "-n", "--no-heading", "--no-config", "needle", "."], { cwd: root, stdout: "pipe" }).stdout.toString();
      for (const l of r.metadata.lines!) expect(rg).toContain(`./${l.path}:${l.line}:${l.column}:`);
    }
    expect(r.metadata.paths!.sort()).toEqual(["a.txt", "b/c.txt"]);
    expect(r.metadata.matches).toBe(4);
  });

  test("files and count modes: paths (and counts); a page shows its own entries only", () => {
    using tmp = tempDir();
    const root = join(tmp.path, "repo");
    writeTree(root, { "a.txt": "needle\nneedle\n", "b.txt": "needle\n", "c.txt": "needle\n" });
    const files = grepAll(root, ["needle", "--output-mode", "files_with_matches"]);
    expect(files.metadata.paths!.length).toBe(3);
    expect(files.metadata.lines).toBeUndefined();
    const counts = grepAll(root, ["needle", "--output-mode", "count"]);
    const byPath = Object.fromEntries(counts.metadata.paths!.map((p, i) => [p, counts.metadata.counts![i]]));
    expect(byPath).toEqual({ "a.txt": 2, "b.txt": 1, "c.txt": 1 });
    const page = grepAll(root, ["needle", "--head-limit", "2", "--offset", "1"]);
    expect(page.metadata.lines!.length).toBe(2);
    const glob = run(root, ["glob", "*.txt", "--head-limit", "2"]);
    expect(glob.metadata.paths!.length).toBe(2);
    expect(glob.metadata.files).toBe(3);
  });
});

/** What rg finds that kt must not: files below .git, node_modules, __pycache__, or a
 * directory holding CACHEDIR.TAG or pyvenv.cfg — each directory below `root` checked here
 * (the root itself is named). */
function expectedOf(root: string, rgList: string[]): string[] {
  const noise = new Map<string, boolean>();
  const isNoise = (rel: string): boolean => {
    const known = noise.get(rel);
    if (known !== undefined) return known;
    const name = rel.slice(rel.lastIndexOf("/") + 1);
    let yes = [".git", "node_modules", "__pycache__"].includes(name);
    for (const f of ["CACHEDIR.TAG", "pyvenv.cfg"]) {
      try {
        if (lstatSync(join(root, rel, f)).isFile()) yes = true;
      } catch {
        // absent
      }
    }
    noise.set(rel, yes);
    return yes;
  };
  return rgList.filter((file) => {
    for (let d = dirname(file); d !== "."; d = dirname(d)) if (isNoise(d)) return false;
    return true;
  });
}

/** Every line kt saved (the spill file), or shown when it all fit, without the header. */
function fullList(j: Json, skipHeader: number): string[] {
  const spill = j.metadata.truncation?.spillPath;
  const text = spill ? readFileSync(spill, "utf8") : `${j.content}\n`;
  return text.trimEnd().split("\n").slice(skipHeader).filter((l) => l !== "" && !l.startsWith("["));
}

function pythonStdlib(): string | null {
  const r = Bun.spawnSync(["python3", "-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"], { stdout: "pipe", stderr: "ignore" });
  const dir = r.stdout.toString().trim();
  return r.exitCode === 0 && dir && existsSync(join(dir, "os.py")) ? realpathSync(dir) : null;
}

const NODE_MODULES = realpathSync(join(import.meta.dir, "..", "node_modules"));
const TREES = [
  { name: "the Python standard library", root: pythonStdlib(), glob: "**/*", pattern: "import os" },
  { name: "node_modules", root: NODE_MODULES, glob: "**/*.json", pattern: "readFileSync" },
].filter((t): t is { name: string; root: string; glob: string; pattern: string } => t.root !== null);

describe.skipIf(!RG)("differential: kt finds every file rg finds but those in noise directories", () => {
  for (const tree of TREES) {
    test(`${tree.name}: glob ${tree.glob}`, () => {
      using tmp = tempDir();
      // rg --files without -g: rg's -g would bring back hidden files, which kt leaves to its hidden rule.
      const ext = tree.glob === "**/*" ? "" : tree.glob.slice(tree.glob.lastIndexOf("."));
      const all = rgFiles(tree.root).filter((f) => f.endsWith(ext));
      const want = expectedOf(tree.root, all).sort();
      // The exceptions are real (the standard library's __pycache__ directories).
      if (ext === "") expect(all.length).toBeGreaterThan(want.length);
      const got = fullList(JSON.parse(kt(["glob", tree.glob, "--json"], { cwd: tree.root, stateDir: join(tmp.path, "state") }).stdout) as Json, 1).sort();
      expect(got.length).toBeGreaterThan(100);
      expect(got).toEqual(want);
      if (tree.root === pythonStdlib()) expect(got).toContain("venv/__init__.py");
    }, 120_000);

    test(`${tree.name}: grep ${tree.pattern}, both engines`, () => {
      using tmp = tempDir();
      const rg = Bun.spawnSync([RG!, "-l", "--null", "--no-config", "--no-ignore-global", "-s", tree.pattern], { cwd: tree.root, stdout: "pipe" });
      const listed = rg.stdout.toString().split("\0").filter(Boolean).map((p) => (p.startsWith("./") ? p.slice(2) : p));
      // rg searches what kt calls binary (a NUL after the first 8 KB) — kt skips binary files.
      const want = expectedOf(tree.root, listed).sort();
      for (const engine of ENGINES) {
        const j = JSON.parse(kt(["grep", tree.pattern, "--output-mode", "files_with_matches", "--case-sensitive", "--json"], { cwd: tree.root, stateDir: join(tmp.path, "state"), env: { KT_GREP_ENGINE: engine } }).stdout) as Json;
        const got = fullList(j, 2).sort();
        expect(got.length).toBeGreaterThan(10);
        const missing = want.filter((f) => !got.includes(f));
        // Every file kt leaves out of rg's list is one it holds to be binary.
        for (const f of missing) expect({ engine, f, binary: readFileSync(join(tree.root, f)).includes(0) }).toEqual({ engine, f, binary: true });
        expect(got.filter((f) => !want.includes(f))).toEqual([]);
      }
    }, 120_000);
  }
});
