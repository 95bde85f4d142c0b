// The shared size cap on spill files, process logs and kept file versions (SPEC §2, §7.2): when the state directory
// holds more than the cap, the files of the sessions used longest ago go first. Logs that
// a running command is still writing are never removed. Checked at most once a minute,
// by a supervisor as it starts, so no kt call waits for it.
import type { Database } from "bun:sqlite";
import { closeSync, constants, futimesSync, lstatSync, readdirSync, unlinkSync } from "node:fs";
import { lstatOrUndefined, openStateFile } from "../core/statefs.ts";
import { join } from "node:path";
import { liveFiles } from "./registry.ts";

export const CAP_BYTES = 512 * 1024 * 1024;
const CHECK_EVERY_MS = 60_000;
const SUBDIRS = ["spill", "proc", "history"];

interface Entry {
  path: string;
  size: number;
  mtimeMs: number;
  session: string;
}

/** Runs `enforceCap` unless another kt did so within the last minute. */
export function maybeEnforceCap(stateDir: string, db: Database, cap = capFromEnv()): void {
  const stamp = join(stateDir, "cap-checked");
  const st = lstatOrUndefined(stamp);
  if (st?.isFile() && Date.now() - st.mtimeMs < CHECK_EVERY_MS) return;
  // Through a descriptor opened without following a link: a link planted there moves no other file's times.
  const fd = openStateFile(stamp, constants.O_WRONLY | constants.O_CREAT);
  try {
    const now = new Date();
    futimesSync(fd, now, now);
  } finally {
    closeSync(fd);
  }
  enforceCap(stateDir, db, cap);
}

function capFromEnv(): number {
  const mb = Number(process.env.KT_STATE_CAP_MB);
  return Number.isFinite(mb) && mb > 0 ? mb * 1024 * 1024 : CAP_BYTES;
}

/** Removes the oldest sessions' files until the total is within `cap`; returns the bytes freed. */
export function enforceCap(stateDir: string, db: Database, cap = CAP_BYTES): number {
  const entries: Entry[] = [];
  const sessionsDir = join(stateDir, "sessions");
  // Only real directories are walked, and only files removed: a link there leads nowhere kt deletes.
  const realDir = (path: string) => lstatOrUndefined(path)?.isDirectory() === true;
  for (const session of realDir(sessionsDir) ? list(sessionsDir) : []) {
    for (const sub of SUBDIRS) {
      const dir = join(sessionsDir, session, sub);
      if (!realDir(join(sessionsDir, session)) || !realDir(dir)) continue;
      for (const name of list(dir)) {
        try {
          const st = lstatSync(join(dir, name));
          if (st.isFile()) entries.push({ path: join(dir, name), size: st.size, mtimeMs: st.mtimeMs, session });
        } catch {
          // Removed meanwhile.
        }
      }
    }
  }
  let total = entries.reduce((sum, e) => sum + e.size, 0);
  if (total <= cap) return 0;
  const live = liveFiles(db);
  const lastUse = new Map<string, number>();
  for (const e of entries) lastUse.set(e.session, Math.max(lastUse.get(e.session) ?? 0, e.mtimeMs));
  entries.sort((a, b) => lastUse.get(a.session)! - lastUse.get(b.session)! || a.mtimeMs - b.mtimeMs);
  let freed = 0;
  for (const e of entries) {
    if (total <= cap) break;
    if (live.has(e.path)) continue;
    try {
      unlinkSync(e.path);
      total -= e.size;
      freed += e.size;
    } catch {
      // Gone already, or not ours to remove.
    }
  }
  return freed;
}

function list(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
