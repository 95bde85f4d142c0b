// Middle-out truncation with spill (SPEC §3.2): keep head and tail, one marker line
// between them naming the spill file that holds the full text. Cuts never split a
// UTF-8 character.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { safeName, sessionDir } from "./state.ts";
import type { ToolContext, ToolResult, Truncation } from "../tools/tool.ts";

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

  const headBudget = Math.floor((limits.maxBytes * limits.headLines) / (limits.headLines + limits.tailLines));
  const tailBudget = limits.maxBytes - headBudget;
  const head = takeLines(lines, limits.headLines, headBudget, false);
  const tail = takeLines(lines.slice(head.count), limits.tailLines, tailBudget, true);
  const omittedLines = lines.length - head.count - tail.count + (head.partial ? 1 : 0) + (tail.partial ? 1 : 0);
  const shownBytes = Buffer.byteLength(head.text) + Buffer.byteLength(tail.text);
  const spillPath = spill(text);
  const marker = omissionMarker(omittedLines, totalBytes - shownBytes, spillPath);
  const parts = [head.text, marker, tail.text].filter((p, i) => i === 1 || p.length > 0);
  return {
    text: parts.join("\n"),
    truncation: {
      originalBytes: totalBytes,
      originalLines: lines.length,
      shownHeadLines: head.count,
      shownTailLines: tail.count,
      omittedLines,
      ...(spillPath ? { spillPath } : {}),
    },
  };
}

interface Taken {
  text: string;
  count: number;
  /** The last line taken was cut (a single line longer than the whole budget). */
  partial: boolean;
}

function takeLines(lines: string[], maxCount: number, budget: number, fromEnd: boolean): Taken {
  const picked: string[] = [];
  let bytes = 0;
  let partial = false;
  for (let i = 0; i < lines.length && picked.length < maxCount; i++) {
    const line = lines[fromEnd ? lines.length - 1 - i : i]!;
    const size = Buffer.byteLength(line) + 1;
    if (bytes + size > budget) {
      if (picked.length === 0 && budget > 64) {
        picked.push(fromEnd ? `…${cutToBytes(line, budget - 4, true)}` : `${cutToBytes(line, budget - 4, false)}…`);
        partial = true;
      }
      break;
    }
    picked.push(line);
    bytes += size;
  }
  if (fromEnd) picked.reverse();
  return { text: picked.join("\n"), count: picked.length, partial };
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
  return `[... ${lines.toLocaleString("en-US")} lines omitted (${formatBytes(bytes)}).${where}]`;
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
    writeFileSync(path, text, { mode: 0o600 });
    return path;
  } catch (error) {
    if (warn) ctx.warn(`kt: could not save the full output to the state directory: ${(error as Error).message}`);
    return undefined;
  }
}

/** The 64 KB cap on any result, whatever the tool did. */
export function backstop(result: ToolResult, tool: string, ctx: ToolContext): void {
  if (result.content.length <= BACKSTOP_BYTES / 4 || Buffer.byteLength(result.content) <= BACKSTOP_BYTES) return;
  const cut = middleOut(
    result.content,
    { maxLines: Number.MAX_SAFE_INTEGER, maxBytes: BACKSTOP_BYTES - 512, headLines: 1e9, tailLines: 1e9 },
    (full) => spillFile(ctx, tool, full),
  );
  result.content = cut.text;
  if (cut.truncation) result.metadata.truncation = cut.truncation;
}
