// The shared walk (src/search/walk.ts): ripgrep's default filters, checked against fixed
// expectations and, where rg knows the rule, against `rg --files` itself.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./_helpers.ts";
import { RG, RG_NOISE, rgFiles, walked, writeTree } from "./_search.ts";
import { compileIgnore, Match } from "../src/search/ignore.ts";
import { walk, Walker, WalkState } from "../src/search/walk.ts";
import { searchFile } from "../src/search/searcher.ts";
import { compilePattern } from "../src/search/regex.ts";
import { withContext } from "../src/search/context.ts";

/** Asserts the walk yields `expected`, and that rg agrees when the rule is one rg knows. */
function expectFiles(root: string, expected: string[], opts: { rg?: boolean } = {}): void {
  expect(walked(root)).toEqual([...expected].sort());
  if (RG && opts.rg !== false) expect(rgFiles(root, RG_NOISE)).toEqual([...expected].sort());
}

describe("ignore rules", () => {
  test("one line at a time: anchoring, directories only, ** and classes", () => {
    const rules = compileIgnore(["*.log", "/top.txt", "build/", "a/**/z", "docs/**", "[abc]?.md", "!keep.log", "\\#hash", "trail\\ "].join("\n"))!;
    const m = (rel: string, isDir = false) => rules.match(rel, rel.slice(rel.lastIndexOf("/") + 1), isDir);
    expect(m("x/y.log")).toBe(Match.Ignore);
    expect(m("x/keep.log")).toBe(Match.Whitelist);
    expect(m("top.txt")).toBe(Match.Ignore);
    expect(m("sub/top.txt")).toBe(Match.None);
    expect(m("x/build", true)).toBe(Match.Ignore);
    expect(m("x/build")).toBe(Match.None);
    expect(m("a/z")).toBe(Match.Ignore);
    expect(m("a/b/c/z")).toBe(Match.Ignore);
    expect(m("docs", true)).toBe(Match.None);
    expect(m("docs/x/y")).toBe(Match.Ignore);
    expect(m("b1.md")).toBe(Match.Ignore);
    expect(m("d1.md")).toBe(Match.None);
    expect(m("#hash")).toBe(Match.Ignore);
    expect(m("trail ")).toBe(Match.Ignore);
    // A rule names the path itself, never its parents (the walk prunes those).
    expect(m("build/inner.txt")).toBe(Match.None);
  });

  test("comments, blank lines, a BOM and CRLF compile to nothing", () => {
    expect(compileIgnore("\uFEFF# comment\r\n\r\n   \n")).toBeNull();
    expect(compileIgnore("\uFEFFa.txt\r\n")!.match("a.txt", "a.txt", false)).toBe(Match.Ignore);
  });
});

describe("walk", () => {
  test(".gitignore applies only inside a git repository; .ignore everywhere", () => {
    using tmp = tempDir();
    writeTree(tmp.path, { ".gitignore": "*.log\n", ".ignore": "*.tmp\n", "a.log": "x", "b.tmp": "x", "c.txt": "x" });
    expectFiles(tmp.path, ["a.log", "c.txt"]);
    mkdirSync(join(tmp.path, ".git"));
    expectFiles(tmp.path, ["c.txt"]);
  });

  test("nested .gitignore files are relative to their own directory, with negation", () => {
    using tmp = tempDir();
    writeTree(tmp.path, {
      ".git/": "",
      ".gitignore": "*.gen\n/root-only.txt\nout/\n",
      "root-only.txt": "x",
      "src/root-only.txt": "x",
      "src/a.gen": "x",
      "src/.gitignore": "!keep.gen\n/local.txt\n",
      "src/keep.gen": "x",
      "src/local.txt": "x",
      "src/deep/local.txt": "x",
      "src/deep/out/x.txt": "x",
      "out/y.txt": "x",
      "main.ts": "x",
    });
    expectFiles(tmp.path, ["main.ts", "src/deep/local.txt", "src/keep.gen", "src/root-only.txt"]);
  });

  test("parent .gitignore files apply up to the repository root, and .git/info/exclude too", () => {
    using tmp = tempDir();
    writeTree(tmp.path, {
      ".gitignore": "*.md\n", // above the repository: never applies
      "repo/.git/info/exclude": "*.bak\n",
      "repo/.gitignore": "*.log\n",
      "repo/sub/a.log": "x",
      "repo/sub/b.bak": "x",
      "repo/sub/c.md": "x",
      "repo/sub/d.ts": "x",
    });
    expectFiles(join(tmp.path, "repo", "sub"), ["c.md", "d.ts"]);
    expectFiles(join(tmp.path, "repo"), ["sub/c.md", "sub/d.ts"]);
  });

  test("a nested repository does not inherit its parent's .gitignore", () => {
    using tmp = tempDir();
    writeTree(tmp.path, {
      ".git/": "",
      ".gitignore": "*.log\n",
      "a.log": "x",
      "inner/.git/": "",
      "inner/b.log": "x",
      "inner/.gitignore": "*.tmp\n",
      "inner/c.tmp": "x",
    });
    expectFiles(tmp.path, ["inner/b.log"]);
  });

  test("a .git file (worktree) marks a repository and points at its exclude file", () => {
    using tmp = tempDir();
    writeTree(tmp.path, {
      "gitdir/info/exclude": "*.bak\n",
      "wt/.git": `gitdir: ${join(tmp.path, "gitdir")}\n`,
      "wt/.gitignore": "*.log\n",
      "wt/a.log": "x",
      "wt/b.bak": "x",
      "wt/c.ts": "x",
    });
    expect(walked(join(tmp.path, "wt"))).toEqual(["c.ts"]);
  });

  test(".ignore and .rgignore outrank .gitignore, and can whitelist what it ignores", () => {
    using tmp = tempDir();
    writeTree(tmp.path, {
      ".git/": "",
      ".gitignore": "gen/\n*.log\n",
      ".ignore": "!gen/\n*.txt\n",
      ".rgignore": "!keep.txt\n",
      "gen/out.js": "x",
      "a.log": "x",
      "b.txt": "x",
      "keep.txt": "x",
    });
    // (gen, not build: build is a noise directory, skipped before any ignore file.)
    expectFiles(tmp.path, ["gen/out.js", "keep.txt"]);
  });

  test("hidden entries are skipped unless an ignore file whitelists them", () => {
    using tmp = tempDir();
    writeTree(tmp.path, {
      ".git/": "",
      ".env": "x",
      ".hidden/a.ts": "x",
      ".github/workflows/ci.yml": "x",
      ".gitignore": "!.github/\n",
      "visible.ts": "x",
    });
    expectFiles(tmp.path, [".github/workflows/ci.yml", "visible.ts"]);
    expect(walked(tmp.path, { hidden: false })).toEqual([".env", ".github/workflows/ci.yml", ".gitignore", ".hidden/a.ts", "visible.ts"]);
  });

  test("noise directories are skipped unless exempted, wherever they are", () => {
    using tmp = tempDir();
    // SPEC §8.4: dist/ is searched unless it holds noise evidence; node_modules always skipped.
    writeTree(tmp.path, { "node_modules/a/index.js": "x", "pkg/dist/b.js": "x", "pkg/src/c.ts": "x" });
    expectFiles(tmp.path, ["pkg/dist/b.js", "pkg/src/c.ts"]);
    expect(walked(tmp.path, { noise: ["dist"] })).toEqual(["node_modules/a/index.js", "pkg/src/c.ts"]);
  });

  test("the root is walked even when an ancestor's rules ignore it", () => {
    using tmp = tempDir();
    writeTree(tmp.path, { ".git/": "", ".gitignore": "vendor/\n*.log\n", "vendor/lib/a.ts": "x", "vendor/lib/b.log": "x" });
    expectFiles(join(tmp.path, "vendor"), ["lib/a.ts"]);
  });

  test(".ktignore excludes everywhere; its ! lines only cancel its own lines", () => {
    using tmp = tempDir();
    writeTree(tmp.path, {
      ".git/": "",
      ".gitignore": "*.log\n",
      ".ktignore": "generated/\n*.snap\n!keep.snap\n!a.log\n",
      "generated/x.ts": "x",
      "a.snap": "x",
      "keep.snap": "x",
      "a.log": "x",
      "sub/.ktignore": "*.ts\n",
      "sub/b.ts": "x",
      "sub/c.js": "x",
      "d.ts": "x",
    });
    expect(walked(tmp.path)).toEqual(["d.ts", "keep.snap", "sub/c.js"]);
  });

  test("an ancestor's .ktignore and .ignore apply to a walk below it", () => {
    using tmp = tempDir();
    writeTree(tmp.path, { ".ktignore": "*.gen\n", ".ignore": "*.tmp\n", "a/b/x.gen": "x", "a/b/y.tmp": "x", "a/b/z.ts": "x" });
    expect(walked(join(tmp.path, "a"))).toEqual(["b/z.ts"]);
  });

  test("symlinks are not followed, so a loop ends; unicode names are kept", () => {
    using tmp = tempDir();
    writeTree(tmp.path, { "a/file.ts": "x", "ünïcödé/日本.ts": "x", "emoji 🎉.md": "x" });
    symlinkSync("..", join(tmp.path, "a", "loop"));
    symlinkSync("file.ts", join(tmp.path, "a", "link.ts"));
    symlinkSync("missing", join(tmp.path, "dangling"));
    expectFiles(tmp.path, ["a/file.ts", "emoji 🎉.md", "ünïcödé/日本.ts"]);
  });

  test("a visitor answering Quit stops the walk; the deadline stops it too", () => {
    using tmp = tempDir();
    for (let i = 0; i < 20; i++) writeTree(tmp.path, { [`d${i}/f.txt`]: "x" });
    let seen = 0;
    const stopped = walk({ root: tmp.path, hidden: true, noise: new Set() }, (_abs, _rel, dir) => (dir || ++seen < 3 ? WalkState.Continue : WalkState.Quit));
    expect(stopped).toEqual({ timedOut: false, stopped: true });
    expect(seen).toBe(3);
    // Quit on a directory stops the walk before it is entered.
    let files = 0;
    const atDir = walk({ root: tmp.path, hidden: true, noise: new Set() }, (_abs, _rel, dir) => (dir ? WalkState.Quit : void files++));
    expect(atDir).toEqual({ timedOut: false, stopped: true });
    expect(files).toBe(0);
    const late = walk({ root: tmp.path, hidden: true, noise: new Set(), deadline: performance.now() - 1 }, () => {});
    expect(late.timedOut).toBe(true);
  });

  test("a directory answered Skip is not entered; every directory is offered once, before its files", () => {
    using tmp = tempDir();
    writeTree(tmp.path, { "a/x.txt": "", "a/deep/y.txt": "", "b/z.txt": "", "b/skip/w.txt": "", "top.txt": "", ".hidden/h.txt": "" });
    const offered: string[] = [];
    const files: string[] = [];
    walk({ root: tmp.path, hidden: true, noise: new Set() }, (_abs, rel, dir) => {
      if (!dir) {
        // A file comes after the directory that holds it was offered.
        const parent = rel.includes("/") ? rel.slice(0, rel.lastIndexOf("/")) : null;
        expect(parent === null || offered.includes(parent)).toBe(true);
        files.push(rel);
        return WalkState.Continue;
      }
      offered.push(rel);
      return rel === "b/skip" || rel === "a/deep" ? WalkState.Skip : WalkState.Continue;
    });
    expect(offered.sort()).toEqual(["a", "a/deep", "b", "b/skip"]);
    expect(files.sort()).toEqual(["a/x.txt", "b/z.txt", "top.txt"]);
  });
});

describe("two walkers sharing one walk", () => {
  test("a large directory is visited in slices; directories and slices handed back and forth are each walked once", () => {
    using tmp = tempDir();
    const files: Record<string, string> = { ".gitignore": "*.skip\n", ".git/HEAD": "x\n", "sub/.gitignore": "!keep.skip\n" };
    for (let i = 0; i < 1300; i++) files[`big/f${i}.txt`] = "";
    for (let i = 0; i < 40; i++) files[`big/x${i}.skip`] = "";
    for (let d = 0; d < 30; d++) for (let i = 0; i < 5; i++) files[`d${d}/e${i}/g${i}.ts`] = "";
    files["sub/keep.skip"] = "";
    files["sub/other.skip"] = "";
    writeTree(tmp.path, files);
    const expected = walked(tmp.path);
    expect(expected).toContain("sub/keep.skip");
    expect(expected).not.toContain("big/x1.skip");
    expect(expected.filter((f) => f.startsWith("big/"))).toHaveLength(1300);
    // Two walkers stepping in turn; before each step, the one with less work takes half of
    // the other's (far more often than a real walk would, so slices cross too).
    const opts = { root: tmp.path, hidden: true, noise: new Set(["node_modules", "dist", ".git"]) };
    const a = new Walker(opts);
    const b = new Walker(opts, []);
    const seen: string[] = [];
    let handed = 0;
    // Bounded: a walker that re-read what it was handed would never end.
    for (let turn = 0; a.pending + b.pending > 0 && turn < 20_000; turn++) {
      const [from, to] = a.pending >= b.pending ? [a, b] : [b, a];
      if (from.pending >= 2) {
        const given = from.split();
        handed += given.filter((g) => g.files).length;
        to.add(given);
      }
      (turn % 2 ? a : b).step((_abs, rel, dir) => {
        if (!dir) seen.push(rel);
      }, 1);
    }
    expect(a.pending + b.pending).toBe(0);
    expect(handed).toBeGreaterThan(0);
    expect(seen.sort()).toEqual(expected);
  });

  test("split in the middle of a step (from the visitor, between two files, as parallel.ts feeds an idle helper): everything is walked once", () => {
    using tmp = tempDir();
    const files: Record<string, string> = { ".gitignore": "*.skip\n" };
    for (let i = 0; i < 700; i++) files[`big/f${i}.txt`] = "";
    for (let d = 0; d < 30; d++) for (let i = 0; i < 5; i++) files[`d${d}/e${i}/g${i}.ts`] = "";
    for (let d = 0; d < 10; d++) files[`d${d}/x.skip`] = "";
    writeTree(tmp.path, files);
    const expected = walked(tmp.path);
    const opts = { root: tmp.path, hidden: true, noise: new Set(["node_modules", "dist", ".git"]), slice: 64 };
    const a = new Walker(opts);
    const b = new Walker(opts, []);
    const seen: string[] = [];
    let splits = 0;
    let visits = 0;
    for (let turn = 0; a.pending + b.pending > 0 && turn < 20_000; turn++) {
      const [walker, other] = turn % 2 ? [a, b] : [b, a];
      walker.step((_abs, rel, dir) => {
        if (dir) return;
        seen.push(rel);
        // Every seventh file, half of what this walker still has goes to the other.
        if (++visits % 7 === 0 && walker.pending >= 2) {
          other.add(walker.split());
          splits++;
        }
      }, 2);
    }
    expect(a.pending + b.pending).toBe(0);
    expect(splits).toBeGreaterThan(10);
    expect(seen.sort()).toEqual(expected);
  });
});

describe.skipIf(!RG)("walk agrees with rg --files on real trees", () => {
  for (const dir of [join(import.meta.dir, ".."), join(import.meta.dir, "..", "node_modules"), "/usr/share/doc"].filter((d) => existsSync(d))) {
    test(dir, () => {
      // The ignore rules against rg's; noise by evidence (kt's own rule, which rg lacks) is
      // compared with rg in test/search.skipped.test.ts.
      const files = walked(dir, { evidence: false });
      expect(files.length).toBeGreaterThan(10);
      expect(files).toEqual(rgFiles(dir, RG_NOISE));
    });
  }

  test("a generated tree with ignore files at many levels", () => {
    using tmp = tempDir();
    writeTree(tmp.path, { ".git/": "", ".gitignore": "*.o\n!special.o\ntmp*/\n/root.txt\n" });
    for (let i = 0; i < 6; i++) {
      const d = `l${i}/m${i % 3}`;
      writeTree(tmp.path, {
        [`${d}/a.o`]: "x",
        [`${d}/special.o`]: "x",
        [`${d}/tmp${i}/x.c`]: "x",
        [`${d}/root.txt`]: "x",
        [`${d}/keep.c`]: "x",
        [`${d}/.gitignore`]: i % 2 ? "keep.c\n" : "!tmp*/\n",
        [`${d}/.ignore`]: i === 4 ? "!a.o\n" : "",
      });
    }
    writeFileSync(join(tmp.path, "root.txt"), "x");
    expect(walked(tmp.path)).toEqual(rgFiles(tmp.path, RG_NOISE));
  });
});

// Issue 11 item 10, each layer alone: a directory the walk listed as a real one, then
// swapped for a link to outside the root before it is read (here: handed to a walker
// already a link), and a file opened by name through such a link.
describe("with a root, what is opened is verified to be below the walk root", () => {
  test("a directory that became a link to elsewhere is not read; a file reached through one is not searched; its context is not read", () => {
    using tmp = tempDir();
    const root = join(tmp.path, "root");
    const outside = join(tmp.path, "outside");
    mkdirSync(root);
    mkdirSync(outside);
    writeFileSync(join(outside, "secret.txt"), "needle outside\n");
    symlinkSync(outside, join(root, "d"));
    const seen = (confine?: string) => {
      const names: string[] = [];
      const walker = new Walker({ root, hidden: true, noise: new Set(), ...(confine ? { confine } : {}) }, [{ abs: join(root, "d"), rel: "d" }]);
      while (walker.step((_abs, rel, dir) => void (dir || names.push(rel)), 16) === null);
      return names;
    };
    expect(seen()).toEqual(["d/secret.txt"]);
    expect(seen(root)).toEqual([]);
    const matcher = compilePattern("needle");
    const through = join(root, "d", "secret.txt");
    expect(searchFile(through, [matcher])).toMatchObject([{ count: 1 }]);
    expect(searchFile(through, [matcher], root)).toBeNull();
    expect(searchFile(through, [matcher], outside)).toMatchObject([{ count: 1 }]);
    const hit = { line: 1, text: "needle shown" };
    writeFileSync(join(outside, "secret.txt"), "needle outside\nSECRET next line\n");
    expect(withContext(through, [hit], 0, 1, (raw) => raw)).toEqual([{ line: 1, text: "needle shown", match: true }, { line: 2, text: "SECRET next line", match: false }]);
    expect(withContext(through, [hit], 0, 1, (raw) => raw, root)).toEqual([{ line: 1, text: "needle shown", match: true }]);
  });
});

describe("the walk's boundary (SPEC §8.4): onPrune, evidence, ignores, dirsOnly", () => {
  function boundary(root: string, opts: Partial<Parameters<typeof walk>[0]> = {}): { files: string[]; dirs: string[]; pruned: string[] } {
    const files: string[] = [];
    const dirs: string[] = [];
    const pruned: string[] = [];
    walk({ root, hidden: true, noise: new Set([".git", "node_modules", "__pycache__"]), evidence: true, onPrune: (rel, why) => pruned.push(`${rel} ${why}`), ...opts }, (_abs, rel, dir) => {
      (dir ? dirs : files).push(rel);
    });
    return { files: files.sort(), dirs: dirs.sort(), pruned: pruned.sort() };
  }

  test("every pruned directory once, with its reason; hidden ones only by the hidden rule are not reported", () => {
    using tmp = tempDir();
    writeTree(tmp.path, {
      ".git/HEAD": "",
      ".gitignore": "/out/\n",
      "sub/.ignore": "gen/\n",
      ".ktignore": "tmp/\n",
      "out/a": "x",
      "sub/gen/a": "x",
      "tmp/a": "x",
      "node_modules/a": "x",
      "t/CACHEDIR.TAG": "x",
      "t/a": "x",
      ".hidden/a": "x",
      "src/a": "x",
    });
    const b = boundary(tmp.path);
    expect(b.files).toEqual(["src/a"]);
    expect(b.pruned).toEqual(["node_modules noise", "out .gitignore", "sub/gen .ignore", "t noise", "tmp .ktignore"]);
    // The evidence directory was visited (its listing had to be read to know), its files not.
    expect(b.dirs).toContain("t");
  });

  test("exempt names and the root are entered; ignores: false drops every ignore file; dirsOnly visits no file", () => {
    using tmp = tempDir();
    writeTree(tmp.path, { ".git/HEAD": "", ".gitignore": "/out/\n", "out/a": "x", "target/CACHEDIR.TAG": "x", "target/a": "x", "CACHEDIR.TAG": "x", "b": "x" });
    expect(boundary(tmp.path, { exempt: new Set(["target"]) }).files).toEqual(["CACHEDIR.TAG", "b", "target/CACHEDIR.TAG", "target/a"]);
    expect(boundary(tmp.path, { ignores: false, evidence: false, noise: new Set() }).files).toEqual(["CACHEDIR.TAG", "b", "out/a", "target/CACHEDIR.TAG", "target/a"]);
    const d = boundary(tmp.path, { dirsOnly: true });
    expect(d.files).toEqual([]);
    expect(d.pruned).toEqual(["out .gitignore", "target noise"]);
  });
});
