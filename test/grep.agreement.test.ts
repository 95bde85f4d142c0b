// The two grep engines print the same bytes (SPEC §4.4): for many patterns over a
// generated tree that exercises every filter and encoding, and over a real tree
// (node_modules), KT_GREP_ENGINE=builtin (alone and with worker threads) and =rg give
// identical content and identical spill files; and glob's file set equals `rg --files`.
// Skipped without rg.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, symlinkSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { callTool, kt, tempDir, type TempDir } from "./_helpers.ts";
import { RG, RG_NOISE, rgFiles, writeTree } from "./_search.ts";
import { onOneLine } from "../src/search/plan.ts";
import { threadCount } from "../src/search/threads.ts";

/** Worker threads for the threaded run: more than this machine's cores, so that the
 * work sharing between more than two threads is exercised wherever the suite runs. */
const THREADED = 3;

/**
 * The built-in engine on this thread alone, the built-in engine with worker threads from
 * the first file on, and rg: all three must give the same content and spill file.
 * `rooted`: the threaded built-in run and the rg run again with the tree as the root
 * (--root), where every directory and file is read through a verified descriptor and rg's
 * findings are confirmed by the built-in search: the same bytes again.
 */
async function both(cwd: string, stateDir: string, input: Record<string, unknown>, rooted = false) {
  const out: { content: string; spill: string | null; matches: unknown }[] = [];
  const runs: { engine: string; after: string; threads: number | undefined; root?: boolean }[] = [
    { engine: "builtin", after: "1000000000", threads: 1 },
    { engine: "builtin", after: "0", threads: THREADED },
    { engine: "rg", after: "", threads: undefined },
  ];
  if (rooted) runs.push({ engine: "builtin", after: "0", threads: THREADED, root: true }, { engine: "rg", after: "", threads: undefined, root: true });
  for (const { engine, after, threads, root } of runs) {
    const saved = { engine: process.env.KT_GREP_ENGINE, after: process.env.KT_GREP_PARALLEL_AFTER, threads: process.env.KT_THREADS };
    process.env.KT_GREP_ENGINE = engine;
    process.env.KT_GREP_PARALLEL_AFTER = after;
    process.env.KT_THREADS = String(THREADED);
    try {
      const id = `agree-${engine}-${after}${root ? "-root" : ""}`;
      const r = await callTool("grep", input, { cwd, stateDir, callId: id, ...(root ? { root: cwd } : {}) });
      expect(r.warnings).toEqual([]);
      if (!r.isError) expect(r.metadata.extra?.engine).toBe(engine);
      // A single file is always searched on this thread; a missing directory not at all.
      if (r.metadata.extra?.threads !== undefined && !String(input.path ?? "").includes(".")) expect(r.metadata.extra.threads).toBe(threads as number);
      const spillPath = r.metadata.truncation?.spillPath;
      out.push({
        content: r.content.replace(`grep-${id}.txt`, "grep-agree-ENGINE.txt"),
        spill: spillPath ? readFileSync(spillPath, "utf8") : null,
        matches: r.metadata.matches,
      });
    } finally {
      for (const [key, value] of [["KT_GREP_ENGINE", saved.engine], ["KT_GREP_PARALLEL_AFTER", saved.after], ["KT_THREADS", saved.threads]] as const) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    }
  }
  for (let i = 1; i < out.length; i++) expect({ run: runs[i], ...out[i]! }).toEqual({ run: runs[i], ...out[0]! });
  return out[0]!;
}

/** Every file glob lists (from the spill file when the list was cut), sorted. */
async function globbed(cwd: string, stateDir: string, pattern: string): Promise<string[]> {
  const r = await callTool("glob", { pattern }, { cwd, stateDir, callId: "all" });
  const spill = r.metadata.truncation?.spillPath;
  const text = spill ? readFileSync(spill, "utf8").trimEnd() : r.content;
  return text.split("\n").slice(1).sort();
}

/** rg's file list as glob shows it: names with control characters escaped. */
function asListed(files: string[]): string[] {
  return files.map(onOneLine).sort();
}

/** A small deterministic generator (mulberry32). */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ["alpha", "Beta", "gamma", "TODO", "fixme", "const", "return", "ContextEngine", "café", "naïve", "日本", "Ωmega", "x_1", "foo.bar", "a(b)", "$price", "  ", "\t", "🎉"];

function generatedTree(root: string): void {
  const rnd = random(42);
  const pick = () => WORDS[Math.floor(rnd() * WORDS.length)]!;
  const line = () => Array.from({ length: 1 + Math.floor(rnd() * 12) }, pick).join(rnd() < 0.2 ? "" : " ");
  const dirs = ["", "src", "src/core", "src/core/deep", "lib", "docs", "build", "gen", ".hidden", "node_modules/pkg", "pkg/dist", "vendor/inner", "sub/.github"];
  const files: Record<string, string | Uint8Array> = {
    ".git/HEAD": "ref: refs/heads/main\n",
    ".git/info/exclude": "*.excluded\n",
    ".gitignore": "build/\n*.log\n!keep.log\n/gen/\n",
    "src/.gitignore": "*.tmp\n!core/*.tmp\n",
    ".ignore": "!build/\nbuild/skip/\n",
    ".ktignore": "*.secret\n",
    "docs/.ktignore": "private/\n",
    "vendor/inner/.git/HEAD": "x\n",
    "vendor/inner/.gitignore": "*.md\n",
    "sub/.gitignore": "!.github/\n",
  };
  let n = 0;
  for (const dir of dirs) {
    for (const ext of ["ts", "md", "log", "tmp", "secret", "excluded", "txt"]) {
      const lines = Array.from({ length: 5 + Math.floor(rnd() * 40) }, line);
      if (rnd() < 0.2) lines.push("y".repeat(300) + " ContextEngine " + "z".repeat(50));
      const eol = rnd() < 0.25 ? "\r\n" : "\n";
      files[join(dir, `f${n++}.${ext}`)] = lines.join(eol) + (rnd() < 0.8 ? eol : "");
    }
  }
  files["keep.log"] = "TODO keep\n";
  files["docs/private/p.ts"] = "TODO private\n";
  files["build/skip/s.ts"] = "TODO skip\n";
  files["bin/data.bin"] = Buffer.concat([Buffer.from("TODO binary\n"), Buffer.from([0, 1, 2]), Buffer.from("\nTODO after\n")]);
  files["bin/late.bin"] = `${"TODO early\n".repeat(10_000)}\0\n`;
  files["enc/bom.ts"] = "\uFEFFTODO bom\n";
  files["enc/u16.txt"] = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("TODO wide\r\nalpha\r\n", "utf16le")]);
  files["enc/latin1.txt"] = Buffer.from([0x54, 0x4f, 0x44, 0x4f, 0x20, 0xe9, 0x0a]);
  // Invalid UTF-8 on one line, a real U+FFFD on the next: "." matches only the real one.
  files["enc/mixed.txt"] = Buffer.concat([Buffer.from("TODO bad "), Buffer.from([0xff]), Buffer.from(" x.y\nTODO real x\uFFFDy\n")]);
  // Names that would break a line-oriented listing: both engines show them escaped.
  files["odd/new\nline.ts"] = "TODO newline ContextEngine\n";
  files["odd/tab\there.md"] = "TODO tab\n";
  // Every case of a word, for the case options.
  files["case/mixed.txt"] = "Alpha\nalpha\nALPHA\nbeta Beta todo\n";
  writeTree(root, files);
  mkdirSync(join(root, "links"));
  symlinkSync("..", join(root, "links", "loop"));
  symlinkSync("../keep.log", join(root, "links", "keep.log"));
  // Distinct mtimes so that ordering is decided by time, as it usually is.
  const all = rgFiles(root, ["-uu"]);
  all.forEach((rel, i) => utimesSync(join(root, rel), 1_650_000_000 + i * 7, 1_650_000_000 + i * 7));
}

/** The §7.3 options, each with the rg flags that ask rg itself for the same lines (kt's
 * include and type both filter, where rg's -g would override -t: so a directory). */
const OPTIONS: { kt: Record<string, unknown>; rg: string[] }[] = [
  { kt: { pattern: "alpha", context: 2 }, rg: ["-S", "-C2", "-e", "alpha"] },
  { kt: { pattern: "TODO", before: 1, after: 3 }, rg: ["-s", "-B1", "-A3", "-e", "TODO"] },
  { kt: { pattern: "ContextEngine", context: 1 }, rg: ["-s", "-C1", "-e", "ContextEngine"] },
  { kt: { pattern: "TODO", output_mode: "files_with_matches" }, rg: ["-s", "-l", "-e", "TODO"] },
  { kt: { pattern: "todo", output_mode: "count" }, rg: ["-i", "-c", "-e", "todo"] },
  { kt: { pattern: "alpha", case_sensitive: true }, rg: ["-s", "-e", "alpha"] },
  { kt: { pattern: "TODO", case_sensitive: false }, rg: ["-i", "-e", "TODO"] },
  { kt: { pattern: "a(b)", fixed_strings: true }, rg: ["-S", "-F", "-e", "a(b)"] },
  { kt: { pattern: "foo.bar", fixed_strings: true, output_mode: "count" }, rg: ["-S", "-F", "-c", "-e", "foo.bar"] },
  { kt: { pattern: "TODO", type: "ts" }, rg: ["-s", "-t", "ts", "-e", "TODO"] },
  { kt: { pattern: "alpha", type: "md", include: "src/**" }, rg: ["-S", "-t", "md", "-e", "alpha", "--", "src"] },
  { kt: { pattern: "alpha\\s+beta", multiline: true }, rg: ["-S", "-U", "--multiline-dotall", "-e", "alpha\\s+beta"] },
  { kt: { pattern: "gamma.{0,12}return", multiline: true, context: 1 }, rg: ["-S", "-U", "--multiline-dotall", "-C1", "-e", "gamma.{0,12}return"] },
];

const PATTERNS: Record<string, unknown>[] = [
  { pattern: "TODO" },
  { pattern: "todo" },
  { pattern: "contextengine" },
  { pattern: "ContextEngine" },
  { pattern: "^alpha" },
  { pattern: "alpha$" },
  { pattern: "^$" },
  { pattern: "\\bx_1\\b" },
  { pattern: "foo\\.bar" },
  { pattern: "a\\(b\\)" },
  { pattern: "\\$price" },
  { pattern: "caf." },
  { pattern: "[^\\x00-\\x7f]" },
  { pattern: "\\p{Greek}" },
  { pattern: "日本" },
  { pattern: "🎉" },
  { pattern: "\\s{2,}" },
  { pattern: "\\t" },
  { pattern: "(gamma|fixme)\\s+return" },
  { pattern: "[A-Z]{4}" },
  { pattern: "z{10,}$" },
  { pattern: "e" },
  { pattern: "x*" },
  { pattern: "TODO", include: "*.ts" },
  { pattern: "TODO", include: "src/**" },
  { pattern: "TODO", include: "*.{md,txt}" },
  { pattern: "TODO", include: "**/deep/*.ts" },
  { pattern: "TODO", include: ".github/**" },
  { pattern: "TODO", path: "node_modules" },
  { pattern: "TODO", include: "build/**" },
  { pattern: "TODO", path: "enc/u16.txt" },
  { pattern: "TODO", path: "bin/data.bin" },
  { pattern: "ContextEngien" },
  { pattern: "contextEngine" },
  { pattern: "Zzqx" },
  { pattern: "x.y" },
  { pattern: "[^a-z ]y" },
  // SPEC §7.3's options, and Claude Code's names for them.
  ...OPTIONS.map((o) => o.kt),
  { pattern: "e", head_limit: 7, offset: 30 },
  { pattern: "e", offset: 100 },
  { pattern: "TODO", output_mode: "files_with_matches", head_limit: 3, offset: 2 },
  { pattern: "TODO", output_mode: "count", offset: 1 },
  { pattern: "ContextEngine", context: 1, head_limit: 2 },
  { pattern: "alpha", "-C": 1, "-i": true, glob: "*.ts", "-n": true },
  { pattern: "beta", "-A": 2, "-B": 1, type: "md", output_mode: "content", head_limit: 5 },
  { pattern: "TODO", multiline: true, output_mode: "count" },
];

describe.skipIf(!RG)("builtin and rg print the same bytes", () => {
  describe("over a generated tree", () => {
    // Made before the tests and removed after them, even when a filter skips some.
    let tmp: TempDir;
    let root = "";
    beforeAll(() => {
      tmp = tempDir();
      root = join(tmp.path, "tree");
      generatedTree(root);
    });
    afterAll(() => tmp[Symbol.dispose]());
    for (const input of PATTERNS) {
      test(JSON.stringify(input), async () => {
        await both(root, join(tmp.path, "state"), input, true);
      });
    }
    test("glob prints the same bytes walking alone and with a worker thread sharing the walk", async () => {
      const patterns = ["**/*", "**/*.ts", "src/**", "**/f1.ts", "**/f1.tx", "*.md", "**/*.nope", "**/.github/**", "build/**"];
      for (const pattern of patterns) {
        const outs: { content: string; spill: string | null }[] = [];
        for (const after of ["1000000000", "0", "5"]) {
          const saved = process.env.KT_GLOB_PARALLEL_AFTER;
          process.env.KT_GLOB_PARALLEL_AFTER = after;
          try {
            const id = `glob-${after}`;
            const r = await callTool("glob", { pattern }, { cwd: root, stateDir: join(tmp.path, "state"), callId: id });
            const spillPath = r.metadata.truncation?.spillPath;
            outs.push({ content: r.content.replace(`glob-${id}.txt`, "glob-ID.txt"), spill: spillPath ? readFileSync(spillPath, "utf8") : null });
            // src/ and build/ are single chains of directories: nothing to share there.
            if (after === "0" && !/^(src|build)\//.test(pattern)) expect({ pattern, threads: r.metadata.extra?.threads }).toEqual({ pattern, threads: threadCount() });
            const cli = kt(["glob", pattern, "--call-id", id], { cwd: root, stateDir: join(tmp.path, "state"), env: { KT_GLOB_PARALLEL_AFTER: after } });
            expect(cli.stdout).toBe(`${r.content}\n`);
          } finally {
            if (saved === undefined) delete process.env.KT_GLOB_PARALLEL_AFTER;
            else process.env.KT_GLOB_PARALLEL_AFTER = saved;
          }
        }
        expect({ pattern, out: outs[1] }).toEqual({ pattern, out: outs[0]! });
        expect({ pattern, out: outs[2] }).toEqual({ pattern, out: outs[0]! });
      }
    });
    test("every §7.3 option gives the lines rg itself gives", async () => {
      // What kt leaves out and rg does not: .ktignore, binary files (rg may list a match
      // before the NUL); and odd/, whose names hold newlines (one path per line here).
      const skip = (rel: string) => rel.endsWith(".secret") || rel.startsWith("docs/private/") || rel.startsWith("bin/") || rel.startsWith("odd/");
      for (const { kt: input, rg } of OPTIONS) {
        const r = await callTool("grep", input, { cwd: root, stateDir: join(tmp.path, "state"), callId: "vs-rg" });
        const spill = r.metadata.truncation?.spillPath;
        const text = spill ? readFileSync(spill, "utf8").trimEnd() : r.content;
        const mode = (input.output_mode as string | undefined) ?? "content";
        const ours = new Map<string, string[]>();
        let file = "";
        for (const line of text.split("\n").slice(2)) {
          if (mode !== "content") {
            const m = mode === "count" ? /^(.*): (\d+)$/.exec(line)! : [line, line, ""];
            if (!skip(m[1]!)) ours.set(m[1]!, mode === "count" ? [m[2]!] : []);
          } else if (line === "--") ours.get(file)?.push("--");
          else if (line.startsWith("  ")) ours.get(file)?.push(/^ {2}(\d+[:-])/.exec(line)![1]!);
          else {
            file = line;
            if (!skip(file)) ours.set(file, []);
          }
        }
        const proc = Bun.spawnSync([RG!, "--heading", "-n", "--null", "--no-config", "--no-ignore-global", "--crlf", ...RG_NOISE, "-g", "!odd/", ...rg, ...(rg.includes("--") ? [] : ["--", "."])], { cwd: root, stdout: "pipe" });
        const theirs = new Map<string, string[]>();
        file = "";
        for (const raw of proc.stdout.toString().split(mode === "files_with_matches" ? "\0" : "\n")) {
          if (raw === "") continue;
          // Under --crlf rg ends even its "--" lines with "\r\n".
          let line = raw.replace(/\r$/, "");
          const z = raw.indexOf("\0");
          if (mode === "files_with_matches" || z !== -1) {
            file = (mode === "files_with_matches" ? raw : raw.slice(0, z)).replace(/^\.\//, "");
            line = mode === "files_with_matches" ? "" : raw.slice(z + 1).replace(/\r$/, "");
            if (!skip(file)) theirs.set(file, []);
          }
          if (line === "") continue;
          if (mode === "count") theirs.get(file)?.push(line);
          else if (line === "--") theirs.get(file)?.push("--");
          else {
            // Anything else is one of rg's notes (a binary file), about a file skipped here.
            const m = /^(\d+[:-])/.exec(line);
            if (m) theirs.get(file)?.push(m[1]!);
            else expect({ file, line, skipped: skip(file) }).toEqual({ file, line, skipped: true });
          }
        }
        expect(theirs.size, JSON.stringify(input)).toBeGreaterThan(0);
        const sorted = (m: Map<string, string[]>) => Object.fromEntries([...m.entries()].sort(([a], [b]) => (a < b ? -1 : 1)));
        expect({ input, files: sorted(ours) }).toEqual({ input, files: sorted(theirs) });
      }
    });
    test("glob's file set is rg --files, less what .ktignore excludes", async () => {
      const ktignored = (rel: string) => rel.endsWith(".secret") || rel.startsWith("docs/private/");
      const expected = rgFiles(root, RG_NOISE).filter((rel) => !ktignored(rel));
      expect(expected.length).toBeGreaterThan(30);
      expect(expected).toContain("odd/new\nline.ts");
      expect(await globbed(root, join(tmp.path, "state"), "**/*")).toEqual(asListed(expected));
    });
  });

  describe("over a real tree (node_modules)", () => {
    const root = join(import.meta.dir, "..", "node_modules");
    let tmp: TempDir;
    beforeAll(() => {
      tmp = tempDir();
    });
    afterAll(() => tmp[Symbol.dispose]());
    const ROOTED = new Set(["readFileSync\\(", "license", "picomatchh"]);
    const real: Record<string, unknown>[] = [
      { pattern: "function" },
      { pattern: "TODO|FIXME" },
      { pattern: "^import .* from" },
      { pattern: "\\bexports\\.\\w+ =" },
      { pattern: "license", include: "package.json" },
      { pattern: "@param \\{\\w+\\}", include: "*.d.ts" },
      { pattern: "[^\\x00-\\x7f]{3,}" },
      { pattern: "readFileSync\\(" },
      { pattern: "zod/mini", path: "zod" },
      { pattern: "definitelyNotPresentAnywhere" },
      { pattern: "picomatchh" },
    ];
    for (const input of real) {
      test(JSON.stringify(input), async () => {
        // With the tree as root too, for a few: rg's findings are then each searched again.
        await both(root, join(tmp.path, "state"), input, ROOTED.has(input.pattern as string));
      });
    }
    test("a near miss found in the same pass (built-in) and in a second pass (rg) is the same hint", async () => {
      const { content } = await both(root, join(tmp.path, "state"), { pattern: "picomatchh", include: "*.json" });
      expect(content).toContain('(did you mean "picomatch"?)');
      const swapped = await both(root, join(tmp.path, "state"), { pattern: "readFielSync" });
      expect(swapped.content).toContain('(did you mean "readFileSync"?)');
    });
    test("glob's file set is rg --files", async () => {
      expect(await globbed(root, join(tmp.path, "state"), "**")).toEqual(asListed(rgFiles(root, RG_NOISE)));
    });
  });
});
