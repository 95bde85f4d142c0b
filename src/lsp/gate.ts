// The cheap questions every write and edit asks before anything of the language servers is
// loaded (an edit of a file no server covers must cost next to nothing): are diagnostics on,
// and could a server cover this path at all — from its extension, and one existence check
// for the project's .kt/lsp.json.
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { projectRoot } from "./locate.ts";
import { BUILTIN, builtinCovers, extensionOf } from "./table.ts";

export { routing } from "./routing.ts";

/** Off by a person's switch: --no-diagnostics (ctx.flags) or KT_DIAGNOSTICS=0; never by a model. */
export function diagnosticsOff(flags: { noDiagnostics?: boolean }): boolean {
  return flags.noDiagnostics === true || process.env.KT_DIAGNOSTICS === "0";
}

/** The directory whose .kt/lsp.json applies: kt's --root, else the working directory. */
export function configBase(ctx: { root?: string; cwd: string }): string {
  return ctx.root ?? ctx.cwd;
}

/**
 * Whether some server could cover `path`: a built-in one for its extension with a project
 * root above it, or any when the project has a .kt/lsp.json (the server may still be absent).
 */
export function mayCover(ctx: { root?: string; cwd: string }, path: string): boolean {
  if (existsSync(join(configBase(ctx), ".kt", "lsp.json"))) return true;
  const ext = extensionOf(path);
  if (ext === "" || !builtinCovers(ext)) return false;
  const markers = [...new Set(BUILTIN.filter((e) => e.extensions.includes(ext)).flatMap((e) => e.rootMarkers))];
  return projectRoot(dirname(path), markers, ctx.root) !== undefined;
}
