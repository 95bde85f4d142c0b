// The diagnostics block that write, edit, apply_patch and undo append (SPEC §8.1). The gate
// is asked first, without loading anything of the language servers: a file no server could
// cover costs an extension lookup. Never thrown: a change that landed is reported as made,
// whatever its servers do.
import type { ToolContext, ToolOutput } from "../core/result.ts";
import { coverage, diagnosticsOff } from "../lsp/gate.ts";

export interface ChangedFile {
  display: string;
  real: string;
  /** null: absent (created by / removed by the change). */
  before: Uint8Array | string | null;
  after: Uint8Array | string | null;
}

function text(content: Uint8Array | string | null): string | null {
  if (content === null) return null;
  const s = typeof content === "string" ? content : Buffer.from(content.buffer, content.byteOffset, content.byteLength).toString("utf8");
  return s.startsWith("\uFEFF") ? s.slice(1) : s;
}

/**
 * What the servers say about a change that was made; {} when nothing is to be said. At
 * most `max` of the files a server may cover are asked about (in the order given), and a
 * line says so when there were more.
 */
export async function diagnoseChange(ctx: ToolContext, files: readonly ChangedFile[], max = Infinity): Promise<{ text?: string; diagnostics?: readonly object[] }> {
  if (ctx.flags.dryRun || diagnosticsOff(ctx.flags)) return {};
  const covers = coverage(ctx);
  const covered = files.filter((f) => covers(f.real));
  if (covered.length === 0) return {};
  const asked = covered.slice(0, max);
  try {
    const { afterChange } = await import("../lsp/index.ts");
    const got = await afterChange(ctx, asked.map((f) => ({ path: f.real, display: f.display, before: text(f.before), after: text(f.after) })));
    if (asked.length === covered.length) return got;
    const { uncheckedLine } = await import("../lsp/render.ts");
    const line = uncheckedLine(asked.length, covered.length);
    return { ...got, text: got.text ? `${got.text}\n\n${line}` : line };
  } catch (error) {
    ctx.warn(`diagnostics skipped: ${(error as Error).message}`);
    return {};
  }
}

/** `out` with the block after its text and the full lists in its metadata. */
export async function withDiagnostics(ctx: ToolContext, out: ToolOutput, files: readonly ChangedFile[], max = Infinity): Promise<ToolOutput> {
  const got = await diagnoseChange(ctx, files, max);
  if (!got.text && !got.diagnostics) return out;
  return { ...out, ...(got.text ? { content: `${out.content}\n\n${got.text}` } : {}), ...(got.diagnostics ? { diagnostics: got.diagnostics } : {}) };
}
