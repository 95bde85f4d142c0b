// Minimal PDFs written by hand for the read tests (PDF 1.4: a catalog, a page tree, one
// standard font, one content stream per page, a cross-reference table with true offsets).
// A page is its lines of text, or null for a page that only draws (no text layer).

export interface PdfOptions {
  /** An /Encrypt dictionary whose user password is not empty: readers must ask for it. */
  encrypted?: boolean;
}

function escapeText(s: string): string {
  return s.replace(/[\\()]/g, (c) => `\\${c}`);
}

export function makePdf(pages: Array<string[] | null>, opts: PdfOptions = {}): Uint8Array {
  const objects: string[] = [];
  const add = (body: string) => objects.push(body) ;
  // 1: catalog, 2: pages, 3: font; then per page a page object and its content stream.
  add("<< /Type /Catalog /Pages 2 0 R >>");
  const kids = pages.map((_, i) => `${4 + i * 2} 0 R`).join(" ");
  add(`<< /Type /Pages /Kids [${kids}] /Count ${pages.length} >>`);
  add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>");
  for (const [i, lines] of pages.entries()) {
    const stream =
      lines === null
        ? "0.5 g 72 72 300 300 re f"
        : `BT /F1 12 Tf 14 TL 72 720 Td ${lines.map((line) => `(${escapeText(line)}) Tj T*`).join(" ")} ET`;
    add(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + i * 2} 0 R >>`);
    add(`<< /Length ${Buffer.byteLength(stream, "latin1")} >>\nstream\n${stream}\nendstream`);
  }
  if (opts.encrypted) add(`<< /Filter /Standard /V 1 /R 2 /O <${"ab".repeat(32)}> /U <${"cd".repeat(32)}> /P -4 >>`);
  let out = "%PDF-1.4\n%\xe2\xe3\xcf\xd3\n";
  const offsets: number[] = [];
  for (const [i, body] of objects.entries()) {
    offsets.push(Buffer.byteLength(out, "latin1"));
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  }
  const xref = Buffer.byteLength(out, "latin1");
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("")}`;
  const id = "0123456789abcdef0123456789abcdef";
  const encrypt = opts.encrypted ? ` /Encrypt ${objects.length} 0 R /ID [<${id}> <${id}>]` : "";
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R${encrypt} >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, "latin1");
}
