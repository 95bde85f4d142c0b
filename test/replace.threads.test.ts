// kt replace where grep's search threads work out each file's change as they find the pattern
// in it (search/rewrite.ts), through the compiled binary: the answer, its metadata (diff and
// counts among them), the files written and the history must be what one thread makes, and
// what the rg engine's search (which works out nothing) leads to.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { filesBelow, kt, tempDir } from "./_helpers.ts";

function snapshot(dir: string): Record<string, string> {
  return Object.fromEntries(filesBelow(dir).map((p) => [p, readFileSync(join(dir, p), "latin1")]));
}

/** 40 directories of 12 files: enough for helper threads to share, every kind of file a replace meets among them. */
function tree(root: string): void {
  for (let d = 0; d < 40; d++) {
    const dir = join(root, `pkg${d}`, d % 3 === 0 ? "deep/er" : "src");
    mkdirSync(dir, { recursive: true });
    for (let f = 0; f < 12; f++) {
      const n = d * 12 + f;
      const name = join(dir, `m${f}.ts`);
      switch (n % 11) {
        case 0:
          writeFileSync(name, `// nothing to change ${n}\nconst other = ${n};\n`);
          break;
        case 1:
          writeFileSync(name, `const fooBar = ${n};\r\nexport { fooBar };\r\n`);
          break;
        case 2:
          writeFileSync(name, `let x = fooBar(${n}) + FooBar;`);
          break;
        case 3:
          writeFileSync(name, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`fooBar ${n}\n`)]));
          break;
        case 4:
          writeFileSync(name, Buffer.from(`fooBar caf\xe9 ${n}\n`, "latin1"));
          break;
        case 5:
          writeFileSync(name, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(`fooBar ${n}\n`, "utf16le")]));
          break;
        case 6:
          writeFileSync(name, Buffer.from(`fooBar\0${n}`));
          break;
        case 7:
          // Lines a replace moves: only a diff can count them (the replacement holds the pattern).
          writeFileSync(name, `fooBar\nfooBar_fooBar\nkeep ${n}\nfooBar_fooBar\nfooBar\n`);
          break;
        default:
          writeFileSync(name, `import { fooBar } from "./x${n}";\n${"const a = 1;\n".repeat(n % 40)}fooBar(fooBar, "fooBarbaz", FOOBAR);\n// é ${n}\n`);
      }
    }
  }
  // Past the size replace loads whole: named in a note, never changed.
  writeFileSync(join(root, "pkg1/src/huge.ts"), `fooBar\n${`${"x".repeat(100)}\n`.repeat(104_000)}`);
}

const configs: [string, Record<string, string>][] = [
  ["one thread", { KT_GREP_ENGINE: "builtin", KT_THREADS: "1", KT_GREP_PARALLEL_AFTER: "1000000000" }],
  ["four threads from the first file", { KT_GREP_ENGINE: "builtin", KT_THREADS: "4", KT_GREP_PARALLEL_AFTER: "1" }],
  ["the rg engine", { KT_GREP_ENGINE: "rg" }],
];

const cases: [string, string[]][] = [
  ["a literal whose replacement holds it", ["fooBar", "fooBar_fooBar"]],
  ["a regex with a group", ["fo+(B\\w+)", "x${1}y", "--regex"]],
  ["whole words in either case", ["FOOBAR", "q", "--word", "--ignore-case"]],
];

describe("kt replace: the change each search thread works out is the change one thread makes", () => {
  const shared = tempDir();
  const pristine = join(shared.path, "pristine");
  let original: Record<string, string> = {};
  beforeAll(() => {
    tree(pristine);
    original = snapshot(pristine);
  });
  afterAll(() => shared[Symbol.dispose]());

  for (const [name, args] of cases) {
    test(name, () => {
      using tmp = tempDir();
      const results = configs.map(([label, env], i) => {
        const work = join(tmp.path, `w${i}`);
        cpSync(pristine, work, { recursive: true });
        const state = join(tmp.path, `state${i}`);
        const text = kt(["replace", ...args], { cwd: work, stateDir: state, env });
        expect(text.exitCode, `${label}: ${text.stdout}${text.stderr}`).toBe(0);
        const after = snapshot(work);
        // The same change as JSON (metadata, diff and counts), from the same files.
        const again = join(tmp.path, `j${i}`);
        cpSync(pristine, again, { recursive: true });
        const json = kt(["replace", ...args, "--json"], { cwd: again, stateDir: join(tmp.path, `jstate${i}`), env });
        expect(json.exitCode, label).toBe(0);
        // The stamps the change left (their hashes worked out by the search threads) are the
        // files' own: an edit of a changed file, never read, is neither NOT_READ nor STALE_FILE.
        const edited = kt(["edit", join(again, "pkg0/deep/er/m8.ts"), "--old-string", "// é 8", "--new-string", "// e 8"], { cwd: again, stateDir: join(tmp.path, `jstate${i}`), env });
        expect(edited.exitCode, `${label}: ${edited.stdout}${edited.stderr}`).toBe(0);
        const envelope = JSON.parse(json.stdout) as { content: string; metadata: Record<string, unknown> & { extra: Record<string, unknown> } };
        const threads = envelope.metadata.extra.threads;
        delete envelope.metadata.extra.threads;
        delete envelope.metadata.durationMs;
        const undo = kt(["undo", "--last"], { cwd: work, stateDir: state, env });
        expect(undo.exitCode, label).toBe(0);
        return { label, text: text.stdout, after, envelope: JSON.stringify(envelope).replaceAll(again, "<tree>"), threads, undone: snapshot(work) };
      });
      const [one, many, rg] = results;
      // The helpers did search (and so worked out changes): four threads, not one.
      expect(one!.threads).toBe(1);
      expect(many!.threads).toBe(4);
      expect(one!.text).toContain("binary file");
      expect(one!.text).toContain("not valid UTF-8");
      expect(one!.text).toContain("over the 10 MB limit: pkg1/src/huge.ts.");
      for (const r of [many!, rg!]) {
        expect(r.text, r.label).toBe(one!.text);
        expect(r.envelope, r.label).toBe(one!.envelope);
        expect(r.after, r.label).toEqual(one!.after);
        expect(r.undone, r.label).toEqual(original);
      }
      expect(one!.after).not.toEqual(original);
      expect(one!.undone).toEqual(original);
    }, 120_000);
  }
});
