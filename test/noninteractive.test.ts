// Nothing waits on a person (SPEC §8.7, issue 29): a command that would open an editor or ask a
// question fails within 5 s, and its result says what happened. Each case runs the real
// program through the compiled binary: git, npm, ssh against a real sshd, sudo, python3.
import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CAN_RUN_AS_NOBODY, ktAsNobody } from "./_helpers.ts";
import { endSandboxes, ktAsync, norm, sandbox } from "./_process.ts";
import { NO_EDITOR_MESSAGE } from "../src/process/env.ts";

afterEach(endSandboxes);

function setup() {
  const { tmp, stateDir, cwd } = sandbox();
  const env = { cwd, stateDir };
  return { tmp, stateDir, cwd, env };
}

/** Runs `kt bash command`, timing it. */
async function timed(env: { cwd: string; stateDir: string }, ...args: string[]) {
  const started = performance.now();
  const r = await ktAsync(["bash", ...args], env);
  return { ...r, ms: performance.now() - started };
}

const git = (cwd: string, ...args: string[]) => {
  const r = Bun.spawnSync(["git", ...args], { cwd, env: { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t", GIT_EDITOR: "true" } });
  return r.stdout.toString();
};

function repo(cwd: string): void {
  git(cwd, "init", "-q", "-b", "main");
  git(cwd, "config", "user.email", "t@t");
  git(cwd, "config", "user.name", "t");
  writeFileSync(join(cwd, "f.txt"), "one\n");
  git(cwd, "add", "f.txt");
  git(cwd, "commit", "-qm", "one");
}

describe("editors fail at once, saying how to give the text instead", () => {
  test("git commit without -m (golden)", async () => {
    const { tmp, cwd, env } = setup();
    repo(cwd);
    writeFileSync(join(cwd, "f.txt"), "two\n");
    git(cwd, "add", "f.txt");
    const r = await timed(env, "git commit");
    expect(r.ms).toBeLessThan(5000);
    expect(r.exitCode).toBe(0);
    expect(norm(r.stdout, tmp)).toBe(
      `$ git commit\n${NO_EDITOR_MESSAGE}\nerror: There was a problem with the editor 'sh -c 'echo "$__KT_NO_EDITOR" >&2; exit 1' kt-no-editor'.\nPlease supply the message using either -m or -F option.\n[exit code 1 · <s> · cwd <tmp>/work]\n`,
    );
    expect(git(cwd, "log", "--format=%s")).toBe("one\n");
  });

  test("git rebase --continue after a resolved conflict: fails fast; GIT_EDITOR=true, as the message says, continues", async () => {
    const { cwd, env } = setup();
    repo(cwd);
    git(cwd, "checkout", "-qb", "topic");
    writeFileSync(join(cwd, "f.txt"), "topic\n");
    git(cwd, "commit", "-qam", "topic");
    git(cwd, "checkout", "-q", "main");
    writeFileSync(join(cwd, "f.txt"), "main\n");
    git(cwd, "commit", "-qam", "main");
    git(cwd, "checkout", "-q", "topic");
    Bun.spawnSync(["git", "rebase", "main"], { cwd });
    writeFileSync(join(cwd, "f.txt"), "resolved\n");
    git(cwd, "add", "f.txt");
    const r = await timed(env, "git rebase --continue");
    expect(r.ms).toBeLessThan(5000);
    expect(r.stdout).toContain(`${NO_EDITOR_MESSAGE}\n`);
    expect(r.stdout).toContain("[exit code 1 · ");
    expect(existsSync(join(cwd, ".git", "rebase-merge"))).toBe(true);
    const again = await timed(env, "GIT_EDITOR=true git rebase --continue");
    expect(again.stdout).toContain("[exit code 0 · ");
    expect(git(cwd, "log", "--format=%s")).toBe("topic\nmain\none\n");
  });

  test("git rebase -i: refused by bash; under ps start (no terminal) the sequence editor fails at once", async () => {
    const { tmp, cwd, env } = setup();
    repo(cwd);
    const refused = await timed(env, "git rebase -i HEAD");
    expect(refused.exitCode).toBe(1);
    expect(refused.stdout).toStartWith(`Refusing to run "git rebase -i HEAD": it opens an interactive git prompt or editor`);
    const started = performance.now();
    const ps = norm((await ktAsync(["ps", "start", "git rebase -i HEAD"], env)).stdout, tmp);
    expect(performance.now() - started).toBeLessThan(5000);
    expect(ps).toStartWith(`Process p1 exited immediately with code 1:\n  ${NO_EDITOR_MESSAGE}\n`);
  });

  test("a terminal started by ps start keeps the caller's editor: the model types into it there", async () => {
    const { cwd, env } = setup();
    const r = await ktAsync(["ps", "start", "--tty", 'echo "editor=[$GIT_EDITOR] prompt=[$GIT_TERMINAL_PROMPT]"'], { ...env, env: { GIT_EDITOR: "vim" } });
    expect(r.stdout).toContain("editor=[vim] prompt=[]");
    const piped = await ktAsync(["bash", 'echo "prompt=[$GIT_TERMINAL_PROMPT] ssh=[$GIT_SSH_COMMAND] debian=[$DEBIAN_FRONTEND]"'], env);
    expect(piped.stdout).toContain("prompt=[0] ssh=[ssh -o BatchMode=yes] debian=[noninteractive]");
    expect(cwd).toBeTruthy();
  });
});

describe("prompts read end-of-file and the result says so", () => {
  const HINT = (prompt: string) =>
    `The command stopped at a prompt (${JSON.stringify(prompt)}) and read end-of-file: bash gives commands no input. Answer it on the command line (a flag such as --yes, -y or --non-interactive, the value as an argument, or piped in: printf 'answer\\n' | command), or run it with process start and answer with process write.`;

  test("npm init: stops at its first question, within 5 s, named (golden tail)", async () => {
    const { cwd, env } = setup();
    const r = await timed(env, "npm init");
    expect(r.ms).toBeLessThan(5000);
    expect(r.stdout).toEndWith(`package name: (work) \n[exit code 1 · ${/· (\d+\.\ds) ·/.exec(r.stdout)![1]} · cwd ${cwd}]\n${HINT("package name: (work)")}\n`);
    expect(existsSync(join(cwd, "package.json"))).toBe(false);
  });

  test("python3 -c 'input()' ends on EOFError at once; a read of a question in shell is named", async () => {
    const { env } = setup();
    const py = await timed(env, `python3 -c "input()"`);
    expect(py.ms).toBeLessThan(5000);
    expect(py.stdout).toContain("EOFError: EOF when reading a line\n[exit code 1 · ");
    const sh = await timed(env, `printf "Continue? [y/N] "; read answer || exit 1`);
    expect(sh.stdout).toEndWith(`${HINT("Continue? [y/N]")}\n`);
    // A prompt answered (here by a pipe) and a clean exit get no hint.
    const answered = await timed(env, `printf "Continue? [y/N] "; echo y | read answer`);
    expect(answered.stdout).not.toContain("The command stopped at a prompt");
  });

  test.skipIf(!CAN_RUN_AS_NOBODY || !Bun.which("sudo"))("sudo -k true as a user who must type a password: fails within 5 s", () => {
    const { tmp, cwd } = setup();
    chmodSync(tmp, 0o755);
    chmodSync(cwd, 0o777);
    const started = performance.now();
    const r = ktAsNobody(["bash", "sudo -k true"], { cwd, parent: tmp });
    expect(performance.now() - started).toBeLessThan(5000);
    expect(r.stdout).toContain("sudo: a terminal is required to read the password");
    expect(r.stdout).toContain("[exit code 1 · ");
  });
});

describe("ssh asking for a password or a host key: fails within 5 s", () => {
  const SSHD = Bun.which("sshd") ?? (existsSync("/usr/sbin/sshd") ? "/usr/sbin/sshd" : null);
  test.skipIf(SSHD === null || process.getuid?.() !== 0)("against a real sshd on 127.0.0.1 that takes passwords only", async () => {
    const { tmp, env } = setup();
    const dir = join(tmp, "sshd");
    mkdirSync(dir);
    mkdirSync("/run/sshd", { recursive: true });
    Bun.spawnSync(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", join(dir, "hostkey")]);
    const port = 20000 + Math.floor(Math.random() * 20000);
    writeFileSync(
      join(dir, "config"),
      [`Port ${port}`, "ListenAddress 127.0.0.1", `HostKey ${join(dir, "hostkey")}`, `PidFile ${join(dir, "pid")}`, "PasswordAuthentication yes", "PubkeyAuthentication no", "KbdInteractiveAuthentication no", "UsePAM no", "StrictModes no"].join("\n") + "\n",
    );
    const sshd = Bun.spawn([SSHD!, "-D", "-e", "-f", join(dir, "config")], { stdout: "ignore", stderr: "pipe" });
    try {
      const deadline = performance.now() + 5000;
      while (performance.now() < deadline) {
        const probe = Bun.spawnSync(["bash", "-c", `exec 3<>/dev/tcp/127.0.0.1/${port}`]);
        if (probe.exitCode === 0) break;
        await Bun.sleep(50);
      }
      const quiet = "-o UserKnownHostsFile=/dev/null -o GlobalKnownHostsFile=/dev/null";
      const password = await timed(env, `ssh -p ${port} ${quiet} -o StrictHostKeyChecking=no root@127.0.0.1 true`);
      expect(password.ms).toBeLessThan(5000);
      expect(password.stdout).toContain("Permission denied");
      expect(password.stdout).toContain("[exit code 255 · ");
      const hostKey = await timed(env, `ssh -p ${port} ${quiet} root@127.0.0.1 true`);
      expect(hostKey.ms).toBeLessThan(5000);
      expect(hostKey.stdout).toContain("Host key verification failed.");
      // git runs ssh in batch mode (kt's GIT_SSH_COMMAND): no question about the host key.
      const viaGit = await timed(env, `git ls-remote ssh://root@127.0.0.1:${port}/x`);
      expect(viaGit.ms).toBeLessThan(5000);
      expect(viaGit.stdout).toContain("Host key verification failed.");
      expect(viaGit.stdout).toContain("[exit code 128 · ");
    } finally {
      sshd.kill("SIGKILL");
      await sshd.exited;
    }
  });
});
