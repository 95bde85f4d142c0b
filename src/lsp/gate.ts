// The cheap questions every write and edit asks before anything of the language servers is
// loaded (an edit of a file no server covers must cost next to nothing): are diagnostics on,
// and could a server cover this path at all — from its extension, one existence check for
// the project's .kt/lsp.json, and, for a built-in server, its project root and executable.
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { installed, projectRoot } from "./locate.ts";
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
 * its extension, installed, with a project root above it, or any when the project has a
 * .kt/lsp.json (the server may still be absent). No session host is started to say that no
 * server is there (a Python project without pyright cost a replace of 300 files 20–60 ms).
 * .kt/lsp.json is looked for once; each directory is asked for root markers once, however
 * many files and directories below it the change has (a replace over the Python standard
 * library asked 1,500 times, up every directory to /), and each executable once per root.
 */
export function coverage(ctx: { root?: string; cwd: string }): (path: string) => boolean {
  let configured: boolean | undefined;
  const limit = ctx.root;
  const roots = new Map<string, string | null>();
  const found = new Map<string, boolean>();
  const executables = new Map<string, boolean>();
  return (path) => {
    configured ??= existsSync(join(configBase(ctx), ".kt", "lsp.json"));
    if (configured) return true;
    const ext = extensionOf(path);
    if (ext === "" || !builtinCovers(ext)) return false;
    const dir = dirname(path);
    return BUILTIN.some((e) => {
      if (!e.extensions.includes(ext)) return false;
      const root = projectRoot(dir, e.rootMarkers, limit, roots);
      if (root === undefined) return false;
      const key = `${e.id}\0${root}`;
      let is = found.get(key);
      if (is === undefined) found.set(key, (is = installed(e, root, limit, executables)));
      return is;
    });
  };
}
