// The unified diff of a patched file, from the replacements the patch made rather than from a
// whole-file diff: only each replaced span is diffed (a few lines), then the hunks are laid out
// with three lines of context as `diff -u` does. A whole-file diff of 20 files cost more than
// locating all their hunks.
import { diffArrays } from "diff";
import type { Edit } from "../replacer/index.ts";
import { formatDiff, lineChangesPatch, type Diff, type LineChange } from "../core/diff.ts";

const CONTEXT = 3;

type Change = LineChange;

function lines(text: string): string[] {
  if (text === "") return [];
  return (text.endsWith("\n") ? text.slice(0, -1) : text).split("\n");
}

/**
 * `work` is the old LF text ending in "\n" (or empty); `edits` replace whole lines of it, sorted
 * and disjoint. Both sides must end in a newline: the caller diffs other files the usual way.
 * `editLines`, when the caller knows them, are the 0-based lines the edits start on (else
 * they are counted here).
 */
export function editsDiff(path: string, work: string, edits: readonly Edit[], editLines?: readonly number[], from?: string): Diff {
  const old = lines(work);
  const changes: Change[] = [];
  let line = 0;
  let at = 0;
  for (const [k, e] of edits.entries()) {
    if (editLines) line = editLines[k]!;
    else for (let i = work.indexOf("\n", at); i !== -1 && i < e.start; i = work.indexOf("\n", i + 1)) line++;
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

  let additions = 0;
  let deletions = 0;
  for (const c of changes) {
    additions += c.added.length;
    deletions += c.removed.length;
  }
  return { patch: formatDiff(lineChangesPatch(path, old, changes), "update", from), additions, deletions };
}

