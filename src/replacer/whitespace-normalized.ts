// 4 · whitespace-normalized: equal once every whitespace run on both sides is one space; old_string
// needs a non-space token. Tolerates different spacing, indentation and line breaks between
// tokens. Must never match where old_string has no whitespace and the file has some (or the
// reverse), nor let boundary whitespace cross more line breaks than old_string's did.
import type { Candidate, Finding, Strategy } from "./types.ts";
import { isWs, looseKey, splitLines, splitModel } from "./_text.ts";
import { spanCandidate } from "./_span.ts";
import { looseRewrite } from "./_merge.ts";
import { atEdges } from "./_edges.ts";
import { MAX_LISTED } from "./exact.ts";

/**
 * From `at`, walks over the file's whitespace in direction `dir` as far as old_string's boundary
 * whitespace reaches: across `breaks` line breaks, and past the last one only when old_string's
 * boundary has spaces beyond its last break too (`stopAtBreak` false). -1 when the file's
 * whitespace holds fewer line breaks than old_string's.
 */
function extend(text: string, at: number, dir: 1 | -1, breaks: number, stopAtBreak: boolean): number {
  let seen = 0;
  let i = at;
  for (;;) {
    const k = dir === 1 ? i : i - 1;
    if (k < 0 || k >= text.length || !isWs(text.charCodeAt(k))) break;
    if (text.charCodeAt(k) === 10) {
      if (seen === breaks) break;
      seen++;
      i += dir;
      if (seen === breaks && stopAtBreak) break;
      continue;
    }
    i += dir;
  }
  return seen < breaks ? -1 : i;
}

function newlines(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

export const whitespaceNormalized: Strategy = {
  name: "whitespace-normalized",
  fuzzy: true,
  scored: false,
  find(hay, find): Finding {
    const tokens = find.split(/\s+/).filter((t) => t !== "");
    if (tokens.length === 0) return { matches: [], note: "old_string has no non-space token" };
    const text = hay.content;
    const lead = find.slice(0, find.length - find.trimStart().length);
    const trail = find.slice(find.trimEnd().length);
    const leadBreaks = newlines(lead);
    const trailBreaks = newlines(trail);
    const first = tokens[0]!;
    const matches: Candidate[] = [];
    let total = 0;
    for (let p = text.indexOf(first); p !== -1; p = text.indexOf(first, p + 1)) {
      let q = p + first.length;
      let ok = true;
      for (let t = 1; t < tokens.length && ok; t++) {
        if (q >= text.length || !isWs(text.charCodeAt(q))) ok = false;
        else {
          while (q < text.length && isWs(text.charCodeAt(q))) q++;
          ok = text.startsWith(tokens[t]!, q);
          q += tokens[t]!.length;
        }
      }
      if (!ok) continue;
      let start = p;
      if (lead === "") {
        // A quote starting at a line's first token stands for the whole line, indentation
        // included: a merge that deletes or re-indents that line must own its indentation.
        let k = p;
        while (k > 0 && text.charCodeAt(k - 1) !== 10 && isWs(text.charCodeAt(k - 1))) k--;
        if (k === 0 || text.charCodeAt(k - 1) === 10) start = k;
      } else {
        if (p === 0 || !isWs(text.charCodeAt(p - 1))) continue;
        start = extend(text, p, -1, leadBreaks, !/^[^\S\n]/.test(lead));
        if (start < 0) continue;
      }
      let end = q;
      if (trail !== "") {
        if (q >= text.length || !isWs(text.charCodeAt(q))) continue;
        // Never into the next line's indentation: that belongs to the next line.
        end = extend(text, q, 1, trailBreaks, true);
        if (end < 0) continue;
      }
      if (total++ < MAX_LISTED) matches.push(spanCandidate(hay, start, end));
    }
    return { matches, total, note: total === 0 ? "no text equals old_string once whitespace runs are collapsed" : undefined };
  },
  rewrite(hay, match, old, neu) {
    // The separators at mid-line edges first: the span's boundary whitespace there is no line's.
    return atEdges(hay.content, match, hay.content.slice(match.start, match.end), old, neu, (m, file, o, n) => {
      const S = splitLines(file).lines;
      const O = splitModel(o).lines;
      // Line by line only when the file breaks lines where the model did; otherwise the model's
      // text wholesale, since no line of it corresponds to one line of the file.
      // The indentation the span took in front of old_string's first token stays in front of the model's text.
      const taken = /^\S/.test(o) ? file.slice(0, file.length - file.trimStart().length) : "";
      if (S.length !== O.length || S.some((line, i) => looseKey(line) !== looseKey(O[i]!))) return { text: taken + n };
      return looseRewrite(hay, m, o, n, file);
    });
  },
};
