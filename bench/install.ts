// bench/install: what installing kt through npm costs each call. `kt read` of a small file
// run four ways side by side: the platform package's binary itself (the reference), the
// `kt` npm links after a default install (the install script put the binary in the
// launcher's place), the `kt` of an install with --ignore-scripts (the Node launcher runs
// the binary), and `node -e 0` (Node's own start-up, what the launcher adds at least).
// Packages are built for this machine and installed offline from `npm pack` tarballs.
//   bun bench/install.ts            (ROUNDS=3 interleaved rounds, RUNS=30 runs each)
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hostTarget, SCOPE } from "../scripts/build-binaries.ts";
import { hyperfine, requireHyperfine, table } from "./_hyperfine.ts";

requireHyperfine();
const root = join(import.meta.dir, "..");
const work = mkdtempSync(join(tmpdir(), "kt-bench-install-"));
const host = hostTarget();
const step = (argv: string[], cwd: string, env: Record<string, string> = {}) => {
  const run = Bun.spawnSync(argv, { cwd, env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
  if (run.exitCode !== 0) throw new Error(`${argv.join(" ")}: ${run.stderr.toString()}`);
};

try {
  const out = join(work, "dist");
  step([process.execPath, join(root, "scripts", "build-binaries.ts"), "--out", out, "host"], root);
  const offline = { npm_config_registry: "http://127.0.0.1:9/", npm_config_cache: join(work, "cache"), npm_config_offline: "true", npm_config_audit: "false", npm_config_fund: "false", npm_config_update_notifier: "false" };
  const packs = join(work, "packs");
  mkdirSync(packs);
  step(["npm", "pack", "--silent", "--pack-destination", packs, join(out, "npm", SCOPE, "kt"), join(out, "npm", SCOPE, host)], work, offline);
  const tarballs = readdirSync(packs).map((t) => join(packs, t));
  for (const [dir, flags] of [["scripts", []], ["no-scripts", ["--ignore-scripts"]]] as const) {
    mkdirSync(join(work, dir));
    step(["npm", "install", "--offline", ...flags, ...tarballs], join(work, dir), offline);
  }
  const file = join(work, "small.ts");
  writeFileSync(file, Array.from({ length: 40 }, (_, i) => `export const v${i} = ${i};`).join("\n") + "\n");
  mkdirSync(join(work, "state"));

  const commands = [
    { name: "platform binary itself", command: `${join(work, "scripts", "node_modules", SCOPE, host, "bin", "kt")} read ${file}` },
    { name: "kt, default install", command: `${join(work, "scripts", "node_modules", ".bin", "kt")} read ${file}` },
    { name: "kt, --ignore-scripts (launcher)", command: `${join(work, "no-scripts", "node_modules", ".bin", "kt")} read ${file}` },
    { name: "node -e 0", command: "node -e 0" },
  ];
  const rounds = Number(process.env.ROUNDS ?? 3);
  const runs = Number(process.env.RUNS ?? 30);
  const medians = new Map<string, number[]>(commands.map((c) => [c.name, []]));
  for (let round = 0; round < rounds; round++) {
    // Each round in another order, so that a burst of load does not fall on one command.
    const order = round % 2 === 0 ? commands : [...commands].reverse();
    for (const r of hyperfine(order, { runs, warmup: 5, env: { KT_STATE_DIR: join(work, "state") } })) medians.get(r.name)!.push(r.medianMs);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const base = median(medians.get(commands[0]!.name)!);
  console.log(table([["command", "median ms", "× binary", "round medians"], ...commands.map((c) => {
    const m = median(medians.get(c.name)!);
    return [c.name, Number(m.toFixed(1)), Number((m / base).toFixed(2)), medians.get(c.name)!.map((x) => x.toFixed(1)).join(" ")];
  })]));
} finally {
  rmSync(work, { recursive: true, force: true });
}
