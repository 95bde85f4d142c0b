// grep's regex syntax: the common subset of Rust regex (ripgrep) and JavaScript, parsed
// once and written out for each engine so that both mean the same thing:
// - a match never spans lines: "." and every negated class exclude "\n" and "\r" (rg
//   --crlf treats "\r" as part of the line ending), "^"/"$" are line anchors, "$" also
//   before "\r\n";
// - \d \w \s \b are ASCII ([0-9], [0-9A-Za-z_], [\t\v\f ], ASCII word boundary);
// - capture groups become plain groups (grep reports lines, not groups), unless asked to
//   stay capturing in the JavaScript (replace);
// - constructs one engine lacks (look-around, backreferences, atomic groups, possessive
//   quantifiers, inline flags, POSIX classes, \A \z \Q) are refused with a named
//   alternative, as is anything malformed. Lone "{", "}" and "]" are literals.
// Smart case: case-insensitive unless a character written in the pattern is uppercase.
import { KtError } from "../core/result.ts";
import { anchorsOf, type Anchor } from "./anchor.ts";

export interface Compiled {
  /** The pattern as the model gave it. */
  pattern: string;
  /** Searches a whole buffer of complete lines ("gu" or "giu") that is not valid UTF-8. */
  js: RegExp;
  /** The same for valid UTF-8, where U+FFFD is an ordinary character. */
  jsValid: RegExp;
  /** The same pattern for rg (pass with -i or -s, --crlf). */
  rust: string;
  caseInsensitive: boolean;
  /** The text the pattern matches when it has no regex syntax at all. */
  literal: string | null;
  /** A fast test every buffer holding a match passes (a literal the pattern requires),
   * for patterns whose own regex is slow to run over text that cannot match. */
  prefilter: RegExp | null;
  /** What every matching line contains one of: a chunk with none of them is not even
   * decoded (null: no such test). */
  anchors: Anchor[] | null;
  /** `rust` is only a necessary condition: a line rg reports counts if `js` matches it. */
  verify?: boolean;
  /** Plain strings `rust` is the alternation of: rg finds them faster as fixed strings
   * (-F) than as a regex, case-insensitively above all. */
  fixed?: string[];
  /** Matches may span lines: each file is searched whole, and every line a match
   * touches is a matching line (rg -U --multiline-dotall). */
  multiline?: boolean;
  /** A nested repetition, (a+)+: the built-in engine searches line by line, so that a
   * line JavaScriptCore gives up on costs only that line (builtin.ts, SLOW_MS). */
  nested?: boolean;
}

const MAX_REPEAT = 1000;
/** What "." and negated classes never match: line endings; and, in text that is not
 * valid UTF-8, U+FFFD, which is how undecodable bytes reach JavaScript (rg's classes
 * never match invalid UTF-8, but do match a real U+FFFD). */
export const NEVER_INVALID = "\\n\\r\\uFFFD";
export const NEVER_VALID = "\\n\\r";
/** The same when matches may span lines (multiline): only U+FFFD in invalid text. */
const NEVER_INVALID_MULTILINE = "\\uFFFD";
const NEVER_VALID_MULTILINE = "";
const JS_SYNTAX = new Set("^$\\.*+?()[]{}|/");
const RS_META = new Set("\\.+*?()|[]{}^$#&-~");
const JS_CLASS_ESCAPE = new Set("\\]^-[");
const RS_CLASS_ESCAPE = new Set("\\]^-[&~");

/** How letters' case is matched: smart case (the default), or forced either way. */
export type Cases = "smart" | "insensitive" | "sensitive";

/**
 * `multiline`: matches may span lines (rg -U --multiline-dotall): "." and negated classes
 * match line endings too, \s matches them, and \n and \r may be written.
 */
export function compilePattern(pattern: string, cases: Cases = "smart", multiline = false, captures = false): Compiled {
  const [invalidNever, validNever] = multiline ? [NEVER_INVALID_MULTILINE, NEVER_VALID_MULTILINE] : [NEVER_INVALID, NEVER_VALID];
  // A first parse decides the case; the JavaScript written depends on it (see Parser.fold).
  const first = new Parser(pattern, invalidNever, false, multiline);
  first.parse();
  const smart = first.inlineI || (first.anyLiteral && !first.upper);
  const caseInsensitive = cases === "smart" ? smart : cases === "insensitive";
  const parser = new Parser(pattern, invalidNever, caseInsensitive, multiline, captures);
  const { js, rs, required } = parser.parse();
  const flags = caseInsensitive ? "giu" : "gu";
  let re: RegExp;
  let reValid: RegExp;
  try {
    re = new RegExp(js, flags);
    reValid = new RegExp(new Parser(pattern, validNever, caseInsensitive, multiline, captures).parse().js, flags);
  } catch (error) {
    throw invalid(pattern, `${(error as Error).message.replace(/^Invalid regular expression: /, "")}`, "Check the syntax.");
  }
  const literal = parser.literal ? parser.text : null;
  const nested = parser.nested ? { nested: true } : {};
  if (multiline) return { pattern, js: re, jsValid: reValid, rust: rs, caseInsensitive, literal: null, prefilter: null, anchors: null, multiline, ...nested };
  const prefilter = literal === null && required.length >= 3 ? new RegExp([...required].map(jsLiteral).join(""), caseInsensitive ? "giu" : "gu") : null;
  const anchors = anchorsOf(literal ?? required, caseInsensitive);
  return { pattern, js: re, jsValid: reValid, rust: rs, caseInsensitive, literal, prefilter, anchors, ...nested };
}

/** A pattern in this syntax that matches `text` literally. */
export function escapeLiteral(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&");
}

function invalid(pattern: string, problem: string, fix: string): KtError {
  const shown = pattern.length > 200 ? `${pattern.slice(0, 200)}…` : pattern;
  return new KtError("INVALID_REGEX", `Invalid regex "${shown}": ${problem}. ${fix}`);
}

interface Piece {
  js: string;
  rs: string;
  /** Can take a quantifier. */
  atom: boolean;
  /** The character, when the piece is one literal character. */
  lit?: string;
  /** A group holding a repetition (a repetition of it backtracks exponentially). */
  repeats?: boolean;
}

interface Seq {
  js: string;
  rs: string;
  /** The longest run of literal characters every match contains. */
  required: string;
}

const ASCII_SETS: Record<string, { members: string; negated: boolean }> = {
  d: { members: "0-9", negated: false },
  D: { members: "0-9", negated: true },
  w: { members: "0-9A-Za-z_", negated: false },
  W: { members: "0-9A-Za-z_", negated: true },
  s: { members: "\\t\\x0B\\f ", negated: false },
  S: { members: "\\t\\x0B\\f ", negated: true },
};

const POSIX_HINT: Record<string, string> = {
  alpha: "[a-zA-Z]", digit: "[0-9] or \\d", alnum: "[a-zA-Z0-9]", upper: "[A-Z]", lower: "[a-z]",
  space: "\\s", word: "\\w", xdigit: "[0-9a-fA-F]", punct: "an explicit list such as [.,;:!?]",
};

class Parser {
  private pos = 0;
  upper = false;
  inlineI = false;
  /** Only literal characters so far. */
  literal = true;
  /** The literal text, meaningful while `literal` holds. */
  text = "";
  /** Repetitions (other than "?") parsed so far. */
  repetitions = 0;
  /** A repetition of a group that holds one, (a+)+: JavaScriptCore may give up on it. */
  nested = false;
  /** Some literal character appears (escaped or in a class too): rg's smart case makes
   * a pattern without any (\p{Lu}, \d+) case-sensitive. */
  anyLiteral = false;

  /** `fold`: the pattern runs case-insensitively. JavaScript's /iu then counts U+017F (ſ)
   * and U+212A (Kelvin) as word characters, folded onto s and k; \w \W \b \B are
   * written to keep them ASCII, as rg's are. */
  constructor(
    private readonly src: string,
    private readonly never: string,
    private readonly fold: boolean,
    private readonly multiline = false,
    /** Groups stay capturing in the JavaScript (replace's $1 and ${name}); grep's are plain. */
    private readonly captures = false,
  ) {}

  /** A shorthand's members: \s holds the line endings too when matches span lines. */
  private members(name: string): string {
    const members = ASCII_SETS[name]!.members;
    return this.multiline && (name === "s" || name === "S") ? `${members}\\n\\r` : members;
  }

  parse(): Seq {
    if (this.src.startsWith("(?i)")) {
      this.inlineI = true;
      this.literal = false;
      this.pos = 4;
    }
    const out = this.alternation(0);
    if (this.pos < this.src.length) {
      // Only an unmatched ")" stops the top-level alternation early.
      this.fail("unmatched )", "Balance the parentheses, or escape a literal one as \\).");
    }
    return out;
  }

  private fail(problem: string, fix: string, at = this.pos): never {
    throw invalid(this.src, `${problem} at position ${at + 1}`, fix);
  }

  private refuse(construct: string, fix: string): never {
    throw invalid(this.src, `${construct} is not supported (grep accepts the regex syntax that ripgrep and JavaScript share)`, fix);
  }

  private alternation(depth: number): Seq {
    const js: string[] = [];
    const rs: string[] = [];
    let required = "";
    for (;;) {
      const seq = this.sequence(depth);
      js.push(seq.js);
      rs.push(seq.rs);
      required = seq.required;
      if (this.src[this.pos] !== "|") break;
      this.pos++;
      this.literal = false;
    }
    return { js: js.join("|"), rs: rs.join("|"), required: js.length === 1 ? required : "" };
  }

  private sequence(depth: number): Seq {
    let js = "";
    let rs = "";
    let run = "";
    let required = "";
    const close = () => {
      if (run.length > required.length) required = run;
      run = "";
    };
    while (this.pos < this.src.length) {
      const c = this.src[this.pos]!;
      if (c === "|") break;
      if (c === ")") {
        if (depth === 0) this.fail("unmatched )", "Balance the parentheses, or escape a literal one as \\).");
        break;
      }
      const piece = this.atom();
      const q = this.quantifier(piece);
      js += piece.js + q.js;
      rs += piece.rs + q.rs;
      // Only top-level literals outside optional repetition are required.
      if (depth === 0 && piece.lit !== undefined && (q.js === "" || q.js === "+" || /^\{[1-9]/.test(q.js))) {
        run += piece.lit;
        if (q.js !== "") close();
      } else close();
    }
    close();
    return { js, rs, required };
  }

  private quantifier(piece: Piece): { js: string; rs: string } {
    const at = this.pos;
    const c = this.src[this.pos];
    let q: string | null = null;
    if (c === "*" || c === "+" || c === "?") {
      q = c;
      this.pos++;
    } else if (c === "{") {
      const m = /^\{(\d*)(,?)(\d*)\}/.exec(this.src.slice(this.pos));
      if (m && (m[1] !== "" || (m[2] === "," && m[3] !== ""))) {
        const min = m[1] === "" ? 0 : Number(m[1]);
        const max = m[2] === "" ? min : m[3] === "" ? Infinity : Number(m[3]);
        if (min > MAX_REPEAT || (max !== Infinity && max > MAX_REPEAT)) {
          this.fail(`repetition count over ${MAX_REPEAT}`, `Use a smaller count, or + / * for "one or more" / "any number".`);
        }
        if (max < min) this.fail(`repetition {${m[1]},${m[3]}} has its maximum below its minimum`, "Write the smaller number first.");
        q = m[2] === "" ? `{${min}}` : max === Infinity ? `{${min},}` : `{${min},${max}}`;
        this.pos += m[0].length;
      }
    }
    if (q === null) return { js: "", rs: "" };
    this.literal = false;
    if (q !== "?") {
      this.repetitions++;
      if (piece.repeats) this.nested = true;
    }
    if (!piece.atom) {
      this.fail(`quantifier ${q} has nothing to repeat`, `Escape it to match it literally (e.g. \\${q[0]}).`, at);
    }
    let lazy = "";
    if (this.src[this.pos] === "?") {
      lazy = "?";
      this.pos++;
    } else if (this.src[this.pos] === "+") {
      this.refuse(`the possessive quantifier ${q}+`, `Drop the trailing + (${q} instead of ${q}+).`);
    }
    const next = this.src[this.pos];
    if (next === "*" || next === "+" || next === "?") {
      this.fail(`quantifier ${next} follows another quantifier`, `Escape it to match it literally (\\${next}), or group first: (…)${q}.`);
    }
    return { js: q + lazy, rs: q + lazy };
  }

  private atom(): Piece {
    const c = this.src[this.pos]!;
    switch (c) {
      case "(":
        return this.group();
      case "[":
        return this.charClass();
      case ".":
        this.pos++;
        this.literal = false;
        return { js: `[^${this.never}]`, rs: ".", atom: true };
      case "^":
        this.pos++;
        this.literal = false;
        return { js: "(?<![^\\n])", rs: "^", atom: false };
      case "$":
        this.pos++;
        this.literal = false;
        return { js: "(?=\\r?\\n|\\r?$)", rs: "$", atom: false };
      case "\\":
        return this.escape();
      case "*":
      case "+":
      case "?":
        this.fail(`quantifier ${c} has nothing to repeat`, `Escape it to match it literally (\\${c}).`);
      // eslint-disable-next-line no-fallthrough
      default:
        this.pos += c.length;
        return this.literalChar(this.codePointAtPos(c));
    }
  }

  private codePointAtPos(c: string): string {
    // A surrogate pair is one character.
    const code = c.charCodeAt(0);
    if (code >= 0xd800 && code <= 0xdbff && this.pos < this.src.length) {
      const low = this.src.charCodeAt(this.pos);
      if (low >= 0xdc00 && low <= 0xdfff) {
        this.pos++;
        return c + this.src[this.pos - 1];
      }
    }
    return c;
  }

  /** `written`: the character appears as itself in the pattern (smart case looks at those). */
  private literalChar(ch: string, written = true): Piece {
    if (ch === "\n" && !this.multiline) {
      this.fail("a line break", "grep matches within single lines, so a pattern cannot contain a line break. Search for one line's text, then read the file around the match.", this.pos - 1);
    }
    if (ch === "\r" && !this.multiline) this.refuseCR();
    if (written) this.note(ch);
    this.anyLiteral = true;
    this.text += ch;
    return { js: jsLiteral(ch), rs: rsLiteral(ch), atom: true, lit: ch };
  }

  private refuseCR(): never {
    this.fail("a carriage return (\\r)", "Line endings are not part of a line; use $ to anchor at the end of a line.", this.pos - 1);
  }

  private note(ch: string): void {
    if (ch !== ch.toLowerCase()) this.upper = true;
  }

  private group(): Piece {
    const start = this.pos;
    this.pos++;
    this.literal = false;
    const rest = this.src.slice(this.pos);
    let open = this.captures ? "(" : "(?:";
    if (rest.startsWith("?")) {
      open = "(?:";
      if (rest.startsWith("?:")) this.pos += 2;
      else if (rest.startsWith("?=")) this.refuse("look-ahead (?=…)", "Match the following text directly (foo(?=bar) → foobar), or search for the wider text and read the lines.");
      else if (rest.startsWith("?!")) this.refuse("negative look-ahead (?!…)", "Search for the text itself and narrow the results with path or include, or read the lines around the matches.");
      else if (rest.startsWith("?<=")) this.refuse("look-behind (?<=…)", "Include the preceding text in the pattern ((?<=\\$)\\d+ → \\$\\d+).");
      else if (rest.startsWith("?<!")) this.refuse("negative look-behind (?<!…)", "Search for the text itself and narrow the results with path or include, or read the lines around the matches.");
      else if (rest.startsWith("?>")) this.refuse("the atomic group (?>…)", "Use a plain group (…).");
      else if (rest.startsWith("?#")) this.refuse("the comment group (?#…)", "Remove the comment from the pattern.");
      else {
        const named = /^\?P?<([A-Za-z_][A-Za-z0-9_]*)>/.exec(rest);
        if (named) {
          this.pos += named[0].length;
          if (this.captures) open = `(?<${named[1]}>`;
        }
        else if (/^\?[a-zA-Z-]*[:)]/.test(rest)) {
          this.refuse(
            `the inline flag group (${rest.slice(0, rest.search(/[:)]/) + 1)}`,
            "grep uses smart case — case-insensitive when the pattern has no uppercase letter, case-sensitive otherwise; a leading (?i) is the only inline flag accepted.",
          );
        } else this.fail("an unknown group syntax (?", "Use (…) or (?:…) for a group, or escape a literal parenthesis as \\(.", start);
      }
    }
    const before = this.repetitions;
    const inner = this.alternation(1);
    if (this.src[this.pos] !== ")") this.fail("unclosed (", "Balance the parentheses, or escape a literal one as \\(.", start);
    this.pos++;
    return { js: `${open}${inner.js})`, rs: `(?:${inner.rs})`, atom: true, repeats: this.repetitions > before };
  }

  private escape(): Piece {
    const start = this.pos;
    this.pos++;
    if (this.pos >= this.src.length) this.fail("a lone backslash at the end", "Escape a literal backslash as \\\\.", start);
    const c = this.src[this.pos]!;
    this.pos++;
    const set = ASCII_SETS[c];
    if (set) {
      this.literal = false;
      if (this.fold && (c === "w" || c === "W")) {
        // (?-i:…) in both: a class that is not folded holds no ſ or K.
        return c === "w"
          ? { js: `(?-i:[${set.members}])`, rs: `(?-i:[${set.members}])`, atom: true }
          : { js: `(?-i:[^${set.members}${this.never}])`, rs: `(?-i:[^${set.members}])`, atom: true };
      }
      const members = this.members(c);
      return set.negated
        ? { js: `[^${members}${this.never}]`, rs: `[^${members}]`, atom: true }
        : { js: `[${members}]`, rs: `[${members}]`, atom: true };
    }
    switch (c) {
      case "b":
      case "B":
        this.literal = false;
        return { js: this.fold ? `(?-i:\\${c})` : `\\${c}`, rs: `(?-u:\\${c})`, atom: false };
      case "t":
        return this.literalChar("\t");
      case "f":
        return this.literalChar("\f");
      case "v":
        return this.literalChar("\v");
      case "n":
        if (this.multiline) return this.literalChar("\n");
        this.fail("a line break (\\n)", "grep matches within single lines, so a pattern cannot contain a line break (set multiline to let a match span lines). Search for one line's text, then read the file around the match.", start);
      // eslint-disable-next-line no-fallthrough
      case "r":
        if (this.multiline) return this.literalChar("\r");
        this.pos = start + 1;
        this.refuseCR();
      // eslint-disable-next-line no-fallthrough
      case "x":
      case "u":
        return this.literalChar(this.hexEscape(c, start), false);
      case "p":
      case "P":
        return this.property(c === "P", start);
      case "A":
      case "z":
      case "Z":
      case "G":
        this.refuse(`the anchor \\${c}`, "Use ^ and $ (grep matches line by line).");
      // eslint-disable-next-line no-fallthrough
      case "Q":
      case "E":
        this.refuse(`quoting with \\${c}`, "Escape each metacharacter with a backslash instead (a\\.b for a.b).");
      // eslint-disable-next-line no-fallthrough
      case "k":
        this.refuse("the backreference \\k<…>", "Spell the repeated text out, or search for its first occurrence and read the line.");
      // eslint-disable-next-line no-fallthrough
      default:
        if (c >= "1" && c <= "9") this.refuse(`the backreference \\${c}`, "Spell the repeated text out ((a)\\1 → aa), or search for the first occurrence and read the line.");
        if (/[A-Za-z0-9]/.test(c)) this.fail(`\\${c} is not an escape sequence`, `To match "${c}", write it without the backslash.`, start);
        // Escaped punctuation, space or any other non-alphanumeric character: itself.
        this.pos--;
        return this.literalChar(this.codePointAtPos(this.src[this.pos++]!));
    }
  }

  private hexEscape(kind: string, start: number): string {
    const rest = this.src.slice(this.pos);
    let m = /^\{([0-9A-Fa-f]{1,6})\}/.exec(rest);
    if (!m) m = (kind === "x" ? /^([0-9A-Fa-f]{2})/ : /^([0-9A-Fa-f]{4})/).exec(rest);
    if (!m) {
      this.fail(`\\${kind} needs hex digits`, kind === "x" ? "Write \\x41 or \\x{263A}." : "Write \\u00e9 or \\u{1F600}.", start);
    }
    this.pos += m[0].length;
    const code = parseInt(m[1]!, 16);
    if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) this.fail(`\\${kind}${m[0]} is not a Unicode scalar value`, "Use a code point up to 10FFFF outside the surrogate range.", start);
    this.literal = false;
    return String.fromCodePoint(code);
  }

  private property(negated: boolean, start: number): Piece {
    const name = this.propertyName(start);
    this.literal = false;
    return negated
      ? { js: `[^\\p{${name}}${this.never}]`, rs: `\\P{${name}}`, atom: true }
      : { js: `(?:(?![${this.never}])\\p{${name}})`, rs: `\\p{${name}}`, atom: true };
  }

  private propertyName(start: number): string {
    let name: string;
    if (this.src[this.pos] === "{") {
      const close = this.src.indexOf("}", this.pos);
      if (close === -1) this.fail("unclosed \\p{", "Write \\p{L} or \\p{Greek}.", start);
      name = this.src.slice(this.pos + 1, close);
      this.pos = close + 1;
    } else {
      name = this.src[this.pos] ?? "";
      this.pos++;
    }
    if (!/^[A-Za-z_]+(=[A-Za-z_]+)?$/.test(name)) this.fail(`\\p{${name}} is not a Unicode property`, "Write \\p{L} (letters), \\p{Nd} (digits) or \\p{Greek}.", start);
    if (name.includes("=")) return name;
    if (validJsProperty(name)) return name;
    if (validJsProperty(`Script=${name}`)) return `Script=${name}`;
    this.fail(`\\p{${name}} is not a Unicode property`, "Write \\p{L} (letters), \\p{Nd} (digits) or \\p{Greek}.", start);
  }

  /** A bracket class. Members are written out for each engine; negated shorthands use
   * POSIX negated classes in Rust and an alternation in JavaScript. */
  private charClass(): Piece {
    const start = this.pos;
    this.pos++;
    this.literal = false;
    let negated = false;
    if (this.src[this.pos] === "^") {
      negated = true;
      this.pos++;
    }
    let js = "";
    let rs = "";
    const jsExtra: string[] = [];
    const shorthands = new Set<string>();
    // Members that could match a line ending or U+FFFD need a guard in JavaScript.
    let guard = false;
    let first = true;
    for (;;) {
      if (this.pos >= this.src.length) this.fail("unterminated [", "Close the class with ], or escape a literal [ as \\[.", start);
      const c = this.src[this.pos]!;
      if (c === "]" && !first) {
        this.pos++;
        break;
      }
      first = false;
      if (c === "[" && this.src[this.pos + 1] === ":") {
        const m = /^\[:\^?([a-z]+):\]/.exec(this.src.slice(this.pos));
        if (m) this.refuse(`the POSIX class [:${m[1]}:]`, `Use ${POSIX_HINT[m[1]!] ?? "an explicit class such as [a-zA-Z]"} instead.`);
      }
      const item = this.classItem(start);
      if (item.kind === "set") {
        shorthands.add(item.name);
        const set = ASCII_SETS[item.name]!;
        const members = this.members(item.name);
        if (!set.negated) {
          js += members;
          rs += members;
        } else {
          jsExtra.push(`[^${members}${this.never}]`);
          rs += `[:^${item.name === "D" ? "digit" : item.name === "W" ? "word" : "space"}:]`;
        }
        continue;
      }
      if (item.kind === "prop") {
        guard = true;
        js += item.js;
        rs += item.rs;
        continue;
      }
      // A character, perhaps the start of a range.
      const lo = item.ch;
      if (this.src[this.pos] === "-" && this.src[this.pos + 1] !== "]" && this.pos + 1 < this.src.length) {
        this.pos++;
        const hiItem = this.classItem(start);
        if (hiItem.kind !== "char") this.fail("a range ends in a class shorthand", "Write the range with characters, e.g. [a-z].", start);
        const hi = hiItem.ch;
        if (hi.codePointAt(0)! < lo.codePointAt(0)!) this.fail(`the range ${lo}-${hi} is out of order`, "Write the range low to high.", start);
        const [a, b] = [lo.codePointAt(0)!, hi.codePointAt(0)!];
        if ((a <= 0x0a && b >= 0x0a) || (a <= 0x0d && b >= 0x0d) || (a <= 0xfffd && b >= 0xfffd)) guard = true;
        js += `${jsClassChar(lo)}-${jsClassChar(hi)}`;
        rs += `${rsClassChar(lo)}-${rsClassChar(hi)}`;
        continue;
      }
      if (lo === "\uFFFD") guard = true;
      js += jsClassChar(lo);
      rs += rsClassChar(lo);
    }
    // [\s\S], [\w\W], [\d\D]: any character on the line.
    for (const [a, b] of [["s", "S"], ["w", "W"], ["d", "D"]] as const) {
      if (shorthands.has(a) && shorthands.has(b)) {
        return negated ? this.fail("the class matches nothing", "Remove the ^, or use . for any character.", start) : { js: `[^${this.never}]`, rs: ".", atom: true };
      }
    }
    if (negated) {
      if (jsExtra.length > 0) this.refuse("a negated shorthand (\\D, \\W, \\S) inside [^…]", "Write the class out, e.g. [^a-zA-Z0-9_,] or use the positive shorthand.");
      return { js: `[^${js}${this.never}]`, rs: `[^${rs}]`, atom: true };
    }
    const base = js === "" ? [] : [guard ? `(?:(?![${this.never}])[${js}])` : `[${js}]`];
    const alternatives = [...base, ...jsExtra];
    const jsOut = alternatives.length === 1 ? alternatives[0]! : `(?:${alternatives.join("|")})`;
    return { js: jsOut, rs: `[${rs}]`, atom: true };
  }

  private classItem(start: number): { kind: "char"; ch: string } | { kind: "set"; name: string } | { kind: "prop"; js: string; rs: string } {
    const c = this.src[this.pos]!;
    if (c !== "\\") {
      this.pos++;
      const ch = this.codePointAtPos(c);
      if (ch === "\n" && !this.multiline) this.fail("a line break in a class", "grep matches within single lines; remove it.", start);
      if (ch === "\r" && !this.multiline) this.refuseCR();
      this.note(ch);
      this.anyLiteral = true;
      return { kind: "char", ch };
    }
    const escStart = this.pos;
    this.pos++;
    if (this.pos >= this.src.length) this.fail("unterminated [", "Close the class with ], or escape a literal [ as \\[.", start);
    const e = this.src[this.pos]!;
    this.pos++;
    if (ASCII_SETS[e]) return { kind: "set", name: e };
    switch (e) {
      case "t":
        return { kind: "char", ch: "\t" };
      case "f":
        return { kind: "char", ch: "\f" };
      case "v":
        return { kind: "char", ch: "\v" };
      case "n":
        if (this.multiline) return { kind: "char", ch: "\n" };
        this.fail("a line break (\\n) in a class", "grep matches within single lines; remove it.", escStart);
      // eslint-disable-next-line no-fallthrough
      case "r":
        if (this.multiline) return { kind: "char", ch: "\r" };
        this.pos = escStart + 1;
        this.refuseCR();
      // eslint-disable-next-line no-fallthrough
      case "x":
      case "u":
        return { kind: "char", ch: this.hexEscape(e, escStart) };
      case "p":
      case "P": {
        const name = this.propertyName(escStart);
        return { kind: "prop", js: `\\${e}{${name}}`, rs: `\\${e}{${name}}` };
      }
      default:
        if (/[A-Za-z0-9]/.test(e)) this.fail(`\\${e} is not an escape sequence in a class`, `To match "${e}", write it without the backslash.`, escStart);
        this.pos--;
        return { kind: "char", ch: this.codePointAtPos(this.src[this.pos++]!) };
    }
  }
}

function validJsProperty(name: string): boolean {
  try {
    new RegExp(`\\p{${name}}`, "u");
    return true;
  } catch {
    return false;
  }
}

function hexCode(ch: string): string {
  return ch.codePointAt(0)!.toString(16).toUpperCase();
}

function printable(ch: string): boolean {
  const code = ch.codePointAt(0)!;
  return code >= 0x20 && code !== 0x7f && !(code >= 0x80 && code < 0xa0);
}

function jsLiteral(ch: string): string {
  if (!printable(ch)) return `\\u{${hexCode(ch)}}`;
  return JS_SYNTAX.has(ch) ? `\\${ch}` : ch;
}

function rsLiteral(ch: string): string {
  if (!printable(ch)) return `\\x{${hexCode(ch)}}`;
  return RS_META.has(ch) ? `\\${ch}` : ch;
}

function jsClassChar(ch: string): string {
  if (!printable(ch)) return `\\u{${hexCode(ch)}}`;
  return JS_CLASS_ESCAPE.has(ch) ? `\\${ch}` : ch;
}

function rsClassChar(ch: string): string {
  if (!printable(ch)) return `\\x{${hexCode(ch)}}`;
  return RS_CLASS_ESCAPE.has(ch) ? `\\${ch}` : ch;
}
