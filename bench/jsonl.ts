// bench/jsonl: 1,000 `read` calls through one `kt call --jsonl` process against 1,000
// separate `kt read` processes, side by side on the same file and machine. Prints calls
// per second for both (median of a few runs) and checks both gave the same text.
//   node_modules/.bin/bun bench/jsonl.ts [calls] [runs]
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { table } from "./_hyperfine.ts";

const root = join(import.meta.dir, "..");
const kt = join(root, "dist", "kt");
if (!existsSync(kt)) throw new Error("build first: npm run build");

const calls = Number(process.argv[2] ?? 1000);
const runs = Number(process.argv[3] ?? 5);
const dir = mkdtempSync(join(tmpdir(), "kt-bench-jsonl-"));
const file = join(dir, "small.ts");
writeFileSync(file, Array.from({ length: 100 }, (_, i) => `export const value${i} = ${i}; // line ${i + 1}`).join("\n") + "\n");
const env = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", KT_STATE_DIR: join(dir, "state") };

const expected = Bun.spawnSync([kt, "read", file], { env }).stdout.toString();
if (!expected.startsWith(`${file}\n     1→`)) throw new Error(`kt read did not work: ${expected.slice(0, 200)}`);

function oneStream(): number {
  const input = Array.from({ length: calls }, (_, i) => JSON.stringify({ type: "tool_use", id: `toolu_${i}`, name: "read", input: { file_path: file } })).join("\n") + "\n";
  const started = performance.now();
  const proc = Bun.spawnSync([kt, "call", "--jsonl", "--format", "anthropic"], { env, stdin: Buffer.from(input), stdout: "pipe", stderr: "pipe" });
  const seconds = (performance.now() - started) / 1000;
  const lines = proc.stdout.toString().trimEnd().split("\n");
  if (proc.exitCode !== 0 || lines.length !== calls) throw new Error(`kt call --jsonl: exit ${proc.exitCode}, ${lines.length} lines; ${proc.stderr.toString()}`);
  for (const [i, line] of [lines[0]!, lines[calls - 1]!].entries()) {
    const reply = JSON.parse(line) as { tool_use_id: string; content: string; is_error: boolean };
    if (reply.is_error || `${reply.content}\n` !== expected) throw new Error(`kt call --jsonl gave a different answer than kt read (line ${i === 0 ? 1 : calls})`);
  }
  return seconds;
}

function manyProcesses(): number {
  const started = performance.now();
  for (let i = 0; i < calls; i++) {
    const proc = Bun.spawnSync([kt, "read", file], { env, stdout: "pipe", stderr: "pipe" });
    if (proc.exitCode !== 0) throw new Error(`kt read: exit ${proc.exitCode}: ${proc.stderr.toString()}`);
    if (i === calls - 1 && proc.stdout.toString() !== expected) throw new Error("kt read changed its answer");
  }
  return (performance.now() - started) / 1000;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

try {
  oneStream(); // warm-up: page cache, state index created
  const stream: number[] = [];
  const procs: number[] = [];
  // Interleaved, so that a noisy neighbour slows both sides alike.
  for (let r = 0; r < runs; r++) {
    stream.push(oneStream());
    procs.push(manyProcesses());
  }
  const s = median(stream);
  const p = median(procs);
  const rate = (seconds: number) => Math.round(calls / seconds);
  console.log(`${calls} read calls of a 100-line file, median of ${runs} runs (${process.platform}-${process.arch})\n`);
  console.log(
    table([
      ["way", "seconds", "calls/s", "ms/call"],
      ["kt call --jsonl (one process)", Number(s.toFixed(3)), rate(s), Number(((s * 1000) / calls).toFixed(3))],
      [`kt read × ${calls} (one process each)`, Number(p.toFixed(3)), rate(p), Number(((p * 1000) / calls).toFixed(3))],
    ]),
  );
  console.log(`\nkt call --jsonl is ${(p / s).toFixed(1)}× the throughput of separate processes.`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
