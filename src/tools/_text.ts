// Runs at build time only: imported as a Bun macro, so `bun build` inlines each tool's
// description as a string (from source, Bun calls it when it transpiles the importer). A
// `with { type: "text" }` import is, in the compiled binary, a file of its own that the tool's
// module requires as it loads: about 0.4 ms of every `kt read` (issue 32's profile).
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** src/tools/NAME.txt, as it is. */
export function toolText(name: string): string {
  if (!/^[a-z]+$/.test(name)) throw new Error(`toolText: not a tool name: ${name}`);
  return readFileSync(join(import.meta.dir, `${name}.txt`), "utf8");
}
