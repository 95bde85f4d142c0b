// Property: random multi-file changes of real files (node_modules, and /usr/lib/python3* where
// present), turned into both patch forms by a reference differ (the `diff` package), applied by
// kt, give exactly the intended tree. The same patches on a tree where one hunk's old lines
// also stand further down the file are refused as ambiguous, and nothing at all is written.
// KT_PROPERTY_SEED=n replays a run; the seed is in every failure message.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, extname, join } from "node:path";
import { createTwoFilesPatch, structuredPatch } from "diff";
import { call, ROOT, tempDir, type Mode } from "./_helpers.ts";

const SEED = Number(process.env.KT_PROPERTY_SEED ?? 20261201);

function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TEXT = new Set([".js", ".ts", ".md", ".py", ".json", ".mjs", ".cjs"]);

/** Real text files: LF only, ending in a newline, valid UTF-8, 300 B – 40 KB. */
function corpus(): string[] {
  const roots = [join(ROOT, "node_modules")];
  if (existsSync("/usr/lib")) for (const d of readdirSync("/usr/lib")) if (/^python3/.test(d)) roots.push(join("/usr/lib", d));
  const out: string[] = [];
  const walk = (dir: string, depth: number) => {
    if (out.length >= 1500 || depth > 6) return;
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch {
      return;
    }
    for (const name of names) {
      if (out.length >= 1500) return;
      const p = join(dir, name);
      let st;
      try {
        st = statSync(p);
      } catch {
        continue;
      }
      if (st.isDirectory()) walk(p, depth + 1);
      else if (st.isFile() && TEXT.has(extname(name)) && st.size >= 300 && st.size <= 40_000) out.push(p);
    }
  };
  for (const r of roots) walk(r, 0);
  return out.filter((p) => {
    const text = readFileSync(p, "utf8");
    return !text.includes("\r") && !text.includes("\uFFFD") && !text.includes("\0") && text.endsWith("\n");
  });
}

const FILES = corpus();

type Op =
  | { kind: "update"; path: string; before: string; after: string }
  | { kind: "move"; path: string; to: string; before: string; after: string }
  | { kind: "add"; path: string; after: string }
  | { kind: "delete"; path: string; before: string };

/** A few edits at random places: lines removed, lines (borrowed from elsewhere) inserted. */
function mutate(text: string, pool: readonly string[], rand: () => number): string {
  const lines = text.slice(0, -1).split("\n");
  const edits = 1 + Math.floor(rand() * 4);
  for (let e = 0; e < edits; e++) {
    const at = Math.floor(rand() * (lines.length + 1));
    const remove = Math.min(lines.length - at, Math.floor(rand() * 4));
    const insert = Array.from({ length: Math.floor(rand() * 4) + (remove === 0 ? 1 : 0) }, () => pool[Math.floor(rand() * pool.length)]!);
    lines.splice(at, remove, ...insert);
  }
  const out = `${lines.join("\n")}\n`;
  return out === text ? `${text}// changed\n` : out;
}

function round(rand: () => number): { input: Record<string, string>; ops: Op[] } {
  const picked = Array.from({ length: 5 }, () => FILES[Math.floor(rand() * FILES.length)]!);
  const pool = readFileSync(picked[0]!, "utf8").split("\n").filter((l) => l.trim() !== "");
  const input: Record<string, string> = {};
  const ops: Op[] = [];
  picked.forEach((src, i) => {
    const text = readFileSync(src, "utf8");
    const name = `d${i % 2}/f${i}${extname(src)}`;
    const r = rand();
    if (i === 0 || r < 0.55) {
      input[name] = text;
      ops.push({ kind: "update", path: name, before: text, after: mutate(text, pool, rand) });
    } else if (r < 0.7) {
      input[name] = text;
      ops.push({ kind: "move", path: name, to: `moved/m${i}${extname(src)}`, before: text, after: mutate(text, pool, rand) });
    } else if (r < 0.85) {
      ops.push({ kind: "add", path: name, after: text });
    } else {
      input[name] = text;
      ops.push({ kind: "delete", path: name, before: text });
    }
  });
  return { input, ops };
}

function hunksOf(before: string, after: string): string[] {
  return structuredPatch("x", "x", before, after, "", "", { context: 3 }).hunks.map((h) => h.lines.join("\n"));
}

function envelope(ops: readonly Op[]): string {
  const out = ["*** Begin Patch"];
  for (const op of ops) {
    if (op.kind === "add") out.push(`*** Add File: ${op.path}`, ...op.after.slice(0, -1).split("\n").map((l) => `+${l}`));
    else if (op.kind === "delete") out.push(`*** Delete File: ${op.path}`);
    else {
      out.push(`*** Update File: ${op.path}`);
      if (op.kind === "move") out.push(`*** Move to: ${op.to}`);
      for (const h of hunksOf(op.before, op.after)) out.push("@@", h);
    }
  }
  out.push("*** End Patch");
  return `${out.join("\n")}\n`;
}

function unified(ops: readonly Op[]): string {
  let out = "";
  for (const op of ops) {
    if (op.kind === "add") out += createTwoFilesPatch("/dev/null", `b/${op.path}`, "", op.after, "", "", { context: 3 });
    else if (op.kind === "delete") out += createTwoFilesPatch(`a/${op.path}`, "/dev/null", op.before, "", "", "", { context: 3 });
    else if (op.kind === "update") out += createTwoFilesPatch(`a/${op.path}`, `b/${op.path}`, op.before, op.after, "", "", { context: 3 });
    else {
      // jsdiff writes no rename headers: git's, as `git diff -M` prints them.
      const body = structuredPatch("x", "x", op.before, op.after, "", "", { context: 3 }).hunks
        .map((h) => `@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@\n${h.lines.join("\n")}\n`).join("");
      out += `diff --git a/${op.path} b/${op.to}\nsimilarity index 90%\nrename from ${op.path}\nrename to ${op.to}\n--- a/${op.path}\n+++ b/${op.to}\n${body}`;
    }
  }
  return out;
}

function intended(input: Record<string, string>, ops: readonly Op[]): Record<string, string> {
  const out = { ...input };
  for (const op of ops) {
    if (op.kind === "add" || op.kind === "update") out[op.path] = op.after;
    else if (op.kind === "delete") delete out[op.path];
    else {
      delete out[op.path];
      out[op.to] = op.after;
    }
  }
  return out;
}

function writeTree(dir: string, files: Record<string, string>): void {
  for (const [p, c] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, p)), { recursive: true });
    writeFileSync(join(dir, p), c);
  }
}

function readTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of readdirSync(dir, { recursive: true, encoding: "utf8" })) {
    if (statSync(join(dir, p)).isFile()) out[p] = readFileSync(join(dir, p), "utf8");
  }
  return out;
}

const ROUNDS = 36;
const BINARY_EVERY = 6;

describe("apply_patch property: diff-made patches of real files", () => {
  test("the corpus has real files to work on", () => {
    expect(FILES.length).toBeGreaterThan(100);
  });

  test(`${ROUNDS} random multi-file changes, both forms: exactly the intended tree, or (made ambiguous) refused with nothing written`, async () => {
    const rand = rng(SEED);
    let applied = 0;
    let refusedPlain = 0;
    for (let r = 0; r < ROUNDS; r++) {
      const { input, ops } = round(rand);
      const form = r % 2 === 0 ? "envelope" : "unified";
      const patch = form === "envelope" ? envelope(ops) : unified(ops);
      const mode: Mode = r % BINARY_EVERY === 0 ? "binary" : "in-process";
      const where = `seed ${SEED}, round ${r}, ${form}, ${mode}`;

      {
        using tmp = tempDir();
        const work = join(tmp.path, "w");
        mkdirSync(work);
        writeTree(work, input);
        const result = await call(mode, "patch", { patch }, { cwd: work, stateDir: join(tmp.path, ".s") });
        if (result.isError) {
          // Real files repeat blocks; three lines of context may fit two places. That must be
          // the only reason to refuse, and then nothing may be written.
          expect(result.error?.code, `${where}: ${result.content}`).toBe("AMBIGUOUS_MATCH");
          expect(readTree(work), where).toEqual(input);
          refusedPlain++;
        } else {
          expect(readTree(work), where).toEqual(intended(input, ops));
          applied++;
        }
      }

      // The same patch on a tree where the first file's first hunk also fits at its end.
      const target = ops[0]! as Extract<Op, { kind: "update" }>;
      const first = structuredPatch("x", "x", target.before, target.after, "", "", { context: 3 }).hunks[0]!;
      const oldBlock = first.lines.filter((l) => l[0] === " " || l[0] === "-").map((l) => l.slice(1));
      const copyAt = target.before.split("\n").length; // 1-based line where the copy starts
      const ambiguousInput = { ...input, [target.path]: `${target.before}${oldBlock.join("\n")}\n` };
      {
        using tmp = tempDir();
        const work = join(tmp.path, "w");
        mkdirSync(work);
        writeTree(work, ambiguousInput);
        const result = await call(mode, "patch", { patch }, { cwd: work, stateDir: join(tmp.path, ".s") });
        expect(result.isError, `${where} (ambiguous): ${result.content}`).toBe(true);
        expect(result.error?.code, `${where} (ambiguous): ${result.content}`).toBe("AMBIGUOUS_MATCH");
        expect(readTree(work), where).toEqual(ambiguousInput);
        const lines = (result.metadata.extra as { lines?: number[] }).lines ?? [];
        if ((result.metadata.extra as { path?: string }).path === join(work, target.path)) expect(lines, where).toContain(copyAt);
      }
    }
    if (process.env.KT_PROPERTY_REPORT) console.error(`applied ${applied}, refused ${refusedPlain}`);
    // Most diffs of real code have unique context; kt must apply them, not refuse them.
    expect(applied, `seed ${SEED}: ${refusedPlain} of ${ROUNDS} plain patches refused`).toBeGreaterThanOrEqual(Math.ceil(ROUNDS * 0.8));
  }, 120_000);
});
