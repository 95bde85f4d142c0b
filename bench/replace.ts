// bench/replace: one literal and one regex replacement across a copy of the Python standard
// library and a copy of node_modules, kt replace side by side with `rg -l … | xargs sd …`
// (Debian's sd) and ast-grep when it is installed, in one hyperfine session per case
// (medians). Target: kt within 2× of rg | xargs sd. Every run starts from the original files
// (hyperfine --prepare copies back the files the replace changes, untimed) and a fresh state
// directory. Both sides run under `bash -c`, so each pays the same shell start. sd exits
// non-zero on a file it cannot take (not UTF-8): the pipeline's status is ignored. sd's
// literal mode is -s (--string-mode); sd 0.7 has no -F and exits at once on it.
//   npm run build && bun bench/replace.ts            (KT_BENCH_RUNS=N, default 10)
// KT_BENCH_ONLY=stdlib or KT_BENCH_ONLY=node_modules runs that tree's two cases alone.
// KT_BENCH_BASELINE=path/to/an/older/kt adds its rows (kt replace and --dry-run) to the same
// hyperfine session, for before/after figures measured side by side.
import { cpSync, existsSync, mkdtempSync, readdirSync, realpathSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hyperfine, table } from "./_hyperfine.ts";
import { KT, ROOT } from "./_search.ts";
import { ALWAYS_NOISE } from "../src/core/noise.ts";

if (!existsSync(KT)) throw new Error("build first: npm run build");
for (const tool of ["rg", "sd"]) if (!Bun.which(tool)) throw new Error(`bench/replace needs ${tool} on PATH`);
const astGrep = Bun.which("ast-grep");
const runs = Number(process.env.KT_BENCH_RUNS ?? 10);
const before = process.env.KT_BENCH_BASELINE;
if (before && !existsSync(before)) throw new Error(`KT_BENCH_BASELINE: no such file ${before}`);

const work = mkdtempSync(join(tmpdir(), "kt-bench-replace-"));

/** A copy of the newest /usr/lib/python3.X, without bytecode caches (rg would search them, kt skips them). */
function pythonTree(): string | null {
  const lib = readdirSync("/usr/lib").filter((d) => /^python3\.\d+$/.test(d)).sort().pop();
  if (!lib) return null;
  const dest = join(work, "py-pristine");
  cpSync(join("/usr/lib", lib), dest, { recursive: true, filter: (src) => !src.endsWith("__pycache__") && !src.includes("/site-packages") && !src.includes("/dist-packages") });
  return dest;
}

/**
 * A copy of this repository's node_modules (through its symbolic link, if a worktree has
 * one), with every directory of a noise name renamed, so that kt's noise rule does not make
 * it search less than rg does.
 */
function nodeModules(): string {
  const dest = join(work, "nm-pristine");
  const cp = Bun.spawnSync(["cp", "-r", realpathSync(join(ROOT, "node_modules")), dest]);
  if (cp.exitCode !== 0) throw new Error(`cp failed: ${cp.stderr.toString()}`);
  const names = ALWAYS_NOISE.flatMap((n: string, i: number) => (i === 0 ? ["-name", n] : ["-o", "-name", n]));
  const find = Bun.spawnSync(["find", dest, "-mindepth", "1", "-depth", "-type", "d", "(", ...names, ")"], { stdout: "pipe" });
  for (const dir of find.stdout.toString().split("\n").filter(Boolean)) renameSync(dir, `${dir}_`);
  return dest;
}

interface Case {
  tree: string;
  label: string;
  fixed: boolean;
  pattern: string;
  replacement: string;
  /** ast-grep's form of the same change, when it has one. */
  astGrep?: { lang: string; pattern: string; rewrite: string };
}

const sh = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;

function runCase(c: Case, pristine: string): void {
  const tree = join(work, "tree");
  rmSync(tree, { recursive: true, force: true });
  cpSync(pristine, tree, { recursive: true });
  const listed = Bun.spawnSync(["rg", "-l", "--no-config", ...(c.fixed ? ["-F"] : []), "-e", c.pattern, "."], { cwd: pristine, stdout: "pipe" }).stdout.toString().split("\n").filter(Boolean);
  const list = join(work, "changed.txt");
  writeFileSync(list, `${listed.join("\n")}\n`);
  const state = join(work, "state");
  // Put back what the previous run changed, and forget kt's stamps and history; then sync,
  // so that the files put back are on disk before the run: else kt's first fsync waits for
  // the copy's own writeback (a journal commit takes every dirty file with it), which rg | sd,
  // never syncing, does not — seconds on a busy disk, and nothing to do with kt.
  const restore = `cd ${sh(pristine)} && xargs -d '\\n' -a ${sh(list)} cp --parents -t ${sh(tree)} && rm -rf ${sh(state)} && sync`;
  const prepare = `bash -c ${sh(restore)}`;
  const flag = c.fixed ? "" : " --regex";
  const commands = [
    { name: "kt replace", command: `bash -c ${sh(`${sh(KT)} replace ${sh(c.pattern)} ${sh(c.replacement)}${flag} > /dev/null`)}`, prepare },
    {
      name: "rg -l | xargs sd",
      command: `bash -c ${sh(`rg -l --no-config ${c.fixed ? "-F " : ""}-e ${sh(c.pattern)} . | xargs -r sd ${c.fixed ? "-s " : ""}-- ${sh(c.pattern)} ${sh(c.replacement)}; true`)}`,
      prepare,
    },
  ];
  // What kt does but write and fsync: how much of its time is the durability sd does not pay for.
  commands.push({ name: "kt replace --dry-run", command: `bash -c ${sh(`${sh(KT)} replace ${sh(c.pattern)} ${sh(c.replacement)}${flag} --dry-run > /dev/null`)}`, prepare });
  if (before) {
    commands.push({ name: "kt replace (before)", command: `bash -c ${sh(`${sh(before)} replace ${sh(c.pattern)} ${sh(c.replacement)}${flag} > /dev/null`)}`, prepare });
    commands.push({ name: "kt replace --dry-run (before)", command: `bash -c ${sh(`${sh(before)} replace ${sh(c.pattern)} ${sh(c.replacement)}${flag} --dry-run > /dev/null`)}`, prepare });
  }
  if (astGrep && c.astGrep) {
    commands.push({ name: "ast-grep", command: `bash -c ${sh(`${sh(astGrep)} run -l ${c.astGrep.lang} -p ${sh(c.astGrep.pattern)} -r ${sh(c.astGrep.rewrite)} -U . > /dev/null; true`)}`, prepare });
  }
  // The two must agree on what they change (checked once, before timing).
  Bun.spawnSync(["bash", "-c", restore]);
  const check = Bun.spawnSync(["bash", "-c", `${sh(KT)} replace ${sh(c.pattern)} ${sh(c.replacement)}${flag} --json`], { cwd: tree, env: { ...process.env, KT_STATE_DIR: state }, stdout: "pipe" });
  const files = (JSON.parse(check.stdout.toString()) as { metadata: { files: number; matches: number } }).metadata;
  const timings = hyperfine(commands, { runs, warmup: 1, cwd: tree, env: { KT_STATE_DIR: state } });
  const sd = timings.find((t) => t.name === "rg -l | xargs sd")!;
  console.log(`\n${c.label}: ${c.fixed ? "literal" : "regex"} ${JSON.stringify(c.pattern)} → ${JSON.stringify(c.replacement)} (${files.matches} replacements in ${files.files} files; rg lists ${listed.length})`);
  console.log(
    table([
      ["command", "median ms", "min ms", "user+sys ms", "× rg|sd (median)", "× rg|sd (cpu)"],
      ...timings.map((t) => {
        const cpu = (t.userMs ?? 0) + (t.systemMs ?? 0);
        const sdCpu = (sd.userMs ?? 0) + (sd.systemMs ?? 0);
        return [t.name, Math.round(t.medianMs * 10) / 10, Math.round(t.minMs * 10) / 10, Math.round(cpu * 10) / 10, Math.round((t.medianMs / sd.medianMs) * 100) / 100, Math.round((cpu / sdCpu) * 100) / 100];
      }),
    ]),
  );
}

const only = process.env.KT_BENCH_ONLY;
if (only !== undefined && only !== "stdlib" && only !== "node_modules") throw new Error("KT_BENCH_ONLY: stdlib or node_modules");
try {
  const py = only === "node_modules" ? null : pythonTree();
  if (py) {
    runCase({ tree: py, label: "Python stdlib", fixed: true, pattern: "def __init__(self", replacement: "def __init__(this" }, py);
    runCase(
      { tree: py, label: "Python stdlib", fixed: false, pattern: "([A-Za-z_]+)\\.startswith\\(", replacement: "startswith($1, ", astGrep: { lang: "python", pattern: "$A.startswith($B)", rewrite: "startswith($A, $B)" } },
      py,
    );
  } else if (only !== "node_modules") console.log("no /usr/lib/python3.X: the Python cases are skipped");
  if (only !== "stdlib") {
    const nm = nodeModules();
    runCase({ tree: nm, label: "node_modules", fixed: true, pattern: "Object.defineProperty(exports", replacement: "Object.defineProperty(module.exports" }, nm);
    runCase({ tree: nm, label: "node_modules", fixed: false, pattern: "require\\(\"([a-z]+)\"\\)", replacement: "require('$1')" }, nm);
  }
} finally {
  if (!process.env.KT_BENCH_KEEP) rmSync(work, { recursive: true, force: true });
}
