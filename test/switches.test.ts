// The one table of switches (src/cmd/switches.ts): every subcommand's --help lists exactly
// the switches the table gives it, parsing accepts them there and refuses them elsewhere,
// and no other file of src/cmd declares a switch.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseSwitches, SWITCHES, TOOLS } from "../src/cmd/switches.ts";
import { TOOL_NAMES } from "../src/tools/registry.ts";
import { kt, tempDir } from "./_helpers.ts";

const OTHERS = ["call", "mcp", "session", "schema", "history", "undo", "completion"];

/** The --name words of the OPTIONS section of `kt <command> --help`. */
function helpFlags(command: string): string[] {
  using tmp = tempDir();
  const r = kt([command, "--help"], { cwd: tmp.path, stateDir: join(tmp.path, ".s") });
  expect(r.exitCode).toBe(0);
  const options = r.stdout.split("\nOPTIONS\n")[1]?.split("\nEXAMPLES\n")[0] ?? "";
  return [...options.matchAll(/^\s*--([a-z][a-z0-9-]*)/gm)].map((m) => m[1]!);
}

function tableFlags(command: string): string[] {
  const tool = TOOL_NAMES.includes(command);
  return [...new Set(SWITCHES.filter((s) => s.commands.includes(command) || (tool && s.commands.includes(TOOLS))).map((s) => s.name))];
}

describe("the switch table", () => {
  test("each subcommand's --help lists the switches the table gives it", () => {
    for (const command of [...TOOL_NAMES, ...OTHERS]) {
      const shown = new Set(helpFlags(command));
      const want = tableFlags(command);
      expect({ command, missing: want.filter((f) => !shown.has(f)) }).toEqual({ command, missing: [] });
    }
    // And nothing the table does not give it (a tool's own flags are its input fields).
    expect(helpFlags("mcp").sort()).toEqual(tableFlags("mcp").sort());
    expect(helpFlags("session").sort()).toEqual(tableFlags("session").sort());
    expect(helpFlags("undo").sort()).toEqual(tableFlags("undo").sort());
  });

  test("a switch is taken where the table says, and refused elsewhere with the command named", () => {
    expect(parseSwitches("undo", ["--last", "--steps=2", "a.txt"])).toEqual({
      values: { last: true, steps: "2" },
      given: [{ key: "last", value: true }, { key: "steps", value: "2" }],
      positionals: ["a.txt"],
    });
    expect(parseSwitches("edit", ["--dry_run", "--state-dir", "/s"], { tool: true }).values).toEqual({ dryRun: true, stateDir: "/s" });
    expect(() => parseSwitches("read", ["--trace"], { tool: true })).toThrow("option --trace does not apply to kt read");
    expect(() => parseSwitches("session", ["--steps", "2"])).toThrow("option --steps does not apply to kt session");
    expect(() => parseSwitches("mcp", ["--bogus=1"])).toThrow("unknown option --bogus=1");
    expect(() => parseSwitches("mcp", ["--verbose=maybe"])).toThrow("option --verbose is a switch: use --verbose or --verbose=false");
    expect(() => parseSwitches("history", ["--session"])).toThrow("option --session needs a value");
    expect(() => parseSwitches("schema", ["--format", "yaml"])).toThrow("--format must be one of json, anthropic, openai, openai-responses, mcp");
  });

  test("through dist/kt: a switch of another subcommand is a usage error naming this one", () => {
    using tmp = tempDir();
    const o = { cwd: tmp.path, stateDir: join(tmp.path, ".s") };
    expect(kt(["session", "end", "--last"], o)).toEqual({ stdout: "", stderr: 'kt session: option --last does not apply to kt session\nRun "kt session --help" for usage.\n', exitCode: 2 });
    expect(kt(["call", "--structured"], o)).toEqual({ stdout: "", stderr: 'kt call: option --structured does not apply to kt call\nRun "kt call --help" for usage.\n', exitCode: 2 });
  });

  test("no other file of src/cmd declares a switch for citty's help", () => {
    const dir = join(import.meta.dir, "..", "src", "cmd");
    const declaring = readdirSync(dir)
      .filter((f) => f.endsWith(".ts") && f !== "switches.ts" && f !== "tool.ts")
      .filter((f) => /type: "(?:boolean|string|enum)"/.test(readFileSync(join(dir, f), "utf8")));
    expect(declaring).toEqual([]);
  });
});
