// kt glob against fd and rg --files on large real trees (SPEC §6: within 2×, memory
// bounded). Run with
//   node_modules/.bin/bun bench/glob.ts [--runs N] [--quick] [--per-core | --against BIN]
// after `npm run build`. kt also stats every matching file to order by mtime, which
// neither fd nor rg --files does. Medians of hyperfine runs, warm file cache.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { table } from "./_hyperfine.ts";
import { fileCount, KT, maxRssKb, ms, nodeModulesTree, ratio, timeAll } from "./_search.ts";

const args = process.argv.slice(2);
const quick = args.includes("--quick");
const runs = Number(args[args.indexOf("--runs") + 1]) || (quick ? 5 : 10);
if (!existsSync(KT)) {
  console.error("bench: build dist/kt first (npm run build)");
  process.exit(2);
}
const RG = Bun.which("rg");
const FD = Bun.which("fdfind") ?? Bun.which("fd");
if (!RG || !FD) {
  console.error("bench: needs rg and fd (Debian: ripgrep, fd-find)");
  process.exit(2);
}
const stateDir = mkdtempSync(join(tmpdir(), "kt-bench-state-"));
const env = { KT_STATE_DIR: stateDir };

/** kt's pattern and the same file set asked of fd and rg --files. */
const PATTERNS = [
  { kt: "**/*", fd: "", rg: "" },
  { kt: "**/*.js", fd: "-g '*.js'", rg: "-g '*.js'" },
  { kt: "**/package.json", fd: "-g package.json", rg: "-g package.json" },
];

function listed(cwd: string, pattern: string): number {
  const r = Bun.spawnSync([KT, "glob", pattern, "--json"], { cwd, env: { ...process.env, ...env }, stdout: "pipe" });
  return JSON.parse(r.stdout.toString()).metadata.files;
}

function compare(label: string, cwd: string): void {
  console.log(`\n## ${label}: ${cwd} — ${fileCount(cwd).toLocaleString("en-US")} files (rg --files)\n`);
  const rows: (string | number)[][] = [["pattern", "files", "fd", "rg --files", "kt glob", "vs fd", "vs rg --files"]];
  for (const p of PATTERNS) {
    const t = timeAll(
      [
        { name: "fd", command: `${FD} -t f ${p.fd}`.trim() },
        { name: "rg", command: `${RG} --files ${p.rg}`.trim() },
        { name: "kt", command: `${KT} glob '${p.kt}'` },
      ],
      { runs, warmup: 2, cwd, env },
    );
    const [fd, rg, kt] = t.map((x) => x.medianMs) as [number, number, number];
    rows.push([p.kt, listed(cwd, p.kt), `${ms(fd)} ms`, `${ms(rg)} ms`, `${ms(kt)} ms`, ratio(kt, fd), ratio(kt, rg)]);
  }
  console.log(table(rows));
}

/** Per core: kt glob with one thread against fd -j1, and with all threads against fd. */
function perCore(label: string, cwd: string): void {
  console.log(`\n## Per core — ${label}: ${cwd} (${navigator.hardwareConcurrency} cores)\n`);
  const rows: (string | number)[][] = [["pattern", "fd -j1", "kt 1t", "ratio", "fd", "kt all", "ratio", "kt 1t→all speed-up"]];
  for (const p of PATTERNS) {
    const t = timeAll(
      [
        { name: "fd-1", command: `${FD} -j1 -t f ${p.fd}`.trim() },
        { name: "kt-1", command: `env KT_THREADS=1 KT_GLOB_PARALLEL_AFTER=1000000000 ${KT} glob '${p.kt}'` },
        { name: "fd", command: `${FD} -t f ${p.fd}`.trim() },
        { name: "kt", command: `${KT} glob '${p.kt}'` },
      ],
      { runs, warmup: 2, cwd, env, rounds: 5 },
    );
    const [fd1, kt1, fd, kt] = t.map((x) => x.medianMs) as [number, number, number, number];
    rows.push([p.kt, `${ms(fd1)} ms`, `${ms(kt1)} ms`, ratio(kt1, fd1), `${ms(fd)} ms`, `${ms(kt)} ms`, ratio(kt, fd), ratio(kt1, kt)]);
  }
  console.log(table(rows));
  console.log("\nTarget (issue 14): kt glob ≤ 1.5× fd, per core and with all threads. Medians of 5 interleaved rounds.");
}

function memory(): void {
  console.log("\n## Peak memory (max RSS) as the tree grows: copies of node_modules\n");
  const rows: (string | number)[][] = [["tree", "files", "pattern", "fd", "rg --files", "kt glob"]];
  for (const copies of quick ? [1, 2, 4] : [1, 2, 4, 8]) {
    const root = nodeModulesTree(copies);
    const files = fileCount(root).toLocaleString("en-US");
    const mb = (kb: number) => `${(kb / 1024).toFixed(1)} MB`;
    for (const p of [PATTERNS[2]!, PATTERNS[0]!]) {
      const fdArgs = p.fd ? ["-g", p.fd.split(" ")[1]!.replace(/'/g, "")] : [];
      const rgArgs = p.rg ? ["-g", p.rg.split(" ")[1]!.replace(/'/g, "")] : [];
      rows.push([
        `${copies}×`,
        files,
        p.kt,
        mb(maxRssKb([FD!, "-t", "f", ...fdArgs], root)),
        mb(maxRssKb([RG!, "--files", ...rgArgs], root)),
        mb(maxRssKb([KT, "glob", p.kt], root, env)),
      ]);
    }
  }
  console.log(table(rows));
}

/** This build against another kt binary (`--against BIN`, e.g. main's dist/kt), side by
 * side in one run (issue 27). */
function against(label: string, cwd: string, ref: string): void {
  console.log(`\n## This build against ${ref} — ${label}: ${cwd} — ${fileCount(cwd).toLocaleString("en-US")} files\n`);
  const rows: (string | number)[][] = [["pattern", "files", "reference", "this build", "ratio"]];
  for (const p of [...PATTERNS, { kt: "**/*.zqxj", fd: "", rg: "" }]) {
    const t = timeAll(
      [
        { name: "ref", command: `${ref} glob '${p.kt}'` },
        { name: "kt", command: `${KT} glob '${p.kt}'` },
      ],
      { runs, warmup: 1, cwd, env, rounds: quick ? 3 : 5 },
    );
    const [r, k] = t.map((x) => x.medianMs) as [number, number];
    rows.push([p.kt, listed(cwd, p.kt), `${ms(r)} ms`, `${ms(k)} ms`, ratio(k, r)]);
  }
  console.log(table(rows));
  console.log(`\nMedians of ${quick ? 3 : 5} interleaved rounds; ratio = this build / the reference.`);
}

console.log(`# kt glob vs fd and rg --files — medians of ${runs}+ runs in 3 interleaved hyperfine rounds, ${new Date().toISOString()}`);
console.log(`cores: ${navigator.hardwareConcurrency}`);
if (args.includes("--against")) against("node_modules × 4", nodeModulesTree(4), args[args.indexOf("--against") + 1]!);
else if (args.includes("--per-core")) perCore("node_modules × 8", nodeModulesTree(quick ? 4 : 8));
else {
  compare("node_modules × 8", nodeModulesTree(quick ? 4 : 8));
  if (!quick && existsSync("/usr/share")) compare("/usr/share", "/usr/share");
  perCore("node_modules × 8", nodeModulesTree(quick ? 4 : 8));
  memory();
}
console.log("\nTarget (SPEC §6): kt glob ≤ 2× fd / rg --files. kt keeps the matching paths (to sort them by mtime),");
console.log("so its memory grows with the number of matches, not with the tree: compare **/package.json with **/*.");
rmSync(stateDir, { recursive: true, force: true });
