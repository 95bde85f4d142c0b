// Issue 11, "what ordinary hostile conditions break": one regression test per numbered
// item, named after it, through the compiled binary (as root where the item needs it; as
// `nobody` through setpriv where root would bypass a permission). Items 14, 15 and 19 are
// pinned by the process and search suites.
import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import {
  chmodSync, chownSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync,
  symlinkSync, unlinkSync, writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { applyPatch } from "diff";
import { CAN_RUN_AS_NOBODY, KT, kt, startFlipper, tempDir } from "./_helpers.ts";

const ENV = (stateDir: string, extra: Record<string, string> = {}) => ({
  PATH: process.env.PATH ?? "",
  HOME: process.env.HOME ?? "/tmp",
  NO_COLOR: "1",
  KT_STATE_DIR: stateDir,
  ...extra,
});

/** The binary with a deadline: a hang is a failure, not a stuck suite. */
async function ktWithin(ms: number, args: string[], opts: { cwd: string; stateDir: string; stdin?: string | Uint8Array; env?: Record<string, string> }) {
  const proc = Bun.spawn([KT, ...args], {
    cwd: opts.cwd,
    env: ENV(opts.stateDir, opts.env),
    stdin: opts.stdin === undefined ? "ignore" : typeof opts.stdin === "string" ? Buffer.from(opts.stdin) : opts.stdin,
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => proc.kill("SIGKILL"), ms);
  const [stdout, stderr, exitCode] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  return { stdout, stderr, exitCode, hung: proc.signalCode === "SIGKILL" };
}

function setup() {
  const tmp = tempDir();
  const work = join(tmp.path, "work");
  mkdirSync(work);
  return { tmp, work, stateDir: join(tmp.path, "state") };
}

/** A raw MCP client over the server's stdio: lines in, parsed lines out. */
class RawMcp {
  readonly proc: Bun.Subprocess<"pipe", "pipe", "pipe">;
  private buffered = "";
  private readonly lines: unknown[] = [];
  private readonly reading: Promise<void>;
  stderr = "";

  constructor(cwd: string, stateDir: string) {
    const proc = Bun.spawn([KT, "mcp"], { cwd, env: ENV(stateDir), stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    this.proc = proc;
    this.reading = (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of proc.stdout) {
        this.buffered += decoder.decode(chunk, { stream: true });
        let nl: number;
        while ((nl = this.buffered.indexOf("\n")) !== -1) {
          this.lines.push(JSON.parse(this.buffered.slice(0, nl)));
          this.buffered = this.buffered.slice(nl + 1);
        }
      }
    })();
    void (async () => {
      for await (const chunk of proc.stderr) this.stderr += new TextDecoder().decode(chunk);
    })();
  }

  send(message: unknown | string): void {
    this.proc.stdin.write(typeof message === "string" ? message : `${JSON.stringify(message)}\n`);
    this.proc.stdin.flush();
  }

  async initialize(): Promise<void> {
    this.send({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } });
    await this.reply(0);
    this.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  }

  async reply(id: number | null, ms = 15_000): Promise<{ id: number | null; result?: any; error?: { code: number; message: string } }> {
    const deadline = Date.now() + ms;
    for (;;) {
      const found = this.lines.find((l) => (l as { id?: unknown }).id === id);
      if (found) {
        this.lines.splice(this.lines.indexOf(found), 1);
        return found as never;
      }
      if (Date.now() > deadline) throw new Error(`no reply to ${id} within ${ms} ms; stderr: ${this.stderr}`);
      await Bun.sleep(20);
    }
  }

  async end(): Promise<number> {
    this.proc.stdin.end();
    const code = await this.proc.exited;
    await this.reading;
    return code;
  }
}

describe("issue 11: hangs and crashes", () => {
  test("item 1: write to a FIFO is refused at once, not blocked on; kt's own state files are never targets", async () => {
    const { tmp, work, stateDir } = setup();
    using _ = tmp;
    Bun.spawnSync(["mkfifo", join(work, "f")]);
    const r = await ktWithin(10_000, ["write", "f", "--content", "x", "--skip-read-check"], { cwd: work, stateDir });
    expect(r.hung).toBe(false);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe(`${work}/f is not a regular file (it is a device, socket or pipe); write works on regular files only. Use bash if you really mean to use it.\n`);
    expect(lstatSync(join(work, "f")).isFIFO()).toBe(true);
    // edit too: it reads the file before anything else.
    const e = await ktWithin(10_000, ["edit", "f", "--old-string", "a", "--new-string", "b", "--skip-read-check"], { cwd: work, stateDir });
    expect(e.hung).toBe(false);
    expect(e.exitCode).toBe(1);

    writeFileSync(join(work, "a.txt"), "a\n");
    expect(kt(["read", "a.txt"], { cwd: work, stateDir }).exitCode).toBe(0);
    // The index is made by a write (a read's stamp goes to the log of reads).
    expect(kt(["write", "made.txt", "--content", "m\n"], { cwd: work, stateDir }).exitCode).toBe(0);
    for (const file of [join(stateDir, "index.db"), join(stateDir, "stamps.log")]) {
      const before = readFileSync(file);
      const s = await ktWithin(10_000, ["write", file, "--content", "x", "--skip-read-check"], { cwd: work, stateDir });
      expect(s.exitCode).toBe(1);
      expect(s.stdout).toBe(
        `Refusing to write ${file}: it is inside kt's own state directory ${stateDir}, which holds kt's index, logs and process pipes. Files there are read, never written, with kt's tools.\n`,
      );
      expect(readFileSync(file).subarray(0, 16)).toEqual(before.subarray(0, 16));
    }
  });

  test("item 1: apply_patch, dry run or not, never adds, changes, moves into or deletes a file of the state directory", () => {
    const { tmp, work, stateDir } = setup();
    using _ = tmp;
    writeFileSync(join(work, "a.txt"), "a\n");
    expect(kt(["read", "a.txt"], { cwd: work, stateDir }).exitCode).toBe(0);
    // The index is made by a write (a read's stamp goes to the log of reads).
    expect(kt(["write", "made.txt", "--content", "m\n"], { cwd: work, stateDir }).exitCode).toBe(0);
    const index = join(stateDir, "index.db");
    symlinkSync(stateDir, join(work, "st"));
    const refusal = (path: string) =>
      `Refusing to write ${path}: it is inside kt's own state directory ${stateDir}, which holds kt's index, logs and process pipes. Files there are read, never written, with kt's tools.\n`;
    const cases: [string, string][] = [
      [`*** Begin Patch\n*** Add File: ../state/evil\n+x\n*** End Patch`, join(stateDir, "evil")],
      [`*** Begin Patch\n*** Delete File: ${index}\n*** End Patch`, index],
      [`*** Begin Patch\n*** Update File: a.txt\n*** Move to: st/moved\n@@\n-a\n+b\n*** End Patch`, join(work, "st", "moved")],
      [`--- /dev/null\n+++ b/st/uni\n@@ -0,0 +1 @@\n+x\n`, join(work, "st", "uni")],
    ];
    for (const [patch, path] of cases) {
      for (const dry of [[], ["--dry-run"]]) {
        const r = kt(["patch", patch, ...dry], { cwd: work, stateDir });
        expect({ patch, dry, exitCode: r.exitCode, stdout: r.stdout }).toEqual({ patch, dry, exitCode: 1, stdout: refusal(path) });
      }
    }
    for (const made of ["evil", "moved", "uni"]) expect(existsSync(join(stateDir, made))).toBe(false);
    expect(lstatSync(index).isFile()).toBe(true);
    expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("a\n");
  });

  test("item 1: under kt mcp, a write to the session's own stdin FIFO is refused and the server keeps answering", async () => {
    const { tmp, work, stateDir } = setup();
    using _ = tmp;
    const mcp = new RawMcp(work, stateDir);
    await mcp.initialize();
    mcp.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "process", arguments: { action: "start", command: "sleep 1000" } } });
    await mcp.reply(1);
    const sessions = readdirSync(join(stateDir, "sessions"));
    expect(sessions).toHaveLength(1);
    const proc = join(stateDir, "sessions", sessions[0]!, "proc");
    const fifo = readdirSync(proc).map((n) => join(proc, n)).find((p) => lstatSync(p).isFIFO());
    expect(fifo).toBeDefined();
    mcp.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "write", arguments: { file_path: fifo, content: "x" } } });
    const refused = await mcp.reply(2);
    expect(refused.result.isError).toBe(true);
    expect(refused.result.content[0].text).toStartWith(`Refusing to write ${fifo}: it is inside kt's own state directory`);
    // A regular file of the session's state (a log) is refused too: the state dir is kt's own.
    const log = readdirSync(proc).map((n) => join(proc, n)).find((p) => p.endsWith(".log"))!;
    mcp.send({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "write", arguments: { file_path: log, content: "forged" } } });
    const logRefused = await mcp.reply(4);
    expect(logRefused.result.isError).toBe(true);
    expect(logRefused.result.content[0].text).toStartWith(`Refusing to write ${log}: it is inside kt's own state directory`);
    mcp.send({ jsonrpc: "2.0", id: 3, method: "tools/list" });
    expect((await mcp.reply(3)).result.tools.length).toBeGreaterThan(0);
    expect(await mcp.end()).toBe(0);
  });

  test("item 2: a client that stops reading ends kt mcp cleanly: exit 0, no stack trace, its session ended and its processes stopped", () => {
    const { tmp, work, stateDir } = setup();
    using _ = tmp;
    const init = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } });
    const start = JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "process", arguments: { action: "start", command: "sleep 1011.5" } } });
    const list = JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/list" });
    // head takes the first two answers and leaves: the next answer meets a closed pipe (EPIPE).
    const script = `(printf '%s\\n' '${init}' '${start}'; sleep 3; printf '%s\\n' '${list}'; sleep 1; printf '%s\\n' '${list}'; sleep 4) | "${KT}" mcp 2>"${tmp.path}/err" | head -n 2 >/dev/null; echo "\${PIPESTATUS[1]}"`;
    const run = Bun.spawnSync(["bash", "-c", script], { cwd: work, env: ENV(stateDir) });
    const stderr = readFileSync(join(tmp.path, "err"), "utf8");
    expect(run.stdout.toString().trim()).toBe("0");
    expect(stderr).not.toContain("    at ");
    expect(stderr).not.toContain("EPIPE");
    expect(stderr).toContain("Stopping p1 (sleep 1011.5");
    expect(readdirSync(join(stateDir, "sessions"))).toEqual([]);
    // procps (pgrep) need not be installed: the command lines under /proc say the same.
    const alive = readdirSync("/proc").filter((pid) => {
      if (!/^\d+$/.test(pid)) return false;
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ").includes("sleep 1011.5");
      } catch {
        return false;
      }
    });
    expect(alive).toEqual([]);
  }, 30_000);

  test("item 3: a line over 10 MiB on kt mcp's stdin is answered with a JSON-RPC error and the server keeps serving", async () => {
    const { tmp, work, stateDir } = setup();
    using _ = tmp;
    const mcp = new RawMcp(work, stateDir);
    await mcp.initialize();
    const big = JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "write", arguments: { file_path: "big.txt", content: "x".repeat(11 * 1024 * 1024) } } });
    mcp.send(`${big}\n`);
    // Issue 29: answered with the request's own id (readable in the line's first bytes), not null.
    const error = await mcp.reply(7);
    expect(error.error!.code).toBe(-32600);
    expect(error.error!.message).toStartWith(`Message too large: a line of ${Buffer.byteLength(big).toLocaleString("en")} bytes is over kt mcp's limit of 10,485,760 bytes`);
    mcp.send("not json\n");
    expect((await mcp.reply(null)).error!.code).toBe(-32700);
    mcp.send({ jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "write", arguments: { file_path: "small.txt", content: "ok\n" } } });
    expect((await mcp.reply(8)).result.content[0].text).toBe(`Wrote ${work}/small.txt (1 line).`);
    expect(existsSync(join(work, "big.txt"))).toBe(false);
    expect(await mcp.end()).toBe(0);
  }, 30_000);

  test("item 3: a last line without its newline is still answered when stdin closes: an over-long one with the error, a request with its result", async () => {
    const { tmp, work, stateDir } = setup();
    using _ = tmp;
    const long = new RawMcp(work, stateDir);
    await long.initialize();
    long.send("x".repeat(11 * 1024 * 1024));
    expect(await long.end()).toBe(0);
    const tooLarge = await long.reply(null, 1000);
    expect(tooLarge.error!.code).toBe(-32600);
    expect(tooLarge.error!.message).toStartWith("Message too large: a line of 11,534,336 bytes is over kt mcp's limit of 10,485,760 bytes");

    const last = new RawMcp(work, stateDir);
    await last.initialize();
    last.send(JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "write", arguments: { file_path: "last.txt", content: "end\n" } } }));
    expect(await last.end()).toBe(0);
    expect((await last.reply(9, 1000)).result.content[0].text).toBe(`Wrote ${work}/last.txt (1 line).`);
    expect(readFileSync(join(work, "last.txt"), "utf8")).toBe("end\n");
  }, 30_000);

  // Not a timing: before the bound, the 20,000-line cases took 60 s and 120 s; bench/write times 100,000 lines.
  test("item 4: replacing a 20,000-line file and a replace-all over 20,000 lines finish, with a diff that is a correct patch", async () => {
    const { tmp, work, stateDir } = setup();
    using _ = tmp;
    const lines = (f: (i: number) => string) => Array.from({ length: 20_000 }, (_, i) => f(i)).join("\n") + "\n";
    const before = lines((i) => `const value${i} = compute(${i}, "old");`);
    const after = lines((i) => `let other${i} = derive(${i * 7}, "new");`);
    writeFileSync(join(work, "a.txt"), before);
    writeFileSync(join(tmp.path, "new.txt"), after);
    const w = await ktWithin(20_000, ["write", "a.txt", "--content-file", join(tmp.path, "new.txt"), "--skip-read-check", "--json"], { cwd: work, stateDir });
    expect(w.hung).toBe(false);
    const written = JSON.parse(w.stdout);
    expect(written.content).toBe(`Replaced ${work}/a.txt (was 20000 lines, now 20000 lines).`);
    expect([written.metadata.additions, written.metadata.deletions]).toEqual([20_000, 20_000]);
    expect(applyPatch(before, written.metadata.diff)).toBe(after);

    const e = await ktWithin(20_000, ["edit", "a.txt", "--old-string", "new", "--new-string", "newer", "--replace-all", "--json"], { cwd: work, stateDir });
    expect(e.hung).toBe(false);
    const edited = JSON.parse(e.stdout);
    expect(edited.content).toStartWith(`Edited ${work}/a.txt (20000 replacements).`);
    expect(applyPatch(after, edited.metadata.diff)).toBe(after.replaceAll("new", "newer"));
    expect(readFileSync(join(work, "a.txt"), "utf8")).toBe(after.replaceAll("new", "newer"));
  }, 60_000);

  // The bound must not blur a small change in a large file into a rewrite of all of it:
  // past the budget, lines found once on each side anchor the diff (as patience diff does).
  test("item 4: other shapes of large change finish with a diff that is a correct patch and counts only the lines that changed", async () => {
    const { tmp, work, stateDir } = setup();
    using _ = tmp;
    const N = 20_000;
    const base = Array.from({ length: N }, (_, i) => `const value${i} = compute(${i}, "old");`);
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const shuffled = [...base].sort(() => random() - 0.5);
    const shapes: Record<string, { lines: string[]; counts?: [number, number] }> = {
      "every other line changed": { lines: base.map((l, i) => (i % 2 ? l : l.replace("old", "new"))), counts: [N / 2, N / 2] },
      "a line in at the top, the last one out": { lines: ["import first;", ...base.slice(0, -1)], counts: [1, 1] },
      "the two halves swapped": { lines: [...base.slice(N / 2), ...base.slice(0, N / 2)], counts: [N / 2, N / 2] },
      "every third line replaced": { lines: base.map((l, i) => (i % 3 ? l : `x${i}`)), counts: [Math.ceil(N / 3), Math.ceil(N / 3)] },
      reversed: { lines: [...base].reverse() },
      shuffled: { lines: shuffled },
    };
    const before = `${base.join("\n")}\n`;
    for (const [k, [name, { lines, counts }]] of Object.entries(shapes).entries()) {
      const after = `${lines.join("\n")}\n`;
      writeFileSync(join(work, `s${k}.txt`), before);
      writeFileSync(join(tmp.path, "new.txt"), after);
      const w = await ktWithin(20_000, ["write", `s${k}.txt`, "--content-file", join(tmp.path, "new.txt"), "--skip-read-check", "--json"], { cwd: work, stateDir });
      expect({ name, hung: w.hung, exitCode: w.exitCode }).toEqual({ name, hung: false, exitCode: 0 });
      const m = JSON.parse(w.stdout).metadata;
      expect({ name, applies: applyPatch(before, m.diff) === after }).toEqual({ name, applies: true });
      if (counts) expect({ name, counts: [m.additions, m.deletions] }).toEqual({ name, counts });
    }
    // An edit of the first and the last line of a large file is two small hunks, not a rewrite.
    writeFileSync(join(work, "e.txt"), `MARK first\n${before}MARK last\n`);
    const e = await ktWithin(20_000, ["edit", "e.txt", "--old-string", "MARK", "--new-string", "mark", "--replace-all", "--skip-read-check", "--json"], { cwd: work, stateDir });
    const em = JSON.parse(e.stdout).metadata;
    expect([em.title, em.additions, em.deletions]).toEqual([`Edit ${work}/e.txt · +2 −2`, 2, 2]);
    expect(applyPatch(`MARK first\n${before}MARK last\n`, em.diff)).toBe(`mark first\n${before}mark last\n`);
  }, 60_000);

  test("item 5: read of /proc/kmsg (a file that blocks until data comes) answers at once", async () => {
    const { tmp, work, stateDir } = setup();
    using _ = tmp;
    const r = await ktWithin(10_000, ["read", "/proc/kmsg"], { cwd: work, stateDir });
    expect(r.hung).toBe(false);
    // Root may open it (nothing to read now), a container may forbid it: either way, prose at once.
    expect([0, 1]).toContain(r.exitCode);
    if (r.exitCode === 1) expect(r.stdout).toMatch(/^(\/proc\/kmsg has nothing to read now and would make kt wait|Permission denied: \/proc\/kmsg|Cannot access \/proc\/kmsg)/);
    expect(r.stderr).toBe("");
    // grep too, with either engine: rg and the built-in reader would block on it.
    for (const engine of ["rg", "builtin"]) {
      const g = await ktWithin(10_000, ["grep", "x", "/proc/kmsg"], { cwd: work, stateDir, env: { KT_GREP_ENGINE: engine } });
      expect({ engine, hung: g.hung }).toEqual({ engine, hung: false });
      // SPEC §8.6: grep's errors exit 2 (ripgrep's convention), no match 1.
      expect([0, 1, 2]).toContain(g.exitCode);
      if (g.exitCode === 2) expect(g.stdout).toMatch(/^(\/proc\/kmsg has nothing to read now and would make kt wait|Permission denied: \/proc\/kmsg|Cannot access \/proc\/kmsg)/);
    }
    // Met in a walk, the built-in engine opens it without blocking: reported, never waited on.
    const walk = await ktWithin(30_000, ["grep", "x", "/proc", "--include", "kmsg"], { cwd: work, stateDir, env: { KT_GREP_ENGINE: "builtin" } });
    // Nothing matched: exit 1 (SPEC §8.6), the partial search said in the text.
    expect([walk.hung, walk.exitCode]).toEqual([false, 1]);
    if (r.exitCode === 0 || r.stdout.startsWith("/proc/kmsg has nothing to read now")) expect(walk.stdout).toContain("could not be searched completely (the pattern backtracked too long on a line, or reading failed), so these results are partial: /proc/kmsg.");
    // A FIFO is refused before it is opened (opening one blocks until a writer comes).
    Bun.spawnSync(["mkfifo", join(work, "p")]);
    const f = await ktWithin(10_000, ["read", "p"], { cwd: work, stateDir });
    expect(f.hung).toBe(false);
    expect(f.stdout).toBe(`${work}/p is not a regular file (it is a device, socket or pipe); read cannot page it. Use bash if you really mean to read from it.\n`);
  });
});

describe("issue 11: promises broken", () => {
  test("item 6: once the file is renamed into place the write succeeded, even when its stamp cannot be saved", () => {
    const { tmp, work, stateDir } = setup();
    using _ = tmp;
    writeFileSync(join(work, "a.txt"), "old\n");
    expect(kt(["read", "a.txt"], { cwd: work, stateDir }).exitCode).toBe(0);
    // The index is made by a write (a read's stamp goes to the log of reads), outside work/.
    expect(kt(["write", join(tmp.path, "made.txt"), "--content", "m\n"], { cwd: work, stateDir }).exitCode).toBe(0);
    // Saving a stamp fails from now on, as on a full or read-only state disk (which tests below show as nobody).
    const db = new Database(join(stateDir, "index.db"));
    db.exec("CREATE TRIGGER no_stamps BEFORE INSERT ON stamps BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END");
    db.close();
    const r = kt(["write", "a.txt", "--content", "new\n"], { cwd: work, stateDir });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe(
      `Replaced ${work}/a.txt (was 1 line, now 1 line).\n(The file was written, but kt could not record it in its state directory ${stateDir}, so it will ask you to read ${work}/a.txt again before the next change to it.)\n`,
    );
    expect(r.stderr).toContain(`${work}/a.txt was written, but its stamp could not be saved. kt cannot use its state directory ${stateDir}: the disk holding it is full or failing`);
    expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("new\n");
    expect(readdirSync(work)).toEqual(["a.txt"]);
  });

  test.skipIf(!CAN_RUN_AS_NOBODY)("item 6: with a read-only state directory, write and edit replace the file and say the stamp was not saved (as nobody)", () => {
    const { tmp, work } = setup();
    using _ = tmp;
    chmodSync(tmp.path, 0o755);
    chmodSync(work, 0o777);
    writeFileSync(join(work, "a.txt"), "one\n");
    chmodSync(join(work, "a.txt"), 0o666);
    const state = join(tmp.path, "ro-state");
    mkdirSync(state, { mode: 0o700 });
    chownSync(state, 65534, 65534);
    const nobody = (args: string[]) => {
      const p = Bun.spawnSync(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", KT, ...args], { cwd: work, env: ENV(state, { HOME: state }) });
      return { stdout: p.stdout.toString(), stderr: p.stderr.toString(), exitCode: p.exitCode };
    };
    expect(nobody(["read", "a.txt"]).exitCode).toBe(0);
    // The index is made by a write (a read's stamp goes to the log of reads). A state directory
    // that turns read-only before any call has made one leaves writes nothing to lock: exit 3.
    expect(nobody(["write", "made.txt", "--content", "m\n"]).exitCode).toBe(0);
    chmodSync(state, 0o500);
    for (const f of readdirSync(state)) chmodSync(join(state, f), 0o400);
    const e = nobody(["edit", "a.txt", "--old-string", "one", "--new-string", "two"]);
    expect(e.exitCode).toBe(0);
    expect(e.stdout).toEndWith(`(The file was written, but kt could not record it in its state directory ${state}, so it will ask you to read ${work}/a.txt again before the next change to it.)\n`);
    expect(e.stderr).toContain(`kt cannot use its state directory ${state}: it cannot be written`);
    expect(e.stderr).not.toContain("a bug in kt");
    expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("two\n");
    // Item 9: the read-only tools still work without recording anything.
    const r = nobody(["read", "a.txt"]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe(`${work}/a.txt\n     1→two\n`);
    expect(r.stderr).toContain("Make it writable, or set KT_STATE_DIR (or --state-dir) to a writable directory.");
    const g = nobody(["grep", "two"]);
    expect(g.exitCode).toBe(0);
    expect(g.stdout).toContain("a.txt\n  1: two");
  });

  test("item 7: --content-file, --old-string-file and --new-string-file refuse bytes that are not UTF-8 instead of writing U+FFFD", () => {
    const { tmp, work, stateDir } = setup();
    using _ = tmp;
    const random = new Uint8Array(4096).map((_, i) => (i * 167 + 13) % 256);
    writeFileSync(join(tmp.path, "random.bin"), random);
    writeFileSync(join(tmp.path, "latin1.txt"), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    const w = kt(["write", "out.txt", "--content-file", join(tmp.path, "latin1.txt")], { cwd: work, stateDir });
    expect(w.exitCode).toBe(1);
    expect(w.stdout).toBe(
      `--content-file: ${tmp.path}/latin1.txt is not valid UTF-8 text (the first byte that is not UTF-8 is at offset 3). kt carries text fields as UTF-8 and will not replace bytes it cannot decode, so nothing was changed. Convert the file to UTF-8 first (e.g. iconv -f latin1 -t utf-8), or copy a binary file with cp.\n`,
    );
    expect(existsSync(join(work, "out.txt"))).toBe(false);
    const stdin = kt(["write", "out.txt", "--content-file", "-", "--json"], { cwd: work, stateDir, stdin: random });
    expect(stdin.exitCode).toBe(1);
    expect(JSON.parse(stdin.stdout).error.code).toBe("INVALID_ARGS");
    expect(existsSync(join(work, "out.txt"))).toBe(false);

    writeFileSync(join(work, "t.txt"), "café\n");
    for (const flag of ["--old-string-file", "--new-string-file"]) {
      const other = flag === "--old-string-file" ? ["--new-string", "x"] : ["--old-string", "café"];
      const e = kt(["edit", "t.txt", flag, join(tmp.path, "latin1.txt"), ...other, "--skip-read-check"], { cwd: work, stateDir });
      expect(e.exitCode).toBe(1);
      expect(e.stdout).toStartWith(`${flag}: ${tmp.path}/latin1.txt is not valid UTF-8 text`);
      expect(readFileSync(join(work, "t.txt"), "utf8")).toBe("café\n");
    }
    // UTF-8 goes through byte for byte.
    writeFileSync(join(tmp.path, "utf8.txt"), "naïve — ✓\n");
    expect(kt(["write", "u.txt", "--content-file", join(tmp.path, "utf8.txt")], { cwd: work, stateDir }).exitCode).toBe(0);
    expect(readFileSync(join(work, "u.txt"))).toEqual(readFileSync(join(tmp.path, "utf8.txt")));
  });

  test("item 7: bytes that are not UTF-8 in an argument, JSON on stdin, kt call (one call or --jsonl) or kt mcp are refused too, never written as U+FFFD", async () => {
    const { tmp, work, stateDir } = setup();
    using _ = tmp;
    const sh = (script: string) => {
      const p = Bun.spawnSync(["bash", "-c", script], { cwd: work, env: { ...ENV(stateDir), KT } });
      return { stdout: p.stdout.toString(), exitCode: p.exitCode };
    };
    const tail = "kt carries text fields as UTF-8 and will not replace bytes it cannot decode, so nothing was changed.";
    const arg = sh(`"$KT" write a.txt --content "$(printf 'caf\\xe9')"`);
    expect([arg.exitCode, arg.stdout]).toEqual([1, `A command-line argument (the value of --content) is not valid UTF-8 text (the first byte that is not UTF-8 is at offset 3). ${tail} Pass the text as UTF-8, or give it in a file with the matching --<field>-file option.\n`]);
    // A real U+FFFD (valid UTF-8) is text like any other.
    expect(sh(`"$KT" write ok.txt --content "�"`).exitCode).toBe(0);
    const json = sh(`printf '{"file_path":"b.txt","content":"caf\\xe9"}' | "$KT" write --json`);
    expect(JSON.parse(json.stdout).content).toBe(`Invalid input for tool "write": stdin is not valid UTF-8 text (the first byte that is not UTF-8 is at offset 35). ${tail} Send the text as UTF-8 (e.g. convert it with iconv -f latin1 -t utf-8).`);
    const one = sh(`printf '{"tool":"write","input":{"file_path":"c.txt","content":"\\xfe"}}' | "$KT" call`);
    expect(one.stdout).toStartWith("The call on stdin is not valid UTF-8 text (the first byte that is not UTF-8 is at offset 56).");
    const lines = sh(`printf '{"tool":"write","input":{"file_path":"d.txt","content":"\\xfe"}}\\n{"tool":"write","input":{"file_path":"e.txt","content":"fine"}}\\n' | "$KT" call --jsonl`);
    const [bad, good] = lines.stdout.trim().split("\n").map((l) => JSON.parse(l));
    expect([bad.isError, bad.error.code, bad.content.split(" (")[0]]).toEqual([true, "INVALID_ARGS", "Line 1 of the calls is not valid UTF-8 text"]);
    expect(good.isError).toBe(false);
    const mcp = new RawMcp(work, stateDir);
    await mcp.initialize();
    mcp.proc.stdin.write(Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"write","arguments":{"file_path":"m.txt","content":"'), Buffer.from([0xe9]), Buffer.from('"}}}\n')]));
    mcp.proc.stdin.flush();
    const refused = await mcp.reply(null);
    expect(refused.error!.code).toBe(-32700);
    expect(refused.error!.message).toStartWith("Parse error: the line is not valid UTF-8");
    expect(await mcp.end()).toBe(0);
    expect(readdirSync(work).sort()).toEqual(["e.txt", "ok.txt"]);
  });

  describe("item 8: a damaged index is set aside and rebuilt, with a notice", () => {
    const damage: Record<string, (index: string) => void> = {
      "a table dropped": (index) => {
        const db = new Database(index);
        db.exec("DROP TABLE stamps");
        db.close();
      },
      "a table altered": (index) => {
        const db = new Database(index);
        db.exec("ALTER TABLE processes ADD COLUMN surprise TEXT");
        db.close();
      },
      "index.db a symbolic link to /dev/null": (index) => {
        for (const suffix of ["", "-wal", "-shm"]) rmSync(index + suffix, { force: true });
        symlinkSync("/dev/null", index);
      },
    };
    for (const [name, hurt] of Object.entries(damage)) {
      test(name, () => {
        const { tmp, work, stateDir } = setup();
        using _ = tmp;
        writeFileSync(join(work, "a.txt"), "alpha\n");
        expect(kt(["read", "a.txt"], { cwd: work, stateDir }).exitCode).toBe(0);
        // The index is made by a write (a read's stamp goes to the log of reads).
        expect(kt(["write", "made.txt", "--content", "m\n"], { cwd: work, stateDir }).exitCode).toBe(0);
        const index = join(stateDir, "index.db");
        hurt(index);
        // A read does not open the index: it is recorded, and the next call that opens it says what was found.
        expect(kt(["read", "a.txt"], { cwd: work, stateDir })).toMatchObject({ exitCode: 0, stdout: `${work}/a.txt\n     1→alpha\n`, stderr: "" });
        const r = kt(["edit", "a.txt", "--old-string", "alpha", "--new-string", "beta"], { cwd: work, stateDir });
        expect(r.stderr).toContain(`the state index at ${index} was unreadable`);
        expect(r.stderr).toContain("started a fresh one and kept the old file as");
        // As it says: the fresh index knows no read made before it, so the file is to be read again.
        expect(r).toMatchObject({ exitCode: 1, stdout: `Refusing to edit ${work}/a.txt: you have not read this file in this session. Read it first so you do not destroy existing content, then write or edit it.\n` });
        expect(kt(["read", "a.txt"], { cwd: work, stateDir })).toMatchObject({ exitCode: 0, stderr: "" });
        // Healthy again: the next calls are silent, and stamps work.
        const again = kt(["edit", "a.txt", "--old-string", "alpha", "--new-string", "beta"], { cwd: work, stateDir });
        expect(again.exitCode).toBe(0);
        expect(again.stderr).toBe("");
        expect(lstatSync(index).isFile()).toBe(true);
        expect(readdirSync(stateDir).some((f) => f.startsWith("index.db.corrupt-"))).toBe(true);
        expect(statSync("/dev/null").isCharacterDevice()).toBe(true);
      });
    }
  });

  test("item 9: an index locked by another process for over 10 s gets prose naming the state directory, not 'a bug in kt'; read still works", async () => {
    const { tmp, work, stateDir } = setup();
    using _ = tmp;
    writeFileSync(join(work, "a.txt"), "alpha\n");
    expect(kt(["read", "a.txt"], { cwd: work, stateDir }).exitCode).toBe(0);
    // The index is made by a write (a read's stamp goes to the log of reads).
    expect(kt(["write", "made.txt", "--content", "m\n"], { cwd: work, stateDir }).exitCode).toBe(0);
    const index = join(stateDir, "index.db");
    const holder = new Database(index);
    holder.exec("BEGIN EXCLUSIVE");
    try {
      const [w, r] = await Promise.all([
        ktWithin(30_000, ["write", "b.txt", "--content", "x"], { cwd: work, stateDir }),
        ktWithin(30_000, ["read", "a.txt"], { cwd: work, stateDir }),
      ]);
      expect(w.exitCode).toBe(3);
      expect(w.stdout).toBe("");
      expect(w.stderr).toBe(
        `kt write: kt cannot use its state directory ${stateDir}: its index ${index} stayed locked by another process for over 10 s (database is locked). Let the other kt finish, or set KT_STATE_DIR (or --state-dir) to another directory.\n`,
      );
      expect(existsSync(join(work, "b.txt"))).toBe(false);
      expect(r.exitCode).toBe(0);
      expect(r.stdout).toBe(`${work}/a.txt\n     1→alpha\n`);
      // A read does not wait for the index: its stamp goes to the log of reads, and counts once the lock is gone.
      expect(r.stderr).toBe("");
    } finally {
      holder.exec("ROLLBACK");
      holder.close();
    }
    expect(kt(["edit", "a.txt", "--old-string", "alpha", "--new-string", "beta"], { cwd: work, stateDir })).toMatchObject({ exitCode: 0, stderr: "" });
  }, 40_000);
});

/**
 * A tiny tmpfs can stand in for a full disk; only root in a container that allows mounts may make one.
 * Mounted 0700: a tmpfs is 1777 by default, and a state directory others can write is refused (issue 23).
 */
function tmpfsAt(dir: string, size: string): boolean {
  mkdirSync(dir, { recursive: true });
  return process.getuid?.() === 0 && Bun.spawnSync(["mount", "-t", "tmpfs", "-o", `size=${size},mode=0700`, "tmpfs", dir], { stderr: "ignore" }).exitCode === 0;
}

const CAN_MOUNT = (() => {
  using probe = tempDir("kt-mount-");
  const ok = tmpfsAt(join(probe.path, "m"), "64k");
  if (ok) Bun.spawnSync(["umount", join(probe.path, "m")]);
  return ok;
})();

test.skipIf(!CAN_MOUNT)("issue 11: item 9: a full state disk gets prose naming the state directory and what to do; read and write still do their work", () => {
  const { tmp, work } = setup();
  using _ = tmp;
  const stateDir = join(tmp.path, "full-state");
  expect(tmpfsAt(stateDir, "2m")).toBe(true);
  try {
    writeFileSync(join(work, "a.txt"), "alpha\n");
    expect(kt(["read", "a.txt"], { cwd: work, stateDir }).exitCode).toBe(0);
    // The index is made by a write (a read's stamp goes to the log of reads) before the disk fills.
    expect(kt(["write", "made.txt", "--content", "m\n"], { cwd: work, stateDir }).exitCode).toBe(0);
    Bun.spawnSync(["dd", "if=/dev/zero", `of=${join(stateDir, "fill")}`, "bs=64k", "count=64"], { stderr: "ignore" });
    // SPEC §8.7 (which wins over issue 11's exit 3): the command still runs, and the result says its log could not be kept.
    const b = kt(["bash", "echo hi"], { cwd: work, stateDir });
    expect(b.exitCode).toBe(0);
    expect(b.stdout).toStartWith("$ echo hi\nhi\n[exit code 0 · ");
    expect(b.stdout).toContain(`kt could not keep this command's log: the disk holding the state directory ${stateDir} is full. It ran without one`);
    // A framework driving kt gets the same result, paired with its call.
    const j = kt(["call", "--jsonl"], { cwd: work, stateDir, stdin: `${JSON.stringify({ tool: "bash", input: { command: "echo hi" } })}\n` });
    expect(j.exitCode).toBe(0);
    const line = JSON.parse(j.stdout) as { isError: boolean; content: string };
    expect(line.isError).toBe(false);
    expect(line.content).toContain("kt could not keep this command's log");
    const w = kt(["write", "a.txt", "--content", "beta\n"], { cwd: work, stateDir });
    expect(w.exitCode).toBe(0);
    expect(w.stdout).toStartWith(`Replaced ${work}/a.txt (was 1 line, now 1 line).\n(The file was written, but kt could not record it`);
    expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("beta\n");
    const r = kt(["read", "a.txt"], { cwd: work, stateDir });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe(`${work}/a.txt\n     1→beta\n`);
  } finally {
    Bun.spawnSync(["umount", stateDir]);
  }
});

describe("issue 11: confinement", () => {
  // The flipper swaps root/d between a real directory and a symbolic link to a directory
  // outside the root as fast as it can, while one kt process makes 300 reads and 300 writes
  // through root/d: each check of the path races a swap.
  test("item 10: swapping a directory for a symlink between check and open never reads or writes outside the root (300 attempts each)", async () => {
    const { tmp, work, stateDir } = setup();
    using _ = tmp;
    const root = join(work, "root");
    const outside = join(work, "outside");
    mkdirSync(join(root, "d"), { recursive: true });
    mkdirSync(outside);
    writeFileSync(join(root, "d", "f"), "inside\n");
    writeFileSync(join(outside, "f"), "SECRET outside the root\n");
    const flipper = startFlipper(join(root, "d"), outside);
    let lines: string[];
    try {
      const calls: string[] = [];
      for (let i = 0; i < 300; i++) {
        calls.push(JSON.stringify({ tool: "read", input: { file_path: join(root, "d", "f") } }));
        calls.push(JSON.stringify({ tool: "write", input: { file_path: join(root, "d", `w${i}.txt`), content: `attempt ${i}\n` } }));
      }
      const run = await ktWithin(120_000, ["call", "--jsonl", "--root", root, "--skip-read-check"], { cwd: root, stateDir, stdin: `${calls.join("\n")}\n` });
      expect(run.hung).toBe(false);
      lines = run.stdout.trim().split("\n");
    } finally {
      flipper.kill("SIGKILL");
      await flipper.exited;
    }
    expect(lines).toHaveLength(600);
    const results = lines.map((l) => JSON.parse(l) as { content: string; isError: boolean; error?: { code: string } });
    const reads = results.filter((_, i) => i % 2 === 0);
    const writes = results.filter((_, i) => i % 2 === 1);
    expect(reads.filter((r) => r.content.includes("SECRET")).length).toBe(0);
    expect(readdirSync(outside)).toEqual(["f"]);
    expect(readFileSync(join(outside, "f"), "utf8")).toBe("SECRET outside the root\n");
    // The race was run, not dodged: some calls met the symlink and were refused as outside the root.
    expect(results.some((r) => r.error?.code === "OUTSIDE_ROOT")).toBe(true);
    expect(results.some((r) => !r.isError)).toBe(true);
    expect(writes.length).toBe(300);
  }, 150_000);

  // The same race against apply_patch, whose many-file commit installs through opened
  // directories too: each call adds root/d/pN.txt and updates root/d/f by a hunk that fits
  // only the file outside the root, so a read through the link would show as a change there.
  test("item 10: the same swap never lets apply_patch read, add or change a file outside the root (300 attempts)", async () => {
    const { tmp, work, stateDir } = setup();
    using _ = tmp;
    const root = join(work, "root");
    const outside = join(work, "outside");
    mkdirSync(join(root, "d"), { recursive: true });
    mkdirSync(outside);
    writeFileSync(join(root, "d", "f"), "inside\n");
    writeFileSync(join(outside, "f"), "SECRET outside the root\n");
    const flipper = startFlipper(join(root, "d"), outside);
    let lines: string[];
    try {
      const calls: string[] = [];
      for (let i = 0; i < 300; i++) {
        const patch = [
          "*** Begin Patch",
          `*** Add File: ${join(root, "d", `p${i}.txt`)}`,
          `+attempt ${i}`,
          `*** Update File: ${join(root, "d", "f")}`,
          "@@",
          "-SECRET outside the root",
          `+changed by attempt ${i}`,
          "*** End Patch",
        ].join("\n");
        calls.push(JSON.stringify({ tool: "apply_patch", input: { patch } }));
      }
      const run = await ktWithin(120_000, ["call", "--jsonl", "--root", root], { cwd: root, stateDir, stdin: `${calls.join("\n")}\n` });
      expect(run.hung).toBe(false);
      lines = run.stdout.trim().split("\n");
    } finally {
      flipper.kill("SIGKILL");
      await flipper.exited;
    }
    expect(lines).toHaveLength(300);
    const results = lines.map((l) => JSON.parse(l) as { content: string; isError: boolean; error?: { code: string } });
    expect(readdirSync(outside)).toEqual(["f"]);
    expect(readFileSync(join(outside, "f"), "utf8")).toBe("SECRET outside the root\n");
    // Only the file outside has the hunk's line: a patch that applied (or found it applied) read it.
    expect(results.filter((r) => !r.isError || r.error?.code === "ALREADY_APPLIED")).toEqual([]);
    // The race was run, not dodged: calls met the link (OUTSIDE_ROOT) and the real directory (NO_MATCH).
    const codes = new Set(results.map((r) => r.error?.code));
    expect(codes.has("OUTSIDE_ROOT")).toBe(true);
    expect(codes.has("NO_MATCH")).toBe(true);
  }, 150_000);

  // grep and glob walk the tree and open what they find by name: the same flipper, while
  // one kt process makes 300 searches of the root, must never show a name or a line from
  // outside it. Each engine of grep is raced (rg opens paths by name too), in each output
  // mode, with context lines (read again after the search); glob lists names.
  const searchRace = async (tool: "grep" | "glob", engine: "builtin" | "rg") => {
    const { tmp, work, stateDir } = setup();
    using _ = tmp;
    const root = join(work, "root");
    const outside = join(work, "outside");
    mkdirSync(join(root, "d"), { recursive: true });
    mkdirSync(outside);
    // Outside first, so that a name from there would be among the newest listed, not cut off.
    writeFileSync(join(outside, "SECRET_NAME.txt"), "needle SECRET too\n");
    for (let i = 0; i < 20; i++) writeFileSync(join(outside, `f${i}`), "SECRET before\nneedle SECRET outside the root\nSECRET after\n");
    // Files searched (and, by glob, stat'ed) before root/d is read, and files in root/d
    // opened one after the other: the windows in which a swap can land.
    for (let i = 0; i < 200; i++) writeFileSync(join(root, `t${i}.txt`), "nothing here\n");
    writeFileSync(join(root, "top.txt"), "needle at the top\n");
    for (let i = 0; i < 20; i++) writeFileSync(join(root, "d", `f${i}`), "before\nneedle inside\nafter\n");
    const flipper = Bun.spawn(
      [process.execPath, "-e", `
        const { existsSync, renameSync, rmSync, symlinkSync } = require("node:fs");
        const [d, saved, outside] = process.argv.slice(-3);
        let said = false;
        for (;;) {
          try { renameSync(d, saved); } catch {}
          try { symlinkSync(outside, d); } catch {}
          // The link stays a while too: a walk reads a directory once, and only a read
          // that lands while it is a link can go astray.
          const held = performance.now() + Math.random() * 0.3;
          while (performance.now() < held);
          if (existsSync(saved)) {
            try { rmSync(d, { recursive: true, force: true }); renameSync(saved, d); } catch {}
          }
          const until = performance.now() + Math.random() * 0.3;
          while (performance.now() < until);
          if (!said) { said = true; require("node:fs").writeSync(1, "flipping\\n"); }
        }`, join(root, "d"), join(root, "d.saved"), outside],
      { stdout: "pipe", stderr: "ignore" },
    );
    // The searches are quick (300 in a fraction of a second): they start once the swaps have.
    await flipper.stdout.getReader().read();
    const modes = [{ output_mode: "content", context: 1 }, { output_mode: "files_with_matches" }, { output_mode: "count" }];
    let lines: string[];
    try {
      const calls: string[] = [];
      for (let i = 0; i < 300; i++) {
        const input = tool === "glob" ? { pattern: "**/*", path: root, head_limit: 1000 } : { pattern: "needle", path: root, ...modes[i % 3] };
        calls.push(JSON.stringify({ tool, input }));
      }
      const run = await ktWithin(120_000, ["call", "--jsonl", "--root", root], { cwd: root, stateDir, stdin: `${calls.join("\n")}\n`, env: { KT_GREP_ENGINE: engine } });
      expect(run.hung).toBe(false);
      expect(run.stderr).toBe("");
      lines = run.stdout.trim().split("\n");
    } finally {
      flipper.kill("SIGKILL");
      await flipper.exited;
    }
    expect(lines).toHaveLength(300);
    const results = lines.map((l) => JSON.parse(l) as { content: string; isError: boolean });
    expect(results.filter((r) => r.content.includes("SECRET")).map((r) => r.content)).toEqual([]);
    expect(results.filter((r) => r.isError)).toEqual([]);
    // The race was run, not dodged: some searches found root/d's file, and some met root/d
    // while it was away or a link (which the walk does not follow).
    const seesD = (r: { content: string }) => r.content.includes(join("d", "f0"));
    expect(results.some(seesD)).toBe(true);
    expect(results.some((r) => !seesD(r))).toBe(true);
    expect(results.every((r) => r.content.includes("top.txt"))).toBe(true);
  };
  test("item 10: the same swap never lets glob list a name from outside the root (300 attempts)", () => searchRace("glob", "builtin"), 150_000);
  test("item 10: the same swap never lets grep's built-in engine show a line or name from outside the root (300 attempts)", () => searchRace("grep", "builtin"), 150_000);
  test("item 10: the same swap never lets grep's rg engine show a line or name from outside the root (300 attempts)", () => searchRace("grep", "rg"), 150_000);

  test("item 11: /proc/self/fd/N of a pipe is not a file under the root; suggestions never name paths outside the root", () => {
    const { tmp, work, stateDir } = setup();
    using _ = tmp;
    const root = join(work, "root");
    mkdirSync(root);
    const piped = Bun.spawnSync(["bash", "-c", `echo | "${KT}" write /proc/self/fd/0 --content X --root "${root}"; echo "exit $?"`], { cwd: root, env: ENV(stateDir) });
    const r = { stdout: piped.stdout.toString() };
    expect(r.stdout).toEndWith("exit 1\n");
    expect(r.stdout.replace(/exit 1\n$/, "")).toMatch(/^\/proc\/self\/fd\/0 is not a file on disk \(it is pipe:\[\d+\]\); kt's file tools work on files\. Use bash to read from or write to a pipe or socket\.\n$/);
    expect(readdirSync(root)).toEqual([]);

    writeFileSync(join(work, "budget.ts"), "outside\n");
    writeFileSync(join(root, "budgets.ts"), "inside\n");
    const miss = kt(["read", "root/budget.ts", "--root", root], { cwd: work, stateDir });
    expect(miss.exitCode).toBe(1);
    expect(miss.stdout).toBe(`File not found: ${root}/budget.ts. Did you mean one of these? root/budgets.ts\n`);
  });

  test("item 12: a --root that is a file is refused; an empty path is refused", () => {
    const { tmp, work, stateDir } = setup();
    using _ = tmp;
    writeFileSync(join(work, "a.txt"), "a\n");
    const r = kt(["read", "a.txt", "--root", "a.txt"], { cwd: work, stateDir });
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe("The root a.txt (from --root) is a file, not a directory. Give the directory kt is to be confined to.\n");
    for (const tool of ["read", "write", "edit"]) {
      const input = tool === "read" ? { file_path: "" } : tool === "write" ? { file_path: "", content: "x" } : { file_path: "", old_string: "a", new_string: "b" };
      const e = kt([tool, "--json"], { cwd: work, stateDir, stdin: JSON.stringify(input) });
      expect(e.exitCode).toBe(1);
      expect(JSON.parse(e.stdout).content).toBe("The path is empty. Give the path of a file or directory (absolute preferred).");
    }
    expect(kt(["read", ""], { cwd: work, stateDir }).stdout).toBe("The path is empty. Give the path of a file or directory (absolute preferred).\n");
  });

  test("item 12: an empty --root (a script's unset variable) is refused everywhere, never read as no confinement; undo and history refuse a bad root as a usage error", () => {
    const { tmp, work, stateDir } = setup();
    using _ = tmp;
    writeFileSync(join(work, "a.txt"), "a\n");
    const empty = "The root given with --root is empty. Give the directory kt is to be confined to, or leave --root out.";
    const r = kt(["read", "/etc/passwd", "--root", ""], { cwd: work, stateDir });
    expect([r.exitCode, r.stdout]).toEqual([1, `${empty}\n`]);
    const c = kt(["call", "--jsonl", "--root", ""], { cwd: work, stateDir, stdin: `${JSON.stringify({ tool: "read", input: { file_path: "/etc/passwd" } })}\n` });
    expect(c.stdout).not.toContain("root:");
    expect(c.stderr).toStartWith(`kt call: ${empty}`);
    const m = kt(["mcp", "--root", ""], { cwd: work, stateDir, stdin: "" });
    expect([m.exitCode, m.stderr.split("\n")[0]]).toEqual([2, `kt mcp: ${empty}`]);
    for (const [cmd, root, why] of [["undo", "", empty], ["history", "", empty], ["undo", "a.txt", "The root a.txt (from --root) is a file, not a directory. Give the directory kt is to be confined to."]] as const) {
      const args = cmd === "undo" ? ["undo", "--last", "--root", root] : ["history", "a.txt", "--root", root];
      const u = kt(args, { cwd: work, stateDir });
      expect([u.exitCode, u.stderr.split("\n")[0]]).toEqual([2, `kt ${cmd}: ${why}`]);
    }
    // An empty KT_ROOT is unset, as empty environment variables usually are.
    expect(kt(["read", "a.txt"], { cwd: work, stateDir, env: { KT_ROOT: "" } }).exitCode).toBe(0);
  });

  test("item 13: two session names never share a directory: ending col/x leaves col_x's process and log alone", () => {
    const { tmp, work, stateDir } = setup();
    using _ = tmp;
    try {
      for (const session of ["col/x", "col_x"]) expect(kt(["ps", "start", "sleep 1000", "--session", session], { cwd: work, stateDir }).exitCode).toBe(0);
      expect(readdirSync(join(stateDir, "sessions")).sort()).toEqual(["col%2Fx", "col_x"]);
      const end = kt(["session", "end", "--session", "col/x"], { cwd: work, stateDir });
      expect(end.exitCode).toBe(0);
      expect(readdirSync(join(stateDir, "sessions"))).toEqual(["col_x"]);
      const list = kt(["ps", "list", "--session", "col_x"], { cwd: work, stateDir });
      expect(list.stdout).toContain("p1");
      expect(list.stdout).toContain("running");
      expect(readdirSync(join(stateDir, "sessions", "col_x", "proc")).some((f) => f.endsWith(".log"))).toBe(true);
    } finally {
      kt(["session", "end", "--session", "col_x"], { cwd: work, stateDir });
      kt(["session", "end", "--session", "col/x"], { cwd: work, stateDir });
    }
  });
});

describe("issue 11: processes (the writer's part)", () => {
  test("item 16: stale temp files of dead kt processes are removed by the next write in their directory", () => {
    const { tmp, work, stateDir } = setup();
    using _ = tmp;
    const dead = join(work, ".a.txt.kt-99999999-abc123.tmp");
    const live = join(work, `.a.txt.kt-${process.pid}-def456.tmp`);
    const other = join(work, ".a.txt.kt-notapid.tmp");
    for (const f of [dead, live, other]) writeFileSync(f, "half written");
    const r = kt(["write", "b.txt", "--content", "x\n"], { cwd: work, stateDir });
    expect(r.exitCode).toBe(0);
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(live)).toBe(true);
    expect(existsSync(other)).toBe(true);
  });
});

test("issue 11: item 16: apply_patch and undo remove stale temp files of dead kt processes in the directories they change", () => {
  const { tmp, work, stateDir } = setup();
  using _ = tmp;
  mkdirSync(join(work, "sub"));
  writeFileSync(join(work, "sub", "a.txt"), "a\n");
  const dead = [join(work, "sub", ".a.txt.kt-99999999-abc123.tmp"), join(work, ".b.txt.kt-99999998-def456.tmp")];
  for (const f of dead) writeFileSync(f, "half written");
  const p = kt(["patch", "*** Begin Patch\n*** Update File: sub/a.txt\n-a\n+b\n*** Add File: b.txt\n+b\n*** End Patch"], { cwd: work, stateDir });
  expect(p.exitCode).toBe(0);
  for (const f of dead) expect(existsSync(f)).toBe(false);
  writeFileSync(dead[0]!, "half written");
  const u = kt(["undo", "--last"], { cwd: work, stateDir });
  expect(u.exitCode).toBe(0);
  expect(existsSync(dead[0]!)).toBe(false);
  expect(readdirSync(join(work, "sub"))).toEqual(["a.txt"]);
});

describe("issue 11: output framing", () => {
  test("item 17: a newline or escape in a path never forges a line or reaches the terminal raw", () => {
    const { tmp, work, stateDir } = setup();
    using _ = tmp;
    const forged = "nl\n     1→FAKE LINE";
    writeFileSync(join(work, forged), "real\n");
    mkdirSync(join(work, "sub\x1b[31m"));
    writeFileSync(join(work, "sub\x1b[31m", "x"), "");
    const list = kt(["read", "."], { cwd: work, stateDir });
    expect(list.stdout).toBe(`${work}/\nsub\\x1b[31m/\n  x\nnl\\n     1→FAKE LINE\n`);
    const read = kt(["read", forged], { cwd: work, stateDir });
    expect(read.stdout).toBe(`${work}/nl\\n     1→FAKE LINE\n     1→real\n`);
    const miss = kt(["read", "gone\x1b]0;owned\x07"], { cwd: work, stateDir });
    expect(miss.stdout).toBe(`File not found: ${work}/gone\\x1b]0;owned\\x07. Use glob to search for it by name, or read the parent directory to list what is there.\n`);
    const w = kt(["write", "new\nline.txt", "--content", "x"], { cwd: work, stateDir });
    expect(w.stdout).toBe(`Wrote ${work}/new\\nline.txt (1 line).\n`);
    expect(readFileSync(join(work, "new\nline.txt"), "utf8")).toBe("x");
    const b = kt(["bash", "true", "--workdir", "sub\x1b[31m"], { cwd: work, stateDir });
    expect(b.stdout).toMatch(new RegExp(`^\\$ true\\n\\[exit code 0 · [0-9.]+s · cwd ${work}/sub\\\\x1b\\[31m\\]\\n$`));
  });

  test("item 17: apply_patch shows every path it names on one line: an escape or a newline (a quoted git path) never reaches the answer raw", () => {
    const { tmp, work, stateDir } = setup();
    using _ = tmp;
    const add = kt(["patch", "*** Begin Patch\n*** Add File: e\x1b[31mvil\n+b\n*** End Patch"], { cwd: work, stateDir });
    expect(add.stdout).toBe(`Success. Updated the following files:\nA ${work}/e\\x1b[31mvil\n`);
    expect(readFileSync(join(work, "e\x1b[31mvil"), "utf8")).toBe("b\n");
    const miss = kt(["patch", "*** Begin Patch\n*** Update File: gone\x07x\n@@\n-a\n+b\n*** End Patch"], { cwd: work, stateDir });
    expect(miss.stdout).toBe(`Refusing to update ${work}/gone\\x07x: the file does not exist. Nothing was changed. To create it, use "*** Add File: gone\\x07x".\n`);
    const git = kt(["patch", "--patch-file", "-"], { cwd: work, stateDir, stdin: '--- /dev/null\n+++ "b/q\\nx"\n@@ -0,0 +1 @@\n+x\n' });
    expect(git.stdout).toBe(`Success. Updated the following files:\nA ${work}/q\\nx\n`);
    expect(readFileSync(join(work, "q\nx"), "utf8")).toBe("x\n");
  });

  test.skipIf(!Bun.which("script"))("item 18: on a terminal, control characters in content are shown as pictures; piped, they are faithful", () => {
    const { tmp, work, stateDir } = setup();
    using _ = tmp;
    const text = `${"plain text line\n".repeat(20)}a\x1b]0;TITLE\x07b\x08c\u009bd\n`;
    writeFileSync(join(work, "ctl.txt"), text);
    const piped = kt(["read", "ctl.txt", "--offset", "21"], { cwd: work, stateDir });
    expect(piped.stdout).toBe(`${work}/ctl.txt\n    21→a\x1b]0;TITLE\x07b\x08c\u009bd\n`);
    const tty = Bun.spawnSync(["script", "-qec", `"${KT}" read ctl.txt --offset 21`, "/dev/null"], { cwd: work, env: ENV(stateDir) });
    const shown = tty.stdout.toString().replace(/\r\n/g, "\n");
    expect(shown).toBe(`${work}/ctl.txt\n    21→a␛]0;TITLE␇b␈c\\u009bd\n`);
  });

  test("item 18: a NUL byte past the first 4 KB makes the file binary for read and edit, never echoed", () => {
    const { tmp, work, stateDir } = setup();
    using _ = tmp;
    writeFileSync(join(work, "late.txt"), `${"text line\n".repeat(500)}nul\0here\n`);
    const r = kt(["read", "late.txt"], { cwd: work, stateDir });
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe(`${work}/late.txt is a binary file (NUL bytes past its start, 5 KB); its bytes are not shown. Use bash with a suitable tool (e.g. file, xxd | head, unzip -l) if you need to inspect it.\n`);
    const e = kt(["edit", "late.txt", "--old-string", "nul", "--new-string", "x", "--skip-read-check"], { cwd: work, stateDir });
    expect(e.exitCode).toBe(1);
    expect(e.stdout).not.toContain("\0");
    expect(JSON.parse(kt(["edit", "late.txt", "--old-string", "nul", "--new-string", "x", "--skip-read-check", "--json"], { cwd: work, stateDir }).stdout).error.code).toBe("BINARY_FILE");
    // apply_patch too: its snippet would echo the NUL.
    const p = kt(["patch", "--patch-file", "-", "--json"], { cwd: work, stateDir, stdin: "*** Begin Patch\n*** Update File: late.txt\n@@\n-nul\0here\n+x\n*** End Patch\n" });
    const patched = JSON.parse(p.stdout);
    expect([patched.error.code, patched.content]).toEqual(["BINARY_FILE", `${work}/late.txt is a binary file (NUL bytes past its start, 5 KB); patch changes text files only. Nothing was changed.`]);
    expect(readFileSync(join(work, "late.txt"), "utf8")).toBe(`${"text line\n".repeat(500)}nul\0here\n`);
  });

  test("item 20: kt call --jsonl stops at the first result nobody reads", () => {
    const { tmp, work, stateDir } = setup();
    using _ = tmp;
    const calls = Array.from({ length: 100 }, (_, i) => JSON.stringify({ tool: "write", input: { file_path: `n${i}.txt`, content: "x" } })).join("\n");
    writeFileSync(join(tmp.path, "calls.jsonl"), `${calls}\n`);
    const run = Bun.spawnSync(["bash", "-c", `"${KT}" call --jsonl < "${tmp.path}/calls.jsonl" | head -n 1 >/dev/null; echo "\${PIPESTATUS[0]}"`], { cwd: work, env: ENV(stateDir) });
    expect(run.stdout.toString().trim()).toBe("0");
    expect(run.stderr.toString()).toBe("");
    // head leaves after one line; kt may have finished a few calls into the pipe before it noticed.
    expect(readdirSync(work).length).toBeLessThan(10);
  });
});
