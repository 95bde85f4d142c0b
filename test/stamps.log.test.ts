// The log of reads (core/stamps.ts): a read's stamp is a line appended to stamps.log, not a
// row written into the index; whatever asks for stamps folds the log in first. Through the
// compiled binary (many processes at once) and in-process (a log big enough to be set aside).
import { describe, expect, test } from "bun:test";
import { appendFileSync, existsSync, mkdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { kt, ktSpawn, tempDir } from "./_helpers.ts";
import { getStamp, noteRead, sha256 } from "../src/core/stamps.ts";
import { forgetIndex } from "../src/core/state.ts";

describe("the log of reads", () => {
  test("a read writes one line to the log and opens no index; the edit after it folds the line in", () => {
    using tmp = tempDir();
    const stateDir = join(tmp.path, "state");
    writeFileSync(join(tmp.path, "a.txt"), "alpha\n");
    expect(kt(["read", "a.txt"], { cwd: tmp.path, stateDir })).toMatchObject({ exitCode: 0, stderr: "" });
    expect(existsSync(join(stateDir, "index.db"))).toBe(false);
    const lines = readFileSync(join(stateDir, "stamps.log"), "utf8").split("\n").filter(Boolean);
    expect(lines.length).toBe(1);
    const [session, path, , size, sha] = JSON.parse(lines[0]!) as [string, string, number, number, string, number];
    expect([session, path, size, sha]).toEqual(["default", join(tmp.path, "a.txt"), 6, sha256("alpha\n")]);
    expect(statSync(join(stateDir, "stamps.log")).mode & 0o777).toBe(0o600);
    expect(kt(["edit", "a.txt", "--old-string", "alpha", "--new-string", "beta"], { cwd: tmp.path, stateDir })).toMatchObject({ exitCode: 0, stderr: "" });
    // The edit's own stamp is newer than the read's line: a second edit needs no read.
    expect(kt(["edit", "a.txt", "--old-string", "beta", "--new-string", "gamma"], { cwd: tmp.path, stateDir })).toMatchObject({ exitCode: 0, stderr: "" });
    expect(readFileSync(join(tmp.path, "a.txt"), "utf8")).toBe("gamma\n");
    // Stale detection is the hash's, as before: a change on disk after the read is refused.
    expect(kt(["read", "a.txt"], { cwd: tmp.path, stateDir }).exitCode).toBe(0);
    writeFileSync(join(tmp.path, "a.txt"), "changed\n");
    const stale = kt(["edit", "a.txt", "--old-string", "changed", "--new-string", "x"], { cwd: tmp.path, stateDir });
    expect(stale.exitCode).toBe(1);
    expect(stale.stdout).toStartWith(`Refusing to edit ${tmp.path}/a.txt: the file changed on disk after you last read it`);
  });

  test("40 reads at once lose no line: one patch of all 40 files then applies", async () => {
    using tmp = tempDir();
    const stateDir = join(tmp.path, "state");
    const names = Array.from({ length: 40 }, (_, i) => `f${i}.txt`);
    for (const n of names) writeFileSync(join(tmp.path, n), `line of ${n}\n`);
    const procs = names.map((n) => ktSpawn(["read", n], { cwd: tmp.path, stateDir }));
    const codes = await Promise.all(procs.map((p) => p.exited));
    expect(codes.every((c) => c === 0)).toBe(true);
    const patch = `*** Begin Patch\n${names.map((n) => `*** Update File: ${n}\n@@\n-line of ${n}\n+new line of ${n}\n`).join("")}*** End Patch`;
    const r = kt(["patch", patch], { cwd: tmp.path, stateDir });
    expect(r.exitCode).toBe(0);
    for (const n of names) expect(readFileSync(join(tmp.path, n), "utf8")).toBe(`new line of ${n}\n`);
  });

  test("a torn line in the log (a full disk, or anyone) costs only itself", () => {
    using tmp = tempDir();
    const stateDir = join(tmp.path, "state");
    writeFileSync(join(tmp.path, "a.txt"), "alpha\n");
    writeFileSync(join(tmp.path, "b.txt"), "beta\n");
    expect(kt(["read", "a.txt"], { cwd: tmp.path, stateDir }).exitCode).toBe(0);
    appendFileSync(join(stateDir, "stamps.log"), '["default","/torn",12');
    expect(kt(["read", "b.txt"], { cwd: tmp.path, stateDir }).exitCode).toBe(0);
    appendFileSync(join(stateDir, "stamps.log"), "not json at all\n[1,2,3]\n");
    for (const [f, from, to] of [["a.txt", "alpha", "A"], ["b.txt", "beta", "B"]] as const) {
      expect(kt(["edit", f, "--old-string", from, "--new-string", to], { cwd: tmp.path, stateDir })).toMatchObject({ exitCode: 0, stderr: "" });
    }
  });

  test("sessions stay apart; ending one removes its logged reads, not another's", () => {
    using tmp = tempDir();
    const stateDir = join(tmp.path, "state");
    writeFileSync(join(tmp.path, "a.txt"), "alpha\n");
    const as = (session: string) => ({ cwd: tmp.path, stateDir, env: { KT_SESSION: session } });
    expect(kt(["read", "a.txt"], as("one")).exitCode).toBe(0);
    expect(kt(["read", "a.txt"], as("two")).exitCode).toBe(0);
    // A session that never read it is refused.
    expect(kt(["edit", "a.txt", "--old-string", "alpha", "--new-string", "x"], as("three")).exitCode).toBe(1);
    const ended = kt(["session", "end"], as("one"));
    expect(ended.exitCode).toBe(0);
    expect(ended.stdout).toBe(`Ended session "one": stopped 0 processes, removed 1 file stamp and 0 files (0 bytes).\n`);
    const refused = kt(["edit", "a.txt", "--old-string", "alpha", "--new-string", "x"], as("one"));
    expect(refused.stdout).toStartWith(`Refusing to edit ${tmp.path}/a.txt: you have not read this file in this session.`);
    expect(kt(["edit", "a.txt", "--old-string", "alpha", "--new-string", "x"], as("two"))).toMatchObject({ exitCode: 0, stderr: "" });
  });

  test("a big log is set aside once folded, appends to it still count, and it goes once folded and quiet", () => {
    using tmp = tempDir();
    const stateDir = join(tmp.path, "state");
    mkdirSync(stateDir, { mode: 0o700 });
    const warnings: string[] = [];
    const ctx = { stateDir, session: "big", warn: (m: string) => void warnings.push(m) };
    const dir = join(tmp.path, "d".repeat(200));
    const stamp = (i: number) => ({ mtimeMs: i, size: i, sha256: sha256(String(i)) });
    // Over 1 MiB of lines, appended with no index open (as `kt read` processes do).
    for (let i = 0; i < 4000; i++) noteRead(ctx, join(dir, `f${i}`), stamp(i));
    expect(statSync(join(stateDir, "stamps.log")).size).toBeGreaterThan(1 << 20);
    expect(getStamp(ctx, join(dir, "f1234"))?.sha256).toBe(sha256("1234"));
    expect(existsSync(join(stateDir, "stamps.log"))).toBe(false);
    expect(existsSync(join(stateDir, "stamps.log.old"))).toBe(true);
    // A read whose append began before it was set aside lands in the old log: still folded.
    appendFileSync(join(stateDir, "stamps.log.old"), `\n${JSON.stringify(["big", join(dir, "late"), 1, 1, sha256("late"), Date.now()])}\n`);
    // And a read of another process begins a new log.
    writeFileSync(join(tmp.path, "x.txt"), "x\n");
    expect(kt(["read", "x.txt", "--session", "big"], { cwd: tmp.path, stateDir }).exitCode).toBe(0);
    expect(getStamp(ctx, join(dir, "late"))?.sha256).toBe(sha256("late"));
    expect(getStamp(ctx, join(tmp.path, "x.txt"))?.sha256).toBe(sha256("x\n"));
    // Quiet for over a minute and folded: removed; what it held stays in the index.
    const past = new Date(Date.now() - 120_000);
    utimesSync(join(stateDir, "stamps.log.old"), past, past);
    expect(getStamp(ctx, join(dir, "f3999"))?.sha256).toBe(sha256("3999"));
    expect(existsSync(join(stateDir, "stamps.log.old"))).toBe(false);
    expect(getStamp(ctx, join(dir, "f0"))?.sha256).toBe(sha256("0"));
    expect(getStamp(ctx, join(dir, "late"))?.sha256).toBe(sha256("late"));
    expect(warnings).toEqual([]);
    forgetIndex(stateDir);
  });
});
