// SPEC §7.5: parallel tool calls. After one read, several kt edit processes of one session
// changing different lines of one file all land (a file changed only by kt in this session
// is not stale); a change made outside kt is still STALE_FILE, and nothing is lost.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { KT, kt, ktSpawn, tempDir } from "./_helpers.ts";

const EDITS = 10;
const ROUNDS = 50;

function original(): string {
  return Array.from({ length: 40 }, (_, i) => `line ${String(i + 1).padStart(2, "0")} original`).join("\n") + "\n";
}

/** The lines the edits change: spread over the file, none adjacent. */
const targets = Array.from({ length: EDITS }, (_, i) => 2 + i * 4);

function expected(): string {
  return original().replace(/^line (\d\d) original$/gm, (line, n: string) => (targets.includes(Number(n)) ? `line ${n} edited by ${Number(n)}` : line));
}

interface Envelope {
  isError: boolean;
  content: string;
  error?: { code: string };
}

async function editAll(cwd: string, stateDir: string): Promise<Envelope[]> {
  const procs = targets.map((n) => {
    const id = String(n).padStart(2, "0");
    return ktSpawn(["edit", "f.txt", "--old-string", `line ${id} original`, "--new-string", `line ${id} edited by ${n}`, "--json"], { cwd, stateDir });
  });
  return Promise.all(
    procs.map(async (p) => {
      const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
      await p.exited;
      expect(err).toBe("");
      return JSON.parse(out) as Envelope;
    }),
  );
}

describe("parallel edits of one file in one session", () => {
  test(`${EDITS} kt edit processes at once after one read, ${ROUNDS} rounds: every edit lands`, async () => {
    using tmp = tempDir();
    const state = join(tmp.path, ".state");
    const file = join(tmp.path, "f.txt");
    for (let round = 0; round < ROUNDS; round++) {
      writeFileSync(file, original());
      expect(kt(["read", "f.txt"], { cwd: tmp.path, stateDir: state }).exitCode).toBe(0);
      const results = await editAll(tmp.path, state);
      const refused = results.filter((r) => r.isError).map((r) => r.content);
      expect(refused, `round ${round}`).toEqual([]);
      for (const r of results) expect(r.content).toStartWith(`Edited ${file} (1 replacement, matched exactly).`);
      expect(readFileSync(file, "utf8"), `round ${round}`).toBe(expected());
    }
    expect(readdirSync(tmp.path).filter((n) => n.endsWith(".tmp"))).toEqual([]);
  }, 240_000);

  test(`${EDITS} kt patch processes at once after one read, and edits and patches mixed: every change lands`, async () => {
    using tmp = tempDir();
    const state = join(tmp.path, ".state");
    const file = join(tmp.path, "f.txt");
    const patchOf = (n: number) => {
      const id = String(n).padStart(2, "0");
      return `*** Begin Patch\n*** Update File: f.txt\n@@\n-line ${id} original\n+line ${id} edited by ${n}\n*** End Patch\n`;
    };
    for (let round = 0; round < 10; round++) {
      writeFileSync(file, original());
      expect(kt(["read", "f.txt"], { cwd: tmp.path, stateDir: state }).exitCode).toBe(0);
      // Odd rounds: half the changes by edit, half by patch.
      const procs = targets.map((n, i) => {
        const id = String(n).padStart(2, "0");
        if (round % 2 === 1 && i % 2 === 0) return ktSpawn(["edit", "f.txt", "--old-string", `line ${id} original`, "--new-string", `line ${id} edited by ${n}`, "--json"], { cwd: tmp.path, stateDir: state });
        return ktSpawn(["patch", patchOf(n), "--json"], { cwd: tmp.path, stateDir: state });
      });
      const results = await Promise.all(procs.map(async (p) => JSON.parse(await new Response(p.stdout).text()) as Envelope));
      expect(results.filter((r) => r.isError).map((r) => r.content), `round ${round}`).toEqual([]);
      expect(readFileSync(file, "utf8"), `round ${round}`).toBe(expected());
    }
  }, 240_000);

  test("two parallel changes of the same line, a patch and an edit: one lands, the other is refused with its own prose, not STALE_FILE", async () => {
    using tmp = tempDir();
    const state = join(tmp.path, ".state");
    const file = join(tmp.path, "f.txt");
    for (let round = 0; round < 5; round++) {
      writeFileSync(file, original());
      expect(kt(["read", "f.txt"], { cwd: tmp.path, stateDir: state }).exitCode).toBe(0);
      const patch = ktSpawn(["patch", "*** Begin Patch\n*** Update File: f.txt\n@@\n-line 05 original\n+line 05 by patch\n*** End Patch\n", "--json"], { cwd: tmp.path, stateDir: state });
      const edit = ktSpawn(["edit", "f.txt", "--old-string", "line 05 original", "--new-string", "line 05 by edit", "--json"], { cwd: tmp.path, stateDir: state });
      const [p, e] = await Promise.all([patch, edit].map(async (proc) => JSON.parse(await new Response(proc.stdout).text()) as Envelope));
      expect([p!.isError, e!.isError].sort(), `round ${round}`).toEqual([false, true]);
      const final = readFileSync(file, "utf8");
      if (e!.isError) {
        expect(final).toBe(original().replace("line 05 original", "line 05 by patch"));
        expect(e!.error?.code).toBe("NO_MATCH");
      } else {
        expect(final).toBe(original().replace("line 05 original", "line 05 by edit"));
        expect(p!.error?.code).toBe("NO_MATCH");
        expect(p!.content).toStartWith(`Patch not applied: hunk 1 of ${file} (patch line 3, first line "line 05 original") was not found in the file.`);
      }
    }
  }, 120_000);

  test("a change made outside kt after the read: every patch is STALE_FILE and the outside change stays", async () => {
    using tmp = tempDir();
    const state = join(tmp.path, ".state");
    const file = join(tmp.path, "f.txt");
    writeFileSync(file, original());
    expect(kt(["read", "f.txt"], { cwd: tmp.path, stateDir: state }).exitCode).toBe(0);
    const outside = `${original()}appended by someone else\n`;
    writeFileSync(file, outside);
    const procs = targets.map((n) => {
      const id = String(n).padStart(2, "0");
      return ktSpawn(["patch", `*** Begin Patch\n*** Update File: f.txt\n@@\n-line ${id} original\n+line ${id} patched\n*** End Patch\n`, "--json"], { cwd: tmp.path, stateDir: state });
    });
    const results = await Promise.all(procs.map(async (p) => JSON.parse(await new Response(p.stdout).text()) as Envelope));
    for (const r of results) expect(r.error?.code, r.content).toBe("STALE_FILE");
    expect(readFileSync(file, "utf8")).toBe(outside);
  });

  test(`${EDITS} edits and patches at once through one kt mcp server (as an agent's parallel calls arrive): every change lands`, async () => {
    using tmp = tempDir();
    const file = join(tmp.path, "f.txt");
    for (let round = 0; round < 5; round++) {
      writeFileSync(file, original());
      const client = new Client({ name: "kt-test", version: "0" });
      await client.connect(new StdioClientTransport({ command: KT, args: ["mcp"], cwd: tmp.path, env: { PATH: process.env.PATH ?? "", HOME: tmp.path, KT_STATE_DIR: join(tmp.path, ".state") }, stderr: "pipe" }));
      try {
        expect((await client.callTool({ name: "read", arguments: { file_path: "f.txt" } })).isError).toBe(false);
        const results = await Promise.all(
          targets.map((n, i) => {
            const id = String(n).padStart(2, "0");
            return i % 2 === 0
              ? client.callTool({ name: "edit", arguments: { file_path: "f.txt", old_string: `line ${id} original`, new_string: `line ${id} edited by ${n}` } })
              : client.callTool({ name: "apply_patch", arguments: { patch: `*** Begin Patch\n*** Update File: f.txt\n@@\n-line ${id} original\n+line ${id} edited by ${n}\n*** End Patch\n` } });
          }),
        );
        expect(results.filter((r) => r.isError).map((r) => (r.content as { text: string }[])[0]!.text), `round ${round}`).toEqual([]);
        expect(readFileSync(file, "utf8"), `round ${round}`).toBe(expected());
      } finally {
        await client.close();
      }
    }
  }, 120_000);

  test("a change made outside kt after the read: every edit is STALE_FILE and the outside change stays", async () => {
    using tmp = tempDir();
    const state = join(tmp.path, ".state");
    const file = join(tmp.path, "f.txt");
    for (let round = 0; round < 5; round++) {
      writeFileSync(file, original());
      expect(kt(["read", "f.txt"], { cwd: tmp.path, stateDir: state }).exitCode).toBe(0);
      const outside = `${original()}appended by someone else ${round}\n`;
      writeFileSync(file, outside);
      const results = await editAll(tmp.path, state);
      for (const r of results) {
        expect(r.isError).toBe(true);
        expect(r.error?.code).toBe("STALE_FILE");
        expect(r.content).toBe(`Refusing to edit ${file}: the file changed on disk after you last read it (content hash mismatch). Someone else may be editing it. Re-read the file and reapply your change.`);
      }
      expect(readFileSync(file, "utf8")).toBe(outside);
    }
  });

  test("an outside write between two rounds of parallel edits: the edits after it are refused, the ones before it stay", async () => {
    using tmp = tempDir();
    const state = join(tmp.path, ".state");
    const file = join(tmp.path, "f.txt");
    writeFileSync(file, original());
    expect(kt(["read", "f.txt"], { cwd: tmp.path, stateDir: state }).exitCode).toBe(0);
    const first = await editAll(tmp.path, state);
    expect(first.filter((r) => r.isError)).toEqual([]);
    // Someone else edits the file kt just changed: the session has not seen this content.
    const outside = expected().replace("line 01 original", "line 01 changed outside");
    writeFileSync(file, outside);
    const second = kt(["edit", "f.txt", "--old-string", "line 03 original", "--new-string", "line 03 kt", "--json"], { cwd: tmp.path, stateDir: state });
    expect((JSON.parse(second.stdout) as Envelope).error?.code).toBe("STALE_FILE");
    expect(readFileSync(file, "utf8")).toBe(outside);
  });

  test("two sessions: a write by the other session is an outside change", async () => {
    using tmp = tempDir();
    const state = join(tmp.path, ".state");
    const file = join(tmp.path, "f.txt");
    writeFileSync(file, original());
    const o = { cwd: tmp.path, stateDir: state };
    expect(kt(["read", "f.txt", "--session", "a"], o).exitCode).toBe(0);
    expect(kt(["read", "f.txt", "--session", "b"], o).exitCode).toBe(0);
    expect(kt(["edit", "f.txt", "--old-string", "line 01 original", "--new-string", "line 01 by b", "--session", "b"], o).exitCode).toBe(0);
    const refused = kt(["edit", "f.txt", "--old-string", "line 02 original", "--new-string", "line 02 by a", "--session", "a", "--json"], o);
    expect((JSON.parse(refused.stdout) as Envelope).error?.code).toBe("STALE_FILE");
    expect(readFileSync(file, "utf8")).toBe(original().replace("line 01 original", "line 01 by b"));
  });

  test("parallel writes and edits of one file in one session: each lands on the content before it, nothing torn", async () => {
    using tmp = tempDir();
    const state = join(tmp.path, ".state");
    const file = join(tmp.path, "f.txt");
    writeFileSync(file, original());
    expect(kt(["read", "f.txt"], { cwd: tmp.path, stateDir: state }).exitCode).toBe(0);
    writeFileSync(join(tmp.path, "new.txt"), `${original()}tail\n`);
    const edit = ktSpawn(["edit", "f.txt", "--old-string", "line 05 original", "--new-string", "line 05 edited", "--json"], { cwd: tmp.path, stateDir: state });
    const write = ktSpawn(["write", "f.txt", "--content-file", "new.txt", "--json"], { cwd: tmp.path, stateDir: state });
    const [e, w] = await Promise.all([edit, write].map(async (p) => JSON.parse(await new Response(p.stdout).text()) as Envelope));
    expect(w!.isError).toBe(false);
    const final = readFileSync(file, "utf8");
    // Either the edit landed and the write replaced it, or the write landed and the edit applied on top.
    if (final === `${original()}tail\n`) expect(e!.isError).toBe(false);
    else expect(final).toBe(`${original().replace("line 05 original", "line 05 edited")}tail\n`);
  });
});
