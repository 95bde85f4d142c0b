// SPEC §8.5: read of a PDF gives its text page by page — the first 20 pages unless `pages`
// says which, then how to go on; a page without text said so; encrypted and damaged files
// refused with prose; limits in bytes and pages. PDFs made by the test (test/_pdf.ts) and
// real ones found on the machine, in-process, through dist/kt and through kt mcp.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { looksLikePdf, parsePages } from "../src/documents/pdf.ts";
import { call, KT, kt, MODES, peakRss, tempDir } from "./_helpers.ts";
import { makePdf } from "./_pdf.ts";

function workspace(tmp: { path: string }) {
  const work = join(tmp.path, "work");
  mkdirSync(work);
  writeFileSync(join(work, "a.pdf"), makePdf([["Hello (world)", "second line"], null, ["Page three"]]));
  writeFileSync(join(work, "long.pdf"), makePdf(Array.from({ length: 45 }, (_, i) => [`This is page ${i + 1}.`])));
  return { work, opts: { cwd: work, stateDir: join(tmp.path, "state") } };
}

const NO_TEXT = "(No text on this page: it holds only images or drawing, e.g. a scan, and kt does not read text from images.)";

describe("pages and PDF bytes", () => {
  test("a page or a range, and prose for anything else", () => {
    expect(parsePages("3")).toEqual({ first: 3, last: 3 });
    expect(parsePages("5-12")).toEqual({ first: 5, last: 12 });
    expect(parsePages(" 5 – 12 ")).toEqual({ first: 5, last: 12 });
    expect(parsePages("0")).toBe("pages start at 1, not 0");
    expect(parsePages("9-4")).toBe('the range "9-4" ends before it starts; give the lower page first ("4-9")');
    expect(parsePages("1,3")).toBe('"1,3" is not a page or a range of pages; give one page ("3") or a range ("5-12")');
    expect(parsePages("")).toBe('"" is not a page or a range of pages; give one page ("3") or a range ("5-12")');
  });

  test("a PDF is told by its bytes", () => {
    expect(looksLikePdf(makePdf([["x"]]))).toBe(true);
    expect(looksLikePdf(Buffer.from("junk before\n%PDF-1.7\n"))).toBe(true);
    expect(looksLikePdf(Buffer.from("just text\n"))).toBe(false);
  });
});

for (const mode of MODES) {
  describe(`read of a PDF (${mode})`, () => {
    test("text page by page with page markers; a page without text said so", async () => {
      using tmp = tempDir();
      const { work, opts } = workspace(tmp);
      const r = await call(mode, "read", { file_path: "a.pdf" }, opts);
      expect(r.isError, r.content).toBe(false);
      expect(r.content).toBe(
        [`${work}/a.pdf · PDF, 3 pages`, "--- page 1 of 3 ---", "Hello (world)", "second line", "--- page 2 of 3 ---", NO_TEXT, "--- page 3 of 3 ---", "Page three"].join("\n"),
      );
      expect(r.metadata.title).toBe(`Read ${work}/a.pdf · PDF pages 1–3 of 3`);
      expect(r.metadata.extra).toEqual({ path: `${work}/a.pdf`, pdf: { pages: 3, shown: [1, 3], textless: [2] } });
      expect(r.metadata.truncation).toBeUndefined();
    });

    test("the first 20 pages by default, then how to continue; pages ranges; a range past the end is cut to it", async () => {
      using tmp = tempDir();
      const { work, opts } = workspace(tmp);
      const first = await call(mode, "read", { file_path: "long.pdf" }, opts);
      const lines = first.content.split("\n");
      expect(lines[0]).toBe(`${work}/long.pdf · PDF, 45 pages`);
      expect(lines.filter((l) => l.startsWith("--- page "))).toHaveLength(20);
      expect(lines.at(-2)).toBe("This is page 20.");
      expect(lines.at(-1)).toBe('(Showing pages 1–20 of 45. Use pages="21-40" to continue.)');
      expect(first.metadata.truncation).toMatchObject({ originalLines: 45, shownHeadLines: 20, omittedLines: 25 });

      const one = await call(mode, "read", { file_path: "long.pdf", pages: "7" }, opts);
      expect(one.content).toBe(`${work}/long.pdf · PDF, 45 pages\n--- page 7 of 45 ---\nThis is page 7.\n(Showing page 7 of 45. Use pages="8-27" to continue.)`);
      const tail = await call(mode, "read", { file_path: "long.pdf", pages: "41-60" }, opts);
      expect(tail.content).toBe(`${work}/long.pdf · PDF, 45 pages\n${[41, 42, 43, 44, 45].map((n) => `--- page ${n} of 45 ---\nThis is page ${n}.`).join("\n")}`);
    });

    test("bad pages, pages past the end, offset on a PDF, pages on a text file: prose with a code", async () => {
      using tmp = tempDir();
      const { work, opts } = workspace(tmp);
      writeFileSync(join(work, "notes.txt"), "plain\n");
      const cases: Array<[Record<string, unknown>, string, string]> = [
        [{ file_path: "a.pdf", pages: "two" }, "INVALID_ARGS", `Invalid pages for ${work}/a.pdf: "two" is not a page or a range of pages; give one page ("3") or a range ("5-12").`],
        [{ file_path: "long.pdf", pages: "1-101" }, "INVALID_ARGS", `Invalid pages for ${work}/long.pdf: at most 100 pages are read at once; ask for "1-100", then go on from there.`],
        [{ file_path: "a.pdf", pages: "4" }, "OFFSET_BEYOND_EOF", `${work}/a.pdf has 3 pages; page 4 is past its end. Ask for pages 1-3 or fewer.`],
        [{ file_path: "a.pdf", offset: 2 }, "INVALID_ARGS", `${work}/a.pdf is a PDF: offset and limit page through the lines of a text file. Give pages instead, e.g. pages="1-5".`],
        [{ file_path: "notes.txt", pages: "1" }, "INVALID_ARGS", `pages applies to PDF files, and ${work}/notes.txt is not one. Read it without pages (offset and limit page through its lines).`],
      ];
      for (const [input, code, prose] of cases) {
        const r = await call(mode, "read", input, opts);
        expect(r.isError, JSON.stringify(input)).toBe(true);
        expect(r.error?.code).toBe(code as never);
        expect(r.content).toBe(prose);
      }
    });

    test("an encrypted PDF and a truncated one are refused with prose", async () => {
      using tmp = tempDir();
      const { work, opts } = workspace(tmp);
      writeFileSync(join(work, "locked.pdf"), makePdf([["secret"]], { encrypted: true }));
      const whole = makePdf([["one"], ["two"]]);
      writeFileSync(join(work, "cut.pdf"), whole.subarray(0, Math.floor(whole.length / 2)));
      const locked = await call(mode, "read", { file_path: "locked.pdf" }, opts);
      expect(locked.error?.code).toBe("PERMISSION_DENIED");
      expect(locked.content).toBe(`${work}/locked.pdf is an encrypted PDF (it is protected by a password); kt cannot read its text. Ask the user for a copy without a password.`);
      const cut = await call(mode, "read", { file_path: "cut.pdf" }, opts);
      expect(cut.error?.code).toBe("BINARY_FILE");
      expect(cut.content).toMatch(new RegExp(`^${work}/cut\\.pdf looks like a PDF but cannot be read as one: .+\\. It may be damaged or cut short; check it with bash \\(e\\.g\\. pdfinfo, or file\\) or ask the user for a good copy\\.$`));
    });

    test("a PDF without the name is told by its bytes; a .pdf that is no PDF is not parsed as one", async () => {
      using tmp = tempDir();
      const { work, opts } = workspace(tmp);
      writeFileSync(join(work, "report"), makePdf([["unnamed"]]));
      writeFileSync(join(work, "fake.pdf"), "not a pdf at all\n");
      expect((await call(mode, "read", { file_path: "report" }, opts)).content).toBe(`${work}/report · PDF, 1 page\n--- page 1 of 1 ---\nunnamed`);
      // Named as a binary kind, it is refused as binary, as before PDFs were read.
      const fake = await call(mode, "read", { file_path: "fake.pdf" }, opts);
      expect(fake.error?.code).toBe("BINARY_FILE");
      expect(fake.content).toStartWith(`${work}/fake.pdf is a binary file (PDF document, 17 bytes)`);
    });
  });
}

describe("PDFs through dist/kt", () => {
  test("a 200-page PDF: a read of 100 pages stays within time and memory bounds", () => {
    using tmp = tempDir();
    const { work } = workspace(tmp);
    writeFileSync(join(work, "big.pdf"), makePdf(Array.from({ length: 200 }, (_, i) => [`This is page ${i + 1}.`, "x".repeat(60)])));
    const started = performance.now();
    const proc = peakRss(["read", "big.pdf", "--pages", "101-200"], { cwd: work, stateDir: join(tmp.path, "state") });
    const seconds = (performance.now() - started) / 1000;
    expect(proc.exitCode, proc.stderr).toBe(0);
    const out = proc.stdout;
    expect(out).toStartWith(`${work}/big.pdf · PDF, 200 pages\n--- page 101 of 200 ---\nThis is page 101.\n`);
    expect(out).toEndWith("--- page 200 of 200 ---\nThis is page 200.\n" + "x".repeat(60) + "\n");
    // Bounds, not timings: a generous ceiling on a loaded 2-core machine, and memory that does not scale with the document.
    expect(seconds).toBeLessThan(30);
    expect(proc.bytes).toBeGreaterThan(0);
    expect(proc.bytes).toBeLessThan(400 * 1024 * 1024);
  }, 60_000);

  test("real PDFs on this machine (under /usr/share/doc) read page by page", () => {
    const found: string[] = [];
    const walk = (dir: string, depth: number) => {
      if (depth > 3 || found.length >= 3) return;
      let entries: import("node:fs").Dirent[];
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const e of entries) {
        if (e.isDirectory()) walk(join(dir, e.name), depth + 1);
        else if (e.name.endsWith(".pdf")) found.push(join(dir, e.name));
      }
    };
    if (existsSync("/usr/share/doc")) walk("/usr/share/doc", 0);
    if (found.length === 0) {
      console.warn("read.pdf.test: no PDF under /usr/share/doc on this machine, so the real-PDF test checks nothing.");
      return;
    }
    using tmp = tempDir();
    for (const file of found) {
      const r = kt(["read", file, "--pages", "1-2"], { cwd: tmp.path, stateDir: join(tmp.path, "state") });
      expect(r.exitCode, `${file}: ${r.stdout}${r.stderr}`).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} · PDF, \\d+ pages?\\n--- page 1 of \\d+ ---\\n`));
      expect(r.stdout.replace(/^--- page.*$/gm, "").replace(/^.* · PDF.*$/m, "").trim().length, `${file} has text on its first pages`).toBeGreaterThan(20);
    }
  });

  test("through kt mcp: the same text as kt read", async () => {
    using tmp = tempDir();
    const { work } = workspace(tmp);
    const expected = kt(["read", "a.pdf"], { cwd: work, stateDir: join(tmp.path, "cli") }).stdout.slice(0, -1);
    const client = new Client({ name: "kt-test", version: "0" });
    await client.connect(new StdioClientTransport({ command: KT, args: ["mcp"], cwd: work, env: { PATH: process.env.PATH ?? "", KT_STATE_DIR: join(tmp.path, "state"), NO_COLOR: "1" }, stderr: "pipe" }));
    try {
      expect(await client.callTool({ name: "read", arguments: { file_path: "a.pdf" } })).toEqual({ content: [{ type: "text", text: expected }], isError: false });
      expect(await client.callTool({ name: "read", arguments: { file_path: "long.pdf", pages: "45" } })).toEqual({
        content: [{ type: "text", text: `${work}/long.pdf · PDF, 45 pages\n--- page 45 of 45 ---\nThis is page 45.` }],
        isError: false,
      });
    } finally {
      await client.close();
    }
  });
});
