// bench/bash: `kt bash true` against `bash -c true`, and `kt ps read` of a finished process,
// side by side with hyperfine (medians). Targets (SPEC §6 and the bash/ps issue): kt bash
// within 25 ms of bash -c; ps read of a finished process under 25 ms. Every kt bash call
// starts a detached supervisor (this binary again), so this measures the whole path:
// index row, supervisor start, bash, exit record, log read.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hyperfine, table } from "./_hyperfine.ts";

const root = join(import.meta.dir, "..");
const kt = join(root, "dist", "kt");
if (!existsSync(kt)) throw new Error("build first: npm run build");

const work = mkdtempSync(join(tmpdir(), "kt-bench-bash-"));
const stateDir = join(work, "state");
mkdirSync(stateDir);
const env = { ...process.env, KT_STATE_DIR: stateDir, KT_SESSION: "bench" };

// A finished process to read: started, ended, its exit already shown once.
const run = (...args: string[]) => Bun.spawnSync([kt, ...args], { env, cwd: work, stdout: "pipe", stderr: "pipe" });
run("ps", "start", "seq 1 200");
run("ps", "list");

const runs = Number(process.env.RUNS ?? 100);
const results = hyperfine(
  [
    { name: "bash -c true", command: "bash -c true" },
    { name: "kt bash true", command: `${kt} bash true` },
    { name: "kt ps read p1 (finished)", command: `${kt} ps read p1 --offset 1` },
    { name: "kt ps list", command: `${kt} ps list` },
  ],
  { runs, warmup: 10, env: { KT_STATE_DIR: stateDir, KT_SESSION: "bench" }, cwd: work },
);
run("session", "end");
rmSync(work, { recursive: true, force: true });

const [bashC, ktBash, psRead] = results;
console.log(table([["command", "median ms", "min ms"], ...results.map((r) => [r.name, Number(r.medianMs.toFixed(2)), Number(r.minMs.toFixed(2))])]));
const gap = ktBash!.medianMs - bashC!.medianMs;
console.log(`\nkt bash true: ${ktBash!.medianMs.toFixed(2)} ms median, ${gap.toFixed(2)} ms over bash -c true (target ≤ 25 ms: ${gap <= 25 ? "met" : "MISSED"}).`);
console.log(`kt ps read of a finished process: ${psRead!.medianMs.toFixed(2)} ms median (target < 25 ms: ${psRead!.medianMs < 25 ? "met" : "MISSED"}).`);
