// "command not found" (exit 127): the nearest executable name on PATH, the usual cause
// being a typo (`npmm` for `npm`). Best effort: only PATH directories are listed.
import { readdirSync } from "node:fs";
import { delimiter } from "node:path";
import { distance } from "fastest-levenshtein";

/** Names bash reported as not found, in order of appearance. */
export function missingCommands(output: string): string[] {
  const names: string[] = [];
  for (const m of output.matchAll(/^(?:.*?: )?(?:line \d+: )?([^\s:]+): (?:command )?not found$/gm)) {
    if (!names.includes(m[1]!)) names.push(m[1]!);
  }
  return names;
}

/** The executable on PATH closest to `name`, if one is close enough to be a typo. */
export function nearestOnPath(name: string, path = process.env.PATH ?? ""): string | undefined {
  if (name.includes("/")) return undefined;
  const limit = Math.max(1, Math.floor(name.length / 3));
  let best: { name: string; d: number } | undefined;
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    let entries: string[];
    try {
      entries = readdirSync(dir);
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (Math.abs(entry.length - name.length) > limit || entry === name) continue;
      const d = distance(entry, name);
      if (d <= limit && (!best || d < best.d || (d === best.d && entry < best.name))) best = { name: entry, d };
    }
  }
  return best?.name;
}

/** The line appended to a bash result whose command was not found, or undefined. */
export function notFoundHint(output: string): string | undefined {
  for (const name of missingCommands(output)) {
    const near = nearestOnPath(name);
    if (near) return `"${name}" is not a command on PATH. Did you mean "${near}"?`;
  }
  return undefined;
}
