// Waiting for a managed command's output (SPEC §8.7, `ps wait`): the log is scanned as it
// grows, line by line, until a line matches, the command's end is recorded, the time is up
// or the caller cancels. The log is looked at every SCAN_MS (a stat, and a read only of what
// is new), so a matching line is seen within SCAN_MS of being written; the row, a database
// read, every ROW_MS. Memory is bounded by CHUNK whatever the command writes meanwhile.
import type { Database } from "bun:sqlite";
import { clean, logSize, readBytes } from "./log.ts";
import { byKey, isFinal, reconcile, type ProcessRow } from "./registry.ts";

const SCAN_MS = 25;
const ROW_MS = 100;
/** What one look reads at most; a line longer than this is tested in pieces of this size. */
const CHUNK = 1024 * 1024;

export type WatchOutcome = "match" | "ended" | "timeout" | "cancelled";

export interface Watched {
  outcome: WatchOutcome;
  /** The log byte offset up to which the output belongs to this wait: just past the matching line, else the log's end. */
  end: number;
  /** The row as it was last seen (final when `outcome` is "ended", and possibly also at a match). */
  row: ProcessRow;
}

/** Tests one line of model text (escape sequences removed, no line ending). */
export type LineTest = (line: string) => boolean;

/**
 * A scanner over a growing log from byte `from`: `advance()` tests the complete lines written
 * since the last call and returns the offset just past the first one that matches. A final
 * line without its newline yet is tested too (a prompt such as `Password: ` ends none), and
 * tested again whole once it is complete.
 */
export function scanner(log: string, from: number, test: LineTest): { advance(): number | undefined; position(): number } {
  let pos = from;
  return {
    position: () => pos,
    advance() {
      for (;;) {
        const size = logSize(log);
        if (size <= pos) return undefined;
        const to = Math.min(size, pos + CHUNK);
        const bytes = readBytes(log, pos, to);
        let start = 0;
        for (let nl = bytes.indexOf(10); nl >= 0; nl = bytes.indexOf(10, start)) {
          if (test(lineText(bytes.subarray(start, nl)))) return (pos += nl + 1);
          start = nl + 1;
        }
        const rest = bytes.subarray(start);
        if (start === 0 && bytes.length === CHUNK) {
          // One line longer than a chunk: tested in pieces, never held whole.
          if (test(lineText(rest))) return (pos += rest.length);
          pos += rest.length;
          continue;
        }
        pos += start;
        if (to < size) continue;
        if (rest.length > 0 && test(lineText(rest))) return to;
        return undefined;
      }
    },
  };
}

function lineText(bytes: Uint8Array): string {
  return clean(new TextDecoder().decode(bytes)).replace(/\r$/, "");
}

/**
 * Watches the log of row `key` from byte `from` for up to `ms`. Without a test, only the
 * command's end (or the time) ends the wait. The command is never touched.
 */
export async function watchLog(db: Database, key: number, from: number, test: LineTest | undefined, ms: number, cancel?: AbortSignal): Promise<Watched> {
  let row = reconcile(db, byKey(db, key)!);
  const scan = scanner(row.log_path, from, test ?? (() => false));
  const deadline = performance.now() + ms;
  let rowAt = performance.now();
  for (;;) {
    const hit = test ? scan.advance() : undefined;
    if (hit !== undefined) return { outcome: "match", end: hit, row: reconcile(db, byKey(db, key) ?? row) };
    if (isFinal(row.status)) {
      // Its last output may have reached the log after the look above.
      const last = test ? scan.advance() : undefined;
      if (last !== undefined) return { outcome: "match", end: last, row };
      return { outcome: "ended", end: logSize(row.log_path), row };
    }
    const now = performance.now();
    if (cancel?.aborted) return { outcome: "cancelled", end: logSize(row.log_path), row };
    if (now >= deadline) return { outcome: "timeout", end: logSize(row.log_path), row };
    await sleep(Math.min(SCAN_MS, deadline - now), cancel);
    if (performance.now() - rowAt >= ROW_MS) {
      rowAt = performance.now();
      const fresh = byKey(db, key);
      if (!fresh) return { outcome: "ended", end: logSize(row.log_path), row: { ...row, status: "lost" } };
      row = reconcile(db, fresh);
    }
  }
}

function sleep(ms: number, cancel?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, Math.max(0, ms));
    function done() {
      clearTimeout(timer);
      cancel?.removeEventListener("abort", done);
      resolve();
    }
    cancel?.addEventListener("abort", done, { once: true });
  });
}
