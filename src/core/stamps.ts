// File stamps (SPEC §3.4): per session and real path, what kt last read or wrote.
// The hash decides staleness; mtime and size are only a fast path.
import { KtError, type ToolContext } from "./result.ts";
import { index, isStateFault, stateProblem } from "./state.ts";

export interface Stamp {
  mtimeMs: number;
  size: number;
  sha256: string;
  at: number;
}

export function sha256(bytes: Uint8Array | string): string {
  return new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
}

/**
 * sha256 remembered per byte array, for one multi-file commit that names the same bytes in
 * its history rows, journal, stamps and re-checks: each content is hashed once, not five
 * times. Only for arrays nothing writes into while it is in use.
 */
export function hashOnce(): ((bytes: Uint8Array) => string) & { know(bytes: Uint8Array, sha: string): void } {
  const known = new WeakMap<Uint8Array, string>();
  const hash = (bytes: Uint8Array) => {
    let sha = known.get(bytes);
    if (sha === undefined) known.set(bytes, (sha = sha256(bytes)));
    return sha;
  };
  /** A hash the caller worked out already (the content a change was computed from). */
  const know = (bytes: Uint8Array, sha: string) => void known.set(bytes, sha);
  return Object.assign(hash, { know });
}

export function getStamp(ctx: Pick<ToolContext, "stateDir" | "warn" | "session">, real: string): Stamp | undefined {
  const row = index(ctx)
    .query("SELECT mtime_ms, size, sha256, at FROM stamps WHERE session = ? AND path = ?")
    .get(ctx.session, real) as { mtime_ms: number; size: number; sha256: string; at: number } | null;
  return row ? { mtimeMs: row.mtime_ms, size: row.size, sha256: row.sha256, at: row.at } : undefined;
}

/** Paths are asked about this many at a time (SQLite's limit on a statement's parameters is far above). */
const PATHS_PER_QUERY = 500;

/**
 * The stamps of many files at once (a patch's or a replace's), by real path: one query for a change's
 * files rather than one per file. A path without a stamp is not in the map.
 */
export function getStamps(ctx: Pick<ToolContext, "stateDir" | "warn" | "session">, reals: readonly string[]): Map<string, Stamp> {
  const out = new Map<string, Stamp>();
  const unique = [...new Set(reals)];
  for (let i = 0; i < unique.length; i += PATHS_PER_QUERY) {
    const some = unique.slice(i, i + PATHS_PER_QUERY);
    const rows = index(ctx)
      .query(`SELECT path, mtime_ms, size, sha256, at FROM stamps WHERE session = ? AND path IN (${some.map(() => "?").join(", ")})`)
      .all(ctx.session, ...some) as { path: string; mtime_ms: number; size: number; sha256: string; at: number }[];
    for (const row of rows) out.set(row.path, { mtimeMs: row.mtime_ms, size: row.size, sha256: row.sha256, at: row.at });
  }
  return out;
}

export function putStamp(ctx: Pick<ToolContext, "stateDir" | "warn" | "session">, real: string, stamp: Omit<Stamp, "at">): void {
  index(ctx)
    .query("INSERT OR REPLACE INTO stamps (session, path, mtime_ms, size, sha256, at) VALUES (?, ?, ?, ?, ?, ?)")
    .run(ctx.session, real, stamp.mtimeMs, stamp.size, stamp.sha256, Date.now());
}

/**
 * Records what a read saw, or says on stderr why it could not: a read needs no index to be
 * right, only the next write's freshness check does (and it then asks for a read again).
 */
export function noteRead(ctx: Pick<ToolContext, "stateDir" | "warn" | "session">, real: string, stamp: Omit<Stamp, "at">): void {
  try {
    putStamp(ctx, real, stamp);
  } catch (error) {
    if (!isStateFault(error)) throw error;
    ctx.warn(`the read was not recorded (a later write or edit will ask for a new read). ${stateProblem(ctx.stateDir, error)}`);
  }
}

export type Verb = "overwrite" | "edit" | "patch" | "undo" | "rename" | "change";

/**
 * Refuses a write to an existing file kt has not read (NOT_READ) or whose content
 * changed since (STALE_FILE). `--skip-read-check` waives only the first.
 */
export function assertFresh(ctx: ToolContext, display: string, real: string, currentSha: string, verb: Verb): void {
  const stamp = getStamp(ctx, real);
  if (!stamp) {
    if (ctx.flags.skipReadCheck) return;
    throw notRead(display, verb);
  }
  if (stamp.sha256 !== currentSha) throw stale(display, verb);
}

export function notRead(display: string, verb: Verb): KtError {
  return new KtError(
    "NOT_READ",
    `Refusing to ${verb} ${display}: you have not read this file in this session. Read it first so you do not destroy existing content, then write or edit it.`,
  );
}

export function stale(display: string, verb: Verb): KtError {
  return new KtError(
    "STALE_FILE",
    `Refusing to ${verb} ${display}: the file changed on disk after you last read it (content hash mismatch). Someone else may be editing it. Re-read the file and reapply your change.`,
  );
}

/** Forgets a file kt removed (apply_patch delete, undo of a created file). */
export function dropStamp(ctx: Pick<ToolContext, "stateDir" | "warn" | "session">, real: string): void {
  index(ctx).query("DELETE FROM stamps WHERE session = ? AND path = ?").run(ctx.session, real);
}
