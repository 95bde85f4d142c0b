// 4 · indentation-flexible: the same lines once the indentation common to all of them is removed
// from both sides and trailing whitespace dropped. Tolerates a block quoted at the wrong depth.
// Must never accept lines whose indentation relative to each other differs from the file's.
// In the cascade, line-trimmed (2) accepts every window this strategy accepts, so this one
// decides only when run on its own; it is kept so the order stays the contract's.
import type { Finding, Strategy } from "./types.ts";
import { isBlank, leadOf, splitModel } from "./_text.ts";
import { lineCandidate } from "./_span.ts";
import { lineWindows } from "./line-trimmed.ts";
import { mergeLoose } from "./_merge.ts";

/** Lines with their common leading indentation removed and trailing whitespace dropped. */
export function dedent(lines: readonly string[]): string[] {
  let common: string | undefined;
  for (const line of lines) {
    if (isBlank(line)) continue;
    const lead = leadOf(line);
    if (common === undefined) common = lead;
    else {
      let k = 0;
      while (k < common.length && k < lead.length && common[k] === lead[k]) k++;
      common = common.slice(0, k);
    }
  }
  return lines.map((line) => (isBlank(line) ? "" : line.slice(common!.length).trimEnd()));
}

export const indentationFlexible: Strategy = {
  name: "indentation-flexible",
  fuzzy: true,
  scored: false,
  find(hay, find): Finding {
    const { lines, trail } = splitModel(find);
    if (lines.every(isBlank)) return { matches: [], note: "old_string has only blank lines" };
    const ids = lines.map((line) => hay.idOf(line.trim()));
    const missing = ids.indexOf(-1);
    if (missing !== -1) return { matches: [], note: `line ${missing + 1} of old_string occurs nowhere in the file, even trimmed` };
    const want = dedent(lines);
    const matches = lineWindows(hay, ids, () => true)
      .filter((s) => {
        const got = dedent(Array.from({ length: lines.length }, (_, i) => hay.line(s + i)));
        return got.every((line, i) => line === want[i]);
      })
      .map((s) => lineCandidate(hay, s, s + lines.length - 1, trail));
    return { matches, note: matches.length === 0 ? "no run of lines equals old_string once the common indentation is removed" : undefined };
  },
  rewrite: (hay, match, old, neu) => ({ text: mergeLoose(hay.content.slice(match.start, match.end), old, neu) }),
};
