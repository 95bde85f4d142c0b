// The invocation contract (SPEC §1): flags, stdin JSON, exit codes, --json, help, version,
// and the state directory's privacy and recovery (SPEC §2).
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { kt, tempDir } from "./_helpers.ts";
import pkg from "../package.json" with { type: "json" };

describe("kt CLI", () => {
  test("--version and --help", () => {
    using tmp = tempDir();
    const o = { cwd: tmp.path, stateDir: join(tmp.path, ".s") };
    const head = Bun.spawnSync(["git", "rev-parse", "--short=12", "HEAD"], { cwd: import.meta.dir, stderr: "ignore" });
    const commit = head.exitCode === 0 ? head.stdout.toString().trim() : "[0-9a-f]{12}";
    const version = kt(["--version"], o);
    expect(version).toEqual({ stdout: expect.stringMatching(new RegExp(`^kt ${pkg.version.replace(/\./g, "\\.")} \\(commit ${commit}( with uncommitted changes)?\\)\n$`)), stderr: "", exitCode: 0 });
    const help = kt(["--help"], o);
    expect(help.exitCode).toBe(0);
    for (const name of ["read", "write", "schema"]) expect(help.stdout).toContain(name);
    const readHelp = kt(["read", "--help"], o);
    expect(readHelp.exitCode).toBe(0);
    expect(readHelp.stdout).toContain("--limit");
    expect(readHelp.stdout).toContain("FILE_PATH");
    expect(readHelp.stdout).toMatch(/\n +--call-id=<id> +Name this call's spill files after ID \(default: a new id per call\)/);
    const writeHelp = kt(["write", "--help"], o);
    expect(writeHelp.stdout).toContain("--content-file");
    expect(writeHelp.stdout).toContain("--skip-read-check");
    expect(writeHelp.stdout).toContain("\nEXAMPLES\n\n  kt write notes/todo.md --content '- ship it'\n");
    expect(readHelp.stdout).not.toContain("\u001b[");
  });

  test("--version names the commit, says when the tree had changes or kt runs from source", async () => {
    const { versionLine } = await import("../src/cmd/version.ts");
    expect(versionLine("0123456789ab", false)).toBe(`kt ${pkg.version} (commit 0123456789ab)`);
    expect(versionLine("0123456789ab+dirty", false)).toBe(`kt ${pkg.version} (commit 0123456789ab with uncommitted changes)`);
    expect(versionLine("0123456789ab", true)).toBe(`kt ${pkg.version} (commit 0123456789ab, run from source)`);
    expect(versionLine("", false)).toBe(`kt ${pkg.version} (commit unknown: built outside a git checkout)`);
    // The test runs from source: the macro asked git when Bun transpiled version.ts.
    expect(versionLine()).toMatch(/^kt \S+ \(commit (unknown: built outside a git checkout|[0-9a-f]{12}( with uncommitted changes)?), run from source\)$/);
  });

  test("kt with no arguments prints usage on stderr and exits 2", () => {
    using tmp = tempDir();
    const r = kt([], { cwd: tmp.path, stateDir: join(tmp.path, ".s") });
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("USAGE");
  });

  test("an unknown subcommand or flag is a usage error: exit 2, nothing on stdout", () => {
    using tmp = tempDir();
    const o = { cwd: tmp.path, stateDir: join(tmp.path, ".s") };
    const sub = kt(["reed", "x"], o);
    expect(sub.exitCode).toBe(2);
    expect(sub.stdout).toBe("");
    expect(sub.stderr).toStartWith('kt: unknown command "reed". Commands: read, write');
    const flag = kt(["read", "x", "--bogus"], o);
    expect(flag).toEqual({ stdout: "", stderr: 'kt read: unknown option --bogus\nRun "kt read --help" for usage.\n', exitCode: 2 });
    const near = kt(["read", "x", "--limi", "3"], o);
    expect(near.stderr).toStartWith("kt read: unknown option --limi (did you mean --limit?)");
    const notHere = kt(["read", "x", "--trace"], o);
    expect(notHere.stderr).toStartWith("kt read: option --trace does not apply to kt read");
    const extra = kt(["read", "a", "b"], o);
    expect(extra.exitCode).toBe(2);
  });

  test("flags map onto fields in both spellings; the primary field is positional", () => {
    using tmp = tempDir();
    const o = { cwd: tmp.path, stateDir: join(tmp.path, ".s") };
    writeFileSync(join(tmp.path, "f.txt"), "1\n2\n3\n4\n");
    const expected = `${tmp.path}/f.txt\n     2→2\n(Showing lines 2–2 of 4. Use offset=3 to continue.)\n`;
    expect(kt(["read", "f.txt", "--offset", "2", "--limit=1"], o).stdout).toBe(expected);
    expect(kt(["read", "--file_path", "f.txt", "--offset=2", "--limit", "1"], o).stdout).toBe(expected);
    expect(kt(["read", "--file-path=f.txt", "--offset", "2", "--limit", "1"], o).stdout).toBe(expected);
    expect(kt(["read", "--filePath", "f.txt", "--offset", "2", "--limit", "1"], o).stdout).toBe(expected);
    expect(kt(["read", "--", "f.txt"], o).exitCode).toBe(0);
  });

  test("JSON on stdin when no field is on the command line", () => {
    using tmp = tempDir();
    const o = { cwd: tmp.path, stateDir: join(tmp.path, ".s") };
    writeFileSync(join(tmp.path, "f.txt"), "one\n");
    expect(kt(["read"], { ...o, stdin: '{"file_path":"f.txt"}' })).toEqual({ stdout: `${tmp.path}/f.txt\n     1→one\n`, stderr: "", exitCode: 0 });
    const bad = kt(["read"], { ...o, stdin: '{"file_path": ' });
    expect(bad.exitCode).toBe(1);
    expect(bad.stdout).toStartWith('Invalid input for tool "read": stdin is not valid JSON (');
    expect(bad.stdout).toEndWith("). Send exactly one JSON object of parameters. Please rewrite the input so it satisfies the expected schema.\n");
    expect(bad.stderr).toBe("");
    const empty = kt(["read"], { ...o, stdin: "" });
    expect(empty).toEqual({ stdout: 'Invalid input for tool "read": stdin was empty. Give the input as flags or as one JSON object on stdin.\n', stderr: "", exitCode: 1 });
    const scalar = kt(["read"], { ...o, stdin: '"f.txt"' });
    expect(scalar.stdout).toBe('Invalid input for tool "read": expected a JSON object of parameters, got "f.txt" (a string). Please rewrite the input so it satisfies the expected schema.\n');
    const wrong = kt(["write"], { ...o, stdin: '{"file_path": "n.txt", "content": 5}' });
    expect(wrong.stdout).toBe('Invalid input for tool "write": parameter "content" must be a string, got 5. Please rewrite the input so it satisfies the expected schema.\n');
    expect(wrong.exitCode).toBe(1);
  });

  test("--json prints the whole envelope with the error's name and code", () => {
    using tmp = tempDir();
    const r = kt(["read", "missing.txt", "--json"], { cwd: tmp.path, stateDir: join(tmp.path, ".s") });
    expect(r.exitCode).toBe(1);
    const env = JSON.parse(r.stdout);
    expect(env.isError).toBe(true);
    expect(env.error).toEqual({ name: "FileError", code: "FILE_NOT_FOUND" });
    expect(env.content).toStartWith(`File not found: ${tmp.path}/missing.txt.`);
    expect(typeof env.metadata.durationMs).toBe("number");
    expect(typeof env.metadata.title).toBe("string");
  });

  test("error.name names the failure class, the code the recovery within it (--json envelopes, golden)", () => {
    using tmp = tempDir();
    const o = { cwd: tmp.path, stateDir: join(tmp.path, ".s") };
    writeFileSync(join(tmp.path, "f.txt"), "alpha\n");
    // SPEC §8.6: grep's errors exit 2, as ripgrep's do; the other tools' exit 1.
    const envelope = (args: string[], stdin?: string) => {
      const r = kt([...args, "--json"], stdin === undefined ? o : { ...o, stdin });
      expect(r.exitCode).toBe(args[0] === "grep" ? 2 : 1);
      const env = JSON.parse(r.stdout);
      env.metadata.durationMs = 0;
      return JSON.stringify(env).replaceAll(tmp.path, "$TMP");
    };
    expect(envelope(["read", "f.txt", "--limit", "0"])).toBe(
      '{"content":"Invalid input for tool \\"read\\": parameter \\"limit\\" must be ≥ 1, got 0. Please rewrite the input so it satisfies the expected schema.","isError":true,"error":{"name":"ToolArgsError","code":"INVALID_ARGS"},"metadata":{"title":"read failed · INVALID_ARGS","durationMs":0}}',
    );
    expect(envelope(["read", "nothing-like-it.q"])).toBe(
      '{"content":"File not found: $TMP/nothing-like-it.q. Use glob to search for it by name, or read the parent directory to list what is there.","isError":true,"error":{"name":"FileError","code":"FILE_NOT_FOUND"},"metadata":{"title":"read failed · FILE_NOT_FOUND","durationMs":0}}',
    );
    expect(envelope(["read", "/etc/hostname", "--root", tmp.path])).toBe(
      '{"content":"Refusing to access /etc/hostname: it is outside the root directory $TMP, and kt is confined to that directory. Use a path inside $TMP.","isError":true,"error":{"name":"ConfinementError","code":"OUTSIDE_ROOT"},"metadata":{"title":"read failed · OUTSIDE_ROOT","durationMs":0}}',
    );
    expect(envelope(["write", "f.txt", "--content", "beta\n"])).toBe(
      '{"content":"Refusing to overwrite $TMP/f.txt: you have not read this file in this session. Read it first so you do not destroy existing content, then write or edit it.","isError":true,"error":{"name":"ReadCheckError","code":"NOT_READ"},"metadata":{"title":"write failed · NOT_READ","durationMs":0}}',
    );
    expect(envelope(["edit", "f.txt", "--old-string", "same", "--new-string", "same"])).toBe(
      '{"content":"old_string and new_string are identical — there is nothing to change.","isError":true,"error":{"name":"MatchError","code":"IDENTICAL_STRINGS"},"metadata":{"title":"edit failed · IDENTICAL_STRINGS","durationMs":0}}',
    );
    expect(JSON.parse(envelope(["grep", "a(b"])).error).toEqual({ name: "PatternError", code: "INVALID_REGEX" });
    expect(JSON.parse(envelope(["ps", "stop", "no-such-process"])).error).toEqual({ name: "ProcessError", code: "UNKNOWN_PROCESS" });
    expect(envelope(["call"], '{"tool":"raed","input":{}}')).toBe(
      `{"content":"Unknown tool \\"raed\\". Did you mean \\"read\\"? The available tools are: read, write, edit, grep, glob, bash, process, apply_patch, code, replace. Call one of them by its exact name.","isError":true,"error":{"name":"ToolNotFoundError","code":"UNKNOWN_TOOL"},"metadata":{"title":"raed failed · UNKNOWN_TOOL","durationMs":0}}`,
    );
  });

  test("the state directory is private; its location follows the environment", () => {
    using tmp = tempDir();
    writeFileSync(join(tmp.path, "f.txt"), "x\n");
    const state = join(tmp.path, "deep", "state");
    expect(kt(["read", "f.txt"], { cwd: tmp.path, stateDir: state }).exitCode).toBe(0);
    expect(kt(["write", "f.txt", "--content", "x\n"], { cwd: tmp.path, stateDir: state }).exitCode).toBe(0);
    expect(statSync(state).mode & 0o777).toBe(0o700);
    // The read's stamp (its log) and the write's index are there, private.
    expect(readdirSync(state)).toEqual(expect.arrayContaining(["stamps.log", "index.db"]));
    for (const name of readdirSync(state)) expect(statSync(join(state, name)).mode & 0o077).toBe(0);
    // XDG_STATE_HOME when KT_STATE_DIR is unset; --state-dir beats both.
    const xdg = join(tmp.path, "xdg");
    const run = Bun.spawnSync([join(import.meta.dir, "..", "dist", "kt"), "read", "f.txt"], { cwd: tmp.path, env: { PATH: process.env.PATH ?? "", XDG_STATE_HOME: xdg, HOME: tmp.path } });
    expect(run.exitCode).toBe(0);
    // A read's stamp goes to the log of reads (core/stamps.ts), not into the index.
    expect(readdirSync(join(xdg, "kt"))).toContain("stamps.log");
    const flagDir = join(tmp.path, "flag-state");
    expect(kt(["read", "f.txt", "--state-dir", flagDir], { cwd: tmp.path, stateDir: state }).exitCode).toBe(0);
    expect(readdirSync(flagDir)).toContain("stamps.log");
  });

  test("a corrupt index is replaced with a fresh one, said on stderr", () => {
    using tmp = tempDir();
    const state = join(tmp.path, "state");
    const o = { cwd: tmp.path, stateDir: state };
    writeFileSync(join(tmp.path, "f.txt"), "x\n");
    expect(kt(["read", "f.txt"], o).exitCode).toBe(0);
    // A write makes the index (a read's stamp goes to the log of reads), with the write's stamp in it.
    expect(kt(["write", "f.txt", "--content", "x\n"], o).exitCode).toBe(0);
    expect(readdirSync(state)).toContain("index.db");
    for (const name of readdirSync(state)) if (name.startsWith("index.db")) writeFileSync(join(state, name), "this is not a database, just garbage bytes ".repeat(200));
    const r = kt(["write", "f.txt", "--content", "y\n"], o);
    // The stamps are gone with the old index, so the write asks for a read first.
    expect(r.stdout).toBe(`Refusing to overwrite ${tmp.path}/f.txt: you have not read this file in this session. Read it first so you do not destroy existing content, then write or edit it.\n`);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(`the state index at ${state}/index.db was unreadable`);
    expect(readFileSync(join(tmp.path, "f.txt"), "utf8")).toBe("x\n");
    expect(kt(["read", "f.txt"], o)).toMatchObject({ exitCode: 0, stderr: "" });
    expect(kt(["write", "f.txt", "--content", "y\n"], o).exitCode).toBe(0);
  });

  test("a deleted index is recreated, said on stderr (SPEC §2); a first run says nothing", () => {
    using tmp = tempDir();
    const state = join(tmp.path, "state");
    writeFileSync(join(tmp.path, "f.txt"), "x\n");
    const o = { cwd: tmp.path, stateDir: state };
    expect(kt(["read", "f.txt"], o)).toMatchObject({ exitCode: 0, stderr: "" });
    expect(kt(["write", "f.txt", "--content", "x\n"], o)).toMatchObject({ exitCode: 0, stderr: "" });
    for (const name of readdirSync(state)) if (name.startsWith("index.db")) Bun.spawnSync(["rm", "-f", join(state, name)]);
    // A read does not open the index (its stamp goes to the log of reads): the next call that does says it.
    expect(kt(["read", "f.txt"], o)).toMatchObject({ exitCode: 0, stderr: "" });
    const r = kt(["write", "f.txt", "--content", "y\n"], o);
    expect(r.stderr).toBe(
      `\n WARN  kt: the state index at ${state}/index.db was missing (deleted since kt last used ${state}); started a fresh one. Files must be read again before they are edited.\n\n`,
    );
    // As it says: the fresh index knows no read made before it.
    expect(r.stdout).toBe(`Refusing to overwrite ${tmp.path}/f.txt: you have not read this file in this session. Read it first so you do not destroy existing content, then write or edit it.\n`);
    expect(r.exitCode).toBe(1);
    // Said once: the index made then is used silently.
    expect(kt(["read", "f.txt"], o)).toMatchObject({ exitCode: 0, stderr: "" });
    expect(kt(["write", "f.txt", "--content", "y\n"], o)).toMatchObject({ exitCode: 0, stderr: "" });
    expect(readFileSync(join(tmp.path, "f.txt"), "utf8")).toBe("y\n");
  });

  test("an unusable state directory is named on stderr with exit 3 (a write needs it; a read does not)", () => {
    using tmp = tempDir();
    writeFileSync(join(tmp.path, "f.txt"), "x\n");
    writeFileSync(join(tmp.path, "not-a-dir"), "");
    const stateDir = join(tmp.path, "not-a-dir", "state");
    const r = kt(["write", "g.txt", "--content", "y"], { cwd: tmp.path, stateDir });
    expect(r.exitCode).toBe(3);
    expect(r.stdout).toBe("");
    expect(r.stderr).toStartWith(`kt write: kt cannot use its state directory ${tmp.path}/not-a-dir/state: `);
    expect(r.stderr).not.toContain("    at ");
    expect(r.stderr).not.toContain("a bug in kt");
    expect(existsSync(join(tmp.path, "g.txt"))).toBe(false);
    // Issue 11 item 9: a read is right without the index; only its stamp is lost, and it says so.
    const read = kt(["read", "f.txt"], { cwd: tmp.path, stateDir });
    expect(read.exitCode).toBe(0);
    expect(read.stdout).toBe(`${tmp.path}/f.txt\n     1→x\n`);
    expect(read.stderr).toContain(`kt cannot use its state directory ${tmp.path}/not-a-dir/state: `);
  });

  test("a missing --root is explained", () => {
    using tmp = tempDir();
    mkdirSync(join(tmp.path, "w"));
    const r = kt(["read", "x", "--root", join(tmp.path, "nope")], { cwd: join(tmp.path, "w"), stateDir: join(tmp.path, ".s") });
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe(`The root directory ${join(tmp.path, "nope")} (from --root) does not exist. Give an existing directory.\n`);
  });

  test("a .env or bunfig.toml in the working directory does not reach kt or its commands", () => {
    using tmp = tempDir();
    writeFileSync(join(tmp.path, ".env"), "KT_LEAK_PROBE=leaked\nKT_SESSION=from-dotenv\n");
    writeFileSync(join(tmp.path, "bunfig.toml"), "preload = [\"./nope.ts\"]\n");
    const r = kt(["bash", 'echo "[$KT_LEAK_PROBE]"', "--json"], { cwd: tmp.path, stateDir: join(tmp.path, ".s") });
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout).content).toBe(`$ echo "[$KT_LEAK_PROBE]"\n[]\n[exit code 0 · ${JSON.parse(r.stdout).content.match(/· (\S+s) ·/)[1]} · cwd ${tmp.path}]`);
    expect(readdirSync(join(tmp.path, ".s", "sessions")).includes("from-dotenv")).toBe(false);
  });
});
