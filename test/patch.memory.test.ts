// Bounds of apply_patch (issue 29): a 60 MB patch's peak memory, at most 3× the patch plus the
// file it changes (here the 60 MB file it adds). From 12× the patch (781 MB) to 4.7–6.8×; then
// the parse stopped gathering an added file's lines into a second array (its content is cut
// from the patch text whole): 309 → 250 MB, 3.9× the patch, about 2× the patch plus the file.
// (The merge with round three's git-style diffs keeps a huge added file's diff to its count, in tools/patch.ts.)
import { describe, expect, test } from "bun:test";
import { mkdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { peakRss, tempDir } from "./_helpers.ts";

describe("a 60 MB patch", () => {
  test("a 60 MB patch's memory: peak RSS of kt patch at most 3× the patch plus the file it adds", async () => {
    using tmp = tempDir();
    const cwd = join(tmp.path, "work");
    mkdirSync(cwd);
    const line = (i: number) => `+line ${i} ${"x".repeat(50)}`;
    const body: string[] = [];
    for (let i = 0; i < 1_000_000; i++) body.push(line(i));
    const patchFile = join(tmp.path, "big.patch");
    writeFileSync(patchFile, `*** Begin Patch\n*** Add File: big.txt\n${body.join("\n")}\n*** End Patch\n`);
    body.length = 0;
    const size = statSync(patchFile).size;
    expect(size).toBeGreaterThan(60 * 1000 * 1000);
    const r = peakRss(["patch", "--patch-file", patchFile], { cwd, stateDir: join(tmp.path, "state") });
    expect(r.stdout).toBe(`Success. Updated the following files:\nA ${cwd}/big.txt\n`);
    const written = statSync(join(cwd, "big.txt")).size;
    const peak = r.bytes;
    console.log(`patch ${(size / 1e6).toFixed(1)} MB, file ${(written / 1e6).toFixed(1)} MB, peak RSS ${(peak / 1e6).toFixed(0)} MB = ${(peak / size).toFixed(2)}× the patch, ${(peak / (size + written)).toFixed(2)}× the patch plus the file`);
    expect(peak).toBeLessThanOrEqual(3 * (size + written));
  }, 120_000);
});
