// SPEC §3.5: concurrent kt writes of one file either land or are refused as stale, never
// torn or mixed; a kill -9 at any instant leaves the old content or the new one.
import { describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { KT, kt, ktSpawn, tempDir } from "./_helpers.ts";

const N = 20;

function contentOf(i: number): string {
  // Large enough that a torn write would show: every line names its writer.
  return Array.from({ length: 5000 }, (_, line) => `writer ${i} line ${line}`).join("\n") + "\n";
}

describe("concurrent writes", () => {
  test(`${N} processes that read then write: each lands or is refused as stale, none torn`, async () => {
    using tmp = tempDir();
    const state = join(tmp.path, ".state");
    const file = join(tmp.path, "shared.txt");
    writeFileSync(file, "original\n");
    for (let i = 0; i < N; i++) writeFileSync(join(tmp.path, `c${i}.txt`), contentOf(i));
    const procs = Array.from({ length: N }, (_, i) =>
      Bun.spawn(["sh", "-c", `"${KT}" read shared.txt --session s${i} >/dev/null && exec "${KT}" write shared.txt --content-file c${i}.txt --session s${i} --json`], {
        cwd: tmp.path,
        env: { PATH: process.env.PATH ?? "", NO_COLOR: "1", KT_STATE_DIR: state, HOME: tmp.path },
        stdout: "pipe",
        stderr: "pipe",
      }),
    );
    const outcomes = await Promise.all(
      procs.map(async (p) => {
        const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
        await p.exited;
        expect(err).toBe("");
        return JSON.parse(out) as { isError: boolean; error?: { code: string }; content: string };
      }),
    );
    const landed = outcomes.filter((o) => !o.isError);
    const refused = outcomes.filter((o) => o.isError);
    expect(landed.length).toBeGreaterThanOrEqual(1);
    for (const r of refused) expect(r.error?.code).toBe("STALE_FILE");
    expect(landed.length + refused.length).toBe(N);
    const final = readFileSync(file, "utf8");
    const writer = /^writer (\d+) line 0\n/.exec(final);
    expect(writer).not.toBeNull();
    expect(final).toBe(contentOf(Number(writer![1])));
    expect(readdirSync(tmp.path).filter((n) => n.endsWith(".tmp"))).toEqual([]);
  });

  test(`${N} writers that all read the same version: exactly one lands`, async () => {
    using tmp = tempDir();
    const state = join(tmp.path, ".state");
    const file = join(tmp.path, "shared.txt");
    writeFileSync(file, "original\n");
    for (let i = 0; i < N; i++) {
      writeFileSync(join(tmp.path, `c${i}.txt`), contentOf(i));
      expect(kt(["read", "shared.txt", "--session", `s${i}`], { cwd: tmp.path, stateDir: state }).exitCode).toBe(0);
    }
    const procs = Array.from({ length: N }, (_, i) =>
      ktSpawn(["write", "shared.txt", "--content-file", `c${i}.txt`, "--session", `s${i}`, "--json"], { cwd: tmp.path, stateDir: state }),
    );
    const outcomes = await Promise.all(procs.map(async (p) => JSON.parse(await new Response(p.stdout).text()) as { isError: boolean; error?: { code: string } }));
    expect(outcomes.filter((o) => !o.isError).length).toBe(1);
    expect(outcomes.filter((o) => o.error?.code === "STALE_FILE").length).toBe(N - 1);
    const final = readFileSync(file, "utf8");
    expect(final).toBe(contentOf(Number(/^writer (\d+)/.exec(final)![1])));
  });
});

describe("kill -9 during a write", () => {
  test("leaves the old content or the new one, never a mix", async () => {
    using tmp = tempDir();
    const state = join(tmp.path, ".state");
    const file = join(tmp.path, "victim.txt");
    const oldContent = "old\n".repeat(1_000_000);
    const newContent = "new\n".repeat(4_000_000);
    writeFileSync(join(tmp.path, "new.txt"), newContent);
    const seen = new Set<string>();
    for (let round = 0; round < 12; round++) {
      writeFileSync(file, oldContent);
      expect(kt(["read", "victim.txt", "--offset", "1", "--limit", "1"], { cwd: tmp.path, stateDir: state }).exitCode).toBe(0);
      const p = ktSpawn(["write", "victim.txt", "--content-file", "new.txt"], { cwd: tmp.path, stateDir: state });
      await Bun.sleep(round * 6);
      p.kill("SIGKILL");
      await p.exited;
      const now = readFileSync(file, "utf8");
      const which = now === oldContent ? "old" : now === newContent ? "new" : "torn";
      expect(which).not.toBe("torn");
      seen.add(which);
    }
    // The rounds span the whole write, so both outcomes occur (if the machine is so slow
    // that every kill lands before the rename, "old" alone is still correct).
    expect(seen.has("old")).toBe(true);
  });
});

describe("a fresh state directory", () => {
  test("kt calls that all start on a new state directory at once all get the index (none told it is locked)", async () => {
    for (let round = 0; round < 12; round++) {
      using tmp = tempDir();
      const state = join(tmp.path, ".state");
      // Made empty beforehand (as a user's KT_STATE_DIR is): every call goes straight to the index.
      mkdirSync(state, { mode: 0o700 });
      // Two starts of one short command race for one slot; two writes need the index's write lock.
      const procs = Array.from({ length: 4 }, (_, i) =>
        ktSpawn(i < 2 ? ["ps", "start", "echo up; sleep 0.3"] : ["write", `f${i}.txt`, "--content", `file ${i}\n`, "--skip-read-check"], { cwd: tmp.path, stateDir: state }),
      );
      const outcomes = await Promise.all(
        procs.map(async (p) => {
          const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
          return { code: await p.exited, out, err };
        }),
      );
      for (const o of outcomes.slice(2)) expect(o).toMatchObject({ code: 0, err: "" });
      // Two starts of one command: one runs, the other is refused as its twin (not as a locked index).
      expect(outcomes.slice(0, 2).map((o) => o.code).sort()).toEqual([0, 1]);
      for (const o of outcomes.slice(0, 2)) expect(o.err).toBe("");
      expect(await ktSpawn(["session", "end"], { cwd: tmp.path, stateDir: state }).exited).toBe(0);
      for (let i = 2; i < 4; i++) expect(readFileSync(join(tmp.path, `f${i}.txt`), "utf8")).toBe(`file ${i}\n`);
    }
  });
});
