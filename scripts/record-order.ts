// Records scripts/kt.order, the profile `npm run build` lays kt's bytecode out by
// (`--bytecode-order`): the functions a run of kt loads, from the calls an agent makes most,
// `kt read` first. Bun places them together at the front of the binary, so a short call
// reads and decodes less of it (fewer page faults, less memory). Functions are matched by a
// hash of their syntax, so a profile from an older build still applies; re-record after
// large changes:   npm run build:order   (then npm run build)
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pkg from "../package.json" with { type: "json" };

const root = join(import.meta.dir, "..");
const order = join(root, "scripts", "kt.order");
const work = mkdtempSync(join(tmpdir(), "kt-order-"));
try {
  // The build command without a profile (so that no old profile shapes what is recorded).
  const words = pkg.scripts.build.split(/\s+/).filter((w) => !w.startsWith("--bytecode-order"));
  const out = words.indexOf("--outfile");
  const kt = join(work, "kt");
  words.splice(out, 2, "--outfile", kt);
  const build = Bun.spawnSync([process.execPath, ...words.slice(1)], { cwd: root, stdout: "ignore", stderr: "pipe" });
  if (build.exitCode !== 0) throw new Error(build.stderr.toString());

  const file = join(work, "small.ts");
  writeFileSync(file, "export const a = 1;\nexport const b = 2;\nexport const c = a + b;\n");
  const made = join(work, "made.ts");
  // A patch of two files: its diff in each form kt reads, applied one after the other.
  const patched = [join(work, "p1.ts"), join(work, "p2.ts")];
  for (const f of patched) writeFileSync(f, "export function f() {\n  return 1;\n}\n");
  const unified = join(work, "change.diff");
  writeFileSync(unified, ["p1.ts", "p2.ts"].map((f) => `diff --git a/${f} b/${f}\n--- a/${f}\n+++ b/${f}\n@@ -1,3 +1,3 @@\n export function f() {\n-  return 1;\n+  return 2;\n }\n`).join(""));
  const envelope = join(work, "change.patch");
  writeFileSync(envelope, `*** Begin Patch\n${["p1.ts", "p2.ts"].map((f) => `*** Update File: ${f}\n@@\n export function f() {\n-  return 2;\n+  return 3;\n }\n`).join("")}*** End Patch\n`);
  const state = join(work, "state");
  mkdirSync(state);
  const profiles = join(work, "profiles");
  mkdirSync(profiles);
  // Most common first: a profile's functions are placed in the order the runs are listed.
  const runs: string[][] = [
    ["read", file],
    ["edit", file, "--old-string", "a + b", "--new-string", "b + a"],
    ["write", made, "--content", "export {};\n"],
    ["patch", "--patch-file", unified],
    ["patch", "--patch-file", envelope],
    ["grep", "export", work],
    ["glob", "*.ts", "--path", work],
    ["bash", "true"],
    ["--version"],
  ];
  runs.forEach((args, i) => {
    const env = { ...process.env, KT_STATE_DIR: state, BUN_BYTECODE_ORDER_OUT: join(profiles, `${String(i).padStart(2, "0")}-%p.order`) };
    const r = Bun.spawnSync([kt, ...args], { cwd: work, env, stdout: "ignore", stderr: "pipe" });
    if (r.exitCode !== 0 && r.exitCode !== 1) throw new Error(`kt ${args.join(" ")}: ${r.stderr.toString()}`);
  });
  // One file: the runs' functions in run order, each once.
  const seen = new Set<string>();
  const lines: string[] = [];
  let header = "";
  for (const name of readdirSync(profiles).sort()) {
    const [first, ...rest] = readFileSync(join(profiles, name), "utf8").split("\n");
    header ||= first ?? "";
    for (const line of rest) if (line && !seen.has(line)) seen.add(line), lines.push(line);
  }
  if (!header || lines.length === 0) throw new Error("no profile was written (does this Bun support BUN_BYTECODE_ORDER_OUT?)");
  writeFileSync(order, `${header}\n${lines.join("\n")}\n`);
  console.log(`${order}: ${lines.length} functions from ${runs.length} kinds of call`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
