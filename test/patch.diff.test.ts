// The diff of a patched file's spans (src/patch/diff.ts) answers as diffArrays does: its
// shortcut, taken when the shortest edit is certain, must give the very parts Myers gives,
// on random spans over small alphabets (many repeated lines, where a wrong shortcut shows);
// and the context lines it reads around the edits must be those of the whole file split.
import { describe, expect, test } from "bun:test";
import { diffArrays, formatPatch, structuredPatch } from "diff";
import { editsDiff, spanParts } from "../src/patch/diff.ts";
import { formatDiff, hunksText, lineChangesPatch, type LineChange } from "../src/core/diff.ts";
import { mulberry32 } from "../bench/_random.ts";

const shape = (parts: readonly { value: readonly string[]; added?: boolean; removed?: boolean }[]) =>
  parts.filter((p) => p.value.length > 0).map((p) => `${p.added ? "+" : p.removed ? "-" : "="}${p.value.join("|")}`);

describe("spanParts", () => {
  test("agrees with diffArrays on 50,000 random spans", () => {
    const r = mulberry32(7);
    for (let t = 0; t < 50_000; t++) {
      const k = 2 + Math.floor(r() * 6);
      const a = Array.from({ length: Math.floor(r() * 10) }, () => `l${Math.floor(r() * k)}`);
      const b = Array.from({ length: Math.floor(r() * 10) }, () => `l${Math.floor(r() * k)}`);
      const want = shape(diffArrays(a, b));
      const got = shape(spanParts(a, b));
      if (got.join("\n") !== want.join("\n")) expect({ a, b, got }).toEqual({ a, b, got: want });
    }
  });

  test("a hunk's usual span: context, removed, added, context", () => {
    const a = ["c1", "c2", "c3", "old1", "old2", "c4", "c5", "c6"];
    const b = ["c1", "c2", "c3", "new1", "new2", "new3", "c4", "c5", "c6"];
    expect(shape(spanParts(a, b))).toEqual(shape(diffArrays(a, b)));
    expect(shape(spanParts(a, b))).toEqual(["=c1|c2|c3", "-old1|old2", "+new1|new2|new3", "=c4|c5|c6"]);
  });

  test("an added line equal to a line of the common end: the shortcut is not taken, Myers decides", () => {
    // Trimming the common end first would say "+x +b =b"; Myers says "+x =b +b".
    expect(shape(spanParts(["b"], ["x", "b", "b"]))).toEqual(shape(diffArrays(["b"], ["x", "b", "b"])));
    expect(shape(spanParts(["b"], ["x", "b", "b"]))).toEqual(["+x", "=b", "+b"]);
    expect(shape(spanParts(["}", ""], ["}", "", "f() {", "}", ""]))).toEqual(shape(diffArrays(["}", ""], ["}", "", "f() {", "}", ""])));
  });
});

/** editsDiff as it was: every line of the old text split out for the context. */
function referenceEditsDiff(path: string, work: string, edits: readonly { start: number; end: number; text: string }[]) {
  const lines = (text: string) => (text === "" ? [] : (text.endsWith("\n") ? text.slice(0, -1) : text).split("\n"));
  const old = lines(work);
  const changes: LineChange[] = [];
  let line = 0;
  let at = 0;
  for (const e of edits) {
    for (let i = work.indexOf("\n", at); i !== -1 && i < e.start; i = work.indexOf("\n", i + 1)) line++;
    at = e.start;
    let o = line;
    for (const part of spanParts(lines(work.slice(e.start, e.end)), lines(e.text))) {
      if (part.added) {
        const last = changes[changes.length - 1];
        if (last && last.at + last.removed.length === o) last.added.push(...part.value);
        else changes.push({ at: o, removed: [], added: [...part.value] });
      } else if (part.removed) {
        changes.push({ at: o, removed: [...part.value], added: [] });
        o += part.value.length;
      } else o += part.value.length;
    }
  }
  const additions = changes.reduce((n, c) => n + c.added.length, 0);
  const deletions = changes.reduce((n, c) => n + c.removed.length, 0);
  return { patch: formatDiff(lineChangesPatch(path, old, changes), "update"), additions, deletions };
}

describe("editsDiff", () => {
  test("reads the context lines around the edits as the whole file split gives them: 20,000 random edits of whole lines", () => {
    const r = mulberry32(11);
    for (let t = 0; t < 20_000; t++) {
      const n = Math.floor(r() * 30);
      // Short and empty lines, repeated ones: a walk that miscounts by a line shows.
      const old = Array.from({ length: n }, () => (r() < 0.2 ? "" : `l${Math.floor(r() * 5)}`));
      const work = n === 0 ? "" : `${old.join("\n")}\n`;
      const starts = [0];
      for (const l of old) starts.push(starts[starts.length - 1]! + l.length + 1);
      const edits: { start: number; end: number; text: string }[] = [];
      for (let line = Math.floor(r() * 8); line <= n; ) {
        const end = Math.min(n, line + Math.floor(r() * 5));
        const text = Array.from({ length: Math.floor(r() * 4) }, () => (r() < 0.3 ? "" : r() < 0.5 ? `l${Math.floor(r() * 5)}` : `new${Math.floor(r() * 3)}`)).map((l) => `${l}\n`).join("");
        edits.push({ start: starts[line]!, end: starts[end]!, text });
        line = end + 1 + Math.floor(r() * 9);
      }
      const want = referenceEditsDiff("f", work, edits);
      const got = editsDiff("f", work, edits);
      if (got.patch !== want.patch || got.additions !== want.additions || got.deletions !== want.deletions) expect({ work, edits, got }).toEqual({ work, edits, got: want });
      const lines = edits.map((e) => work.slice(0, e.start).split("\n").length - 1);
      expect(editsDiff("f", work, edits, lines)).toEqual(got);
    }
  });
});

describe("hunksText", () => {
  test("writes the hunks as jsdiff's formatPatch does after its headers: 5,000 random diffs, empty sides and missing final newlines among them", () => {
    const r = mulberry32(13);
    const text = (n: number) => Array.from({ length: n }, () => `l${Math.floor(r() * 4)}`).join("\n") + (r() < 0.8 && n > 0 ? "\n" : "");
    for (let t = 0; t < 5_000; t++) {
      const patch = structuredPatch("f", "f", text(Math.floor(r() * 15)), text(Math.floor(r() * 15)), "", "", { context: Math.floor(r() * 4) });
      const jsdiff = formatPatch(patch);
      const at = jsdiff.indexOf("\n@@");
      expect(hunksText(patch.hunks)).toBe(at === -1 ? "" : jsdiff.slice(at + 1));
    }
  });
});
