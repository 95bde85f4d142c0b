// Middle-out truncation with spill (SPEC §3.2): keep head and tail, one marker line
// between them naming the spill file that holds the full text. Cuts never split a
// UTF-8 character.
import { join } from "node:path";
import { safeName, sessionDir } from "./state.ts";
import { writeStateFile } from "./statefs.ts";
import type { ToolContext, ToolResult, Truncation } from "./result.ts";
import { grouped } from "./text.ts";

export interface Limits {
  maxLines: number;
  maxBytes: number;
  headLines: number;
  tailLines: number;
}

export const BACKSTOP_BYTES = 64 * 1024;

export interface Cut {
  text: string;
  truncation?: Truncation;
}

/**
 * Truncates `text` to `limits`, keeping head and tail. `spill` is called only when a cut
 * happens and returns the path of the full text (or undefined when it could not be saved).
 */
export function middleOut(text: string, limits: Limits, spill: (full: string) => string | undefined): Cut {
  const totalBytes = Buffer.byteLength(text);
  const lines = text.split("\n");
  if (lines.length <= limits.maxLines && totalBytes <= limits.maxBytes) return { text };
  const { headBudget, tailBudget } = headTailBudgets(limits);
  const head = takeLines(lines, limits.headLines, headBudget, false);
  const tail = takeLines(lines.slice(head.count), limits.tailLines, tailBudget, true);
  return joinCut(head, tail, { lines: lines.length, bytes: totalBytes }, spill(text));
}

/** The byte budgets of head and tail, in the proportion of their line counts. */
export function headTailBudgets(limits: Limits): { headBudget: number; tailBudget: number } {
  const headBudget = Math.floor((limits.maxBytes * limits.headLines) / (limits.headLines + limits.tailLines));
  return { headBudget, tailBudget: limits.maxBytes - headBudget };
}

export interface Taken {
  text: string;
  count: number;
  bytes: number;
  /** The one line shown was cut to fit (a single line longer than the whole budget). */
  partial: boolean;
}

/** Whole lines from the start (or the end) within a count and a byte budget; a first line too long for the budget is cut. */
export function takeLines(lines: readonly string[], maxCount: number, budget: number, fromEnd: boolean, forcePartial = false): Taken {
  const picked: string[] = [];
  let bytes = 0;
  let partial = false;
  for (let i = 0; i < lines.length && picked.length < maxCount; i++) {
    const line = lines[fromEnd ? lines.length - 1 - i : i]!;
    const size = Buffer.byteLength(line) + 1;
    if (bytes + size > budget || forcePartial) {
      if (picked.length === 0 && budget > 8) {
        const cut = cutToBytes(line, budget - 4, fromEnd);
        picked.push(fromEnd ? `…${cut}` : `${cut}…`);
        bytes += Buffer.byteLength(cut) + 1;
        partial = true;
      }
      break;
    }
    picked.push(line);
    bytes += size;
  }
  if (fromEnd) picked.reverse();
  return { text: picked.join("\n"), count: picked.length, bytes, partial };
}

/** Head, the omission marker and tail, with the truncation facts for metadata. */
export function joinCut(head: Taken, tail: Taken, total: { lines: number; bytes: number }, spillPath: string | undefined): Required<Cut> {
  const omittedLines = Math.max(0, total.lines - head.count - tail.count + (head.partial ? 1 : 0) + (tail.partial ? 1 : 0));
  const omittedBytes = Math.max(0, total.bytes - Buffer.byteLength(head.text) - Buffer.byteLength(tail.text));
  const marker = omissionMarker(omittedLines, omittedBytes, spillPath);
  return {
    text: [head.text, marker, tail.text].filter((p, i) => i === 1 || p.length > 0).join("\n"),
    truncation: {
      originalBytes: total.bytes,
      originalLines: total.lines,
      shownHeadLines: head.count,
      shownTailLines: tail.count,
      omittedLines,
      ...(spillPath ? { spillPath } : {}),
    },
  };
}

/** The longest prefix (or suffix) of `text` within `maxBytes` UTF-8 bytes, never splitting a character. */
export function cutToBytes(text: string, maxBytes: number, fromEnd = false): string {
  if (maxBytes <= 0) return "";
  if (Buffer.byteLength(text) <= maxBytes) return text;
  let bytes = 0;
  if (!fromEnd) {
    let i = 0;
    for (const ch of text) {
      const size = utf8Size(ch.codePointAt(0)!);
      if (bytes + size > maxBytes) break;
      bytes += size;
      i += ch.length;
    }
    return text.slice(0, i);
  }
  let i = text.length;
  while (i > 0) {
    let start = i - 1;
    const code = text.charCodeAt(start);
    if (code >= 0xdc00 && code <= 0xdfff && start > 0) start--;
    const size = utf8Size(text.codePointAt(start)!);
    if (bytes + size > maxBytes) break;
    bytes += size;
    i = start;
  }
  return text.slice(i);
}

function utf8Size(code: number): number {
  return code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
}

export function omissionMarker(lines: number, bytes: number, spillPath: string | undefined): string {
  const where = spillPath ? ` Full output: ${spillPath} — read or grep that file for the rest.` : "";
  return `[... ${grouped(lines)} lines omitted (${formatBytes(bytes)}).${where}]`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** Saves `text` as `<state>/sessions/<session>/spill/<tool>-<callId>.txt`; undefined if it could not. */
export function spillFile(ctx: ToolContext, tool: string, text: string, warn = true): string | undefined {
  try {
    const path = join(sessionDir(ctx.stateDir, ctx.session, "spill"), `${safeName(tool)}-${safeName(ctx.callId)}.txt`);
    writeStateFile(path, text);
    return path;
  } catch (error) {
    if (warn) ctx.warn(`kt: could not save the full output to the state directory: ${(error as Error).message}`);
    return undefined;
  }
}

/** Apart from backstop, which every call runs: a function naming Buffer sets it up when first called (issue 32). */
function byteLength(text: string): number {
  return Buffer.byteLength(text);
}

/** The 64 KB cap on any result, whatever the tool did. */
export function backstop(result: ToolResult, tool: string, ctx: ToolContext): void {
  if (result.content.length <= BACKSTOP_BYTES / 4 || byteLength(result.content) <= BACKSTOP_BYTES) return;
  const cut = middleOut(
    result.content,
    { maxLines: Number.MAX_SAFE_INTEGER, maxBytes: BACKSTOP_BYTES - 512, headLines: 1e9, tailLines: 1e9 },
    (full) => spillFile(ctx, tool, full),
  );
  result.content = cut.text;
  if (cut.truncation) result.metadata.truncation = cut.truncation;
}
