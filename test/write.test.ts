// write (SPEC §4.2, §3.4, §3.5): goldens in-process and through dist/kt, and the file facts
// the writer must keep: CRLF, BOM, mode bits, symlinks, nothing changed on refusal.
import { describe, expect, test } from "bun:test";
import { chmodSync, lstatSync, mkdirSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { call, CAN_RUN_AS_NOBODY, kt, ktAsNobody, MODES, tempDir } from "./_helpers.ts";

function setup() {
  const tmp = tempDir();
  const work = join(tmp.path, "work");
  mkdirSync(work);
  return { tmp, work, opts: { cwd: work, stateDir: join(tmp.path, ".state") } };
}

describe.each(MODES)("write (%s)", (mode) => {
  test("creates a file and its parent directories", async () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    const r = await call(mode, "write", { file_path: "src/new/budget.ts", content: "a\nb\nc\n" }, opts);
    expect(r.isError).toBe(false);
    expect(r.content).toBe(`Wrote ${work}/src/new/budget.ts (3 lines).`);
    expect(readFileSync(join(work, "src/new/budget.ts"), "utf8")).toBe("a\nb\nc\n");
    expect(r.metadata.additions).toBe(3);
    expect(r.metadata.deletions).toBe(0);
    expect(r.metadata.extra).toMatchObject({ created: true });
    expect(r.metadata.diff).toContain("+++ ");
    expect(r.metadata.title).toBe(`Write ${work}/src/new/budget.ts · new file · 3 lines`);
    const one = await call(mode, "write", { file_path: "one.txt", content: "x" }, opts);
    expect(one.content).toBe(`Wrote ${work}/one.txt (1 line).`);
    expect(one.metadata.title).toBe(`Write ${work}/one.txt · new file · 1 line`);
  });

  test("refuses to overwrite a file the session has not read", async () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    writeFileSync(join(work, "engine.ts"), "old\n");
    const r = await call(mode, "write", { file_path: "engine.ts", content: "new\n" }, opts);
    expect(r.error?.code).toBe("NOT_READ");
    expect(r.content).toBe(`Refusing to overwrite ${work}/engine.ts: you have not read this file in this session. Read it first so you do not destroy existing content, then write or edit it.`);
    expect(readFileSync(join(work, "engine.ts"), "utf8")).toBe("old\n");
  });

  test("replaces a file after a read, and refuses once it changed on disk", async () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    const file = join(work, "engine.ts");
    writeFileSync(file, "1\n2\n");
    await call(mode, "read", { file_path: "engine.ts" }, opts);
    const r = await call(mode, "write", { file_path: "engine.ts", content: "1\n2\n3\n" }, opts);
    expect(r.content).toBe(`Replaced ${file} (was 2 lines, now 3 lines).`);
    expect(r.metadata.additions).toBe(1);
    expect(r.metadata.deletions).toBe(0);
    expect(r.metadata.extra).toMatchObject({ created: false });
    // The write stamped the file: a second write needs no new read.
    const again = await call(mode, "write", { file_path: "engine.ts", content: "x\n" }, opts);
    expect(again.content).toBe(`Replaced ${file} (was 3 lines, now 1 line).`);
    writeFileSync(file, "changed by someone else\n");
    const stale = await call(mode, "write", { file_path: "engine.ts", content: "mine\n" }, opts);
    expect(stale.error?.code).toBe("STALE_FILE");
    expect(stale.content).toBe(`Refusing to overwrite ${file}: the file changed on disk after you last read it (content hash mismatch). Someone else may be editing it. Re-read the file and reapply your change.`);
    expect(readFileSync(file, "utf8")).toBe("changed by someone else\n");
  });

  test("a partial read counts as a read", async () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    writeFileSync(join(work, "p.txt"), "1\n2\n3\n");
    await call(mode, "read", { file_path: "p.txt", offset: 2, limit: 1 }, opts);
    const r = await call(mode, "write", { file_path: "p.txt", content: "z\n" }, opts);
    expect(r.isError).toBe(false);
  });

  test("sessions have their own stamps", async () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    writeFileSync(join(work, "s.txt"), "1\n");
    await call(mode, "read", { file_path: "s.txt" }, { ...opts, session: "agent-a" });
    const b = await call(mode, "write", { file_path: "s.txt", content: "2\n" }, { ...opts, session: "agent-b" });
    expect(b.error?.code).toBe("NOT_READ");
    const a = await call(mode, "write", { file_path: "s.txt", content: "2\n" }, { ...opts, session: "agent-a" });
    expect(a.isError).toBe(false);
  });

  test("keeps CRLF endings, the BOM and the mode bits of the file it replaces", async () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    const file = join(work, "win.txt");
    writeFileSync(file, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("a\r\nb\r\n")]));
    chmodSync(file, 0o751);
    await call(mode, "read", { file_path: "win.txt" }, opts);
    const r = await call(mode, "write", { file_path: "win.txt", content: "a\nb\nc\n" }, opts);
    expect(r.content).toBe(`Replaced ${file} (was 2 lines, now 3 lines).`);
    expect(readFileSync(file)).toEqual(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("a\r\nb\r\nc\r\n")]));
    expect(statSync(file).mode & 0o7777).toBe(0o751);
  });

  test("writes through a symlink to its target", async () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    writeFileSync(join(work, "target.txt"), "t\n");
    symlinkSync("target.txt", join(work, "link.txt"));
    await call(mode, "read", { file_path: "link.txt" }, opts);
    const r = await call(mode, "write", { file_path: "link.txt", content: "through\n" }, opts);
    expect(r.content).toBe(`Replaced ${work}/link.txt (was 1 line, now 1 line).`);
    expect(lstatSync(join(work, "link.txt")).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(work, "link.txt"))).toBe("target.txt");
    expect(readFileSync(join(work, "target.txt"), "utf8")).toBe("through\n");
  });

  test("a directory is not a file", async () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    mkdirSync(join(work, "src"));
    const r = await call(mode, "write", { file_path: "src", content: "x" }, opts);
    expect(r.error?.code).toBe("IS_DIRECTORY");
    expect(r.content).toBe(`${work}/src is a directory, not a file. Give the path of a file inside it, e.g. ${work}/src/<name>.`);
  });

  test("a path below a file", async () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    writeFileSync(join(work, "plain"), "x");
    const r = await call(mode, "write", { file_path: "plain/inner.txt", content: "x" }, opts);
    expect(r.error?.code).toBe("NOT_A_DIRECTORY");
    expect(r.content).toBe(`Not a directory: a component of ${work}/plain/inner.txt is a file, not a directory. Check the path.`);
  });

  test("outside --root is refused and nothing is created", async () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    const r = await call(mode, "write", { file_path: "../escape.txt", content: "x" }, { ...opts, root: work });
    expect(r.error?.code).toBe("OUTSIDE_ROOT");
    expect(() => statSync(join(tmp.path, "escape.txt"))).toThrow();
  });

  test("--skip-read-check lets a script replace a file it never read", async () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    writeFileSync(join(work, "cfg.txt"), "a\n");
    const r = await call(mode, "write", { file_path: "cfg.txt", content: "b\n" }, { ...opts, flags: { skipReadCheck: true } });
    expect(r.content).toBe(`Replaced ${work}/cfg.txt (was 1 line, now 1 line).`);
  });

  test("--dry-run reports without writing", async () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    const r = await call(mode, "write", { file_path: "dry.txt", content: "a\n" }, { ...opts, flags: { dryRun: true } });
    // Issue 28: a dry run shows the diff it would write, as edit and patch do (a deliberate change of this golden).
    expect(r.content).toBe(`Wrote ${work}/dry.txt (1 line). (dry run: nothing was written)\n\n--- /dev/null\n+++ b/dry.txt\n@@ -0,0 +1,1 @@\n+a`);
    expect(() => statSync(join(work, "dry.txt"))).toThrow();
  });

  test.skipIf(process.platform !== "linux")("a file whose directory takes no new files (/proc) is refused with prose", async () => {
    const { tmp, opts } = setup();
    using _ = tmp;
    const r = await call(mode, "write", { file_path: "/proc/version", content: "x" }, { ...opts, flags: { skipReadCheck: true } });
    expect(r.error?.code).toBe("PERMISSION_DENIED");
    expect(r.content).toBe("Cannot write /proc/version: its directory does not accept new files, so kt cannot replace it safely (temp file and rename). Files under /proc or /sys are not written with kt.");
  });

  test("huge content is written whole", async () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    const content = "0123456789abcdef\n".repeat(800_000);
    const r = await call(mode, "write", { file_path: "huge.txt", content }, opts);
    expect(r.content).toBe(`Wrote ${work}/huge.txt (800000 lines).`);
    expect(statSync(join(work, "huge.txt")).size).toBe(content.length);
  });

  test("missing content gets repair prose", async () => {
    const { tmp, opts } = setup();
    using _ = tmp;
    const r = await call(mode, "write", { file_path: "x.txt" }, opts);
    expect(r.content).toBe('Invalid input for tool "write": parameter "content" is required. Please rewrite the input so it satisfies the expected schema.');
    const wrong = await call(mode, "write", { file_path: "x.txt", content: ["a"] }, opts);
    expect(wrong.content).toBe('Invalid input for tool "write": parameter "content" must be a string, got an array. Please rewrite the input so it satisfies the expected schema.');
  });
});

describe("write: as an unprivileged user", () => {
  test.skipIf(!CAN_RUN_AS_NOBODY)("a read-only directory gets PERMISSION_DENIED and the file is untouched", () => {
    using tmp = tempDir();
    chmodSync(tmp.path, 0o755);
    const dir = join(tmp.path, "ro");
    mkdirSync(dir, { mode: 0o755 });
    writeFileSync(join(dir, "f.txt"), "keep\n", { mode: 0o666 });
    expect(ktAsNobody(["read", "f.txt"], { cwd: dir, parent: tmp.path }).exitCode).toBe(0);
    const run = ktAsNobody(["write", "f.txt", "--content", "new\n"], { cwd: dir, parent: tmp.path });
    expect(run.stdout).toBe(`Permission denied: ${dir}/f.txt. kt cannot access this path with the current user's permissions; choose another path or ask the user to change its permissions.\n`);
    expect(run.exitCode).toBe(1);
    expect(readFileSync(join(dir, "f.txt"), "utf8")).toBe("keep\n");
  });
});

describe("write: the CLI", () => {
  test("--content-file reads the content from a file or stdin, raw", () => {
    using tmp = tempDir();
    const state = join(tmp.path, ".s");
    writeFileSync(join(tmp.path, "body.txt"), "it's \"quoted\" $HOME\n");
    const r = kt(["write", "out.txt", "--content-file", "body.txt"], { cwd: tmp.path, stateDir: state });
    expect(r).toEqual({ stdout: `Wrote ${tmp.path}/out.txt (1 line).\n`, stderr: "", exitCode: 0 });
    expect(readFileSync(join(tmp.path, "out.txt"), "utf8")).toBe("it's \"quoted\" $HOME\n");
    const s = kt(["write", "--file-path", "stdin.txt", "--content-file", "-"], { cwd: tmp.path, stateDir: state, stdin: "from stdin\n" });
    expect(s.exitCode).toBe(0);
    expect(readFileSync(join(tmp.path, "stdin.txt"), "utf8")).toBe("from stdin\n");
  });
});
