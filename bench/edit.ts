// The edit cascade on large generated TypeScript files (SPEC §6: under 100 ms on 20,000 lines
// when nothing matches and every strategy runs; memory linear in file size).
//   node_modules/.bin/bun bench/edit.ts
import { heapStats } from "bun:jsc";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import iconv from "iconv-lite";
import { CASCADE, Haystack, nearMiss, replace } from "../src/replacer/index.ts";
import { hyperfine } from "./_hyperfine.ts";
import { mulberry32 } from "./_random.ts";

const RUNS = 30;

const WORDS = ["user", "order", "item", "price", "total", "config", "state", "cache", "result", "value", "index",
  "count", "buffer", "stream", "token", "parser", "node", "tree", "path", "options", "session", "budget", "plan"];

/** Realistic-looking TypeScript: classes, functions, nested blocks, comments, many "}" lines. */
function generate(lines: number, seed = 7): string[] {
  const r = mulberry32(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
  const id = () => pick(WORDS) + (r() < 0.5 ? pick(WORDS).replace(/^./, (c) => c.toUpperCase()) : "");
  const out: string[] = [];
  let fn = 0;
  const statement = (pad: string) => {
    const k = r();
    if (k < 0.35) return `${pad}const ${id()} = ${id()}.${id()}(${id()}, ${Math.floor(r() * 100)});`;
    if (k < 0.55) return `${pad}${id()}.${id()} += ${id()}.length * ${Math.floor(r() * 9) + 1};`;
    if (k < 0.7) return `${pad}// ${pick(WORDS)} ${pick(WORDS)} before ${pick(WORDS)}`;
    if (k < 0.85) return `${pad}this.${id()} = await ${id()}(${id()}, { ${id()}: ${id()} });`;
    return `${pad}log("${pick(WORDS)}", ${id()});`;
  };
  while (out.length < lines) {
    out.push(`/** ${pick(WORDS)} for the ${pick(WORDS)} ${pick(WORDS)}. */`);
    out.push(`export function ${id()}${fn++}(${id()}: ${pick(["string", "number", "Plan"])}, ${id()}: Options) {`);
    const body = 5 + Math.floor(r() * 25);
    for (let i = 0; i < body; i++) {
      if (r() < 0.2) {
        out.push(`  if (${id()} > ${Math.floor(r() * 50)}) {`);
        const inner = 1 + Math.floor(r() * 4);
        for (let j = 0; j < inner; j++) out.push(statement("    "));
        out.push("  }");
      } else out.push(statement("  "));
    }
    out.push(`  return ${id()};`, "}", "");
  }
  return out.slice(0, lines);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function time(label: string, content: string, oldString: string, newString: string, expect: string): number {
  const req = { content, oldString, newString, replaceAll: false, strict: false };
  const first = replace(req);
  const got = first.kind === "ok" ? first.strategy : first.kind;
  if (got !== expect) throw new Error(`${label}: expected ${expect}, got ${got}`);
  for (let i = 0; i < 3; i++) replace(req);
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    replace(req);
    samples.push(performance.now() - t);
  }
  return median(samples);
}

/** A real 50-line block starting at a function header, so its anchors exist in the file. */
function blockAt(lines: string[], near: number): { start: number; block: string[] } {
  let start = near;
  while (!lines[start]!.startsWith("export function")) start++;
  return { start, block: lines.slice(start, start + 50) };
}

/** Middle lines rewritten beyond recognition: anchors match, nothing else does. */
function garbled(block: string[]): string {
  return [block[0]!, ...block.slice(1, -1).map((l, i) => `${l.match(/^\s*/)![0]}zq${i}.vx(${i * 7}, "kw${i}");`), block[block.length - 1]!].join("\n");
}

/** Every fifth middle line misremembered (a renamed identifier): block-anchor's case. */
function misremembered(block: string[]): string {
  return block.map((l, i) => (i > 0 && i < block.length - 1 && i % 5 === 0 ? l.replace(/[a-z]+/, (w) => `${w}X`) : l)).join("\n");
}

const lines20k = generate(20_000);
const content = lines20k.join("\n") + "\n";
const { block } = blockAt(lines20k, 10_000);
const last = block[block.length - 1]!;
const unrelated = Array.from({ length: 50 }, (_, i) => `  qz${i} = kv(${i}, "wx");`).join("\n");
const commonAnchors = ["  }", ...garbled(block).split("\n").slice(1, -1), "}"].join("\n");
const fuzzy = misremembered(block);

const rows: [string, number][] = [
  ["(a) nothing matches — real anchors, garbled middle", time("a", content, garbled(block), "x", "not-found")],
  ["(a′) nothing matches — unrelated 50 lines", time("a2", content, unrelated, "x", "not-found")],
  ["(a″) nothing matches — anchors on the commonest lines", time("a3", content, commonAnchors, "x", "not-found")],
  ["(b) block-anchor wins", time("b", content, fuzzy, fuzzy.replace(last, `${last} // end`), "block-anchor")],
];

console.log(`edit cascade, 20,000-line file (${(content.length / 1024).toFixed(0)} KB), 50-line old_string, median of ${RUNS} runs`);
console.log("");
console.log("| case | median ms |");
console.log("|---|---:|");
for (const [label, ms] of rows) console.log(`| ${label} | ${ms.toFixed(2)} |`);

/** Heap kept by the haystack's indexes after every strategy and the near-miss ran on it. */
function heapGrowth(text: string, old: string): { bytes: number; ms: number } {
  Bun.gc(true);
  const before = heapStats().heapSize;
  const hay = new Haystack(text);
  for (const strategy of CASCADE) strategy.find(hay, old);
  nearMiss(hay, old, []);
  Bun.gc(true);
  const bytes = heapStats().heapSize - before;
  if (hay.lineCount === 0) throw new Error("unreachable: keeps hay alive");
  const req = { content: text, oldString: old, newString: "x", replaceAll: false, strict: false };
  const samples: number[] = [];
  for (let i = 0; i < 10; i++) {
    const t = performance.now();
    replace(req);
    samples.push(performance.now() - t);
  }
  return { bytes, ms: median(samples) };
}

console.log("");
console.log("Memory: heap held by one cascade's indexes (nothing matches, every strategy and the near-miss ran)");
console.log("");
console.log("| lines | file KB | heap growth KB | growth / file size | median ms |");
console.log("|---:|---:|---:|---:|---:|");
for (const n of [5_000, 10_000, 20_000, 40_000]) {
  const ls = generate(n, 11);
  const text = ls.join("\n") + "\n";
  const old = garbled(blockAt(ls, Math.floor(n / 2)).block);
  const { bytes, ms } = heapGrowth(text, old);
  console.log(`| ${n.toLocaleString("en")} | ${(text.length / 1024).toFixed(0)} | ${(bytes / 1024).toFixed(0)} | ${(bytes / text.length).toFixed(2)} | ${ms.toFixed(2)} |`);
}

// Whole commands (SPEC §8.3): the same 20,000-line file as UTF-8 through main's binary and this
// one (decoding is one strict UTF-8 decode, so they must agree within noise), and beside them
// as UTF-16 LE (with BOM) and GBK through this one. One file content for all: the generated
// TypeScript with a Chinese comment every 20 lines, so that GBK is detected as GBK.
//   KT_BASELINE=/work/main/dist/kt node_modules/.bin/bun bench/edit.ts   (hyperfine, medians)
const baseline = process.env.KT_BASELINE ?? "/work/main/dist/kt";
const ktBin = join(import.meta.dir, "..", "dist", "kt");
if (existsSync(ktBin) && existsSync(baseline) && Bun.which("hyperfine")) {
  const work = mkdtempSync(join(tmpdir(), "kt-bench-edit-"));
  const stateDir = join(work, "state");
  mkdirSync(stateDir);
  const zh = ["这是一个中文注释，说明下面的函数。", "计算总价并更新缓存中的状态。", "解析器在这里处理令牌流。", "会话结束时释放缓冲区。"];
  const text = lines20k.map((l, i) => (i % 20 === 5 ? `${l} // ${zh[i % zh.length]}` : l)).join("\n") + "\n";
  const files: Record<string, Uint8Array> = {
    "utf8.ts": Buffer.from(text, "utf8"),
    "utf16.ts": Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode(text, "utf-16le")]),
    "gbk.ts": iconv.encode(text, "gbk"),
  };
  for (const [name, bytes] of Object.entries(files)) {
    writeFileSync(join(work, name), bytes);
    writeFileSync(join(work, `${name}.orig`), bytes);
  }
  // A line found once, so that every kt makes the same exact edit.
  const count = new Map<string, number>();
  for (const l of lines20k) count.set(l, (count.get(l) ?? 0) + 1);
  let at = 10_000;
  while (count.get(lines20k[at]!) !== 1 || at % 20 === 5) at++;
  const target = lines20k[at]!;
  const args = (file: string, dry: boolean) => `edit ${file} --old-string-file old.txt --new-string-file new.txt --skip-read-check${dry ? " --dry-run" : ""}`;
  writeFileSync(join(work, "old.txt"), target);
  writeFileSync(join(work, "new.txt"), `${target} // 已修改`);
  writeFileSync(join(work, "miss.txt"), garbled(block));
  const runs = Number(process.env.RUNS ?? 20);
  const cases = [
    { name: "main kt, UTF-8", bin: baseline, file: "utf8.ts" },
    { name: "this kt, UTF-8", bin: ktBin, file: "utf8.ts" },
    { name: "this kt, UTF-16 LE", bin: ktBin, file: "utf16.ts" },
    { name: "this kt, GBK", bin: ktBin, file: "gbk.ts" },
  ];
  const results = hyperfine(
    [
      ...cases.map((c) => ({ name: `${c.name}: edit --dry-run`, command: `${c.bin} ${args(c.file, true)}` })),
      ...cases.map((c) => ({ name: `${c.name}: edit, written`, command: `${c.bin} ${args(c.file, false)}`, prepare: `sh -c "cp ${c.file}.orig ${c.file} && ${c.bin} read ${c.file} --limit 1 >/dev/null"` })),
      // Nothing matches: every strategy and the near-miss run (exit 1, so through sh).
      ...cases.map((c) => ({ name: `${c.name}: nothing matches`, command: `sh -c "${c.bin} edit ${c.file} --old-string-file miss.txt --new-string x --skip-read-check >/dev/null; true"` })),
    ],
    { runs, warmup: 3, env: { KT_STATE_DIR: stateDir, KT_SESSION: "bench" }, cwd: work, prepare: "true" },
  );
  rmSync(work, { recursive: true, force: true });
  console.log("");
  console.log(`Whole commands on the 20,000-line file (${(files["utf8.ts"]!.length / 1024).toFixed(0)} KB as UTF-8), hyperfine, median of ${runs} runs; × is against main's binary on UTF-8 in the same group`);
  console.log("");
  console.log("| command | median ms | min ms | × main | CPU ms (user+sys, mean) | CPU × main |");
  console.log("|---|---:|---:|---:|---:|---:|");
  const cpu = (r: (typeof results)[number]) => (r.userMs ?? 0) + (r.systemMs ?? 0);
  for (let g = 0; g < 3; g++) {
    const group = results.slice(g * cases.length, (g + 1) * cases.length);
    const base = group[0]!;
    for (const r of group) console.log(`| ${r.name} | ${r.medianMs.toFixed(1)} | ${r.minMs.toFixed(1)} | ${(r.medianMs / base.medianMs).toFixed(2)} | ${cpu(r).toFixed(1)} | ${(cpu(r) / cpu(base)).toFixed(2)} |`);
  }
} else {
  console.log("\n(whole-command timings skipped: needs dist/kt, the baseline binary and hyperfine)");
}
