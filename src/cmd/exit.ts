// How kt ends (SPEC §1), decided here and only here: 0 success, 1 the tool returned an
// error (its repair prose is on stdout), 2 kt was called wrongly, 3 an internal fault or a
// state directory kt cannot use. grep, glob and replace follow ripgrep instead (SPEC §8.6):
// 0 something matched, 1 nothing matched, 2 an error (prose on stdout, or a usage error), 3
// an internal fault. Only the bin entry (src/main.ts) calls process.exit.
import { writeSync } from "node:fs";

export const EXIT = { ok: 0, toolError: 1, usage: 2, internal: 3, noMatch: 1, searchError: 2 } as const;

/** The subcommands whose exit codes are ripgrep's. */
const AS_RIPGREP: ReadonlySet<string> = new Set(["grep", "glob", "replace"]);

/** kt was called wrongly (an unknown flag, a missing argument): exit 2, with the help to run. */
export class UsageError extends Error {
  override name = "UsageError";
}

interface Ended {
  isError: boolean;
  error?: { code: string };
  metadata?: { matches?: number; files?: number };
}

/**
 * The exit code of a command that printed a tool result (or something that failed like
 * one); `sub`: the subcommand, when it is a tool's (kt call and kt mcp give none).
 */
export function exitCode(result: Ended, sub?: string): number {
  if (sub === undefined || !AS_RIPGREP.has(sub)) return result.isError ? EXIT.toolError : EXIT.ok;
  if (result.isError) return result.error?.code === "INTERNAL" ? EXIT.internal : EXIT.searchError;
  const found = sub === "glob" ? result.metadata?.files : result.metadata?.matches;
  return found === 0 ? EXIT.noMatch : EXIT.ok;
}

/**
 * What an error that reached the bin entry prints on stderr, and the code kt exits with:
 * `sub` is the subcommand named on the command line, or "" when there is none.
 */
export function fatal(error: unknown, sub: string, verbose: boolean): { text: string; code: number } {
  const who = sub ? ` ${sub}` : "";
  if (error instanceof UsageError) return { text: `kt${who}: ${error.message}\nRun "kt${who} --help" for usage.\n`, code: EXIT.usage };
  if ((error as Error)?.name === "StateError") return { text: `kt${who}: ${(error as Error).message}\n`, code: EXIT.internal };
  const detail = verbose ? `\n${(error as Error)?.stack ?? String(error)}` : "";
  return {
    text: `kt${who}: internal error: ${(error as Error)?.message ?? String(error)}. This is a bug in kt; nothing on disk was left half-written.${detail}\n`,
    code: EXIT.internal,
  };
}

let encoder: TextEncoder | undefined;

/**
 * Writes the whole string to a file descriptor, riding out EAGAIN on non-blocking pipes.
 * False when the reader has gone (EPIPE): a caller with more to do should stop.
 */
export function writeAll(fd: number, text: string): boolean {
  // A TextEncoder's bytes, not a Buffer's: a one-shot call that never used Buffer otherwise
  // would pay for its first use here (Buffer's code is set up on first use).
  const bytes = (encoder ??= new TextEncoder()).encode(text);
  let off = 0;
  while (off < bytes.length) {
    try {
      off += writeSync(fd, bytes, off, bytes.length - off);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "EAGAIN") continue;
      if (code === "EPIPE") return false;
      throw error;
    }
  }
  return true;
}
