// Helpers for the grep/glob/walk tests: trees written from a map, ripgrep's own answers.
import { mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { walk, ALWAYS_NOISE } from "../src/search/walk.ts";

/** rg on PATH (CI installs Debian's ripgrep); the tests that compare with it skip without it. */
export const RG = Bun.which("rg");

/** Writes `files` (path → content; a path ending in "/" is an empty directory) under `root`. */
export function writeTree(root: string, files: Record<string, string | Uint8Array>): void {
  for (const [rel, content] of Object.entries(files)) {
    const abs = join(root, rel);
    if (rel.endsWith("/")) {
      mkdirSync(abs, { recursive: true });
      continue;
    }
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, content);
  }
}

/** Sets mtimes so that files listed later are newer (one second apart, from a fixed epoch). */
export function ageInOrder(root: string, rels: readonly string[]): void {
  const base = 1_700_000_000;
  rels.forEach((rel, i) => utimesSync(join(root, rel), base + i, base + i));
}

/** The files the walker yields below `root` (relative, sorted), with the default filters. */
export function walked(root: string, opts: { hidden?: boolean; noise?: readonly string[]; evidence?: boolean } = {}): string[] {
  const files: string[] = [];
  walk({ root, hidden: opts.hidden ?? true, noise: new Set(opts.noise ?? ALWAYS_NOISE), evidence: opts.evidence ?? true }, (_abs, rel, dir) => {
    if (!dir) files.push(rel);
  });
  return files.sort();
}

/** `rg --files` below `root` with kt's fixed flags (no config, no global gitignore). */
export function rgFiles(root: string, extra: string[] = []): string[] {
  // NUL-separated: a name may hold a newline.
  const proc = Bun.spawnSync([RG!, "--files", "--null", "--no-config", "--no-ignore-global", ...extra], { cwd: root, stdout: "pipe", stderr: "pipe" });
  return proc.stdout
    .toString()
    .split("\0")
    .filter(Boolean)
    .map((p) => (p.startsWith("./") ? p.slice(2) : p))
    .sort();
}

/** The noise flags kt passes to rg, for comparing plain walks. */
export const RG_NOISE = ALWAYS_NOISE.flatMap((n) => ["-g", `!${n}/`]);
