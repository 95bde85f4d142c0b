// Human output (warnings, progress, traces) on stderr through consola, loaded only when
// something is actually said so that a quiet run never pays for it.
import type { ConsolaInstance } from "consola";

let instance: ConsolaInstance | undefined;

export function log(): ConsolaInstance {
  if (instance) return instance;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { createConsola } = require("./_consola.ts") as typeof import("./_consola.ts");
  instance = createConsola({
    stdout: process.stderr,
    stderr: process.stderr,
    formatOptions: { colors: !process.env.NO_COLOR && process.stderr.isTTY === true, date: false },
  });
  return instance;
}
