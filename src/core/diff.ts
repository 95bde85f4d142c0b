// Unified diffs for metadata.diff (write, edit), on LF-normalized text.
import { structuredPatch, formatPatch } from "diff";

export interface Diff {
  patch: string;
  additions: number;
  deletions: number;
}

export function unifiedDiff(path: string, before: string, after: string): Diff {
  const a = before.replace(/\r\n/g, "\n");
  const b = after.replace(/\r\n/g, "\n");
  const patch = structuredPatch(path, path, a, b, "", "", { context: 3 });
  let additions = 0;
  let deletions = 0;
  for (const hunk of patch.hunks) {
    for (const line of hunk.lines) {
      if (line.startsWith("+")) additions++;
      else if (line.startsWith("-")) deletions++;
    }
  }
  return { patch: formatPatch(patch), additions, deletions };
}
