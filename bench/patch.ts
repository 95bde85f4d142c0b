// bench/patch: one 40-hunk patch over 20 files (generated code, 400–900 lines each), applied
// by kt and by `git apply` — the same unified diff — side by side with hyperfine (medians);
// kt also with the same change as a `*** Begin Patch` envelope. Every run starts from the
// original tree (hyperfine --prepare copies it back, untimed). Target: kt ≤ 3× git apply,
// which locates hunks by exact context and line numbers only (no fuzzy tiers, no uniqueness
// check, no history of the replaced bytes).
//   npm run build && node_modules/.bin/bun bench/patch.ts
// KT_BENCH_BASELINE=/path/to/older/kt adds that binary's run of the unified diff to the same
// hyperfine session (a before/after comparison); KT_BENCH_KEEP=1 leaves the work directory.
// --instructions adds each command's instruction count (valgrind's callgrind, every thread;
// steady under load where wall time is not), one run each from the same starting tree. It
// runs the threads one at a time, so a thread pool's idle spinning counts as work: an
// asynchronous call can add instructions while it saves wall and CPU time.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTwoFilesPatch, structuredPatch } from "diff";
import { hyperfine, table } from "./_hyperfine.ts";
import { instructions, needValgrind } from "./_callgrind.ts";
import { mulberry32 } from "./_random.ts";

const root = join(import.meta.dir, "..");
const kt = join(root, "dist", "kt");
if (!existsSync(kt)) throw new Error("build first: npm run build");
const git = Bun.which("git");
if (!git) throw new Error("bench/patch needs git on PATH");

const r = mulberry32(12);
const WORDS = ["user", "order", "item", "price", "total", "config", "state", "cache", "result", "value", "token", "parser", "session"];
const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;

function file(n: number): string[] {
  const lines: string[] = [];
  const size = 400 + Math.floor(r() * 500);
  for (let f = 0; lines.length < size; f++) {
    lines.push(`export function ${pick(WORDS)}${n}_${f}(input: Options) {`);
    for (let i = 0; i < 8 + Math.floor(r() * 12); i++) lines.push(`  const ${pick(WORDS)}${i} = ${pick(WORDS)}.${pick(WORDS)}(input, ${Math.floor(r() * 100)});`);
    lines.push(`  return ${pick(WORDS)};`, "}", "");
  }
  return lines;
}

const work = mkdtempSync(join(tmpdir(), "kt-bench-patch-"));
const base = join(work, "base");
const tree = join(work, "tree");
mkdirSync(base);
let unified = "";
let envelope = "*** Begin Patch\n";
let hunks = 0;
for (let n = 0; n < 20; n++) {
  const before = file(n);
  const after = [...before];
  // Two edits per file, far apart: each its own hunk.
  for (const at of [Math.floor(after.length * 0.25), Math.floor(after.length * 0.75)]) {
    after.splice(at, 2, `  const changed${n}_${at} = recompute(input);`, `  log("changed", ${at});`, `  audit(${n}, ${at});`);
  }
  const a = `${before.join("\n")}\n`;
  const b = `${after.join("\n")}\n`;
  writeFileSync(join(base, `f${n}.ts`), a);
  unified += `diff --git a/f${n}.ts b/f${n}.ts\n${createTwoFilesPatch(`a/f${n}.ts`, `b/f${n}.ts`, a, b, "", "", { context: 3 }).replace(/^=+\n/, "")}`;
  const ph = structuredPatch("x", "x", a, b, "", "", { context: 3 }).hunks;
  hunks += ph.length;
  envelope += `*** Update File: f${n}.ts\n${ph.map((h) => `@@\n${h.lines.join("\n")}\n`).join("")}`;
}
envelope += "*** End Patch\n";
if (hunks !== 40) throw new Error(`expected 40 hunks, generated ${hunks}`);
writeFileSync(join(work, "change.diff"), unified);
writeFileSync(join(work, "change.patch"), envelope);
mkdirSync(tree);
const stateDir = join(work, "state");

// Putting the tree back is a change outside kt, so kt's stamps (which would call the files
// stale) go with it: every kt run starts a fresh session (`kt session end`, untimed) in a
// state directory whose index already exists, as it does for an agent.
const resetScript = join(work, "reset.sh");
writeFileSync(resetScript, `#!/bin/sh\ncp -a '${base}/.' '${tree}' && KT_STATE_DIR='${join(work, "state")}' '${kt}' session end >/dev/null && sync\n`, { mode: 0o755 });
// Both tools must produce the same tree before their speed means anything.
const reset = () => Bun.spawnSync([resetScript]);
reset();
const g = Bun.spawnSync([git, "apply", join(work, "change.diff")], { cwd: tree, stderr: "pipe" });
if (g.exitCode !== 0) throw new Error(`git apply failed: ${g.stderr}`);
const byGit = Array.from({ length: 20 }, (_, n) => readFileSync(join(tree, `f${n}.ts`), "utf8"));
for (const form of ["change.diff", "change.patch"]) {
  reset();
  const k = Bun.spawnSync([kt, "patch", "--patch-file", join(work, form)], { cwd: tree, env: { ...process.env, KT_STATE_DIR: stateDir }, stderr: "pipe" });
  if (k.exitCode !== 0) throw new Error(`kt patch ${form} failed: ${k.stdout}`);
  for (let n = 0; n < 20; n++) if (readFileSync(join(tree, `f${n}.ts`), "utf8") !== byGit[n]) throw new Error(`kt and git apply disagree on f${n}.ts (${form})`);
}

const runs = Number(process.env.RUNS ?? 40);
const baseline = process.env.KT_BENCH_BASELINE;
const results = hyperfine(
  [
    { name: "git apply (unified diff)", command: `${git} apply ${join(work, "change.diff")}` },
    { name: "kt patch (unified diff)", command: `${kt} patch --patch-file ${join(work, "change.diff")}` },
    { name: "kt patch (envelope)", command: `${kt} patch --patch-file ${join(work, "change.patch")}` },
    ...(baseline ? [{ name: `baseline ${baseline} (unified diff)`, command: `${baseline} patch --patch-file ${join(work, "change.diff")}` }] : []),
  ],
  { runs, warmup: 5, cwd: tree, env: { KT_STATE_DIR: stateDir }, prepare: resetScript },
);

/** Instructions one run of `command` executes (every thread), from the tree put back; null when valgrind fails. */
function countFromStart(command: string[]): number | null {
  reset();
  return instructions(command, { cwd: tree, env: { KT_STATE_DIR: stateDir } });
}

let counted: (string | number)[][] | null = null;
if (process.argv.includes("--instructions")) {
  needValgrind("bench/patch --instructions");
  const rows: [string, string[]][] = [
    ["git apply (unified diff)", [git, "apply", join(work, "change.diff")]],
    ["kt patch (unified diff)", [kt, "patch", "--patch-file", join(work, "change.diff")]],
    ["kt patch (envelope)", [kt, "patch", "--patch-file", join(work, "change.patch")]],
    ...(baseline ? [[`baseline ${baseline} (unified diff)`, [baseline, "patch", "--patch-file", join(work, "change.diff")]] as [string, string[]]] : []),
  ];
  const counts = rows.map(([name, command]) => [name, countFromStart(command)] as const);
  const gitIr = counts[0]![1];
  counted = [["command", "instructions (millions)", "× git apply"], ...counts.map(([name, n]) => [name, n === null ? "valgrind failed" : Number((n / 1e6).toFixed(2)), n === null || !gitIr ? "" : Number((n / gitIr).toFixed(2))])];
}

const [gitApply, ktUnified, ktEnvelope] = results;
const cpu = (x: (typeof results)[number]) => (x.userMs ?? 0) + (x.systemMs ?? 0);
console.log(
  table([
    ["command", "median ms", "min ms", "× git apply", "cpu ms (user+sys)"],
    ...results.map((x) => [x.name, Number(x.medianMs.toFixed(2)), Number(x.minMs.toFixed(2)), Number((x.medianMs / gitApply!.medianMs).toFixed(2)), Number(cpu(x).toFixed(1))]),
  ]),
);
const ratio = ktUnified!.medianMs / gitApply!.medianMs;
console.log(`\n40 hunks over 20 files: kt ${ktUnified!.medianMs.toFixed(1)} ms, git apply ${gitApply!.medianMs.toFixed(1)} ms median: ${ratio.toFixed(2)}× (target ≤ 3×: ${ratio <= 3 ? "met" : "MISSED"}); envelope ${(ktEnvelope!.medianMs / gitApply!.medianMs).toFixed(2)}×.`);
console.log(`CPU time: kt ${cpu(ktUnified!).toFixed(1)} ms, git apply ${cpu(gitApply!).toFixed(1)} ms (${(cpu(ktUnified!) / cpu(gitApply!)).toFixed(2)}×). kt fsyncs every file and keeps the replaced bytes; git apply does neither.`);
if (counted) console.log(`\nInstructions (callgrind, all threads, one run each):\n${table(counted)}`);
if (process.env.KT_BENCH_KEEP) console.log(`work directory kept: ${work}`);
else rmSync(work, { recursive: true, force: true });
