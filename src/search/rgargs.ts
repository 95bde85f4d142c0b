// The rg engine's command line: what to ask rg for so that its answer, read by rg.ts,
// is the built-in engine's answer: kt's fixed flags (no config, no global gitignore,
// CRLF as a line ending, -j as KT_THREADS), the case, the pattern (fixed strings where
// faster), the noise directories, and a type filter that prefilters the include or type.
import type { Compiled } from "./regex.ts";
import type { SearchPlan } from "./plan.ts";
import { basename, dirname } from "node:path";
import { threadCount } from "./threads.ts";

export function rgArgs(plan: SearchPlan, compiled: Compiled, probe: Compiled | null = null): { args: string[]; cwd: string; typed: boolean; columns: boolean } {
  // With the probe, rg searches for the probe alone, case-insensitively: it is wider than
  // the pattern (it matches every line the pattern matches, in any case), and the lines
  // are sorted exactly in JavaScript. A probe made of plain strings goes as -F (also when
  // searched for alone): rg finds fixed strings case-insensitively far faster than the
  // same alternation as a regex.
  const insensitive = compiled.caseInsensitive || probe !== null;
  // -j: rg's own default is the cores too; KT_THREADS changes both engines alike.
  const args = ["--heading", "-n", "-H", "--null", "--color=never", "--stats", "--no-config", "--no-ignore-global", "--no-mmap", "--crlf", "-j", String(threadCount()), insensitive ? "-i" : "-s"];
  const searched = probe ?? compiled;
  const patterns = searched.fixed ? ["-F", ...searched.fixed.flatMap((f) => ["-e", f])] : ["-e", searched.rust];
  // Where each line's first match starts ("number:column:text"), so that a long line is
  // shown around it without searching it again in JavaScript; not with the probe, whose
  // column may be the probe's.
  // A multiline search: no column (rg repeats "1:" on every line of a match).
  const columns = !compiled.multiline && probe === null;
  if (compiled.multiline) args.push("-U", "--multiline-dotall");
  else if (columns) args.push("--column");
  if (plan.file) return { args: [...args, ...patterns, "--", basename(plan.real)], cwd: dirname(plan.real), typed: false, columns };
  if (!plan.hidden) args.push("--hidden");
  // Binary files are searched too, to be named ("binary file matches"), never shown.
  if (plan.noteBinary) args.push("--binary");
  // no_ignore: rg's own (.gitignore, .ignore, .rgignore, exclude); kt drops .ktignore.
  if (!plan.ignores) args.push("--no-ignore");
  for (const name of plan.noise) args.push("-g", `!${name}/`);
  // One rg type at most (rg's types are a union): the type filter when there is one, else
  // the include's prefilter. kt applies both exactly to what rg reports.
  const typeGlobs = plan.types ?? (plan.glob === null ? null : [prefilterGlob(plan.glob)].filter((g) => g !== null));
  if (typeGlobs && typeGlobs.length > 0) args.push(...typeGlobs.flatMap((g) => ["--type-add", `ktfilter:${g}`]), "-t", "ktfilter");
  // rg runs in the directory it walks: given a relative subdirectory instead, rg 13
  // misapplies the working directory's own anchored ignore rules (e.g. "build/skip/").
  args.push(...patterns, "--", ".");
  return { args, cwd: plan.walkRoot, typed: typeGlobs !== null && typeGlobs.length > 0, columns };
}

/**
 * A file-name glob that every file the include matches also matches (rg's --type-add),
 * so that rg skips most other files; null when the include's last segment cannot be
 * said in rg's glob syntax with the same or a wider meaning.
 */
function prefilterGlob(glob: string): string | null {
  const last = glob.slice(glob.lastIndexOf("/") + 1);
  if (last === "" || last.includes("**") || !/^[\w.*?{},[\]\- ]+$/.test(last)) return null;
  if (/[[{]/.test(last) && /[!^]/.test(last)) return null;
  if (last.includes("[") && last.includes("?")) return null;
  // rg's "?" is one byte, kt's one character (é.txt matches "?.txt"): "*" is wider.
  return last.replaceAll("?", "*");
}
