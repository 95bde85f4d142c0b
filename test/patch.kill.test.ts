// kill -9 during a patch's commit, many rounds: every file is old or new, never torn or
// missing, and no file outside the patch changes. KT_COMMIT_PAUSE_MS widens the window
// between two installs so that kills land inside the commit, not only before or after it.
import { expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { kt, ktSpawn, tempDir } from "./_helpers.ts";

const ROUNDS = 16;
const FILES = 6;

function content(i: number, version: "old" | "new"): string {
  // Large enough that a torn write would show (several pages per file).
  const line = `${version === "old" ? `old line of file ${i}` : `NEW line of file ${i}, longer`} ${"·".repeat(200)}\n`;
  return `head ${i}\n${line.repeat(Math.ceil(16384 / line.length))}tail ${i}\n`;
}

test(`kill -9 at random instants of ${ROUNDS} commits: each file old or new, nothing else touched`, async () => {
  let mixed = 0;
  let allNew = 0;
  let allOld = 0;
  for (let round = 0; round < ROUNDS; round++) {
    using tmp = tempDir();
    const work = join(tmp.path, "w");
    mkdirSync(work);
    writeFileSync(join(work, "bystander.txt"), "not in the patch\n");
    const sections: string[] = [];
    for (let i = 0; i < FILES; i++) {
      writeFileSync(join(work, `f${i}.txt`), content(i, "old"));
      sections.push(`*** Update File: f${i}.txt\n head ${i}\n${content(i, "old").split("\n").slice(1, -2).map((l) => `-${l}`).join("\n")}\n${content(i, "new").split("\n").slice(1, -2).map((l) => `+${l}`).join("\n")}\n tail ${i}`);
    }
    writeFileSync(join(tmp.path, "p.txt"), `*** Begin Patch\n${sections.join("\n")}\n*** End Patch\n`);
    const proc = ktSpawn(["patch", "--patch-file", join(tmp.path, "p.txt")], { cwd: work, stateDir: join(tmp.path, ".s"), env: { KT_COMMIT_PAUSE_MS: "15" } });
    // Wait for the commit to start installing (the first file's inode changes at its rename),
    // then kill at some instant of the remaining installs, 15 ms apart, or just after them.
    // Every fourth round is killed blind, anywhere from start-up to the end.
    if (round % 4 === 0) await Bun.sleep((round * 29) % 400);
    else {
      const first = statSync(join(work, "f0.txt")).ino;
      const started = Date.now();
      while (statSync(join(work, "f0.txt")).ino === first && proc.exitCode === null && Date.now() - started < 20_000) await Bun.sleep(1);
      await Bun.sleep((round * 11) % 100);
    }
    proc.kill(9);
    await proc.exited;

    let news = 0;
    for (let i = 0; i < FILES; i++) {
      const now = readFileSync(join(work, `f${i}.txt`), "utf8");
      const isOld = now === content(i, "old");
      const isNew = now === content(i, "new");
      expect(isOld || isNew, `round ${round}: f${i}.txt is neither old nor new (${now.length} bytes)`).toBe(true);
      if (isNew) news++;
    }
    expect(readFileSync(join(work, "bystander.txt"), "utf8")).toBe("not in the patch\n");
    const names = readdirSync(work).filter((n) => !n.includes(".kt-")).sort();
    expect(names).toEqual(["bystander.txt", ...Array.from({ length: FILES }, (_, i) => `f${i}.txt`)].sort());
    if (news === 0) allOld++;
    else if (news === FILES) allNew++;
    else mixed++;
  }
  if (process.env.KT_KILL_REPORT) console.error(`old ${allOld}, new ${allNew}, mixed ${mixed}`);
  // The kills must have landed inside commits too, or the test proved nothing about them.
  expect(mixed, `old ${allOld}, new ${allNew}, mixed ${mixed}`).toBeGreaterThan(0);
}, 60_000);

test("after a kill in the middle of a commit, kt undo --last puts every file of the torn patch back", async () => {
  for (let attempt = 0; attempt < 5; attempt++) {
    using tmp = tempDir();
    const work = join(tmp.path, "w");
    mkdirSync(work);
    const sections: string[] = [];
    for (let i = 0; i < FILES; i++) {
      writeFileSync(join(work, `f${i}.txt`), `one ${i}\ntwo ${i}\n`);
      sections.push(`*** Update File: f${i}.txt\n one ${i}\n-two ${i}\n+TWO ${i}`);
    }
    sections.push("*** Add File: added.txt\n+new");
    const opts = { cwd: work, stateDir: join(tmp.path, ".s") };
    const proc = ktSpawn(["patch", `*** Begin Patch\n${sections.join("\n")}\n*** End Patch\n`], { ...opts, env: { KT_COMMIT_PAUSE_MS: "40" } });
    const first = statSync(join(work, "f0.txt")).ino;
    const started = Date.now();
    while (statSync(join(work, "f0.txt")).ino === first && proc.exitCode === null && Date.now() - started < 20_000) await Bun.sleep(1);
    await Bun.sleep(50);
    proc.kill(9);
    await proc.exited;
    const installed = Array.from({ length: FILES }, (_, i) => readFileSync(join(work, `f${i}.txt`), "utf8")).filter((t) => t.includes("TWO")).length;
    if (installed === 0 || installed === FILES) continue; // the kill missed the window: try again
    const r = kt(["undo", "--last"], opts);
    expect(r.exitCode, r.stdout).toBe(0);
    expect(r.stdout).toContain("which kt was stopped while installing (7 files):");
    for (let i = 0; i < FILES; i++) expect(readFileSync(join(work, `f${i}.txt`), "utf8")).toBe(`one ${i}\ntwo ${i}\n`);
    expect(readdirSync(work).filter((n) => !n.includes(".kt-")).sort()).toEqual(Array.from({ length: FILES }, (_, i) => `f${i}.txt`).sort());
    // The journal is gone: a second undo finds nothing more to revert.
    expect(kt(["undo", "--last"], opts).exitCode).toBe(1);
    return;
  }
  throw new Error("no kill landed inside a commit in 5 attempts");
}, 60_000);
