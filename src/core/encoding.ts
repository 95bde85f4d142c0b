// Encodings (SPEC §8.3): which encoding a file's bytes are in, decided once where they are
// read, and text turned back into exactly those bytes once before they are written. Every
// codec but UTF-8 is iconv-lite's; detection past the certain signs is chardet's.
//
// Order: a known binary extension; a byte order mark; UTF-16 by its NUL pattern; binary by
// its bytes (NUL, control characters); valid UTF-8 (one strict decode, which is also the text:
// the common path costs nothing more — an ASCII-only file asks .editorconfig, since any
// ASCII-compatible encoding reads it alike); UTF-8 with stray bytes is refused as it always
// was; `.editorconfig`'s `charset`; a multi-byte encoding chardet names with confidence ≥
// DETECTOR_CONFIDENCE; else Windows-1252 (ISO-8859-1 for the five bytes it leaves undefined).
// Whatever decides, the bytes must decode and re-encode to themselves or the encoding is not
// taken: a wrong guess can change how a few characters look, never a byte of the file.
// iconv-lite and chardet are loaded on first need: a UTF-8 file, which is nearly every file,
// never uses them, and every read, write and edit would otherwise pay for loading them.
// (Required through ./_codecs.ts, which the bundle makes a chunk of its own loaded here.)
type Codecs = typeof import("./_codecs.ts");
type Iconv = Codecs["iconv"];
let iconvLib: Iconv | undefined;
const lib = (): Iconv => (iconvLib ??= (require("./_codecs.ts") as Codecs).iconv);
const iconv = {
  decode: (...args: Parameters<Iconv["decode"]>) => lib().decode(...args),
  encode: (...args: Parameters<Iconv["encode"]>) => lib().encode(...args),
};
const analyse = (sample: Uint8Array): ReturnType<Codecs["analyse"]> => (require("./_codecs.ts") as Codecs).analyse(sample);
import { KtError } from "./result.ts";
import { editorconfigCharset } from "./editorconfig.ts";
import { binaryByName, decodeUtf8Exact, invalidUtf8At, magicKind, sniffBinary } from "./text.ts";

export type Source = "utf-8" | "bom" | "nul-pattern" | "editorconfig" | "detector" | "fallback";

export interface Encoding {
  /** The codec's name as iconv-lite (and iconv(1)) know it; "utf-8" is the runtime's own. */
  readonly codec: string;
  /** As prose and read's header name it: "Windows-1252", "UTF-16 LE". */
  readonly label: string;
  /** The file starts with this encoding's byte order mark, which a write keeps. */
  readonly bom: boolean;
  /** What decided it. */
  readonly source: Source;
  /** For an .editorconfig: which file said so. */
  readonly from?: string;
}

export const UTF8: Encoding = { codec: "utf-8", label: "UTF-8", bom: false, source: "utf-8" };

export type Decoded =
  | { kind: "text"; text: string; encoding: Encoding }
  | { kind: "binary"; what: string }
  /**
   * Text kt cannot take apart without changing bytes: UTF-8 with bytes that are not
   * (`encoding` UTF-8, `line` of the first), or bytes that do not survive their declared
   * encoding's round trip. `text` is a lenient decoding, for read to show.
   */
  | { kind: "undecodable"; encoding: Encoding; text: string; line: number; why: "invalid-utf-8" | "no-round-trip" };

/** chardet's confidence (0–100) from which its multi-byte guess is taken; test/encoding.detect.test.ts justifies it. */
export const DETECTOR_CONFIDENCE = 60;

/** How much of a file the NUL pattern looks at. */
const SAMPLE = 64 * 1024;
/** How many bytes of lines with non-ASCII bytes chardet is shown: its time grows with them, its guess settles early. */
const DETECTOR_SAMPLE = 8 * 1024;

const LABELS: Record<string, string> = {
  "utf-8": "UTF-8",
  "utf-16le": "UTF-16 LE",
  "utf-16be": "UTF-16 BE",
  "windows-1252": "Windows-1252",
  "iso-8859-1": "ISO-8859-1",
  gbk: "GBK",
  gb18030: "GB18030",
  shift_jis: "Shift_JIS",
  "euc-jp": "EUC-JP",
  "euc-kr": "EUC-KR",
  big5: "Big5",
};

/** chardet's multi-byte names → the codecs tried, in order (GBK before its superset GB18030: a GBK file stays GBK). */
const DETECTED: Record<string, readonly string[]> = {
  Shift_JIS: ["shift_jis"],
  "EUC-JP": ["euc-jp"],
  "EUC-KR": ["euc-kr"],
  GB18030: ["gbk", "gb18030"],
  Big5: ["big5"],
};

/** .editorconfig values (editorconfig's own five, and the names of the legacy encodings kt holds) → codec. */
const DECLARED: Record<string, string> = {
  latin1: "iso-8859-1",
  "iso-8859-1": "iso-8859-1",
  "windows-1252": "windows-1252",
  cp1252: "windows-1252",
  gbk: "gbk",
  gb2312: "gbk",
  gb18030: "gb18030",
  shift_jis: "shift_jis",
  "shift-jis": "shift_jis",
  sjis: "shift_jis",
  "euc-jp": "euc-jp",
  "euc-kr": "euc-kr",
  big5: "big5",
};

function encoding(codec: string, source: Source, bom = false, from?: string): Encoding {
  return { codec, label: LABELS[codec] ?? codec.toUpperCase(), bom, source, ...(from ? { from } : {}) };
}

/**
 * iconv-lite's decoding, U+FFFD where bytes do not decode. Apart from decodeFile because it
 * names Buffer: a function that names Buffer sets Buffer up when it is first called, even on
 * a branch that never runs, and every read calls decodeFile (issue 32).
 */
function lenientDecode(bytes: Uint8Array, codec: string, options?: { stripBOM: boolean }): string {
  return iconv.decode(Buffer.from(bytes), codec, options);
}

/** The encoding of `bytes` (the whole file at `path`) and its text, or why it is not text kt can change. */
export function decodeFile(path: string, bytes: Uint8Array): Decoded {
  const named = binaryByName(path);
  if (named) return { kind: "binary", what: named };
  const head = bytes.subarray(0, 4096);
  // UTF-16: by its byte order mark, or by the NULs ASCII characters leave in every other byte.
  const marked = bytes.length >= 2 && bytes[0] === 0xff && bytes[1] === 0xfe ? "utf-16le" : bytes.length >= 2 && bytes[0] === 0xfe && bytes[1] === 0xff ? "utf-16be" : null;
  if (marked) {
    const enc = encoding(marked, "bom", true);
    const text = utf16(bytes.subarray(2), marked);
    if (text !== null) return { kind: "text", text, encoding: enc };
    const lenient = lenientDecode(bytes.subarray(2), marked, { stripBOM: false });
    if (!binaryText(lenient)) return { kind: "undecodable", encoding: enc, text: lenient, line: 1, why: "no-round-trip" };
  } else if (head.indexOf(0) !== -1) {
    // An executable or archive whose NULs happen to fall on one side is still what it says.
    const magic = magicKind(head);
    if (magic) return { kind: "binary", what: magic };
    const wide = nulPattern(bytes.subarray(0, SAMPLE));
    // Without a BOM, binary data must not pass for UTF-16: its text must also be well formed.
    const text = wide ? utf16(bytes, wide) : null;
    if (text !== null && !text.isWellFormed()) return { kind: "binary", what: sniffBinary(path, head) ?? "binary data" };
    if (wide && text !== null) return { kind: "text", text, encoding: encoding(wide, "nul-pattern") };
  }
  const kind = sniffBinary(path, head) ?? (bytes.indexOf(0, 4096) !== -1 ? "NUL bytes past its start" : null);
  if (kind) return { kind: "binary", what: kind };

  const bom = bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
  const body = bom ? bytes.subarray(3) : bytes;
  const utf8 = decodeUtf8Exact(body);
  if (utf8 !== null) {
    // Only pure ASCII reads alike in every encoding .editorconfig could declare.
    if (!bom && utf8.length === body.length) {
      const declared = declaredCodec(path);
      if (declared) return { kind: "text", text: utf8, encoding: encoding(declared.codec, "editorconfig", false, declared.from) };
    }
    return { kind: "text", text: utf8, encoding: bom ? { ...UTF8, bom: true } : UTF8 };
  }
  if (bom || mostlyUtf8(body)) {
    const at = invalidUtf8At(body);
    return { kind: "undecodable", encoding: bom ? { ...UTF8, bom: true } : UTF8, text: new TextDecoder().decode(body), line: lineAt(body, at), why: "invalid-utf-8" };
  }
  const declared = declaredCodec(path);
  if (declared) {
    const enc = encoding(declared.codec, "editorconfig", false, declared.from);
    const text = roundTrip(bytes, declared.codec);
    if (text !== null) return { kind: "text", text, encoding: enc };
    const lenient = lenientDecode(bytes, declared.codec);
    return { kind: "undecodable", encoding: enc, text: lenient, line: firstDifferentLine(bytes, declared.codec), why: "no-round-trip" };
  }
  for (const m of analyse(highLines(bytes, DETECTOR_SAMPLE))) {
    if (m.confidence < DETECTOR_CONFIDENCE) break;
    for (const codec of DETECTED[m.name] ?? []) {
      const text = roundTrip(bytes, codec);
      if (text !== null) return { kind: "text", text, encoding: encoding(codec, "detector") };
    }
  }
  // Single-byte text: Windows-1252 decodes all but five bytes, ISO-8859-1 every byte.
  for (const codec of ["windows-1252", "iso-8859-1"]) {
    const text = roundTrip(bytes, codec);
    if (text !== null) return { kind: "text", text, encoding: encoding(codec, "fallback") };
  }
  throw new Error("ISO-8859-1 decodes every byte");
}

/**
 * The lines that hold bytes past ASCII, up to `max` bytes of them: all a detector learns
 * from, wherever in the file they are (a source file's comments in Chinese may start late).
 */
function highLines(bytes: Uint8Array, max: number): Uint8Array {
  const parts: Uint8Array[] = [];
  let size = 0;
  for (let i = 0; i < bytes.length && size < max; ) {
    let j = i;
    while (j < bytes.length && bytes[j]! < 0x80) j++;
    if (j === bytes.length) break;
    const start = Math.max(i, bytes.lastIndexOf(10, j) + 1);
    const nl = bytes.indexOf(10, j);
    const end = nl === -1 ? bytes.length : nl + 1;
    parts.push(bytes.subarray(start, end));
    size += end - start;
    i = end;
  }
  return Buffer.concat(parts);
}

function declaredCodec(path: string): { codec: string; from: string } | undefined {
  const found = editorconfigCharset(path);
  const codec = found && DECLARED[found.value];
  return codec ? { codec, from: found.file } : undefined;
}

/**
 * The runtime's own decoders (WHATWG's), many times faster than iconv-lite's in JavaScript. Only
 * a hint: a text is taken only when iconv-lite encodes it back to the very bytes, and where the
 * two disagree on a byte, iconv-lite's decoding is the one tried and kept.
 */
const NATIVE = new Set(["windows-1252", "gbk", "gb18030", "shift_jis", "euc-jp", "euc-kr", "big5", "utf-16le", "utf-16be"]);

function fastDecode(buf: Uint8Array, codec: string): string | null {
  if (!NATIVE.has(codec)) return null;
  try {
    return new TextDecoder(codec as ConstructorParameters<typeof TextDecoder>[0], { ignoreBOM: true }).decode(buf);
  } catch {
    return null;
  }
}

/** The text of `bytes` in `codec` when encoding it gives back exactly `bytes`, else null. */
function roundTrip(bytes: Uint8Array, codec: string): string | null {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const fast = fastDecode(buf, codec);
  if (fast !== null && Buffer.compare(iconv.encode(fast, codec), buf) === 0) return fast;
  const text = iconv.decode(buf, codec, { stripBOM: false });
  return Buffer.compare(iconv.encode(text, codec), buf) === 0 ? text : null;
}

/** Whether `bytes` decode to exactly `text` in `codec`. */
function decodesTo(bytes: Uint8Array, codec: string, text: string): boolean {
  return fastDecode(bytes, codec) === text || iconv.decode(Buffer.from(bytes), codec, { stripBOM: false }) === text;
}

/** UTF-16 text that round-trips and reads as text (no NUL, few control characters), else null. */
function utf16(bytes: Uint8Array, codec: "utf-16le" | "utf-16be"): string | null {
  if (bytes.length % 2 !== 0) return null;
  const text = roundTrip(bytes, codec);
  return text === null || binaryText(text) ? null : text;
}

/** Decoded text that holds what text does not: a NUL, or more than 10% control characters. */
function binaryText(text: string): boolean {
  if (text.includes("\0")) return true;
  const control = text.match(/[\x01-\x08\x0e-\x1a\x1c-\x1f]/g)?.length ?? 0;
  return text.length > 0 && control / text.length > 0.1;
}

/**
 * "utf-16le" when NULs fall (nearly always) on odd bytes, "utf-16be" on even ones: an ASCII
 * character in UTF-16 has one NUL byte. No NUL unit at all: a NUL character is no text.
 */
function nulPattern(s: Uint8Array): "utf-16le" | "utf-16be" | null {
  let even = 0;
  let odd = 0;
  for (let i = 0; i + 1 < s.length; i += 2) {
    const a = s[i]!;
    const b = s[i + 1]!;
    if (a === 0 && b === 0) return null;
    if (a === 0) even++;
    else if (b === 0) odd++;
  }
  // CJK characters such as U+4E00 leave a NUL on the other side: fewer, not a pattern.
  if (odd >= 2 && odd >= 2 * even) return "utf-16le";
  if (even >= 2 && even >= 2 * odd) return "utf-16be";
  return null;
}

/**
 * UTF-8 with stray bytes, not a legacy encoding: more of its non-ASCII characters decode as
 * UTF-8 than fail to. Such a file is refused, as before, rather than re-read as Windows-1252.
 */
function mostlyUtf8(bytes: Uint8Array): boolean {
  const text = new TextDecoder().decode(bytes);
  let bad = 0;
  let good = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    if (c === 0xfffd) bad++;
    else if (c < 0xdc00 || c > 0xdfff) good++;
  }
  return good > bad;
}

function lineAt(bytes: Uint8Array, offset: number): number {
  let line = 1;
  for (let i = bytes.indexOf(10); i !== -1 && i < offset; i = bytes.indexOf(10, i + 1)) line++;
  return line;
}

/** The first line whose bytes do not survive the codec's round trip. */
function firstDifferentLine(bytes: Uint8Array, codec: string): number {
  let line = 1;
  let from = 0;
  while (from < bytes.length) {
    const nl = bytes.indexOf(10, from);
    const end = nl === -1 ? bytes.length : nl + 1;
    if (roundTrip(bytes.subarray(from, end), codec) === null) return line;
    line++;
    from = end;
  }
  return line;
}

/** The bytes of `text` in `enc`, its BOM included: what the writer writes. */
export function encodeText(text: string, enc: Encoding, display: string): Uint8Array {
  // A text that carries its own BOM character gets no second one.
  const bom = enc.bom && !text.startsWith("\uFEFF");
  if (enc.codec === "utf-8") {
    const body = Buffer.from(text, "utf8");
    return bom ? Buffer.concat([UTF8_BOM, body]) : body;
  }
  const body = iconv.encode(text, enc.codec);
  if (!decodesTo(body, enc.codec, text)) throw unencodable(text, enc, display);
  if (!bom) return body;
  return Buffer.concat([enc.codec === "utf-16le" ? LE_BOM : BE_BOM, body]);
}

const UTF8_BOM = new Uint8Array([0xef, 0xbb, 0xbf]);
const LE_BOM = new Uint8Array([0xff, 0xfe]);
const BE_BOM = new Uint8Array([0xfe, 0xff]);

/** At most this many characters are named; the rest are counted. */
const NAMED = 5;

/** UNENCODABLE, naming each character the encoding cannot hold (or holds only as another) and its first line. */
function unencodable(text: string, enc: Encoding, display: string): KtError {
  const bad: { char: string; line: number }[] = [];
  const seen = new Set<string>();
  const ok = new Map<string, boolean>();
  let line = 1;
  for (const char of text) {
    if (char === "\n") line++;
    const code = char.codePointAt(0)!;
    if (code < 0x80 || seen.has(char)) continue;
    let held = ok.get(char);
    if (held === undefined) {
      held = decodesTo(iconv.encode(char, enc.codec), enc.codec, char);
      ok.set(char, held);
    }
    if (!held) {
      seen.add(char);
      bad.push({ char, line });
    }
  }
  const named = bad.slice(0, NAMED).map((b) => `"${b.char}" (U+${b.char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}) on line ${b.line}`);
  const more = bad.length > NAMED ? `, and ${bad.length - NAMED} more` : "";
  const list = named.length <= 1 ? named.join("") : `${named.slice(0, -1).join(", ")}${more ? "" : " and"} ${named[named.length - 1]}`;
  const chars = bad.length === 1 ? "this character" : "these characters";
  return new KtError(
    "UNENCODABLE",
    `Nothing was written: ${display} is ${enc.label} text (${describe(enc)}), and ${enc.label} cannot hold ${list}${more}. Write ${chars} another way the file's language allows (an escape such as \\u${bad[0] ? bad[0].char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0") : "XXXX"}, an entity, or a plain ASCII spelling), or leave ${bad.length === 1 ? "it" : "them"} out. To change the whole file's encoding, convert it first with bash (e.g. iconv -f ${enc.codec.toUpperCase()} -t UTF-8).`,
    { extra: { path: display, encoding: enc.label, characters: bad.map((b) => ({ char: b.char, codePoint: b.char.codePointAt(0), line: b.line })) } },
  );
}

/** How the encoding was decided, as read's header and the prose say it. */
export function describe(enc: Encoding): string {
  switch (enc.source) {
    case "bom":
      return "marked by its byte order mark";
    case "nul-pattern":
      return "detected from its bytes";
    case "editorconfig":
      return `as ${enc.from ?? ".editorconfig"} declares`;
    case "detector":
      return "detected from its bytes";
    case "fallback":
      return "a guess: its bytes are not UTF-8 and name no encoding";
    case "utf-8":
      return enc.bom ? "with a byte order mark" : "valid UTF-8";
  }
}

/** read's header note for a file not in plain UTF-8, or "" — UTF-8 (with or without BOM) says nothing. */
export function encodingNote(enc: Encoding): string {
  if (enc.codec === "utf-8") return "";
  const bom = enc.bom && enc.source !== "bom" ? ", with a byte order mark" : "";
  const hint = enc.source === "fallback" ? ` If its non-ASCII characters look wrong, declare the file's encoding as charset in .editorconfig.` : "";
  return ` (encoding: ${enc.label}, ${describe(enc)}${bom}; changes are written back in ${enc.label}.${hint})`;
}

/** A decoder of a file's chunks in order: `decode(chunk)`, then `decode()` for what is left. */
export interface ChunkDecoder {
  decode(chunk?: Uint8Array): string;
}

/**
 * For a file too large to load (read pages it): its encoding as its first chunk tells, and a
 * streaming decoder for it. No round trip can be checked without the whole file, but none is
 * needed: such a file is only shown, never changed (edit and apply_patch refuse it for its size).
 */
export function streamDecoding(path: string, head: Uint8Array): { kind: "binary"; what: string } | { kind: "text"; encoding: Encoding; decoder: ChunkDecoder } {
  const named = binaryByName(path) ?? (head.subarray(0, 4096).indexOf(0) !== -1 ? magicKind(head) : null);
  if (named) return { kind: "binary", what: named };
  const native = (codec: string): ChunkDecoder => {
    const d = new TextDecoder(codec as ConstructorParameters<typeof TextDecoder>[0], { ignoreBOM: false });
    return { decode: (chunk) => (chunk ? d.decode(chunk, { stream: true }) : d.decode()) };
  };
  const marked = head.length >= 2 && head[0] === 0xff && head[1] === 0xfe ? "utf-16le" : head.length >= 2 && head[0] === 0xfe && head[1] === 0xff ? "utf-16be" : null;
  const wide = marked ?? (head.subarray(0, 4096).indexOf(0) !== -1 ? nulPattern(head.subarray(0, SAMPLE)) : null);
  if (wide) {
    const sample = new TextDecoder(wide, { ignoreBOM: false }).decode(head.subarray(0, Math.min(head.length, SAMPLE) & ~1));
    if (!binaryText(sample)) return { kind: "text", encoding: encoding(wide, marked ? "bom" : "nul-pattern", marked !== null), decoder: native(wide) };
  }
  const kind = sniffBinary(path, head.subarray(0, 4096));
  if (kind) return { kind: "binary", what: kind };
  const bom = head.length >= 3 && head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf;
  const body = head.subarray(bom ? 3 : 0, Math.min(head.length, SAMPLE));
  let utf8 = true;
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(body, { stream: true });
  } catch {
    utf8 = false;
  }
  if (utf8 || bom || mostlyUtf8(body)) return { kind: "text", encoding: bom ? { ...UTF8, bom: true } : UTF8, decoder: native("utf-8") };
  const declared = declaredCodec(path);
  const guess = declared ? encoding(declared.codec, "editorconfig", false, declared.from)
    : (() => {
        for (const m of analyse(highLines(body, DETECTOR_SAMPLE))) {
          if (m.confidence < DETECTOR_CONFIDENCE) break;
          const codec = DETECTED[m.name]?.[0];
          if (codec) return encoding(codec, "detector");
        }
        return encoding("windows-1252", "fallback");
      })();
  // ISO-8859-1 is every byte as its own code point; WHATWG's label of that name means Windows-1252.
  if (guess.codec === "iso-8859-1") return { kind: "text", encoding: guess, decoder: { decode: (chunk) => (chunk ? Buffer.from(chunk).toString("latin1") : "") } };
  return { kind: "text", encoding: guess, decoder: native(guess.codec) };
}
