// The slips models make when they quote a file, applied to real source files of several
// languages nobody here wrote: a unique block of the file, one line inserted, changed or
// deleted in it, and both old_string and new_string quoted with one kind of slip. The intended
// file is what a careful engineer would have written; the cascade must produce exactly it or
// refuse.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { replace } from "../../src/replacer/index.ts";
import type { CascadeResult } from "../../src/replacer/index.ts";

export type Lang = "python" | "js" | "ts" | "go" | "yaml" | "markdown";

export interface Source {
  path: string;
  lang: Lang;
  content: string;
  lines: string[];
}

const MODULES = join(import.meta.dir, "..", "..", "node_modules");

/** The system's Python standard library, when there is one (CI installs python3). */
function pythonLib(): string | undefined {
  if (!existsSync("/usr/lib")) return undefined;
  const dirs = readdirSync("/usr/lib").filter((d) => /^python3\.\d+$/.test(d)).sort();
  const dir = dirs.find((d) => existsSync(join("/usr/lib", d, "textwrap.py")));
  return dir ? join("/usr/lib", dir) : undefined;
}

const PY = pythonLib();

const CANDIDATES: [Lang, string][] = [
  ["js", join(MODULES, "diff/libesm/patch/create.js")],
  ["js", join(MODULES, "picomatch/lib/parse.js")],
  ["js", join(MODULES, "citty/dist/index.mjs")],
  ["js", join(MODULES, "consola/dist/core.mjs")],
  ["ts", join(MODULES, "eventsource-parser/src/parse.ts")],
  ["ts", join(MODULES, "ajv-formats/src/formats.ts")],
  ["ts", join(MODULES, "bun-types/globals.d.ts")],
  ["yaml", join(MODULES, "fast-uri/.github/workflows/ci.yml")],
  ["yaml", join(MODULES, "fast-uri/.github/workflows/release.yml")],
  ["yaml", join(MODULES, "json-schema-traverse/.github/workflows/publish.yml")],
  ["yaml", "/usr/share/perl/5.36.0/CPAN/Kwalify/distroprefs.yml"],
  ["markdown", join(MODULES, "picomatch/README.md")],
  ["markdown", join(MODULES, "ignore/README.md")],
  ["markdown", join(MODULES, "debug/README.md")],
  ["go", "/usr/share/doc/git/contrib/persistent-https/client.go"],
  ["go", "/usr/share/doc/git/contrib/persistent-https/proxy.go"],
  ...(PY ? (["textwrap.py", "shlex.py", "json/encoder.py", "dataclasses.py", "argparse.py"].map((f) => ["python", join(PY, f)]) as [Lang, string][]) : []),
];

export const SOURCES: Source[] = CANDIDATES.filter(([, path]) => existsSync(path)).map(([lang, path]) => {
  const content = readFileSync(path, "utf8").replace(/\r\n/g, "\n");
  return { path, lang, content, lines: content.split("\n") };
});

export const SLIPS = [
  "indent-stripped",
  "indent-shifted",
  "indent-deeper",
  "indent-tabs",
  "trailing-spaces",
  "typo-middle-line",
  "collapsed-whitespace",
  "typographic-quotes",
  "escaped",
  "escaped-template",
  // old_string quoted without its indentation, new_string written with the file's.
  "indent-stripped-old-only",
] as const;
export type Slip = (typeof SLIPS)[number];

export const OPS = ["insert", "change", "delete"] as const;
export type Op = (typeof OPS)[number];

/** A small seeded generator, so that a failing case can be replayed from its seed. */
export function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const isBlank = (line: string) => line.trim() === "";
const leadOf = (line: string) => line.match(/^\s*/)![0];

function count(hay: string, needle: string): number {
  let n = 0;
  for (let i = hay.indexOf(needle); i !== -1 && n < 2; i = hay.indexOf(needle, i + 1)) n++;
  return n;
}

/** A line the model adds, in the language of the file. */
const NEW_LINE: Record<Lang, string> = {
  python: "kt_probe(42)",
  js: "ktProbe(42);",
  ts: "ktProbe(42);",
  go: "ktProbe(42)",
  yaml: "kt_probe: 42",
  markdown: "kt probe line",
};

/** A change to a line's body that keeps the line valid in its language where the line was. */
function changeBody(lang: Lang, body: string, pick: number): string {
  const comment = lang === "python" || lang === "yaml" ? " # kt" : lang === "markdown" ? " kt" : " // kt";
  // A comment appended to a line that continues with a backslash would break the continuation.
  if (pick % 2 === 0 && !body.endsWith("\\")) return body + comment;
  return body.replace(/[A-Za-z_]\w*/, (w) => `kt_${w}`);
}

interface Case {
  source: Source;
  slip: Slip;
  op: Op;
  start: number;
  oldString: string;
  newString: string;
  intended: string;
}

/** What one slip does to one line: the same for a line of old_string and its copy in new_string. */
interface Slipper {
  /** Line `key` (its index in the block, or another number for a new line) as the model quotes it. */
  line(text: string, key: number): string;
  /** The slip is in old_string only: new_string's lines are written as the file has them. */
  oldOnly?: boolean;
}

/** The slip for this block, or undefined when it would change nothing here. */
function slipper(slip: Slip, block: string[], seed: number, typoAt: number, unit: number): Slipper | undefined {
  const solid = block.filter((l) => !isBlank(l));
  const coin = (key: number) => rng(seed + key * 7919)() < 0.5;
  switch (slip) {
    case "indent-stripped":
      if (!solid.some((l) => leadOf(l) !== "")) return undefined;
      return { line: (l) => l.trimStart() };
    case "indent-shifted": {
      // The block quoted as if it stood at the left margin: its common indentation removed.
      const leads = solid.map(leadOf);
      let common = leads[0]!;
      for (const lead of leads) while (!lead.startsWith(common)) common = common.slice(0, -1);
      if (common === "") return undefined;
      return { line: (l) => (l.startsWith(common) ? l.slice(common.length) : l.trimStart()) };
    }
    case "indent-deeper": {
      const extra = " ".repeat(unit * (1 + (seed % 2)));
      return { line: (l) => (isBlank(l) ? l : extra + l) };
    }
    case "indent-tabs": {
      // Tabs where the file has spaces (one per unit), or spaces where it has tabs.
      if (!solid.some((l) => leadOf(l) !== "")) return undefined;
      const tabbed = solid.some((l) => leadOf(l).includes("\t"));
      return {
        line: (l) => {
          const lead = leadOf(l);
          if (isBlank(l)) return l;
          const swapped = tabbed ? lead.replace(/\t/g, " ".repeat(unit)) : lead.replace(new RegExp(` {${unit}}`, "g"), "\t");
          return swapped + l.slice(lead.length);
        },
      };
    }
    case "trailing-spaces":
      return { line: (l, key) => (key % 2 === 0 || isBlank(l) ? l + (coin(key) ? "  " : " ") : l) };
    case "typo-middle-line": {
      // Two neighbouring letters of the line's first word swapped, as when a word is misremembered.
      const swap = (line: string) => {
        const m = line.match(/[A-Za-z]{4,}/);
        if (!m) return line;
        const at = m.index! + 1;
        return line.slice(0, at) + line[at + 1] + line[at] + line.slice(at + 2);
      };
      const line = block[typoAt];
      if (!line || swap(line) === line) return undefined;
      return { line: (l, key) => (key === typoAt ? swap(l) : l) };
    }
    case "collapsed-whitespace":
      if (!block.some((l) => /\S[ \t]{2,}\S/.test(l))) return undefined;
      return { line: (l) => leadOf(l) + l.slice(leadOf(l).length).replace(/(\S)[ \t]{2,}(?=\S)/g, "$1 ") };
    case "typographic-quotes":
      if (!block.some((l) => /["']/.test(l))) return undefined;
      return {
        line: (l) => {
          let open = true;
          return l.replace(/"/g, () => ((open = !open) ? "\u201d" : "\u201c")).replace(/'/g, "\u2019");
        },
      };
    case "indent-stripped-old-only":
      if (!solid.some((l) => leadOf(l) !== "")) return undefined;
      return { line: (l) => l.trimStart(), oldOnly: true };
    case "escaped":
    case "escaped-template":
      return { line: (l) => l };
  }
}

/** Over-escaping applies to the whole quote, line breaks included. */
function slipText(slip: Slip, text: string): string | undefined {
  if (slip === "escaped") {
    const out = text.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n").replace(/\t/g, "\\t");
    return out;
  }
  if (slip === "escaped-template") {
    if (!/[`$]/.test(text) || text.includes("\\")) return undefined;
    return text.replace(/`/g, "\\`").replace(/\$/g, "\\$");
  }
  return text;
}

/** The file's indentation step in columns (for "deeper"). */
function unitOf(lines: string[]): number {
  const counts = new Map<number, number>();
  let prev = 0;
  for (const l of lines) {
    if (isBlank(l) || leadOf(l).includes("\t")) continue;
    const w = leadOf(l).length;
    if (w > prev && w - prev <= 8) counts.set(w - prev, (counts.get(w - prev) ?? 0) + 1);
    prev = w;
  }
  let best = 2;
  let seen = 0;
  for (const [k, n] of counts) if (n > seen) [best, seen] = [k, n];
  return best;
}

/** A line ending like this opens a block (SPEC §4.3's list). */
const OPENER = /(?:[:{([]|=>|\bdo|\bthen)$/;

/**
 * The depth a careful engineer gives a line inserted before line `at` of the file (block line
 * `gap`): a neighbour's — the following line's unless asked for the previous one, the previous
 * one's after the block — but inside a block that the line above opens. Where the quote gives
 * no depth at all (`blind`), the blank lines decide: a line put straight after a block's last
 * line and before the blank line that closes the block continues that block.
 */
function depthFor(lines: string[], start: number, block: string[], gap: number, preferPrev: boolean, unit: number, blind = false): string | undefined {
  let prev: string | undefined;
  for (let i = gap - 1; i >= 0 && prev === undefined; i--) if (!isBlank(block[i]!)) prev = block[i]!;
  let next: string | undefined;
  for (let i = gap; i < block.length && next === undefined; i++) if (!isBlank(block[i]!)) next = block[i]!;
  const closesBlock = blind && gap > 0 && !isBlank(block[gap - 1]!) && gap < block.length && isBlank(block[gap]!);
  if (closesBlock) preferPrev = true;
  const chosen = preferPrev && prev !== undefined ? leadOf(prev) : next !== undefined ? leadOf(next) : prev !== undefined ? leadOf(prev) : undefined;
  if (chosen === undefined || prev === undefined || !OPENER.test(prev.trimEnd()) || width(chosen) > width(leadOf(prev))) return chosen;
  let body: string | undefined;
  for (let i = start + gap; i < lines.length && body === undefined; i++) if (!isBlank(lines[i]!)) body = lines[i]!;
  if (body === undefined) return leadOf(prev) + (leadOf(prev).includes("\t") ? "\t" : " ".repeat(unit));
  return width(leadOf(body)) > width(leadOf(prev)) ? leadOf(body) : chosen;
}

const width = (lead: string) => lead.replace(/\t/g, "    ").length;

/** One case, or undefined when the random draw does not make one (the caller draws again). */
export function makeCase(source: Source, slipOrSlips: Slip | readonly Slip[], op: Op, r: () => number): Case | undefined {
  const { lines, content, lang } = source;
  const slips: readonly Slip[] = typeof slipOrSlips === "string" ? [slipOrSlips] : slipOrSlips;
  const slip = slips[0]!;
  if (slips.filter((s) => s.startsWith("escaped")).length > 1) return undefined;
  const min = slips.includes("typo-middle-line") ? 5 : 2;
  const len = min + Math.floor(r() * (11 - min));
  if (lines.length <= len + 1) return undefined;
  const start = Math.floor(r() * (lines.length - len));
  const block = lines.slice(start, start + len);
  if (block.filter((l) => !isBlank(l)).length < 2 || isBlank(block[0]!) || isBlank(block[len - 1]!)) return undefined;
  if (count(content, block.join("\n")) !== 1) return undefined;
  const solid = block.map((l, i) => (isBlank(l) ? -1 : i)).filter((i) => i >= 0);

  // The line the typo slip misremembers: a middle line the edit does not touch.
  const typoAt = slips.includes("typo-middle-line") ? 1 + Math.floor(r() * (len - 2)) : -1;
  /** The block as intended, each line with the block line it comes from (-1: new). */
  let changed: [string, number][];
  if (op === "insert") {
    const gap = Math.floor(r() * (len + 1));
    if (gap === typoAt || gap === typoAt + 1) return undefined;
    // Where the model's indentation says where the line goes, it may go at the depth of either
    // neighbour; with all indentation stripped the blank lines say it (depthFor).
    const blind = slips.includes("indent-stripped");
    const depth = depthFor(lines, start, block, gap, !blind && r() < 0.3, unitOf(lines), blind);
    if (depth === undefined) return undefined;
    const kept = block.map((l, i): [string, number] => [l, i]);
    changed = [...kept.slice(0, gap), [depth + NEW_LINE[lang], -1], ...kept.slice(gap)];
  } else {
    const pool = solid.filter((i) => i !== typoAt && (typoAt < 0 || (i > 0 && i < len - 1)));
    if (pool.length === 0) return undefined;
    const at = pool[Math.floor(r() * pool.length)]!;
    if (op === "delete") {
      if (solid.length < 3) return undefined;
      changed = block.map((l, i): [string, number] => [l, i]).filter(([, i]) => i !== at);
    } else {
      const line = block[at]!;
      const lead = leadOf(line);
      const body = line.slice(lead.length).trimEnd();
      const next = changeBody(lang, body, Math.floor(r() * 2));
      if (next === body) return undefined;
      changed = block.map((l, i): [string, number] => [i === at ? lead + next + line.slice(lead.length + body.length) : l, i]);
    }
  }
  const intended = [...lines.slice(0, start), ...changed.map(([text]) => text), ...lines.slice(start + len)].join("\n");

  const seed = Math.floor(r() * 2 ** 31);
  const slippers: Slipper[] = [];
  for (const s of slips) {
    const one = slipper(s, block, seed, typoAt, unitOf(lines));
    if (!one) return undefined;
    slippers.push(one);
  }
  /** old_string and new_string with some of the slips applied, in order. */
  const quote = (which: readonly number[]): [string, string] | undefined => {
    const line = (l: string, key: number) => which.reduce((text, k) => slippers[k]!.line(text, key), l);
    const inNew = which.filter((k) => !slippers[k]!.oldOnly);
    const newLine = (l: string, key: number) => inNew.reduce((text, k) => slippers[k]!.line(text, key), l);
    const oldLines = block.map((l, i) => line(l, i));
    // A line the model kept is copied from its quote; a changed or new line is its own text, slipped alike
    // (both without the slips made only in old_string).
    const newLines = changed.map(([text, origin]) =>
      origin >= 0 && text === block[origin] && inNew.length === which.length ? oldLines[origin]! : newLine(text, origin >= 0 ? origin : 1000));
    let o: string | undefined = oldLines.join("\n");
    let n: string | undefined = newLines.join("\n");
    for (const k of which) {
      o = o === undefined ? o : slipText(slips[k]!, o);
      n = n === undefined ? n : slipText(slips[k]!, n);
    }
    return o === undefined || n === undefined ? undefined : [o, n];
  };
  const all = slips.map((_, k) => k);
  const full = quote(all);
  if (!full) return undefined;
  const [oldString, newString] = full;
  // A slip that leaves the quote verbatim is no slip; one that makes it verbatim text of another
  // place quotes that place — also with only some of several slips made.
  if (oldString === block.join("\n") || content.includes(oldString)) return undefined;
  for (let k = 0; k < slips.length && slips.length > 1; k++) {
    const part = quote(all.filter((x) => x !== k))?.[0];
    if (part !== undefined && part !== block.join("\n") && content.includes(part)) return undefined;
  }
  return { source, slip, op, start, oldString, newString, intended };
}

export function apply(c: Case): CascadeResult {
  return replace({ content: c.source.content, oldString: c.oldString, newString: c.newString, replaceAll: false, strict: false });
}

/**
 * Which of these Python sources parse, in one python3 process. Undefined when no python3 runs
 * here (CI installs it).
 */
export function pythonParses(sources: readonly string[]): boolean[] | undefined {
  if (sources.length === 0) return [];
  const script = "import ast, json, sys\nout = []\nfor s in json.load(sys.stdin):\n    try:\n        ast.parse(s)\n        out.append(True)\n    except SyntaxError:\n        out.append(False)\nprint(json.dumps(out))\n";
  let proc;
  try {
    proc = Bun.spawnSync(["python3", "-c", script], { stdin: Buffer.from(JSON.stringify(sources)), stdout: "pipe", stderr: "pipe" });
  } catch {
    return undefined;
  }
  if (proc.exitCode !== 0) throw new Error(`python3 failed (exit ${proc.exitCode}, signal ${proc.signalCode}): ${proc.stderr.toString()}`);
  return JSON.parse(proc.stdout.toString()) as boolean[];
}
