// The unified diff of a patched file, from the replacements the patch made rather than from a
// whole-file diff: only each replaced span is diffed (a few lines), then the hunks are laid out
// with three lines of context as `diff -u` does. A whole-file diff of 20 files cost more than
// locating all their hunks.
import { diffArrays, formatPatch, type StructuredPatch } from "diff";
import type { Edit } from "../replacer/index.ts";
import type { Diff } from "../core/diff.ts";

const CONTEXT = 3;

interface Change {
  /** 0-based line of the old text where the change starts. */
  at: number;
  removed: string[];
  added: string[];
}

function lines(text: string): string[] {
  if (text === "") return [];
  return (text.endsWith("\n") ? text.slice(0, -1) : text).split("\n");
}

/**
 * `work` is the old LF text ending in "\n" (or empty); `edits` replace whole lines of it, sorted
 * and disjoint. Both sides must end in a newline: the caller diffs other files the usual way.
 */
export function editsDiff(path: string, work: string, edits: readonly Edit[]): Diff {
  const old = lines(work);
  const changes: Change[] = [];
  let line = 0;
  let at = 0;
  for (const e of edits) {
    for (let i = work.indexOf("\n", at); i !== -1 && i < e.start; i = work.indexOf("\n", i + 1)) line++;
    at = e.start;
    const span = lines(work.slice(e.start, e.end));
    let o = line;
    for (const part of diffArrays(span, lines(e.text))) {
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

  const hunks: StructuredPatch["hunks"] = [];
  let additions = 0;
  let deletions = 0;
  let delta = 0;
  for (let k = 0; k < changes.length; ) {
    const from = Math.max(0, changes[k]!.at - CONTEXT);
    const body: string[] = old.slice(from, changes[k]!.at).map((l) => ` ${l}`);
    let oldCount = body.length;
    let newCount = body.length;
    let end = changes[k]!.at;
    for (; k < changes.length; k++) {
      const c = changes[k]!;
      // Changes closer than twice the context share a hunk, as in diff -u.
      if (c.at - end > 2 * CONTEXT) break;
      for (const l of old.slice(end, c.at)) body.push(` ${l}`);
      oldCount += c.at - end;
      newCount += c.at - end;
      for (const l of c.removed) body.push(`-${l}`);
      for (const l of c.added) body.push(`+${l}`);
      oldCount += c.removed.length;
      newCount += c.added.length;
      deletions += c.removed.length;
      additions += c.added.length;
      end = c.at + c.removed.length;
    }
    const tail = old.slice(end, end + CONTEXT);
    for (const l of tail) body.push(` ${l}`);
    oldCount += tail.length;
    newCount += tail.length;
    hunks.push({
      oldStart: oldCount === 0 ? from : from + 1,
      oldLines: oldCount,
      newStart: newCount === 0 ? from + delta : from + delta + 1,
      newLines: newCount,
      lines: body,
    });
    delta += newCount - oldCount;
  }
  return { patch: formatPatch({ oldFileName: path, newFileName: path, oldHeader: "", newHeader: "", hunks }), additions, deletions };
}
