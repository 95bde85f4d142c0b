// The built-in grep engine prints the same bytes whatever its thread count (SPEC §7.3):
// over real trees (this repository's node_modules, the Python standard library), seeded
// random inputs — patterns, output modes, context, paging, filters — give the same
// content, spill file and metadata on 1, 2 and 4 threads, with helpers sharing the walk
// from the first file and with helpers joining as they would outside tests. Limits and
// truncation, the "Not searched" note (§8.4) and the near-miss hint are in that output.
// A search stopped by the time limit is partial on every thread count, and what it shows
// is part of the whole result.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { callTool, kt, tempDir, type TempDir } from "./_helpers.ts";
import { mulberry32 } from "../bench/_random.ts";
import { grepWalk, type GrepFound } from "../src/search/builtin.ts";

/** The Python standard library of the python3 on PATH, or null. */
function pythonStdlib(): string | null {
  const r = Bun.spawnSync(["python3", "-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"], { stdout: "pipe", stderr: "ignore" });
  const dir = r.exitCode === 0 ? r.stdout.toString().trim() : "";
  return dir && existsSync(join(dir, "os.py")) ? dir : null;
}

/** `rare`: a pattern matching some tens of files, all listed on one page. */
const TREES: { name: string; root: string | null; patterns: string[]; includes: string[]; rare: string }[] = [
  {
    name: "node_modules",
    root: join(import.meta.dir, "..", "node_modules"),
    patterns: ["function", "readFileSync\\(", "TODO|FIXME", "^import .* from", "class [A-Z]\\w+", "@param \\{\\w+\\}", "zqxjkvbw", "readFielSync", "Licen[cs]e"],
    includes: ["*.js", "*.d.ts", "package.json", "*.md"],
    rare: "readFileSync\\(",
  },
  {
    name: "the Python standard library",
    root: pythonStdlib(),
    patterns: ["import", "def [a-z_]+\\(self", "TODO|XXX", "^class \\w+\\(", "raise \\w+Error\\(", "zqxjkvbw", "subproces", "Copyright"],
    includes: ["*.py", "*.txt", "test_*.py"],
    rare: "class \\w+Warning\\(",
  },
];

/** The runs compared: one thread alone, helpers from the first file on, and helpers
 * joining when the walk is worth it (no count of files alone), as outside tests. */
const RUNS: { threads: number; after: string | undefined }[] = [
  { threads: 1, after: "1000000000" },
  { threads: 2, after: "0" },
  { threads: 4, after: "0" },
  { threads: 2, after: undefined },
  { threads: 4, after: undefined },
];

function pick<T>(next: () => number, items: readonly T[]): T {
  return items[Math.floor(next() * items.length)]!;
}

/** A random grep input over a tree's patterns and filters. */
function randomInput(next: () => number, tree: (typeof TREES)[number]): Record<string, unknown> {
  const input: Record<string, unknown> = { pattern: pick(next, tree.patterns) };
  const mode = pick(next, [undefined, undefined, "files_with_matches", "count"]);
  if (mode) input.output_mode = mode;
  if (!mode && next() < 0.3) input.context = pick(next, [1, 2]);
  if (next() < 0.3) input.case_sensitive = next() < 0.5;
  if (next() < 0.3) input.include = pick(next, tree.includes);
  if (next() < 0.4) input.head_limit = pick(next, [3, 40, 500]);
  if (next() < 0.3) input.offset = pick(next, [0, 7, 120]);
  return input;
}

interface Outcome {
  content: string;
  spill: string | null;
  metadata: Record<string, unknown>;
}

// A search not meant to time out is given ten minutes: under load, the 10 s limit cut one
// thread count's search short and not another's (a partial result, rightly unequal).
async function run(root: string, stateDir: string, input: Record<string, unknown>, threads: number, after: string | undefined, timeout?: string): Promise<Outcome> {
  const id = `threads-${threads}-${after ?? "auto"}`;
  const env: Record<string, string> = { KT_GREP_ENGINE: "builtin", KT_THREADS: String(threads), ...(after === undefined ? {} : { KT_GREP_PARALLEL_AFTER: after }), KT_GREP_TIMEOUT_MS: timeout ?? "600000" };
  const saved = process.env.KT_GREP_PARALLEL_AFTER;
  // A count of files alone set by an earlier run must not leak into an "auto" one.
  if (after === undefined) delete process.env.KT_GREP_PARALLEL_AFTER;
  try {
    const r = await callTool("grep", input, { cwd: root, stateDir, callId: id, env });
    expect(r.warnings).toEqual([]);
    expect(r.metadata.extra?.engine).toBe("builtin");
    // Helpers from the first file on: every thread asked for shares the walk.
    if (after === "0" && timeout === undefined) expect(r.metadata.extra?.threads).toBe(threads);
    if (threads === 1) expect(r.metadata.extra?.threads).toBe(1);
    const spillPath = r.metadata.truncation?.spillPath;
    // Everything but the thread count and the time taken.
    const { extra, truncation, durationMs: _durationMs, ...metadata } = r.metadata as unknown as Record<string, unknown> & { extra?: Record<string, unknown>; truncation?: Record<string, unknown> };
    const { threads: _threads, ...sameExtra } = extra ?? {};
    return {
      content: r.content.replaceAll(`grep-${id}.txt`, "grep-ID.txt"),
      spill: spillPath ? readFileSync(spillPath, "utf8") : null,
      metadata: { ...metadata, extra: sameExtra, truncation: truncation ? { ...truncation, spillPath: spillPath ? "SPILL" : undefined } : undefined },
    };
  } finally {
    if (saved === undefined) delete process.env.KT_GREP_PARALLEL_AFTER;
    else process.env.KT_GREP_PARALLEL_AFTER = saved;
  }
}

for (const tree of TREES) {
  const { root } = tree;
  describe.skipIf(root === null || !existsSync(root))(`grep on 1, 2 and 4 threads: the same bytes over ${tree.name}`, () => {
    let tmp: TempDir;
    beforeAll(() => {
      tmp = tempDir();
    });
    afterAll(() => tmp[Symbol.dispose]());
    const next = mulberry32(tree.name.length * 7919 + 32);
    const cases = Array.from({ length: 7 }, () => randomInput(next, tree));
    // Always one of each: the notes of a search with no match (near miss, "Not
    // searched"), and a common word cut to the 100 shown lines with its spill file.
    cases.push({ pattern: tree.patterns.find((p) => p === "zqxjkvbw")! }, { pattern: tree.patterns[0]! });
    for (const input of cases) {
      test(JSON.stringify(input), async () => {
        const outcomes: Outcome[] = [];
        for (const { threads, after } of RUNS) outcomes.push(await run(root!, join(tmp.path, "state"), input, threads, after));
        for (let i = 1; i < outcomes.length; i++) expect({ run: RUNS[i], ...outcomes[i]! }).toEqual({ run: RUNS[i], ...outcomes[0]! });
      }, 120_000);
    }

    test("the notes are in what is compared: a search with no match names what was not searched", async () => {
      const none = await run(root!, join(tmp.path, "state"), { pattern: "zqxjkvbw" }, 2, "0");
      expect(none.content).toStartWith('No matches for "zqxjkvbw"');
      if (tree.name !== "node_modules") expect(none.content).toContain("Not searched: ");
      const common = await run(root!, join(tmp.path, "state"), { pattern: tree.patterns[0]! }, 2, "0");
      expect(common.spill).not.toBeNull();
      expect(common.content).toContain("grep-ID.txt");
    }, 60_000);

    test("a search stopped by the time limit: at once, the same bytes on every thread count; later, partial on each, and part of the whole", async () => {
      const state = join(tmp.path, "state");
      const input = { pattern: tree.rare, output_mode: "files_with_matches" };
      // A limit of 0 stops every thread after the first file: the same single file.
      const instant: Outcome[] = [];
      for (const threads of [1, 2, 4]) instant.push(await run(root!, state, input, threads, "0", "0"));
      for (const o of instant.slice(1)) expect(o).toEqual(instant[0]!);
      expect(instant[0]!.metadata.extra).toMatchObject({ partial: true });
      expect(instant[0]!.content).toContain(" 0 s time limit");
      const whole = await run(root!, state, input, 2, "0");
      expect(whole.metadata.extra).toMatchObject({ partial: false });
      // Every matching file is listed (no page, no spill file).
      expect(whole.spill).toBeNull();
      expect(whole.content).not.toContain("[Showing");
      const wholeLines = new Set(whole.content.split("\n"));
      for (const threads of [1, 2, 4]) {
        const cut = await run(root!, state, input, threads, "0", "25");
        // Done within the limit (a fast machine): then it is the whole result.
        if ((cut.metadata.extra as { partial?: boolean }).partial !== true) {
          expect(cut).toEqual(whole);
          continue;
        }
        expect(cut.content).toContain(" 0 s time limit");
        const paths = cut.content.split("\n").slice(2).filter((l) => l !== "" && !l.startsWith("["));
        for (const path of paths) expect({ path, in: wholeLines.has(path) }).toEqual({ path, in: true });
      }
    }, 120_000);

    test("the binary, with its embedded worker threads, prints the same bytes on 1, 2 and 4 threads", () => {
      const state = join(tmp.path, "state");
      const args = ["grep", tree.patterns[1]!, "--output-mode", "count", "--head-limit", "300"];
      const outs = [1, 2, 4].map((threads) => kt(args, { cwd: root!, stateDir: state, env: { KT_GREP_ENGINE: "builtin", KT_THREADS: String(threads) } }));
      for (const o of outs) expect(o.exitCode).toBe(outs[0]!.exitCode);
      expect(outs[0]!.stdout.length).toBeGreaterThan(0);
      for (const o of outs.slice(1)) expect(o.stdout).toBe(outs[0]!.stdout);
    }, 60_000);
  });
}

describe("a helper's findings cross threads packed (builtin.ts: one string, one Float64Array)", () => {
  const snapshot = (files: GrepFound["snapshot"]["files"], counted = 0, evicted = false) => ({ files, counted, lines: files.reduce((n, f) => n + f.count, 0), evicted });
  const cases: [string, GrepFound][] = [
    ["nothing found", { snapshot: snapshot([]), probed: null, unreadable: [], skipped: [], timedOut: false, pruned: [], worked: [] }],
    [
      "every field: hits with any text, empty strings, fractional mtimes, cut files, counted files, a probe, binary files, pruned directories",
      {
        snapshot: snapshot(
          [
            { rel: "a/b.ts", mtimeMs: 1_700_000_000_123.456, count: 3, hits: [{ line: 1, text: "" }, { line: 7, text: "é😀\r\t\u0000x" }, { line: 2 ** 31 + 5, text: "…".repeat(250) }], cut: true },
            { rel: "", mtimeMs: 0, count: 2, hits: [], cut: true },
            { rel: "ü/ß", mtimeMs: -1.5, count: 1, hits: [{ line: 3, text: "\n" }], cut: false },
          ],
          4,
          true,
        ),
        probed: snapshot([{ rel: "near.txt", mtimeMs: 5, count: 1, hits: [{ line: 9, text: "readFielSync" }], cut: false }]),
        unreadable: ["locked", ""],
        skipped: ["slow.txt"],
        binary: ["bin/a.out", "x.png"],
        timedOut: true,
        pruned: ["node_modules\0noise", "dist\0.gitignore"],
        worked: [
          {
            rel: "a/b.ts",
            abs: "/t/a/b.ts",
            change: { previous: new Uint8Array([1, 2, 3]), next: new Uint8Array([4]), replacements: 2, counts: { added: 1, removed: 3 }, previousSha: "ab".repeat(32), nextSha: "cd".repeat(32) },
          },
          { rel: "bin", abs: "/t/bin", change: { left: "binary" } },
          { rel: "empty", abs: "/t/é", change: { previous: new Uint8Array(0), next: new Uint8Array([10, 0, 255]), replacements: 1, counts: undefined, previousSha: "", nextSha: "x" } },
          { rel: "l1", abs: "/t/l1", change: { left: "notUtf8" } },
          { rel: "big", abs: "/t/big", change: { left: "tooLarge" } },
          { rel: "same", abs: "/t/same", change: { left: "unchanged" } },
        ],
      },
    ],
    ["noteBinary with none found", { snapshot: snapshot([]), probed: snapshot([]), unreadable: [], skipped: [], binary: [], timedOut: false, pruned: [], worked: [] }],
  ];
  for (const [name, found] of cases) {
    test(name, () => {
      // As postMessage sends it: a structured clone of the packed form, its bytes handed over.
      const packed = grepWalk.pack!(found);
      const transfer = grepWalk.transfer!(packed);
      const crossed = grepWalk.unpack!(structuredClone(packed, { transfer }));
      expect(crossed).toStrictEqual(found);
      // Handed over, not copied: the sender's array is emptied.
      expect(transfer.every((b) => b.byteLength === 0)).toBe(true);
      expect("binary" in crossed).toBe("binary" in found);
    });
  }
});
