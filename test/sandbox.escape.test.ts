// SPEC §8.2's escape suite, through dist/kt, as root and as nobody: every attempt under both
// sandboxed policies, and after each one nothing outside the sandbox has changed. A few
// attempts are also run with --sandbox off, where they succeed: the checks can fail.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CAN_RUN_AS_NOBODY, KT, kt, ktAsNobody, tempDir, type RunResult } from "./_helpers.ts";

const NOBODY = 65534;
const SECRET = "SECRET-7f3a9c";
const STORES: Record<string, string> = {
  ".ssh/id_ed25519": "dir",
  ".gnupg/private-keys-v1.d/key": "dir",
  ".aws/credentials": "dir",
  ".azure/accessTokens.json": "dir",
  ".config/gcloud/credentials.db": "dir",
  ".kube/config": "dir",
  ".docker/config.json": "file",
  ".netrc": "file",
};
const POLICIES = ["workspace-write", "read-only"] as const;
const USERS = CAN_RUN_AS_NOBODY ? (["root", "nobody"] as const) : (["root"] as const);

interface World {
  base: string;
  root: string;
  outside: string;
  tmp: string;
  home: string;
  state: string;
  suid?: string;
  rootOnly: string;
  run(args: string[], env?: Record<string, string>): RunResult;
}

/** Everything under `dir`: names and contents, to compare before and after. */
function snapshot(dir: string, skip?: string): string {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const st = statSync(p, { throwIfNoEntry: false });
      if (!st || p === skip) continue;
      if (!st.isFile() && !st.isDirectory()) out.push(`${p} (${st.mode.toString(8)})`);
      else if (st.isDirectory()) {
        out.push(`${p}/`);
        walk(p);
      } else out.push(`${p} ${st.size} ${st.nlink} ${readFileSync(p, "latin1")}`);
    }
  };
  walk(dir);
  return out.join("\n");
}

function makeWorld(user: "root" | "nobody", base: string): World {
  const owner = user === "nobody" ? NOBODY : 0;
  chmodSync(base, 0o755);
  const dirs = { root: join(base, "root"), outside: join(base, "outside"), tmp: join(base, "tmp"), home: join(base, "home"), state: join(base, "nobody-state"), rootOnly: join(base, "root-only") };
  for (const d of Object.values(dirs)) mkdirSync(d, { recursive: true, mode: 0o700 });
  writeFileSync(join(dirs.outside, "victim.txt"), "original\n");
  for (const [rel] of Object.entries(STORES)) {
    mkdirSync(join(dirs.home, rel, ".."), { recursive: true });
    writeFileSync(join(dirs.home, rel), `${SECRET} ${rel}\n`, { mode: 0o600 });
  }
  // Owned by the user who runs kt: without the sandbox it could write and read all of it.
  for (const d of [dirs.root, dirs.outside, dirs.tmp, dirs.home, dirs.state]) Bun.spawnSync(["chown", "-R", `${owner}:${owner}`, d]);
  chmodSync(dirs.rootOnly, 0o755);
  // A setuid-root program: outside a sandbox nobody could write root-only with it.
  let suid: string | undefined;
  if (user === "nobody") {
    suid = join(base, "suid-tee");
    copyFileSync("/usr/bin/tee", suid);
    chownSync(suid, 0, 0);
    chmodSync(suid, 0o4755);
  }
  const env = { HOME: dirs.home, TMPDIR: dirs.tmp };
  const run = (args: string[], extra: Record<string, string> = {}) =>
    user === "nobody" ? ktAsNobody(args, { cwd: dirs.root, parent: base, env: { ...env, ...extra } }) : kt(args, { cwd: dirs.root, stateDir: dirs.state, env: { ...env, ...extra } });
  return { base, ...dirs, ...(suid ? { suid } : {}), run };
}

/** What must not change: the outside directory, the fake home, the root-only directory, the host's /dev/shm. */
function outsideState(w: World): string {
  return [snapshot(w.outside), snapshot(w.home, otherState(w)), snapshot(w.rootOnly), readdirSync("/dev/shm").filter((n) => n.startsWith("kt-escape")).join(",")].join("\n--\n");
}

/**
 * A command that asks kt's host, through its socket, to run a write outside. The row it names
 * is a running one (the command's own, by its marker; the other kt's p1), so that the host
 * does not stop the command at once for want of its row.
 */
function hostSocketAttempt(w: World, state = w.state): string {
  const sock = join(state, "sessions", "default", "host.sock");
  const payload = `${JSON.stringify({ run: { stateDir: state, key: 0, command: `trap "" TERM; echo pwned > ${w.outside}/host.txt`, cwd: "/", log: `${w.tmp}/host.log` } })}\n`;
  const key = state === w.state ? `os.environ.get("__KT_PROCESS", "1@").split("@")[0]` : `"1"`;
  const py = `import socket, os; k = ${key}; s = socket.socket(socket.AF_UNIX); s.connect(${JSON.stringify(sock)}); s.sendall(${JSON.stringify(payload)}.replace(${JSON.stringify('"key":0')}, ${JSON.stringify('"key":')} + k).encode()); print(s.recv(10))`;
  return `/usr/bin/python3 -c '${py}'`;
}

/** The state directory of another kt, where kt keeps it when nothing says otherwise. */
function otherState(w: World): string {
  return join(w.home, ".local", "state", "kt");
}

for (const user of USERS) {
  describe(`escapes, as ${user}`, () => {
    let tmp: ReturnType<typeof tempDir>;
    let w: World;
    let server: Bun.TCPSocketListener<undefined>;
    let udp: Bun.udp.Socket<"buffer">;
    let connections = 0;
    let datagrams = 0;
    beforeAll(async () => {
      tmp = tempDir("kt-escape-");
      w = makeWorld(user, tmp.path);
      server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { open: () => void connections++, data() {} } });
      udp = await Bun.udpSocket({ hostname: "127.0.0.1", port: 0, socket: { data: () => void datagrams++ } });
      // Another kt of the same user, with its state where kt keeps it by default: its host runs too.
      const other = w.run(["ps", "start", "sleep 60"], { KT_STATE_DIR: otherState(w) });
      if (!other.stdout.startsWith("Started p1")) throw new Error(`the other kt did not start: ${other.stdout}${other.stderr}`);
    });
    afterAll(() => {
      w.run(["session", "end"]);
      w.run(["session", "end"], { KT_STATE_DIR: otherState(w) });
      server.stop(true);
      udp.close();
      tmp[Symbol.dispose]();
    });

    const bash = (policy: string, command: string, env?: Record<string, string>) => w.run(["bash", "--sandbox", policy, command], env);

    /** Runs `command` under `policy` and checks that nothing outside changed. */
    const attempt = (policy: string, command: string, env?: Record<string, string>) => {
      const before = outsideState(w);
      const r = bash(policy, command, env);
      expect(r.stderr).toBe("");
      expect(outsideState(w)).toBe(before);
      return r;
    };

    test("the checks can fail: with the sandbox off the same attempts succeed", async () => {
      const before = outsideState(w);
      const r = bash("off", `echo pwned > ${w.outside}/control.txt; cat "$HOME/.ssh/id_ed25519"; exec 3<>/dev/tcp/127.0.0.1/${server.port} && echo hi >&3`);
      expect(r.stdout).toContain(SECRET);
      expect(outsideState(w)).not.toBe(before);
      expect(readFileSync(join(w.outside, "control.txt"), "utf8")).toBe("pwned\n");
      rmSync(join(w.outside, "control.txt"));
      // Connections wait in the listen backlog while a synchronous run blocks this thread.
      const t0 = Date.now();
      while (connections === 0 && Date.now() - t0 < 2000) await Bun.sleep(10);
      expect(connections).toBe(1);
      connections = 0;
      // A command that reaches the host socket gets nothing run outside even with the sandbox
      // off: since issue 23 the host runs only a request carrying its row's secret, kept in the
      // index, which no command is given. The sandbox's own check (that the socket cannot be
      // reached at all) is the attempts above; here, that the attempt does reach a listener.
      const r2 = bash("off", hostSocketAttempt(w));
      expect(r2.stdout).toContain("b''");
      expect(existsSync(join(w.outside, "host.txt"))).toBe(false);
      expect(bash("off", hostSocketAttempt(w, otherState(w))).stdout).toContain("b''");
      expect(existsSync(join(w.outside, "host.txt"))).toBe(false);
      if (w.suid) {
        const s = bash("off", `echo pwned | ${w.suid} ${w.rootOnly}/suid.txt`);
        expect(s.exitCode).toBe(0);
        expect(existsSync(join(w.rootOnly, "suid.txt"))).toBe(true);
        rmSync(join(w.rootOnly, "suid.txt"));
      }
    });

    for (const policy of POLICIES) {
      test(`${policy}: writes outside the root — absolute, .., symlink, hard link, rename, /proc/self/root, /dev/shm, setuid`, () => {
        const r1 = attempt(policy, `echo pwned > ${w.outside}/abs.txt`);
        expect(r1.stdout).toContain("Read-only file system");
        expect(r1.stdout).toContain(`[sandbox ${policy}: writes outside `);
        attempt(policy, "echo pwned > ../outside/dotdot.txt; echo pwned >> ../outside/victim.txt");
        attempt(policy, `ln -s ${w.outside} out-link; echo pwned > out-link/via-link.txt; echo pwned >> out-link/victim.txt; rm -f out-link`);
        attempt(policy, `ln ${w.outside}/victim.txt hard.txt; echo pwned >> hard.txt; rm -f hard.txt`);
        attempt(policy, `echo pwned > "$TMPDIR/mine.txt"; mv "$TMPDIR/mine.txt" ${w.outside}/renamed.txt; mv ${w.outside}/victim.txt "$TMPDIR/stolen.txt"; rm -f "$TMPDIR/mine.txt" "$TMPDIR/stolen.txt"`);
        attempt(policy, `echo pwned > /proc/self/root${w.outside}/proc-root.txt; echo pwned > /proc/1/root${w.outside}/proc-one.txt; ls /proc/1/root${w.home}/.ssh`);
        attempt(policy, `echo pwned > /dev/shm/kt-escape-${process.pid}; ls /dev/shm`);
        if (w.suid) {
          const s = attempt(policy, `echo pwned | ${w.suid} ${w.rootOnly}/suid.txt; id -u`);
          expect(s.stdout).toContain(`\n${NOBODY}\n`);
        }
        if (policy === "read-only") attempt(policy, "echo pwned > in-root.txt");
      });

      test(`${policy}: every secret store is unreadable`, () => {
        const paths = Object.keys(STORES).map((rel) => `"$HOME/${rel}"`);
        const r = attempt(policy, `cat ${paths.join(" ")}; ls -la "$HOME"/.ssh "$HOME"/.aws; grep -r SECRET "$HOME"`);
        expect(r.stdout).not.toContain(SECRET);
        expect(r.stdout).toContain(`No such file or directory`);
        const read = w.run(["read", "--sandbox", policy, join(w.home, ".ssh/id_ed25519")]);
        expect(read.exitCode).toBe(1);
        expect(read.stdout).not.toContain(SECRET);
        expect(read.stdout).toStartWith(`Refusing to read ${w.home}/.ssh/id_ed25519, inside ${w.home}/.ssh: the ${policy} sandbox keeps it unreadable`);
      });

      test(`${policy}: no network — TCP to a server outside, DNS`, async () => {
        const r = attempt(policy, `exec 3<>/dev/tcp/127.0.0.1/${server.port} && echo sent >&3; echo query > /dev/udp/127.0.0.1/${udp.port}; getent hosts example.com || echo no-dns`);
        expect(r.stdout).toContain("no-dns");
        expect(r.stdout).toContain("Connection refused");
        await Bun.sleep(200);
        expect(connections).toBe(0);
        expect(datagrams).toBe(0);
      });

      test(`${policy}: kt's host socket and index are out of reach`, () => {
        // The host runs this very command: its socket is there, outside.
        expect(existsSync(join(otherState(w), "sessions", "default", "host.sock"))).toBe(true);
        const r = attempt(policy, `ls -la ${w.state}; ${hostSocketAttempt(w)}; ${hostSocketAttempt(w, otherState(w))}; head -c 15 ${w.state}/index.db; /usr/bin/python3 -c 'import sqlite3;print(sqlite3.connect("file:${w.state}/index.db?mode=ro",uri=True).execute("select count(*) from processes").fetchall())'`);
        expect(r.stdout).toContain("No such file or directory");
        expect(r.stdout).not.toContain("SQLite format 3");
        expect(r.stdout).not.toContain("b'ok");
        Bun.sleepSync(300);
        expect(existsSync(join(w.outside, "host.txt"))).toBe(false);
      });

      test(`${policy}: kt run inside the sandbox cannot turn it off`, () => {
        const inner = `KT_STATE_DIR="$TMPDIR/inner-state" ${KT} bash --sandbox off 'echo pwned > ${w.outside}/kt-inside.txt; cat "$HOME/.ssh/id_ed25519"'`;
        const r = attempt(policy, inner);
        expect(r.stdout).toContain("Read-only file system");
        expect(r.stdout).not.toContain(`${SECRET} .ssh`);
      });

      test(`${policy}: a background process and a terminal process try after the call returned`, async () => {
        const before = outsideState(w);
        const bg = bash(policy, `(sleep 2.5; echo pwned > ${w.outside}/bg.txt; cat "$HOME/.netrc" > "$TMPDIR/bg-secret.txt") > /dev/null 2>&1 &`);
        expect(bg.exitCode).toBe(0);
        const tty = w.run(["ps", "start", "--sandbox", policy, "--tty", `sleep 2.5; echo pwned > ${w.outside}/tty.txt; exec 3<>/dev/tcp/127.0.0.1/${server.port}; sleep 0.3`]);
        expect(tty.stdout).toContain("Started p");
        const pipes = w.run(["ps", "start", "--sandbox", policy, `sleep 2.5; echo pwned > ${w.outside}/ps.txt; exec 3<>/dev/tcp/127.0.0.1/${server.port}`]);
        expect(pipes.stdout).toContain("Started p");
        await Bun.sleep(2500);
        expect(outsideState(w)).toBe(before);
        expect(connections).toBe(0);
        const leaked = join(w.tmp, "bg-secret.txt");
        if (existsSync(leaked)) {
          expect(readFileSync(leaked, "utf8")).not.toContain(SECRET);
          rmSync(leaked);
        }
      });

      test(`${policy}: ps write drives a shell to try them`, () => {
        const before = outsideState(w);
        const start = w.run(["ps", "start", "--sandbox", policy, "bash"]);
        const id = /Started (p\d+)/.exec(start.stdout)?.[1];
        expect(id).toBeDefined();
        const wrote = w.run(["ps", "write", id!, `echo pwned > ${w.outside}/ps-write.txt; cat "$HOME/.kube/config"; echo done-$((6*7))\n`]);
        expect(wrote.stdout).toContain("done-42");
        expect(wrote.stdout).toContain("Read-only file system");
        expect(wrote.stdout).not.toContain(SECRET);
        w.run(["ps", "stop", id!]);
        expect(outsideState(w)).toBe(before);
      });
    }
  });
}
