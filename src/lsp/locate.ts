// Which server serves a file, and for which project root (SPEC §8.1): the table with the
// project's .kt/lsp.json over it, each entry's executable found in the project's
// node_modules/.bin or on PATH, and the root as the nearest directory holding one of the
// entry's root markers, at or below kt's --root.
import { accessSync, constants, existsSync, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { delimiter, dirname, isAbsolute, join, resolve } from "node:path";
import { BUILTIN, extensionOf, type ServerEntry } from "./table.ts";

/** An entry ready to start: its executable resolved and its project root chosen. */
export interface Located {
  entry: ServerEntry;
  executable: string;
  root: string;
  initializationOptions?: Record<string, unknown>;
}

export interface Lookup {
  /** The server that serves the file, when one is installed. */
  found?: Located;
  /** The entries that would cover the file (installed or not), for NO_LANGUAGE_SERVER prose. */
  candidates: ServerEntry[];
  /** A project root was found for the file (no root: no server runs, whatever is installed). */
  root?: string;
  /** What was wrong with .kt/lsp.json, if anything. */
  configProblem?: string;
}

export const CONFIG_FILE = join(".kt", "lsp.json");

/** The table as the project's .kt/lsp.json (under `base`) leaves it. */
export function serverTable(base: string): { entries: ServerEntry[]; problem?: string } {
  const path = join(base, CONFIG_FILE);
  if (!existsSync(path)) return { entries: [...BUILTIN] };
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    return { entries: [...BUILTIN], problem: `${path} is not valid JSON (${(error as Error).message}); the built-in servers are used` };
  }
  const servers = (parsed as { servers?: unknown })?.servers;
  if (typeof servers !== "object" || servers === null || Array.isArray(servers)) {
    return { entries: [...BUILTIN], problem: `${path} has no "servers" object; the built-in servers are used` };
  }
  const entries = [...BUILTIN];
  const added: ServerEntry[] = [];
  for (const [id, raw] of Object.entries(servers as Record<string, unknown>)) {
    if (typeof raw !== "object" || raw === null) return { entries: [...BUILTIN], problem: `${path}: servers.${id} is not an object` };
    const o = raw as Record<string, unknown>;
    const at = entries.findIndex((e) => e.id === id);
    if (o.disabled === true) {
      if (at >= 0) entries.splice(at, 1);
      continue;
    }
    const base = at >= 0 ? entries[at]! : undefined;
    const strings = (v: unknown) => Array.isArray(v) && v.every((s) => typeof s === "string");
    if (o.command !== undefined && typeof o.command !== "string") return { entries: [...BUILTIN], problem: `${path}: servers.${id}.command must be a string` };
    for (const field of ["args", "extensions", "rootMarkers"] as const) {
      if (o[field] !== undefined && !strings(o[field])) return { entries: [...BUILTIN], problem: `${path}: servers.${id}.${field} must be a list of strings` };
    }
    const command = (o.command as string | undefined) ?? base?.command;
    const extensions = ((o.extensions as string[] | undefined) ?? base?.extensions)?.map((e) => (e.startsWith(".") ? e : `.${e}`).toLowerCase());
    if (!command || !extensions) return { entries: [...BUILTIN], problem: `${path}: servers.${id} needs "command" and "extensions"` };
    const entry: ServerEntry = {
      id,
      language: typeof o.language === "string" ? o.language : base?.language ?? id,
      command,
      args: (o.args as string[] | undefined) ?? base?.args ?? [],
      extensions,
      rootMarkers: (o.rootMarkers as string[] | undefined) ?? base?.rootMarkers ?? [],
      install: base?.install ?? `see ${path}`,
      ...(isObject(o.initializationOptions) ? { initializationOptions: o.initializationOptions } : base?.initializationOptions ? { initializationOptions: base.initializationOptions } : {}),
      ...(isObject(o.settings) ? { settings: o.settings } : base?.settings ? { settings: base.settings } : {}),
    };
    if (base) entries[at] = entry;
    else added.push(entry);
  }
  // A project's own servers come before the built-in ones for the same files.
  return { entries: [...added, ...entries] };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Extensions the project's .kt/lsp.json adds (one existence check when there is none). */
export function configuredExtensions(base: string): Set<string> {
  if (!existsSync(join(base, CONFIG_FILE))) return new Set();
  return new Set(serverTable(base).entries.flatMap((e) => e.extensions));
}

/**
 * The server for `file`: the first entry covering its extension that is installed and has a
 * project root. `limit` is kt's --root (the root search stops there); `base` holds .kt/.
 */
export function locate(file: string, opts: { limit?: string; base: string }): Lookup {
  const ext = extensionOf(file);
  const table = serverTable(opts.base);
  const candidates = table.entries.filter((e) => e.extensions.includes(ext));
  const out: Lookup = { candidates, ...(table.problem ? { configProblem: table.problem } : {}) };
  for (const entry of candidates) {
    const root = projectRoot(dirname(file), entry.rootMarkers, opts.limit);
    if (!root) continue;
    out.root ??= root;
    const executable = findExecutable(entry, root, opts.limit);
    if (!executable) continue;
    const init = initializationOptions(entry, executable, root, opts.limit);
    if (init === null) continue;
    out.found = { entry, executable, root, ...(init ? { initializationOptions: init } : {}) };
    return out;
  }
  return out;
}

/** The nearest directory from `dir` upwards holding one of `markers`, not above `limit`. */
export function projectRoot(dir: string, markers: readonly string[], limit?: string, memo?: Map<string, string | null>): string | undefined {
  if (limit && !isAt(dir, limit)) return undefined;
  // memo: each directory's answer, for the many directories of one change (same limit), which
  // share their ancestors: every directory is asked for the markers once.
  const key = (at: string) => `${markers.join("\0")}\0${at}`;
  const visited: string[] = [];
  let root: string | null = null;
  for (let at = dir; ; at = dirname(at)) {
    const known = memo?.get(key(at));
    if (known !== undefined) {
      root = known;
      break;
    }
    visited.push(at);
    if (markers.some((marker) => existsSync(join(at, marker)))) {
      root = at;
      break;
    }
    if (at === limit || dirname(at) === at) break;
  }
  if (memo) for (const at of visited) memo.set(key(at), root);
  return root ?? undefined;
}

function isAt(dir: string, limit: string): boolean {
  return dir === limit || dir.startsWith(limit.endsWith("/") ? limit : `${limit}/`);
}

/** node_modules/.bin directories from the project root up to the limit (or /). */
function binDirs(root: string, limit?: string): string[] {
  const out: string[] = [];
  for (let at = root; ; at = dirname(at)) {
    out.push(join(at, "node_modules", ".bin"));
    if (at === limit || dirname(at) === at) return out;
  }
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * Whether `entry`'s server is installed for a project at `root` (what locate looks for,
 * without its options). `seen` remembers each path looked at, for the many roots of one
 * change (a replace over node_modules has hundreds of package roots, which share PATH and
 * most of their node_modules/.bin directories).
 */
export function installed(entry: ServerEntry, root: string, limit?: string, seen?: Map<string, boolean>): boolean {
  return findExecutable(entry, root, limit, seen) !== undefined;
}

function findExecutable(entry: ServerEntry, root: string, limit?: string, seen?: Map<string, boolean>): string | undefined {
  const runs = (path: string) => {
    if (!seen) return executable(path);
    let is = seen.get(path);
    if (is === undefined) seen.set(path, (is = executable(path)));
    return is;
  };
  if (entry.command.includes("/")) {
    const path = isAbsolute(entry.command) ? entry.command : resolve(root, entry.command);
    return runs(path) ? path : undefined;
  }
  if (entry.id === "tsgo") return nativeTsc(root, limit, seen);
  for (const dir of binDirs(root, limit)) {
    const path = join(dir, entry.command);
    if (runs(path)) return path;
  }
  if (entry.projectOnly) return undefined;
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    const path = join(dir, entry.command);
    if (runs(path)) return path;
  }
  return undefined;
}

/** TypeScript 7's tsc, which has --lsp, from the project's node_modules (a TypeScript 5 tsc has not). */
function nativeTsc(root: string, limit?: string, seen?: Map<string, boolean>): string | undefined {
  for (const bin of binDirs(root, limit)) {
    const pkg = join(dirname(bin), "typescript");
    // A directory with no TypeScript 7 is looked in once for the many roots of a change.
    const key = `tsgo\0${pkg}`;
    if (seen?.get(key) === false) continue;
    try {
      const version = (JSON.parse(readFileSync(join(pkg, "package.json"), "utf8")) as { version?: string }).version ?? "";
      const tsc = join(pkg, "bin", "tsc");
      if (Number(version.split(".")[0]) >= 7 && existsSync(tsc)) return tsc;
    } catch {
      // No typescript here.
    }
    seen?.set(key, false);
  }
  return undefined;
}

/**
 * The initializationOptions to start with; null when the entry cannot run here
 * (typescript-language-server without a TypeScript that has a tsserver).
 */
function initializationOptions(entry: ServerEntry, executable: string, root: string, limit?: string): Record<string, unknown> | undefined | null {
  if (entry.id !== "typescript-language-server") return entry.initializationOptions;
  const given = entry.initializationOptions?.tsserver as { path?: string } | undefined;
  if (given?.path) return entry.initializationOptions;
  const tsserver = findTsserver(executable, root, limit);
  if (!tsserver) return null;
  return { ...entry.initializationOptions, tsserver: { ...(given ?? {}), path: tsserver } };
}

/**
 * A tsserver.js: the project's own TypeScript first, then one installed beside the server
 * (under any name: TypeScript 5 kept beside a TypeScript 7 is installed by an alias).
 */
function findTsserver(serverBin: string, root: string, limit?: string): string | undefined {
  const modules = binDirs(root, limit).map((bin) => dirname(bin));
  try {
    const real = realpathSync(serverBin);
    const at = real.lastIndexOf("/node_modules/");
    if (at >= 0) modules.push(real.slice(0, at + "/node_modules".length));
  } catch {
    // Not resolvable: only the project's own.
  }
  for (const dir of modules) {
    const own = join(dir, "typescript", "lib", "tsserver.js");
    if (existsSync(own)) return own;
  }
  for (const dir of modules) {
    let names: string[];
    try {
      names = readdirSync(dir).filter((n) => n.startsWith("typescript") && n !== "typescript-language-server").sort();
    } catch {
      continue;
    }
    for (const name of names) {
      const path = join(dir, name, "lib", "tsserver.js");
      if (existsSync(path)) return path;
    }
  }
  return undefined;
}
