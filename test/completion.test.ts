// `kt completion bash|zsh|fish` (SPEC §7.7), through the compiled binary: each script is
// loaded into its real shell and asked what it offers, and what it offers is what help
// lists, command by command and flag by flag.
import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FORMATS } from "../src/cmd/schema.ts";
import { Parameters as PsParameters } from "../src/tools/ps.ts";
import { kt, tempDir, type TempDir } from "./_helpers.ts";

// What the completions must offer comes from the same places kt reads: as formats, actions
// or commands are added, the expectations follow.
const PS_ACTIONS = PsParameters.shape.action.values;
const starting = (prefix: string, words: Iterable<string>) => [...words].filter((w) => w.startsWith(prefix)).sort();

const BASH = Bun.which("bash");
const ZSH = Bun.which("zsh");
const FISH = Bun.which("fish");
// A skipped shell says why (.ci/run installs zsh and fish; bash is always there).
for (const [shell, found] of [["bash", BASH], ["zsh", ZSH], ["fish", FISH]] as const) {
  if (!found) console.warn(`completion.test: ${shell} is not on PATH, so the tests that run the ${shell} script${shell === "zsh" ? " (and bash's readline, driven through zsh's zpty)" : ""} are skipped.`);
}

interface Workspace {
  cwd: string;
  stateDir: string;
  /** The script `kt completion <shell>` printed, saved to a file. */
  script(shell: string): string;
}

/** A directory with a file and a directory starting with "s", to see file names offered. */
function workspace(tmp: TempDir): Workspace {
  const cwd = join(tmp.path, "w");
  mkdirSync(join(cwd, "src"), { recursive: true });
  writeFileSync(join(cwd, "s.txt"), "x\n");
  const stateDir = join(tmp.path, "state");
  return {
    cwd,
    stateDir,
    script(shell) {
      const r = kt(["completion", shell], { cwd, stateDir });
      expect(r.stderr).toBe("");
      expect(r.exitCode).toBe(0);
      const path = join(tmp.path, `kt.${shell}`);
      writeFileSync(path, r.stdout);
      return path;
    },
  };
}

function run(argv: string[], cwd: string, env: Record<string, string> = {}): string {
  const proc = Bun.spawnSync(argv, { cwd, env: { PATH: process.env.PATH ?? "", HOME: cwd, TERM: "dumb", ...env }, stdout: "pipe", stderr: "pipe" });
  if (proc.exitCode !== 0) throw new Error(`${argv.join(" ")} exited ${proc.exitCode}: ${proc.stderr.toString()}`);
  return proc.stdout.toString();
}

const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;

/** What bash's completion function offers for each command line (words; the last is the one being completed). */
function bashOffers(script: string, cwd: string, lines: string[][]): string[][] {
  const body = [
    `source ${quote(script)}`,
    `offer() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=\${#COMP_LINE}; COMPREPLY=(); _kt; printf '%s\\n' "\${COMPREPLY[*]}"; }`,
    ...lines.map((words) => `offer ${words.map(quote).join(" ")}`),
  ].join("\n");
  return run([BASH!, "--norc", "--noprofile", "-c", body], cwd)
    .split("\n")
    .slice(0, lines.length)
    .map((l) => l.split(" ").filter(Boolean).sort());
}

/** What an interactive zsh offers on Tab after each command line. */
function zshOffers(script: string, cwd: string, lines: string[]): string[][] {
  const out = run([ZSH!, "-f", join(import.meta.dir, "_complete.zsh"), script, ...lines], cwd);
  return out
    .split("\n")
    .slice(0, lines.length)
    .map((l) => (l.split("\t")[1] ?? "").split(" ").filter(Boolean).sort());
}

function fishOffers(script: string, cwd: string, line: string): string[] {
  const out = run([FISH!, "--no-config", "-c", `source ${quote(script)}; complete -C ${quote(line)}`], cwd);
  return out
    .split("\n")
    .filter(Boolean)
    .map((l) => l.split("\t")[0]!)
    .sort();
}

/** Every command `kt --help` lists, and for each the flags its own help lists. */
function helpTable(w: Workspace): Map<string, string[]> {
  const o = { cwd: w.cwd, stateDir: w.stateDir };
  const usage = /^USAGE kt (\S+)$/m.exec(kt(["--help"], o).stdout);
  expect(usage).not.toBeNull();
  const table = new Map<string, string[]>();
  for (const name of usage![1]!.split("|")) {
    const help = kt([name, "--help"], o);
    expect(help.exitCode).toBe(0);
    const options = help.stdout.split("\nOPTIONS\n")[1] ?? "";
    table.set(name, [...new Set([...options.matchAll(/--[a-z][a-z0-9-]*/g)].map((m) => m[0]))]);
  }
  return table;
}

describe.skipIf(!BASH)("kt completion bash", () => {
  test("registers _kt for kt and completes commands, flags, enum values and files", () => {
    using tmp = tempDir();
    const w = workspace(tmp);
    const script = w.script("bash");
    expect(run([BASH!, "--norc", "--noprofile", "-c", `source ${quote(script)}; complete -p kt`], w.cwd)).toBe("complete -o bashdefault -o filenames -F _kt kt\n");
    const commands = helpTable(w).keys();
    const lines = [
      ["kt", "re"],
      ["kt", "s"],
      ["kt", "--v"],
      ["kt", "edit", "--dr"],
      ["kt", "schema", "--format", ""],
      ["kt", "schema", "--format", "=", "o"],
      ["kt", "ps", ""],
      ["kt", "ps", "st"],
      ["kt", "completion", ""],
      ["kt", "read", "s"],
      ["kt", "read", "--state-dir", "s"],
      ["kt", "read", "--limit", ""],
    ];
    const names = [...commands];
    expect(starting("re", names)).toContain("read");
    expect(starting("s", names)).toEqual(expect.arrayContaining(["schema", "session"]));
    expect(bashOffers(script, w.cwd, lines)).toEqual([
      starting("re", names),
      starting("s", names),
      ["--version"],
      ["--dry-run"],
      starting("", FORMATS),
      starting("o", FORMATS),
      starting("", PS_ACTIONS),
      starting("st", PS_ACTIONS),
      ["bash", "fish", "zsh"],
      ["s.txt", "src"],
      ["src"],
      [],
    ]);
  });

  test("offers every command help lists, and for each exactly the flags its help lists", () => {
    using tmp = tempDir();
    const w = workspace(tmp);
    const table = helpTable(w);
    expect([...table.keys()]).toContain("completion");
    const script = w.script("bash");
    const names = [...table.keys()];
    const offered = bashOffers(script, w.cwd, [["kt", ""], ...names.map((name) => ["kt", name, "--"])]);
    expect(offered[0]).toEqual([...names, "--help", "--version"].sort());
    names.forEach((name, i) => {
      expect({ name, flags: offered[i + 1] }).toEqual({ name, flags: [...new Set([...table.get(name)!, "--help"])].sort() });
    });
  });
});

describe.skipIf(!BASH || !ZSH)("kt completion bash, in bash's readline", () => {
  test("Tab completes a command, a flag, an enum value (also after =), a directory", () => {
    using tmp = tempDir();
    const w = workspace(tmp);
    const script = w.script("bash");
    const queries = ["kt rea", "kt edit --dr", "kt ps sta", "kt schema --format=anth", "kt completion z", "kt read --state-dir sr"];
    // Typed at an interactive bash driven through a pseudo-terminal by zsh's zpty module.
    const lines = run([ZSH!, "-f", join(import.meta.dir, "_complete-bash.zsh"), script, ...queries], w.cwd).trimEnd().split("\n");
    expect(lines).toEqual([
      "kt rea\t[kt read ]",
      "kt edit --dr\t[kt edit --dry-run ]",
      "kt ps sta\t[kt ps start ]",
      "kt schema --format=anth\t[kt schema --format=anthropic ]",
      "kt completion z\t[kt completion zsh ]",
      "kt read --state-dir sr\t[kt read --state-dir src/]",
    ]);
  });
});

describe.skipIf(!ZSH)("kt completion zsh", () => {
  test("parses, registers _kt with compdef, and offers commands, flags and values on Tab", () => {
    using tmp = tempDir();
    const w = workspace(tmp);
    const script = w.script("zsh");
    run([ZSH!, "-n", script], w.cwd);
    expect(run([ZSH!, "-f", "-c", `autoload -U compinit; compinit -u -D; source ${quote(script)}; print -r -- $_comps[kt]`], w.cwd)).toBe("_kt\n");
    const table = helpTable(w);
    expect(zshOffers(script, w.cwd, ["kt re", "kt s", "kt edit --dr", "kt schema --format ", "kt ps st", "kt completion ", "kt read --state-dir s", "kt ", "kt grep --"])).toEqual([
      starting("re", table.keys()),
      starting("s", table.keys()),
      ["--dry-run"],
      starting("", FORMATS),
      starting("st", PS_ACTIONS),
      ["bash", "fish", "zsh"],
      ["src"],
      [...table.keys()].sort(),
      [...new Set([...table.get("grep")!, "--help"])].sort(),
    ]);
  });

  test("installed as the README says, a _kt file autoloaded from $fpath by compinit, it completes too", () => {
    using tmp = tempDir();
    const w = workspace(tmp);
    const script = w.script("zsh");
    const table = helpTable(w);
    const fpath = join(tmp.path, "site-functions");
    mkdirSync(fpath);
    writeFileSync(join(fpath, "_kt"), readFileSync(script));
    expect(zshOffers(fpath, w.cwd, ["kt re", "kt schema --format "])).toEqual([starting("re", table.keys()), starting("", FORMATS)]);
  });
});

describe.skipIf(!FISH)("kt completion fish", () => {
  test("parses and offers commands, flags and values (complete -C)", () => {
    using tmp = tempDir();
    const w = workspace(tmp);
    const script = w.script("fish");
    run([FISH!, "--no-config", "--no-execute", script], w.cwd);
    const table = helpTable(w);
    expect(fishOffers(script, w.cwd, "kt re")).toEqual(starting("re", table.keys()));
    expect(fishOffers(script, w.cwd, "kt s")).toEqual(starting("s", table.keys()));
    expect(fishOffers(script, w.cwd, "kt ")).toEqual([...table.keys()].sort());
    expect(fishOffers(script, w.cwd, "kt edit --dr")).toEqual(["--dry-run"]);
    expect(fishOffers(script, w.cwd, "kt schema --format ")).toEqual(starting("", FORMATS));
    expect(fishOffers(script, w.cwd, "kt ps st")).toEqual(starting("st", PS_ACTIONS));
    expect(fishOffers(script, w.cwd, "kt read s")).toEqual(["s.txt", "src/"]);
    expect(fishOffers(script, w.cwd, "kt read --")).toEqual([...new Set([...table.get("read")!, "--help"])].sort());
  });
});

describe("kt completion, called wrongly", () => {
  test("no shell, an unknown shell, two shells, a flag: usage on stderr, exit 2", () => {
    using tmp = tempDir();
    const o = { cwd: tmp.path, stateDir: join(tmp.path, "state") };
    const cases: [string[], string][] = [
      [[], "missing shell: kt completion bash|zsh|fish"],
      [["tcsh"], 'unknown shell "tcsh": kt completion knows bash, zsh, fish'],
      [["bash", "zsh"], "too many arguments: kt completion takes one shell"],
      [["--shell=bash"], "unknown option --shell=bash"],
    ];
    for (const [args, message] of cases) {
      expect(kt(["completion", ...args], o)).toEqual({ stdout: "", stderr: `kt completion: ${message}\nRun "kt completion --help" for usage.\n`, exitCode: 2 });
    }
  });
});
