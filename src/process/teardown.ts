// Ending a session (SPEC §2): its running processes are stopped (each announced first),
// then its stamps, its process rows and its files (spill, logs, FIFOs) are removed.
import { existsSync, readdirSync, rmSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { index, safeName, STAMP_LOG, withWriteLock } from "../core/state.ts";
import { privateSubdir } from "../core/statefs.ts";
import { foldStampLogs } from "../core/stamps.ts";
import { expireHistory, removeLetGo, type LetGo } from "../core/history.ts";
import { shortCommand } from "./format.ts";
import { forgetSession, isFinal, reconcile, sessionRows } from "./registry.ts";
import { marked } from "./descendants.ts";
import { escapedSentence } from "./ending.ts";
import { markerValue } from "./env.ts";
import { terminate } from "./kill-tree.ts";
import { forgetOwner, OWNERS } from "./owner.ts";
import { stopRow } from "./stop.ts";

export interface Ended {
  stopped: number;
  /** Processes left behind by commands whose supervisor was gone, found by their marker and stopped. */
  strays: number;
  /** Processes that survived SIGKILL. */
  escaped: number;
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
  const stopped = await Promise.all(live.map((r) => stopRow(ctx, r)));
  // A command whose supervisor is gone (killed, or its row already final) may have left
  // processes behind: they still carry its marker.
  const markers = new Set(sessionRows(db, ctx.session).map((r) => markerValue(resolve(ctx.stateDir), r.key)));
  const strays = () => [...marked()].flatMap(([value, procs]) => (markers.has(value) ? procs : []));
  const found = strays();
  if (found.length > 0) say(`Stopping ${found.length === 1 ? "1 process" : `${found.length} processes`} left behind by the session's commands: ${found.slice(0, 5).map((p) => `pid ${p.pid} (${p.comm})`).join(", ")}.`);
  const swept = found.length > 0 ? await terminate(strays) : { escaped: [] };
  const escaped = [...stopped.flatMap((s) => s.escaped), ...swept.escaped];
  if (escaped.length > 0) say(escapedSentence(escaped));
  // The session's history stays (SPEC §8.6): kept versions outlive it for HISTORY_DAYS, within
  // the cap, so that `kt undo --last --session ID` can still revert what it did.
  let expired: LetGo | undefined;
  const stamps = withWriteLock(db, () => {
    // The session's reads still in the log are its stamps too: folded, then removed with the rest.
    foldStampLogs(db, ctx.stateDir);
    forgetSession(db, ctx.session);
    expired = expireHistory(ctx.stateDir, db);
    const removed = db.query("DELETE FROM stamps WHERE session = ?").run(ctx.session).changes;
    removeLetGo(expired.blobs);
    return removed;
  });
  if (expired) removeLetGo(expired.packs);
  return { stopped: live.length, strays: found.length, escaped: escaped.length, stamps, ...removeSessionFiles(ctx) };
}

/** The session's files (spill, logs, FIFOs, its owner) removed, its kept history left; its folder too when nothing is kept. */
export function removeSessionFiles(ctx: { stateDir: string; session: string }): { files: number; bytes: number } {
  forgetOwner(ctx.stateDir, ctx.session);
  if (!existsSync(join(ctx.stateDir, "sessions", safeName(ctx.session)))) return { files: 0, bytes: 0 };
  // Checked as every use checks it (a real directory of this user's): removal never goes through a link.
  const dir = join(privateSubdir(ctx.stateDir, "sessions"), safeName(ctx.session));
  let files = 0;
  let bytes = 0;
  for (const name of entries(dir)) {
    if (name === "history") continue;
    const path = join(dir, name);
    let st;
    try {
      st = statSync(path);
    } catch {
      continue;
    }
    // Counted as before: regular files only (a socket or FIFO is no file kept).
    const measured = st.isDirectory() ? measure(path) : st.isFile() ? { files: 1, bytes: st.size } : { files: 0, bytes: 0 };
    files += measured.files;
    bytes += measured.bytes;
    rmSync(join(dir, name), { recursive: true, force: true });
  }
  // Nothing kept: the session's folder goes too.
  if (entries(dir).length === 0) rmSync(dir, { recursive: true, force: true });
  return { files, bytes };
}

/** Every session the state directory knows of: by its processes, its stamps, or its files. */
export function sessionNames(stateDir: string): string[] {
  const names = new Set<string>();
  if (existsSync(join(stateDir, "index.db")) || existsSync(join(stateDir, STAMP_LOG))) {
    const db = index({ stateDir, warn: () => {} });
    foldStampLogs(db, stateDir);
    for (const table of ["processes", "stamps"]) {
      for (const r of db.query(`SELECT DISTINCT session FROM ${table}`).all() as { session: string }[]) names.add(r.session);
    }
  }
  // A session with only files (spill) or only a live MCP server (its owner) and no rows: its
  // directory's or owner file's name is its safe name.
  const dirs = [...entries(join(stateDir, "sessions")), ...entries(join(stateDir, OWNERS))];
  const known = new Set([...names].map(safeName));
  for (const d of dirs) if (!known.has(d)) names.add(d);
  return [...names].sort();
}

function entries(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
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
