// Writing to a managed command's stdin from any kt call: its stdin is a FIFO that the
// supervisor holds open, so the bytes reach the command without a relay. The write never
// blocks: a program that stops reading fills the pipe, and the caller is told how much fit.
import { closeSync, constants, writeSync } from "node:fs";
import { openStateFile, writeStateFile } from "../core/statefs.ts";

/** A request file beside the stdin FIFO: `ps write` of a lone Ctrl-D for this command. */
export function endOfInputRequest(stdin: string): string {
  return `${stdin}.eof`;
}

/** Asks the supervisor of a command (its own, or the session's host) to let go of its stdin; the request is read on SIGUSR2. */
export function requestEndOfInput(stdin: string): void {
  writeStateFile(endOfInputRequest(stdin), "");
}

/** Writes to the stdin FIFO without ever blocking on it; undefined when nobody holds it open. */
export async function sendToFifo(path: string, bytes: Buffer): Promise<number | undefined> {
  let fd: number;
  try {
    fd = openStateFile(path, constants.O_WRONLY | constants.O_NONBLOCK, "fifo");
  } catch {
    return undefined;
  }
  let sent = 0;
  const deadline = performance.now() + 2000;
  try {
    while (sent < bytes.length) {
      try {
        sent += writeSync(fd, bytes, sent, bytes.length - sent);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === "EPIPE") return sent === 0 ? undefined : sent;
        if (code !== "EAGAIN" || performance.now() > deadline) break;
        await Bun.sleep(10);
      }
    }
  } finally {
    closeSync(fd);
  }
  return sent;
}
