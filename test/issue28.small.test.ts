// Issue 28's small items, each pinned by a test named after the report (the two about the
// state directory are issue 23's; `kt write --dry-run` shows no diff is in gitdiff.test.ts,
// `kt history` on a directory in history.session.test.ts).
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { KT, kt, ROOT, tempDir } from "./_helpers.ts";

/** Runs the binary on a pseudo-terminal (util-linux script), stdin and stdout both a terminal. */
function onTerminal(args: string[], cwd: string, state: string): string {
  const quoted = [KT, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
  const r = Bun.spawnSync(["script", "-qfec", quoted, "/dev/null"], {
    cwd,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", NO_COLOR: "1", KT_STATE_DIR: state, TERM: "xterm" },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  return r.stdout.toString().replace(/\r\n/g, "\n");
}

describe("issue 28, small items", () => {
  test.skipIf(!Bun.which("script"))("`kt grep` on a terminal prints its help pointer twice", () => {
    using tmp = tempDir();
    const out = onTerminal(["grep"], tmp.path, join(tmp.path, ".s"));
    expect(out).toBe('kt grep: no input: give PATTERN or flags, or pipe a JSON object on stdin\nRun "kt grep --help" for usage.\n');
    expect(out.split("--help").length - 1).toBe(1);
  });

  test("`Sent 1 bytes` (grammar): one byte is a byte", async () => {
    using tmp = tempDir();
    const o = { cwd: tmp.path, stateDir: join(tmp.path, ".s") };
    expect(kt(["ps", "start", "cat"], o).exitCode).toBe(0);
    try {
      const one = kt(["ps", "write", "p1", "--input", "x"], o);
      expect(one.stdout).toStartWith("Sent 1 byte to p1 stdin.");
      const two = kt(["ps", "write", "p1", "--input", "yz"], o);
      expect(two.stdout).toStartWith("Sent 2 bytes to p1 stdin.");
    } finally {
      kt(["session", "end"], o);
    }
  });

  test("`kt ps write` decodes \\t, \\n, \\xHH in its argument: as SPEC §4.7 says, and the README says so; --input is raw", async () => {
    using tmp = tempDir();
    const o = { cwd: tmp.path, stateDir: join(tmp.path, ".s") };
    const out = join(tmp.path, "got.txt");
    expect(kt(["ps", "start", `cat > ${out}`], o).exitCode).toBe(0);
    try {
      expect(kt(["ps", "write", "p1", "a\\tb\\x41\\\\n\\n"], o).exitCode).toBe(0);
      expect(kt(["ps", "write", "p1", "--input", "C:\\temp\\n"], o).exitCode).toBe(0);
      expect(kt(["ps"], { ...o, stdin: JSON.stringify({ action: "write", id: "p1", input: "\\x04 raw" }) }).exitCode).toBe(0);
      expect(kt(["ps", "write", "p1", "\\x04"], o).exitCode).toBe(0);
      for (let i = 0; i < 100 && !readFileSync(out, "latin1").endsWith("raw"); i++) await Bun.sleep(50);
      expect(readFileSync(out, "latin1")).toBe("a\tbA\\n\nC:\\temp\\n\\x04 raw");
    } finally {
      kt(["session", "end"], o);
    }
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    expect(readme).toContain("The text given to `kt ps write` as an argument has its backslash escapes decoded");
    expect(readme).toContain("`--input-file PATH` and JSON input");
  });
});

