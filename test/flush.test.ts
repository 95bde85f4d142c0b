// Making many new files durable at once (src/core/flush.ts, issue 32: "the fsyncs, what
// durability requires, no more"): one syncfs per file system for a change of many files on a
// Linux whose syncfs reports writeback errors, else one fsync per file, which names the file
// that failed. The seam replaces only the two libc calls; the descriptors, fsyncs and closes
// are real. Through the compiled binary, strace shows which calls kt makes.
import { afterEach, describe, expect, test } from "bun:test";
import { closeSync, fstatSync, mkdirSync, openSync, readFileSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { BUSY_BYTES, flushDirs, flushFiles, MANY, setLibcForTest, setUnwrittenForTest, syncfsReportsErrors } from "../src/core/flush.ts";
import { KT, straceWorks, tempDir } from "./_helpers.ts";

afterEach(() => {
  setLibcForTest(undefined);
  setUnwrittenForTest(undefined);
});

/** Fake libc calls; the system has `unwritten` bytes left to write (default: nothing). */
function fake(result = 0, unwritten: number | "unknown" = 0) {
  setUnwrittenForTest(() => (unwritten === "unknown" ? undefined : unwritten));
  const calls = { syncfs: [] as number[], ranges: [] as number[] };
  setLibcForTest({ syncfs: (fd) => (calls.syncfs.push(fd), result), syncFileRange: (fd) => void calls.ranges.push(fd) });
  return calls;
}

function newFiles(dir: string, n: number): number[] {
  return Array.from({ length: n }, (_, i) => {
    const fd = openSync(join(dir, `f${i}`), "w");
    writeSync(fd, `file ${i}\n`);
    return fd;
  });
}

const isClosed = (fd: number) => {
  try {
    fstatSync(fd);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EBADF";
  }
};

describe("syncfs is trusted only where it reports writeback errors", () => {
  test.each([
    ["5.8.0", true],
    ["5.7.19-generic", false],
    ["6.18.44-fc-v1045", true],
    ["4.18.0-513.el8.x86_64", false],
    ["10.0.1", true],
    ["", false],
    ["weird", false],
  ])("Linux %p: %p", (release, trusted) => {
    expect(syncfsReportsErrors(release)).toBe(trusted);
  });
});

describe("flushFiles", () => {
  test(`${MANY} files or more on two file systems: one syncfs through a descriptor of each, no fsync needed, every descriptor closed`, async () => {
    using tmp = tempDir();
    const fds = newFiles(tmp.path, MANY + 2);
    const calls = fake();
    // Two "file systems": the first three files' and the rest.
    await flushFiles(fds.map((fd, i) => ({ fd, dev: i < 3 ? 1 : 2, size: 7 })), (e) => e);
    expect(calls.syncfs).toEqual([fds[0]!, fds[3]!]);
    expect(fds.every(isClosed)).toBe(true);
  });

  test(`fewer than ${MANY} files: an fsync each, no syncfs`, async () => {
    using tmp = tempDir();
    const fds = newFiles(tmp.path, MANY - 1);
    const calls = fake();
    await flushFiles(fds.map((fd) => ({ fd, dev: 1, size: 7 })), (e) => e);
    expect(calls.syncfs).toEqual([]);
    expect(fds.every(isClosed)).toBe(true);
  });

  test("a syncfs that fails falls back to an fsync per file, which names the file whose fsync fails", async () => {
    using tmp = tempDir();
    const fds = newFiles(tmp.path, MANY + 1);
    // The fifth file's descriptor is closed before the flush: its fsync fails (EBADF).
    closeSync(fds[4]!);
    const calls = fake(-1);
    const failure = await flushFiles(fds.map((fd) => ({ fd, dev: 7, size: 7 })), (error, i) => new Error(`file ${i}: ${(error as NodeJS.ErrnoException).code}`)).then(
      () => null,
      (e: Error) => e.message,
    );
    expect(calls.syncfs).toEqual([fds[0]!]);
    expect(failure).toBe("file 4: EBADF");
    expect(fds.every(isClosed)).toBe(true);
  });

  test("a system with much unwritten data besides the change's (another program writing): an fsync per file, no syncfs that would wait for it", async () => {
    using tmp = tempDir();
    const size = 1000;
    const own = (MANY + 2) * size;
    // At the limit: the change's files and their kept versions, plus BUSY_BYTES.
    for (const [unwritten, syncfs] of [[2 * own + BUSY_BYTES, 1], [2 * own + BUSY_BYTES + 1, 0], ["unknown", 0]] as const) {
      const fds = newFiles(tmp.path, MANY + 2);
      const calls = fake(0, unwritten);
      await flushFiles(fds.map((fd) => ({ fd, dev: 1, size })), (e) => e);
      expect({ unwritten, syncfs: calls.syncfs.length }).toEqual({ unwritten, syncfs });
      expect(fds.every(isClosed)).toBe(true);
    }
  });

  test("without the libc calls (another libc, another system): an fsync per file", async () => {
    using tmp = tempDir();
    const fds = newFiles(tmp.path, MANY * 2);
    setLibcForTest(null);
    await flushFiles(fds.map((fd) => ({ fd, dev: 1, size: 7 })), (e) => e);
    expect(fds.every(isClosed)).toBe(true);
  });

  test("the real calls (this machine's libc): many files flushed, closed, and their bytes there", async () => {
    using tmp = tempDir();
    const fds = newFiles(tmp.path, MANY * 3);
    await flushFiles(fds.map((fd) => ({ fd, dev: fstatSync(fd).dev, size: fstatSync(fd).size })), (e) => e);
    expect(fds.every(isClosed)).toBe(true);
    for (let i = 0; i < fds.length; i++) expect(readFileSync(join(tmp.path, `f${i}`), "utf8")).toBe(`file ${i}\n`);
  });
});

describe("flushDirs", () => {
  test(`a change of ${MANY} files or more: one syncfs per file system, however few directories; fewer, a failing syncfs, or a busy system: an fsync each`, async () => {
    using tmp = tempDir();
    const dirs = Array.from({ length: 3 }, (_, i) => {
      mkdirSync(join(tmp.path, `d${i}`));
      return openSync(join(tmp.path, `d${i}`), "r");
    });
    let calls = fake();
    await flushDirs(dirs, MANY);
    expect(calls.syncfs).toEqual([dirs[0]!]);
    calls = fake();
    await flushDirs(dirs, MANY - 1);
    expect(calls.syncfs).toEqual([]);
    calls = fake(-1);
    await flushDirs(dirs, MANY + 5);
    expect(calls.syncfs).toEqual([dirs[0]!]);
    calls = fake(0, BUSY_BYTES + 1);
    await flushDirs(dirs, MANY + 5);
    expect(calls.syncfs).toEqual([]);
    // Directories stay open: the commit closes them.
    expect(dirs.some(isClosed)).toBe(false);
    for (const fd of dirs) closeSync(fd);
  });
});

describe.skipIf(process.platform !== "linux")("through dist/kt, the calls strace sees", () => {
  const usable = straceWorks();
  test.skipIf(!usable)("kt replace over 12 files: one syncfs for the files and one for their directories, no fsync; kt edit of one file: fsyncs, no syncfs", () => {
    if (!usable) throw new Error("strace is not installed or cannot trace here (Debian's strace)");
    using tmp = tempDir();
    const cwd = join(tmp.path, "work");
    const stateDir = join(tmp.path, "state");
    for (let d = 0; d < 3; d++) {
      mkdirSync(join(cwd, `pkg${d}`), { recursive: true });
      for (let i = 0; i < 4; i++) writeFileSync(join(cwd, `pkg${d}`, `m${i}.ts`), `export const oldName = ${i};\nconsole.log(oldName);\n`);
    }
    const run = (args: string[], log: string) => {
      const r = Bun.spawnSync(["strace", "-f", "-e", "trace=fsync,fdatasync,syncfs", "-o", log, KT, ...args], {
        cwd,
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", NO_COLOR: "1", KT_STATE_DIR: stateDir },
        stdout: "pipe",
        stderr: "pipe",
      });
      expect(r.exitCode).toBe(0);
      const lines = readFileSync(log, "utf8").split("\n");
      return { syncfs: lines.filter((l) => /\bsyncfs\(/.test(l)).length, fsync: lines.filter((l) => /\bf(data)?sync\(/.test(l)).length };
    };
    // What other tests left unwritten is flushed first: kt takes the fsyncs on a busy system.
    Bun.spawnSync(["sync"]);
    const replace = run(["replace", "oldName", "newName", "--word"], join(tmp.path, "replace.log"));
    expect(replace).toEqual({ syncfs: 2, fsync: 0 });
    for (let d = 0; d < 3; d++) for (let i = 0; i < 4; i++) expect(readFileSync(join(cwd, `pkg${d}`, `m${i}.ts`), "utf8")).toBe(`export const newName = ${i};\nconsole.log(newName);\n`);
    const edit = run(["edit", "pkg0/m0.ts", "--old-string", "newName = 0", "--new-string", "newName = 10"], join(tmp.path, "edit.log"));
    expect(edit.syncfs).toBe(0);
    expect(edit.fsync).toBeGreaterThanOrEqual(2); // the file and its directory
  });
});
