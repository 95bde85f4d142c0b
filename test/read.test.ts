// read (SPEC §4.1): every model-facing string golden, in-process and through dist/kt.
import { describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { call, CAN_RUN_AS_NOBODY, kt, ktAsNobody, MODES, tempDir } from "./_helpers.ts";

function setup() {
  const tmp = tempDir();
  const state = join(tmp.path, ".state");
  const work = join(tmp.path, "work");
  mkdirSync(work);
  return { tmp, work, opts: { cwd: work, stateDir: state } };
}

describe.each(MODES)("read (%s)", (mode) => {
  test("numbers lines with the path first", async () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    writeFileSync(join(work, "a.txt"), "alpha\nbeta\n");
    const r = await call(mode, "read", { file_path: "a.txt" }, opts);
    expect(r.isError).toBe(false);
    expect(r.content).toBe(`${work}/a.txt\n     1→alpha\n     2→beta`);
    expect(r.metadata.extra).toEqual({ path: `${work}/a.txt`, lines: 2, totalLines: 2 });
    expect(r.metadata.title).toBe(`Read ${work}/a.txt · lines 1–2 of 2`);
  });

  test("a last line without newline, CRLF endings and a BOM are shown as text", async () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    writeFileSync(join(work, "w.txt"), "\uFEFFone\r\ntwo\r\nthree");
    const r = await call(mode, "read", { file_path: "w.txt" }, opts);
    expect(r.content).toBe(`${work}/w.txt\n     1→one\n     2→two\n     3→three`);
  });

  test("pages at 2000 lines with the continuation line", async () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    writeFileSync(join(work, "big.txt"), Array.from({ length: 3417 }, (_, i) => `l${i + 1}`).join("\n"));
    const r = await call(mode, "read", { file_path: "big.txt" }, opts);
    const lines = r.content.split("\n");
    expect(lines.length).toBe(2002);
    expect(lines[2000]).toBe("  2000→l2000");
    expect(lines[2001]).toBe("(Showing lines 1–2000 of 3417. Use offset=2001 to continue.)");
    const next = await call(mode, "read", { file_path: "big.txt", offset: 2001 }, opts);
    const nl = next.content.split("\n");
    expect(nl[1]).toBe("  2001→l2001");
    expect(nl.at(-1)).toBe("  3417→l3417");
    const window = await call(mode, "read", { file_path: "big.txt", offset: 10, limit: 3 }, opts);
    expect(window.content).toBe(`${work}/big.txt\n    10→l10\n    11→l11\n    12→l12\n(Showing lines 10–12 of 3417. Use offset=13 to continue.)`);
  });

  test("cuts lines over 2000 characters and pages at 50 KB", async () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    const long = "x".repeat(2500);
    writeFileSync(join(work, "long.txt"), `${long}\nshort\n`);
    const r = await call(mode, "read", { file_path: "long.txt" }, opts);
    expect(r.content.split("\n")[1]).toBe(`     1→${"x".repeat(2000)}… [line truncated]`);
    // 100 lines of 1,000 characters: the 50 KB page ends first.
    writeFileSync(join(work, "wide.txt"), Array.from({ length: 100 }, (_, i) => `${i}`.padEnd(1000, "y")).join("\n"));
    const w = await call(mode, "read", { file_path: "wide.txt" }, opts);
    const last = w.content.split("\n").at(-1)!;
    expect(last).toMatch(/^\(Showing lines 1–(\d+) of 100\. Use offset=(\d+) to continue\.\)$/);
    const shown = Number(/1–(\d+)/.exec(last)![1]);
    expect(shown).toBeLessThan(100);
    expect(Buffer.byteLength(w.content)).toBeLessThanOrEqual(51 * 1024);
  });

  test("a page never passes 50 KB in bytes: the arrow is 3 bytes, the number six columns or more", async () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    // 2000 lines of 17 characters are 54,000 bytes as shown: over 50 KB before 2000 lines.
    writeFileSync(join(work, "narrow.txt"), Array.from({ length: 3000 }, (_, i) => `${i}`.padEnd(17, "n")).join("\n"));
    const r = await call(mode, "read", { file_path: "narrow.txt" }, opts);
    expect(Buffer.byteLength(r.content)).toBeLessThanOrEqual(50 * 1024);
    const last = r.content.split("\n").at(-1)!;
    const shown = Number(/^\(Showing lines 1–(\d+) of 3000\. Use offset=\d+ to continue\.\)$/.exec(last)![1]);
    expect(shown).toBeLessThan(2000);
    expect(shown).toBeGreaterThan(1800);
    expect(r.metadata.truncation).toEqual({ originalBytes: 3000 * 18 - 1, originalLines: 3000, shownHeadLines: shown, shownTailLines: 0, omittedLines: 3000 - shown });
  });

  test("truncation is reported (SPEC §3.2): the 2000-line page, the 2000-character line cut; not a limit asked for", async () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    writeFileSync(join(work, "big.txt"), Array.from({ length: 3417 }, (_, i) => `l${i + 1}`).join("\n"));
    const big = await call(mode, "read", { file_path: "big.txt" }, opts);
    const size = Buffer.byteLength(Array.from({ length: 3417 }, (_, i) => `l${i + 1}`).join("\n"));
    expect(big.metadata.truncation).toEqual({ originalBytes: size, originalLines: 3417, shownHeadLines: 2000, shownTailLines: 0, omittedLines: 1417 });
    const rest = await call(mode, "read", { file_path: "big.txt", offset: 2001 }, opts);
    expect(rest.metadata.truncation).toBeUndefined();
    const asked = await call(mode, "read", { file_path: "big.txt", offset: 10, limit: 3 }, opts);
    expect(asked.metadata.truncation).toBeUndefined();
    writeFileSync(join(work, "long.txt"), `${"x".repeat(2500)}\nshort\n`);
    const long = await call(mode, "read", { file_path: "long.txt" }, opts);
    expect(long.content).toBe(`${work}/long.txt\n     1→${"x".repeat(2000)}… [line truncated]\n     2→short`);
    expect(long.metadata.truncation).toEqual({ originalBytes: 2507, originalLines: 2, shownHeadLines: 2, shownTailLines: 0, omittedLines: 0 });
    writeFileSync(join(work, "short.txt"), "a\nb\n");
    expect((await call(mode, "read", { file_path: "short.txt" }, opts)).metadata.truncation).toBeUndefined();
  });

  test("empty file", async () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    writeFileSync(join(work, "empty.txt"), "");
    const r = await call(mode, "read", { file_path: "empty.txt" }, opts);
    expect(r.isError).toBe(false);
    expect(r.content).toBe(`${work}/empty.txt\n[file exists but is empty]`);
  });

  test("offset beyond the end", async () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    writeFileSync(join(work, "three.txt"), "a\nb\nc\n");
    const r = await call(mode, "read", { file_path: "three.txt", offset: 5000 }, opts);
    expect(r.isError).toBe(true);
    expect(r.error?.code).toBe("OFFSET_BEYOND_EOF");
    expect(r.content).toBe("Offset 5000 is beyond the end of the file (3 lines). Use offset ≤ 3.");
  });

  test("not found, with suggestions by name similarity", async () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    mkdirSync(join(work, "src/kernel"), { recursive: true });
    writeFileSync(join(work, "src/kernel/agent.ts"), "x");
    writeFileSync(join(work, "src/kernel/agent.test.ts"), "x");
    const r = await call(mode, "read", { file_path: "src/kernal/agent.ts" }, opts);
    expect(r.isError).toBe(true);
    expect(r.error?.code).toBe("FILE_NOT_FOUND");
    expect(r.content).toBe(`File not found: ${work}/src/kernal/agent.ts. Did you mean one of these? src/kernel/agent.ts`);
    const none = await call(mode, "read", { file_path: "zzzzzz.qq" }, opts);
    expect(none.content).toBe(`File not found: ${work}/zzzzzz.qq. Use glob to search for it by name, or read the parent directory to list what is there.`);
  });

  test("binary files are described, never dumped", async () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    writeFileSync(join(work, "img.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]));
    writeFileSync(join(work, "blob"), Buffer.concat([Buffer.from("ELF"), Buffer.alloc(100)]));
    const png = await call(mode, "read", { file_path: "img.png" }, opts);
    expect(png.error?.code).toBe("BINARY_FILE");
    expect(png.content).toBe(`${work}/img.png is a binary file (PNG image, 8 bytes); its bytes are not shown. Use bash with a suitable tool (e.g. file, xxd | head, unzip -l) if you need to inspect it.`);
    const blob = await call(mode, "read", { file_path: "blob" }, opts);
    expect(blob.content).toStartWith(`${work}/blob is a binary file (binary data, 103 bytes)`);
  });

  test("files over 10 MB are refused without offset/limit and paged with them", async () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    const line = `${"z".repeat(99)}\n`;
    writeFileSync(join(work, "huge.log"), line.repeat(110_000) + "tail line\n");
    const r = await call(mode, "read", { file_path: "huge.log" }, opts);
    expect(r.error?.code).toBe("FILE_TOO_LARGE");
    expect(r.content).toBe(`${work}/huge.log is 10.5 MB, over the 10 MB limit for reading a whole file. Use grep to find what you need in it, or read a region with offset and limit (e.g. offset=1, limit=200).`);
    const page = await call(mode, "read", { file_path: "huge.log", offset: 110_001, limit: 5 }, opts);
    expect(page.content).toBe(`${work}/huge.log\n110001→tail line`);
    expect(page.metadata.extra).toEqual({ path: `${work}/huge.log`, lines: 1, totalLines: 110_001 });
  });

  test("a directory is listed two levels deep", async () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    mkdirSync(join(work, "src/deep/deeper"), { recursive: true });
    mkdirSync(join(work, "node_modules/pkg"), { recursive: true });
    writeFileSync(join(work, "src/a.ts"), "");
    writeFileSync(join(work, "src/.hidden"), "");
    writeFileSync(join(work, "README.md"), "");
    writeFileSync(join(work, ".env"), "");
    mkdirSync(join(work, ".git"));
    symlinkSync("README.md", join(work, "link"));
    const r = await call(mode, "read", { file_path: "." }, opts);
    expect(r.isError).toBe(false);
    expect(r.content).toBe(
      [
        `${work}/`,
        // SPEC §8.4: .git is a noise directory, summarized like node_modules, not a hidden entry.
        ".git/ (0 entries, not listed)",
        "node_modules/ (1 entry, not listed)",
        "src/",
        "  deep/",
        "  a.ts",
        "  (1 hidden entry not shown)",
        "README.md",
        "link -> README.md",
        "(1 hidden entry not shown; read one by its path to see it)",
      ].join("\n"),
    );
  });

  test("the listing summarizes noise directories by grep's rule: by name, or by CACHEDIR.TAG or pyvenv.cfg in them, hidden or not", async () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    const files: Record<string, string> = {
      ".venv/pyvenv.cfg": "home = /usr/bin\n",
      ".venv/bin/python": "",
      ".cache/CACHEDIR.TAG": "Signature: 8a477f597d28d172789f06886806bc55\n",
      ".next/server.js": "",
      "target/CACHEDIR.TAG": "Signature: 8a477f597d28d172789f06886806bc55\n",
      "target/debug/app": "",
      "build/setup.py": "",
      "pkg/venv/pyvenv.cfg": "home = /usr/bin\n",
      "pkg/__pycache__/m.pyc": "",
      "pkg/dist/index.js": "",
      "pkg/m.py": "",
    };
    for (const [rel, content] of Object.entries(files)) {
      mkdirSync(dirname(join(work, rel)), { recursive: true });
      writeFileSync(join(work, rel), content);
    }
    const r = await call(mode, "read", { file_path: "." }, opts);
    expect(r.content).toBe(
      [
        `${work}/`,
        ".cache/ (1 entry, not listed)",
        ".venv/ (2 entries, not listed)",
        "build/",
        "  setup.py",
        "pkg/",
        "  __pycache__/ (1 entry, not listed)",
        "  dist/",
        "  venv/ (1 entry, not listed)",
        "  m.py",
        "target/ (2 entries, not listed)",
        "(1 hidden entry not shown; read one by its path to see it)",
      ].join("\n"),
    );
  });

  test("paths outside --root are refused, symlink escapes included", async () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    writeFileSync(join(tmp.path, "secret.txt"), "s");
    symlinkSync(join(tmp.path, "secret.txt"), join(work, "escape"));
    const direct = await call(mode, "read", { file_path: "../secret.txt" }, { ...opts, root: work });
    expect(direct.error?.code).toBe("OUTSIDE_ROOT");
    expect(direct.content).toBe(`Refusing to access ${tmp.path}/secret.txt: it is outside the root directory ${work}, and kt is confined to that directory. Use a path inside ${work}.`);
    const link = await call(mode, "read", { file_path: "escape" }, { ...opts, root: work });
    expect(link.error?.code).toBe("OUTSIDE_ROOT");
    expect(link.content).toBe(`Refusing to access ${work}/escape (through a symbolic link, its real path is ${tmp.path}/secret.txt): it is outside the root directory ${work}, and kt is confined to that directory. Use a path inside ${work}.`);
  });

  test("paths with spaces and unicode, and symlinks inside the tree", async () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    mkdirSync(join(work, "dir with space"));
    writeFileSync(join(work, "dir with space", "naïve ☃.txt"), "snow\n");
    symlinkSync("dir with space/naïve ☃.txt", join(work, "snow-link"));
    const r = await call(mode, "read", { file_path: "dir with space/naïve ☃.txt" }, opts);
    expect(r.content).toBe(`${work}/dir with space/naïve ☃.txt\n     1→snow`);
    const l = await call(mode, "read", { file_path: "snow-link" }, opts);
    expect(l.content).toBe(`${work}/snow-link\n     1→snow`);
  });

  // SPEC §8.3 (round three): a legacy file is read in its encoding, named in the header; only
  // UTF-8 with stray bytes is still shown with replacement characters and the note.
  test("non-UTF-8 text is read in its encoding; UTF-8 with stray bytes is shown with replacement characters and a note", async () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    writeFileSync(join(work, "latin1.txt"), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    const r = await call(mode, "read", { file_path: "latin1.txt" }, opts);
    expect(r.isError).toBe(false);
    expect(r.content).toBe(`${work}/latin1.txt (encoding: Windows-1252, a guess: its bytes are not UTF-8 and name no encoding; changes are written back in Windows-1252. If its non-ASCII characters look wrong, declare the file's encoding as charset in .editorconfig.)\n     1→café`);
    writeFileSync(join(work, "stray.txt"), Buffer.concat([Buffer.from("naïve café\n", "utf8"), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a])]));
    const s = await call(mode, "read", { file_path: "stray.txt" }, opts);
    expect(s.content).toBe(`${work}/stray.txt\n     1→naïve café\n     2→caf\uFFFD\n(This file is not valid UTF-8: undecodable bytes are shown as �. edit refuses such files; write replaces them with UTF-8 text.)`);
  });

  test("invalid input gets repair prose", async () => {
    const { tmp, opts } = setup();
    using _ = tmp;
    const missing = await call(mode, "read", {}, opts);
    expect(missing.error?.code).toBe("INVALID_ARGS");
    expect(missing.content).toBe('Invalid input for tool "read": parameter "file_path" is required. Please rewrite the input so it satisfies the expected schema.');
    const wrong = await call(mode, "read", { file_path: "a", offset: "ten" }, opts);
    expect(wrong.content).toBe('Invalid input for tool "read": parameter "offset" must be an integer, got "ten" (a string). Please rewrite the input so it satisfies the expected schema.');
    const unknown = await call(mode, "read", { filepath: "a" }, opts);
    expect(unknown.content).toBe('Invalid input for tool "read": unknown parameter "filepath" — did you mean "file_path"? Please rewrite the input so it satisfies the expected schema.');
    const both = await call(mode, "read", { file_path: 7, colour: 1 }, opts);
    expect(both.content).toBe('Invalid input for tool "read": unknown parameter "colour" (expected parameters: "file_path", "offset", "limit", "pages"); parameter "file_path" must be a string, got 7. Please rewrite the input so it satisfies the expected schema.');
    const limit = await call(mode, "read", { file_path: "a", limit: 0 }, opts);
    expect(limit.content).toBe('Invalid input for tool "read": parameter "limit" must be ≥ 1, got 0. Please rewrite the input so it satisfies the expected schema.');
    const nul = await call(mode, "read", { file_path: "a\u0000b" }, opts);
    expect(nul.error?.code).toBe("INVALID_ARGS");
    expect(nul.content).toBe('The path "a\\u0000b" contains a NUL character, which no file path can hold. Give the path without it.');
    const notObject = await call(mode, "read", [1, 2], opts);
    expect(notObject.content).toBe('Invalid input for tool "read": expected a JSON object of parameters, got an array. Please rewrite the input so it satisfies the expected schema.');
  });

  test.skipIf(process.platform !== "linux")("a path the operating system refuses to read is prose with a code, not a crash", async () => {
    const { tmp, opts } = setup();
    using _ = tmp;
    const r = await call(mode, "read", { file_path: "/proc/self/mem" }, opts);
    expect(r.error?.code).toBe("INTERNAL");
    expect(r.content).toBe("Cannot access /proc/self/mem: the operating system refused (EIO: i/o error). Nothing was changed. Try another path, or inspect this one with bash.");
  });

  test("framework aliases are accepted", async () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    writeFileSync(join(work, "a.txt"), "x\n");
    const r = await call(mode, "read", { filePath: "a.txt" }, opts);
    expect(r.content).toBe(`${work}/a.txt\n     1→x`);
    const p = await call(mode, "read", { path: "a.txt" }, opts);
    expect(p.content).toBe(r.content);
  });
});

describe("read: permissions (as an unprivileged user)", () => {
  test.skipIf(!CAN_RUN_AS_NOBODY)("a file without read permission gets PERMISSION_DENIED prose", () => {
    using tmp = tempDir();
    chmodSync(tmp.path, 0o755);
    writeFileSync(join(tmp.path, "locked.txt"), "no\n", { mode: 0o600 });
    const run = ktAsNobody(["read", "locked.txt"], { cwd: tmp.path, parent: tmp.path });
    expect(run).toEqual({
      stdout: `Permission denied: ${tmp.path}/locked.txt. kt cannot access this path with the current user's permissions; choose another path or ask the user to change its permissions.\n`,
      stderr: "",
      exitCode: 1,
    });
  });
});

describe("read: the CLI", () => {
  test("prints the content and one newline; exit 0", () => {
    using tmp = tempDir();
    writeFileSync(join(tmp.path, "a.txt"), "alpha\n");
    const r = kt(["read", "a.txt"], { cwd: tmp.path, stateDir: join(tmp.path, ".s") });
    expect(r).toEqual({ stdout: `${tmp.path}/a.txt\n     1→alpha\n`, stderr: "", exitCode: 0 });
  });
});
