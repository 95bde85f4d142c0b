// Issue 23, SPEC §8.7 "The state directory is the user's own, or refused" and "Orphans are
// this state directory's only": each attack of the issue's adversarial run, through dist/kt,
// as `nobody` against root's kt and the reverse where it applies, under umask 000 and 022.
import { Database } from "bun:sqlite";
import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CAN_RUN_AS_NOBODY, KT, tempDir, type RunResult, type TempDir } from "./_helpers.ts";
import { rows, until } from "./_process.ts";

const NOBODY = 65534;
/** A python3 every user can run (a pyenv shim under /root is root's alone). */
const PYTHON = existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
const UMASKS = ["000", "022"] as const;

const temps: TempDir[] = [];
const pids: number[] = [];

afterEach(() => {
  for (const pid of pids.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone.
    }
  }
  for (const t of temps.splice(0)) {
    // Hosts and commands of each state directory end with it: session end first.
    for (const state of stateDirsUnder(t.path)) runKt(["session", "end", "--all"], { cwd: t.path, stateDir: state });
    t[Symbol.dispose]();
  }
});

function stateDirsUnder(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string, depth: number) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    if (names.includes("index.db")) out.push(dir);
    if (depth < 3) for (const n of names) if (lstatSync(join(dir, n), { throwIfNoEntry: false })?.isDirectory()) walk(join(dir, n), depth + 1);
  };
  walk(root, 0);
  return out;
}

/** A temp folder others can search (so only kt's own protections stand between users), removed after the test. */
function scratch(): string {
  const t = tempDir("kt-sec-");
  temps.push(t);
  chmodSync(t.path, 0o755);
  return t.path;
}

interface Run {
  cwd: string;
  stateDir: string;
  umask?: string;
  env?: Record<string, string>;
  stdin?: string;
  as?: "root" | "nobody";
}

/** dist/kt under a umask, as root (the test) or as nobody. */
function runKt(args: string[], o: Run): RunResult {
  const prefix = o.as === "nobody" ? ["setpriv", `--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups"] : [];
  const proc = Bun.spawnSync([...prefix, "sh", "-c", `umask ${o.umask ?? "022"}; exec "$0" "$@"`, KT, ...args], {
    cwd: o.cwd,
    env: { PATH: process.env.PATH ?? "", HOME: o.cwd, NO_COLOR: "1", KT_STATE_DIR: o.stateDir, ...o.env },
    stdin: o.stdin === undefined ? "ignore" : Buffer.from(o.stdin),
  });
  return { stdout: proc.stdout.toString(), stderr: proc.stderr.toString(), exitCode: proc.exitCode ?? -1 };
}

/** Runs a python3 snippet as nobody (or root); its stdout. */
function python(code: string, as: "root" | "nobody", args: string[] = []): { stdout: string; exitCode: number } {
  const prefix = as === "nobody" ? ["setpriv", `--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups"] : [];
  const p = Bun.spawnSync([...prefix, PYTHON, "-c", code, ...args], { cwd: "/", stdout: "pipe", stderr: "pipe" });
  return { stdout: p.stdout.toString() + p.stderr.toString(), exitCode: p.exitCode ?? -1 };
}

/** Everything below `dir`, as paths relative to it. */
function tree(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, rel: string) => {
    for (const n of readdirSync(d).sort()) {
      const r = rel ? `${rel}/${n}` : n;
      out.push(r);
      if (lstatSync(join(d, n)).isDirectory()) walk(join(d, n), r);
    }
  };
  walk(dir, "");
  return out;
}

const mode = (p: string) => lstatSync(p).mode & 0o7777;

/** A directory `uid` owns, with `bits`. */
function dirOf(path: string, uid: number, bits: number): string {
  mkdirSync(path, { recursive: true });
  chownSync(path, uid, uid);
  chmodSync(path, bits);
  return path;
}

// The prose a refused directory gets (golden).
const foreign = (dir: string, owner: string, me: string, modeText: string) =>
  `kt cannot use its state directory ${dir}: it belongs to ${owner}, not to you (${me}), with mode ${modeText}. Whoever owns it could read what kt keeps there and plant what kt would trust, so kt does not use it, and never changes a directory it does not own. Set KT_STATE_DIR (or --state-dir) to a directory of your own (kt creates a missing one, private), or remove ${dir} if it should not be there.`;
const writable = (dir: string, which: string, me: string, modeText: string, who: string) =>
  `kt cannot use its state directory ${dir}: ${which} belongs to you (${me}) but its mode is ${modeText}: ${who} can write in it, and so plant what kt would trust. Make it private with chmod 700 ${which === "it" ? dir : which.replace(/ in it$/, "")} (or remove it: kt creates it again, private), or set KT_STATE_DIR (or --state-dir) to a private directory of your own.`;

describe.if(CAN_RUN_AS_NOBODY)("a state directory someone else prepared is refused", () => {
  for (const umask of UMASKS) {
    test(`umask ${umask}: nobody's directory, used by root — every tool that needs state refuses with the prose, read works unrecorded, nothing is created in it`, () => {
      const tmp = scratch();
      writeFileSync(join(tmp, "f.txt"), "x\n");
      const state = dirOf(join(tmp, "x"), NOBODY, 0o700);
      const prose = foreign(state, "nobody (uid 65534)", "root, uid 0", "0700 (drwx------)");
      const o = { cwd: tmp, stateDir: state, umask };
      for (const args of [["bash", "echo hi"], ["write", "g.txt", "--content", "y"], ["ps", "start", "sleep 5"], ["ps", "list"], ["session", "end"], ["undo", "--last"], ["session", "end", "--all"], ["ps", "list", "--orphans"]]) {
        const r = runKt(args, o);
        expect({ args, exitCode: r.exitCode, stdout: r.stdout }).toEqual({ args, exitCode: 3, stdout: "" });
        expect(r.stderr).toBe(`kt ${args[0]}: ${prose}\n`);
      }
      const read = runKt(["read", "f.txt"], o);
      expect(read.exitCode).toBe(0);
      expect(read.stdout).toBe(`${tmp}/f.txt\n     1→x\n`);
      // Said once (issue 28: it used to repeat its whole text twice).
      expect(read.stderr).toBe(`\n WARN  the read was not recorded (a later write or edit will ask for a new read). ${prose}\n\n`);
      // Through kt call: an error result the model can read, PERMISSION_DENIED.
      const call = runKt(["call", "--jsonl"], { ...o, stdin: `${JSON.stringify({ tool: "bash", input: { command: "echo hi" } })}\n` });
      expect(call.exitCode).toBe(0);
      const result = JSON.parse(call.stdout);
      expect(result.isError).toBe(true);
      expect(result.error.code).toBe("PERMISSION_DENIED");
      expect(result.content).toBe(`The tool "bash" could not run: ${prose} This is a problem of the machine kt runs on, not of your input; tell the user.`);
      expect(readdirSync(state)).toEqual([]);
      expect(existsSync(join(tmp, "g.txt"))).toBe(false);
      expect(statSync(state)).toMatchObject({ uid: NOBODY, mode: 0o40700 });
    });
  }

  test("the reverse: root's directory, used by nobody, is refused the same way", () => {
    const tmp = scratch();
    const state = dirOf(join(tmp, "r"), 0, 0o755);
    const r = runKt(["bash", "echo hi"], { cwd: tmp, stateDir: state, as: "nobody" });
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toBe(`kt bash: ${foreign(state, "root (uid 0)", "nobody, uid 65534", "0755 (drwxr-xr-x)")}\n`);
    expect(readdirSync(state)).toEqual([]);
  });

  test("a symbolic link owned by someone else is not followed to a directory of one's own", () => {
    const tmp = scratch();
    const mine = dirOf(join(tmp, "mine"), 0, 0o700);
    const link = join(tmp, "link");
    symlinkSync(mine, link);
    const l = Bun.spawnSync(["chown", "-h", `${NOBODY}:${NOBODY}`, link]);
    expect(l.exitCode).toBe(0);
    const r = runKt(["bash", "echo hi"], { cwd: tmp, stateDir: link });
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toBe(
      `kt bash: kt cannot use its state directory ${link}: it is a symbolic link owned by nobody (uid 65534), who can point it elsewhere at any time. Set KT_STATE_DIR (or --state-dir) to the directory itself, or to a directory of your own.\n`,
    );
    expect(readdirSync(mine)).toEqual([]);
  });
});

describe("a state directory others can write is refused", () => {
  for (const umask of UMASKS) {
    for (const [bits, text, who] of [
      [0o777, "0777 (drwxrwxrwx)", "its group and everyone else"],
      [0o770, "0770 (drwxrwx---)", "its group"],
      [0o1777, "1777 (drwxrwxrwt)", "its group and everyone else"],
      [0o703, "0703 (drwx----wx)", "everyone"],
    ] as const) {
      test(`umask ${umask}: one's own directory with mode ${text.slice(0, 4)} — refused with the prose, never chmod'ed, nothing created`, () => {
        const tmp = scratch();
        const state = dirOf(join(tmp, "w"), 0, bits);
        const r = runKt(["bash", "echo hi"], { cwd: tmp, stateDir: state, umask });
        expect(r.exitCode).toBe(3);
        expect(r.stderr).toBe(`kt bash: ${writable(state, "it", "root, uid 0", text, who)}\n`);
        expect(readdirSync(state)).toEqual([]);
        expect(mode(state)).toBe(bits);
      });
    }
  }

  test.if(CAN_RUN_AS_NOBODY)("the reverse: nobody's own world-writable directory is refused to nobody", () => {
    const tmp = scratch();
    const state = dirOf(join(tmp, "nw"), NOBODY, 0o777);
    const r = runKt(["bash", "echo hi"], { cwd: tmp, stateDir: state, as: "nobody" });
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toBe(`kt bash: ${writable(state, "it", "nobody, uid 65534", "0777 (drwxrwxrwx)", "its group and everyone else")}\n`);
    expect(readdirSync(state)).toEqual([]);
  });

  test("a directory kt uses inside it that others can write, or that is a symbolic link, is refused by name", () => {
    const tmp = scratch();
    const state = join(tmp, "s");
    expect(runKt(["bash", "echo hi"], { cwd: tmp, stateDir: state }).exitCode).toBe(0);
    const session = join(state, "sessions", "default");
    chmodSync(session, 0o777);
    const r = runKt(["bash", "echo hi"], { cwd: tmp, stateDir: state });
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toBe(`kt bash: ${writable(state, `${session} in it`, "root, uid 0", "0777 (drwxrwxrwx)", "its group and everyone else")}\n`);
    // A link in place of the spill folder: never followed, the target untouched.
    chmodSync(session, 0o700);
    const elsewhere = dirOf(join(tmp, "elsewhere"), 0, 0o700);
    rmSync(join(session, "spill"), { recursive: true, force: true });
    symlinkSync(elsewhere, join(session, "spill"));
    // The output is cut without a spill file, and says why; nothing lands in the link's target.
    const big = runKt(["bash", "seq 1 100000"], { cwd: tmp, stateDir: state });
    expect(big.exitCode).toBe(0);
    expect(big.stderr).toContain(
      `kt cannot use its state directory ${state}: ${session}/spill in it is a symbolic link, not a directory kt made, and kt never follows one there. Remove ${session}/spill (kt creates the directory again), or set KT_STATE_DIR (or --state-dir) to another directory.`,
    );
    expect(readdirSync(elsewhere)).toEqual([]);
  });

  test("a parent everyone can write without the sticky bit is refused before anything is made in it", () => {
    const tmp = scratch();
    const open = dirOf(join(tmp, "open"), 0, 0o777);
    const state = join(open, "kt");
    const r = runKt(["bash", "echo hi"], { cwd: tmp, stateDir: state });
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toBe(
      `kt bash: kt cannot use its state directory ${state}: the directory ${open} above it has mode 0777 (drwxrwxrwx): everyone can write in it and it lacks the sticky bit /tmp has, so anyone could move the state directory aside and put their own in its place. Set KT_STATE_DIR (or --state-dir) to a directory whose parents only you (or root) can write, such as one under your home directory or directly in /tmp.\n`,
    );
    expect(readdirSync(open)).toEqual([]);
  });

  test("issue 28: a state directory that is a file is named in prose, not EEXIST … mkdir", () => {
    const tmp = scratch();
    writeFileSync(join(tmp, "f.txt"), "x\n");
    const state = join(tmp, "file");
    writeFileSync(state, "");
    const r = runKt(["write", "g.txt", "--content", "y"], { cwd: tmp, stateDir: state });
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toBe(`kt write: kt cannot use its state directory ${state}: it is a file, not a directory. Move that file out of the way (kt then creates the directory), or set KT_STATE_DIR (or --state-dir) to a directory.\n`);
    expect(r.stderr).not.toContain("EEXIST");
  });

  test("issue 28: the unusable-state-directory warning says its text once", () => {
    const tmp = scratch();
    writeFileSync(join(tmp, "f.txt"), "x\n");
    writeFileSync(join(tmp, "not-a-dir"), "");
    const state = join(tmp, "not-a-dir", "state");
    const read = runKt(["read", "f.txt"], { cwd: tmp, stateDir: state });
    expect(read.exitCode).toBe(0);
    expect(read.stdout).toBe(`${tmp}/f.txt\n     1→x\n`);
    expect(read.stderr).toBe(
      `\n WARN  the read was not recorded (a later write or edit will ask for a new read). kt cannot use its state directory ${state}: a file stands where a directory above it should be. Move that file out of the way, or set KT_STATE_DIR (or --state-dir) to another directory.\n\n`,
    );
    expect(read.stderr.split("kt cannot use its state directory").length).toBe(2);
  });

  test("session end and the size cap never remove anything through a link in place of sessions/", () => {
    const tmp = scratch();
    const state = join(tmp, "s");
    expect(runKt(["bash", "seq 1 100000"], { cwd: tmp, stateDir: state }).exitCode).toBe(0);
    // Elsewhere: a tree shaped like a session's, which must survive.
    const elsewhere = join(dirOf(join(tmp, "elsewhere"), 0, 0o700), "default", "spill");
    mkdirSync(elsewhere, { recursive: true });
    writeFileSync(join(elsewhere, "keep.txt"), "keep\n");
    rmSync(join(state, "sessions"), { recursive: true, force: true });
    symlinkSync(join(tmp, "elsewhere"), join(state, "sessions"));
    const ended = runKt(["session", "end"], { cwd: tmp, stateDir: state });
    expect(ended.exitCode).toBe(3);
    expect(ended.stderr).toBe(
      `kt session: kt cannot use its state directory ${state}: ${state}/sessions in it is a symbolic link, not a directory kt made, and kt never follows one there. Remove ${state}/sessions (kt creates the directory again), or set KT_STATE_DIR (or --state-dir) to another directory.\n`,
    );
    expect(readFileSync(join(elsewhere, "keep.txt"), "utf8")).toBe("keep\n");
  });

  test("a state file that is not one's own (a log another user made) is neither written nor trusted", () => {
    const tmp = scratch();
    const state = join(tmp, "s");
    writeFileSync(join(tmp, "f.txt"), "a\n");
    expect(runKt(["read", "f.txt"], { cwd: tmp, stateDir: state }).exitCode).toBe(0);
    const proc = join(state, "sessions", "default", "proc");
    mkdirSync(proc, { recursive: true, mode: 0o700 });
    writeFileSync(join(proc, "p1.log"), "planted\n", { mode: 0o644 });
    chownSync(join(proc, "p1.log"), NOBODY, NOBODY);
    const r = runKt(["ps", "start", "echo mine"], { cwd: tmp, stateDir: state });
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe(
      `Command failed to start: kt could not launch its process supervisor (${proc}/p1.log in kt's state directory is owned by nobody (uid 65534), not by you, which kt never follows or trusts there; remove it and retry). Nothing was run. Check that the state directory ${state} is writable and retry.\n`,
    );
    // Refused before a byte was written; the failed start's cleanup may remove the entry's log.
    if (existsSync(join(proc, "p1.log"))) expect(readFileSync(join(proc, "p1.log"), "utf8")).toBe("planted\n");
    expect(rows(state)).toEqual([]);
  });
});

describe("what kt creates is private whatever the umask", () => {
  for (const umask of UMASKS) {
    test(`umask ${umask}: directories 0700, files 0600, host.sock 0600`, async () => {
      const tmp = scratch();
      const state = join(tmp, "s");
      const o = { cwd: tmp, stateDir: state, umask };
      writeFileSync(join(tmp, "f.txt"), "a\n");
      expect(runKt(["bash", "seq 1 100000"], o).exitCode).toBe(0); // a spill file
      expect(runKt(["ps", "start", "echo up; sleep 30"], o).exitCode).toBe(0); // log, FIFO, host socket
      expect(runKt(["ps", "start", "echo t; sleep 30", "--tty"], o).exitCode).toBe(0); // terminal files
      expect(runKt(["read", "f.txt"], o).exitCode).toBe(0);
      expect(runKt(["edit", "f.txt", "--old-string", "a", "--new-string", "b"], o).exitCode).toBe(0); // a kept version
      await until("the host socket", () => existsSync(join(state, "sessions", "default", "host.sock")));
      const seen = tree(state);
      expect(seen).toEqual(expect.arrayContaining(["index.db", "sessions/default/host.sock", "sessions/default/proc/p1.log", "sessions/default/proc/p1.in", "sessions/default/spill", "sessions/default/history"]));
      expect(mode(state)).toBe(0o700);
      for (const rel of seen) {
        const st = lstatSync(join(state, rel));
        expect({ rel, uid: st.uid }).toEqual({ rel, uid: 0 });
        expect({ rel, mode: st.mode & 0o7777 }).toEqual({ rel, mode: st.isDirectory() ? 0o700 : 0o600 });
      }
    });
  }
});

describe("planted links in the state directory are never followed", () => {
  /** A root-only file holding something that must stay as it is. */
  function victim(tmp: string): { path: string; check(): void } {
    const path = join(dirOf(join(tmp, "root-only"), 0, 0o700), "secret.txt");
    writeFileSync(path, "precious\n", { mode: 0o600 });
    return { path, check: () => expect(readFileSync(path, "utf8")).toBe("precious\n") };
  }

  test("a dangling index.db link: every call works, the warning is true and said once", () => {
    const tmp = scratch();
    const state = dirOf(join(tmp, "s"), 0, 0o700);
    writeFileSync(join(tmp, "f.txt"), "a\n");
    symlinkSync(join(tmp, "nowhere"), join(state, "index.db"));
    // The first call that opens the index (a read's stamp goes to the log of reads, and does not).
    const first = runKt(["write", "g.txt", "--content", "g\n"], { cwd: tmp, stateDir: state });
    expect(first.exitCode).toBe(0);
    const aside = readdirSync(state).find((n) => n.startsWith("index.db.corrupt-"))!;
    expect(first.stderr).toBe(
      `\n WARN  kt: the state index at ${state}/index.db was unreadable (it is not a regular file (a symbolic link or a device)); started a fresh one and kept the old file as ${state}/${aside}. Files must be read again before they are edited.\n\n`,
    );
    // True: the link is where the warning says, and index.db is a file of kt's now.
    expect(lstatSync(join(state, aside)).isSymbolicLink()).toBe(true);
    expect(lstatSync(join(state, "index.db")).isFile()).toBe(true);
    for (const args of [["read", "f.txt"], ["edit", "f.txt", "--old-string", "a", "--new-string", "b"], ["bash", "echo ok"], ["undo", "--last"]]) {
      const r = runKt(args, { cwd: tmp, stateDir: state });
      expect({ args, exitCode: r.exitCode, stderr: r.stderr }).toEqual({ args, exitCode: 0, stderr: "" });
    }
    expect(existsSync(join(tmp, "nowhere"))).toBe(false);
  });

  for (const umask of UMASKS) {
    test(`umask ${umask}: links at the index, its -wal and -shm, the marker, the cap stamp, a log, a spill file and a kept version leave their targets as they were`, () => {
      const tmp = scratch();
      const v = victim(tmp);
      const state = join(tmp, "s");
      const o = { cwd: tmp, stateDir: state, umask };
      writeFileSync(join(tmp, "f.txt"), "a\n");
      // Index, WAL, SHM: set aside, the target untouched.
      for (const name of ["index.db", "index.db-wal", "index.db-shm"]) {
        rmSync(state, { recursive: true, force: true });
        mkdirSync(state, { mode: 0o700 });
        symlinkSync(v.path, join(state, name));
        // The first call that opens the index: a write of a new file (a read's stamp goes to the log of reads).
        const r = runKt(["write", `new-${name}.txt`, "--content", "n\n"], o);
        expect({ name, exitCode: r.exitCode }).toEqual({ name, exitCode: 0 });
        expect(r.stderr).toContain(`kt: the state index at ${state}/index.db was unreadable`);
        v.check();
        expect(runKt(["read", "f.txt"], o)).toMatchObject({ exitCode: 0, stderr: "" });
        expect(runKt(["edit", "f.txt", "--old-string", "a", "--new-string", "b"], o)).toMatchObject({ exitCode: 0, stderr: "" });
        writeFileSync(join(tmp, "f.txt"), "a\n");
      }
      // The log of reads: a link there is never written through; the read works, unrecorded, and says so.
      rmSync(state, { recursive: true, force: true });
      mkdirSync(state, { mode: 0o700 });
      symlinkSync(v.path, join(state, "stamps.log"));
      const unrecorded = runKt(["read", "f.txt"], o);
      expect(unrecorded).toMatchObject({ exitCode: 0, stdout: `${tmp}/f.txt\n     1→a\n` });
      expect(unrecorded.stderr).toBe(
        `\n WARN  the read was not recorded (a later write or edit will ask for a new read). kt cannot use its state directory ${state}: ${state}/stamps.log in kt's state directory is a symbolic link, which kt never follows or trusts there; remove it and retry. Set KT_STATE_DIR (or --state-dir) to a writable directory.\n\n`,
      );
      v.check();
      expect(runKt(["edit", "f.txt", "--old-string", "a", "--new-string", "b"], o).exitCode).toBe(1);
      v.check();
      // One set aside: never opened through a link, and what asks for stamps still works.
      rmSync(state, { recursive: true, force: true });
      mkdirSync(state, { mode: 0o700 });
      symlinkSync(v.path, join(state, "stamps.log.old"));
      expect(runKt(["read", "f.txt"], o)).toMatchObject({ exitCode: 0, stderr: "" });
      expect(runKt(["edit", "f.txt", "--old-string", "a", "--new-string", "b"], o)).toMatchObject({ exitCode: 0, stderr: "" });
      writeFileSync(join(tmp, "f.txt"), "a\n");
      v.check();
      // The marker beside a new index, and the cap stamp a supervisor touches.
      rmSync(state, { recursive: true, force: true });
      mkdirSync(state, { mode: 0o700 });
      symlinkSync(v.path, join(state, "index.made"));
      symlinkSync(v.path, join(state, "cap-checked"));
      expect(runKt(["bash", "echo ok"], { ...o, env: { KT_NO_HOST: "1" } }).exitCode).toBe(0);
      v.check();
      // A log: the command is not started, and says why.
      const proc = join(state, "sessions", "default", "proc");
      mkdirSync(proc, { recursive: true, mode: 0o700 });
      symlinkSync(v.path, join(proc, "p1.log"));
      const started = runKt(["ps", "start", "echo planted"], o);
      expect(started.exitCode).toBe(1);
      expect(started.stdout).toBe(
        `Command failed to start: kt could not launch its process supervisor (${proc}/p1.log in kt's state directory is a symbolic link, which kt never follows or trusts there; remove it and retry). Nothing was run. Check that the state directory ${state} is writable and retry.\n`,
      );
      v.check();
      // A spill file: the full output is not saved there (and says so); the target untouched.
      const spill = join(state, "sessions", "default", "spill");
      mkdirSync(spill, { recursive: true, mode: 0o700 });
      symlinkSync(v.path, join(spill, "bash-planted.txt"));
      const big = runKt(["bash", "seq 1 100000", "--call-id", "planted"], o);
      expect(big.exitCode).toBe(0);
      expect(big.stderr).toContain("could not save the full output to the state directory");
      v.check();
      // A kept version: the link is replaced by the bytes kt keeps, and undo restores them.
      writeFileSync(join(tmp, "g.txt"), "old\n");
      expect(runKt(["read", "g.txt"], o).exitCode).toBe(0);
      const history = join(state, "sessions", "default", "history");
      mkdirSync(history, { recursive: true, mode: 0o700 });
      const sha = new Bun.CryptoHasher("sha256").update("old\n").digest("hex");
      symlinkSync(v.path, join(history, sha));
      expect(runKt(["write", "g.txt", "--content", "new\n"], o).exitCode).toBe(0);
      v.check();
      expect(lstatSync(join(history, sha)).isFile()).toBe(true);
      expect(runKt(["undo", "--last"], o).exitCode).toBe(0);
      expect(readFileSync(join(tmp, "g.txt"), "utf8")).toBe("old\n");
      v.check();
    });
  }
});

/** A Unix-socket listener run by python3 that records what it is sent; returns its pid. */
function plantListener(socket: string, record: string, as: "root" | "nobody"): number {
  const code = `
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o666); s.listen(8)
open(sys.argv[2], "ab").close()
s.settimeout(20)
try:
    while True:
        c, _ = s.accept(); c.settimeout(2)
        try:
            data = c.recv(1 << 20)
        except Exception:
            data = b""
        with open(sys.argv[2], "ab") as f: f.write(data)
        c.close()
except Exception:
    pass
`;
  const prefix = as === "nobody" ? ["setpriv", `--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups"] : [];
  const p = Bun.spawn([...prefix, PYTHON, "-c", code, socket, record], { stdout: "ignore", stderr: "ignore" });
  pids.push(p.pid);
  return p.pid;
}

describe.if(process.platform === "linux" && CAN_RUN_AS_NOBODY)("the host socket serves this user's kt only", () => {
  for (const umask of UMASKS) {
    test(`umask ${umask}: a listener nobody planted at host.sock in a directory nobody prepared receives nothing (the caller's secret stays home)`, async () => {
      const tmp = scratch();
      const state = dirOf(join(tmp, "x"), NOBODY, 0o777);
      const session = dirOf(join(state, "sessions", "default"), NOBODY, 0o777);
      chownSync(join(state, "sessions"), NOBODY, NOBODY);
      chmodSync(join(state, "sessions"), 0o777);
      const got = join(tmp, "got");
      writeFileSync(got, "");
      chmodSync(got, 0o666);
      plantListener(join(session, "host.sock"), got, "nobody");
      await until("the planted listener", () => existsSync(join(session, "host.sock")));
      const r = runKt(["bash", "echo $SECRET_TOKEN"], { cwd: tmp, stateDir: state, umask, env: { SECRET_TOKEN: "tok-5ecret" } });
      expect(r.exitCode).toBe(3);
      expect(r.stderr).toStartWith(`kt bash: kt cannot use its state directory ${state}: it belongs to nobody (uid 65534)`);
      await Bun.sleep(300);
      expect(readFileSync(got, "utf8")).toBe("");
    });

    test(`umask ${umask}: in one's own directory, a listener at host.sock that is not one's own 0600 socket receives nothing; the command runs on kt's own host`, async () => {
      const tmp = scratch();
      const state = join(tmp, "s");
      const o = { cwd: tmp, stateDir: state, umask };
      writeFileSync(join(tmp, "f.txt"), "a\n");
      expect(runKt(["read", "f.txt"], o).exitCode).toBe(0);
      const session = join(state, "sessions", "default");
      for (const as of ["root", "nobody"] as const) {
        mkdirSync(session, { recursive: true, mode: 0o700 });
        const got = join(tmp, `got-${as}`);
        writeFileSync(got, "");
        chmodSync(got, 0o666);
        // Bound elsewhere (nobody cannot reach the private folder), then moved in: a socket of
        // root's with mode 0666, and one nobody owns.
        const dir = dirOf(join(tmp, `bind-${as}`), as === "root" ? 0 : NOBODY, 0o755);
        const pid = plantListener(join(dir, "l.sock"), got, as);
        await until("the planted listener", () => existsSync(join(dir, "l.sock")));
        renameSync(join(dir, "l.sock"), join(session, "host.sock"));
        const r = runKt(["bash", "echo $SECRET_TOKEN"], { ...o, env: { SECRET_TOKEN: "tok-5ecret" } });
        expect({ as, exitCode: r.exitCode }).toEqual({ as, exitCode: 0 });
        expect(r.stdout).toStartWith("$ echo $SECRET_TOKEN\ntok-5ecret\n");
        await Bun.sleep(300);
        expect({ as, got: readFileSync(got, "utf8") }).toEqual({ as, got: "" });
        // kt's own host took the path over: its socket, 0600.
        const st = await until("kt's host", () => lstatSync(join(session, "host.sock"), { throwIfNoEntry: false }));
        expect({ socket: st.isSocket(), uid: st.uid, mode: st.mode & 0o777 }).toEqual({ socket: true, uid: 0, mode: 0o600 });
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // Ended already.
        }
        runKt(["session", "end"], o);
      }
    });
  }

  test("a host ending after its session was ended and begun again leaves the new host's socket in place (Bun's stop() unlinks by path)", async () => {
    const tmp = scratch();
    const state = join(tmp, "s");
    const o = { cwd: tmp, stateDir: state };
    const sock = join(state, "sessions", "default", "host.sock");
    for (let round = 0; round < 3; round++) {
      expect(runKt(["bash", "echo one"], o).exitCode).toBe(0);
      expect(runKt(["session", "end"], o).exitCode).toBe(0);
      // At once, while the old host has yet to notice its session is gone (it looks each second).
      expect(runKt(["bash", "echo two"], o).exitCode).toBe(0);
      await Bun.sleep(1500);
      expect({ round, socket: lstatSync(sock, { throwIfNoEntry: false })?.isSocket() ?? false }).toEqual({ round, socket: true });
    }
  });

  /** A forged request to a host socket, sent by python3 as `as`: what the host answered (empty: nothing). */
  function forge(socket: string, request: object, as: "root" | "nobody"): string {
    const code = `
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(3)
s.connect(sys.argv[1])
try:
    s.sendall(sys.argv[2].encode() + b"\\n")
except Exception as e:
    print("send failed:", type(e).__name__)
try:
    print("answer:", repr(s.recv(100)))
except Exception as e:
    print("answer failed:", type(e).__name__)
`;
    return python(code, as, [socket, JSON.stringify(request)]).stdout;
  }

  test("a peer of another uid is dropped before the host reads a byte: nobody at root's host, root at nobody's", async () => {
    const tmp = scratch();
    const state = join(tmp, "s");
    const o = { cwd: tmp, stateDir: state };
    expect(runKt(["ps", "start", "echo up; sleep 30"], o).exitCode).toBe(0);
    const sock = join(state, "sessions", "default", "host.sock");
    await until("root's host", () => existsSync(sock));
    // Opened up only for this test, so that the peer check alone stands in the way.
    for (const d of [state, join(state, "sessions"), join(state, "sessions", "default")]) chmodSync(d, 0o711);
    chmodSync(sock, 0o666);
    const pwned = join(tmp, "pwned");
    const key = rows(state)[0]!.key;
    const request = { run: { stateDir: state, key, command: `touch ${pwned}`, cwd: tmp, log: join(tmp, "l.log") }, secret: "0".repeat(64) };
    const answer = forge(sock, request, "nobody");
    expect(answer).toMatch(/answer: b''|answer failed: ConnectionResetError/);
    await Bun.sleep(500);
    expect(existsSync(pwned)).toBe(false);
    // The host serves root's own kt as before.
    expect(runKt(["bash", "echo still"], o).stdout).toStartWith("$ echo still\nstill\n");

    // The reverse: nobody's host, root's forged request.
    const nstate = dirOf(join(tmp, "n"), NOBODY, 0o700);
    const nwork = dirOf(join(tmp, "nwork"), NOBODY, 0o755);
    expect(runKt(["ps", "start", "echo up; sleep 30"], { cwd: nwork, stateDir: nstate, as: "nobody" }).exitCode).toBe(0);
    const nsock = join(nstate, "sessions", "default", "host.sock");
    await until("nobody's host", () => existsSync(nsock));
    const npwned = join(nwork, "pwned");
    const nkey = rows(nstate)[0]!.key;
    const rootAnswer = forge(nsock, { run: { stateDir: nstate, key: nkey, command: `touch ${npwned}`, cwd: nwork, log: join(nwork, "l.log") }, secret: "0".repeat(64) }, "root");
    expect(rootAnswer).toMatch(/answer: b''|answer failed: ConnectionResetError/);
    await Bun.sleep(500);
    expect(existsSync(npwned)).toBe(false);
    runKt(["session", "end"], { cwd: nwork, stateDir: nstate, as: "nobody" });
  });

  test("a request of this user's without its row's secret is never run; with it, the row's command runs, not the request's", async () => {
    const tmp = scratch();
    const state = join(tmp, "s");
    const o = { cwd: tmp, stateDir: state };
    expect(runKt(["ps", "start", "echo up; sleep 30"], o).exitCode).toBe(0);
    const sock = join(state, "sessions", "default", "host.sock");
    await until("the host", () => existsSync(sock));
    const pwned = join(tmp, "pwned");
    const key = rows(state)[0]!.key;
    // A row's key with a guessed secret: dropped unanswered.
    expect(forge(sock, { run: { stateDir: state, key, command: `touch ${pwned}`, cwd: tmp, log: join(tmp, "l.log") }, secret: "f".repeat(64) }, "root")).toMatch(/answer: b''/);
    // A row of its own, recorded as kt records one, with its secret: the host runs the row's command.
    const log = join(state, "sessions", "default", "proc", "forged.log");
    writeFileSync(log, "", { mode: 0o600 });
    const db = new Database(join(state, "index.db"));
    db.exec("PRAGMA busy_timeout = 5000");
    const made = db
      .query("INSERT INTO processes (session, id, seq, origin, command, cwd, log_path, stdin_path, status, started_at) VALUES ('default', NULL, NULL, 'bash', 'echo from-the-row', ?, ?, NULL, 'starting', ?)")
      .run(tmp, log, Date.now());
    const rowKey = Number(made.lastInsertRowid);
    db.query("INSERT INTO host_secrets (key, secret, at) VALUES (?, ?, ?)").run(rowKey, "a".repeat(64), Date.now());
    db.close();
    const asked = { run: { stateDir: state, key: rowKey, command: `touch ${pwned}`, cwd: tmp, log: join(tmp, "other.log") }, secret: "a".repeat(64) };
    expect(forge(sock, asked, "root")).toContain("answer: b'ok\\n");
    await until("the row's command", () => readFileSync(log, "utf8") === "from-the-row\n");
    expect(existsSync(pwned)).toBe(false);
    expect(existsSync(join(tmp, "other.log"))).toBe(false);
    // Used up: the same request again is not run.
    expect(forge(sock, asked, "root")).toMatch(/answer: b''/);
  });
});

describe.if(process.platform === "linux")("rows are trusted only as this user's kt wrote them", () => {
  /** A process of the test's own (or nobody's) that no kt started. */
  function bystander(as: "root" | "nobody"): { pid: number; start: string } {
    const prefix = as === "nobody" ? ["setpriv", `--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups"] : [];
    const p = Bun.spawn([...prefix, "sleep", "300"], { stdout: "ignore", stderr: "ignore" });
    pids.push(p.pid);
    const boot = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    let stat = "";
    for (let i = 0; i < 100 && !stat.includes("sleep"); i++) {
      Bun.sleepSync(10);
      stat = readFileSync(`/proc/${p.pid}/stat`, "utf8");
    }
    const start = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]!;
    return { pid: p.pid, start: `${boot}:${start}` };
  }
  const alive = (pid: number) => {
    try {
      return !/^\S+ \S+ [ZX]/.test(readFileSync(`/proc/${pid}/stat`, "utf8").slice(readFileSync(`/proc/${pid}/stat`, "utf8").lastIndexOf(")") - 1));
    } catch {
      return false;
    }
  };

  for (const as of CAN_RUN_AS_NOBODY ? (["root", "nobody"] as const) : (["root"] as const)) {
    test(`a process row edited to name a ${as} process kt did not start (its right start time too): ps stop, ps write's end of input and session end never signal it`, async () => {
      const tmp = scratch();
      const state = join(tmp, "s");
      const o = { cwd: tmp, stateDir: state };
      expect(runKt(["ps", "start", "echo up; exec sleep 60"], o).exitCode).toBe(0);
      await until("p1 running", () => rows(state)[0]?.pid !== null && rows(state)[0]?.pid !== undefined);
      const real = rows(state)[0]!;
      const victim = bystander(as);
      const db = new Database(join(state, "index.db"));
      db.exec("PRAGMA busy_timeout = 5000");
      db.query("UPDATE processes SET pid = ?, pid_start = ?, supervisor_pid = ?, supervisor_start = ? WHERE key = ?").run(victim.pid, victim.start, victim.pid, victim.start, real.key);
      db.close();
      runKt(["ps", "write", "p1", "--input", "\u0004"], o);
      await Bun.sleep(200);
      expect(alive(victim.pid)).toBe(true);
      runKt(["ps", "stop", "p1"], o);
      expect(alive(victim.pid)).toBe(true);
      const ended = runKt(["session", "end"], o);
      expect(ended.exitCode).toBe(0);
      expect(alive(victim.pid)).toBe(true);
      // What kt did start still carries its marker: it was stopped all the same.
      await until("kt's own sleep to be stopped", () => !alive(real.pid!), 10_000);
    }, 30_000);
  }

  test.if(CAN_RUN_AS_NOBODY)("an index someone else swapped in (a forged history row) is never restored from: the directory is refused first", () => {
    const tmp = scratch();
    const state = dirOf(join(tmp, "shared"), 0, 0o700);
    const o = { cwd: tmp, stateDir: state };
    const victim = join(dirOf(join(tmp, "root-only"), 0, 0o700), "secret.txt");
    writeFileSync(victim, "precious\n", { mode: 0o600 });
    writeFileSync(join(tmp, "f.txt"), "a\n");
    expect(runKt(["read", "f.txt"], o).exitCode).toBe(0);
    expect(runKt(["edit", "f.txt", "--old-string", "a", "--new-string", "b"], o).exitCode).toBe(0);
    // The directory is opened to everyone (by mistake, or on a machine that made it so), and
    // nobody swaps in an index whose history row points undo at the root-only file.
    chmodSync(state, 0o777);
    const forged = join(dirOf(join(tmp, "nobodys"), NOBODY, 0o755), "forged.db");
    Bun.spawnSync(["cp", join(state, "index.db"), forged]);
    const db = new Database(forged);
    db.query("UPDATE history SET path = ?, display = ?").run(victim, victim);
    db.close();
    chownSync(forged, NOBODY, NOBODY);
    const moved = python(`import os, sys; os.rename(sys.argv[1], sys.argv[2])`, "nobody", [forged, join(state, "index.db")]);
    expect(moved.exitCode).toBe(0);
    const r = runKt(["undo", "--last"], o);
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toStartWith(`kt undo: kt cannot use its state directory ${state}: it belongs to you (root, uid 0) but its mode is 0777 (drwxrwxrwx)`);
    expect(readFileSync(victim, "utf8")).toBe("precious\n");
    expect(readFileSync(join(tmp, "f.txt"), "utf8")).toBe("b\n");
  });
});

describe.if(process.platform === "linux" && CAN_RUN_AS_NOBODY)("no secret of the caller's environment reaches a file another user can read", () => {
  for (const umask of UMASKS) {
    test(`umask ${umask}: bash on the host, a supervisor of its own, ps and a spill — nobody finds the token anywhere under the state directory, nor on a kt command line`, async () => {
      const tmp = scratch();
      const state = join(tmp, "s");
      const token = `tok-${Math.random().toString(36).slice(2)}`;
      const o = { cwd: tmp, stateDir: state, umask, env: { SECRET_TOKEN: token } };
      expect(runKt(["bash", "env; seq 1 100000"], o).exitCode).toBe(0);
      expect(runKt(["bash", "env"], { ...o, env: { ...o.env, KT_NO_HOST: "1" } }).exitCode).toBe(0);
      expect(runKt(["ps", "start", "env; sleep 30"], o).exitCode).toBe(0);
      await Bun.sleep(300);
      // The token is there, for this user only.
      expect(Bun.spawnSync(["grep", "-rl", token, state]).stdout.toString()).not.toBe("");
      const asNobody = Bun.spawnSync(["setpriv", `--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", "grep", "-rl", "--no-messages", token, tmp]);
      expect(asNobody.stdout.toString()).toBe("");
      // Command lines are world-readable: the token is in none of kt's hosts or supervisors.
      for (const name of readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
        let cmdline = "";
        try {
          cmdline = readFileSync(`/proc/${name}/cmdline`, "utf8");
        } catch {
          continue;
        }
        if (cmdline.includes(state)) expect(cmdline).not.toContain(token);
      }
    });
  }
});

describe.if(process.platform === "linux")("orphans are this state directory's only, and this user's", () => {
  test("two state directories: ps list --orphans and session end --all each see and stop only their own", async () => {
    const tmp = scratch();
    const a = join(tmp, "a");
    const b = join(tmp, "b");
    const supervisors: Record<string, { key: number; pid: number; sup: number }> = {};
    for (const [name, state] of [["a", a], ["b", b]] as const) {
      expect(runKt(["ps", "start", `echo up; exec sleep 9${name === "a" ? 1 : 2}`], { cwd: tmp, stateDir: state, env: { KT_NO_HOST: "1" } }).exitCode).toBe(0);
      await until(`${name} running`, () => (rows(state)[0]?.pid ?? null) !== null && (rows(state)[0] as unknown as { supervisor_pid: number | null } | undefined)?.supervisor_pid != null);
      const r = rows(state)[0]! as unknown as { key: number; pid: number; supervisor_pid: number };
      supervisors[name] = { key: r.key, pid: r.pid, sup: r.supervisor_pid };
      pids.push(r.pid);
      process.kill(r.supervisor_pid, "SIGKILL");
    }
    await Bun.sleep(300);
    const listA = runKt(["ps", "list", "--orphans"], { cwd: tmp, stateDir: a });
    expect(listA.stdout).toBe(`ORPHANS\n"echo up; exec sleep 91" · its supervisor is gone (${a}, entry ${supervisors.a!.key}) · pid ${supervisors.a!.pid} (sleep)\nStop them with: kt session end --all\n`);
    const listB = runKt(["ps", "list", "--orphans", "--state-dir", b], { cwd: tmp, stateDir: a });
    expect(listB.stdout).toBe(`ORPHANS\n"echo up; exec sleep 92" · its supervisor is gone (${b}, entry ${supervisors.b!.key}) · pid ${supervisors.b!.pid} (sleep)\nStop them with: kt session end --all\n`);
    const ended = runKt(["session", "end", "--all"], { cwd: tmp, stateDir: a });
    expect(ended.exitCode).toBe(0);
    // a's row is still in its index: its session's end stops it (by its marker), b's is not looked at.
    expect(ended.stdout).toBe(`Ended 1 session ("default"): stopped 1 process, removed 0 file stamps and 1 file (3 bytes); stopped 0 orphaned processes of 0 commands no session could reach.\n`);
    await until("a's orphan to stop", () => !existsSync(`/proc/${supervisors.a!.pid}/stat`) || readFileSync(`/proc/${supervisors.a!.pid}/stat`, "utf8").includes(") Z"));
    // b's is untouched, and still b's to list.
    expect(readFileSync(`/proc/${supervisors.b!.pid}/stat`, "utf8")).toContain("(sleep)");
    expect(runKt(["ps", "list", "--orphans"], { cwd: tmp, stateDir: b }).stdout).toStartWith(`ORPHANS\n"echo up; exec sleep 92"`);
    expect(runKt(["ps", "list", "--orphans"], { cwd: tmp, stateDir: a }).stdout).toBe("No orphaned kt processes.\n");
  }, 30_000);

  test.if(CAN_RUN_AS_NOBODY)("another user's process carrying this state directory's marker is neither listed nor stopped", async () => {
    const tmp = scratch();
    const state = join(tmp, "s");
    writeFileSync(join(tmp, "f.txt"), "a\n");
    expect(runKt(["read", "f.txt"], { cwd: tmp, stateDir: state }).exitCode).toBe(0);
    const p = Bun.spawn(["setpriv", `--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", "env", `__KT_PROCESS=7@${state}`, "sleep", "300"], { stdout: "ignore", stderr: "ignore" });
    pids.push(p.pid);
    await Bun.sleep(200);
    expect(runKt(["ps", "list", "--orphans"], { cwd: tmp, stateDir: state }).stdout).toBe("No orphaned kt processes.\n");
    const ended = runKt(["session", "end", "--all"], { cwd: tmp, stateDir: state });
    expect(ended.stdout).toEndWith("stopped 0 orphaned processes of 0 commands no session could reach.\n");
    expect(readFileSync(`/proc/${p.pid}/stat`, "utf8")).toContain("(sleep) S");
  });
});

describe("core/statefs.ts in-process", () => {
  test("a checked state directory removed under a long-lived process is made again, private, on its next use", async () => {
    const { ensureStateDir, privateSubdir } = await import("../src/core/statefs.ts");
    const tmp = scratch();
    const state = join(tmp, "s");
    ensureStateDir(state);
    expect(privateSubdir(state, "sessions", "x")).toBe(join(state, "sessions", "x"));
    rmSync(state, { recursive: true, force: true });
    expect(privateSubdir(state, "sessions", "x", "spill")).toBe(join(state, "sessions", "x", "spill"));
    for (const d of [state, join(state, "sessions"), join(state, "sessions", "x"), join(state, "sessions", "x", "spill")]) expect(mode(d)).toBe(0o700);
  });

  test("made 0700 even under a umask that would take the owner's own bits", async () => {
    const { ensureStateDir, privateSubdir } = await import("../src/core/statefs.ts");
    const tmp = scratch();
    const state = join(tmp, "odd");
    const was = process.umask(0o277);
    try {
      ensureStateDir(state);
      privateSubdir(state, "sessions");
    } finally {
      process.umask(was);
    }
    expect(mode(state)).toBe(0o700);
    expect(mode(join(state, "sessions"))).toBe(0o700);
  });
});
