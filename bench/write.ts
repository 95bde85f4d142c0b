// bench/write: the whole write path on a large file, side by side with cp of the same bytes
// (hyperfine, medians). Issue 11 item 4: the metadata diff must never decide how long a write
// takes — replacing a 100,000-line file, and an edit --replace-all touching all 100,000 lines,
// each well under 2 s. Each kt run starts from the old content with a fresh read (untimed).
//   npm run build && node_modules/.bin/bun bench/write.ts
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hyperfine, table } from "./_hyperfine.ts";

const root = join(import.meta.dir, "..");
const kt = join(root, "dist", "kt");
if (!existsSync(kt)) throw new Error("build first: npm run build");

const LINES = 100_000;
const work = mkdtempSync(join(tmpdir(), "kt-bench-write-"));
const stateDir = join(work, "state");
mkdirSync(stateDir);
const lines = (f: (i: number) => string) => Array.from({ length: LINES }, (_, i) => f(i + 1)).join("\n") + "\n";
writeFileSync(join(work, "old.txt"), lines((i) => `const value${i} = compute(${i}, "old");`));
writeFileSync(join(work, "new.txt"), lines((i) => `let other${i} = derive(${i * 7}, "new");`));

const reset = (target: string) => `sh -c "cp old.txt ${target} && ${kt} read ${target} --limit 1 >/dev/null"`;
const runs = Number(process.env.RUNS ?? 10);
const results = hyperfine(
  [
    { name: "cp new.txt (100,000 lines)", command: "cp new.txt cp-target.txt", prepare: "cp old.txt cp-target.txt" },
    { name: "kt write (replace 100,000 lines)", command: `${kt} write w-target.txt --content-file new.txt`, prepare: reset("w-target.txt") },
    { name: "kt edit --replace-all (100,000 lines)", command: `${kt} edit e-target.txt --old-string "old" --new-string "new" --replace-all`, prepare: reset("e-target.txt") },
  ],
  { runs, warmup: 2, env: { KT_STATE_DIR: stateDir, KT_SESSION: "bench" }, cwd: work },
);
rmSync(work, { recursive: true, force: true });

const cp = results[0]!;
console.log(table([
  ["command", "median ms", "min ms", "× cp"],
  ...results.map((r) => [r.name, Number(r.medianMs.toFixed(1)), Number(r.minMs.toFixed(1)), Number((r.medianMs / cp.medianMs).toFixed(1))]),
]));
const slow = results.slice(1).filter((r) => r.medianMs >= 2000);
console.log(slow.length === 0 ? "\nOK: each kt command well under 2 s" : `\nTOO SLOW: ${slow.map((r) => r.name).join(", ")}`);
