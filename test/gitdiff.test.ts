// Diffs as git writes them (SPEC §8.6): kt's own diffs name files a/PATH and b/PATH relative
// to the root (or the working directory) so that `git apply` takes them, and a `git diff`
// made in a subdirectory applies from that subdirectory with kt patch.
import { describe, expect, test } from "bun:test";
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { kt, tempDir } from "./_helpers.ts";

function git(args: string[], cwd: string, stdin?: string) {
  const r = Bun.spawnSync(["git", "-c", "user.email=t@t", "-c", "user.name=t", ...args], { cwd, stdin: stdin === undefined ? "ignore" : Buffer.from(stdin), stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

function repo(root: string): void {
  mkdirSync(join(root, "sub", "deep"), { recursive: true });
  writeFileSync(join(root, "top.txt"), "top one\ntop two\n");
  writeFileSync(join(root, "sub", "a.txt"), "alpha\nbeta\ngamma\n");
  writeFileSync(join(root, "sub", "deep", "b.txt"), "one\ntwo\nthree\n");
  git(["init", "-q"], root);
  git(["add", "-A"], root);
  git(["commit", "-q", "-m", "base"], root);
}

/** The diff a dry run prints after its summary (everything after the first blank line). */
function dryDiff(stdout: string): string {
  return `${stdout.slice(stdout.indexOf("\n\n") + 2).trimEnd()}\n`;
}

describe("git apply takes kt's --dry-run diffs", () => {
  test("replace, from a subdirectory: a/ and b/ paths relative to the working directory", () => {
    using tmp = tempDir();
    const root = join(tmp.path, "r");
    mkdirSync(root);
    repo(root);
    const state = join(tmp.path, ".s");
    const dry = kt(["replace", "e", "E", "--dry-run"], { cwd: join(root, "sub"), stateDir: state });
    expect(dry.exitCode).toBe(0);
    const diff = dryDiff(dry.stdout);
    expect(diff).toStartWith("--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n");
    expect(diff).toContain("--- a/deep/b.txt\n+++ b/deep/b.txt\n");
    const check = git(["apply", "--check", "-"], join(root, "sub"), diff);
    expect(check).toEqual({ code: 0, stdout: "", stderr: "" });
    const applied = git(["apply", "-"], join(root, "sub"), diff);
    expect(applied.code).toBe(0);
    expect(readFileSync(join(root, "sub", "a.txt"), "utf8")).toBe("alpha\nbEta\ngamma\n");
    expect(readFileSync(join(root, "sub", "deep", "b.txt"), "utf8")).toBe("onE\ntwo\nthrEE\n");
  });

  test("replace under --root: paths relative to the root, wherever kt runs", () => {
    using tmp = tempDir();
    const root = join(tmp.path, "r");
    mkdirSync(root);
    repo(root);
    const dry = kt(["replace", "two", "2", "--dry-run", "--root", root], { cwd: join(root, "sub"), stateDir: join(tmp.path, ".s") });
    const diff = dryDiff(dry.stdout);
    expect(diff).toBe("--- a/sub/deep/b.txt\n+++ b/sub/deep/b.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n");
    expect(git(["apply", "--check", "-"], root, diff).code).toBe(0);
  });

  test("patch: an update, a move, an addition and a removal", () => {
    using tmp = tempDir();
    const root = join(tmp.path, "r");
    mkdirSync(root);
    repo(root);
    const copy = join(tmp.path, "copy");
    cpSync(root, copy, { recursive: true });
    const patch = "*** Begin Patch\n*** Update File: sub/a.txt\n@@\n-beta\n+BETA\n*** Update File: top.txt\n*** Move to: moved.txt\n@@\n-top two\n+top 2\n*** Add File: sub/new.txt\n+new\n*** Delete File: sub/deep/b.txt\n*** End Patch\n";
    const dry = kt(["patch", patch, "--dry-run"], { cwd: root, stateDir: join(tmp.path, ".s") });
    expect(dry.exitCode).toBe(0);
    const diff = dryDiff(dry.stdout);
    expect(diff).toContain("diff --git a/top.txt b/moved.txt\nrename from top.txt\nrename to moved.txt\n--- a/top.txt\n+++ b/moved.txt\n");
    expect(diff).toContain("--- /dev/null\n+++ b/sub/new.txt\n");
    expect(diff).toContain("--- a/sub/deep/b.txt\n+++ /dev/null\n");
    expect(git(["apply", "-"], copy, diff)).toEqual({ code: 0, stdout: "", stderr: "" });
    expect(kt(["patch", patch], { cwd: root, stateDir: join(tmp.path, ".s") }).exitCode).toBe(0);
    for (const p of ["sub/a.txt", "moved.txt", "sub/new.txt"]) expect(readFileSync(join(copy, p), "utf8"), p).toBe(readFileSync(join(root, p), "utf8"));
  });

  test("edit and write: the same shape", () => {
    using tmp = tempDir();
    const root = join(tmp.path, "r");
    mkdirSync(root);
    repo(root);
    const o = { cwd: join(root, "sub"), stateDir: join(tmp.path, ".s") };
    expect(kt(["read", "a.txt"], o).exitCode).toBe(0);
    const edit = kt(["edit", "a.txt", "--old-string", "beta", "--new-string", "BETA", "--dry-run"], o);
    expect(dryDiff(edit.stdout)).toBe("--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma\n");
    expect(git(["apply", "--check", "-"], o.cwd, dryDiff(edit.stdout)).code).toBe(0);
  });
});

describe("kt write --dry-run shows no diff (issue 28)", () => {
  test("kt write --dry-run shows the diff of what it would write, as edit and patch do", () => {
    using tmp = tempDir();
    const o = { cwd: tmp.path, stateDir: join(tmp.path, ".s") };
    writeFileSync(join(tmp.path, "f.txt"), "old\n");
    expect(kt(["read", "f.txt"], o).exitCode).toBe(0);
    const replaced = kt(["write", "f.txt", "--content", "new\n", "--dry-run"], o);
    expect(replaced).toEqual({
      stdout: `Replaced ${tmp.path}/f.txt (was 1 line, now 1 line). (dry run: nothing was written)\n\n--- a/f.txt\n+++ b/f.txt\n@@ -1,1 +1,1 @@\n-old\n+new\n`,
      stderr: "",
      exitCode: 0,
    });
    const created = kt(["write", "n.txt", "--content", "x\n", "--dry-run"], o);
    expect(created.stdout).toBe(`Wrote ${tmp.path}/n.txt (1 line). (dry run: nothing was written)\n\n--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,1 @@\n+x\n`);
    expect(readFileSync(join(tmp.path, "f.txt"), "utf8")).toBe("old\n");
  });
});

describe("a git diff made in a subdirectory applies from there (paths from the git top level)", () => {
  test("kt patch of `git diff` run in sub/, from sub/", () => {
    using tmp = tempDir();
    const root = join(tmp.path, "r");
    mkdirSync(root);
    repo(root);
    const sub = join(root, "sub");
    writeFileSync(join(sub, "a.txt"), "alpha\nBETA\ngamma\n");
    writeFileSync(join(sub, "deep", "b.txt"), "one\ntwo\n3\n");
    const diff = git(["diff"], sub).stdout;
    expect(diff).toContain("--- a/sub/a.txt\n");
    git(["checkout", "--", "."], root);
    const r = kt(["patch", diff], { cwd: sub, stateDir: join(tmp.path, ".s") });
    expect(r.stdout).toBe(`Success. Updated the following files:\nM ${sub}/a.txt\nM ${sub}/deep/b.txt\n` + r.stdout.slice(r.stdout.indexOf("\n", r.stdout.indexOf("deep/b.txt")) + 1));
    expect(r.exitCode).toBe(0);
    expect(readFileSync(join(sub, "a.txt"), "utf8")).toBe("alpha\nBETA\ngamma\n");
    expect(readFileSync(join(sub, "deep", "b.txt"), "utf8")).toBe("one\ntwo\n3\n");
  });

  test("a path that resolves from the working directory is taken from there", () => {
    using tmp = tempDir();
    const root = join(tmp.path, "r");
    mkdirSync(root);
    repo(root);
    const sub = join(root, "sub");
    // sub/ has its own top.txt: the diff's "top.txt" means that one, as from anywhere else.
    writeFileSync(join(sub, "top.txt"), "top one\ntop two\n");
    const r = kt(["patch", "--- a/top.txt\n+++ b/top.txt\n@@ -1,2 +1,2 @@\n top one\n-top two\n+top 2\n"], { cwd: sub, stateDir: join(tmp.path, ".s") });
    expect(r.exitCode).toBe(0);
    expect(readFileSync(join(sub, "top.txt"), "utf8")).toBe("top one\ntop 2\n");
    expect(readFileSync(join(root, "top.txt"), "utf8")).toBe("top one\ntop two\n");
  });
});
