// replace's matcher (SPEC §8.6): every match of a pattern in a text, and what each becomes.
// Pure, like the rest of the replacer: text in, spans and their replacements out; the tool
// reads and writes. A replacement template is read as ripgrep's --replace reads it (the
// regex crate's interpolation): $1 / ${1} a group by number, $name / ${name} by name, $$ a
// dollar; $name takes the longest run of [A-Za-z0-9_] ($1a is the group "1a"), a group that
// does not exist or did not take part is empty, and a "$" that starts no reference is itself.
// Matches are found as the regex crate finds them on each line: an empty match right where
// the previous match ended is not one (JavaScript's own iteration would report it), nor is
// one past the final line break.

/** One piece of a parsed template: literal text, or a group by number or by name. */
export type TemplatePart = { text: string } | { group: number } | { name: string };

export interface Span {
  /** UTF-16 offsets into the text. */
  start: number;
  end: number;
  replacement: string;
}

/** Parses a replacement template the way ripgrep's --replace does. */
export function parseTemplate(template: string): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let text = "";
  const ref = (name: string) => {
    if (text) parts.push({ text });
    text = "";
    parts.push(/^\d+$/.test(name) ? { group: Number(name) } : { name });
  };
  for (let i = 0; i < template.length; ) {
    const c = template[i]!;
    if (c !== "$") {
      text += c;
      i++;
      continue;
    }
    const next = template[i + 1];
    if (next === "$") {
      text += "$";
      i += 2;
      continue;
    }
    if (next === "{") {
      const close = template.indexOf("}", i + 2);
      // "${" with no "}", or "${}": no reference; the "$" is literal.
      if (close === -1 || close === i + 2) {
        text += "$";
        i++;
        continue;
      }
      ref(template.slice(i + 2, close));
      i = close + 1;
      continue;
    }
    const m = /^[A-Za-z0-9_]+/.exec(template.slice(i + 1));
    if (!m) {
      text += "$";
      i++;
      continue;
    }
    ref(m[0]);
    i += 1 + m[0].length;
  }
  if (text) parts.push({ text });
  return parts;
}

/** The literal text of a template without references, or null when it has some. */
export function plainTemplate(parts: readonly TemplatePart[]): string | null {
  let out = "";
  for (const p of parts) {
    if (!("text" in p)) return null;
    out += p.text;
  }
  return out;
}

function expand(parts: readonly TemplatePart[], m: RegExpExecArray): string {
  let out = "";
  for (const p of parts) {
    if ("text" in p) out += p.text;
    else if ("group" in p) out += m[p.group] ?? "";
    else out += m.groups?.[p.name] ?? "";
  }
  return out;
}

/**
 * Every match of `re` (a global regex) in `text` and its replacement: the template expanded
 * with the match's groups (`parts`), or `literal` as it is. `re.lastIndex` is reset.
 */
export function findReplacements(text: string, re: RegExp, replacement: { parts: readonly TemplatePart[] } | { literal: string }): Span[] {
  const spans: Span[] = [];
  const fixed = "literal" in replacement ? replacement.literal : plainTemplate(replacement.parts);
  re.lastIndex = 0;
  let previousEnd = -1;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const start = m.index;
    const end = start + m[0].length;
    if (start === end) {
      // Step over the empty match by one character (a whole surrogate pair).
      const code = text.charCodeAt(start);
      re.lastIndex = start + (code >= 0xd800 && code <= 0xdbff && start + 1 < text.length ? 2 : 1);
      if (start === previousEnd) continue;
      // Past a final line break there is no line (matches never span lines): nothing to match.
      if (start === text.length && start > 0 && text.charCodeAt(start - 1) === 10) break;
    }
    spans.push({ start, end, replacement: fixed ?? expand((replacement as { parts: TemplatePart[] }).parts, m) });
    previousEnd = end;
  }
  return spans;
}

/** Every occurrence of `find` (non-empty) in `text`, left to right, none overlapping. */
export function findLiteral(text: string, find: string, replacement: string): Span[] {
  const spans: Span[] = [];
  for (let at = text.indexOf(find); at !== -1; at = text.indexOf(find, at + find.length)) {
    spans.push({ start: at, end: at + find.length, replacement });
  }
  return spans;
}

/** `text` with each span replaced (spans in order, not overlapping). */
export function applySpans(text: string, spans: readonly Span[]): string {
  if (spans.length === 0) return text;
  const out: string[] = [];
  let at = 0;
  for (const s of spans) {
    out.push(text.slice(at, s.start), s.replacement);
    at = s.end;
  }
  out.push(text.slice(at));
  return out.join("");
}
