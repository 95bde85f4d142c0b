// Issue 29, the remaining races: one regression test per item, named after it, through
// the compiled binary.
import { describe, expect, test } from "bun:test";
import { chmodSync, chownSync, cpSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { CAN_RUN_AS_NOBODY, KT, kt, ktAsNobody, ROOT, startFlipper, tempDir, type RunResult } from "./_helpers.ts";
import { commandEnv, MARKER } from "../src/process/env.ts";
import { QUIET_MS } from "../src/process/input-wait.ts";
import { WAIT_DEFAULT_MS, WAIT_MAX_MS } from "../src/tools/ps.ts";

const ENV = (stateDir: string) => ({ PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", NO_COLOR: "1", KT_STATE_DIR: stateDir });

/** The binary with a deadline: a hang is a failure, not a stuck suite. */
async function ktWithin(ms: number, args: string[], opts: { cwd: string; stateDir: string; stdin: string }) {
  const proc = Bun.spawn([KT, ...args], { cwd: opts.cwd, env: ENV(opts.stateDir), stdin: Buffer.from(opts.stdin), stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => proc.kill("SIGKILL"), ms);
  const [stdout, stderr, exitCode] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  return { stdout, stderr, exitCode, hung: proc.signalCode === "SIGKILL" };
}

/** Every entry below `dir`, as paths relative to it (directories and files alike). */
function everything(dir: string, prefix = ""): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const rel = prefix ? `${prefix}/${name}` : name;
    out.push(rel);
    if (lstatSync(join(dir, name)).isDirectory()) out.push(...everything(join(dir, name), rel));
  }
  return out;
}

type Line = { content: string; isError: boolean; error?: { code: string } };

/** 300 calls, each creating root/d/tN/b/c/<file> (three new directories), while root/d flips. */
async function directorySwapRace(call: (root: string, i: number) => object): Promise<{ results: Line[]; outside: string[]; root: string }> {
  using tmp = tempDir();
  const root = join(tmp.path, "root");
  const outside = join(tmp.path, "outside");
  const stateDir = join(tmp.path, "state");
  mkdirSync(join(root, "d"), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(outside, "f"), "outside the root\n");
  const flipper = startFlipper(join(root, "d"), outside);
  let lines: string[];
  try {
    const calls = Array.from({ length: 300 }, (_, i) => JSON.stringify(call(root, i)));
    const run = await ktWithin(120_000, ["call", "--jsonl", "--root", root, "--skip-read-check"], { cwd: root, stateDir, stdin: `${calls.join("\n")}\n` });
    expect(run.hung).toBe(false);
    lines = run.stdout.trim().split("\n");
  } finally {
    flipper.kill("SIGKILL");
    await flipper.exited;
  }
  expect(lines).toHaveLength(300);
  expect(readFileSync(join(outside, "f"), "utf8")).toBe("outside the root\n");
  return { results: lines.map((l) => JSON.parse(l) as Line), outside: everything(outside), root };
}

describe("issue 29: races", () => {
  test("item 1: parent directories are created through verified descriptors, as files already are: kt write during a directory swap creates 0 directories outside the root (300 attempts)", async () => {
    const { results, outside } = await directorySwapRace((root, i) => ({ tool: "write", input: { file_path: join(root, "d", `t${i}`, "b", "c", "file"), content: `attempt ${i}\n` } }));
    expect(outside).toEqual(["f"]);
    // The race was run, not dodged: some writes met the link, and some landed.
    expect(results.some((r) => r.error?.code === "OUTSIDE_ROOT")).toBe(true);
    expect(results.some((r) => !r.isError)).toBe(true);
  }, 150_000);

  test("item 1: parent directories are created through verified descriptors, as files already are: kt patch during a directory swap creates 0 directories outside the root (300 attempts)", async () => {
    const { results, outside } = await directorySwapRace((root, i) => ({
      tool: "apply_patch",
      input: { patch: ["*** Begin Patch", `*** Add File: ${join(root, "d", `t${i}`, "b", "c", "file")}`, `+attempt ${i}`, "*** End Patch"].join("\n") },
    }));
    expect(outside).toEqual(["f"]);
    expect(results.some((r) => r.error?.code === "OUTSIDE_ROOT")).toBe(true);
    expect(results.some((r) => !r.isError)).toBe(true);
  }, 150_000);

  /** History lines carry local times; golden them without. */
  const timeless = (text: string) => text.replace(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/g, "<time>");

  /**
   * kt writes work/d/f; then d is moved away and replaced by a symbolic link to `other`,
   * where a file f already holds what kt wrote (a copy of it): content alone cannot tell the
   * two apart. `run` runs kt (as root, or as nobody).
   */
  function linkSwapUndo(run: (args: string[], cwd: string) => RunResult, parent: string, owner?: number) {
    const work = join(parent, "work");
    const other = join(parent, "other");
    mkdirSync(join(work, "d"), { recursive: true });
    mkdirSync(other);
    writeFileSync(join(work, "d", "f"), "before\n");
    if (owner !== undefined) for (const p of [work, join(work, "d"), join(work, "d", "f"), other]) chownSync(p, owner, owner);
    expect(run(["read", "d/f"], work).exitCode).toBe(0);
    expect(run(["write", "d/f", "--content", "by kt\n"], work).exitCode).toBe(0);
    writeFileSync(join(other, "f"), "by kt\n");
    renameSync(join(work, "d"), join(work, "d.moved"));
    symlinkSync(other, join(work, "d"));
    const r = run(["undo", "--last"], work);
    return { r, work, other };
  }

  test("item 2: undo without a root refuses a path whose directory changed since kt wrote it: a directory swapped for a symbolic link is not followed", () => {
    using tmp = tempDir();
    const stateDir = join(tmp.path, "state");
    const { r, work, other } = linkSwapUndo((args, cwd) => kt(args, { cwd, stateDir }), tmp.path);
    expect(r.exitCode).toBe(1);
    expect(timeless(r.stdout)).toBe(
      `Refusing to undo ${work}/d/f: its directory ${work}/d is not the one kt wrote the file in (it now leads to ${other} through a symbolic link; write at <time>), and undoing would write a file kt never wrote. Nothing was changed. Check the directory first; kt undo --last --force writes there anyway.\n`,
    );
    expect(readFileSync(join(other, "f"), "utf8")).toBe("by kt\n");
    expect(readFileSync(join(work, "d.moved", "f"), "utf8")).toBe("by kt\n");
    // Put back, the directory is the one kt wrote in: the undo goes through.
    renameSync(join(work, "d"), join(tmp.path, "link"));
    renameSync(join(work, "d.moved"), join(work, "d"));
    const back = kt(["undo", "--last"], { cwd: work, stateDir });
    expect(back.exitCode).toBe(0);
    expect(readFileSync(join(work, "d", "f"), "utf8")).toBe("before\n");
  });

  test.if(CAN_RUN_AS_NOBODY)("item 2: undo without a root refuses a path whose directory changed since kt wrote it: as nobody too", () => {
    using tmp = tempDir();
    chmodSync(tmp.path, 0o755);
    const { r, work, other } = linkSwapUndo((args, cwd) => ktAsNobody(args, { cwd, parent: tmp.path }), tmp.path, 65534);
    expect(r.exitCode).toBe(1);
    expect(timeless(r.stdout)).toBe(
      `Refusing to undo ${work}/d/f: its directory ${work}/d is not the one kt wrote the file in (it now leads to ${other} through a symbolic link; write at <time>), and undoing would write a file kt never wrote. Nothing was changed. Check the directory first; kt undo --last --force writes there anyway.\n`,
    );
    expect(readFileSync(join(other, "f"), "utf8")).toBe("by kt\n");
  });

  test("item 2: undo without a root refuses a path whose directory changed since kt wrote it: a directory made anew in its place, unless --force", () => {
    using tmp = tempDir();
    const work = join(tmp.path, "work");
    const opts = { cwd: work, stateDir: join(tmp.path, "state") };
    mkdirSync(join(work, "d"), { recursive: true });
    writeFileSync(join(work, "d", "f"), "before\n");
    kt(["read", "d/f"], opts);
    expect(kt(["write", "d/f", "--content", "by kt\n"], opts).exitCode).toBe(0);
    renameSync(join(work, "d"), join(work, "d.old"));
    cpSync(join(work, "d.old"), join(work, "d"), { recursive: true });
    const r = kt(["undo", "d/f"], opts);
    expect(r.exitCode).toBe(1);
    expect(timeless(r.stdout)).toBe(
      `Refusing to undo ${work}/d/f: its directory ${work}/d is not the one kt wrote the file in (it was replaced by another directory since; write at <time>), and undoing would write a file kt never wrote. Nothing was changed. Check the directory first; kt undo --force writes there anyway.\n`,
    );
    expect(readFileSync(join(work, "d", "f"), "utf8")).toBe("by kt\n");
    const forced = kt(["undo", "d/f", "--force"], opts);
    expect(forced.exitCode).toBe(0);
    expect(readFileSync(join(work, "d", "f"), "utf8")).toBe("before\n");
    expect(readFileSync(join(work, "d.old", "f"), "utf8")).toBe("by kt\n");
  });

  test("item 2: undo without a root refuses a path whose directory changed since kt wrote it: a file in the directory's place", () => {
    using tmp = tempDir();
    const work = join(tmp.path, "work");
    const opts = { cwd: work, stateDir: join(tmp.path, "state") };
    mkdirSync(join(work, "d"), { recursive: true });
    expect(kt(["write", "d/f", "--content", "by kt\n"], opts).exitCode).toBe(0);
    rmSync(join(work, "d"), { recursive: true });
    writeFileSync(join(work, "d"), "a file now\n");
    const r = kt(["undo", "--last"], opts);
    expect(r.exitCode).toBe(1);
    expect(timeless(r.stdout)).toBe(
      `Refusing to undo ${work}/d/f: its directory ${work}/d is not the one kt wrote the file in (it is no longer a directory; write at <time>), and undoing would write a file kt never wrote. Nothing was changed. Check the directory first; kt undo --last --force writes there anyway.\n`,
    );
    expect(readFileSync(join(work, "d"), "utf8")).toBe("a file now\n");
  });

  test("item 2: history an older kt kept (no directory identity) is kept and undone as before", () => {
    using tmp = tempDir();
    const work = join(tmp.path, "work");
    const stateDir = join(tmp.path, "state");
    const opts = { cwd: work, stateDir };
    mkdirSync(join(work, "d"), { recursive: true });
    writeFileSync(join(work, "d", "f"), "before\n");
    kt(["read", "d/f"], opts);
    expect(kt(["write", "d/f", "--content", "by kt\n"], opts).exitCode).toBe(0);
    // The table as an older kt left it: without the column (nor the pack columns that came after it).
    const db = new Database(join(stateDir, "index.db"));
    db.exec("DROP INDEX history_pack");
    for (const column of ["pack_len", "pack_off", "pack", "dir"]) db.exec(`ALTER TABLE history DROP COLUMN ${column}`);
    db.close();
    renameSync(join(work, "d"), join(work, "d.old"));
    cpSync(join(work, "d.old"), join(work, "d"), { recursive: true });
    const r = kt(["undo", "--last"], opts);
    expect(r.exitCode).toBe(0);
    expect(timeless(r.stdout)).toBe(`Undid the write of <time> (1 file):\nM ${work}/d/f\n`);
    expect(readFileSync(join(work, "d", "f"), "utf8")).toBe("before\n");
  });

  // The README's bash and ps sections, from "### bash" to the terminals' subsection.
  const readme = () => {
    const text = readFileSync(join(ROOT, "README.md"), "utf8");
    return text.slice(text.indexOf("\n### bash\n"), text.indexOf("\n#### Terminals\n"));
  };
  const thousands = (n: number) => n.toLocaleString("en").replace(/,/g, " ");

  test("item 4: README's ps section documents every variable that keeps a command from waiting on a person, with its value", () => {
    const section = readme();
    const env = commandEnv({});
    const names = Object.keys(env).filter((k) => k !== MARKER);
    expect(names.length).toBeGreaterThan(5);
    for (const name of names) {
      expect(section).toContain(`\`${name}\``);
      // The editor is a long sh command: the README says what it does instead.
      if (!env[name]!.includes("kt-no-editor") && !name.startsWith("__")) expect(section).toContain(`\`${env[name]}\``);
    }
    // On a terminal ps start keeps the caller's editors: the README says which variables remain.
    expect(Object.keys(commandEnv({}, undefined, true)).sort()).toEqual(["GIT_PAGER", "PAGER"]);
    expect(section).toContain("(only `PAGER` and `GIT_PAGER` are set)");
    // A caller's own GIT_SSH_COMMAND is kept, as the README says.
    expect(commandEnv({ GIT_SSH_COMMAND: "ssh -i key" }).GIT_SSH_COMMAND).toBe("ssh -i key");
    expect(section).toContain("(unless the caller set `GIT_SSH_COMMAND` or `GIT_SSH`)");
  });

  test("item 4: README's ps section documents ps wait's fields, default and bound, and waiting for input after 10 s", () => {
    const section = readme();
    expect(section).toContain("`ps wait` (`id`, `pattern`, `timeout_ms`)");
    expect(section).toContain(`\`timeout_ms\`, default ${thousands(WAIT_DEFAULT_MS)}, at most ${thousands(WAIT_MAX_MS)}`);
    expect(section).toContain(`no new output for ${QUIET_MS / 1000} s is shown as \`waiting for\ninput\``);
  });
});
