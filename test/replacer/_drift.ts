// Drifted quotes of real source files, for the property tests: a unique block, one line of it
// changed, both quoted with the drift models produce, and the file the edit should give.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { replace } from "../../src/replacer/index.ts";
import type { CascadeResult } from "../../src/replacer/index.ts";

const MODULES = join(import.meta.dir, "..", "..", "node_modules");
export const FILES = [
  "zod/v4/classic/schemas.js",
  "diff/libesm/patch/create.js",
  "citty/dist/index.mjs",
  "picomatch/lib/parse.js",
  "consola/dist/core.mjs",
  "bun-types/globals.d.ts",
].map((path) => {
  const content = readFileSync(join(MODULES, path), "utf8").replace(/\r\n/g, "\n");
  return { path, content, lines: content.split("\n") };
});


export function count(hay: string, needle: string): number {
  let n = 0;
  for (let i = hay.indexOf(needle); i !== -1 && n < 2; i = hay.indexOf(needle, i + 1)) n++;
  return n;
}

export const isBlank = (line: string) => line.trim() === "";

export function split(line: string): [string, string, string] {
  const lead = line.match(/^\s*/)![0];
  const rest = line.slice(lead.length);
  const trail = rest.match(/\s*$/)![0];
  return [lead, rest.slice(0, rest.length - trail.length), trail];
}

export interface Drift {
  indent: number;
  tabs: boolean;
  trailing: boolean;
  collapse: boolean;
  curly: boolean;
  escape: boolean;
  seed: number;
}

/** The same drift for old_string and new_string: line i is perturbed the same way in both. */
export function perturb(lines: string[], d: Drift): string {
  const out = lines.map((line, i) => {
    if (isBlank(line)) return d.trailing && (d.seed + i) % 3 === 0 ? line + " " : line;
    let [lead, body, trail] = split(line);
    if (d.tabs) lead = lead.includes("\t") ? lead.replace(/\t/g, "    ") : lead.replace(/ {2}/g, "\t");
    if (d.indent > 0) lead = " ".repeat(d.indent) + lead;
    if (d.indent < 0) lead = lead.replace(new RegExp(`^ {0,${-d.indent}}`), "");
    // Spacing drift: collapse runs where there are some, else spread the spaces that are there.
    if (d.collapse) body = /\S[ \t]{2,}\S/.test(body) ? body.replace(/(\S)[ \t]{2,}(?=\S)/g, "$1 ") : body.replace(/(\S) (?=\S)/g, "$1  ");
    if (d.curly) {
      let open = true;
      body = body.replace(/"/g, () => ((open = !open) ? "\u201d" : "\u201c")).replace(/'/g, "\u2019");
    }
    if (d.trailing && (d.seed + i) % 3 === 0) trail += "  ";
    return lead + body + trail;
  });
  const text = out.join("\n");
  if (!d.escape) return text;
  return text.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n").replace(/\t/g, "\\t");
}

export const KINDS = ["indent", "tabs", "trailing", "collapse", "curly", "escape"] as const;

export const driftOf = (kinds: fc.Arbitrary<readonly (typeof KINDS)[number][]>) =>
  fc.record({ kinds, indent: fc.integer({ min: 1, max: 4 }), down: fc.boolean(), seed: fc.nat() }).map(
    ({ kinds, indent, down, seed }): Drift => ({
      indent: kinds.includes("indent") ? (down ? -indent : indent) : 0,
      tabs: kinds.includes("tabs"),
      trailing: kinds.includes("trailing"),
      collapse: kinds.includes("collapse"),
      curly: kinds.includes("curly"),
      escape: kinds.includes("escape"),
      seed,
    }),
  );

/** Up to three kinds of drift at once. */
export const drift = driftOf(fc.subarray([...KINDS], { minLength: 1, maxLength: 3 }));
/** Exactly one kind: every one of them is within the cascade's reach. */
export const single = driftOf(fc.constantFrom(...KINDS).map((k) => [k]));

export const CHANGES = {
  append: (body: string) => `${body}/*kt*/`,
  prefix: (body: string) => `kt_${body}`,
  replace: () => "ktProbe(42);",
};

export function call(content: string, oldString: string, newString: string): CascadeResult {
  return replace({ content, oldString, newString, replaceAll: false, strict: false });
}

export const junkLine = fc.array(fc.stringMatching(/^[qzxjvkw]{3,9}$/), { minLength: 1, maxLength: 5 }).map((w) => w.join(" "));

export interface Case {
  result: CascadeResult;
  intended: string;
  where: string;
  changedLine: string;
}

/** A unique block of a real file, one of its lines changed, both quoted with drift `d`. */
export function drifted(fileIndex: number, at: number, len: number, pick: number, change: keyof typeof CHANGES, d: Drift): Case {
  const { path, content, lines } = FILES[fileIndex]!;
  const start = at % (lines.length - len);
  const block = lines.slice(start, start + len);
  const solid = block.map((l, i) => (isBlank(l) ? -1 : i)).filter((i) => i >= 0);
  fc.pre(solid.length > 0 && count(content, block.join("\n")) === 1);
  const c = solid[pick % solid.length]!;
  const [lead, body, trail] = split(block[c]!);
  const changedLine = lead + CHANGES[change](body) + trail;
  const changed = block.map((l, i) => (i === c ? changedLine : l));
  const intended = [...lines.slice(0, start), ...changed, ...lines.slice(start + len)].join("\n");
  const quoted = perturb(block, d);
  // A drift that turns the quote into verbatim text of another place is a quote of that place —
  // also once over-escaping is undone or trailing spaces dropped (indentation drift can make
  // "  );\n}" of "    );\n  }"): the stricter reading rightly finds that other place first.
  const plain = perturb(block, { ...d, escape: false, trailing: false });
  fc.pre(quoted === block.join("\n") || (!content.includes(quoted) && (plain === block.join("\n") || !content.includes(plain))));
  return { result: call(content, quoted, perturb(changed, d)), intended, where: `${path}:${start + 1} drift ${JSON.stringify(d)}`, changedLine };
}

export function expectIntendedOrRefused({ result: r, intended, where, changedLine }: Case): void {
  if (r.kind === "ok" && r.newContent !== intended) {
    throw new Error(`wrong edit via ${r.strategy} at ${where}\n--- edits ${JSON.stringify(r.edits)}\n--- intended line ${JSON.stringify(changedLine)}`);
  }
}

export const blockArgs = [
  fc.nat({ max: FILES.length - 1 }),
  fc.nat(),
  fc.integer({ min: 1, max: 10 }),
  fc.nat(),
  fc.constantFrom(...(Object.keys(CHANGES) as (keyof typeof CHANGES)[])),
] as const;

