// read (SPEC §4.1): a page of a file with line numbers, a directory listing, or a
// one-line description of a binary file. A page of a large file is read by streaming.
import { p } from "./params.ts";
import { closeSync, constants, fstatSync, openSync, readSync, statSync, type Stats } from "node:fs";
import { extname } from "node:path";
import { toolText } from "./_text.ts" with { type: "macro" };
import { defineTool, KtError, type ToolContext, type ToolOutput } from "./tool.ts";
import { refuseRead } from "../sandbox/policy.ts";
import { absolutePath, fdHandle, fsError, onOneLine, openRegular, realPath, verifyOpened } from "../core/paths.ts";
import { noteRead, sha256 } from "../core/stamps.ts";
import { IMAGE_EXTENSIONS, imageInfo, looksLikeImage, MAX_IMAGE_BYTES } from "../core/image.ts";
import { MAX_FILE_BYTES, MAX_LINE_CHARS, utf8Length } from "../core/text.ts";
import { decodeFile, describe, encodingNote, streamDecoding, type ChunkDecoder, type Encoding } from "../core/encoding.ts";
import { formatBytes } from "../core/truncate.ts";
import { looksLikePdf, parsePages, pdfText, type PageRange } from "../documents/pdf.ts";
import { isNotebookPath, parseNotebook, renderNotebook } from "../documents/notebook.ts";

const description = toolText("read");

export const MAX_LINES = 2000;
export const MAX_PAGE_BYTES = 50 * 1024;
export { MAX_FILE_BYTES, MAX_LINE_CHARS };

export const Parameters = p.object({
  file_path: p.string({ description: "Path to the file to read (absolute preferred)." }),
  offset: p.optional(p.int({ minimum: 0, description: "1-based line number to start reading from (0 is read as 1). Omit to start at line 1." })),
  limit: p.optional(p.int({ minimum: 1, description: "Maximum number of lines to return. Omit for the default of 2000." })),
  pages: p.optional(p.string({ description: 'PDF files only: the page ("3") or range of pages ("5-12") to read. Omit for the first 20 pages.' })),
});

export default defineTool({
  name: "read",
  description: description.trim(),
  parameters: Parameters,
  primary: "file_path",
  examples: ["kt read src/main.ts", "kt read src/main.ts --offset 120 --limit 40", "kt read src            # a directory: entries two levels deep", `echo '{"file_path":"README.md"}' | kt read`],
  aliases: { path: "file_path", filePath: "file_path" },
  annotations: { readOnlyHint: true, destructiveHint: false },
  showsImages: true,
  async execute(input, ctx) {
    const path = absolutePath(ctx, input.file_path);
    const real = realPath(ctx, path);
    // Shown to the model on one line: a newline in a name must not forge a numbered line.
    const abs = onOneLine(path);
    refuseRead(ctx, real, abs);
    let st: Stats;
    try {
      st = statSync(real);
    } catch (error) {
      // Loaded only here: a read that finds its file never needs the suggestions.
      if ((error as NodeJS.ErrnoException).code === "ENOENT") throw (await import("../core/suggest.ts")).notFound(ctx, path);
      throw fsError(error, path);
    }
    if (st.isDirectory()) return await listing(ctx, real, abs);
    // Refused before opening: opening a device can itself have effects, or wait.
    if (!st.isFile()) {
      throw new KtError("INVALID_ARGS", `${abs} is not a regular file (it is a device, socket or pipe); read cannot page it. Use bash if you really mean to read from it.`);
    }
    const opened = openRegular(ctx, real, abs, "read");
    st = opened.st;
    try {
      const image = readImage(ctx, real, abs, st, opened.fd);
      if (image) return image;
      if (extname(real).toLowerCase() === ".pdf" && st.size <= MAX_PDF_BYTES) {
        const bytes = readWhole(opened.fd, abs);
        if (looksLikePdf(bytes)) return await readPdf(ctx, input, real, abs, st, bytes);
      }
      if (input.pages !== undefined) {
        if (extname(real).toLowerCase() === ".pdf") throw pdfTooLarge(abs, st.size);
        if (!looksLikePdf(head(opened.fd, abs, 1024))) {
          throw new KtError("INVALID_ARGS", `pages applies to PDF files, and ${abs} is not one. Read it without pages (offset and limit page through its lines).`);
        }
      }
      return await page(ctx, input, real, abs, opened.fd, st);
    } finally {
      closeSync(opened.fd);
    }
  },
});

/** A directory's entries; the lister is loaded only for a directory, which few reads are. */
async function listing(ctx: ToolContext, real: string, abs: string) {
  const { listDirectory } = await import("./_listing.ts");
  let fd: number;
  try {
    fd = openSync(real, constants.O_RDONLY | constants.O_DIRECTORY);
  } catch (error) {
    throw fsError(error, abs);
  }
  try {
    verifyOpened(ctx, fd, abs, real);
    const listing = listDirectory(fdHandle(fd, real), abs);
    return { content: listing.text, title: `List ${abs} · ${listing.entries} entries`, extra: { path: abs, entries: listing.entries } };
  } finally {
    closeSync(fd);
  }
}

async function page(ctx: ToolContext, input: { offset?: number; limit?: number; pages?: string }, real: string, abs: string, fd: number, st: Stats): Promise<ToolOutput> {
    const paged = input.offset !== undefined || input.limit !== undefined;
    if (st.size > MAX_FILE_BYTES && !paged) {
      throw new KtError(
        "FILE_TOO_LARGE",
        `${abs} is ${formatBytes(st.size)}, over the 10 MB limit for reading a whole file. Use grep to find what you need in it, or read a region with offset and limit (e.g. offset=1, limit=200).`,
      );
    }
    const offset = Math.max(1, input.offset ?? 1);
    const limit = input.limit ?? MAX_LINES;
    let result: Page;
    if (st.size > MAX_FILE_BYTES) {
      result = streamPage(fd, real, abs, st.size, offset, limit);
    } else {
      // An image under another name (or none) is told by the bytes read for the page anyway.
      const bytes = readWhole(fd, abs);
      const unnamed = readImage(ctx, real, abs, st, fd, bytes);
      if (unnamed) return unnamed;
      if (isNotebookPath(real)) {
        const notebook = readNotebook(ctx, real, abs, st, bytes, offset, limit, input.limit === undefined);
        if (notebook) return notebook;
      }
      // A PDF under another name (or none) is told by its bytes too.
      if (looksLikePdf(bytes) && st.size <= MAX_PDF_BYTES) return readPdf(ctx, input, real, abs, st, bytes);
      result = wholePage(real, abs, bytes, offset, limit);
    }
    noteRead(ctx, real, { mtimeMs: st.mtimeMs, size: st.size, sha256: result.sha });
    return render(abs, offset, result, st.size, input.limit === undefined);
}

/**
 * A PNG, JPEG, GIF or WebP file as an image for the model (SPEC §7.5), with one line of text
 * for adapters that carry text only; undefined when the file is no such image (its bytes
 * decide, so a damaged one is described as binary like any other). `bytes` are the file's
 * when the caller has read them already; a file named as an image is read here.
 */
function readImage(ctx: ToolContext, real: string, abs: string, st: Stats, fd: number, bytes?: Uint8Array): ToolOutput | undefined {
  if (bytes ? !looksLikeImage(bytes) : !IMAGE_EXTENSIONS.has(extname(real).slice(1).toLowerCase())) return undefined;
  if (st.size > MAX_IMAGE_BYTES) {
    const kind = imageInfo(bytes ?? head(fd, abs, 64 * 1024))?.format;
    if (kind) {
      throw new KtError(
        "FILE_TOO_LARGE",
        `${abs} is a ${kind} image of ${formatBytes(st.size)}, over the 5 MB limit for an image shown to you. Make a smaller copy with bash (e.g. ImageMagick: convert in.png -resize 50% small.png) and read that.`,
      );
    }
    return undefined;
  }
  bytes ??= readWhole(fd, abs);
  const info = imageInfo(bytes);
  if (!info) return undefined;
  noteRead(ctx, real, { mtimeMs: st.mtimeMs, size: st.size, sha256: sha256(bytes) });
  const { format, mediaType, width, height } = info;
  return {
    content: `Image ${abs}: ${format}, ${width}×${height} pixels, ${formatBytes(bytes.length)}.`,
    image: { type: "image", mediaType, data: base64(bytes), width, height },
    title: `Read ${abs} · ${format} image ${width}×${height}`,
    extra: { path: abs, mediaType, width, height, bytes: bytes.length },
  };
}

/**
 * A notebook as its cells (SPEC §8.5): each cell's marker and source, numbered as one text
 * (what edit matches against), each code cell's outputs after it; undefined when the file
 * is not a notebook kt can show (then it reads as the JSON text it is).
 */
function readNotebook(ctx: ToolContext, real: string, abs: string, st: Stats, bytes: Uint8Array, offset: number, limit: number, defaultLimit: boolean): ToolOutput | undefined {
  const decoded = decodeFile(real, bytes);
  if (decoded.kind !== "text") return undefined;
  const nb = parseNotebook(decoded.text);
  if (typeof nb === "string") return undefined;
  const header = `${abs} · notebook, ${nb.cells.length} cell${nb.cells.length === 1 ? "" : "s"}${nb.language ? ` (${nb.language})` : ""}`;
  noteRead(ctx, real, { mtimeMs: st.mtimeMs, size: st.size, sha256: sha256(bytes) });
  const page = renderNotebook(nb, offset, limit, MAX_PAGE_BYTES - Buffer.byteLength(header) - TRAILER_BYTES, MAX_LINE_CHARS);
  if (page.totalLines === 0) return { content: `${header}\n[the notebook has no cells]`, title: `Read ${abs} · notebook, no cells`, extra: { path: abs, notebook: { cells: 0 } } };
  if (offset > page.totalLines) {
    throw new KtError("OFFSET_BEYOND_EOF", `Offset ${offset} is beyond the end of the notebook's cells (${page.totalLines} lines). Use offset ≤ ${page.totalLines}.`);
  }
  const out = [header, ...page.lines.map((l) => (l.n === undefined ? l.text : `${String(l.n).padStart(6)}→${l.text}`))];
  if (page.last < page.totalLines) out.push(`(Showing lines ${offset}–${page.last} of ${page.totalLines}. Use offset=${page.last + 1} to continue.)`);
  if (page.imagesNotShown > 0) out.push(`(${page.imagesNotShown} more image output${page.imagesNotShown === 1 ? "" : "s"} on this page not shown: one image goes with a read. Read a later page to see the next.)`);
  const picture = page.image ? Buffer.from(page.image.data, "base64") : undefined;
  const info = picture ? imageInfo(picture) : null;
  const truncated = page.last < page.totalLines && (defaultLimit || page.last < offset - 1 + limit);
  return {
    content: out.join("\n"),
    ...(info && page.image ? { image: { type: "image" as const, mediaType: info.mediaType, data: page.image.data, width: info.width, height: info.height } } : {}),
    title: `Read ${abs} · notebook, lines ${offset}–${page.last} of ${page.totalLines}`,
    ...(truncated ? { truncation: { originalBytes: st.size, originalLines: page.totalLines, shownHeadLines: page.last - offset + 1, shownTailLines: 0, omittedLines: page.totalLines - page.last } } : {}),
    extra: { path: abs, notebook: { cells: nb.cells.length, ...(nb.language ? { language: nb.language } : {}) }, lines: page.last - offset + 1, totalLines: page.totalLines },
  };
}

/** A PDF larger than this is refused: pdf.js holds the whole file in memory to read any page of it. */
export const MAX_PDF_BYTES = 32 * 1024 * 1024;
/** Pages shown when no pages are asked for, and at most in one read. */
export const PDF_PAGES = 20;
export const MAX_PDF_PAGES = 100;

function pdfTooLarge(abs: string, size: number): KtError {
  return new KtError(
    "FILE_TOO_LARGE",
    `${abs} is a PDF of ${formatBytes(size)}, over the ${formatBytes(MAX_PDF_BYTES)} limit for reading one. Extract its text with bash (e.g. pdftotext -f 1 -l 20 file.pdf - | head -500) and read or grep that.`,
  );
}

/** A PDF's text, page by page (SPEC §8.5): the pages asked for, else the first PDF_PAGES, within read's byte budget. */
async function readPdf(ctx: ToolContext, input: { offset?: number; limit?: number; pages?: string }, real: string, abs: string, st: Stats, bytes: Uint8Array): Promise<ToolOutput> {
  if (input.offset !== undefined || input.limit !== undefined) {
    throw new KtError("INVALID_ARGS", `${abs} is a PDF: offset and limit page through the lines of a text file. Give pages instead, e.g. pages="1-5".`);
  }
  let range: PageRange = { first: 1, last: PDF_PAGES };
  if (input.pages !== undefined) {
    const parsed = parsePages(input.pages);
    if (typeof parsed === "string") throw new KtError("INVALID_ARGS", `Invalid pages for ${abs}: ${parsed}.`);
    if (parsed.last - parsed.first + 1 > MAX_PDF_PAGES) {
      throw new KtError("INVALID_ARGS", `Invalid pages for ${abs}: at most ${MAX_PDF_PAGES} pages are read at once; ask for "${parsed.first}-${parsed.first + MAX_PDF_PAGES - 1}", then go on from there.`);
    }
    range = parsed;
  }
  const doc = await pdfText(bytes, range, MAX_PAGE_BYTES - Buffer.byteLength(abs) - 512);
  if (!doc.ok) {
    if (doc.reason === "encrypted") {
      throw new KtError("PERMISSION_DENIED", `${abs} is an encrypted PDF (${doc.detail}); kt cannot read its text. Ask the user for a copy without a password.`);
    }
    throw new KtError("BINARY_FILE", `${abs} looks like a PDF but cannot be read as one: ${doc.detail}. It may be damaged or cut short; check it with bash (e.g. pdfinfo, or file) or ask the user for a good copy.`);
  }
  noteRead(ctx, real, { mtimeMs: st.mtimeMs, size: st.size, sha256: sha256(bytes) });
  const { pageCount, pages } = doc;
  const plural = (n: number) => `${n} page${n === 1 ? "" : "s"}`;
  if (range.first > pageCount) {
    throw new KtError("OFFSET_BEYOND_EOF", `${abs} has ${plural(pageCount)}; page ${range.first} is past its end. Ask for pages 1-${pageCount} or fewer.`);
  }
  const out = [`${abs} · PDF, ${plural(pageCount)}`];
  for (const page of pages) {
    out.push(`--- page ${page.number} of ${pageCount} ---`);
    out.push(page.text ?? "(No text on this page: it holds only images or drawing, e.g. a scan, and kt does not read text from images.)");
  }
  const first = pages[0]!.number;
  const last = pages.at(-1)!.number;
  if (last < pageCount) {
    const next = `${last + 1}-${Math.min(pageCount, last + PDF_PAGES)}`;
    out.push(`(Showing ${first === last ? `page ${first}` : `pages ${first}–${last}`} of ${pageCount}. Use pages="${next}" to continue.)`);
  }
  const textless = pages.filter((p) => p.text === null).map((p) => p.number);
  const cut = last < Math.min(range.last, pageCount);
  return {
    content: out.join("\n"),
    title: `Read ${abs} · PDF pages ${first}–${last} of ${pageCount}`,
    ...(cut || (input.pages === undefined && last < pageCount) ? { truncation: { originalBytes: st.size, originalLines: pageCount, shownHeadLines: pages.length, shownTailLines: 0, omittedLines: pageCount - last } } : {}),
    extra: { path: abs, pdf: { pages: pageCount, shown: [first, last], textless } },
  };
}

/** The whole file from its start, by position (the descriptor's offset is not relied on). */
function readWhole(fd: number, abs: string): Uint8Array {
  const chunks: Uint8Array[] = [];
  let position = 0;
  try {
    for (;;) {
      const buf = new Uint8Array(Math.max(64 * 1024, Math.min(fstatSize(fd) - position + 1, 16 * 1024 * 1024)));
      const n = readSync(fd, buf, 0, buf.length, position);
      if (n === 0) break;
      chunks.push(buf.subarray(0, n));
      position += n;
    }
  } catch (error) {
    throw fsError(error, abs);
  }
  return chunks.length === 1 ? chunks[0]! : concat(chunks);
}

// Buffer is named only in functions of their own, called when needed: a function that names
// Buffer sets it up when first called, even on a branch that never runs, and readImage and
// readWhole run on every read (issue 32).
function concat(chunks: Uint8Array[]): Uint8Array {
  return Buffer.concat(chunks);
}

function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("base64");
}

function fstatSize(fd: number): number {
  return fstatSync(fd).size;
}

/** Up to `n` first bytes of a file. */
function head(fd: number, abs: string, n: number): Uint8Array {
  try {
    const buf = new Uint8Array(n);
    return buf.subarray(0, readSync(fd, buf, 0, n, 0));
  } catch (error) {
    throw fsError(error, abs);
  }
}

interface Page {
  lines: string[];
  totalLines: number;
  sha: string;
  invalidUtf8: boolean;
  /** Said on the path's line: the encoding of a file not in UTF-8 (SPEC §8.3), or "". */
  header: string;
  /** Lines of the page cut at MAX_LINE_CHARS. */
  cutLines: number;
  /** The byte limit ended the page (rather than the end of the file or the line count). */
  full: boolean;
}

/**
 * Room kept in a page for what follows the numbered lines: the continuation line and the
 * invalid-UTF-8 note (about 250 bytes together at most), so that the page never passes 50 KB.
 */
const TRAILER_BYTES = 256;

/** Collects the lines of one page under the line, character and byte limits. */
class Pager {
  readonly lines: string[] = [];
  private bytes: number;
  private done = false;
  total = 0;
  cutLines = 0;
  full = false;
  /** `header`: the bytes of the page before its first numbered line (the path and its newline). */
  constructor(private readonly offset: number, private readonly limit: number, header: number) {
    this.bytes = header + TRAILER_BYTES;
  }

  push(raw: string): void {
    this.total++;
    if (this.done || this.total < this.offset) return;
    let line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    let cut = false;
    if (line.length > MAX_LINE_CHARS) {
      const at = line.charCodeAt(MAX_LINE_CHARS - 1) >= 0xd800 && line.charCodeAt(MAX_LINE_CHARS - 1) <= 0xdbff ? MAX_LINE_CHARS - 1 : MAX_LINE_CHARS;
      line = `${line.slice(0, at)}… [line truncated]`;
      cut = true;
    }
    // As rendered: the number in at least six columns, "→" (3 bytes in UTF-8), the line, "\n".
    const size = Math.max(6, String(this.total).length) + 3 + utf8Length(line) + 1;
    if (this.lines.length > 0 && this.bytes + size > MAX_PAGE_BYTES) {
      this.done = true;
      this.full = true;
      return;
    }
    this.lines.push(line);
    if (cut) this.cutLines++;
    this.bytes += size;
    if (this.lines.length >= this.limit) this.done = true;
  }
}

function binary(abs: string, size: number, kind: string | null): void {
  if (kind) {
    throw new KtError(
      "BINARY_FILE",
      `${abs} is a binary file (${kind}, ${formatBytes(size)}); its bytes are not shown. Use bash with a suitable tool (e.g. file, xxd | head, unzip -l) if you need to inspect it.`,
    );
  }
}

/** A NUL byte past the sniffed head still makes a file binary: echoed, it would break the reader's framing. */
const NUL_KIND = "NUL bytes past its start";

function wholePage(real: string, abs: string, bytes: Uint8Array, offset: number, limit: number): Page {
  // Decoded once, in the encoding the file is in (core/encoding.ts); read's header names it.
  const file = decodeFile(real, bytes);
  if (file.kind === "binary") binary(abs, bytes.length, file.what);
  const text = file.kind === "binary" ? "" : file.text;
  const invalidUtf8 = file.kind === "undecodable" && file.why === "invalid-utf-8";
  const header = file.kind === "text" ? encodingNote(file.encoding) : file.kind === "undecodable" && !invalidUtf8 ? undecodableNote(file.encoding, file.line) : "";
  const pager = new Pager(offset, limit, utf8Length(abs + header) + 1);
  if (text.length > 0) {
    let start = 0;
    for (;;) {
      const nl = text.indexOf("\n", start);
      if (nl === -1) {
        if (start < text.length) pager.push(text.slice(start));
        break;
      }
      pager.push(text.slice(start, nl));
      start = nl + 1;
    }
  }
  return { lines: pager.lines, totalLines: pager.total, sha: sha256(bytes), invalidUtf8, header, cutLines: pager.cutLines, full: pager.full };
}

/** A file whose bytes do not survive their declared encoding's round trip: shown, and said to be unchangeable. */
function undecodableNote(enc: Encoding, line: number): string {
  return ` (encoding: ${enc.label}, ${describe(enc)}; its bytes from line ${line} on do not decode and re-encode to themselves, so edit and apply_patch refuse it.)`;
}

/** One pass over a large file in chunks: the page is kept, everything else only hashed and counted. */
function streamPage(fd: number, real: string, abs: string, size: number, offset: number, limit: number): Page {
  const hasher = new Bun.CryptoHasher("sha256");
  // The encoding as the first chunk tells (core/encoding.ts), then decoded chunk by chunk.
  let decoder: ChunkDecoder | undefined;
  let wide = false;
  let header = "";
  let pager = new Pager(offset, limit, Buffer.byteLength(abs) + 1);
  const chunk = new Uint8Array(1 << 20);
  let carry = "";
  try {
    for (;;) {
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      const view = chunk.subarray(0, n);
      if (!decoder) {
        const found = streamDecoding(real, view);
        if (found.kind === "binary") binary(abs, size, found.what);
        else {
          decoder = found.decoder;
          wide = found.encoding.codec.startsWith("utf-16");
          header = encodingNote(found.encoding);
          pager = new Pager(offset, limit, Buffer.byteLength(abs + header) + 1);
        }
      }
      if (!wide && view.indexOf(0) !== -1) binary(abs, size, NUL_KIND);
      hasher.update(view);
      const decoded = decoder!.decode(view);
      if (wide && decoded.includes("\0")) binary(abs, size, NUL_KIND);
      const text = carry + decoded;
      let start = 0;
      for (let nl = text.indexOf("\n"); nl !== -1; nl = text.indexOf("\n", start)) {
        pager.push(text.slice(start, nl));
        start = nl + 1;
      }
      carry = text.slice(start);
    }
    if (decoder) carry += decoder.decode();
    if (carry.length > 0) pager.push(carry);
  } catch (error) {
    throw fsError(error, abs);
  }
  return { lines: pager.lines, totalLines: pager.total, sha: hasher.digest("hex"), invalidUtf8: false, header, cutLines: pager.cutLines, full: pager.full };
}

/** `size`: the file's bytes; `defaultLimit`: no limit was given, so MAX_LINES ended the page if anything did. */
function render(abs: string, offset: number, page: Page, size: number, defaultLimit: boolean): ToolOutput {
  const { lines, totalLines } = page;
  if (totalLines === 0) {
    return { content: `${abs}\n[file exists but is empty]`, title: `Read ${abs} · empty`, extra: { path: abs, lines: 0, totalLines: 0 } };
  }
  if (offset > totalLines) {
    throw new KtError("OFFSET_BEYOND_EOF", `Offset ${offset} is beyond the end of the file (${totalLines} lines). Use offset ≤ ${totalLines}.`);
  }
  const last = offset + lines.length - 1;
  const out = [`${abs}${page.header}`];
  for (let i = 0; i < lines.length; i++) out.push(`${String(offset + i).padStart(6)}→${lines[i]}`);
  if (last < totalLines) out.push(`(Showing lines ${offset}–${last} of ${totalLines}. Use offset=${last + 1} to continue.)`);
  if (page.invalidUtf8) {
    out.push("(This file is not valid UTF-8: undecodable bytes are shown as �. edit refuses such files; write replaces them with UTF-8 text.)");
  }
  // SPEC §3.2: a page ended by kt's limits (not by the limit asked for), or a line cut, is reported.
  const truncated = page.full || (defaultLimit && last < totalLines) || page.cutLines > 0;
  return {
    content: out.join("\n"),
    title: `Read ${abs} · lines ${offset}–${last} of ${totalLines}`,
    ...(truncated ? { truncation: { originalBytes: size, originalLines: totalLines, shownHeadLines: lines.length, shownTailLines: 0, omittedLines: totalLines - last } } : {}),
    extra: { path: abs, lines: lines.length, totalLines },
  };
}
