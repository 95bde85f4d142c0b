// A replace's temp files written by its search threads (search/rewrite.ts) and taken by the
// commit (core/commit.ts adopt): the commit installs a staged temp file only when its verified
// directory holds that very file, with the mode and owner the file has now; every temp file
// the threads wrote is installed or removed, whatever the outcome; and through dist/kt, on
// one thread and on four, a replace leaves no temp file and keeps every file's mode.
import { describe, expect, test } from "bun:test";
import { chmodSync, closeSync, cpSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { filesBelow, KT, kt, straceWorks, tempDir } from "./_helpers.ts";
import { commitChanges, type Change } from "../src/core/commit.ts";
import { sha256 } from "../src/core/stamps.ts";
import { tempPathFor, writeTempFile, type StagedTemp } from "../src/core/temp.ts";
import type { ToolContext } from "../src/tools/tool.ts";

const TEMP = /\.kt-\d+-[a-z0-9]+\.tmp$/;

function ctxFor(work: string, stateDir: string): ToolContext {
  return { cwd: work, session: "default", callId: "t", stateDir, flags: { skipReadCheck: false, dryRun: false, trace: false, strict: false }, warn: () => {} };
}

/** A temp file of `bytes` beside `file`, as a search thread writes it. */
function stage(file: string, bytes: Uint8Array): StagedTemp {
  const st = statSync(file);
  const path = tempPathFor(file);
  const { fd, st: written } = writeTempFile(path, bytes, { mode: st.mode & 0o7777, uid: st.uid, gid: st.gid }, st.mode & 0o7777);
  closeSync(fd);
  return { path, dev: written.dev, ino: written.ino, mtimeMs: written.mtimeMs, size: written.size };
}

function changeOf(file: string, next: string, staged?: StagedTemp): Change {
  const previous = readFileSync(file);
  return { display: file, real: file, baseSha: sha256(previous), previous, bytes: Buffer.from(next), ...(staged ? { staged } : {}) };
}

/** A file "old\n" of `mode` in `dir`, and a temp file of `staged` beside it. */
function fileWithStaged(dir: string, mode: number, staged: string): { file: string; temp: StagedTemp } {
  const file = join(dir, "a.txt");
  writeFileSync(file, "old\n");
  chmodSync(file, mode);
  return { file, temp: stage(file, Buffer.from(staged)) };
}

/** Commits "new\n" to `file` with `temp` staged; returns what the commit took. */
async function commitNew(dir: string, file: string, temp: StagedTemp): Promise<Set<string>> {
  const adopted = new Set<string>();
  await commitChanges(ctxFor(dir, join(dir, ".s")), [changeOf(file, "new\n", temp)], { tool: "replace", verb: "change", adopted });
  expect(readFileSync(file, "utf8")).toBe("new\n");
  return adopted;
}

describe("the commit takes a staged temp file only as the file its thread wrote", () => {
  test("the very file, in the verified directory: installed as it is (its inode), and named as taken", async () => {
    using tmp = tempDir();
    const { file, temp: staged } = fileWithStaged(tmp.path, 0o640, "new\n");
    const adopted = await commitNew(tmp.path, file, staged);
    expect([...adopted]).toEqual([staged.path]);
    expect(statSync(file).ino).toBe(staged.ino);
    expect(statSync(file).mode & 0o777).toBe(0o640);
    expect(readdirSync(tmp.path).filter((n) => TEMP.test(n))).toEqual([]);
  });

  test("another file put under the staged name (the thread's file moved away): not installed, not removed; the commit writes its own", async () => {
    using tmp = tempDir();
    const { file, temp: staged } = fileWithStaged(tmp.path, 0o644, "new\n");
    // Swapped: the thread's file elsewhere, an impostor of the same size under its name.
    renameSync(staged.path, join(tmp.path, "moved"));
    writeFileSync(staged.path, "bad\n");
    expect((await commitNew(tmp.path, file, staged)).size).toBe(0);
    expect(statSync(file).ino).not.toBe(staged.ino);
    // The impostor is left where it was, for its writer (the tool) to deal with.
    expect(readFileSync(staged.path, "utf8")).toBe("bad\n");
  });

  test("a file whose mode changed since its temp file was written: the commit writes its own, with the mode the file has now", async () => {
    using tmp = tempDir();
    const { file, temp: staged } = fileWithStaged(tmp.path, 0o644, "new\n");
    chmodSync(file, 0o700);
    expect((await commitNew(tmp.path, file, staged)).size).toBe(0);
    expect(statSync(file).mode & 0o777).toBe(0o700);
  });

  test("a staged temp file of other content than the change's (a size that differs): not taken", async () => {
    using tmp = tempDir();
    const { file, temp: staged } = fileWithStaged(tmp.path, 0o644, "newer\n");
    expect((await commitNew(tmp.path, file, staged)).size).toBe(0);
  });
});

/** 30 directories of 10 files holding the pattern, some executable: enough for four threads to share. */
function tree(root: string): void {
  for (let d = 0; d < 30; d++) {
    const dir = join(root, `p${d}`);
    mkdirSync(dir, { recursive: true });
    for (let f = 0; f < 10; f++) {
      const name = join(dir, `f${f}.sh`);
      writeFileSync(name, `#!/bin/sh\necho oldName ${d} ${f}\n`);
      if (f % 3 === 0) chmodSync(name, 0o755);
    }
  }
}

const configs: [string, Record<string, string>][] = [
  ["one thread", { KT_GREP_ENGINE: "builtin", KT_THREADS: "1", KT_GREP_PARALLEL_AFTER: "1000000000" }],
  ["four threads from the first file", { KT_GREP_ENGINE: "builtin", KT_THREADS: "4", KT_GREP_PARALLEL_AFTER: "1" }],
];

describe("kt replace through dist/kt: every temp file its threads write is installed or removed", () => {
  for (const [label, env] of configs) {
    test(`${label}: a replace leaves no temp file, and every file keeps its mode`, () => {
      using tmp = tempDir();
      const work = join(tmp.path, "w");
      tree(work);
      const r = kt(["replace", "oldName", "newName"], { cwd: work, stateDir: join(tmp.path, "s"), env });
      expect(r.exitCode, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toStartWith('Replaced "oldName": 300 replacements in 300 files:');
      expect(filesBelow(work).filter((p) => TEMP.test(p))).toEqual([]);
      for (let d = 0; d < 30; d++) {
        for (let f = 0; f < 10; f++) {
          const name = join(work, `p${d}`, `f${f}.sh`);
          expect(readFileSync(name, "utf8")).toBe(`#!/bin/sh\necho newName ${d} ${f}\n`);
          expect(statSync(name).mode & 0o777).toBe(f % 3 === 0 ? 0o755 : 0o644 & ~process.umask());
        }
      }
    });

    test(`${label}: a replace refused after the threads wrote their temp files (a file read since changed) changes nothing and leaves no temp file`, () => {
      using tmp = tempDir();
      const pristine = join(tmp.path, "pristine");
      tree(pristine);
      const work = join(tmp.path, "w");
      cpSync(pristine, work, { recursive: true });
      const state = join(tmp.path, "s");
      const read = join(work, "p29", "f9.sh");
      expect(kt(["read", read], { cwd: work, stateDir: state, env }).exitCode).toBe(0);
      writeFileSync(read, "#!/bin/sh\necho oldName changed since\n");
      const r = kt(["replace", "oldName", "newName"], { cwd: work, stateDir: state, env });
      expect(r.exitCode, r.stdout + r.stderr).not.toBe(0);
      expect(r.stdout + r.stderr).toContain("the file changed on disk after you last read it");
      expect(filesBelow(work).filter((p) => TEMP.test(p))).toEqual([]);
      for (const p of filesBelow(pristine)) {
        if (p === "p29/f9.sh") continue;
        expect(readFileSync(join(work, p), "utf8"), p).toBe(readFileSync(join(pristine, p), "utf8"));
      }
    });
  }
});

// CI's file system, slower to create and write files than this machine's, once stopped a
// replace of 636 files at the time limit: the threads' time writing temp files counted as
// time finding the files to change. strace makes every write take 20 ms here.
describe.skipIf(process.platform !== "linux")("the time limit is on finding the files to change, not on writing their temp files", () => {
  const usable = straceWorks();
  for (const [label, env] of configs) {
    test(`${label}: 300 files whose writes take 20 ms each, under a 1 s limit, are all changed`, () => {
      if (!usable) throw new Error("strace is not installed or cannot trace here (Debian's strace)");
      using tmp = tempDir();
      const work = join(tmp.path, "w");
      tree(work);
      const started = performance.now();
      // --seccomp-bpf: only the writes stop under strace, so the search itself runs at speed.
      const proc = Bun.spawnSync(["strace", "-f", "--seccomp-bpf", "-qq", "-o", "/dev/null", "-e", "trace=write,pwrite64", "-e", "inject=write,pwrite64:delay_exit=20000", KT, "replace", "oldName", "newName"], {
        cwd: work,
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", NO_COLOR: "1", KT_STATE_DIR: join(tmp.path, "s"), KT_GREP_TIMEOUT_MS: "1000", ...env },
        stdout: "pipe",
        stderr: "pipe",
      });
      const elapsed = performance.now() - started;
      const out = proc.stdout.toString();
      expect(proc.exitCode, out + proc.stderr.toString()).toBe(0);
      expect(out).toStartWith('Replaced "oldName": 300 replacements in 300 files:');
      // The writes were slow enough to pass the limit had they counted (300 × 20 ms over at most four threads).
      expect(elapsed).toBeGreaterThan(1200);
      expect(filesBelow(work).filter((p) => TEMP.test(p))).toEqual([]);
      for (const p of filesBelow(work)) expect(readFileSync(join(work, p), "utf8"), p).toContain("echo newName");
    }, 90_000);
  }
});

/** A file's bytes and mode, for every file below `dir`. */
function treeOf(dir: string): Record<string, string> {
  return Object.fromEntries(filesBelow(dir).map((p) => [p, `${(statSync(join(dir, p)).mode & 0o7777).toString(8)} ${readFileSync(join(dir, p)).toString("base64")}`]));
}

describe("kt replace over real packages (node_modules/diff and node_modules/zod): the threads' temp files change nothing of the result", () => {
  const cases: [string, string[]][] = [
    ["a word-bounded regex with a group", ["\\b(exports)\\.([A-Za-z_]+)\\b", "module.$1.$2", "--regex"]],
    ["a literal", ["function ", "function  "]],
  ];
  for (const [name, args] of cases) {
    test(`${name}: four threads writing their temp files, and the rg engine (which writes none), leave the same bytes and modes; undo puts back every file`, () => {
      using tmp = tempDir();
      const pristine = join(tmp.path, "pristine");
      for (const pkg of ["diff", "zod"]) cpSync(join(import.meta.dir, "..", "node_modules", pkg), join(pristine, pkg), { recursive: true });
      // Modes a temp file must copy: executable, private, read-only.
      const files = filesBelow(pristine).filter((p) => p.endsWith(".js"));
      files.forEach((p, i) => chmodSync(join(pristine, p), [0o644, 0o755, 0o600, 0o444][i % 4]!));
      const original = treeOf(pristine);
      const engines: [string, Record<string, string>][] = [configs[1]!, ["the rg engine", { KT_GREP_ENGINE: "rg" }]];
      const results = engines.map(([label, env], i) => {
        const work = join(tmp.path, `w${i}`);
        cpSync(pristine, work, { recursive: true });
        const state = join(tmp.path, `s${i}`);
        const r = kt(["replace", ...args], { cwd: work, stateDir: state, env });
        expect(r.exitCode, `${label}: ${r.stdout}${r.stderr}`).toBe(0);
        const after = treeOf(work);
        expect(Object.keys(after).filter((p) => TEMP.test(p)), label).toEqual([]);
        const undo = kt(["undo", "--last"], { cwd: work, stateDir: state, env });
        expect(undo.exitCode, `${label}: ${undo.stdout}${undo.stderr}`).toBe(0);
        expect(treeOf(work), label).toEqual(original);
        return { label, text: r.stdout, after };
      });
      const [threads, rg] = results;
      expect(threads!.after).not.toEqual(original);
      expect(threads!.text).toBe(rg!.text.replaceAll(join(tmp.path, "w1"), join(tmp.path, "w0")));
      expect(threads!.after).toEqual(rg!.after);
    }, 120_000);
  }
});
