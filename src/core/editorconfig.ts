// `.editorconfig`'s `charset` for one file (SPEC §8.3): the nearest files first, up to one that
// says `root = true` or the file system's root; within a file the last matching section wins,
// and a nearer file beats a farther one. Section globs as editorconfig defines them: `*` (not
// across `/`), `**`, `?`, `[seq]`, `[!seq]`, `{a,b}`, `{n1..n2}`; a glob without `/` matches at
// any depth below its file, one with `/` from its file's directory.
import { closeSync, fstatSync, openSync, readFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { READ_NONBLOCKING } from "./paths.ts";

export interface Charset {
  /** The value as written, lower-cased. */
  value: string;
  /** The .editorconfig that set it. */
  file: string;
  /** The section's glob. */
  section: string;
}

interface Section {
  glob: string;
  test: RegExp;
  charset?: string;
}

interface Parsed {
  root: boolean;
  sections: Section[];
}

/** The charset .editorconfig gives `file` (an absolute path), or undefined. */
export function editorconfigCharset(file: string): Charset | undefined {
  let found: Charset | undefined;
  for (let dir = dirname(file); ; ) {
    const path = join(dir, ".editorconfig");
    const parsed = load(path);
    if (parsed && !found) {
      const rel = relative(dir, file).split(sep).join("/");
      for (const s of parsed.sections) if (s.charset !== undefined && s.test.test(rel)) found = { value: s.charset, file: path, section: s.glob };
    }
    // The nearest file that says anything decides; a farther one can only fill in what it did not.
    if (found || parsed?.root) break;
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return found;
}

/** The files read during one sharingEditorconfigs call, by path (null: none there). */
let shared: Map<string, Parsed | null> | undefined;

/**
 * Runs `fn` with each .editorconfig read at most once: the files one call changes (a patch's
 * twenty) share the directories above them, and each asked again for every file was most of
 * the cost of telling their encoding. Only for the length of one call: the next sees any
 * change.
 */
export function sharingEditorconfigs<T>(fn: () => T): T {
  if (shared) return fn();
  shared = new Map();
  try {
    return fn();
  } finally {
    shared = undefined;
  }
}

/** Read afresh each time (but within one sharingEditorconfigs call): under `kt mcp` one process must see an .editorconfig changed meanwhile. */
function load(path: string): Parsed | null {
  if (!shared) return read(path);
  let parsed = shared.get(path);
  if (parsed === undefined) {
    parsed = read(path);
    shared.set(path, parsed);
  }
  return parsed;
}

function read(path: string): Parsed | null {
  let fd: number;
  try {
    fd = openSync(path, READ_NONBLOCKING);
  } catch {
    return null;
  }
  try {
    // A FIFO or a directory of that name is no configuration (and must not hang kt).
    const st = fstatSync(fd);
    return st.isFile() && st.size < 1 << 20 ? parse(readFileSync(fd, "utf8")) : null;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** The INI dialect of editorconfig: `[glob]` sections, `key = value`, `#`/`;` comments. */
export function parse(text: string): Parsed {
  const out: Parsed = { root: false, sections: [] };
  let current: Section | undefined;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const head = /^\[(.*)\]$/.exec(line);
    if (head) {
      const glob = head[1]!;
      current = { glob, test: globRegex(glob) };
      out.sections.push(current);
      continue;
    }
    const eq = line.indexOf("=");
    if (eq === -1) continue;
    const key = line.slice(0, eq).trim().toLowerCase();
    const value = line.slice(eq + 1).trim().toLowerCase();
    if (!current) {
      if (key === "root") out.root = value === "true";
    } else if (key === "charset") {
      current.charset = value;
    }
  }
  return out;
}

/** A section's glob as a regular expression over the path relative to its .editorconfig. */
export function globRegex(glob: string): RegExp {
  const anchored = glob.includes("/");
  const body = convert(glob.startsWith("/") ? glob.slice(1) : glob);
  return new RegExp(anchored ? `^${body}$` : `^(?:.*/)?${body}$`);
}

function convert(glob: string): string {
  let out = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "\\" && i + 1 < glob.length) {
      out += escape(glob[++i]!);
    } else if (c === "*") {
      if (glob[i + 1] === "*") {
        i++;
        // `**/` also matches no directory at all.
        if (glob[i + 1] === "/") {
          i++;
          out += "(?:.*/)?";
        } else out += ".*";
      } else out += "[^/]*";
    } else if (c === "?") {
      out += "[^/]";
    } else if (c === "[") {
      const close = glob.indexOf("]", i + 1);
      const inner = close === -1 ? "" : glob.slice(i + 1, close);
      if (close === -1 || inner.includes("/")) out += "\\[";
      else {
        const negated = inner.startsWith("!");
        const set = (negated ? inner.slice(1) : inner).replace(/[\\\]^]/g, (m) => `\\${m}`);
        out += negated ? `[^/${set}]` : `[${set}]`;
        i = close;
      }
    } else if (c === "{") {
      const close = matching(glob, i);
      if (close === -1) {
        out += "\\{";
        continue;
      }
      const inner = glob.slice(i + 1, close);
      const range = /^([+-]?\d+)\.\.([+-]?\d+)$/.exec(inner);
      const parts = split(inner);
      if (range) out += `(?:${numbers(Number(range[1]), Number(range[2]))})`;
      else if (parts.length > 1) out += `(?:${parts.map(convert).join("|")})`;
      else out += `\\{${convert(inner)}\\}`;
      i = close;
    } else {
      out += escape(c);
    }
  }
  return out;
}

function escape(c: string): string {
  return /[.+^${}()|[\]\\*?]/.test(c) ? `\\${c}` : c;
}

function matching(s: string, open: number): number {
  let depth = 0;
  for (let i = open; i < s.length; i++) {
    if (s[i] === "\\") i++;
    else if (s[i] === "{") depth++;
    else if (s[i] === "}" && --depth === 0) return i;
  }
  return -1;
}

/** Top-level comma-separated parts of a brace group. */
function split(s: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let from = 0;
  for (let i = 0; i < s.length; i++) {
    if (s[i] === "\\") i++;
    else if (s[i] === "{") depth++;
    else if (s[i] === "}") depth--;
    else if (s[i] === "," && depth === 0) {
      parts.push(s.slice(from, i));
      from = i + 1;
    }
  }
  parts.push(s.slice(from));
  return parts;
}

/** Every integer between a and b, as alternatives (an absurd range matches any integer). */
function numbers(a: number, b: number): string {
  const [lo, hi] = a <= b ? [a, b] : [b, a];
  if (hi - lo > 10_000) return "[+-]?\\d+";
  const all: string[] = [];
  for (let n = lo; n <= hi; n++) all.push(String(n));
  return all.join("|");
}
