// The process path of platforms without /proc (SPEC §8.8), run here on Linux by forcing it
// (KT_PORTABLE_PROCESSES=1: /proc reads as absent, no session host, no subreaper — what
// macOS gets). The same session, driven through dist/kt once on each path, must give the
// model the same text and leave no process behind: a background start with its first
// output, list, read, write to stdin, stop of a command with children, a command that exits
// by itself, a foreground bash, session end.
import { afterEach, describe, expect, test } from "bun:test";
import { endSandboxes, groupAlive, ktAsync, norm, rows, sandbox, until } from "./_process.ts";

afterEach(endSandboxes);

interface Step {
  args: string[];
  stdin?: string;
  /** Wait for this before the step (e.g. output having arrived). */
  before?: (stateDir: string) => Promise<void>;
}

const logHas = (id: string, text: string) => async (stateDir: string) => {
  const { readFileSync } = await import("node:fs");
  await until(`${id}'s log to hold ${JSON.stringify(text)}`, () => {
    try {
      return readFileSync(`${stateDir}/sessions/default/proc/${id}.log`, "utf8").includes(text);
    } catch {
      return false;
    }
  });
};

const exited = (id: string) => async (stateDir: string) => {
  await until(`${id} to end`, () => rows(stateDir).find((r) => r.id === id && r.status !== "running"));
};

const STEPS: Step[] = [
  { args: ["ps", "start", "echo ready; read line; echo got $line; sleep 30"] },
  { args: ["ps", "list"] },
  { args: ["ps"], stdin: JSON.stringify({ action: "write", id: "p1", input: "hello\n" }), before: logHas("p1", "ready") },
  { args: ["ps", "read", "p1"], before: logHas("p1", "got hello") },
  // A command whose children would outlive a kill of the shell alone.
  { args: ["ps", "start", "sleep 317 & sleep 318 & echo two; wait"] },
  { args: ["ps", "stop", "p2"], before: logHas("p2", "two") },
  { args: ["ps", "start", "echo short; exit 4"] },
  { args: ["ps", "read", "p3"], before: exited("p3") },
  { args: ["bash", "echo fg; echo err >&2; exit 2"] },
  { args: ["ps", "list"] },
  { args: ["session", "end"] },
  { args: ["ps", "list"] },
];

async function play(portable: boolean): Promise<{ texts: string[]; pgids: number[] }> {
  const box = sandbox();
  const texts: string[] = [];
  const pgids = new Set<number>();
  for (const step of STEPS) {
    await step.before?.(box.stateDir);
    for (const r of rows(box.stateDir)) if (r.pid !== null) pgids.add(r.pid);
    const r = await ktAsync(step.args, { cwd: box.cwd, stateDir: box.stateDir, env: { KT_PORTABLE_PROCESSES: portable ? "1" : "0" }, ...(step.stdin ? { stdin: step.stdin } : {}) });
    expect(r.exitCode, `${step.args.join(" ")}: ${r.stderr}`).toBe(0);
    texts.push(`$ kt ${step.args.join(" ")}\n${norm(r.stdout, box.tmp)}${r.stderr ? `[stderr] ${norm(r.stderr, box.tmp)}` : ""}`);
  }
  return { texts, pgids: [...pgids] };
}

describe("processes without /proc (forced on Linux)", () => {
  test.skipIf(process.platform !== "linux")("the same session gives the same text on both paths, and nothing is left running", async () => {
    const linux = await play(false);
    const portable = await play(true);
    expect(portable.texts).toEqual(linux.texts);
    // What each step says, so that "the same" cannot be the same failure twice.
    expect(linux.texts[0]).toContain("Started p1 (pid <pid>)");
    expect(linux.texts[2]).toContain("Output:\ngot hello");
    expect(linux.texts[5]).toStartWith("$ kt ps stop p2\nStopped p2");
    expect(linux.texts[7]).toContain("p3 exited with code 4 after <clock>.");
    expect(linux.texts[8]).toContain("[exit code 2 · ");
    expect(linux.texts[10]).toContain('Ended session "default"');
    expect(linux.texts[11]).toContain("No background processes in this session.");
    expect(linux.pgids.length).toBe(3);
    expect(portable.pgids.length).toBe(3);
    for (const pgid of [...linux.pgids, ...portable.pgids]) expect(groupAlive(pgid), `group ${pgid}`).toEqual([]);
    // p2's children were stopped with it on both paths.
    expect(Bun.spawnSync(["pgrep", "-f", "^sleep 31[78]$"]).stdout.toString()).toBe("");
  }, 120_000);
});
