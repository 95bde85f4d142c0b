// The shortcut of apply_patch's hunk search (src/patch/apply.ts: a hunk found verbatim once
// is taken without the cascade, its lines counted from the hunk before) answers exactly what
// the plain search answers: exactOnce against locate on blocks cut from real files, and
// applyHunks against the applyHunks it replaced (kept here as the reference) on diff-made
// hunks of real files that were then disturbed — trailing blanks, indentation, typographic
// quotes, a removed line, a copied block, hunks out of order — so that the fuzzy tiers, the
// refusals and the anchors are reached too. KT_PROPERTY_SEED=n replays a run.
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { extname, join } from "node:path";
import { createTwoFilesPatch, structuredPatch } from "diff";
import { applyHunks, exactOnce, PATCH_TIERS, type Applied, type HunkPlacement } from "../src/patch/apply.ts";
import { parsePatch, type Hunk } from "../src/patch/parse.ts";
import { applyEdits, findLine, Haystack, locate, type Candidate, type Edit, type LocateRequest } from "../src/replacer/index.ts";
import { ROOT } from "./_helpers.ts";

const SEED = Number(process.env.KT_PROPERTY_SEED ?? 20261202);

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

const TEXT = new Set([".js", ".ts", ".py", ".md", ".json", ".mjs", ".cjs", ".css", ".html"]);

/** Real text files (LF, valid UTF-8), 200 B – 60 KB, from node_modules and Python's library. */
function corpus(): string[] {
  const roots = [join(ROOT, "node_modules"), "/root/.pyenv/versions/3.11.7/lib/python3.11"];
  if (existsSync("/usr/lib")) for (const d of readdirSync("/usr/lib")) if (/^python3/.test(d)) roots.push(join("/usr/lib", d));
  const out: string[] = [];
  const walk = (dir: string, depth: number, cap: number) => {
    if (out.length >= cap || depth > 6) return;
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch {
      return;
    }
    for (const name of names) {
      if (out.length >= cap) return;
      const p = join(dir, name);
      let st;
      try {
        st = statSync(p);
      } catch {
        continue;
      }
      if (st.isDirectory()) walk(p, depth + 1, cap);
      else if (st.isFile() && TEXT.has(extname(name)) && st.size >= 200 && st.size <= 60_000) out.push(p);
    }
  };
  roots.forEach((r, i) => walk(r, 0, 700 * (i + 1)));
  return out.map((p) => readFileSync(p, "utf8")).filter((t) => !t.includes("\r") && !t.includes("\uFFFD") && !t.includes("\0"));
}

const FILES = corpus();

// ---------------------------------------------------------------------------------------
// The reference: applyHunks as it was before the shortcut (every hunk through locate, every
// line number from the Haystack's line starts).

function referenceAccept(strategy: string, c: Candidate): boolean {
  return strategy !== "escape-normalized" || (c.variant === "typographic" && c.via === undefined);
}

function referenceSides(hunk: Hunk): { oldText: string; newText: string } {
  let oldText = "";
  let newText = "";
  for (const l of hunk.lines) {
    if (l.kind !== "+") oldText += `${l.text}\n`;
    if (l.kind !== "-") newText += `${l.text}\n`;
  }
  return { oldText, newText };
}

function referenceBreaks(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

function referenceAlreadyApplied(hay: Haystack, oldText: string, newText: string, from: number): { alreadyApplied?: number } {
  if (newText.trim() === "" || newText === oldText || oldText.includes(newText)) return {};
  const found = locate(hay, { tiers: ["exact"], oldText: newText, newText, fromLine: from, atEnd: false });
  return found.kind === "ok" ? { alreadyApplied: found.startLine } : {};
}

function referenceApplyHunks(lf: string, hunks: readonly Hunk[]): Applied {
  const accept = referenceAccept;
  const hadNewline = lf === "" || lf.endsWith("\n");
  const work = hadNewline ? lf : `${lf}\n`;
  const hay = new Haystack(work);
  const edits: Edit[] = [];
  const editLines: number[] = [];
  const placements: HunkPlacement[] = [];
  let cursor = 0;
  let delta = 0;
  let finalNewline = hadNewline;
  for (let index = 0; index < hunks.length; index++) {
    const hunk = hunks[index]!;
    const { oldText, newText } = referenceSides(hunk);
    let from = cursor;
    if (hunk.anchor !== undefined) {
      const at = findLine(hay, hunk.anchor, cursor);
      if (at.length === 0) {
        const above = cursor > 0 ? findLine(hay, hunk.anchor, 0) : [];
        return { ok: false, index, hunk, failure: { kind: "anchor-not-found", anchor: hunk.anchor, ...(above.length > 0 ? { earlier: above[0]! + 1 } : {}) } };
      }
      const first = hunk.lines[0]!;
      from = first.kind !== "+" && first.text.trim() === hunk.anchor.trim() ? at[0]! : at[0]! + 1;
    }
    let edit: Edit;
    let placed: Omit<HunkPlacement, "written" | "index" | "patchLine">;
    if (oldText === "") {
      let line = hunk.anchor !== undefined ? from : hay.lineCount - (work.endsWith("\n") ? 1 : 0);
      if (hunk.anchor === undefined && hunk.hint && !hunk.endOfFile) line = Math.min(Math.max(hunk.hint.oldStart, cursor), line);
      const offset = line < hay.lineCount ? hay.starts[line]! : work.length;
      edit = { start: offset, end: offset, text: newText };
      placed = { strategy: "insertion", startLine: line + 1, endLine: line, trace: [] };
    } else {
      const found = locate(hay, { tiers: PATCH_TIERS, oldText, newText, fromLine: from, atEnd: hunk.endOfFile, accept });
      if (found.kind === "ambiguous") return { ok: false, index, hunk, failure: { kind: "ambiguous", lines: found.lines, strategy: found.strategy, trace: found.trace } };
      if (found.kind === "not-found") {
        const above = from > 0 ? locate(hay, { tiers: PATCH_TIERS, oldText, newText, fromLine: 0, atEnd: hunk.endOfFile, accept }) : undefined;
        return {
          ok: false,
          index,
          hunk,
          failure: {
            kind: "not-found",
            ...(found.nearMiss ? { nearMiss: found.nearMiss } : {}),
            ...referenceAlreadyApplied(hay, oldText, newText, from),
            ...(above?.kind === "ok" ? { earlier: above.startLine } : {}),
            trace: found.trace,
          },
        };
      }
      edit = found.edit;
      placed = { strategy: found.strategy, ...(found.variant ? { variant: found.variant } : {}), startLine: found.startLine, endLine: found.endLine, trace: found.trace };
    }
    const newCount = referenceBreaks(edit.text);
    const oldCount = referenceBreaks(work.slice(edit.start, edit.end));
    const writtenStart = placed.startLine + delta;
    placements.push({ index, patchLine: hunk.patchLine, ...placed, written: { startLine: writtenStart, endLine: writtenStart + Math.max(0, newCount - 1) } });
    delta += newCount - oldCount;
    edits.push(edit);
    editLines.push(hay.lineOf(edit.start) - 1);
    cursor = hay.lineOf(edit.end) - 1;
    if (hunk.newNoNewline) finalNewline = false;
    else if (hunk.oldNoNewline) finalNewline = true;
  }
  let out = applyEdits(work, edits);
  if (!finalNewline && out.endsWith("\n")) out = out.slice(0, -1);
  return { ok: true, lf: out, edits, editLines, placements, finalNewline };
}

// ---------------------------------------------------------------------------------------
// Cases

/** Lines of a text (without the empty one after a final newline). */
function linesOf(text: string): string[] {
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

const join1 = (lines: readonly string[]) => (lines.length === 0 ? "" : `${lines.join("\n")}\n`);

/** A few edits at random places: lines removed, lines borrowed from elsewhere in the file inserted. */
function mutate(lines: readonly string[], rand: () => number): string[] {
  const out = [...lines];
  const edits = 1 + Math.floor(rand() * 4);
  for (let e = 0; e < edits; e++) {
    const at = Math.floor(rand() * (out.length + 1));
    const remove = Math.min(out.length - at, Math.floor(rand() * 4));
    const insert = Array.from({ length: Math.floor(rand() * 4) + (remove === 0 ? 1 : 0) }, () => lines[Math.floor(rand() * lines.length)] ?? "x");
    out.splice(at, remove, ...insert);
  }
  return out;
}

/** The file the hunks meet, disturbed in one of the ways a model's view of a file goes stale. */
function disturb(lines: readonly string[], blocks: readonly string[][], rand: () => number): { lines: string[]; how: string } {
  const out = [...lines];
  const at = Math.floor(rand() * out.length);
  const r = rand();
  if (out.length === 0 || r < 0.3) return { lines: out, how: "none" };
  if (r < 0.4) {
    for (let k = at; k < Math.min(out.length, at + 3); k++) out[k] = `${out[k]}  `;
    return { lines: out, how: "trailing blanks" };
  }
  if (r < 0.5) {
    for (let k = at; k < Math.min(out.length, at + 8); k++) out[k] = out[k] === "" ? "" : `\t${out[k]}`;
    return { lines: out, how: "indentation" };
  }
  if (r < 0.58) {
    for (let k = at; k < Math.min(out.length, at + 6); k++) out[k] = out[k]!.replace(/"/g, "\u201c").replace(/'/g, "\u2019").replace(/-/g, "\u2013");
    return { lines: out, how: "typography" };
  }
  if (r < 0.68) {
    out.splice(at, 1);
    return { lines: out, how: "line removed" };
  }
  if (r < 0.8 && blocks.length > 0) {
    const block = blocks[Math.floor(rand() * blocks.length)]!;
    if (rand() < 0.5) out.push(...block);
    else out.splice(0, 0, ...block);
    return { lines: out, how: "block copied" };
  }
  if (r < 0.88) {
    out[at] = `${out[at]} // edited`;
    return { lines: out, how: "line edited" };
  }
  return { lines: out.slice(0, Math.max(1, Math.floor(out.length / 2))), how: "cut short" };
}

/** The hunks of a diff from `before` to `after`, through the parser, as a unified diff or an envelope. */
function hunksOf(before: string, after: string, rand: () => number): Hunk[] | undefined {
  const context = Math.floor(rand() * 4);
  const form = rand();
  let patch: string;
  if (form < 0.5) patch = createTwoFilesPatch("a/f", "b/f", before, after, "", "", { context });
  else {
    const hunks = structuredPatch("f", "f", before, after, "", "", { context }).hunks;
    if (hunks.length === 0) return undefined;
    const old = linesOf(before);
    const body = hunks.map((h) => {
      // Now and then an "@@ <line>" anchor naming a line above the hunk, as models write it.
      const above = old[h.oldStart - 2 - Math.floor(rand() * 3)];
      const header = rand() < 0.3 && above !== undefined && above.trim() !== "" ? `@@ ${above}` : "@@";
      return `${header}\n${h.lines.filter((l) => !l.startsWith("\\")).join("\n")}`;
    });
    if (rand() < 0.1 && body.length > 1) body.reverse();
    patch = `*** Begin Patch\n*** Update File: f\n${body.join("\n")}\n*** End Patch\n`;
  }
  const parsed = parsePatch(patch);
  if (!parsed.ok) return undefined;
  const op = parsed.ops[0];
  return op?.kind === "update" ? op.hunks : undefined;
}

describe("apply_patch's verbatim shortcut answers as the cascade does", () => {
  test("the corpus has real files to work on", () => {
    expect(FILES.length).toBeGreaterThan(300);
  });

  test("exactOnce against locate: blocks cut from real files, from random lines, at the end or not", () => {
    const rand = rng(SEED);
    const tally = { fast: 0, slow: 0 };
    const accepts = [undefined, referenceAccept, (s: string, c: Candidate) => s !== "exact" || c.startLine % 3 !== 0];
    for (let round = 0; round < 3000; round++) {
      const text = FILES[Math.floor(rand() * FILES.length)]!;
      const hay = new Haystack(text);
      const lines = linesOf(text);
      const first = Math.floor(rand() * lines.length);
      const count = 1 + Math.floor(rand() * (rand() < 0.3 ? 2 : 8));
      let block = join1(lines.slice(first, first + count));
      const r = rand();
      // A block of a line that repeats (a blank, a brace), one cut from inside a line, one changed.
      if (r < 0.1) block = "\n";
      else if (r < 0.15) block = `${lines[first]!.trim().slice(0, 2)}\n`;
      else if (r < 0.25) block = block.slice(Math.floor(rand() * Math.min(6, block.length)));
      else if (r < 0.3) block = block.replace(/ /, "  ");
      if (block === "") continue;
      const fromLine = rand() < 0.5 ? 0 : Math.floor(rand() * hay.lineCount);
      const req: LocateRequest = { tiers: PATCH_TIERS, oldText: block, newText: "new\n", fromLine, atEnd: rand() < 0.15, accept: accepts[round % accepts.length] };
      const slow = locate(hay, req);
      const fast = exactOnce(hay.content, hay.starts[fromLine]!, fromLine, (o) => hay.lineOf(o), req);
      const where = `seed ${SEED}, round ${round}`;
      // A caller's accept that refuses some places may leave one of several: exactOnce then
      // leaves the answer to locate. Otherwise it answers exactly when exact takes the block.
      const strict = req.accept !== accepts[2];
      if (fast !== undefined || (strict && slow.kind === "ok" && slow.strategy === "exact")) {
        expect(fast, where).toEqual(slow);
        tally.fast++;
      } else {
        expect(slow.kind === "ok" && slow.strategy === "exact" && strict, where).toBe(false);
        tally.slow++;
      }
    }
    // Both sides of the shortcut are reached often.
    expect(tally.fast).toBeGreaterThan(600);
    expect(tally.slow).toBeGreaterThan(600);
  });

  test("applyHunks against the reference: diff-made hunks of real files, the files then disturbed — same results, same refusals", () => {
    const rand = rng(SEED + 1);
    const outcomes = new Map<string, number>();
    const tally = (k: string) => outcomes.set(k, (outcomes.get(k) ?? 0) + 1);
    for (let round = 0; round < 1500; round++) {
      const text = FILES[Math.floor(rand() * FILES.length)]!;
      const lines = linesOf(text);
      const after = mutate(lines, rand);
      const hunks = hunksOf(text, join1(after), rand);
      if (!hunks) continue;
      const blocks = hunks.map((h) => h.lines.filter((l) => l.kind !== "+").map((l) => l.text)).filter((b) => b.length > 0);
      const { lines: met, how } = disturb(lines, blocks, rand);
      // Now and then without its final newline.
      let lf = join1(met);
      if (rand() < 0.05) lf = lf.slice(0, -1);
      const got = applyHunks(lf, hunks);
      const want = referenceApplyHunks(lf, hunks);
      expect(got, `seed ${SEED + 1}, round ${round} (${how})`).toEqual(want);
      if (want.ok) for (const p of want.placements) tally(p.strategy);
      else tally(want.failure.kind);
    }
    if (process.env.KT_PROPERTY_REPORT) console.error(outcomes);
    // The cases reach every way out: taken verbatim, fuzzy, inserted, refused each way.
    for (const k of ["exact", "trailing-whitespace", "indentation-flexible", "insertion", "not-found", "ambiguous"]) expect(outcomes.get(k) ?? 0, k).toBeGreaterThan(5);
  });
});
