// Patch text → file operations, pure. Two forms, told apart by their first line: the
// `*** Begin Patch` envelope OpenAI's models write, and unified diffs as `diff -u` and
// `git diff` write them. Both become the same operations; nothing here looks at the disk.
// A parse failure names the patch line (1-based) and what was expected there.

export interface HunkLine {
  kind: " " | "-" | "+";
  text: string;
  /** An empty patch line read as an empty context line (its leading space lost). */
  implicit?: true;
}

export interface Hunk {
  /** `@@ <context line>` (envelope): the hunk is searched after the first line equal to it. */
  anchor?: string;
  lines: HunkLine[];
  /** `*** End of File`: the hunk's old lines end the file. */
  endOfFile: boolean;
  /** Unified diffs: the header's line numbers. Hints only: the context decides where a hunk goes. */
  hint?: { oldStart: number; oldLines: number; newStart: number; newLines: number };
  /** Unified diffs: "\ No newline at end of file" after the last old (removed or context) line / the last new line. */
  oldNoNewline?: boolean;
  newNoNewline?: boolean;
  /** 1-based line of the patch where the hunk starts. */
  patchLine: number;
}

export type FileOp =
  | { kind: "add"; path: string; content: string; mode?: number; patchLine: number }
  | { kind: "delete"; path: string; patchLine: number }
  | {
      kind: "update";
      path: string;
      /** A plain `diff -u A B` names the file twice; the first of `path`, `altPath` that exists is patched. */
      altPath?: string;
      moveTo?: string;
      hunks: Hunk[];
      patchLine: number;
    };

export type PatchForm = "envelope" | "unified";

export type Parsed =
  | { ok: true; form: PatchForm; ops: FileOp[] }
  | { ok: false; form: PatchForm | undefined; line: number; found: string | undefined; expected: string };

class ParseError {
  constructor(readonly line: number, readonly found: string | undefined, readonly expected: string) {}
}

/** Character codes of "\\", "@", "-", "+", " " and "d". */
const BACKSLASH = 92;
const AT = 64;
const MINUS = 45;
const PLUS = 43;
const SPACE = 32;
const D = 100;

/** The patch lines, CRLF read as LF; a final line break does not open an empty last line. */
function splitPatch(text: string): string[] {
  const lines = text.split("\n");
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  return lines;
}

export function parsePatch(raw: string): Parsed {
  const text = raw.replace(/\r\n/g, "\n");
  const lines = splitPatch(text);
  let first = 0;
  while (first < lines.length && lines[first]!.trim() === "") first++;
  const form = formOf(lines, first);
  try {
    if (form === "envelope") return { ok: true, form, ops: parseEnvelope(text, lines, first) };
    if (form === "unified") return { ok: true, form, ops: parseUnified(lines, first) };
    throw new ParseError(first + 1, lines[first], `"*** Begin Patch" (the patch envelope) or a unified diff with file headers ("diff --git a/P b/P", or "--- P" then "+++ P")`);
  } catch (error) {
    if (!(error instanceof ParseError)) throw error;
    return { ok: false, form, line: error.line, found: error.found, expected: error.expected };
  }
}

/** A Markdown code fence line: ``` or ```diff. */
const FENCE = /^```[\w-]*$/;

function formOf(lines: readonly string[], first: number): PatchForm | undefined {
  const line = lines[first];
  if (line === undefined) return undefined;
  if (line.trim() === "*** Begin Patch") return "envelope";
  // A heredoc line (`apply_patch <<'EOF'`) or a Markdown fence (```patch) around the
  // envelope, as models sometimes quote it.
  const wrapper = /^(?:apply_patch\s+)?<<-?\s*['"]?\w+['"]?\s*$/.test(line.trim()) || FENCE.test(line.trim());
  if (wrapper && lines[first + 1]?.trim() === "*** Begin Patch") return "envelope";
  for (let i = first; i < lines.length; i++) {
    const l = lines[i]!;
    if (l.startsWith("diff --git ") || l.startsWith("--- ") || l.startsWith("Index: ") || l.startsWith("diff ")) return "unified";
    if (l.startsWith("@@")) return undefined;
    // Commit messages and `git format-patch` headers come before the first diff.
    if (i - first > 200) break;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------
// The envelope

const BEGIN = "*** Begin Patch";
const END = "*** End Patch";
const ADD = "*** Add File: ";
const DELETE = "*** Delete File: ";
const UPDATE = "*** Update File: ";
const MOVE = "*** Move to: ";
const EOF_MARK = "*** End of File";

/**
 * `text` is what `lines` were split from: an added file's content is cut from it whole, not
 * gathered line by line (a second array of a huge file's lines was the parse's peak, issue 29).
 */
function parseEnvelope(text: string, lines: string[], first: number): FileOp[] {
  // Offset in `text` of line `i`, counted on from the last line asked about (the parse only goes forward).
  let known = 0;
  let knownAt = 0;
  const offsetOf = (i: number) => {
    for (; known < i; known++) knownAt += lines[known]!.length + 1;
    return knownAt;
  };
  let i = first;
  if (lines[i]!.trim() !== BEGIN) i++;
  i++;
  const ops: FileOp[] = [];
  // (Trimmed only when it may be the end: a trim per hunk line was a copy of every line.)
  const header = (l: string | undefined) => l !== undefined && (l.startsWith(ADD) || l.startsWith(DELETE) || l.startsWith(UPDATE) || (l.includes(END) && l.trim() === END));
  const path = (l: string, prefix: string, at: number) => {
    const p = l.slice(prefix.length).trim();
    if (p === "") throw new ParseError(at + 1, l, `a file path after "${prefix.trim()}"`);
    return p;
  };
  for (;;) {
    const line = lines[i];
    if (line === undefined) throw new ParseError(i + 1, undefined, `"${END}" to close the patch`);
    if (line.trim() === END) {
      for (let k = i + 1; k < lines.length; k++) {
        const rest = lines[k]!.trim();
        if (rest !== "" && !/^['"]?\w+['"]?$/.test(rest) && !FENCE.test(rest)) throw new ParseError(k + 1, lines[k], `nothing after "${END}"`);
      }
      break;
    }
    if (line.startsWith(ADD)) {
      const op = { kind: "add" as const, path: path(line, ADD, i), content: "", patchLine: i + 1 };
      const start = i + 1;
      for (i++; lines[i] !== undefined && !header(lines[i]); i++) {
        const l = lines[i]!;
        if (!l.startsWith("+")) throw new ParseError(i + 1, l, `a line of the new file starting with "+" (every line of "${ADD.trim()}" is added), or the next "*** " file header`);
      }
      // Every line of the body starts with "+" and ends with "\n" (a file header follows), so
      // the content is the body's text without the "+" that starts each line.
      op.content = i === start ? "" : text.slice(offsetOf(start) + 1, offsetOf(i)).replaceAll("\n+", "\n");
      ops.push(op);
      continue;
    }
    if (line.startsWith(DELETE)) {
      ops.push({ kind: "delete", path: path(line, DELETE, i), patchLine: i + 1 });
      i++;
      if (lines[i] !== undefined && !header(lines[i]) && lines[i]!.trim() !== "") {
        throw new ParseError(i + 1, lines[i], `the next "*** " file header ("${DELETE.trim()}" takes no lines)`);
      }
      while (lines[i] !== undefined && lines[i]!.trim() === "" ) i++;
      continue;
    }
    if (line.startsWith(UPDATE)) {
      const op: FileOp & { kind: "update" } = { kind: "update", path: path(line, UPDATE, i), hunks: [], patchLine: i + 1 };
      i++;
      if (lines[i]?.startsWith(MOVE)) {
        op.moveTo = path(lines[i]!, MOVE, i);
        i++;
      }
      i = parseEnvelopeHunks(lines, i, op, header);
      if (op.hunks.length === 0 && op.moveTo === undefined) {
        throw new ParseError(i + 1, lines[i], `a hunk for ${op.path} ("@@" or a line starting with " ", "-" or "+"): "${UPDATE.trim()}" without changes or "${MOVE.trim()}" does nothing`);
      }
      ops.push(op);
      continue;
    }
    throw new ParseError(i + 1, line, `a file header: "${ADD.trim()} PATH", "${DELETE.trim()} PATH", "${UPDATE.trim()} PATH", or "${END}"`);
  }
  if (ops.length === 0) throw new ParseError(i + 1, lines[i], `at least one file header before "${END}"`);
  return ops;
}

/** The hunks of one "*** Update File"; returns the index of the next file header. */
function parseEnvelopeHunks(lines: string[], start: number, op: FileOp & { kind: "update" }, header: (l: string | undefined) => boolean): number {
  let i = start;
  let hunk: Hunk | undefined;
  const open = (anchor: string | undefined, at: number) => {
    hunk = { ...(anchor ? { anchor } : {}), lines: [], endOfFile: false, patchLine: at + 1 };
    op.hunks.push(hunk);
  };
  for (; lines[i] !== undefined && !header(lines[i]); i++) {
    const l = lines[i]!;
    // A unified diff's header inside the envelope ("@@ -12,5 +12,6 @@", models mix the two
    // forms): its numbers are hints as in a unified diff, and it names no context line.
    const numbered = l.charCodeAt(0) === AT ? l.match(/^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/) : null;
    if (numbered) {
      open(undefined, i);
      hunk!.hint = { oldStart: +numbered[1]!, oldLines: numbered[2] === undefined ? 1 : +numbered[2], newStart: +numbered[3]!, newLines: numbered[4] === undefined ? 1 : +numbered[4] };
      continue;
    }
    if (l.startsWith("\\") && hunk && hunk.lines.length > 0) {
      // "\ No newline at end of file", copied from a unified diff: as there, it follows the
      // last old line, the last new line, or a line of both.
      const last = hunk.lines[hunk.lines.length - 1]!;
      if (last.kind !== "+") hunk.oldNoNewline = true;
      if (last.kind !== "-") hunk.newNoNewline = true;
      continue;
    }
    if (l === "@@" || l.startsWith("@@ ")) {
      // Two "@@ ctx" headers in a row narrow twice; kt keeps the last one, which is nearest the hunk.
      if (hunk && hunk.lines.length === 0) hunk.anchor = l.slice(3).trim() || hunk.anchor;
      else open(l.slice(3).trim() || undefined, i);
      continue;
    }
    if (l === EOF_MARK || (l.includes(EOF_MARK) && l.trim() === EOF_MARK)) {
      if (!hunk || hunk.lines.length === 0) throw new ParseError(i + 1, l, `hunk lines before "${EOF_MARK}"`);
      hunk.endOfFile = true;
      hunk = undefined;
      continue;
    }
    const kind = l[0];
    if (kind === " " || kind === "-" || kind === "+" || l === "") {
      if (!hunk) open(undefined, i);
      else if (hunk.endOfFile) throw new ParseError(i + 1, l, `"@@" to open a new hunk after "${EOF_MARK}"`);
      // An empty line is an empty context line whose leading space was lost (editors strip it).
      hunk!.lines.push(l === "" ? { kind: " ", text: "", implicit: true } : { kind: kind as HunkLine["kind"], text: l.slice(1) });
      continue;
    }
    throw new ParseError(
      i + 1,
      l,
      `a hunk line starting with " " (context), "-" (removed) or "+" (added), a "@@" header, "${EOF_MARK}", or the next "*** " file header`,
    );
  }
  for (const h of op.hunks) {
    // Trailing empty lines before the next header are separators, not context.
    while (h.lines[h.lines.length - 1]?.implicit) h.lines.pop();
    if (h.lines.length === 0) throw new ParseError(h.patchLine, lines[h.patchLine - 1], `hunk lines after "@@" (lines starting with " ", "-" or "+")`);
    if (!h.lines.some((x) => x.kind !== " ")) throw new ParseError(h.patchLine, lines[h.patchLine - 1], `at least one "-" or "+" line in the hunk (it has only context lines)`);
  }
  return i;
}

// ---------------------------------------------------------------------------------------
// Unified diffs

const DEV_NULL = "/dev/null";

interface FileHeader {
  gitOld?: string;
  gitNew?: string;
  old?: string;
  neu?: string;
  renameFrom?: string;
  renameTo?: string;
  newMode?: number;
  /** A `diff --git` header opened the file (its names may not be splittable: spaces). */
  git: boolean;
  deleted: boolean;
  created: boolean;
  binary: boolean;
  patchLine: number;
}

function parseUnified(lines: string[], first: number): FileOp[] {
  const ops: FileOp[] = [];
  let i = first;
  // Anything before the first file header (a commit message, "From …" lines) is ignored.
  while (i < lines.length && !isFileStart(lines, i)) i++;
  if (i >= lines.length) throw new ParseError(first + 1, lines[first], `a unified diff file header ("diff --git a/P b/P" or "--- P" then "+++ P")`);
  while (i < lines.length) {
    const l = lines[i]!;
    // Blank lines, and the "=====" rule svn and jsdiff write under a file's "Index:" line.
    if (l.trim() === "" || /^={10,}$/.test(l)) {
      i++;
      continue;
    }
    if (!isFileStart(lines, i)) {
      // A format-patch signature ("-- " then a version) ends the diff.
      if (l === "-- ") break;
      // So does the closing Markdown fence of a diff quoted as ```diff … ```.
      if (FENCE.test(l.trim()) && lines.slice(i + 1).every((rest) => rest.trim() === "")) break;
      throw new ParseError(i + 1, l, `a file header ("diff --git", or "--- P" followed by "+++ P") or a hunk header "@@ -a,b +c,d @@"`);
    }
    const h: FileHeader = { git: l.startsWith("diff --git "), deleted: false, created: false, binary: false, patchLine: i + 1 };
    if (h.git) {
      const names = gitNames(l.slice("diff --git ".length));
      if (names) [h.gitOld, h.gitNew] = names;
      i++;
      for (; i < lines.length; i++) {
        const x = lines[i]!;
        if (x.startsWith("--- ") || x.startsWith("@@") || x.startsWith("diff ")) break;
        if (x.startsWith("rename from ")) h.renameFrom = unquote(x.slice(12));
        else if (x.startsWith("rename to ")) h.renameTo = unquote(x.slice(10));
        else if (x.startsWith("new file mode ")) [h.created, h.newMode] = [true, parseInt(x.slice(14), 8)];
        else if (x.startsWith("deleted file mode ")) h.deleted = true;
        else if (x.startsWith("new mode ")) h.newMode = parseInt(x.slice(9), 8);
        else if (x.startsWith("Binary files ") || x === "GIT binary patch") h.binary = true;
      }
    } else if (l.startsWith("diff ") || l.startsWith("Index: ")) {
      i++;
      while (i < lines.length && !lines[i]!.startsWith("--- ") && !isFileStart(lines, i)) i++;
    }
    if (lines[i]?.startsWith("--- ")) {
      h.old = headerPath(lines[i]!.slice(4));
      i++;
      if (!lines[i]?.startsWith("+++ ")) throw new ParseError(i + 1, lines[i], `"+++ PATH" after "--- ${h.old}"`);
      h.neu = headerPath(lines[i]!.slice(4));
      i++;
    }
    if (h.binary) throw new ParseError(h.patchLine, lines[h.patchLine - 1], `a text diff: binary diffs cannot be applied by kt`);
    const hunks: Hunk[] = [];
    while (lines[i]?.startsWith("@@")) {
      const [hunk, next] = parseUnifiedHunk(lines, i);
      hunks.push(hunk);
      i = next;
    }
    ops.push(unifiedOp(h, hunks, lines));
  }
  return ops;
}

function isFileStart(lines: readonly string[], i: number): boolean {
  const l = lines[i]!;
  return l.startsWith("diff --git ") || (l.startsWith("diff ") && lines[i + 1]?.startsWith("--- ") === true) ||
    (l.startsWith("Index: ") && lines.slice(i + 1, i + 4).some((x) => x.startsWith("--- "))) ||
    (l.startsWith("--- ") && lines[i + 1]?.startsWith("+++ ") === true);
}

/** `a/x b/y` → the two names, when they can be told apart (same length halves, or quoted). */
function gitNames(rest: string): [string, string] | undefined {
  const quoted = rest.match(/^("(?:[^"\\]|\\.)*"|\S+) ("(?:[^"\\]|\\.)*"|\S+)$/);
  if (quoted) return [unquote(quoted[1]!), unquote(quoted[2]!)];
  // Unquoted names with spaces: "a/P b/P" where both halves name the same path.
  const half = (rest.length - 1) / 2;
  if (Number.isInteger(half) && rest[half] === " " && rest.slice(2, half) === rest.slice(half + 3)) return [rest.slice(0, half), rest.slice(half + 1)];
  return undefined;
}

/** A `---`/`+++` path without the timestamp `diff -u` appends after a tab. */
function headerPath(raw: string): string {
  const tab = raw.indexOf("\t");
  const p = tab === -1 ? raw.replace(/\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? [+-]\d{4}$/, "") : raw.slice(0, tab);
  return unquote(p.trimEnd());
}

/** git quotes names with unusual bytes: "a/na\tme" with C escapes. */
function unquote(p: string): string {
  if (!(p.startsWith('"') && p.endsWith('"') && p.length >= 2)) return p;
  const bytes: number[] = [];
  const body = p.slice(1, -1);
  const simple: Record<string, number> = { n: 10, t: 9, r: 13, '"': 34, "\\": 92, a: 7, b: 8, f: 12, v: 11 };
  for (let k = 0; k < body.length; k++) {
    const c = body[k]!;
    if (c !== "\\") {
      bytes.push(...Buffer.from(c, "utf8"));
      continue;
    }
    const n = body[++k]!;
    if (/[0-7]/.test(n)) {
      bytes.push(parseInt(body.slice(k, k + 3), 8));
      k += 2;
    } else bytes.push(simple[n] ?? n.charCodeAt(0));
  }
  return Buffer.from(bytes).toString("utf8");
}

function parseUnifiedHunk(lines: string[], at: number): [Hunk, number] {
  const header = lines[at]!;
  const m = header.match(/^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/);
  if (!m) throw new ParseError(at + 1, header, `a hunk header "@@ -a,b +c,d @@" (line numbers are hints, but the header must have them)`);
  const hint = { oldStart: +m[1]!, oldLines: m[2] === undefined ? 1 : +m[2], newStart: +m[3]!, newLines: m[4] === undefined ? 1 : +m[4] };
  const hunk: Hunk = { lines: [], endOfFile: false, hint, patchLine: at + 1 };
  let i = at + 1;
  let oldSeen = 0;
  let newSeen = 0;
  for (; i < lines.length; i++) {
    const l = lines[i]!;
    // The first character says which of the tests below can hold (NaN for an empty line):
    // one look per line rather than a search per kind of line.
    const c = l.charCodeAt(0);
    if (c === BACKSLASH) {
      const last = hunk.lines[hunk.lines.length - 1];
      if (!last) throw new ParseError(i + 1, l, `a hunk line before "\\ No newline at end of file"`);
      if (last.kind !== "+") hunk.oldNoNewline = true;
      if (last.kind !== "-") hunk.newNoNewline = true;
      continue;
    }
    // The header's counts say where the hunk ends; past them, only a line that clearly
    // continues it (models miscount) is taken, never the next file's "--- " header.
    const counted = oldSeen < hint.oldLines || newSeen < hint.newLines;
    const opens = c === AT && l.startsWith("@@");
    const minuses = c === MINUS && l.startsWith("--- ");
    if (!counted && (minuses || (c === D && l.startsWith("diff ")) || l === "" || opens)) break;
    if (opens || (c === D && l.startsWith("diff --git ")) || (minuses && lines[i + 1]?.startsWith("+++ "))) break;
    if (c === SPACE || c === MINUS || c === PLUS || l === "") {
      const k = c === MINUS ? "-" : c === PLUS ? "+" : " ";
      hunk.lines.push({ kind: k, text: l.slice(1) });
      if (k !== "+") oldSeen++;
      if (k !== "-") newSeen++;
      continue;
    }
    if (!counted) break;
    throw new ParseError(i + 1, l, `a hunk line starting with " ", "-" or "+" (the header "${header.slice(0, 60)}" announces ${hint.oldLines} old and ${hint.newLines} new lines)`);
  }
  if (hunk.lines.length === 0 && hint.oldLines + hint.newLines > 0) throw new ParseError(at + 2, lines[at + 1], `the lines of the hunk "${header.slice(0, 60)}"`);
  return [hunk, i];
}

function stripPrefix(p: string | undefined, prefix: string, git: boolean): string | undefined {
  if (p === undefined || p === DEV_NULL) return p;
  return git && p.startsWith(prefix) ? p.slice(prefix.length) : p;
}

function unifiedOp(h: FileHeader, hunks: Hunk[], lines: string[]): FileOp {
  // git names carry a/ and b/; so do `diff -u` paths written as a/… b/… by many tools.
  const git = h.git || ((h.old?.startsWith("a/") || h.old === DEV_NULL) && (h.neu?.startsWith("b/") || h.neu === DEV_NULL));
  // A pure rename of names with spaces has neither "---"/"+++" lines nor a header that can be
  // split: git's "rename from"/"rename to" lines name both (without a/ and b/).
  const old = stripPrefix(h.old ?? h.gitOld, "a/", git) ?? h.renameFrom;
  const neu = stripPrefix(h.neu ?? h.gitNew, "b/", git) ?? h.renameTo;
  const at = h.patchLine;
  if (old === undefined || neu === undefined) throw new ParseError(at, lines[at - 1], `"--- PATH" and "+++ PATH" lines naming the file`);
  if (h.created || old === DEV_NULL) {
    if (neu === DEV_NULL) throw new ParseError(at, lines[at - 1], `a file name other than /dev/null on the "+++" line`);
    const body: string[] = [];
    let noNewline = false;
    for (const hunk of hunks) {
      for (const l of hunk.lines) {
        if (l.kind !== "+") throw new ParseError(hunk.patchLine, lines[hunk.patchLine - 1], `only "+" lines in the diff of a new file (${neu})`);
        body.push(l.text);
      }
      noNewline ||= hunk.newNoNewline === true;
    }
    const content = body.length === 0 ? "" : body.join("\n") + (noNewline ? "" : "\n");
    return { kind: "add", path: neu, content, ...(h.newMode !== undefined ? { mode: h.newMode & 0o777 } : {}), patchLine: at };
  }
  if (h.deleted || neu === DEV_NULL) return { kind: "delete", path: old, patchLine: at };
  if (!h.git) {
    // Only git's headers say "rename"; `diff -u file.orig file` patches one file.
    if (hunks.length === 0) throw new ParseError(at, lines[at - 1], `hunks ("@@ -a,b +c,d @@") for ${old}: the diff changes nothing`);
    return { kind: "update", path: old, ...(old !== neu ? { altPath: neu } : {}), hunks, patchLine: at };
  }
  const from = h.renameFrom ?? old;
  const to = h.renameTo ?? neu;
  if (hunks.length === 0 && from === to) throw new ParseError(at, lines[at - 1], `hunks ("@@ -a,b +c,d @@") for ${from}: the diff changes nothing`);
  return { kind: "update", path: from, ...(from !== to ? { moveTo: to } : {}), hunks, patchLine: at };
}
