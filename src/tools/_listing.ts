// The directory listing read gives for a directory: two levels, directories marked
// with "/", noise directories summarized (the rule grep and glob skip them by, core/noise.ts:
// .git, node_modules, __pycache__, or holding CACHEDIR.TAG or pyvenv.cfg — checked before
// the hidden rule, so .git or a .venv is summarized, not counted as hidden), other hidden
// entries counted rather than listed.
import { lstatSync, readdirSync, readlinkSync, type Dirent } from "node:fs";
import { join } from "node:path";
import { onOneLine } from "../core/paths.ts";
import { EVIDENCE_FILES, NOISE_DIRS } from "../core/noise.ts";

export { NOISE_DIRS };

const MAX_CHILDREN = 100;
const MAX_LINES = 1000;

export interface Listing {
  text: string;
  entries: number;
}

export function listDirectory(real: string, display: string): Listing {
  const out = [display.endsWith("/") ? display : `${display}/`];
  const top = entriesOf(real);
  if (!top) return { text: `${out[0]}\n[directory cannot be read: permission denied]`, entries: 0 };
  let hidden = 0;
  let shown = 0;
  for (const entry of top) {
    const noise = isNoise(real, entry);
    if (!noise && entry.name.startsWith(".")) {
      hidden++;
      continue;
    }
    if (out.length >= MAX_LINES) {
      out.push(`[… listing cut at ${MAX_LINES} lines; use glob to find files by pattern]`);
      break;
    }
    shown++;
    out.push(describeEntry(real, entry, "", noise));
    if (!entry.isDirectory() || noise) continue;
    const dir = join(real, entry.name);
    const children = entriesOf(dir);
    if (!children) {
      out.push("  [cannot be read: permission denied]");
      continue;
    }
    let childHidden = 0;
    let listed = 0;
    for (const child of children) {
      const childNoise = isNoise(dir, child);
      if (!childNoise && child.name.startsWith(".")) {
        childHidden++;
        continue;
      }
      if (listed === MAX_CHILDREN || out.length >= MAX_LINES) {
        out.push(`  … and ${children.length - childHidden - listed} more`);
        break;
      }
      listed++;
      out.push(describeEntry(dir, child, "  ", childNoise));
    }
    if (childHidden > 0) out.push(`  (${childHidden} hidden ${plural(childHidden, "entry", "entries")} not shown)`);
  }
  if (shown === 0 && hidden === 0) out.push("[directory is empty]");
  if (hidden > 0) out.push(`(${hidden} hidden ${plural(hidden, "entry", "entries")} not shown; read one by its path to see it)`);
  return { text: out.join("\n"), entries: top.length };
}

/** A directory grep and glob skip as noise: by name, or by the evidence in it (one lstat per
 * evidence name, only for directories). */
function isNoise(dir: string, entry: Dirent): boolean {
  if (!entry.isDirectory()) return false;
  if (NOISE_DIRS.has(entry.name)) return true;
  for (const name of EVIDENCE_FILES) {
    try {
      if (lstatSync(join(dir, entry.name, name)).isFile()) return true;
    } catch {
      // Absent (or unreadable): no evidence.
    }
  }
  return false;
}

function describeEntry(dir: string, entry: Dirent, indent: string, noise: boolean): string {
  if (entry.isSymbolicLink()) {
    let target = "?";
    try {
      target = readlinkSync(join(dir, entry.name));
    } catch {
      // Unreadable link: shown with "?".
    }
    return `${indent}${onOneLine(entry.name)} -> ${onOneLine(target)}`;
  }
  // A name is shown escaped: a newline in it must not forge a second entry or a numbered line.
  if (!entry.isDirectory()) return `${indent}${onOneLine(entry.name)}`;
  if (noise) {
    const n = entriesOf(join(dir, entry.name))?.length;
    return `${indent}${onOneLine(entry.name)}/ (${n === undefined ? "unreadable" : `${n} ${plural(n, "entry", "entries")}`}, not listed)`;
  }
  return `${indent}${onOneLine(entry.name)}/`;
}

function entriesOf(dir: string): Dirent[] | null {
  try {
    return readdirSync(dir, { withFileTypes: true }).sort((a, b) => {
      const da = a.isDirectory() ? 0 : 1;
      const db = b.isDirectory() ? 0 : 1;
      return da - db || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
    });
  } catch {
    return null;
  }
}

function plural(n: number, one: string, many: string): string {
  return n === 1 ? one : many;
}
