// What a grep or glob call searches: the resolved path, the directory actually walked,
// the filters, and how a found file is shown. Explicit naming widens the walk: the
// literal leading directories of a pattern or include become the walk root (entered even
// when ignored, hidden or noise), a noise name written in the path or the pattern is not
// skipped (nor a directory of that name holding noise evidence), and a segment written
// with a leading "." lets the walk see hidden entries. no_ignore drops the ignore files
// and the noise rule altogether (hidden entries stay a rule of their own).
import { accessSync, closeSync, constants, readSync, statSync } from "node:fs";
import { isAbsolute, join, relative } from "node:path";
import picomatch from "picomatch";
import { KtError, type ToolContext } from "../core/result.ts";
import { refuseRead } from "../sandbox/policy.ts";
import { absolutePath, displayPath, fsError, onOneLine, openNonBlocking, realPath } from "../core/paths.ts";
import { notFound } from "../core/suggest.ts";
import { ALWAYS_NOISE } from "./walk.ts";
import { globTest } from "./globlang.ts";
import { typeGlobs } from "./types.ts";
import type { ReplaceSpec } from "./rewrite.ts";
import { grouped } from "../core/text.ts";

export interface SearchPlan {
  /** Binary files the pattern matches are named in the outcome (replace's note), not only
   * dropped as grep drops them. */
  noteBinary?: boolean;
  /** A replace's change of each file the pattern is found in, worked out by the thread that
   * found it (the built-in engine's walks; search/rewrite.ts). */
  replace?: ReplaceSpec;
  /** With replace: the threads also write each change's temp file, registered under this
   * token (search/rewrite.ts takeStaged), for the commit to take. */
  stage?: string;
  /** The search path, absolute, as given (not symlink-resolved): the base of displayed paths. */
  abs: string;
  /** Its real path. */
  real: string;
  /** The path is a single file. */
  file: boolean;
  /** The directory walked: `real` plus the pattern's literal leading directories. */
  walkRoot: string;
  /** walkRoot relative to real ("" when the same). */
  walkRel: string;
  /** The literal leading directories of the pattern do not exist (nothing to find). */
  missing: boolean;
  hidden: boolean;
  /** Directory names always skipped (ALWAYS_NOISE less those named). */
  noise: ReadonlySet<string>;
  /** Directories holding noise evidence are skipped (false with no_ignore)... */
  evidence: boolean;
  /** ...unless their name is written in the path or the pattern. */
  exempt: ReadonlySet<string>;
  /** Ignore files apply (false with no_ignore). */
  ignores: boolean;
  /** The pattern or include filter, on a path relative to `real`. */
  match: ((rel: string) => boolean) | null;
  /** The pattern or include as given, after normalization. */
  glob: string | null;
  /** A slash-less glob is matched against base names (see fileFilter). */
  basename: boolean;
  /** grep's type filter: file-name globs, one of which a file's name must match. */
  types: readonly string[] | null;
  deadline: number;
  /** With a root (--root), the real path every file and directory opened must be at or
   * below, verified on the opened descriptor: walkRoot, which the walk never leaves (it
   * follows no symbolic links). Null without a root, where nothing is checked. */
  confine: string | null;
}

export interface SearchOutcome {
  timedOut: boolean;
  /** Paths relative to `real` that could not be read. */
  unreadable: string[];
  /** Files whose search failed or gave up part-way (built-in engine): the result is partial. */
  skipped?: string[];
  /** Directories pruned at the walk's boundary (skipped.ts). */
  pruned?: string[];
  /** With plan.noteBinary: binary files (a NUL byte) the pattern matches, left out. */
  binary?: string[];
}

const TIME_LIMIT_MS = 10_000;

/** The time limit; KT_GREP_TIMEOUT_MS exists for tests and benchmarks only. */
export function timeLimitMs(): number {
  const raw = Number(process.env.KT_GREP_TIMEOUT_MS);
  return Number.isFinite(raw) && raw >= 0 ? raw : TIME_LIMIT_MS;
}

export interface PlanInput {
  tool: "grep" | "glob";
  path: string | undefined;
  /** glob's pattern or grep's include. */
  glob: string | undefined;
  /** A slash-less glob matches base names at any depth (grep's include, like rg -g). */
  basename: boolean;
  /** grep's type: a name from rg's file types (types.ts). */
  type?: string;
  /** Search ignored files and noise directories too. */
  noIgnore?: boolean;
}

function probeNonBlocking(real: string, abs: string): void {
  const fd = openNonBlocking(real, abs);
  try {
    readSync(fd, Buffer.alloc(1), 0, 1, null);
  } catch (error) {
    throw fsError(error, abs);
  } finally {
    closeSync(fd);
  }
}

export function makePlan(ctx: ToolContext, input: PlanInput, started = performance.now()): SearchPlan {
  const abs = absolutePath(ctx, input.path ?? ".");
  const real = realPath(ctx, abs);
  refuseRead(ctx, real, onOneLine(abs));
  let st;
  try {
    st = statSync(real);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") throw notFound(ctx, abs);
    throw fsError(error, abs);
  }
  const file = st.isFile();
  if (!file && !st.isDirectory()) {
    throw new KtError("INVALID_ARGS", `${onOneLine(abs)} is not a regular file or directory (it is a device, socket or pipe); ${input.tool} cannot search it. Give a directory or a file.`);
  }
  if (file && input.tool === "glob") {
    throw new KtError("NOT_A_DIRECTORY", `${onOneLine(abs)} is a file, not a directory; glob lists files below a directory. Give the directory as path (e.g. ${onOneLine(displayPath(ctx, join(abs, "..")))}) and the file name as pattern, or use read on the file.`);
  }
  try {
    accessSync(real, file ? constants.R_OK : constants.R_OK | constants.X_OK);
  } catch (error) {
    throw fsError(error, abs);
  }
  // A "file" of size 0 may be one that waits for data (/proc/kmsg): rg and the built-in
  // engine would block on it for ever. One non-blocking read tells.
  if (file && st.size === 0) probeNonBlocking(real, abs);
  const named = new Set<string>();
  for (const part of (input.path ?? "").split(/[\\/]/)) named.add(part);
  let glob: string | null = null;
  let prefix = "";
  let hidden = true;
  if (input.glob !== undefined && !file) {
    glob = normalizeGlob(input.glob, abs, real, input.tool);
    const segments = glob.split("/");
    for (const s of segments) {
      named.add(s);
      if (s.startsWith(".") && s !== "." && s !== "..") hidden = false;
    }
    prefix = literalPrefix(segments);
  }
  const ignores = input.noIgnore !== true;
  const noise = new Set<string>(ignores ? ALWAYS_NOISE.filter((n) => !named.has(n)) : []);
  named.delete("");
  let walkRoot = real;
  let missing = false;
  if (prefix) {
    // Through a symbolic link the named directory may lie elsewhere: confinement applies.
    walkRoot = realPath(ctx, join(real, prefix));
    try {
      missing = !statSync(walkRoot).isDirectory();
    } catch {
      missing = true;
    }
  }
  // An unknown type is refused even for a single file.
  const given = input.type === undefined ? null : typeGlobs(input.type);
  const types = file ? null : given;
  const match = fileFilter(glob, input.basename, types);
  return { abs, real, file, walkRoot, walkRel: prefix, missing, hidden, noise, evidence: ignores, exempt: named, ignores, match, glob, basename: input.basename, types, deadline: started + timeLimitMs(), confine: ctx.root === undefined ? null : walkRoot };
}

/**
 * The test a file's path (relative to plan.real) must pass: the glob (slash-less and
 * `basename`: against the base name, at any depth) and one of the type's name globs.
 * Null when every file passes. Threads rebuild it from these three.
 */
export function fileFilter(glob: string | null, basename: boolean, types: readonly string[] | null): SearchPlan["match"] {
  let match: SearchPlan["match"] = null;
  if (glob !== null) {
    // picomatch's basename option must only be set for a slash-less glob: with it, a glob
    // with slashes is tested against the base name too, and never matches.
    const matcher = globTest(glob, { dot: true, basename: basename && !glob.includes("/") });
    match = (rel) => matcher(rel);
  }
  if (types !== null) {
    const tests = types.map((t) => globTest(t, { dot: true }));
    const ofType = (rel: string) => {
      const name = rel.slice(rel.lastIndexOf("/") + 1);
      return tests.some((t) => t(name));
    };
    const byGlob = match;
    match = byGlob ? (rel) => ofType(rel) && byGlob(rel) : ofType;
  }
  return match;
}

/** A found path (relative to plan.real) as the model sees it: relative to the working
 * directory when below it, else absolute. A single-file search shows that file. */
export function shownPath(ctx: Pick<ToolContext, "cwd">, plan: SearchPlan, rel: string): string {
  return pathShower(ctx, plan)(rel);
}

/** shownPath for many paths: the same as displayPath of each joined path, without a
 * path.relative per path. */
// One escaping of paths for every listing and every prose line: core/paths.ts.
export { onOneLine };

export function pathShower(ctx: Pick<ToolContext, "cwd">, plan: SearchPlan): (rel: string) => string {
  const base = relative(ctx.cwd, plan.abs);
  // A search root above the working directory can hold paths below it: those go one by one.
  if (base.startsWith("..") || isAbsolute(base)) return (rel) => onOneLine(displayPath(ctx, rel === "" ? plan.abs : join(plan.abs, rel)));
  const prefix = base === "" ? "" : `${base}/`;
  return (rel) => onOneLine(rel === "" ? displayPath(ctx, plan.abs) : prefix + rel);
}

/** The leading directory segments without glob syntax (never the last segment). */
export function literalPrefix(segments: readonly string[]): string {
  const out: string[] = [];
  for (const s of segments.slice(0, -1)) {
    if (s === "" || s === "." || /[*?[\]{}()!+@\\]/.test(s)) break;
    out.push(s);
  }
  return out.join("/");
}

/** A pattern as an answer repeats it: a very long one is cut (the model has it whole in
 * its own call). */
export function quoted(pattern: string): string {
  return pattern.length > 200 ? `${Array.from(pattern).slice(0, 200).join("")}…` : pattern;
}

function invalidGlob(tool: string, glob: string, problem: string, fix: string): KtError {
  const field = tool === "grep" ? "include" : "pattern";
  return new KtError("INVALID_GLOB", `Invalid glob ${field} "${quoted(glob)}": ${problem}. ${fix}`);
}

/** Checks a glob and makes it relative to the search directory. */
export function normalizeGlob(raw: string, abs: string, real: string, tool: string): string {
  let glob = raw;
  if (isAbsolute(glob)) {
    const base = [abs, real].find((dir) => glob === dir || glob.startsWith(`${dir}/`));
    if (!base) {
      throw invalidGlob(tool, raw, `it is an absolute path outside the search directory ${abs}`, `Give the directory to search as path and a pattern relative to it (path: "/some/dir", ${tool === "grep" ? "include" : "pattern"}: "**/*.ts").`);
    }
    glob = relative(base, glob) || "**";
  }
  while (glob.startsWith("./")) glob = glob.slice(2);
  if (glob === "" || glob === ".") throw invalidGlob(tool, raw, "it names no files", `Use "**/*" for every file, or a pattern such as "**/*.ts".`);
  if (glob.split("/").includes("..")) {
    throw invalidGlob(tool, raw, `it climbs out of the search directory with ".."`, "Set path to the directory you mean and make the pattern relative to it.");
  }
  try {
    picomatch.makeRe(glob, { strictBrackets: true, dot: true });
  } catch (error) {
    const why = (error as Error).message.replace(/ - use .*$/, "").replace(/^Missing closing: /, "missing closing ");
    // The example escapes the opening character that is left unclosed.
    const opening = { "]": "[", "}": "{", ")": "(" }[/"(.)"/.exec(why)?.[1] ?? "]"] ?? "[";
    throw invalidGlob(tool, raw, why, `Close it, or escape the literal character with a backslash (e.g. \\${opening}).`);
  }
  return glob;
}

/** "1 file", "1,234 matches": a count with its noun, as grep and glob headers write it. */
export function count(n: number, one: string, many: string): string {
  return `${grouped(n)} ${n === 1 ? one : many}`;
}
