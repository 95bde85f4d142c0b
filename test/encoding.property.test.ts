// Property (SPEC §8.3): real text — Python's CJK test corpus in its own encodings, stdlib
// sources in Windows-1252 and Latin-1, both in UTF-16 LE and BE with and without a BOM — with
// LF, CRLF and mixed line endings. Random edits and patches through dist/kt must give exactly
// the intended bytes: the change worked out on lines, each kept or changed line with its own
// ending, each added line with the ending of the line above it (core/eol.ts), encoded in the
// file's encoding; the bytes before and after the changed lines identical; and, for every
// third case, the same as the same change made to the file's UTF-8 twin and converted. Text
// the encoding cannot hold is refused (UNENCODABLE); bytes that do not round-trip are refused;
// nothing is written either way. An ASCII-only file takes ASCII changes byte for byte whatever
// its .editorconfig declares. Bounded: one seed, a fixed number of cases.
// KT_PROPERTY_SEED=n replays a run; the seed and the case are in every failure message.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import iconv from "iconv-lite";
import { kt, tempDir } from "./_helpers.ts";

const SEED = Number(process.env.KT_PROPERTY_SEED ?? 20261202);
const CASES_PER_VARIANT = 6;

function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const STDLIB = Bun.spawnSync(["python3", "-c", 'import sysconfig;print(sysconfig.get_paths()["stdlib"])']).stdout.toString().trim();
const CJK = join(STDLIB, "test", "cjkencodings");
const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

/** The first `n` lines of a stdlib source, as lines (no ending). */
function python(file: string, n: number, from = 0): string[] {
  return readFileSync(join(STDLIB, file), "utf8").split("\n").slice(from, from + n);
}

/** Characters of `lines` beyond ASCII that `codec` holds one for one. */
function repertoire(lines: readonly string[], codec: string, extra = ""): string[] {
  const out = new Set<string>();
  for (const c of lines.join("") + extra) {
    if (c.codePointAt(0)! < 0x80 || c === "\uFEFF") continue;
    if (iconv.decode(iconv.encode(c, codec), codec) === c) out.add(c);
  }
  return [...out];
}

interface Variant {
  name: string;
  codec: string;
  bom?: Uint8Array;
  lines: string[];
  chars: string[];
  /** An .editorconfig beside the file. */
  editorconfig?: string;
  /** A character the encoding cannot hold, for the UNENCODABLE cases. */
  foreign?: string;
}

/** The text of a corpus file as kt decodes it (iconv-lite), its lines, with stdlib lines after it. */
function cjk(stem: string, codec: string): string[] {
  const text = iconv.decode(readFileSync(join(CJK, `${stem}.txt`)), codec);
  // Stdlib lines with characters the encoding lacks are left out: the file must hold the lines as given.
  const held = python("shlex.py", 60, 20).filter((l) => iconv.decode(iconv.encode(l, codec), codec) === l);
  return [...text.replace(/\n$/, "").split("\n"), ...held];
}

const WESTERN = python("shlex.py", 120).map((l) => l.replace(/[^\x00-\xff€‘’“”–—…œŒ]/g, "?"));
const LATIN1 = WESTERN.map((l) => l.replace(/[^\x00-\xff]/g, "?"));
// Latin-1 text with letters in it (the file's own Latin-1 lines are few).
const LATIN1_TEXT = [...LATIN1.slice(0, 30), "# Café, naïveté, façade: àéèçôÀÉñß.", ...LATIN1.slice(30)];

const BOM_LE = new Uint8Array([0xff, 0xfe]);
const BOM_BE = new Uint8Array([0xfe, 0xff]);

function variants(): Variant[] {
  const v: Variant[] = [
    { name: "windows-1252", codec: "windows-1252", lines: WESTERN, chars: repertoire([], "windows-1252", "àéèçôœ€“”—ÀÉß"), foreign: "☃" },
    { name: "latin-1 (detected as Windows-1252)", codec: "latin1", lines: LATIN1_TEXT, chars: repertoire([], "latin1", "àéèçôÀÉñß×÷"), foreign: "☃" },
    { name: "latin-1 (declared in .editorconfig)", codec: "latin1", lines: LATIN1_TEXT, chars: repertoire([], "latin1", "àéèçôÀÉñß×÷"), editorconfig: "[*.txt]\ncharset = latin1\n", foreign: "€" },
    { name: "gbk", codec: "gbk", lines: cjk("gbk", "gbk"), chars: [], foreign: "\u{1F600}" },
    { name: "gb2312 (as gbk)", codec: "gbk", lines: cjk("gb2312", "gbk"), chars: [], foreign: "\u{1F600}" },
    { name: "shift_jis", codec: "shift_jis", lines: cjk("shift_jis", "shift_jis"), chars: [], foreign: "\u{1F600}" },
    { name: "euc-jp", codec: "euc-jp", lines: cjk("euc_jp", "euc-jp"), chars: [], foreign: "\u{1F600}" },
    { name: "euc-kr", codec: "euc-kr", lines: cjk("euc_kr", "euc-kr"), chars: [], foreign: "\u{1F600}" },
    { name: "big5", codec: "big5", lines: cjk("big5", "big5"), chars: [], foreign: "\u{1F600}" },
  ];
  for (const x of v) if (x.chars.length === 0) x.chars = repertoire(x.lines, x.codec);
  const wide = [...iconv.decode(readFileSync(join(CJK, "gb2312.txt")), "gbk").replace(/\n$/, "").split("\n"), ...WESTERN.slice(0, 60)];
  const wideChars = repertoire(wide, "utf-16le", "àéœ€\u{1F600}ß");
  v.push(
    { name: "utf-16le with BOM", codec: "utf-16le", bom: BOM_LE, lines: wide, chars: wideChars },
    { name: "utf-16le", codec: "utf-16le", lines: wide, chars: wideChars },
    { name: "utf-16be with BOM", codec: "utf-16be", bom: BOM_BE, lines: wide, chars: wideChars },
    { name: "utf-16be", codec: "utf-16be", lines: wide, chars: wideChars },
  );
  return v;
}

type Eol = "\r\n" | "\n";
interface Line {
  text: string;
  eol: Eol;
}

/** LF, CRLF, each line at random, or blocks of each. */
function endings(n: number, r: () => number): { kind: string; eols: Eol[] } {
  const kind = ["lf", "crlf", "mixed-lines", "mixed-blocks"][Math.floor(r() * 4)]!;
  const eols: Eol[] = [];
  let block: Eol = r() < 0.5 ? "\n" : "\r\n";
  for (let i = 0; i < n; i++) {
    if (kind === "lf") eols.push("\n");
    else if (kind === "crlf") eols.push("\r\n");
    else if (kind === "mixed-lines") eols.push(r() < 0.5 ? "\n" : "\r\n");
    else {
      if (r() < 0.15) block = block === "\n" ? "\r\n" : "\n";
      eols.push(block);
    }
  }
  return { kind, eols };
}

function encodeLines(lines: readonly Line[], v: Variant): Uint8Array {
  const body = iconv.encode(lines.map((l) => l.text + l.eol).join(""), v.codec);
  return v.bom ? Buffer.concat([v.bom, body]) : body;
}

function occurrences(hay: string, needle: string): number {
  let n = 0;
  for (let i = hay.indexOf(needle); i !== -1; i = hay.indexOf(needle, i + 1)) n++;
  return n;
}

type Op = { kind: "keep"; line: number } | { kind: "delete"; line: number } | { kind: "modify"; line: number; text: string } | { kind: "insert"; text: string };

interface Change {
  from: number;
  to: number;
  ops: Op[];
  after: Line[];
}

/** A random change of lines from..to: kept, modified (a few characters put in), deleted, lines added after kept or modified ones. */
function change(lines: readonly Line[], chars: readonly string[], r: () => number, foreign?: string): Change | null {
  const pick = () => chars[Math.floor(r() * chars.length)]!;
  const word = (n: number) => Array.from({ length: n }, () => (r() < 0.5 ? pick() : "xyzqwk"[Math.floor(r() * 6)]!)).join("");
  for (let attempt = 0; attempt < 50; attempt++) {
    const from = Math.floor(r() * lines.length);
    const to = Math.min(lines.length - 1, from + Math.floor(r() * 4));
    const texts = lines.slice(from, to + 1).map((l) => l.text);
    // Distinct lines, a block found once: the change is what the diff of it says.
    if (new Set(texts).size !== texts.length) continue;
    const block = `\n${texts.join("\n")}\n`;
    if (occurrences(`\n${lines.map((l) => l.text).join("\n")}\n`, block) !== 1) continue;
    const ops: Op[] = [];
    let changed = false;
    let placed = false;
    for (let i = from; i <= to; i++) {
      const t = lines[i]!.text;
      const roll = r();
      if (roll < 0.4 && [...t].length >= 10) {
        const cps = [...t];
        const at = Math.floor(r() * (cps.length + 1));
        const put = foreign && !placed ? foreign : word(1 + Math.floor(r() * 3));
        placed = true;
        ops.push({ kind: "modify", line: i, text: [...cps.slice(0, at), put, ...cps.slice(at)].join("") });
        changed = true;
      } else if (roll < 0.55 && lines.slice(Math.max(0, from - 1), to + 2).filter((l) => l.text === t).length === 1) {
        // Only a line found once among the hunk's old lines: deleting one of two equal lines
        // leaves which one went to the differ.
        ops.push({ kind: "delete", line: i });
        changed = true;
        continue;
      } else ops.push({ kind: "keep", line: i });
      // Added lines follow a kept or modified line, never a deleted one's place.
      if (r() < 0.3) {
        ops.push({ kind: "insert", text: `${word(4 + Math.floor(r() * 12))} ${word(3)}` });
        changed = true;
      }
    }
    if (!changed || (foreign && !ops.some((o) => o.kind === "modify"))) continue;
    // An inserted line right before a deleted line would stand in the deleted one's place.
    if (ops.some((o, k) => o.kind === "insert" && ops[k + 1]?.kind === "delete")) continue;
    const after: Line[] = lines.slice(0, from).map((l) => ({ ...l }));
    for (const o of ops) {
      if (o.kind === "keep") after.push({ ...lines[o.line]! });
      else if (o.kind === "modify") after.push({ text: o.text, eol: lines[o.line]!.eol });
      else if (o.kind === "insert") after.push({ text: o.text, eol: after[after.length - 1]?.eol ?? lines[0]!.eol });
    }
    after.push(...lines.slice(to + 1).map((l) => ({ ...l })));
    return { from, to, ops, after };
  }
  return null;
}

/** The edit tool's input, or apply_patch's, for a change. */
function input(tool: "edit" | "patch", name: string, lines: readonly Line[], c: Change): unknown {
  if (tool === "edit") {
    const oldString = lines.slice(c.from, c.to + 1).map((l) => `${l.text}\n`).join("");
    const newString = c.ops.flatMap((o) => (o.kind === "keep" ? [lines[o.line]!.text] : o.kind === "delete" ? [] : [o.text])).map((t) => `${t}\n`).join("");
    return { file_path: name, old_string: oldString, new_string: newString };
  }
  const hunk: string[] = [];
  if (c.from > 0) hunk.push(` ${lines[c.from - 1]!.text}`);
  for (const o of c.ops) {
    if (o.kind === "keep") hunk.push(` ${lines[o.line]!.text}`);
    else if (o.kind === "delete") hunk.push(`-${lines[o.line]!.text}`);
    else if (o.kind === "modify") hunk.push(`-${lines[o.line]!.text}`, `+${o.text}`);
    else hunk.push(`+${o.text}`);
  }
  if (c.to + 1 < lines.length) hunk.push(` ${lines[c.to + 1]!.text}`);
  return { patch: `*** Begin Patch\n*** Update File: ${name}\n@@\n${hunk.join("\n")}\n*** End Patch\n` };
}

function run(tool: "edit" | "patch", body: unknown, cwd: string, stateDir: string): { isError: boolean; content: string; error?: { code: string } } {
  const args = tool === "edit" ? ["edit", "--skip-read-check", "--json"] : ["patch", "--json"];
  const out = kt(args, { cwd, stateDir, stdin: JSON.stringify(body) });
  if (out.exitCode !== 0 && out.exitCode !== 1) throw new Error(`kt ${tool} exited ${out.exitCode}: ${out.stderr}`);
  return JSON.parse(out.stdout);
}

describe(`encodings property (seed ${SEED})`, () => {
  test("the corpus is there", () => {
    expect(existsSync(join(CJK, "gbk.txt")) && existsSync(join(STDLIB, "shlex.py"))).toBe(true);
  });

  test("random edits and patches of real text in every encoding and line-ending mix give exactly the intended bytes", () => {
    using tmp = tempDir();
    const stateDir = join(tmp.path, ".state");
    const r = rng(SEED);
    const tally = { cases: 0, edit: 0, patch: 0, twins: 0, mixed: 0 };
    for (const v of variants()) {
      const dir = join(tmp.path, v.name.replace(/[^a-z0-9]+/gi, "_"));
      mkdirSync(dir);
      if (v.editorconfig) writeFileSync(join(dir, ".editorconfig"), `root = true\n${v.editorconfig}`);
      for (let k = 0; k < CASES_PER_VARIANT; k++) {
        const { kind, eols } = endings(v.lines.length, r);
        const lines: Line[] = v.lines.map((text, i) => ({ text, eol: eols[i]! }));
        const c = change(lines, v.chars, r);
        if (!c) throw new Error(`seed ${SEED}: no change found for ${v.name}`);
        const tool = k % 2 === 0 ? "edit" : "patch";
        const name = `f${k}.txt`;
        const where = `seed ${SEED}, ${v.name}, case ${k} (${tool}, ${kind}, lines ${c.from + 1}–${c.to + 1})`;
        const before = encodeLines(lines, v);
        writeFileSync(join(dir, name), before);
        const res = run(tool, input(tool, name, lines, c), dir, stateDir);
        expect([where, res.isError ? res.content : ""]).toEqual([where, ""]);
        const got = readFileSync(join(dir, name));
        const want = encodeLines(c.after, v);
        if (hex(got) !== hex(want) && process.env.KT_PROPERTY_DEBUG) writeFileSync(process.env.KT_PROPERTY_DEBUG, JSON.stringify({ before: hex(before), input: input(tool, name, lines, c), codec: v.codec }));
        if (hex(got) !== hex(want) && process.env.KT_PROPERTY_DEBUG) console.log(JSON.stringify({ lines: lines.slice(Math.max(0, c.from - 1), c.to + 2), ops: c.ops, got: iconv.decode(got, v.codec).split("\n").slice(Math.max(0, c.from - 1), c.to + 4) }, null, 1));
        expect([where, hex(got)]).toEqual([where, hex(want)]);
        // Every byte before the first changed line and after the last stays.
        const head = encodeLines(lines.slice(0, c.from), v).length;
        const tail = encodeLines(lines.slice(c.to + 1), { ...v, bom: undefined }).length;
        expect([where, hex(got.subarray(0, head)), hex(got.subarray(got.length - tail))]).toEqual([where, hex(before.subarray(0, head)), hex(before.subarray(before.length - tail))]);
        if (k % 3 === 0) {
          // The same change made to the UTF-8 twin, converted, is the same file.
          const twin = `t${k}.txt`;
          writeFileSync(join(dir, twin), Buffer.from(lines.map((l) => l.text + l.eol).join(""), "utf8"));
          const tr = run(tool, input(tool, twin, lines, c), dir, stateDir);
          expect([where, tr.isError]).toEqual([where, false]);
          const converted = iconv.encode(readFileSync(join(dir, twin), "utf8"), v.codec);
          expect([where, hex(v.bom ? Buffer.concat([v.bom, converted]) : converted)]).toEqual([where, hex(got)]);
          tally.twins++;
        }
        tally.cases++;
        tally[tool]++;
        if (kind.startsWith("mixed")) tally.mixed++;
      }
    }
    expect(tally.cases).toBe(13 * CASES_PER_VARIANT);
    expect(tally.mixed).toBeGreaterThan(tally.cases / 4);
    console.log(`encodings property: ${JSON.stringify(tally)}`);
  });

  test("characters the encoding cannot hold are refused by name, nothing written", () => {
    using tmp = tempDir();
    const stateDir = join(tmp.path, ".state");
    const r = rng(SEED + 1);
    let refused = 0;
    for (const v of variants()) {
      if (!v.foreign) continue;
      const dir = join(tmp.path, v.name.replace(/[^a-z0-9]+/gi, "_"));
      mkdirSync(dir);
      if (v.editorconfig) writeFileSync(join(dir, ".editorconfig"), `root = true\n${v.editorconfig}`);
      for (const tool of ["edit", "patch"] as const) {
        const { eols } = endings(v.lines.length, r);
        const lines: Line[] = v.lines.map((text, i) => ({ text, eol: eols[i]! }));
        const c = change(lines, v.chars, r, v.foreign);
        if (!c) throw new Error(`seed ${SEED}: no change found for ${v.name}`);
        const before = encodeLines(lines, v);
        writeFileSync(join(dir, `${tool}.txt`), before);
        const res = run(tool, input(tool, `${tool}.txt`, lines, c), dir, stateDir);
        const where = `seed ${SEED}, ${v.name}, ${tool}`;
        const cp = v.foreign.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0");
        expect([where, res.error?.code, res.content.includes(`"${v.foreign}" (U+${cp}) on line `)]).toEqual([where, "UNENCODABLE", true]);
        expect([where, hex(readFileSync(join(dir, `${tool}.txt`)))]).toEqual([where, hex(before)]);
        refused++;
      }
    }
    expect(refused).toBe(18);
  });

  test("bytes that do not survive their encoding's round trip are refused by edit and apply_patch, nothing written", () => {
    using tmp = tempDir();
    const stateDir = join(tmp.path, ".state");
    const dir = join(tmp.path, "w");
    mkdirSync(dir);
    writeFileSync(join(dir, ".editorconfig"), "root = true\n[sjis/*]\ncharset = shift_jis\n[kr/*]\ncharset = euc-kr\n");
    mkdirSync(join(dir, "sjis"));
    mkdirSync(join(dir, "kr"));
    const text = python("shlex.py", 30).join("\n");
    const files: Record<string, Uint8Array> = {
      "odd-le.txt": Buffer.concat([BOM_LE, iconv.encode(`${text}\n`, "utf-16le"), Buffer.from([0x41])]),
      "odd-be.txt": Buffer.concat([BOM_BE, iconv.encode(`${text}\n`, "utf-16be"), Buffer.from([0x41])]),
      // A lone lead byte where Shift_JIS needs two.
      "sjis/broken.txt": Buffer.concat([iconv.encode(`${text}\n`, "shift_jis"), Buffer.from([0x81, 0x0a])]),
      // EUC-JP declared EUC-KR.
      "kr/jp.txt": Buffer.concat([iconv.encode(`${text}\n`, "euc-kr"), readFileSync(join(CJK, "euc_jp.txt"))]),
    };
    const first = text.split("\n").find((l) => l.length > 10 && occurrences(text, l) === 1)!;
    for (const [name, bytes] of Object.entries(files)) {
      writeFileSync(join(dir, name), bytes);
      const e = run("edit", { file_path: name, old_string: first, new_string: `${first} # changed` }, dir, stateDir);
      const p = run("patch", { patch: `*** Begin Patch\n*** Update File: ${name}\n@@\n-${first}\n+${first} # changed\n*** End Patch\n` }, dir, stateDir);
      expect([name, e.error?.code, p.error?.code]).toEqual([name, "BINARY_FILE", "BINARY_FILE"]);
      expect([name, e.content.includes("do not decode and re-encode to themselves"), p.content.includes("do not decode and re-encode to themselves")]).toEqual([name, true, true]);
      expect([name, hex(readFileSync(join(dir, name)))]).toEqual([name, hex(bytes)]);
    }
  });

  test("an ASCII-only file takes ASCII changes byte for byte, whatever its .editorconfig declares", () => {
    using tmp = tempDir();
    const stateDir = join(tmp.path, ".state");
    const r = rng(SEED + 2);
    const ascii = python("shlex.py", 200).filter((l) => /^[\x00-\x7f]*$/.test(l));
    const chars = ["x"];
    for (const declared of [undefined, "latin1", "shift_jis", "gbk", "big5", "euc-kr", "utf-16le"]) {
      const dir = join(tmp.path, declared ?? "none");
      mkdirSync(dir);
      if (declared) writeFileSync(join(dir, ".editorconfig"), `root = true\n[*]\ncharset = ${declared}\n`);
      for (const tool of ["edit", "patch"] as const) {
        const { kind, eols } = endings(ascii.length, r);
        const lines: Line[] = ascii.map((text, i) => ({ text, eol: eols[i]! }));
        const c = change(lines, chars, r)!;
        const before = Buffer.from(lines.map((l) => l.text + l.eol).join(""), "latin1");
        writeFileSync(join(dir, `${tool}.txt`), before);
        const where = `seed ${SEED}, ascii declared ${declared}, ${tool}, ${kind}`;
        const res = run(tool, input(tool, `${tool}.txt`, lines, c), dir, stateDir);
        expect([where, res.isError]).toEqual([where, false]);
        expect([where, readFileSync(join(dir, `${tool}.txt`)).toString("latin1")]).toEqual([where, c.after.map((l) => l.text + l.eol).join("")]);
      }
    }
  });
});
