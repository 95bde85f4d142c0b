// kt replace (SPEC §8.6), through the compiled binary: one change across every file grep
// would search, all or nothing, one history entry. ripgrep's own --replace (rg --passthru
// -r) is the reference for what each file becomes.
import { describe, expect, test } from "bun:test";
import { cpSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { callTool, filesBelow, KT, kt, ROOT, tempDir } from "./_helpers.ts";
import { findReplacements, parseTemplate } from "../src/replacer/substitute.ts";

function snapshot(dir: string): Record<string, string> {
  return Object.fromEntries(filesBelow(dir).filter((p) => !p.startsWith(".state")).map((p) => [p, readFileSync(join(dir, p), "latin1")]));
}

/** What ripgrep's --replace makes of each file it matches (the reference). */
function rgReplaced(dir: string, args: string[]): Record<string, string> {
  const listed = Bun.spawnSync(["rg", "-l", "--no-config", ...args.filter((a) => a !== "--passthru"), "."], { cwd: dir, stdout: "pipe" }).stdout.toString().split("\n").filter(Boolean);
  const out: Record<string, string> = {};
  for (const rel of listed) {
    const path = rel.replace(/^\.\//, "");
    out[path] = Bun.spawnSync(["rg", "--no-config", "--passthru", "-N", ...args, path], { cwd: dir, stdout: "pipe" }).stdout.toString();
  }
  return out;
}

/** A copy of a real package from node_modules. */
function copyPackage(name: string, to: string): string {
  const dest = join(to, "pkg");
  cpSync(join(ROOT, "node_modules", name), dest, { recursive: true });
  return dest;
}

function run(args: string[], cwd: string, state: string, env?: Record<string, string>) {
  return kt(["replace", ...args], { cwd, stateDir: state, ...(env ? { env } : {}) });
}

describe("kt replace on a real package (picomatch, copied from node_modules)", () => {
  test("a word-bounded rename: every file as rg --replace -w makes it, and only those", () => {
    using tmp = tempDir();
    const pkg = copyPackage("picomatch", tmp.path);
    const state = join(tmp.path, ".state");
    const before = snapshot(pkg);
    const expected = rgReplaced(pkg, ["-w", "-F", "-r", "tok", "token"]);
    expect(Object.keys(expected).length).toBeGreaterThan(1);
    const r = run(["token", "tok", "--word"], pkg, state);
    expect(r.exitCode).toBe(0);
    const after = snapshot(pkg);
    for (const [path, text] of Object.entries(after)) expect(text, path).toBe(expected[path] ?? before[path]!);
    // "tokens" and "tokenize" kept their names: only whole words changed.
    expect(Object.values(after).join("").includes("tokens")).toBe(Object.values(before).join("").includes("tokens"));
    const count = Object.keys(expected).length;
    expect(r.stdout.split("\n")[0]).toMatch(new RegExp(`^Replaced "token": [0-9]+ replacements in ${count} files:$`));
  });

  test("a regex with numbered and named groups, as rg --replace expands them", () => {
    using tmp = tempDir();
    const pkg = copyPackage("picomatch", tmp.path);
    const state = join(tmp.path, ".state");
    const before = snapshot(pkg);
    const pattern = "(?P<obj>[A-Za-z_]+)\\.startsWith\\(([a-z]+)";
    const template = "startsWith(${obj}, $2$$";
    const expected = rgReplaced(pkg, ["-r", template, "-e", pattern]);
    expect(Object.keys(expected).length).toBeGreaterThan(0);
    const r = run([pattern, template, "--regex"], pkg, state);
    expect(r.exitCode).toBe(0);
    const after = snapshot(pkg);
    for (const [path, text] of Object.entries(after)) expect(text, path).toBe(expected[path] ?? before[path]!);
  });

  test("the --dry-run diff is what is then applied: git apply of it gives the tree the replace gives", () => {
    using tmp = tempDir();
    const pkg = copyPackage("picomatch", tmp.path);
    const copy = join(tmp.path, "copy");
    cpSync(pkg, copy, { recursive: true });
    const state = join(tmp.path, ".state");
    const dry = kt(["replace", "prev", "previous", "--word", "--dry-run", "--json"], { cwd: pkg, stateDir: state });
    expect(dry.exitCode).toBe(0);
    const planned = JSON.parse(dry.stdout) as { content: string; metadata: { diff: string } };
    expect(planned.content).toContain("nothing was written");
    expect(snapshot(pkg)).toEqual(snapshot(copy));
    // The diff shown is the diff in the metadata.
    expect(planned.content.endsWith(planned.metadata.diff.trimEnd())).toBe(true);
    const real = kt(["replace", "prev", "previous", "--word", "--json"], { cwd: pkg, stateDir: state });
    expect(real.exitCode).toBe(0);
    expect((JSON.parse(real.stdout) as { metadata: { diff: string } }).metadata.diff).toBe(planned.metadata.diff);
    writeFileSync(join(tmp.path, "change.diff"), planned.metadata.diff);
    const git = Bun.spawnSync(["git", "apply", join(tmp.path, "change.diff")], { cwd: copy, stderr: "pipe" });
    expect(git.stderr.toString()).toBe("");
    expect(git.exitCode).toBe(0);
    expect(snapshot(copy)).toEqual(snapshot(pkg));
  });

  test("kt undo --last puts every file back in one step", () => {
    using tmp = tempDir();
    const pkg = copyPackage("picomatch", tmp.path);
    const state = join(tmp.path, ".state");
    const before = snapshot(pkg);
    expect(run(["value", "val", "--word"], pkg, state).exitCode).toBe(0);
    expect(snapshot(pkg)).not.toEqual(before);
    const undo = kt(["undo", "--last", "--no-diagnostics"], { cwd: pkg, stateDir: state });
    expect(undo.exitCode).toBe(0);
    expect(undo.stdout).toMatch(/^Undid the replace of [0-9-]+ [0-9:]+ \([0-9]+ files\):\n(M [^\n]+\n)+$/);
    expect(snapshot(pkg)).toEqual(before);
  });
});

describe("kt replace: all or nothing", () => {
  test("600 files where the process may hold only 256 descriptors: every one replaced (the commit stages, syncs and holds files a bounded number at a time), and undone", () => {
    using tmp = tempDir();
    const work = join(tmp.path, "w");
    mkdirSync(work);
    for (let i = 0; i < 600; i++) writeFileSync(join(work, `f${i}.txt`), `alpha ${i}\n`);
    const state = join(tmp.path, ".state");
    const r = Bun.spawnSync(["bash", "-c", `ulimit -n 256 && exec "$0" replace alpha beta`, KT], { cwd: work, env: { PATH: process.env.PATH ?? "", NO_COLOR: "1", KT_STATE_DIR: state }, stdout: "pipe", stderr: "pipe" });
    expect(r.stdout.toString().split("\n")[0]).toBe('Replaced "alpha": 600 replacements in 600 files:');
    expect(r.exitCode).toBe(0);
    for (let i = 0; i < 600; i++) expect(readFileSync(join(work, `f${i}.txt`), "utf8")).toBe(`beta ${i}\n`);
    expect(kt(["undo", "--last"], { cwd: work, stateDir: state }).exitCode).toBe(0);
    for (let i = 0; i < 600; i++) expect(readFileSync(join(work, `f${i}.txt`), "utf8")).toBe(`alpha ${i}\n`);
  }, 60_000);

  test("a file that turns stale between working out the change and committing it: nothing is written", async () => {
    using tmp = tempDir();
    const work = join(tmp.path, "w");
    mkdirSync(work);
    for (const n of ["a", "b", "c"]) writeFileSync(join(work, `${n}.txt`), `old ${n}\n`);
    const state = join(tmp.path, ".state");
    const proc = Bun.spawn([KT, "replace", "old", "new"], {
      cwd: work,
      env: { PATH: process.env.PATH ?? "", NO_COLOR: "1", KT_STATE_DIR: state, KT_REPLACE_PAUSE_MS: "1500" },
      stdout: "pipe",
      stderr: "pipe",
    });
    await Bun.sleep(700);
    writeFileSync(join(work, "b.txt"), "old b, changed by someone else\n");
    const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    expect(out).toBe(`Refusing to change ${work}/b.txt: the file changed on disk after you last read it (content hash mismatch). Someone else may be editing it. Re-read the file and reapply your change.\n`);
    expect(code).toBe(2);
    expect(snapshot(work)).toEqual({ "a.txt": "old a\n", "b.txt": "old b, changed by someone else\n", "c.txt": "old c\n" });
    // Nothing was recorded either.
    expect(kt(["undo", "--last"], { cwd: work, stateDir: state }).stdout).toBe('Nothing to undo: kt has no change in session "default" that is not undone already.\n');
  });

  test("a file the session read that changed on disk since is refused, and nothing is written", () => {
    using tmp = tempDir();
    const work = join(tmp.path, "w");
    mkdirSync(work);
    writeFileSync(join(work, "a.txt"), "old a\n");
    writeFileSync(join(work, "b.txt"), "old b\n");
    const state = join(tmp.path, ".state");
    expect(kt(["read", "b.txt"], { cwd: work, stateDir: state }).exitCode).toBe(0);
    writeFileSync(join(work, "b.txt"), "old b, edited outside kt\n");
    const r = run(["old", "new"], work, state);
    expect(r).toEqual({ stdout: `Refusing to change ${work}/b.txt: the file changed on disk after you last read it (content hash mismatch). Someone else may be editing it. Re-read the file and reapply your change.\n`, stderr: "", exitCode: 2 });
    expect(snapshot(work)).toEqual({ "a.txt": "old a\n", "b.txt": "old b, edited outside kt\n" });
  });

  test("a stale file the change leaves alone (grep's match is not a whole word) does not stop the others", () => {
    using tmp = tempDir();
    const work = join(tmp.path, "w");
    mkdirSync(work);
    writeFileSync(join(work, "a.txt"), "token\n");
    writeFileSync(join(work, "b.txt"), "tokens\n");
    const state = join(tmp.path, ".state");
    expect(kt(["read", "b.txt"], { cwd: work, stateDir: state }).exitCode).toBe(0);
    writeFileSync(join(work, "b.txt"), "tokens, edited outside kt\n");
    const r = run(["token", "tok", "--word"], work, state);
    expect(r).toEqual({ stdout: 'Replaced "token": 1 replacement in 1 file:\nM a.txt (1)\n', stderr: "", exitCode: 0 });
  });

  test("kt's own state directory inside the tree is never changed, nor named", () => {
    using tmp = tempDir();
    const work = join(tmp.path, "w");
    mkdirSync(work);
    writeFileSync(join(work, "a.txt"), "alpha\n");
    const state = join(work, "state");
    expect(run(["alpha", "beta"], work, state).exitCode).toBe(0);
    // The kept version (a history blob holding "alpha") is below the working directory now.
    const r = run(["alpha", "gamma"], work, state);
    expect(r).toEqual({ stdout: `No matches for "alpha" in ${work}; nothing was changed.\n`, stderr: "", exitCode: 1 });
    expect(kt(["undo", "--last"], { cwd: work, stateDir: state }).exitCode).toBe(0);
    expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("alpha\n");
  });

  test("a file never read is changed (the pattern names the change; the content is the file's own)", () => {
    using tmp = tempDir();
    writeFileSync(join(tmp.path, "a.txt"), "old\n");
    const r = run(["old", "new"], tmp.path, join(tmp.path, ".state"));
    expect(r).toEqual({ stdout: 'Replaced "old": 1 replacement in 1 file:\nM a.txt (1)\n', stderr: "", exitCode: 0 });
    expect(readFileSync(join(tmp.path, "a.txt"), "utf8")).toBe("new\n");
  });
});

describe("kt replace: what it says (golden)", () => {
  test("binary and non-UTF-8 files are left alone, each named in a note", () => {
    using tmp = tempDir();
    const work = join(tmp.path, "w");
    mkdirSync(join(work, "src"), { recursive: true });
    writeFileSync(join(work, "src/a.ts"), "const fooBar = 1;\n");
    writeFileSync(join(work, "src/c.bin"), Buffer.from("fooBar\0\x01\x02"));
    writeFileSync(join(work, "src/d.txt"), Buffer.from("fooBar caf\xe9\n", "latin1"));
    const state = join(tmp.path, ".state");
    const r = run(["fooBar", "quux", "src", "src/c.bin"], work, state);
    expect(r).toEqual({
      stdout: [
        'Replaced "fooBar": 1 replacement in 1 file:',
        "M src/a.ts (1)",
        "[Left alone: 1 binary file (a NUL byte): src/c.bin.]",
        "[Left alone: 1 file not valid UTF-8 text, which replace would corrupt: src/d.txt. Convert it to UTF-8 first (e.g. iconv).]",
        "",
      ].join("\n"),
      stderr: "",
      exitCode: 0,
    });
    expect(readFileSync(join(work, "src/c.bin"), "latin1")).toBe("fooBar\0\x01\x02");
    expect(readFileSync(join(work, "src/d.txt"), "latin1")).toBe("fooBar caf\xe9\n");
  });

  for (const engine of ["auto", "rg", "builtin"]) {
    test(`${engine}: binary files met in the walk that hold the pattern are named, never changed; others (no match, ignored, not included) are not`, () => {
      using tmp = tempDir();
      const work = join(tmp.path, "w");
      mkdirSync(join(work, "src/deep"), { recursive: true });
      mkdirSync(join(work, "ignored"), { recursive: true });
      writeFileSync(join(work, ".ignore"), "ignored/\n");
      writeFileSync(join(work, "src/a.ts"), "const fooBar = 1;\n");
      writeFileSync(join(work, "src/c.bin"), Buffer.from("fooBar\0\x01\x02"));
      writeFileSync(join(work, "src/deep/nul-first.dat"), Buffer.from("\0\0 then fooBar\n"));
      // A match long before the NUL (past any first block): rg prints lines, then stops at the NUL.
      const late = Buffer.concat([Buffer.from("fooBar here\n"), Buffer.alloc(400_000, 0x61), Buffer.from("\n\0tail\n")]);
      writeFileSync(join(work, "src/deep/late.bin"), late);
      writeFileSync(join(work, "src/other.bin"), Buffer.from("nothing\0here"));
      writeFileSync(join(work, "ignored/x.bin"), Buffer.from("fooBar\0"));
      writeFileSync(join(work, "src/u16.txt"), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("fooBar\n", "utf16le")]));
      const state = join(tmp.path, ".state");
      const env = { KT_GREP_ENGINE: engine };
      const r = run(["fooBar", "quux"], work, state, env);
      expect(r).toEqual({
        stdout: [
          'Replaced "fooBar": 1 replacement in 1 file:',
          "M src/a.ts (1)",
          "[Left alone: 3 binary files (a NUL byte): src/c.bin, src/deep/late.bin, src/deep/nul-first.dat.]",
          "[Left alone: 1 file not valid UTF-8 text, which replace would corrupt: src/u16.txt. Convert it to UTF-8 first (e.g. iconv).]",
          "",
        ].join("\n"),
        stderr: "",
        exitCode: 0,
      });
      expect(readFileSync(join(work, "src/c.bin"), "latin1")).toBe("fooBar\0\x01\x02");
      expect(readFileSync(join(work, "src/deep/late.bin")).equals(late)).toBe(true);
      // include narrows the notes as it narrows the files.
      const narrow = run(["fooBar", "quux", "--include", "*.dat", "--dry-run"], work, state, env);
      expect(narrow.stdout).toBe('No matches for "fooBar" in ' + work + ' (include "*.dat"); nothing was changed.\n[Left alone: 1 binary file (a NUL byte): src/deep/nul-first.dat.]\n');
      expect(narrow.exitCode).toBe(1);
      // grep itself still leaves binary files out without a word (a.ts was changed: the UTF-16 file is left).
      const grep = kt(["grep", "fooBar", "src", "--output-mode", "files_with_matches"], { cwd: work, stateDir: state, env });
      expect(grep.stdout).toBe('1 match in 1 file for "fooBar":\n\nsrc/u16.txt\n');
    });
  }

  test("more matching lines than one replace can list (over 20,000, in files it must let go): refused whole, prose, exit 2, nothing changed", () => {
    using tmp = tempDir();
    const work = join(tmp.path, "w");
    mkdirSync(work);
    // grep keeps 20,000 matching lines; past them the files whose lines it had to let go
    // are only counted, and a replace cannot change what it can no longer list.
    const body = "foo\n".repeat(1_000);
    const names = Array.from({ length: 30 }, (_, i) => `f${String(i).padStart(2, "0")}.txt`);
    for (const name of names) writeFileSync(join(work, name), body);
    const r = run(["foo", "bar"], work, join(tmp.path, ".state"));
    expect(r).toEqual({
      stdout: `Nothing was changed: "foo" matches 30,000 lines in 30 files under ${work}, more than one replace can list. Replace in parts: narrow the paths, include or type.\n`,
      stderr: "",
      exitCode: 2,
    });
    for (const name of names) expect(readFileSync(join(work, name), "utf8")).toBe(body);
  });

  test("exit 1 when nothing matched, and nothing is changed", () => {
    using tmp = tempDir();
    writeFileSync(join(tmp.path, "a.txt"), "alpha\n");
    const r = run(["omega", "x"], tmp.path, join(tmp.path, ".state"));
    expect(r).toEqual({ stdout: `No matches for "omega" in ${tmp.path}; nothing was changed.\n`, stderr: "", exitCode: 1 });
    const filtered = run(["alpha", "x", "--include", "*.md"], tmp.path, join(tmp.path, ".state"));
    expect(filtered).toEqual({ stdout: `No matches for "alpha" in ${tmp.path} (include "*.md"); nothing was changed.\n`, stderr: "", exitCode: 1 });
    expect(readFileSync(join(tmp.path, "a.txt"), "utf8")).toBe("alpha\n");
  });

  test("--dry-run: the summary, then the diff; nothing written", () => {
    using tmp = tempDir();
    writeFileSync(join(tmp.path, "a.txt"), "one fish\ntwo fish\n");
    const r = run(["fish", "cat", "--dry-run"], tmp.path, join(tmp.path, ".state"));
    expect(r.exitCode).toBe(0);
    expect(r.stdout.split("\n\n")[0]).toBe('Dry run: 2 replacements in 1 file for "fish"; nothing was written:\nM a.txt (2)');
    expect(r.stdout).toContain("-one fish\n-two fish\n+one cat\n+two cat\n");
    expect(readFileSync(join(tmp.path, "a.txt"), "utf8")).toBe("one fish\ntwo fish\n");
  });

  test("an invalid regex: prose, exit 2", () => {
    using tmp = tempDir();
    writeFileSync(join(tmp.path, "a.txt"), "x\n");
    const r = run(["(", "y", "--regex"], tmp.path, join(tmp.path, ".state"));
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe('Invalid regex "(": unclosed ( at position 1. Balance the parentheses, or escape a literal one as \\(.\n');
  });

  test("a missing path: prose, exit 2, nothing changed elsewhere", () => {
    using tmp = tempDir();
    writeFileSync(join(tmp.path, "a.txt"), "x\n");
    const r = run(["x", "y", "a.txt", "nope"], tmp.path, join(tmp.path, ".state"));
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toStartWith(`File not found: ${tmp.path}/nope.`);
    expect(readFileSync(join(tmp.path, "a.txt"), "utf8")).toBe("x\n");
  });

  for (const engine of ["rg", "builtin"]) {
    test(`${engine}: a search stopped by the time limit changes nothing (a replace is whole or not at all)`, () => {
      using tmp = tempDir();
      writeFileSync(join(tmp.path, "a.txt"), "a\n");
      const r = run(["a", "b"], tmp.path, join(tmp.path, ".state"), { KT_GREP_ENGINE: engine, KT_GREP_TIMEOUT_MS: "0" });
      expect(r).toEqual({
        stdout: `Nothing was changed: finding the files to change stopped at the 0 s time limit in ${tmp.path}, and a replace is made whole or not at all. Narrow the paths, include or type to search fewer files.\n`,
        stderr: "",
        exitCode: 2,
      });
      expect(readFileSync(join(tmp.path, "a.txt"), "utf8")).toBe("a\n");
    });
  }

  test("usage: a missing replacement is the schema's prose", () => {
    using tmp = tempDir();
    const r = run(["x"], tmp.path, join(tmp.path, ".state"));
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe('Invalid input for tool "replace": parameter "replacement" is required. Please rewrite the input so it satisfies the expected schema.\n');
  });
});

describe("kt replace: the files grep would search", () => {
  function tree(root: string): void {
    const put = (p: string, text: string) => {
      mkdirSync(join(root, p, ".."), { recursive: true });
      writeFileSync(join(root, p), text);
    };
    put(".gitignore", "ignored/\n*.log\n");
    put(".ignore", "skip-me.txt\n");
    put("src/a.ts", "needle\n");
    put("src/b.py", "needle here\n");
    put("src/deep/c.ts", "a needle\n");
    put("ignored/d.ts", "needle\n");
    put("e.log", "needle\n");
    put("skip-me.txt", "needle\n");
    put(".hidden/f.ts", "needle\n");
    put("node_modules/g/index.ts", "needle\n");
    put("README.md", "needle\n");
    Bun.spawnSync(["git", "init", "-q"], { cwd: root });
  }

  for (const engine of ["rg", "builtin"]) {
    for (const args of [[], ["--include", "*.ts"], ["--type", "py"], ["src"], ["--include", "src/**/*.ts"]] as string[][]) {
      test(`${engine}: ${args.join(" ") || "(no filter)"} changes exactly the files grep lists`, () => {
        using tmp = tempDir();
        const root = join(tmp.path, "r");
        mkdirSync(root);
        tree(root);
        const state = join(tmp.path, ".state");
        const env = { KT_GREP_ENGINE: engine };
        const positional = args.filter((a, i) => !a.startsWith("--") && !(args[i - 1] ?? "").startsWith("--"));
        const flags = args.filter((a) => !positional.includes(a));
        const grep = kt(["grep", "needle", ...positional, ...flags, "--output-mode", "files_with_matches"], { cwd: root, stateDir: state, env });
        const listed = grep.stdout.split("\n").slice(2).filter(Boolean).sort();
        expect(listed.length).toBeGreaterThan(0);
        const before = snapshot(root);
        const r = run(["needle", "pin", ...positional, ...flags], root, state, env);
        expect(r.exitCode).toBe(0);
        const after = snapshot(root);
        const changed = Object.keys(after).filter((p) => after[p] !== before[p] && !p.startsWith(".git/")).sort();
        expect(changed).toEqual(listed);
      });
    }
  }
});

describe("replacement templates as ripgrep reads them (rg -r is the reference)", () => {
  const cases: [string, string, string][] = [
    ["(\\w+)=(\\w+)", "$2=$1", "a=b c=d"],
    ["(\\w+)=(\\w+)", "${2}x$1y", "a=b"],
    ["(\\w+)=(\\w+)", "$1x", "a=b"],
    ["(\\w+)=(\\w+)", "$$1 $", "a=b"],
    ["(\\w+)=(\\w+)", "${} ${ $", "a=b"],
    ["(?P<k>\\w+)=(?P<v>\\w+)", "$v:$k ${k}_", "key=val"],
    ["(?P<k>\\w+)=(?P<v>\\w+)", "$nope|${9}|$0", "key=val"],
    ["(a)|(b)", "[$1$2]", "ab"],
    ["x*", "-", "abc"],
    ["b*", "-", "abc"],
    ["é+", "E", "café éé"],
  ];
  for (const [pattern, template, text] of cases) {
    test(`${pattern} → ${template} on ${JSON.stringify(text)}`, async () => {
      const reference = Bun.spawnSync(["rg", "--no-config", "-N", "-r", template, "--passthru", "-e", pattern], { stdin: Buffer.from(`${text}\n`), stdout: "pipe" }).stdout.toString();
      using tmp = tempDir();
      writeFileSync(join(tmp.path, "t.txt"), `${text}\n`);
      const r = await callTool("replace", { pattern, replacement: template, regex: true }, { cwd: tmp.path, stateDir: join(tmp.path, ".s") });
      expect(r.isError).toBe(false);
      expect(readFileSync(join(tmp.path, "t.txt"), "utf8")).toBe(reference);
    });
  }

  test("parseTemplate: literal text, numbers, names, $$", () => {
    expect(parseTemplate("a$1b${name}c$$d$")).toEqual([{ text: "a" }, { name: "1b" }, { name: "name" }, { text: "c$d$" }]);
    expect(parseTemplate("${12}")).toEqual([{ group: 12 }]);
  });

  test("an empty match right after a match is not one (the regex crate's iteration)", () => {
    const spans = findReplacements("abc", /b*/gu, { literal: "-" });
    expect(spans.map((s) => [s.start, s.end])).toEqual([[0, 0], [1, 2], [3, 3]]);
  });
});

describe("kt replace's diff, worked out from its spans", () => {
  test("matches on the first and last lines, several on a line, on adjacent and distant lines: git apply of the diff gives the file", () => {
    using tmp = tempDir();
    const lines = ["x first x", "keep", "x", "x x x", "keep", "keep", "keep", "keep", "keep", "keep", "keep", "x far", "keep", "last x"];
    const text = `${lines.join("\n")}\n`;
    const work = join(tmp.path, "w");
    const copy = join(tmp.path, "c");
    mkdirSync(work);
    mkdirSync(copy);
    writeFileSync(join(work, "f.txt"), text);
    writeFileSync(join(copy, "f.txt"), text);
    const r = kt(["replace", "x", "yy", "--json"], { cwd: work, stateDir: join(tmp.path, ".s") });
    const diff = (JSON.parse(r.stdout) as { metadata: { diff: string } }).metadata.diff;
    writeFileSync(join(tmp.path, "d.diff"), diff);
    expect(Bun.spawnSync(["git", "apply", join(tmp.path, "d.diff")], { cwd: copy }).exitCode).toBe(0);
    expect(readFileSync(join(copy, "f.txt"), "utf8")).toBe(readFileSync(join(work, "f.txt"), "utf8"));
    expect(readFileSync(join(work, "f.txt"), "utf8")).toBe(text.replaceAll("x", "yy"));
  });
});

describe("kt replace keeps what edit keeps", () => {
  test("CRLF line endings, a BOM and the file's mode", () => {
    using tmp = tempDir();
    const p = join(tmp.path, "w.txt");
    writeFileSync(p, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("old one\r\nold two\r\n")]));
    Bun.spawnSync(["chmod", "755", p]);
    const r = run(["old", "new"], tmp.path, join(tmp.path, ".state"));
    expect(r.exitCode).toBe(0);
    expect(readFileSync(p)).toEqual(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("new one\r\nnew two\r\n")]));
    expect((statSync(p).mode & 0o777).toString(8)).toBe("755");
  });

  test("--ignore-case, and literal text with regex characters in it", () => {
    using tmp = tempDir();
    writeFileSync(join(tmp.path, "a.txt"), "Foo foo FOO a.b(c)\n");
    expect(run(["foo", "bar", "--ignore-case"], tmp.path, join(tmp.path, ".s")).exitCode).toBe(0);
    expect(run(["a.b(c)", "$1", "--json"], tmp.path, join(tmp.path, ".s")).exitCode).toBe(0);
    expect(readFileSync(join(tmp.path, "a.txt"), "utf8")).toBe("bar bar bar $1\n");
  });
});
