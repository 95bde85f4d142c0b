// Ending a session (SPEC §2): its running processes are stopped (each announced first),
// then its stamps, its process rows and its files (spill, logs, FIFOs) are removed.
import { readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { index, safeName, withWriteLock } from "../core/state.ts";
import { dropHistory } from "../core/history.ts";
import { shortCommand } from "./format.ts";
import { isFinal, reconcile, sessionRows } from "./registry.ts";
import { stopRow } from "./stop.ts";

export interface Ended {
  stopped: number;
  stamps: number;
  files: number;
  bytes: number;
}

export async function endSession(ctx: { stateDir: string; session: string; warn(message: string): void }, say: (line: string) => void): Promise<Ended> {
  const db = index(ctx);
  const live = sessionRows(db, ctx.session)
    .map((r) => reconcile(db, r))
    .filter((r) => !isFinal(r.status));
  for (const r of live) say(`Stopping ${r.id ?? "a running bash command"} (${shortCommand(r.command)}${r.pid !== null ? `, pid ${r.pid}` : ""}).`);
  await Promise.all(live.map((r) => stopRow(ctx, r)));
  const stamps = withWriteLock(db, () => {
    db.query("DELETE FROM processes WHERE session = ?").run(ctx.session);
    db.query("DELETE FROM process_seq WHERE session = ?").run(ctx.session);
    dropHistory(db, ctx.session);
    return db.query("DELETE FROM stamps WHERE session = ?").run(ctx.session).changes;
  });
  const dir = join(ctx.stateDir, "sessions", safeName(ctx.session));
  const { files, bytes } = measure(dir);
  rmSync(dir, { recursive: true, force: true });
  return { stopped: live.length, stamps, files, bytes };
}

function measure(dir: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  let entries: import("node:fs").Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return { files, bytes };
  }
  for (const e of entries) {
    const path = join(dir, e.name);
    if (e.isDirectory()) {
      const sub = measure(path);
      files += sub.files;
      bytes += sub.bytes;
    } else if (e.isFile()) {
      files++;
      try {
        bytes += statSync(path).size;
      } catch {
        // Gone meanwhile.
      }
    }
  }
  return { files, bytes };
}
