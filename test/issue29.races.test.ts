// Issue 29, the remaining races: one regression test per item, named after it, through
// the compiled binary.
import { describe, expect, test } from "bun:test";
import { lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { KT, tempDir } from "./_helpers.ts";

const ENV = (stateDir: string) => ({ PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", NO_COLOR: "1", KT_STATE_DIR: stateDir });

/** The binary with a deadline: a hang is a failure, not a stuck suite. */
async function ktWithin(ms: number, args: string[], opts: { cwd: string; stateDir: string; stdin: string }) {
  const proc = Bun.spawn([KT, ...args], { cwd: opts.cwd, env: ENV(opts.stateDir), stdin: Buffer.from(opts.stdin), stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => proc.kill("SIGKILL"), ms);
  const [stdout, stderr, exitCode] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  return { stdout, stderr, exitCode, hung: proc.signalCode === "SIGKILL" };
}

/** Every entry below `dir`, as paths relative to it (directories and files alike). */
function everything(dir: string, prefix = ""): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const rel = prefix ? `${prefix}/${name}` : name;
    out.push(rel);
    if (lstatSync(join(dir, name)).isDirectory()) out.push(...everything(join(dir, name), rel));
  }
  return out;
}

/**
 * Swaps `d` between the real directory and a symbolic link to `outside` as fast as it can,
 * until killed (as issue 11's confinement tests do). Whatever is at `d` after a swap (the
 * link, or a directory a write made while d was away) goes and the real directory comes
 * back; the real directory stays a varying while (0–0.3 ms), so that checks often pass and
 * the next swap lands between a check and its use.
 */
const startFlipper = (d: string, outside: string) =>
  Bun.spawn(
    [process.execPath, "-e", `
      const { existsSync, renameSync, rmSync, symlinkSync } = require("node:fs");
      const [d, saved, outside] = process.argv.slice(-3);
      for (;;) {
        try { renameSync(d, saved); } catch {}
        try { symlinkSync(outside, d); } catch {}
        if (existsSync(saved)) {
          try { rmSync(d, { recursive: true, force: true }); renameSync(saved, d); } catch {}
        }
        const until = performance.now() + Math.random() * 0.3;
        while (performance.now() < until);
      }`, d, `${d}.saved`, outside],
    { stdout: "ignore", stderr: "ignore" },
  );

type Line = { content: string; isError: boolean; error?: { code: string } };

/** 300 calls, each creating root/d/tN/b/c/<file> (three new directories), while root/d flips. */
async function directorySwapRace(call: (root: string, i: number) => object): Promise<{ results: Line[]; outside: string[]; root: string }> {
  using tmp = tempDir();
  const root = join(tmp.path, "root");
  const outside = join(tmp.path, "outside");
  const stateDir = join(tmp.path, "state");
  mkdirSync(join(root, "d"), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(outside, "f"), "outside the root\n");
  const flipper = startFlipper(join(root, "d"), outside);
  let lines: string[];
  try {
    const calls = Array.from({ length: 300 }, (_, i) => JSON.stringify(call(root, i)));
    const run = await ktWithin(120_000, ["call", "--jsonl", "--root", root, "--skip-read-check"], { cwd: root, stateDir, stdin: `${calls.join("\n")}\n` });
    expect(run.hung).toBe(false);
    lines = run.stdout.trim().split("\n");
  } finally {
    flipper.kill("SIGKILL");
    await flipper.exited;
  }
  expect(lines).toHaveLength(300);
  expect(readFileSync(join(outside, "f"), "utf8")).toBe("outside the root\n");
  return { results: lines.map((l) => JSON.parse(l) as Line), outside: everything(outside), root };
}

describe("issue 29: races", () => {
  test("item 1: parent directories are created through verified descriptors, as files already are: kt write during a directory swap creates 0 directories outside the root (300 attempts)", async () => {
    const { results, outside } = await directorySwapRace((root, i) => ({ tool: "write", input: { file_path: join(root, "d", `t${i}`, "b", "c", "file"), content: `attempt ${i}\n` } }));
    expect(outside).toEqual(["f"]);
    // The race was run, not dodged: some writes met the link, and some landed.
    expect(results.some((r) => r.error?.code === "OUTSIDE_ROOT")).toBe(true);
    expect(results.some((r) => !r.isError)).toBe(true);
  }, 150_000);

  test("item 1: parent directories are created through verified descriptors, as files already are: kt patch during a directory swap creates 0 directories outside the root (300 attempts)", async () => {
    const { results, outside } = await directorySwapRace((root, i) => ({
      tool: "apply_patch",
      input: { patch: ["*** Begin Patch", `*** Add File: ${join(root, "d", `t${i}`, "b", "c", "file")}`, `+attempt ${i}`, "*** End Patch"].join("\n") },
    }));
    expect(outside).toEqual(["f"]);
    expect(results.some((r) => r.error?.code === "OUTSIDE_ROOT")).toBe(true);
    expect(results.some((r) => !r.isError)).toBe(true);
  }, 150_000);
});
