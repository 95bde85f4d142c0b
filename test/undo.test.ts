// History and undo (SPEC §7.2), through the compiled binary: every change kt writes keeps the
// previous bytes; undo restores them byte for byte (CRLF, BOM, mode), refuses after an outside
// change unless --force, deletes a file kt created, and --last reverts a whole patch.
import { describe, expect, test } from "bun:test";
import { chmodSync, chownSync, existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CAN_RUN_AS_NOBODY, KT, kt, tempDir } from "./_helpers.ts";
import { HISTORY_KEEP } from "../src/core/history.ts";

function setup() {
  const tmp = tempDir();
  const work = join(tmp.path, "work");
  mkdirSync(work);
  return { tmp, work, opts: { cwd: work, stateDir: join(tmp.path, ".state") } };
}

/** The default session's history folder. */
function historyOf(stateDir: string): string {
  return join(stateDir, "sessions", "default", "history");
}

/** A patch replacing one line of a.txt and one of b.txt. */
function twoFiles(a0: string, a1: string, b0: string, b1: string): string {
  return `*** Begin Patch\n*** Update File: a.txt\n@@\n-${a0}\n+${a1}\n*** Update File: b.txt\n@@\n-${b0}\n+${b1}\n*** End Patch\n`;
}

function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of readdirSync(dir, { recursive: true, encoding: "utf8" }).sort()) {
    const st = statSync(join(dir, p));
    if (st.isFile()) out[p] = `${(st.mode & 0o777).toString(8)} ${readFileSync(join(dir, p)).toString("base64")}`;
  }
  return out;
}

/** History lines carry local times; golden them without. */
function timeless(text: string): string {
  return text.replace(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/g, "<time>");
}

describe("kt undo PATH", () => {
  test("write, edit and patch of a CRLF file with a BOM and mode 0750, undone one step at a time: byte-identical every time", () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    const file = join(work, "w.txt");
    const v0 = Buffer.from("\uFEFFone\r\ntwo\r\nthree\r\n");
    writeFileSync(file, v0);
    chmodSync(file, 0o750);
    expect(kt(["read", "w.txt"], opts).exitCode).toBe(0);
    expect(kt(["edit", "w.txt", "--old-string", "two", "--new-string", "TWO"], opts).exitCode).toBe(0);
    const v1 = readFileSync(file);
    expect(kt(["patch", "*** Begin Patch\n*** Update File: w.txt\n TWO\n-three\n+3\n*** End Patch\n"], opts).exitCode).toBe(0);
    const v2 = readFileSync(file);
    expect(kt(["write", "w.txt", "--content", "replaced\n"], opts).exitCode).toBe(0);
    expect(readFileSync(file).toString("latin1")).toBe("\xef\xbb\xbfreplaced\r\n");

    const history = kt(["history", "w.txt"], opts);
    expect(history.exitCode).toBe(0);
    expect(timeless(history.stdout)).toBe(
      `3 changes kt made to ${file} in session "default", newest first (the version before each is kept):\n` +
        "  1. <time>  write  +1 −3 lines\n" +
        "  2. <time>  patch  +1 −1 lines\n" +
        "  3. <time>  edit   +1 −1 lines\n" +
        `kt undo ${file} restores the version before the newest change that is not undone; --steps N goes back N such changes (at most 3).\n`,
    );

    for (const expected of [v2, v1, v0]) {
      const r = kt(["undo", "w.txt"], opts);
      expect(r.exitCode, r.stdout).toBe(0);
      expect(timeless(r.stdout)).toMatch(new RegExp(`^Restored ${file} to the version before the (write|patch|edit) of <time> \\(1 step back\\)\\.\\n$`));
      expect(readFileSync(file).equals(expected)).toBe(true);
      expect(statSync(file).mode & 0o777).toBe(0o750);
    }
    const none = kt(["undo", "w.txt"], opts);
    expect(none.exitCode).toBe(1);
    expect(none.stdout).toBe(`Nothing to undo: every change kt made to ${file} in session "default" is undone already.\n`);
  });

  test("--steps N goes back N changes at once", () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    kt(["write", "s.txt", "--content", "1\n"], opts);
    kt(["write", "s.txt", "--content", "2\n"], opts);
    kt(["write", "s.txt", "--content", "3\n"], opts);
    expect(kt(["undo", "s.txt", "--steps", "4"], opts).stdout).toBe(`Cannot go back 4 changes: kt kept 3 changes of ${work}/s.txt that can be undone. Use --steps 3 or less. Nothing was changed.\n`);
    const r = kt(["undo", "s.txt", "--steps", "2"], opts);
    expect(r.exitCode).toBe(0);
    expect(readFileSync(join(work, "s.txt"), "utf8")).toBe("1\n");
  });

  test("undo of a file kt created removes it", () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    kt(["write", "new.txt", "--content", "hello\n"], opts);
    const r = kt(["undo", "new.txt"], opts);
    expect(r.exitCode).toBe(0);
    expect(timeless(r.stdout)).toBe(`Removed ${work}/new.txt: the write of <time> created it (1 step back).\n`);
    expect(existsSync(join(work, "new.txt"))).toBe(false);
  });

  test("refused when the file changed since kt last wrote it; --force restores anyway", () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    const file = join(work, "c.txt");
    writeFileSync(file, "original\n");
    kt(["read", "c.txt"], opts);
    kt(["write", "c.txt", "--content", "by kt\n"], opts);
    writeFileSync(file, "by someone else\n");
    const r = kt(["undo", "c.txt"], opts);
    expect(r.exitCode).toBe(1);
    expect(timeless(r.stdout)).toBe(
      `Refusing to undo ${file}: it changed since kt last wrote it (write at <time>; its content differs), and undoing would discard that change. Check the file first; kt undo --force restores the kept version anyway.\n`,
    );
    expect(readFileSync(file, "utf8")).toBe("by someone else\n");
    expect(kt(["undo", "c.txt", "--force"], opts).exitCode).toBe(0);
    expect(readFileSync(file, "utf8")).toBe("original\n");
  });

  test(`only the last ${HISTORY_KEEP} versions of a file are kept`, () => {
    const { tmp, opts } = setup();
    using _ = tmp;
    for (let i = 0; i < HISTORY_KEEP + 3; i++) kt(["write", "many.txt", "--content", `${i}\n`], opts);
    const lines = kt(["history", "many.txt"], opts).stdout.split("\n").filter((l) => /^\s+\d+\. /.test(l));
    expect(lines.length).toBe(HISTORY_KEEP);
    const blobs = readdirSync(historyOf(opts.stateDir));
    expect(blobs.length).toBeLessThanOrEqual(HISTORY_KEEP);
  });

  test(`a patch of two files, ${HISTORY_KEEP + 3} times: each keeps its last ${HISTORY_KEEP} versions, and the history folder only theirs`, () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    writeFileSync(join(work, "a.txt"), "a0\n");
    writeFileSync(join(work, "b.txt"), "b0\n");
    for (let i = 0; i < HISTORY_KEEP + 3; i++) {
      const patch = `*** Begin Patch\n*** Update File: a.txt\n@@\n-a${i}\n+a${i + 1}\n*** Update File: b.txt\n@@\n-b${i}\n+b${i + 1}\n*** End Patch\n`;
      expect(kt(["patch"], { ...opts, stdin: JSON.stringify({ patch }) }).exitCode).toBe(0);
    }
    for (const f of ["a.txt", "b.txt"]) {
      const lines = kt(["history", f], opts).stdout.split("\n").filter((l) => /^\s+\d+\. /.test(l));
      expect(lines.length).toBe(HISTORY_KEEP);
    }
    // Each version the file itself, linked (a patch's own names), the 3 oldest of each gone with their rows.
    const kept = readdirSync(historyOf(opts.stateDir));
    expect(kept.length).toBe(2 * HISTORY_KEEP);
    expect(kept.every((name) => /^pack-[A-Za-z0-9-]+$/.test(name))).toBe(true);
    // The oldest kept version of each is the one before the 4th patch.
    expect(kt(["undo", "a.txt", "--steps", String(HISTORY_KEEP)], opts).exitCode).toBe(0);
    expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("a3\n");
  });

  test("a change of two files keeps each file it replaces as itself, linked in the history folder (no byte copied); a link goes with its row", () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    const history = historyOf(opts.stateDir);
    writeFileSync(join(work, "a.txt"), "a before the patch\n");
    writeFileSync(join(work, "b.txt"), "b before the patch\n");
    const inode = (f: string) => statSync(f).ino;
    const before = { a: inode(join(work, "a.txt")), b: inode(join(work, "b.txt")) };
    expect(kt(["patch"], { ...opts, stdin: JSON.stringify({ patch: twoFiles("a before the patch", "a patched", "b before the patch", "b patched") }) }).exitCode).toBe(0);
    const names = readdirSync(history);
    expect(names.length).toBe(2);
    // The files replaced are the kept versions: their inodes, now named only in the history folder.
    const byInode = new Map(names.map((n) => [inode(join(history, n)), n]));
    expect(readFileSync(join(history, byInode.get(before.a)!), "utf8")).toBe("a before the patch\n");
    expect(readFileSync(join(history, byInode.get(before.b)!), "utf8")).toBe("b before the patch\n");
    expect(statSync(join(history, byInode.get(before.a)!)).nlink).toBe(1);
    expect(inode(join(work, "a.txt"))).not.toBe(before.a);
    // a.txt's version is pruned by its later ones (one-file writes: blobs of their own); b.txt's link stays.
    expect(kt(["read", "a.txt"], opts).exitCode).toBe(0);
    for (let i = 0; i < HISTORY_KEEP; i++) expect(kt(["write", "a.txt", "--content", `a${i}\n`], opts).exitCode).toBe(0);
    expect(kt(["history", "a.txt"], opts).stdout).not.toContain("patch");
    expect(readdirSync(history)).not.toContain(byInode.get(before.a)!);
    expect(readdirSync(history)).toContain(byInode.get(before.b)!);
    expect(kt(["undo", "b.txt"], opts).exitCode).toBe(0);
    expect(readFileSync(join(work, "b.txt"), "utf8")).toBe("b before the patch\n");
  });

  test("a file with another name is copied into the change's pack, not linked (its version must not change through that name); files of one content are copied once", () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    const history = historyOf(opts.stateDir);
    const same = "the same bytes\n".repeat(100);
    for (const f of ["x.txt", "y.txt", "z.txt"]) {
      writeFileSync(join(work, f), same);
      linkSync(join(work, f), join(tmp.path, `other-name-of-${f}`));
    }
    writeFileSync(join(work, "w.txt"), `only ${same}`);
    expect(kt(["replace", "same", "other"], opts).exitCode).toBe(0);
    const names = readdirSync(history).sort();
    // w.txt linked (pack-<token>-0), the three others in the pack (pack-<token>), once.
    expect(names.length).toBe(2);
    const [pack, link] = names[0]!.length < names[1]!.length ? names : [names[1]!, names[0]!];
    expect(link).toBe(`${pack}-0`);
    expect(readFileSync(join(history, pack!), "utf8")).toBe(same);
    expect(readFileSync(join(history, link!), "utf8")).toBe(`only ${same}`);
    // The other names still hold what they held: the change replaced the files, not their contents.
    for (const f of ["x.txt", "y.txt", "z.txt"]) expect(readFileSync(join(tmp.path, `other-name-of-${f}`), "utf8")).toBe(same);
    expect(kt(["undo", "--last"], opts).exitCode).toBe(0);
    for (const f of ["x.txt", "y.txt", "z.txt"]) expect(readFileSync(join(work, f), "utf8")).toBe(same);
    expect(readFileSync(join(work, "w.txt"), "utf8")).toBe(`only ${same}`);
  });

  const shm = existsSync("/dev/shm") ? "/dev/shm" : undefined;
  test.skipIf(!shm || statSync(shm).dev === statSync(tmpdir()).dev)("a state directory on another file system than the files: their versions are copied into the pack (a link cannot cross), and undone", () => {
    const { tmp, work } = setup();
    using _ = tmp;
    const other = mkdtempSync(join(shm!, "kt-state-"));
    using _other = { [Symbol.dispose]: () => rmSync(other, { recursive: true, force: true }) };
    const opts = { cwd: work, stateDir: join(other, "state") };
    writeFileSync(join(work, "a.txt"), "a0\n");
    writeFileSync(join(work, "b.txt"), "b0\n");
    expect(kt(["patch"], { ...opts, stdin: JSON.stringify({ patch: twoFiles("a0", "a1", "b0", "b1") }) }).exitCode).toBe(0);
    const history = historyOf(opts.stateDir);
    const [pack, ...more] = readdirSync(history);
    expect(more).toEqual([]);
    expect(readFileSync(join(history, pack!), "utf8")).toBe("a0\nb0\n");
    expect(kt(["undo", "--last"], opts).exitCode).toBe(0);
    expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("a0\n");
    expect(readFileSync(join(work, "b.txt"), "utf8")).toBe("b0\n");
  });

  test("a kept version changed in the history folder (or cut short) is never restored: undo says it is no longer kept", () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    const history = historyOf(opts.stateDir);
    writeFileSync(join(work, "a.txt"), "a0\n");
    writeFileSync(join(work, "b.txt"), "b0\n");
    expect(kt(["patch"], { ...opts, stdin: JSON.stringify({ patch: twoFiles("a0", "a1", "b0", "b1") }) }).exitCode).toBe(0);
    for (const name of readdirSync(history)) writeFileSync(join(history, name), "X0\n");
    const r = kt(["undo", "--last"], opts);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toContain("is no longer kept");
    expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("a1\n");
    expect(readFileSync(join(work, "b.txt"), "utf8")).toBe("b1\n");
  });

  test.skipIf(!CAN_RUN_AS_NOBODY)("a change whose previous versions cannot be kept (a history folder that cannot be written) is made, says undo cannot revert it, and leaves no history (as nobody)", () => {
    const { tmp, work } = setup();
    using _ = tmp;
    chmodSync(tmp.path, 0o755);
    chmodSync(work, 0o777);
    for (const f of ["a.txt", "b.txt"]) {
      writeFileSync(join(work, f), `hello from ${f}\n`);
      chmodSync(join(work, f), 0o666);
    }
    const state = join(tmp.path, "state");
    mkdirSync(state, { mode: 0o700 });
    chownSync(state, 65534, 65534);
    const nobody = (args: string[], stdin?: string) => {
      const p = Bun.spawnSync(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", KT, ...args], {
        cwd: work,
        env: { PATH: process.env.PATH ?? "", HOME: state, NO_COLOR: "1", KT_STATE_DIR: state },
        stdin: stdin === undefined ? "ignore" : Buffer.from(stdin),
      });
      return { stdout: p.stdout.toString(), stderr: p.stderr.toString(), exitCode: p.exitCode };
    };
    expect(nobody(["write", "made.txt", "--content", "m\n"]).exitCode).toBe(0);
    const history = join(state, "sessions", "default", "history");
    expect(existsSync(history)).toBe(true);
    chmodSync(history, 0o500);
    const r = nobody(["replace", "hello", "bye"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe(`Replaced "hello": 2 replacements in 2 files:\nM a.txt (1)\nM b.txt (1)\n`);
    expect(r.stderr).toContain(`the previous versions of the 2 files changed could not be kept for undo: kt undo cannot revert this replace. kt cannot use its state directory ${state}: it cannot be written`);
    expect(r.stderr).not.toContain("a bug in kt");
    expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("bye from a.txt\n");
    expect(readFileSync(join(work, "b.txt"), "utf8")).toBe("bye from b.txt\n");
    // One file through the same commit: its blob cannot be made either.
    const patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-bye from a.txt\n+again from a.txt\n*** End Patch\n";
    const p = nobody(["patch"], JSON.stringify({ patch }));
    expect(p.exitCode, p.stderr).toBe(0);
    expect(p.stderr).toContain(`the previous version of ${work}/a.txt could not be kept for undo: kt undo cannot revert this patch.`);
    expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("again from a.txt\n");
    expect(readdirSync(history)).toEqual([]);
    // Undo finds the write before them (made.txt), and nothing of the replace or the patch.
    const u = nobody(["undo", "--last"]);
    expect(u.exitCode, u.stdout).toBe(0);
    expect(u.stdout).toContain("made.txt");
    expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("again from a.txt\n");
  });

  test("a kept version cut short (kt killed while writing it) is written whole again by the next change that keeps it, and undo restores it", () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    const file = join(work, "k.txt");
    const kept = "the version kept\n";
    writeFileSync(file, kept);
    expect(kt(["read", "k.txt"], opts).exitCode).toBe(0);
    expect(kt(["write", "k.txt", "--content", "second\n"], opts).exitCode).toBe(0);
    const blob = join(opts.stateDir, "sessions", "default", "history", new Bun.CryptoHasher("sha256").update(kept).digest("hex"));
    expect(readFileSync(blob, "utf8")).toBe(kept);
    // As a kill in the middle of writing it would leave it: the right name, part of the bytes.
    writeFileSync(blob, kept.slice(0, 5));
    expect(kt(["write", "k.txt", "--content", kept], opts).exitCode).toBe(0);
    expect(kt(["write", "k.txt", "--content", "third\n"], opts).exitCode).toBe(0);
    expect(readFileSync(blob, "utf8")).toBe(kept);
    const r = kt(["undo", "k.txt"], opts);
    expect(r.exitCode, r.stdout).toBe(0);
    expect(readFileSync(file, "utf8")).toBe(kept);
  });

  test("history of a file kt never changed, and usage errors", () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    writeFileSync(join(work, "x.txt"), "x\n");
    expect(kt(["history", "x.txt"], opts).stdout).toBe(`kt has kept no versions of ${work}/x.txt in session "default": it has not changed that file in this session.\n`);
    expect(kt(["undo", "x.txt"], opts).exitCode).toBe(1);
    expect(kt(["undo"], opts).exitCode).toBe(2);
    expect(kt(["undo", "x.txt", "--last"], opts).exitCode).toBe(2);
    expect(kt(["undo", "x.txt", "--steps", "0"], opts).exitCode).toBe(2);
    // SPEC §8.6: kt history without a path lists the session's changes (no longer a usage error).
    expect(kt(["history"], opts)).toEqual({ stdout: 'kt has kept no changes in session "default" (it has changed no file, or its history is older than 7 days).\n', stderr: "", exitCode: 0 });
    expect(kt(["history", "a", "b"], opts).exitCode).toBe(2);
  });
});

describe("kt undo --last", () => {
  test("reverts a whole patch: update, add, delete and a move keeping its mode, all together", () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    writeFileSync(join(work, "u.txt"), "a\r\nb\r\n");
    writeFileSync(join(work, "d.txt"), "\uFEFFdelete me\n");
    mkdirSync(join(work, "src"));
    writeFileSync(join(work, "src", "run.sh"), "#!/bin/sh\nmake\n");
    chmodSync(join(work, "src", "run.sh"), 0o755);
    const before = snapshot(work);
    const patch = [
      "*** Begin Patch",
      "*** Update File: u.txt",
      " a",
      "-b",
      "+B",
      "*** Add File: n.txt",
      "+new",
      "*** Delete File: d.txt",
      "*** Update File: src/run.sh",
      "*** Move to: bin/run.sh",
      " #!/bin/sh",
      "-make",
      "+make all",
      "*** End Patch",
    ].join("\n");
    expect(kt(["patch", patch], opts).exitCode).toBe(0);
    expect(statSync(join(work, "bin", "run.sh")).mode & 0o777).toBe(0o755);
    const r = kt(["undo", "--last"], opts);
    expect(r.exitCode, r.stdout).toBe(0);
    expect(timeless(r.stdout)).toBe(
      [
        "Undid the patch of <time> (5 files):",
        `M ${work}/u.txt`,
        `D ${work}/n.txt (the patch created it)`,
        `A ${work}/d.txt (the patch removed it)`,
        `D ${work}/bin/run.sh (the patch created it)`,
        `A ${work}/src/run.sh (the patch removed it)`,
        "",
      ].join("\n"),
    );
    const after = snapshot(work);
    expect(after).toEqual(before);
    // The undo is itself a change: undoing it again redoes nothing by accident — the patch is undone.
    expect(kt(["undo", "--last"], opts).stdout).toBe(`Nothing to undo: kt has no change in session "default" that is not undone already.\n`);
  });

  test("refuses the whole patch when one of its files changed outside kt; nothing is reverted", () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    writeFileSync(join(work, "a.txt"), "a\n");
    writeFileSync(join(work, "b.txt"), "b\n");
    kt(["patch", "*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** Update File: b.txt\n-b\n+B\n*** End Patch\n"], opts);
    writeFileSync(join(work, "b.txt"), "edited by hand\n");
    const r = kt(["undo", "--last"], opts);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toStartWith(`Refusing to undo ${work}/b.txt: it changed since kt last wrote it`);
    expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("A\n");
    expect(kt(["undo", "--last", "--force"], opts).exitCode).toBe(0);
    expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("a\n");
    expect(readFileSync(join(work, "b.txt"), "utf8")).toBe("b\n");
  });

  test("sessions keep their own history", () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    kt(["write", "s.txt", "--content", "one\n", "--session", "A"], opts);
    expect(kt(["undo", "--last", "--session", "B"], opts).exitCode).toBe(1);
    expect(kt(["undo", "--last", "--session", "A"], opts).exitCode).toBe(0);
    expect(existsSync(join(work, "s.txt"))).toBe(false);
  });
});

for (const older of [
  { name: "before packs", drop: ["pack_len", "pack_off", "pack"] },
  { name: "before directories' identities and packs", drop: ["pack_len", "pack_off", "pack", "dir"] },
]) {
  test(`a history table of the layout ${older.name} (an older kt) gains the columns and keeps its rows`, async () => {
    const { tmp, work, opts } = setup();
    using _ = tmp;
    const { Database } = await import("bun:sqlite");
    expect(kt(["write", "a.txt", "--content", "x\n"], opts).exitCode).toBe(0);
    expect(kt(["write", "a.txt", "--content", "y\n"], opts).exitCode).toBe(0);
    const db = new Database(join(opts.stateDir, "index.db"));
    db.exec("DROP INDEX history_pack");
    for (const column of older.drop) db.exec(`ALTER TABLE history DROP COLUMN ${column}`);
    db.close();
    expect(kt(["undo", "a.txt"], opts).exitCode).toBe(0);
    expect(readFileSync(join(work, "a.txt"), "utf8")).toBe("x\n");
    const after = new Database(join(opts.stateDir, "index.db"));
    const columns = (after.query("PRAGMA table_info(history)").all() as { name: string }[]).map((c) => c.name);
    after.close();
    expect(columns.slice(-4)).toEqual(["dir", "pack", "pack_off", "pack_len"]);
  });
}

test("a history table of another layout (an older kt) is rebuilt instead of failing every write", async () => {
  const { tmp, work, opts } = setup();
  using _ = tmp;
  const { Database } = await import("bun:sqlite");
  expect(kt(["write", "a.txt", "--content", "x\n"], opts).exitCode).toBe(0);
  const db = new Database(join(opts.stateDir, "index.db"));
  db.exec("DROP TABLE history");
  db.exec("CREATE TABLE history (seq INTEGER PRIMARY KEY, session TEXT)");
  db.close();
  const r = kt(["write", "b.txt", "--content", "y\n"], opts);
  expect(r.exitCode, r.stderr).toBe(0);
  expect(kt(["undo", "b.txt"], opts).exitCode).toBe(0);
  expect(existsSync(join(work, "b.txt"))).toBe(false);
});
