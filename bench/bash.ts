// bench/bash: `kt bash true` against `bash -c true` and against `kt read` of a small file,
// and `kt ps read` of a finished process, side by side with hyperfine (medians). Targets
// (SPEC §6, the bash/ps issue and issue 15): kt bash within 25 ms of bash -c and within
// 1.3× of kt read; ps read of a finished process under 25 ms. Every kt bash call hands its
// command to the session's host (src/process/host.ts, started by the first call, then kept),
// so this measures the whole path: index row, socket, bash, exit record, log read. Then memory: the summed RSS of everything
// kt leaves running for 8 background `sleep 100` processes (target ≤ 60 MB in all).
// SPEC §8.2: the same `kt bash true` and a `ps start` in the workspace-write sandbox, beside
// the unsandboxed ones (target ≤ 1.3×): bubblewrap's namespaces and mounts are the cost.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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
writeFileSync(join(work, "small.txt"), Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join("\n") + "\n");

const runs = Number(process.env.RUNS ?? 100);
const results = hyperfine(
  [
    { name: "bash -c true", command: "bash -c true" },
    { name: "kt bash true", command: `${kt} bash true` },
    { name: "kt read small.txt", command: `${kt} read small.txt` },
    { name: "kt ps read p1 (finished)", command: `${kt} ps read p1 --offset 1` },
    { name: "kt ps list", command: `${kt} ps list` },
    { name: "kt bash --sandbox workspace-write true", command: `${kt} bash --sandbox workspace-write true` },
    { name: "kt ps start 'echo hi'", command: `${kt} ps start 'echo hi'` },
    { name: "kt ps start --sandbox workspace-write 'echo hi'", command: `${kt} ps start --sandbox workspace-write 'echo hi'` },
  ],
  { runs, warmup: 10, env: { KT_STATE_DIR: stateDir, KT_SESSION: "bench" }, cwd: work },
);

// Memory: 8 background sleeps, then the RSS of every process kt left for them — the session's
// host and any supervisors (found by their command line naming this state directory) and commands (by kt's marker).
for (let n = 0; n < 8; n++) run("ps", "start", `sleep 100 # ${n}`);
Bun.sleepSync(500);
const left = leftRunning(stateDir);
const rssMb = left.reduce((sum, p) => sum + p.rssKb, 0) / 1024;
run("session", "end");
rmSync(work, { recursive: true, force: true });

const [bashC, ktBash, ktRead, psRead, , boxBash, psStart, boxStart] = results;
console.log(table([["command", "median ms", "min ms"], ...results.map((r) => [r.name, Number(r.medianMs.toFixed(2)), Number(r.minMs.toFixed(2))])]));
const gap = ktBash!.medianMs - bashC!.medianMs;
const ratio = ktBash!.medianMs / ktRead!.medianMs;
console.log(`\nkt bash true: ${ktBash!.medianMs.toFixed(2)} ms median, ${gap.toFixed(2)} ms over bash -c true (target ≤ 25 ms: ${gap <= 25 ? "met" : "MISSED"}).`);
console.log(`kt bash true / kt read small.txt: ${ratio.toFixed(2)}× (${ktBash!.medianMs.toFixed(2)} / ${ktRead!.medianMs.toFixed(2)} ms; target ≤ 1.3×: ${ratio <= 1.3 ? "met" : "MISSED"}).`);
const boxed = boxBash!.medianMs / ktBash!.medianMs;
const boxedStart = boxStart!.medianMs / psStart!.medianMs;
console.log(`sandboxed / unsandboxed kt bash true: ${boxed.toFixed(2)}× (${boxBash!.medianMs.toFixed(2)} / ${ktBash!.medianMs.toFixed(2)} ms; target ≤ 1.3×: ${boxed <= 1.3 ? "met" : "MISSED"}).`);
console.log(`sandboxed / unsandboxed kt ps start: ${boxedStart.toFixed(2)}× (${boxStart!.medianMs.toFixed(2)} / ${psStart!.medianMs.toFixed(2)} ms; target ≤ 1.3×: ${boxedStart <= 1.3 ? "met" : "MISSED"}).`);
console.log(`kt ps read of a finished process: ${psRead!.medianMs.toFixed(2)} ms median (target < 25 ms: ${psRead!.medianMs < 25 ? "met" : "MISSED"}).`);
const kinds = new Map<string, { n: number; kb: number }>();
for (const p of left) {
  const k = kinds.get(p.comm) ?? { n: 0, kb: 0 };
  kinds.set(p.comm, { n: k.n + 1, kb: k.kb + p.rssKb });
}
const parts = [...kinds].map(([comm, k]) => `${k.n} × ${comm} ${(k.kb / 1024).toFixed(1)} MB`).join(", ");
console.log(`8 background sleeps: ${rssMb.toFixed(1)} MB RSS in all (${parts}; target ≤ 60 MB: ${rssMb <= 60 ? "met" : "MISSED"}).`);
// RSS counts the pages of the kt binary each supervisor shares with the others once per process;
// PSS shares them out, anonymous RSS is what each holds alone.
const mb = (kb: number) => (kb / 1024).toFixed(1);
console.log(`  of which anonymous (private) ${mb(left.reduce((s, p) => s + p.anonKb, 0))} MB; PSS ${mb(left.reduce((s, p) => s + p.pssKb, 0))} MB.`);

/** The processes kt left running for this state directory, with their resident memory. */
function leftRunning(state: string): { pid: number; comm: string; rssKb: number; anonKb: number; pssKb: number }[] {
  const out: { pid: number; comm: string; rssKb: number; anonKb: number; pssKb: number }[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, "utf8");
      const environ = readFileSync(`/proc/${name}/environ`, "utf8");
      const ours = ((cmdline.includes("__supervise") || cmdline.includes("__host")) && cmdline.includes(state)) || environ.split("\0").some((v) => v.startsWith("__KT_PROCESS=") && v.endsWith(`@${state}`));
      if (!ours) continue;
      const status = readFileSync(`/proc/${name}/status`, "utf8");
      const rss = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0);
      const anon = Number(/^RssAnon:\s+(\d+) kB/m.exec(status)?.[1] ?? 0);
      let pss = 0;
      try {
        pss = Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${name}/smaps_rollup`, "utf8"))?.[1] ?? 0);
      } catch {
        // No smaps_rollup (an older kernel): PSS stays 0.
      }
      const comm = readFileSync(`/proc/${name}/comm`, "utf8").trim();
      out.push({ pid: Number(name), comm: comm === "kt" ? (cmdline.includes("__host") ? "kt __host" : "kt __supervise") : comm, rssKb: rss, anonKb: anon, pssKb: pss });
    } catch {
      // Gone, or not ours to read.
    }
  }
  return out;
}
