// History as a model would keep it, through the compiled binary: random runs of changes of
// many files (replace and patch: their versions kept in one pack) and of one file (write:
// a blob of its own), some with files of equal content, interleaved with `kt undo --last`;
// after every step each file holds what the model says, and undoing everything that is left
// puts back the files as they began, byte for byte.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { kt, tempDir } from "./_helpers.ts";
import { mulberry32 } from "../bench/_random.ts";
import { HISTORY_KEEP } from "../src/core/history.ts";

const WORDS = ["alpha", "beta", "gamma", "delta", "omega"];
const FILES = ["a.txt", "b.txt", "c/d.txt", "c/e.txt"];

type Tree = Map<string, string>;

describe("undo over packs and blobs", () => {
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    test(`seed ${seed}: every step as the model says, and all undone gives the files back`, () => {
      const r = mulberry32(seed);
      const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
      const line = () => Array.from({ length: 1 + Math.floor(r() * 5) }, () => pick(WORDS)).join(" ");
      using tmp = tempDir();
      const work = join(tmp.path, "work");
      mkdirSync(join(work, "c"), { recursive: true });
      const opts = { cwd: work, stateDir: join(tmp.path, "state") };
      const start: Tree = new Map();
      for (const f of FILES) {
        // Two files begin alike: one pack keeps two versions of one content.
        const text = f === "b.txt" ? start.get("a.txt")! : Array.from({ length: 3 + Math.floor(r() * 4) }, line).join("\n") + "\n";
        start.set(f, text);
        writeFileSync(join(work, f), text);
      }
      const disk = (): Tree => new Map(FILES.filter((f) => existsSync(join(work, f))).map((f) => [f, readFileSync(join(work, f), "utf8")]));
      let now: Tree = new Map(start);
      // Live changes, newest last: the tree before each.
      const live: Tree[] = [];
      const versions = new Map<string, number>();
      const changed = (before: Tree, after: Tree) => FILES.filter((f) => before.get(f) !== after.get(f));
      // No version is ever pruned: a file's rows (its versions so far, and one for each undo
      // still to come) stay within HISTORY_KEEP.
      const liveTouched: string[][] = [];
      const full = (f: string) => (versions.get(f) ?? 0) + liveTouched.filter((ts) => ts.includes(f)).length + 2 > HISTORY_KEEP;
      for (let step = 0; step < 24; step++) {
        const choice = r();
        const before = new Map(now);
        let after: Tree | undefined;
        if (choice < 0.4) {
          const from = pick(WORDS);
          const to = pick(WORDS.filter((w) => w !== from));
          const next = new Map([...now].map(([f, t]) => [f, t.replaceAll(from, to)]));
          if (changed(now, next).some(full)) continue;
          const res = kt(["replace", from, to], opts);
          expect(res.exitCode, res.stdout).toBe(changed(now, next).length > 0 ? 0 : 1);
          after = next;
        } else if (choice < 0.6) {
          // A patch of two files: one line replaced in each.
          const [x, y] = [pick(FILES), pick(FILES)];
          if (x === y || [x, y].some(full)) continue;
          const next = new Map(now);
          let patch = "*** Begin Patch\n";
          for (const f of [x, y]) {
            const lines = now.get(f)!.split("\n");
            const at = Math.floor(r() * (lines.length - 1));
            const fresh = `${line()} ${step}`;
            // The whole file as context: the hunk can only be placed where it is meant.
            const context = (ls: string[]) => ls.map((l) => ` ${l}\n`).join("");
            patch += `*** Update File: ${f}\n@@\n${context(lines.slice(0, at))}-${lines[at]}\n+${fresh}\n${context(lines.slice(at + 1, -1))}`;
            lines[at] = fresh;
            next.set(f, lines.join("\n"));
          }
          patch += "*** End Patch\n";
          const res = kt(["patch"], { ...opts, stdin: JSON.stringify({ patch }) });
          expect(res.exitCode, res.stdout).toBe(0);
          after = next;
        } else if (choice < 0.8) {
          const f = pick(FILES);
          if (full(f)) continue;
          const text = `${line()}\n${line()}\n`;
          kt(["read", f], opts);
          const res = kt(["write", f, "--content", text], opts);
          expect(res.exitCode, res.stdout).toBe(0);
          after = new Map(now).set(f, text);
        } else {
          const res = kt(["undo", "--last"], opts);
          const top = live.pop();
          liveTouched.pop();
          if (!top) {
            expect(res.exitCode).toBe(1);
            continue;
          }
          expect(res.exitCode, res.stdout).toBe(0);
          for (const f of changed(now, top)) versions.set(f, (versions.get(f) ?? 0) + 1);
          now = top;
          expect(disk()).toEqual(now);
          continue;
        }
        const touched = changed(before, after);
        if (touched.length === 0) continue;
        for (const f of touched) versions.set(f, (versions.get(f) ?? 0) + 1);
        live.push(before);
        liveTouched.push(touched);
        now = after;
        expect(disk()).toEqual(now);
      }
      // Both kinds of keeping were used.
      const kept = readdirSync(join(opts.stateDir, "sessions", "default", "history"));
      expect(kept.some((n) => n.startsWith("pack-"))).toBe(true);
      while (live.length > 0) {
        const res = kt(["undo", "--last"], opts);
        expect(res.exitCode, res.stdout).toBe(0);
        now = live.pop()!;
        expect(disk()).toEqual(now);
      }
      expect(disk()).toEqual(start);
    });
  }
});
