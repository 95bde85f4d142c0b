// The text of a PDF, page by page (SPEC §8.5), through pdf.js as unpdf packages it for every
// runtime (it works inside the compiled binary; loaded only when a PDF is read). Only the
// pages asked for are parsed, so a long document costs what its shown pages cost.

/** Bytes that open every PDF: "%PDF-" within the first KB (readers allow leading junk). */
export function looksLikePdf(bytes: Uint8Array): boolean {
  // Looked for in the bytes themselves: every read of a text file asks, and a Buffer's
  // Latin-1 view of them would be its call's first use of Buffer (costlier than the read).
  const head = bytes.subarray(0, 1024);
  for (let at = head.indexOf(PDF_MAGIC[0]!); at !== -1 && at + PDF_MAGIC.length <= head.length; at = head.indexOf(PDF_MAGIC[0]!, at + 1)) {
    let i = 1;
    while (i < PDF_MAGIC.length && head[at + i] === PDF_MAGIC[i]) i++;
    if (i === PDF_MAGIC.length) return true;
  }
  return false;
}

/** "%PDF-". */
const PDF_MAGIC = [0x25, 0x50, 0x44, 0x46, 0x2d];

export interface PageRange {
  first: number;
  /** Inclusive; may pass the document's end (cut to it when read). */
  last: number;
}

/** `"3"` or `"5-12"` (also `"5–12"`, with spaces), 1-based; a string saying what is wrong otherwise. */
export function parsePages(spec: string): PageRange | string {
  const m = /^\s*(\d+)\s*(?:[-–]\s*(\d+)\s*)?$/.exec(spec);
  if (!m) return `"${spec}" is not a page or a range of pages; give one page ("3") or a range ("5-12")`;
  const first = Number(m[1]);
  const last = m[2] === undefined ? first : Number(m[2]);
  if (first < 1) return `pages start at 1, not ${first}`;
  if (last < first) return `the range "${spec}" ends before it starts; give the lower page first ("${last}-${first}")`;
  return { first, last };
}

export interface PdfPage {
  number: number;
  /** The page's text, lines joined by "\n"; null when the page has no text layer (a scan, an image). */
  text: string | null;
}

export type PdfText =
  | { ok: true; pageCount: number; pages: PdfPage[] }
  | { ok: false; reason: "encrypted" | "damaged"; detail: string };

/**
 * The text of `range`'s pages, stopping early once `budget` characters are gathered (the
 * pages past it are left for the next read). At least one page is returned whatever its size.
 */
export async function pdfText(bytes: Uint8Array, range: PageRange, budget: number): Promise<PdfText> {
  const { getDocumentProxy } = await import("unpdf");
  let doc: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    // A copy: pdf.js takes the buffer over, and the caller keeps its bytes for the stamp.
    doc = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0, isEvalSupported: false, stopAtErrors: false } as never);
  } catch (error) {
    const name = (error as { name?: string })?.name;
    if (name === "PasswordException") return { ok: false, reason: "encrypted", detail: "it is protected by a password" };
    return { ok: false, reason: "damaged", detail: messageOf(error) };
  }
  try {
    const pageCount = doc.numPages;
    const pages: PdfPage[] = [];
    let used = 0;
    for (let n = range.first; n <= Math.min(range.last, pageCount); n++) {
      let text: string | null;
      try {
        const page = await doc.getPage(n);
        text = pageText((await page.getTextContent()).items as Array<{ str?: string; hasEOL?: boolean }>);
        page.cleanup();
      } catch (error) {
        return { ok: false, reason: "damaged", detail: `page ${n} cannot be parsed (${messageOf(error)})` };
      }
      if (pages.length > 0 && used + (text?.length ?? 0) > budget) break;
      pages.push({ number: n, text });
      used += text?.length ?? 0;
    }
    return { ok: true, pageCount, pages };
  } finally {
    await (doc as unknown as { destroy?: () => Promise<void> }).destroy?.().catch(() => {});
  }
}

/** A page's text items as lines; null when the page has none that hold text. */
function pageText(items: Array<{ str?: string; hasEOL?: boolean }>): string | null {
  let out = "";
  for (const item of items) {
    if (typeof item.str === "string") out += item.str;
    if (item.hasEOL) out += "\n";
  }
  const lines = out.split("\n").map((line) => line.trimEnd());
  while (lines.length > 0 && lines.at(-1) === "") lines.pop();
  while (lines.length > 0 && lines[0] === "") lines.shift();
  const text = lines.join("\n");
  return text.trim() === "" ? null : text;
}

function messageOf(error: unknown): string {
  const message = (error as { message?: string })?.message ?? String(error);
  return message.replace(/\s+/g, " ").trim().slice(0, 200).replace(/[.\s]+$/, "");
}
