// SPEC §8.2 beyond escapes: what keeps working inside workspace-write, read-only's refusals,
// a machine that cannot sandbox, who decides the policy, what the model is told — through
// dist/kt — and the pure parts (bubblewrap's argv, the Seatbelt profile, the boundary line).
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { kt, KT, tempDir } from "./_helpers.ts";
import { rows, until, type Row } from "./_process.ts";
import { bwrapArgv } from "../src/sandbox/bwrap.ts";
import { seatbeltProfile } from "../src/sandbox/seatbelt.ts";
import { boundaryNote } from "../src/sandbox/notice.ts";
import { instructionsLine } from "../src/sandbox/prose.ts";
import { policyOf, SECRET_STORES } from "../src/sandbox/policy.ts";
import type { SandboxPolicy } from "../src/core/result.ts";

interface Box {
  root: string;
  tmp: string;
  home: string;
  state: string;
  outside: string;
  run(args: string[], opts?: { stdin?: string; env?: Record<string, string> }): ReturnType<typeof kt>;
}

function box(path: string): Box {
  const b = { root: join(path, "root"), tmp: join(path, "tmp"), home: join(path, "home"), state: join(path, "state"), outside: join(path, "outside") };
  for (const d of Object.values(b)) mkdirSync(d, { recursive: true });
  return { ...b, run: (args, opts = {}) => kt(args, { cwd: b.root, stateDir: b.state, ...(opts.stdin !== undefined ? { stdin: opts.stdin } : {}), env: { HOME: b.home, TMPDIR: b.tmp, ...opts.env } }) };
}

const WW = ["--sandbox", "workspace-write"];

describe("inside workspace-write, work goes on", () => {
  test("git init/add/commit, npm test, python3 -m pytest, a build writing to the root and to the temp directory", () => {
    using t = tempDir("kt-sandbox-");
    const b = box(t.path);
    writeFileSync(join(b.root, "package.json"), JSON.stringify({ name: "tiny", version: "1.0.0", private: true, scripts: { test: "node test.js" } }));
    writeFileSync(join(b.root, "test.js"), 'require("node:fs").writeFileSync("npm-ran.txt", "yes"); console.log("tiny tests ok");\n');
    writeFileSync(join(b.root, "test_tiny.py"), "def test_sum():\n    assert 1 + 1 == 2\n");
    writeFileSync(join(b.root, "hello.c"), '#include <stdio.h>\nint main(void) { puts("hello from the build"); return 0; }\n');
    writeFileSync(join(b.root, "Makefile"), "hello: hello.c\n\tcc -c hello.c -o $(TMPDIR)/hello.o\n\tcc $(TMPDIR)/hello.o -o hello\n");
    const git = b.run(["bash", ...WW, "git init -q && git add -A && git -c user.name=kt -c user.email=kt@example.com commit -qm first && git log --format=%s"]);
    expect(git.stdout).toContain("\nfirst\n[exit code 0");
    const npm = b.run(["bash", ...WW, "npm test 2>&1"]);
    expect(npm.stdout).toContain("tiny tests ok");
    expect(npm.stdout).toContain("[exit code 0");
    expect(readFileSync(join(b.root, "npm-ran.txt"), "utf8")).toBe("yes");
    // pytest is installed here; were it not, `python3 -m unittest` would be the check.
    const py = b.run(["bash", ...WW, "python3 -m pytest -q test_tiny.py 2>&1 | tail -1"]);
    expect(py.stdout).toMatch(/1 passed/);
    const build = b.run(["bash", ...WW, "make -s hello && ./hello"]);
    expect(build.stdout).toContain("hello from the build\n[exit code 0");
    expect(existsSync(join(b.tmp, "hello.o"))).toBe(true);
    expect(existsSync(join(b.root, "hello"))).toBe(true);
    b.run(["session", "end"]);
  });

  test("a server on loopback is reached from inside the same sandbox", () => {
    using t = tempDir("kt-sandbox-");
    const b = box(t.path);
    writeFileSync(join(b.root, "index.html"), "served from inside\n");
    const port = 20000 + (process.pid % 20000);
    const r = b.run(["bash", ...WW, `python3 -m http.server ${port} --bind 127.0.0.1 >/dev/null 2>&1 & for i in $(seq 50); do curl -s http://127.0.0.1:${port}/index.html && break; sleep 0.1; done; kill %1`]);
    expect(r.stdout).toContain("served from inside\n");
    b.run(["session", "end"]);
  });

  test("kt ps terminals: vim writes a file in the root, less shows one", async () => {
    using t = tempDir("kt-sandbox-");
    const b = box(t.path);
    writeFileSync(join(b.root, "page.txt"), "first line of the page\nsecond line\n");
    const vim = b.run(["ps", "start", ...WW, "--tty", "vim -u NONE -N note.txt"]);
    const vimId = /Started (p\d+)/.exec(vim.stdout)![1]!;
    b.run(["ps", "write", vimId, "ihello from vim", "--keys", '["Esc", ":", "w", "q", "Enter"]']);
    for (let i = 0; i < 50 && !existsSync(join(b.root, "note.txt")); i++) await Bun.sleep(100);
    expect(readFileSync(join(b.root, "note.txt"), "utf8")).toBe("hello from vim\n");
    const less = b.run(["ps", "start", ...WW, "--tty", "less page.txt"]);
    const lessId = /Started (p\d+)/.exec(less.stdout)![1]!;
    const screen = b.run(["ps", "read", lessId, "--screen"]);
    expect(screen.stdout).toContain("first line of the page");
    const quit = b.run(["ps", "write", lessId, "q"]);
    expect(quit.stdout).toContain("exited with code 0");
    b.run(["session", "end"]);
  });

  test("kt's file tools write in the root and the temp directory, and refuse elsewhere", () => {
    using t = tempDir("kt-sandbox-");
    const b = box(t.path);
    expect(b.run(["write", ...WW, "a.txt", "--content", "in the root\n"]).exitCode).toBe(0);
    expect(b.run(["write", ...WW, join(b.tmp, "t.txt"), "--content", "in temp\n"]).exitCode).toBe(0);
    const out = b.run(["write", ...WW, join(b.outside, "o.txt"), "--content", "x"]);
    expect(out.exitCode).toBe(1);
    expect(out.stdout).toBe(
      `Refusing to change ${b.outside}/o.txt: the workspace-write sandbox lets kt change files only under ${b.root} and ${b.tmp}. Work inside ${b.root}; if the change is needed where it is, tell the user, who can add a directory by starting kt with --writable DIR.\n`,
    );
    // Through a link made inside the root: the real path decides.
    symlinkSync(b.outside, join(b.root, "link"));
    expect(b.run(["write", ...WW, "link/o.txt", "--content", "x"]).stdout).toStartWith(`Refusing to change ${b.root}/link/o.txt: the workspace-write sandbox`);
    expect(existsSync(join(b.outside, "o.txt"))).toBe(false);
    // --writable adds a directory, for commands and file tools alike.
    expect(b.run(["write", ...WW, "--writable", b.outside, join(b.outside, "o.txt"), "--content", "x"]).exitCode).toBe(0);
    const cmd = b.run(["bash", ...WW, "--writable", b.outside, `echo made > ${b.outside}/by-command.txt`]);
    expect(cmd.stdout).toContain("[exit code 0");
    expect(readFileSync(join(b.outside, "by-command.txt"), "utf8")).toBe("made\n");
    b.run(["session", "end"]);
  });
});

describe("the end of a sandboxed command", () => {
  // Once bwrap returns, its pid namespace's init (adopted by the host) is what is left in the
  // command's group: on its way out it holds nothing; still waiting, it holds what the command
  // left running, which kt keeps as a background process until the last of it ends.
  test("a command that leaves nothing is over when the call returns; one that leaves a process inside the sandbox is kept until that ends", async () => {
    using t = tempDir("kt-sandbox-");
    const b = box(t.path);
    const last = () => rows(b.state).at(-1) as (Row & { command: string }) | undefined;
    const done = b.run(["bash", ...WW, "true"]);
    expect(done.exitCode, done.stdout + done.stderr).toBe(0);
    expect(done.stdout).toMatch(new RegExp(`^\\$ true\\n\\[exit code 0 · \\d+\\.\\ds · cwd ${b.root}\\]\\n$`));
    // Over: its row is gone with the call, as a foreground command's is; one held would be kept as pN.
    expect(rows(b.state)).toEqual([]);

    const left = b.run(["bash", ...WW, "sleep 4 & echo started"]);
    expect(left.exitCode, left.stdout + left.stderr).toBe(0);
    expect(left.stdout).toContain("\nstarted\n[exit code 0 · ");
    expect(left.stdout).toMatch(/The command left 2 processes running \(pid \d+ bwrap, pid \d+ sleep\): kt keeps them as background process p1\./);
    expect(last()).toMatchObject({ command: "sleep 4 & echo started", status: "running", exit_code: 0, ended_at: null });
    const ended = await until("the sleep inside the sandbox to end", () => (last()?.status === "exited" ? last() : undefined), 20_000);
    expect(ended.exit_code).toBe(0);
    expect(ended.ended_at).not.toBeNull();
    b.run(["session", "end"]);
  }, 30_000);
});

describe("read-only", () => {
  test("write, edit, patch and undo are refused with SANDBOX_DENIED; commands read the root and write only to the temp directory", () => {
    using t = tempDir("kt-sandbox-");
    const b = box(t.path);
    const file = join(b.root, "a.txt");
    expect(b.run(["write", file, "--content", "one\n"]).exitCode).toBe(0);
    const prose = `Refusing to change ${file}: kt runs in the read-only sandbox, where its tools change no file and commands write only to ${b.tmp}. If this change is needed, tell the user, who can start kt with --sandbox workspace-write.`;
    const ro = ["--sandbox", "read-only"];
    const write = b.run(["write", ...ro, "--json", file, "--content", "two\n"]);
    expect(JSON.parse(write.stdout)).toMatchObject({ isError: true, content: prose, error: { code: "SANDBOX_DENIED", name: "SandboxError" } });
    const edit = b.run(["edit", ...ro, file, "--old-string", "one", "--new-string", "two"]);
    expect(edit.stdout).toBe(`${prose}\n`);
    expect(edit.exitCode).toBe(1);
    const patch = b.run(["patch", ...ro, "--json"], { stdin: JSON.stringify({ patch: `*** Begin Patch\n*** Update File: ${file}\n@@\n-one\n+two\n*** End Patch\n` }) });
    expect(JSON.parse(patch.stdout)).toMatchObject({ isError: true, content: prose, error: { code: "SANDBOX_DENIED" } });
    const undo = b.run(["undo", ...ro, file]);
    expect(undo.stdout).toBe(`${prose}\n`);
    expect(undo.exitCode).toBe(1);
    expect(readFileSync(file, "utf8")).toBe("one\n");
    const cmd = b.run(["bash", ...ro, `cat a.txt; echo t > "$TMPDIR/t.txt" && echo temp-ok; echo x > b.txt`]);
    expect(cmd.stdout).toBe(
      `$ cat a.txt; echo t > "$TMPDIR/t.txt" && echo temp-ok; echo x > b.txt\none\ntemp-ok\nbash: line 1: b.txt: Read-only file system\n[exit code 1 · ${/· (\S+) ·/.exec(cmd.stdout)![1]} · cwd ${b.root}]\n[sandbox read-only: writes outside ${b.tmp} are blocked; network is off]\n`,
    );
    expect(existsSync(join(b.root, "b.txt"))).toBe(false);
    b.run(["session", "end"]);
  });
});

describe("a machine that cannot sandbox", () => {
  test("no bubblewrap on PATH: sandboxed bash and ps refuse with SANDBOX_UNAVAILABLE and run nothing; file tools work", () => {
    using t = tempDir("kt-sandbox-");
    const b = box(t.path);
    const bin = join(t.path, "bin");
    mkdirSync(bin);
    for (const tool of ["bash", "touch"]) symlinkSync(Bun.which(tool)!, join(bin, tool));
    const env = { PATH: bin };
    const prose =
      "Command not run: kt is set to run commands in the workspace-write sandbox (--sandbox), and this machine cannot provide it: bubblewrap (bwrap) is not installed, or not on PATH. Nothing was run, and kt never runs a command outside the sandbox it was given. Tell the user: install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap; Arch: pacman -S bubblewrap); or they can start kt with --sandbox off (or KT_SANDBOX=off) to run commands without a sandbox. kt's file tools work as before.";
    const bash = b.run(["bash", ...WW, "--json", "touch ran.txt"], { env });
    expect(JSON.parse(bash.stdout)).toMatchObject({ isError: true, content: prose, error: { code: "SANDBOX_UNAVAILABLE", name: "SandboxError" } });
    const ps = b.run(["ps", "start", ...WW, "touch ran.txt"], { env });
    expect(ps.stdout).toBe(`${prose}\n`);
    expect(ps.exitCode).toBe(1);
    expect(b.run(["ps", "list"], { env }).stdout).toStartWith("No background processes in this session.");
    Bun.sleepSync(200);
    expect(existsSync(join(b.root, "ran.txt"))).toBe(false);
    // The check can fail: without the sandbox the same PATH runs the command.
    expect(b.run(["bash", "touch ran.txt"], { env }).exitCode).toBe(0);
    expect(existsSync(join(b.root, "ran.txt"))).toBe(true);
    expect(b.run(["write", ...WW, "w.txt", "--content", "still works\n"], { env }).exitCode).toBe(0);
    expect(readFileSync(join(b.root, "w.txt"), "utf8")).toBe("still works\n");
    b.run(["session", "end"]);
  });
});

describe("who decides", () => {
  test("--sandbox beats KT_SANDBOX; a bad KT_SANDBOX and sandbox switches without a sandbox are explained", () => {
    using t = tempDir("kt-sandbox-");
    const b = box(t.path);
    const env = { KT_SANDBOX: "read-only" };
    expect(b.run(["bash", "echo x > a.txt"], { env }).stdout).toContain("Read-only file system");
    expect(b.run(["bash", "--sandbox", "off", "echo x > a.txt"], { env }).stdout).toContain("[exit code 0");
    expect(b.run(["write", "--sandbox", "workspace-write", "c.txt", "--content", "x"], { env }).exitCode).toBe(0);
    const bad = b.run(["read", "c.txt"], { env: { KT_SANDBOX: "none" } });
    expect(bad.stdout).toBe('KT_SANDBOX is "none", which is no sandbox policy. Set it to read-only, workspace-write, off, or unset it.\n');
    expect(b.run(["bash", "--allow-network", "true"]).stdout).toBe(
      "--allow-network shapes a sandbox, and the sandbox is off (the default). Add --sandbox workspace-write (or read-only) to run commands in one, or leave --allow-network out.\n",
    );
    expect(b.run(["bash", "--sandbox", "strict", "true"]).stderr).toContain("--sandbox must be one of read-only, workspace-write, off");
    b.run(["session", "end"]);
  });

  test("no input field widens it: Claude Code's dangerouslyDisableSandbox is refused when sandboxed, dropped when it asks nothing", () => {
    using t = tempDir("kt-sandbox-");
    const b = box(t.path);
    const call = (input: Record<string, unknown>, args: string[] = WW) => b.run(["call", ...args], { stdin: JSON.stringify({ type: "tool_use", id: "t1", name: "Bash", input }) });
    const refused = call({ command: `echo x > ${b.outside}/x.txt`, dangerouslyDisableSandbox: true });
    expect(refused.stdout).toBe(
      'Refusing "dangerouslyDisableSandbox": commands run in the workspace-write sandbox the user chose when starting kt, and no tool input can leave or widen it. Nothing was run. Send the call again without "dangerouslyDisableSandbox"; if the command truly needs more (the network, a directory outside), tell the user, who can start kt with --allow-network, --writable DIR or --sandbox off.\n',
    );
    expect(existsSync(join(b.outside, "x.txt"))).toBe(false);
    expect(call({ command: "echo fine", dangerouslyDisableSandbox: false }).stdout).toContain("fine\n[exit code 0");
    // kt's own bash has no such field.
    expect(b.run(["bash", ...WW, "--json"], { stdin: JSON.stringify({ command: "true", dangerouslyDisableSandbox: true }) }).stdout).toContain('"code":"INVALID_ARGS"');
    b.run(["session", "end"]);
  });

  test("kt mcp runs workspace-write by default and names its policy in its instructions", async () => {
    using t = tempDir("kt-sandbox-");
    const b = box(t.path);
    const proc = Bun.spawn([KT, "mcp"], { cwd: b.root, env: { PATH: process.env.PATH ?? "", HOME: b.home, TMPDIR: b.tmp, KT_STATE_DIR: b.state }, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    const send = (m: unknown) => proc.stdin.write(`${JSON.stringify(m)}\n`);
    send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } });
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "bash", arguments: { command: `echo x > ${b.outside}/m.txt` } } });
    proc.stdin.end();
    const text = await new Response(proc.stdout).text();
    await proc.exited;
    const [init, call] = text.trim().split("\n").map((l) => JSON.parse(l));
    expect(init.result.instructions).toBe(
      `kt file and shell tools. File tools are confined to ${b.root}; relative paths resolve against ${b.root}. Read a file before you write or edit it. Commands (bash, process) run in the workspace-write sandbox: writes outside ${b.root} and ${b.tmp} are blocked; network is off, and secret stores (~/.ssh, ~/.aws and the like) are unreadable; write, edit and apply_patch change files only there. Only the user can change the sandbox.`,
    );
    expect(call.result.content[0].text).toContain("Read-only file system");
    expect(call.result.content[0].text).toContain(`[sandbox workspace-write: writes outside ${b.root} and ${b.tmp} are blocked; network is off]`);
    expect(existsSync(join(b.outside, "m.txt"))).toBe(false);
  });
});

// ---- the pure parts ---------------------------------------------------------------------

const POLICY: SandboxPolicy = { mode: "workspace-write", writable: ["/w/proj"], tmp: "/tmp", network: false, denyRead: ["/home/u/.ssh", "/home/u/.netrc"], from: "--sandbox" };

describe("the boundary line", () => {
  const cases: [string, SandboxPolicy | undefined, string, string | undefined][] = [
    ["EROFS", POLICY, "bash: /etc/x: Read-only file system", "[sandbox workspace-write: writes outside /w/proj and /tmp are blocked; network is off]"],
    ["a refused connection, network off", POLICY, "curl: (7) Failed to connect to 127.0.0.1 port 80: Connection refused", "[sandbox workspace-write: writes outside /w/proj and /tmp are blocked; network is off]"],
    ["name resolution, network off", POLICY, "curl: (6) Could not resolve host: example.com", "[sandbox workspace-write: writes outside /w/proj and /tmp are blocked; network is off]"],
    ["a hidden path", POLICY, "cat: /home/u/.ssh/id_rsa: No such file or directory", "[sandbox workspace-write: writes outside /w/proj and /tmp are blocked; network is off; /home/u/.ssh is unreadable]"],
    ["a refused connection with the network allowed", { ...POLICY, network: true }, "Error: connect ECONNREFUSED 127.0.0.1:5432", undefined],
    ["a file truly missing", POLICY, "cat: notes.txt: No such file or directory", undefined],
    ["an ordinary failure", POLICY, "npm ERR! Test failed.  See above for more details.", undefined],
    ["sandbox off", undefined, "bash: /etc/x: Read-only file system", undefined],
    ["read-only", { ...POLICY, mode: "read-only", writable: [] }, "touch: cannot touch 'a': Read-only file system", "[sandbox read-only: writes outside /tmp are blocked; network is off]"],
  ];
  for (const [name, policy, output, want] of cases) test(name, () => expect(boundaryNote(policy, output)).toBe(want));
});

describe("bubblewrap's argv", () => {
  test("read-only /, writable set and temp bound, hidden paths after them, the state directory last; namespaces; no network", () => {
    using t = tempDir("kt-sandbox-");
    const b = box(t.path);
    mkdirSync(join(b.home, ".ssh"));
    writeFileSync(join(b.home, ".netrc"), "x");
    const policy = policyOf({ mode: "workspace-write", workspace: b.root, writable: [], allowNetwork: false, denyRead: [], cwd: b.root, home: b.home, tmp: b.tmp, from: "--sandbox" })!;
    expect(policy.denyRead).toEqual(SECRET_STORES.map((s) => join(b.home, s)));
    const argv = bwrapArgv(policy, { bwrap: "/usr/bin/bwrap", stateDir: b.state, cwd: b.root, uid: 4242, env: {}, disableUserns: true });
    expect(argv).toEqual([
      "/usr/bin/bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
      "--bind", b.root, b.root, "--bind", b.tmp, b.tmp,
      "--tmpfs", join(b.home, ".ssh"), "--remount-ro", join(b.home, ".ssh"),
      "--ro-bind", "/dev/null", join(b.home, ".netrc"),
      "--tmpfs", b.state, "--remount-ro", b.state,
      "--unshare-user", "--disable-userns", "--unshare-pid", "--unshare-ipc", "--unshare-net",
      "--chdir", b.root, "--",
    ]);
    const open = bwrapArgv({ ...policy, mode: "read-only", writable: [], network: true }, { bwrap: "bwrap", stateDir: b.state, cwd: b.root, uid: 4242, env: {}, disableUserns: false });
    expect(open).not.toContain("--unshare-net");
    expect(open).not.toContain("--disable-userns");
    expect(open.filter((a) => a === "--bind")).toHaveLength(1);
  });
});

describe("the macOS profile (text only: sandbox-exec cannot run here)", () => {
  for (const [name, policy] of [
    ["workspace-write", POLICY],
    ["workspace-write with the network", { ...POLICY, network: true }],
    ["read-only", { ...POLICY, mode: "read-only", writable: [] }],
  ] as [string, SandboxPolicy][]) {
    test(name, () => expect(seatbeltProfile(policy, "/home/u/.local/state/kt")).toMatchSnapshot());
  }
  test("strings are escaped", () => {
    expect(seatbeltProfile({ ...POLICY, writable: ['/w/a "b"\\c'] }, "/s")).toContain('(subpath "/w/a \\"b\\"\\\\c")');
  });
});

test("kt mcp's instruction line for each policy", () => {
  expect(instructionsLine(undefined)).toBe("Commands (bash, process) run without a sandbox.");
  expect(instructionsLine({ ...POLICY, mode: "read-only", writable: [] })).toBe(
    "Commands (bash, process) run in the read-only sandbox: writes outside /tmp are blocked; network is off, and secret stores (~/.ssh, ~/.aws and the like) are unreadable; write, edit and apply_patch are refused. Only the user can change the sandbox.",
  );
});

describe("whether bubblewrap works", () => {
  test("a working bwrap is probed once and remembered; a failing one is not, and is explained", () => {
    using t = tempDir("kt-sandbox-");
    const { probeBwrap } = require("../src/sandbox/probe.ts") as typeof import("../src/sandbox/probe.ts");
    const state = join(t.path, "state");
    mkdirSync(state);
    const first = probeBwrap(state);
    expect(first).toEqual({ ok: true, bwrap: Bun.which("bwrap")!, disableUserns: true });
    const cache = join(state, "sandbox-probe.json");
    const remembered = JSON.parse(readFileSync(cache, "utf8"));
    // What is remembered is what is answered: no second spawn.
    writeFileSync(cache, JSON.stringify({ ...remembered, disableUserns: false }));
    expect(probeBwrap(state)).toEqual({ ok: true, bwrap: Bun.which("bwrap")!, disableUserns: false });
    // A bwrap that cannot make a namespace (user namespaces off): a fake, for a fault this machine does not have.
    const bin = join(t.path, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "bwrap"), "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n", { mode: 0o755 });
    const failing = probeBwrap(state, { PATH: bin });
    expect(failing).toEqual({
      ok: false,
      unavailable: {
        why: `bubblewrap (${bin}/bwrap) is installed but cannot make a sandbox here (it said: bwrap: setting up uid map: Permission denied)`,
        fix: "allow unprivileged user namespaces (sysctl user.max_user_namespaces above 0; on Debian also kernel.unprivileged_userns_clone=1; on Ubuntu an AppArmor profile for bwrap), or run kt where they are allowed",
      },
    });
    expect(probeBwrap(state, { PATH: bin }).ok).toBe(false);
  });

  test("Windows and other platforms are refused with prose", () => {
    const { sandboxPrefix } = require("../src/sandbox/launcher.ts") as typeof import("../src/sandbox/launcher.ts");
    const ctx = { sandbox: POLICY, stateDir: "/s" };
    expect(() => sandboxPrefix(ctx, "/w/proj", {}, "win32")).toThrow(
      "Command not run: kt is set to run commands in the workspace-write sandbox (--sandbox), and this machine cannot provide it: kt has no sandbox for Windows (neither bubblewrap nor Seatbelt exists there). Nothing was run, and kt never runs a command outside the sandbox it was given. Tell the user: run kt inside WSL 2 with bubblewrap installed; or they can start kt with --sandbox off (or KT_SANDBOX=off) to run commands without a sandbox. kt's file tools work as before.",
    );
    expect(sandboxPrefix({ stateDir: "/s" }, "/w/proj", {}, "win32")).toBeUndefined();
  });
});

test("a write into a hidden path is refused even inside the writable set", () => {
  const { refuseWrite, refuseRead } = require("../src/sandbox/policy.ts") as typeof import("../src/sandbox/policy.ts");
  const policy: SandboxPolicy = { ...POLICY, writable: ["/home/u"] };
  expect(() => refuseWrite({ sandbox: policy }, "/home/u/.ssh/authorized_keys", "/home/u/.ssh/authorized_keys")).toThrow(
    "Refusing to write /home/u/.ssh/authorized_keys, inside /home/u/.ssh: the workspace-write sandbox keeps it unreadable, for it may hold secrets (keys, tokens, passwords), and commands cannot see it either. Do without it; if it is truly needed, tell the user — only they can lift this (--sandbox off).",
  );
  expect(() => refuseWrite({ sandbox: policy }, "/home/u/notes.txt", "/home/u/notes.txt")).not.toThrow();
  expect(() => refuseRead({ sandbox: policy }, "/home/u/.netrc", "/home/u/.netrc")).toThrow("Refusing to read /home/u/.netrc: the workspace-write sandbox keeps it unreadable");
  expect(() => refuseRead({}, "/home/u/.netrc", "/home/u/.netrc")).not.toThrow();
});
