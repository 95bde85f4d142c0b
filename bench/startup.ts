// bench/startup: `kt read` of a small file against a compiled Bun program that does nothing
// (the runtime's floor) and against `cat -n` (the physical limit), side by side.
// Targets (SPEC §6): within 2× of the floor and under 20 ms.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hyperfine, table } from "./_hyperfine.ts";

const root = join(import.meta.dir, "..");
const kt = join(root, "dist", "kt");
const bun = join(root, "node_modules", ".bin", "bun");
if (!existsSync(kt)) throw new Error("build first: npm run build");

// The floor: an empty program compiled exactly as kt is.
const work = mkdtempSync(join(tmpdir(), "kt-startup-"));
writeFileSync(join(work, "floor.ts"), "export {};\n");
const floor = join(work, "floor");
const build = Bun.spawnSync([bun, "build", "--compile", "--minify", "--bytecode", "--no-compile-autoload-dotenv", "--no-compile-autoload-bunfig", join(work, "floor.ts"), "--outfile", floor], { stdout: "ignore", stderr: "pipe" });
if (build.exitCode !== 0) throw new Error(build.stderr.toString());

const file = join(work, "small.ts");
writeFileSync(file, Array.from({ length: 40 }, (_, i) => `export const v${i} = ${i};`).join("\n") + "\n");
mkdirSync(join(work, "state"));

const runs = Number(process.env.RUNS ?? 200);
const results = hyperfine(
  [
    { name: "floor (empty bun binary)", command: floor },
    { name: "cat -n small.ts", command: `cat -n ${file}` },
    { name: "kt --version", command: `${kt} --version` },
    { name: "kt read small.ts", command: `${kt} read ${file}` },
  ],
  { runs, warmup: 20, env: { KT_STATE_DIR: join(work, "state") } },
);
const base = results[0]!.medianMs;
const ktRead = results.find((r) => r.name === "kt read small.ts")!;
console.log(table([["command", "median ms", "min ms", "× floor"], ...results.map((r) => [r.name, Number(r.medianMs.toFixed(2)), Number(r.minMs.toFixed(2)), Number((r.medianMs / base).toFixed(2))])]));
console.log(`\nkt read: ${ktRead.medianMs.toFixed(2)} ms median = ${(ktRead.medianMs / base).toFixed(2)}× the floor (target ≤ 2×), ${ktRead.medianMs < 20 ? "under" : "OVER"} 20 ms; ${(ktRead.medianMs / results[1]!.medianMs).toFixed(1)}× cat -n.`);
rmSync(work, { recursive: true, force: true });
