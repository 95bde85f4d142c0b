// The edit cascade on large generated TypeScript files (SPEC §6: under 100 ms on 20,000 lines
// when nothing matches and every strategy runs; memory linear in file size).
//   node_modules/.bin/bun bench/edit.ts
import { heapStats } from "bun:jsc";
import { CASCADE, Haystack, nearMiss, replace } from "../src/replacer/index.ts";

const RUNS = 30;

function mulberry32(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

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
