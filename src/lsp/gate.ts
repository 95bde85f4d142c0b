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
 * Whether some server could cover a path, for the files of one change: a built-in one for
 * its extension with a project root above it, or any when the project has a .kt/lsp.json
 * (the server may still be absent). .kt/lsp.json is looked for once, and the project root
 * once for each directory and extension: a patch of 20 files in one folder asked both 20
 * times, up every directory to /.
 */
export function coverage(ctx: { root?: string; cwd: string }): (path: string) => boolean {
  let configured: boolean | undefined;
  const rooted = new Map<string, boolean>();
  return (path) => {
    configured ??= existsSync(join(configBase(ctx), ".kt", "lsp.json"));
    if (configured) return true;
    const ext = extensionOf(path);
    if (ext === "" || !builtinCovers(ext)) return false;
    const dir = dirname(path);
    const key = `${ext}\0${dir}`;
    let found = rooted.get(key);
    if (found === undefined) {
      const markers = [...new Set(BUILTIN.filter((e) => e.extensions.includes(ext)).flatMap((e) => e.rootMarkers))];
      found = projectRoot(dir, markers, ctx.root) !== undefined;
      rooted.set(key, found);
    }
    return found;
  };
}
