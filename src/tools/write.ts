// write (SPEC §4.2): create a file or replace a whole file the session has read.
import { p } from "./params.ts";
import { statSync } from "node:fs";
import { toolText } from "./_text.ts" with { type: "macro" };
import { defineTool, KtError } from "./tool.ts";
import { absolutePath, fsError, notRegular, onOneLine, realPath } from "../core/paths.ts";
import { sha256 } from "../core/stamps.ts";
import { countLines, decodeLenient, linesOf } from "../core/text.ts";
import { decodeFile, encodeText, UTF8, type Encoding } from "../core/encoding.ts";
import { spliceKeepingEndings } from "../core/eol.ts";
import { freshContent, guardedWrite, readIfExists, refuseStateFiles } from "../core/writer.ts";
import { diffPath, unifiedDiff } from "../core/diff.ts";
import { refuseWrite } from "../sandbox/policy.ts";
import { withDiagnostics } from "./diagnostics.ts";

const description = toolText("write");

export const Parameters = p.object({
  file_path: p.string({ description: "Path of the file to write (absolute preferred)." }),
  content: p.string({ description: "The complete new content of the file." }),
});

export default defineTool({
  name: "write",
  description: description.trim(),
  parameters: Parameters,
  primary: "file_path",
  examples: ["kt write notes/todo.md --content '- ship it'", "kt write src/gen.ts --content-file /tmp/gen.ts", "generate | kt write out.txt --content-file -"],
  longText: ["content"],
  aliases: { path: "file_path", filePath: "file_path" },
  annotations: { readOnlyHint: false, destructiveHint: true },
  async execute(input, ctx) {
    const path = absolutePath(ctx, input.file_path);
    const real = realPath(ctx, path);
    const abs = onOneLine(path);
    refuseStateFiles(ctx, real, abs);
    refuseWrite(ctx, real, abs);
    try {
      const st = statSync(real);
      if (st.isDirectory()) {
        throw new KtError("IS_DIRECTORY", `${abs} is a directory, not a file. Give the path of a file inside it, e.g. ${abs.replace(/\/$/, "")}/<name>.`);
      }
      // A FIFO or device would block the write (or be written to) rather than be replaced.
      if (!st.isFile()) throw notRegular(abs, st, "write");
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "ENOENT") throw fsError(error, abs);
    }
    const current = readIfExists(real, abs, ctx);
    const base = current === null ? null : freshContent(ctx, abs, real, current, "overwrite");
    // The reported change is worked out from the content actually replaced, which under
    // parallel calls may be another call's write (SPEC §7.5).
    const plan = (now: Uint8Array | null) => {
      const file = now === null ? null : decodeFile(real, now);
      const before = file?.kind === "text" || file?.kind === "undecodable" ? file.text : now === null ? "" : decodeLenient(now);
      // A whole new content keeps the file's encoding even where its old bytes did not decode cleanly.
      const keep = file?.kind === "text" || file?.kind === "undecodable" ? file : null;
      return { bytes: encode(input.content, keep, abs), created: now === null, before, diff: unifiedDiff(diffPath(ctx, abs), before, input.content, { change: now === null ? "create" : "update" }) };
    };
    let planned = plan(base);
    let written: { note?: string } = {};
    if (!ctx.flags.dryRun) {
      const baseSha = base === null ? null : sha256(base);
      written = guardedWrite(ctx, { display: abs, real, baseSha, bytes: planned.bytes, verb: "overwrite", mkdirs: base === null, redo: (now) => (planned = plan(now)).bytes });
    }
    const { before, diff } = planned;
    const lines = countLines(input.content);
    const dry = ctx.flags.dryRun ? " (dry run: nothing was written)" : "";
    const said = planned.created
      ? `Wrote ${abs} (${linesOf(lines)}).${dry}`
      : `Replaced ${abs} (was ${linesOf(countLines(before))}, now ${linesOf(lines)}).${dry}`;
    // A dry run shows what would be written as edit's and patch's do: the diff after a blank line.
    const shown = ctx.flags.dryRun && diff.patch !== "" ? `${said}\n\n${diff.patch.trimEnd()}` : said;
    const content = written.note ? `${shown}\n${written.note}` : shown;
    return withDiagnostics(ctx, {
      content,
      title: planned.created ? `Write ${abs} · new file · ${linesOf(lines)}` : `Write ${abs} · +${diff.additions} −${diff.deletions}`,
      diff: diff.patch,
      additions: diff.additions,
      deletions: diff.deletions,
      extra: { path: abs, created: planned.created, lines, dryRun: ctx.flags.dryRun },
    }, [{ display: abs, real, before: planned.created ? null : before, after: planned.bytes }]);
  },
});

/**
 * The bytes to write: the existing file's encoding (its BOM included) and line endings carried
 * over to the new content — line by line in a file that mixes them. A binary file is replaced
 * by UTF-8, as a new file is; UTF-8 with stray bytes by valid UTF-8.
 */
function encode(content: string, current: { text: string; encoding: Encoding } | null, abs: string): Uint8Array {
  if (current === null) return encodeText(content, UTF8, abs);
  const text = current.text.includes("\r\n")
    ? spliceKeepingEndings(current.text, [{ start: 0, end: current.text.length, text: content.replace(/\r\n/g, "\n") }])
    : content;
  return encodeText(text, current.encoding, abs);
}
