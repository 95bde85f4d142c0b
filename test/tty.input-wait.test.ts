// "waiting for input" (SPEC §8.7, issue 29): a terminal process blocked reading its terminal
// with no new output for 10 s says so in ps list and ps read — real programs, each blocked its
// own way (read(2) in bash's `read`, pselect6 in python3's input() and bash's readline, vim,
// epoll in node's REPL), and two that are not waiting for input (asleep, printing).
import { afterEach, describe, expect, test } from "bun:test";
import { endSandboxes, ktAsync, norm, sandbox } from "./_process.ts";
import { QUIET_MS } from "../src/process/input-wait.ts";

afterEach(endSandboxes);

const NOTE = (id: string) =>
  `${id} is waiting for input: blocked reading its terminal, no output for <n>s. Type with {"action":"write","id":"${id}","input":"...\\n"} or keys such as ["Enter"]; {"action":"read","id":"${id}","screen":true} shows what it asks.`;

describe("waiting for input", () => {
  test("shown after 10 s of silence while blocked on the terminal, in ps list and ps read (golden); never for a sleeper or a printer", async () => {
    const { tmp, stateDir, cwd } = sandbox();
    const env = { cwd, stateDir };
    const text = async (...args: string[]) => norm((await ktAsync(args, env)).stdout, tmp).replace(/no output for \d+s/g, "no output for <n>s");
    const commands = [`python3 -c 'input("name? ")'`, "read answer", "bash --norc -i", ...(Bun.which("vim") ? ["vim -u NONE"] : []), ...(Bun.which("node") ? ["node"] : []), "sleep 60", "while true; do echo tick; sleep 1; done"];
    for (const c of commands) expect(await text("ps", "start", "--tty", c)).toStartWith("Started p");
    const started = performance.now();
    // Before 10 s of silence, nothing is said.
    expect(await text("ps", "list")).not.toContain("waiting for input");
    expect(await text("ps", "read", "p2")).toBe("No new output from p2 since last read (still running, 0 lines total). Use offset to re-read earlier output.\n");
    await Bun.sleep(Math.max(0, QUIET_MS + 1000 - (performance.now() - started)));
    const list = await text("ps", "list");
    const waiting = list.split("\n").filter((l) => l.includes("waiting for input")).map((l) => l.split(" ")[0]);
    const ids = commands.map((_, i) => `p${i + 1}`);
    // Everything but the sleeper and the printer (the last two).
    expect(waiting).toEqual(ids.slice(0, -2));
    expect(list).toMatch(/\np1 {2}python3 -c 'input\("name\? "\)'\s+running {2}<clock> {2}pid <pid> {2}tty 120×40 {2}waiting for input\n/);
    expect(await text("ps", "read", "p2")).toBe(`No new output from p2 since last read (still running, 0 lines total). Use offset to re-read earlier output.\n${NOTE("p2")}\n`);
    expect(await text("ps", "read", "p1")).toBe(`No new output from p1 since last read (still running, 1 line total). Use offset to re-read earlier output.\n${NOTE("p1")}\n`);
    const screen = await text("ps", "read", "p1", "--screen");
    expect(screen).toStartWith("Screen of p1 (120×40, cursor at row 1, column 7):\nname?\n");
    expect(screen).toEndWith(`${NOTE("p1")}\n`);
    // Answered, it is no longer waiting.
    await text("ps", "write", "p1", "Ada\\n");
    expect(await text("ps", "list")).not.toMatch(/^p1 .*waiting for input$/m);
  }, 60_000);
});
