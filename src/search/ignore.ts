// One ignore file (.gitignore, .ignore, .rgignore, .ktignore, .git/info/exclude) compiled
// to regular expressions. A path is tested on its own, never through its parents: the
// walker prunes ignored directories, so a parent that was entered was not ignored.
// Semantics are gitignore's as ripgrep reads them: last matching line wins, a line
// without a slash matches the base name at any depth, a trailing slash matches
// directories only, matching is case-sensitive. As in git, a glob matches the bytes of
// a UTF-8 name, not its characters: "?" is one byte (so "??" matches "é") and a class
// holds bytes (so "[é]" matches no name). A line that cannot be compiled is dropped
// alone, as git and rg drop it; the file's other lines still apply.

export const enum Match {
  None = 0,
  Ignore = 1,
  Whitelist = 2,
}

interface Rule {
  re: RegExp;
  negative: boolean;
  dirOnly: boolean;
  /** Tested against the base name rather than the path relative to the file's directory. */
  basename: boolean;
}

export class IgnoreRules {
  private readonly rules: Rule[];
  /** Any rule at all could match: one test that most paths fail. */
  private readonly anyBase: RegExp | null;
  private readonly anyPath: RegExp | null;

  /** `bytewise`: some rule can tell a name's bytes from its characters ("?", a class, a
   * non-ASCII character), so non-ASCII paths are matched as their UTF-8 bytes. */
  constructor(
    rules: Rule[],
    private readonly bytewise: boolean,
  ) {
    this.rules = rules;
    const base = rules.filter((r) => r.basename).map((r) => r.re.source);
    const path = rules.filter((r) => !r.basename).map((r) => r.re.source);
    this.anyBase = base.length ? new RegExp(base.map((s) => `(?:${s})`).join("|")) : null;
    this.anyPath = path.length ? new RegExp(path.map((s) => `(?:${s})`).join("|")) : null;
  }

  get size(): number {
    return this.rules.length;
  }

  /** `rel` is relative to the directory holding the ignore file; `name` is its last component. */
  match(rel: string, name: string, isDir: boolean): Match {
    if (this.bytewise && NON_ASCII.test(rel)) {
      rel = asBytes(rel);
      name = asBytes(name);
    }
    if (!(this.anyBase?.test(name) || this.anyPath?.test(rel))) return Match.None;
    for (let i = this.rules.length - 1; i >= 0; i--) {
      const rule = this.rules[i]!;
      if (rule.dirOnly && !isDir) continue;
      if (rule.re.test(rule.basename ? name : rel)) return rule.negative ? Match.Whitelist : Match.Ignore;
    }
    return Match.None;
  }
}

const NON_ASCII = /[^\x00-\x7f]/;

/** A string's UTF-8 bytes, one character per byte (what the rules' regexes match). */
function asBytes(s: string): string {
  return Buffer.from(s, "utf8").toString("latin1");
}

/** Compiles the text of an ignore file; null when it holds no rules. */
export function compileIgnore(text: string): IgnoreRules | null {
  const rules: Rule[] = [];
  let bytewise = false;
  const lines = (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text).split("\n");
  for (let line of lines) {
    if (line.endsWith("\r")) line = line.slice(0, -1);
    let rule: Rule | null;
    try {
      rule = compileLine(line);
    } catch {
      // An invalid range ([z-a]) or the like: this line is lost, not the file.
      continue;
    }
    if (!rule) continue;
    rules.push(rule);
    if (/[?[]/.test(line) || NON_ASCII.test(line)) bytewise = true;
  }
  return rules.length ? new IgnoreRules(rules, bytewise) : null;
}

/** One line's rule, matching bytes (see asBytes); null for a blank line, a comment or an
 * invalid glob. Throws when the glob makes an invalid regex (a range out of order). */
export function compileLine(raw: string): Rule | null {
  let line = trimTrailingSpaces(raw);
  if (line === "" || line.startsWith("#")) return null;
  let negative = false;
  if (line.startsWith("!")) {
    negative = true;
    line = line.slice(1);
  } else if (line.startsWith("\\!") || line.startsWith("\\#")) {
    line = line.slice(1);
  }
  let dirOnly = false;
  if (line.endsWith("/") && !line.endsWith("\\/")) {
    dirOnly = true;
    line = line.slice(0, -1);
  }
  if (line === "") return null;
  // A slash at the start or in the middle anchors the pattern to the file's directory.
  const anchored = line.includes("/");
  if (line.startsWith("/")) line = line.slice(1);
  if (line === "") return null;
  const body = globToRegex(asBytes(line));
  if (body === null) return null;
  return { re: new RegExp(`^${body}$`), negative, dirOnly, basename: !anchored };
}

function trimTrailingSpaces(line: string): string {
  let end = line.length;
  while (end > 0 && (line[end - 1] === " " || line[end - 1] === "\t")) {
    if (end >= 2 && line[end - 2] === "\\") break;
    end--;
  }
  return line.slice(0, end);
}

const POSIX: Record<string, string> = {
  alnum: "0-9A-Za-z", alpha: "A-Za-z", blank: " \\t", cntrl: "\\x00-\\x1f\\x7f", digit: "0-9",
  graph: "!-~", lower: "a-z", print: " -~", punct: "!-\\/:-@\\[-`{-~", space: "\\t\\n\\v\\f\\r ",
  upper: "A-Z", xdigit: "0-9A-Fa-f",
};

/** Gitignore glob → regular-expression source matching a whole relative path; null if malformed. */
export function globToRegex(glob: string): string | null {
  let out = "";
  let i = 0;
  const n = glob.length;
  while (i < n) {
    const c = glob[i]!;
    if (c === "*") {
      let j = i;
      while (glob[j] === "*") j++;
      const stars = j - i;
      const atStart = i === 0 || glob[i - 1] === "/";
      const atEnd = j === n || glob[j] === "/";
      if (stars >= 2 && atStart && atEnd) {
        if (j === n) {
          // "a/**": everything inside a, not a itself; "**" alone: everything.
          out += i === 0 ? "[\\s\\S]*" : "[\\s\\S]+";
          i = j;
        } else if (i === 0) {
          out += "(?:[\\s\\S]*/)?";
          i = j + 1;
        } else {
          // "a/**/b": zero or more directories; the slash before ** is already emitted.
          out += "(?:[\\s\\S]*/)?";
          i = j + 1;
        }
        continue;
      }
      out += "[^/]*";
      i = j;
      continue;
    }
    if (c === "?") {
      out += "[^/]";
      i++;
      continue;
    }
    if (c === "[") {
      const cls = bracket(glob, i);
      // An unclosed class makes the whole glob invalid, as in git and rg.
      if (cls === null) return null;
      out += cls.source;
      i = cls.end;
      continue;
    }
    if (c === "\\") {
      if (i + 1 >= n) return null;
      out += escapeChar(glob[i + 1]!);
      i += 2;
      continue;
    }
    out += escapeChar(c);
    i++;
  }
  return out;
}

function bracket(glob: string, start: number): { source: string; end: number } | null {
  let i = start + 1;
  let negated = false;
  if (glob[i] === "!" || glob[i] === "^") {
    negated = true;
    i++;
  }
  let body = "";
  let first = true;
  while (i < glob.length) {
    const c = glob[i]!;
    if (c === "]" && !first) {
      return { source: negated ? `(?:(?!/)[^${body}])` : `(?:(?!/)[${body}])`, end: i + 1 };
    }
    first = false;
    if (c === "[" && glob[i + 1] === ":") {
      const close = glob.indexOf(":]", i + 2);
      const name = close === -1 ? "" : glob.slice(i + 2, close);
      if (close !== -1 && POSIX[name] !== undefined) {
        body += POSIX[name];
        i = close + 2;
        continue;
      }
    }
    if (c === "\\" && i + 1 < glob.length) {
      body += escapeClassChar(glob[i + 1]!);
      i += 2;
      continue;
    }
    if (c === "-" && body !== "" && glob[i + 1] !== "]" && i + 1 < glob.length) {
      body += "-";
      i++;
      continue;
    }
    body += escapeClassChar(c);
    i++;
  }
  return null;
}

function escapeChar(c: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(c) ? `\\${c}` : c;
}

function escapeClassChar(c: string): string {
  return /[\\\]^\-[]/.test(c) ? `\\${c}` : c;
}
