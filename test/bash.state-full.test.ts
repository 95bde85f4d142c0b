// kt bash with a state directory that cannot hold a log (SPEC §8.7, issue 29): the command
// still runs, and the result says its log could not be kept — never exit 3. The state
// directory sits on a real 256 KB tmpfs (root only), filled to the last block, then read-only.
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir, type TempDir } from "./_helpers.ts";
import { ktAsync } from "./_process.ts";

const ROOT = process.getuid?.() === 0 && process.platform === "linux";
const mounts: { dir: string; tmp: TempDir }[] = [];
afterEach(() => {
  for (const { dir, tmp } of mounts.splice(0)) {
    Bun.spawnSync(["umount", "-l", dir]);
    tmp[Symbol.dispose]();
  }
});

function fullDisk(): { cwd: string; stateDir: string; disk: string } {
  const tmp = tempDir();
  const disk = join(tmp.path, "disk");
  mkdirSync(disk);
  expect(Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", disk]).exitCode).toBe(0);
  mounts.push({ dir: disk, tmp });
  const cwd = join(tmp.path, "work");
  mkdirSync(cwd);
  return { cwd, stateDir: join(disk, "state"), disk };
}

const NOTE = (stateDir: string) =>
  `kt could not keep this command's log: the disk holding the state directory ${stateDir} is full. It ran without one: the output above is all there is, and nothing of it was saved. Free space there, or set KT_STATE_DIR (or --state-dir) to a directory on another disk.`;

describe.skipIf(!ROOT)("a full state disk", () => {
  test("kt bash with a full state disk still runs the command and says the log could not be kept (golden)", async () => {
    const { cwd, stateDir, disk } = fullDisk();
    const env = { cwd, stateDir };
    // The state directory exists, with its index, before the disk fills up.
    expect((await ktAsync(["bash", "echo warm"], env)).exitCode).toBe(0);
    Bun.spawnSync(["dd", "if=/dev/zero", `of=${join(disk, "fill")}`, "bs=4k"], { stderr: "ignore" });
    const r = await ktAsync(["bash", "echo hi; echo err >&2; touch ran; exit 4"], env);
    expect(r.exitCode).toBe(0);
    expect(r.stdout.replace(/\d+\.\ds/, "<s>")).toBe(`$ echo hi; echo err >&2; touch ran; exit 4\nhi\nerr\n[exit code 4 · <s> · cwd ${cwd}]\n${NOTE(stateDir)}\n`);
    expect(existsSync(join(cwd, "ran"))).toBe(true);
    // At the budget a command without a log is stopped, not handed over.
    const slow = await ktAsync(["bash", "echo start; sleep 30", "--timeout-ms", "500"], env);
    expect(slow.exitCode).toBe(0);
    expect(slow.stdout.replace(/\d+\.\ds/g, "<s>")).toBe(
      `$ echo start; sleep 30\nstart\n[killed by SIGTERM · <s> · cwd ${cwd}]\nThe command was still running after <s> and was stopped: without a log it could not be moved to the background.\n${NOTE(stateDir)}\n`,
    );
  }, 30_000);

  test("a state directory that cannot be written at all (read-only): the command runs, exit 0, the reason named", async () => {
    const { cwd, stateDir, disk } = fullDisk();
    const env = { cwd, stateDir };
    // Without a host (which would keep the index open for writing), so that the disk can be made read-only.
    expect((await ktAsync(["bash", "echo warm"], { ...env, env: { KT_NO_HOST: "1" } })).exitCode).toBe(0);
    await Bun.sleep(300);
    expect(Bun.spawnSync(["mount", "-o", "remount,ro", disk]).exitCode).toBe(0);
    const r = await ktAsync(["bash", "echo hi"], env);
    expect(r.exitCode).not.toBe(3);
    expect(r.stdout).toStartWith(`$ echo hi\nhi\n[exit code 0 · `);
    expect(r.stdout).toContain(`kt could not keep this command's log: the disk holding the state directory ${stateDir} is read-only. It ran without one`);
    writeFileSync(join(cwd, "x"), "");
    rmSync(join(cwd, "x"));
  }, 30_000);
});
