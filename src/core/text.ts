// Text facts shared by read, write and edit: BOM, line endings, strict UTF-8, binary sniffing.
import { extname } from "node:path";

/** The most of a text file read, edit and patch load whole (read pages a larger one with offset/limit). */
export const MAX_FILE_BYTES = 10 * 1024 * 1024;
/** Lines longer than this are cut where a model is shown them. */
export const MAX_LINE_CHARS = 2000;

const BOM = [0xef, 0xbb, 0xbf];

export function hasBom(bytes: Uint8Array): boolean {
  return bytes.length >= 3 && bytes[0] === BOM[0] && bytes[1] === BOM[1] && bytes[2] === BOM[2];
}

export const BOM_BYTES = new Uint8Array(BOM);

const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const lenient = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });

/** The text of `bytes` (BOM excluded), or null when it is not valid UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string | null {
  try {
    return strict.decode(hasBom(bytes) ? bytes.subarray(3) : bytes);
  } catch {
    return null;
  }
}

/** Decodes with U+FFFD for invalid sequences. */
export function decodeLenient(bytes: Uint8Array): string {
  return lenient.decode(hasBom(bytes) ? bytes.subarray(3) : bytes);
}

const ASCII = /^[\x00-\x7f]*$/;
let encoder: TextEncoder | undefined;

/**
 * The bytes of `text` in UTF-8, as Buffer.byteLength counts them (a lone surrogate as the 3
 * of U+FFFD). Natively either way: ASCII by a regex test, anything else by encoding it.
 * Used where a call that runs once would otherwise be the first to touch Buffer, whose
 * first use costs more than a short call's whole page.
 */
export function utf8Length(text: string): number {
  return ASCII.test(text) ? text.length : (encoder ??= new TextEncoder()).encode(text).length;
}

/** "\r\n" when most line breaks of `text` are CRLF, else "\n". */
export function dominantEol(text: string): "\r\n" | "\n" {
  // Most files have no CRLF at all: one native search says so without visiting every line.
  if (!text.includes("\r\n")) return "\n";
  let crlf = 0;
  let lf = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) {
    if (i > 0 && text.charCodeAt(i - 1) === 13) crlf++;
    else lf++;
  }
  return crlf > lf ? "\r\n" : "\n";
}

/** Number of lines as an editor counts them: a final newline does not open a new line. */
export function countLines(text: string): number {
  if (text.length === 0) return 0;
  let n = 1;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return text.endsWith("\n") ? n - 1 : n;
}

/**
 * `n` with a comma between each group of three digits, as toLocaleString("en-US") writes an
 * integer: whose first call costs a process 2 ms (ICU's number formats are loaded), as much
 * as a small grep's whole search. Anything but a safe integer is left to toLocaleString.
 */
export function grouped(n: number): string {
  if (!Number.isSafeInteger(n) || Object.is(n, -0)) return n.toLocaleString("en-US");
  const digits = String(Math.abs(n));
  let out = digits.slice(0, ((digits.length - 1) % 3) + 1);
  for (let at = out.length; at < digits.length; at += 3) out += `,${digits.slice(at, at + 3)}`;
  return n < 0 ? `-${out}` : out;
}

/** "1 line", "3 lines": a count of lines as titles and messages say it. */
export function linesOf(n: number): string {
  return `${n} ${n === 1 ? "line" : "lines"}`;
}

const KINDS: Record<string, string> = {
  png: "PNG image", jpg: "JPEG image", jpeg: "JPEG image", gif: "GIF image", bmp: "BMP image",
  ico: "icon", webp: "WebP image", tif: "TIFF image", tiff: "TIFF image", psd: "Photoshop image",
  pdf: "PDF document", zip: "zip archive", gz: "gzip archive", tgz: "gzip archive", bz2: "bzip2 archive",
  xz: "xz archive", zst: "zstd archive", "7z": "7z archive", rar: "RAR archive", tar: "tar archive",
  jar: "Java archive", war: "Java archive", class: "Java class file", exe: "Windows executable",
  dll: "Windows library", so: "shared library", dylib: "shared library", o: "object file", a: "static library",
  lib: "static library", wasm: "WebAssembly module", node: "native addon", pyc: "Python bytecode",
  mp3: "MP3 audio", wav: "WAV audio", ogg: "Ogg audio", flac: "FLAC audio", m4a: "AAC audio",
  mp4: "MP4 video", mov: "QuickTime video", avi: "AVI video", mkv: "Matroska video", webm: "WebM video",
  ttf: "TrueType font", otf: "OpenType font", woff: "WOFF font", woff2: "WOFF2 font", eot: "font",
  sqlite: "SQLite database", db: "database file", bin: "binary data", dat: "binary data",
  xls: "Excel workbook", xlsx: "Excel workbook", doc: "Word document", docx: "Word document",
  ppt: "PowerPoint deck", pptx: "PowerPoint deck",
};

/** The kind of binary file its extension names ("PNG image"), or null. */
export function binaryByName(path: string): string | null {
  return KINDS[extname(path).slice(1).toLowerCase()] ?? null;
}

/** The kind of a binary file ("PNG image"), or null when `sample` looks like text. */
export function sniffBinary(path: string, sample: Uint8Array): string | null {
  const known = binaryByName(path);
  if (known) return known;
  if (sample.length === 0) return null;
  if (sample.indexOf(0) !== -1) return magicKind(sample) ?? "binary data";
  // Counted by the regex engine over a one-char-per-byte view: a byte loop in JS costs more
  // than locating a patch's hunks in a process too short-lived for the loop to be compiled.
  // The view is a TextDecoder's, not a Buffer's: the first use of Buffer costs a short call
  // more than the whole count (its bytes below 0x80 decode alike as Latin-1 and Windows-1252).
  const control = (oneCharPerByte ??= new TextDecoder("latin1")).decode(sample).match(CONTROL)?.length ?? 0;
  return control / sample.length > 0.1 ? magicKind(sample) ?? "binary data" : null;
}

let oneCharPerByte: TextDecoder | undefined;

/** Bytes below 32 that text does not hold: all but tab, LF, VT, FF, CR and ESC (coloured logs), and NUL (tested first). */
const CONTROL = /[\x01-\x08\x0e-\x1a\x1c-\x1f]/g;

/** The kind of binary file its first bytes name (ELF, PNG, zip, gzip, PDF), or null. */
export function magicKind(s: Uint8Array): string | null {
  const starts = (...b: number[]) => b.every((v, i) => s[i] === v);
  if (starts(0x7f, 0x45, 0x4c, 0x46)) return "ELF executable";
  if (starts(0x89, 0x50, 0x4e, 0x47)) return "PNG image";
  if (starts(0x50, 0x4b, 0x03, 0x04)) return "zip archive";
  if (starts(0x1f, 0x8b)) return "gzip archive";
  if (starts(0x25, 0x50, 0x44, 0x46)) return "PDF document";
  return null;
}

/** Where the first byte that is not UTF-8 sits, for a refusal's prose. */
export function invalidUtf8At(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    const n = b < 0x80 ? 0 : b >= 0xc2 && b <= 0xdf ? 1 : b >= 0xe0 && b <= 0xef ? 2 : b >= 0xf0 && b <= 0xf4 ? 3 : -1;
    if (n === -1) break;
    let ok = i + n < bytes.length || n === 0;
    for (let k = 1; ok && k <= n; k++) ok = (bytes[i + k]! & 0xc0) === 0x80;
    // Overlong forms, surrogates and code points past U+10FFFF are invalid too; the decoder
    // already refused the whole, so a rare miss here only moves the offset shown.
    if (!ok || decodeUtf8Exact(bytes.subarray(i, i + n + 1)) === null) break;
    i += n + 1;
  }
  return i;
}

/** Strict UTF-8 without BOM handling: the bytes as they are, or null. */
export function decodeUtf8Exact(bytes: Uint8Array): string | null {
  try {
    return exact.decode(bytes);
  } catch {
    return null;
  }
}

const exact = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
