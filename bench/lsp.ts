// bench/lsp: what code intelligence costs (SPEC §8.1, issue 24).
//  1. An edit of a file no server covers (a .txt; a .ts outside any project), kt against the
//     main branch's binary (KT_MAIN, default /work/main/dist/kt): target ≤ 2 ms slower.
//  2. Diagnostics after a one-line edit on a warm server (kt call --jsonl, one process; the
//     edit's whole duration, diagnostics included) against a one-shot `tsc --noEmit -p` (the
//     project's TypeScript 5) and `pyright FILE` of the same project — medians, side by side.
//  3. Cold start: the first diagnostics of a fresh process (server start + project load).
//  4. The session host's memory with two warm servers (TypeScript and Python), host alone and
//     with its servers.
//   npm run build && node_modules/.bin/bun bench/lsp.ts        (RUNS=…, EDITS=…)
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hyperfine, table } from "./_hyperfine.ts";

const root = join(import.meta.dir, "..");
const kt = join(root, "dist", "kt");
const main = process.env.KT_MAIN ?? "/work/main/dist/kt";
if (!existsSync(kt)) throw new Error("build first: npm run build");
const bin = join(root, "node_modules", ".bin");
const PATH = `${bin}:${process.env.PATH}`;
const work = mkdtempSync(join(tmpdir(), "kt-bench-lsp-"));
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const round = (n: number) => Math.round(n * 10) / 10;

// ---- 1. an edit no server covers -------------------------------------------------------
function uncovered(): void {
  if (!existsSync(main)) {
    console.log(`(1) skipped: no main binary at ${main} (set KT_MAIN)`);
    return;
  }
  const dir = join(work, "plain");
  mkdirSync(dir);
  writeFileSync(join(dir, "notes.txt"), "alpha\nbeta\n");
  writeFileSync(join(dir, "loose.ts"), "export const a = 1;\n");
  const runs = Number(process.env.RUNS ?? 60);
  const rows: (string | number)[][] = [["edit (write --skip-read-check)", "main ms", "this ms", "Δ ms"]];
  for (const file of ["notes.txt", "loose.ts"]) {
    const cmd = (k: string, state: string) => `${k} write ${file} --content-file ${file} --skip-read-check`;
    const t = hyperfine(
      [
        { name: `main ${file}`, command: cmd(main, "m") },
        { name: `this ${file}`, command: cmd(kt, "t") },
      ],
      { runs, warmup: 5, cwd: dir, env: { PATH, KT_STATE_DIR: join(work, "state-plain") } },
    );
    const cpu = (x: (typeof t)[number]) => (x.userMs ?? 0) + (x.systemMs ?? 0);
    rows.push([file, round(t[0]!.medianMs), round(t[1]!.medianMs), round(t[1]!.medianMs - t[0]!.medianMs), round(cpu(t[0]!)), round(cpu(t[1]!)), round(cpu(t[1]!) - cpu(t[0]!))]);
  }
  rows[0]!.push("main CPU ms", "this CPU ms", "Δ CPU ms");
  console.log(`(1) an edit of a file no server covers, ${runs} runs each, wall medians and mean CPU (user+system):\n${table(rows)}\n`);
  // What the diagnostics add to such an edit, measured alone in-process (the wall figures above
  // are at the mercy of the machine's load): the gate (switches, extension, one existence check).
  const { diagnoseChange } = require("../src/tools/diagnostics.ts") as typeof import("../src/tools/diagnostics.ts");
  const ctx = { cwd: dir, session: "b", callId: "b", stateDir: join(work, "s"), flags: { skipReadCheck: false, dryRun: false, trace: false, strict: false }, warn() {} };
  for (const file of ["notes.txt", "loose.ts"]) {
    const f = [{ display: join(dir, file), real: join(dir, file), before: "a\n", after: "b\n" }];
    const n = 20_000;
    const t0 = performance.now();
    for (let i = 0; i < n; i++) void diagnoseChange(ctx, f);
    console.log(`    diagnostics gate for ${file}: ${round(((performance.now() - t0) / n) * 1000)} µs per edit`);
  }
  console.log("");
}

// ---- projects ------------------------------------------------------------------------------
function tsProject(): { dir: string; file: string; line: [string, string] } {
  const dir = join(work, "ts");
  cpSync(join(root, "node_modules", "eventsource-parser", "src"), join(dir, "src"), { recursive: true });
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions: { strict: true, target: "es2022", module: "esnext", moduleResolution: "bundler", allowImportingTsExtensions: true, noEmit: true, lib: ["es2022", "dom"] }, include: ["src"] }));
  return { dir, file: join(dir, "src", "parse.ts"), line: ["const SPACE = 32", "const SPACE = 32 "] };
}

function pyProject(): { dir: string; file: string; line: [string, string] } {
  const dir = join(work, "py");
  const stdlib = Bun.spawnSync(["python3", "-c", "import json, os; print(os.path.dirname(json.__file__))"]).stdout.toString().trim();
  mkdirSync(join(dir, "minijson"), { recursive: true });
  for (const f of ["__init__.py", "decoder.py", "encoder.py", "scanner.py"]) cpSync(join(stdlib, f), join(dir, "minijson", f));
  writeFileSync(join(dir, "pyproject.toml"), "[tool.pyright]\n");
  return { dir, file: join(dir, "minijson", "decoder.py"), line: ["__all__ = ['JSONDecoder', 'JSONDecodeError']", "__all__ = ['JSONDecoder', 'JSONDecodeError'] "] };
}

/** One kt call --jsonl process: warm-up, then EDITS one-line edits back and forth; the edits' durations. */
function warmEdits(p: { dir: string; file: string; line: [string, string] }): { coldMs: number; edits: number[]; checked: number } {
  const edits = Number(process.env.EDITS ?? 15);
  const calls = [{ tool: "code", input: { action: "diagnostics", file_path: p.file } }, { tool: "read", input: { file_path: p.file } }];
  for (let i = 0; i < edits; i++) {
    const [a, b] = i % 2 === 0 ? p.line : [p.line[1], p.line[0]];
    calls.push({ tool: "edit", input: { file_path: p.file, old_string: a, new_string: b } } as never);
  }
  const run = Bun.spawnSync([kt, "call", "--jsonl"], {
    cwd: p.dir,
    env: { ...process.env, PATH, KT_STATE_DIR: join(work, `state-${Math.random().toString(36).slice(2)}`), KT_CODE_MS: "180000", KT_DIAGNOSTICS_MS: "10000" },
    stdin: Buffer.from(calls.map((c) => JSON.stringify(c)).join("\n") + "\n"),
  });
  const results = run.stdout.toString().trim().split("\n").map((l) => JSON.parse(l) as { content: string; metadata: { durationMs: number; diagnostics?: { status: string }[] } });
  const editResults = results.slice(2);
  return {
    coldMs: results[0]!.metadata.durationMs,
    edits: editResults.map((r) => r.metadata.durationMs),
    checked: editResults.filter((r) => r.metadata.diagnostics?.[0]?.status === "checked").length,
  };
}

function oneShot(command: string[], cwd: string, runs = 5): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    Bun.spawnSync(command, { cwd, env: { ...process.env, PATH }, stdout: "ignore", stderr: "ignore" });
    times.push(performance.now() - t);
  }
  return median(times);
}

function warm(): void {
  const ts = tsProject();
  const py = pyProject();
  const rows: (string | number)[][] = [["", "warm edit+diagnostics ms (median)", "checked", "one-shot checker ms (median)", "ratio", "cold first diagnostics ms"]];
  const t = warmEdits(ts);
  const tsc = oneShot([join(bin, "tsc"), "--noEmit", "-p", ts.dir], ts.dir);
  rows.push(["TypeScript (tsls + TS 5)", round(median(t.edits)), `${t.checked}/${t.edits.length}`, `tsc --noEmit -p: ${round(tsc)}`, `${round(tsc / median(t.edits))}×`, round(t.coldMs)]);
  const p = warmEdits(py);
  const pyright = oneShot([join(bin, "pyright"), py.file], py.dir);
  rows.push(["Python (pyright)", round(median(p.edits)), `${p.checked}/${p.edits.length}`, `pyright FILE: ${round(pyright)}`, `${round(pyright / median(p.edits))}×`, round(p.coldMs)]);
  console.log(`(2, 3) diagnostics after a one-line edit, warm (kt call --jsonl, one process), against the one-shot checkers; cold = the first diagnostics of a fresh process:\n${table(rows)}\n`);
}

// ---- 4. the host's memory with two warm servers ------------------------------------------
function rssKb(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

function descendants(pid: number): number[] {
  const out = Bun.spawnSync(["ps", "-eo", "pid=,ppid="]).stdout.toString();
  const kids = new Map<number, number[]>();
  for (const l of out.split("\n")) {
    const [p, pp] = l.trim().split(/\s+/).map(Number);
    if (p && pp) kids.set(pp, [...(kids.get(pp) ?? []), p]);
  }
  const all: number[] = [];
  const walk = (p: number) => {
    for (const k of kids.get(p) ?? []) {
      all.push(k);
      walk(k);
    }
  };
  walk(pid);
  return all;
}

function memory(): void {
  const state = join(work, "state-host");
  const ts = join(work, "ts");
  const py = join(work, "py");
  const env = { ...process.env, PATH, KT_STATE_DIR: state, KT_CODE_MS: "180000" };
  Bun.spawnSync([kt, "code", "diagnostics", join(ts, "src", "parse.ts")], { cwd: ts, env });
  Bun.spawnSync([kt, "code", "diagnostics", join(py, "minijson", "decoder.py")], { cwd: py, env });
  const host = Bun.spawnSync(["ps", "-eo", "pid=,args="]).stdout.toString().split("\n").find((l) => l.includes("__host") && l.includes(state));
  if (!host) {
    console.log("(4) no host found");
    return;
  }
  const pid = Number(host.trim().split(/\s+/)[0]);
  const kids = descendants(pid);
  const servers = kids.reduce((n, k) => n + rssKb(k), 0);
  console.log(`(4) the session host with two warm servers: host ${Math.round(rssKb(pid) / 1024)} MB RSS; its ${kids.length} server processes ${Math.round(servers / 1024)} MB; total ${Math.round((rssKb(pid) + servers) / 1024)} MB\n`);
  Bun.spawnSync([kt, "session", "end"], { env });
}

console.log(`bench/lsp on ${navigator.hardwareConcurrency} cores (load average ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}; a shared machine: figures are noisy)\n`);
try {
  uncovered();
  warm();
  memory();
} finally {
  rmSync(work, { recursive: true, force: true });
}
