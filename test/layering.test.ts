// The floors of src/ (STYLE: shared types at the ground floor): every import in src/ is
// read and checked against the folders its own folder may import from. Nothing imports
// upward, so a lower floor can be read, tested and changed without the ones above it.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const SRC = join(import.meta.dir, "..", "src");

/** Which folders of src/ each folder may import from (besides itself). */
export const MAY_IMPORT: Readonly<Record<string, readonly string[]>> = {
  core: [],
  replacer: [],
  // SPEC §8.2: the policy and the launcher, asked by process/spawn and by the file tools.
  sandbox: ["core"],
  process: ["core", "sandbox"],
  // A replace's change of each file is worked out by the search thread that finds the
  // pattern in it (search/rewrite.ts), with the pure replacer.
  search: ["core", "sandbox", "replacer"],
  documents: ["core", "replacer"],
  patch: ["core", "replacer"],
  // The language servers are processes kt supervises, asked through the session's host.
  lsp: ["core", "process"],
  tools: ["core", "replacer", "process", "search", "patch", "documents", "sandbox", "lsp"],
  adapter: ["core", "replacer", "process", "search", "patch", "documents", "tools", "sandbox", "lsp"],
  cmd: ["core", "replacer", "process", "search", "patch", "documents", "tools", "adapter", "sandbox", "lsp"],
  // src/main.ts, the bin entry, stands on everything.
  ".": ["core", "replacer", "process", "search", "patch", "documents", "tools", "adapter", "cmd", "sandbox", "lsp"],
};

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sources(path));
    else if (/\.ts$/.test(entry.name) && !entry.name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

/** Relative specifiers of every static import, re-export and dynamic import in `text`. */
export function importsOf(text: string): string[] {
  const found: string[] = [];
  const patterns = [/(?:^|\n)\s*(?:import|export)\b[^;'"`]*?\bfrom\s*["']([^"']+)["']/g, /(?:^|\n)\s*import\s*["']([^"']+)["']/g, /\bimport\(\s*["']([^"']+)["']\s*\)/g];
  for (const re of patterns) for (const m of text.matchAll(re)) found.push(m[1]!);
  return found.filter((s) => s.startsWith("."));
}

/** The top folder of src/ a file belongs to ("." for src/main.ts). */
function floor(file: string): string {
  const rel = relative(SRC, file);
  return rel.includes("/") ? rel.slice(0, rel.indexOf("/")) : ".";
}

/** "from → to (file: specifier)" for every import that goes where its folder may not. */
export function violations(files: readonly { path: string; text: string }[]): string[] {
  const out: string[] = [];
  for (const { path, text } of files) {
    const from = floor(path);
    for (const spec of importsOf(text)) {
      const target = resolve(dirname(path), spec);
      if (!target.startsWith(SRC + "/")) continue;
      const to = floor(target);
      if (to === from) continue;
      if (!(MAY_IMPORT[from] ?? []).includes(to)) out.push(`${from} → ${to} (${relative(SRC, path)}: ${spec})`);
    }
  }
  return out;
}

/** Files whose name starts with "_" are private to their folder: imported by its files only. */
export function privateImports(files: readonly { path: string; text: string }[]): string[] {
  const out: string[] = [];
  for (const { path, text } of files) {
    for (const spec of importsOf(text)) {
      const target = resolve(dirname(path), spec);
      if (!target.startsWith(SRC + "/")) continue;
      const base = target.slice(target.lastIndexOf("/") + 1);
      if (base.startsWith("_") && dirname(target) !== dirname(path)) out.push(`${relative(SRC, path)} imports ${relative(SRC, target)}`);
    }
  }
  return out;
}

const files = sources(SRC).map((path) => ({ path, text: readFileSync(path, "utf8") }));

describe("layering of src/", () => {
  test("every folder of src/ has a place in the table", () => {
    const floors = new Set(files.map((f) => floor(f.path)));
    expect([...floors].filter((f) => !(f in MAY_IMPORT))).toEqual([]);
  });

  test("no import goes up a floor", () => {
    expect(violations(files)).toEqual([]);
  });

  test("the check sees an upward import, a re-export and a dynamic import", () => {
    const at = (folder: string, text: string) => ({ path: join(SRC, folder, "x.ts"), text });
    expect(violations([at("core", `import { KtError } from "../tools/tool.ts";`)])).toEqual(["core → tools (core/x.ts: ../tools/tool.ts)"]);
    expect(violations([at("search", `export { notFound } from "../tools/_suggest.ts";`)])).toEqual(["search → tools (search/x.ts: ../tools/_suggest.ts)"]);
    expect(violations([at("adapter", `const m = await import("../cmd/schema.ts");`)])).toEqual(["adapter → cmd (adapter/x.ts: ../cmd/schema.ts)"]);
    expect(violations([at("process", `import type {\n  ToolContext,\n} from "../core/result.ts";`)])).toEqual([]);
    expect(violations([at("replacer", `import { x } from "../core/text.ts";`)])).toEqual(["replacer → core (replacer/x.ts: ../core/text.ts)"]);
  });

  test("a file named _x.ts is imported only from its own folder", () => {
    expect(privateImports(files)).toEqual([]);
    expect(privateImports([{ path: join(SRC, "search", "x.ts"), text: `import { notFound } from "../tools/_suggest.ts";` }])).toEqual(["search/x.ts imports tools/_suggest.ts"]);
  });

  test("SQL on the process table is written in process/registry.ts alone (core/state.ts creates it)", () => {
    const sql = /\b(?:FROM|INTO|UPDATE|TABLE(?: IF NOT EXISTS)?)\s+(?:processes|process_seq)\b/;
    const writers = files.filter((f) => sql.test(f.text)).map((f) => relative(SRC, f.path)).sort();
    expect(writers).toEqual(["core/state.ts", "process/registry.ts"]);
    expect(sql.test(`db.query("UPDATE processes SET notified = 1 WHERE key = ?")`)).toBe(true);
  });

  test("the INVALID_ARGS prose (\"Invalid input for tool …\", its rewrite tail) is built in core/result.ts alone", () => {
    const builders = files.filter((f) => /Invalid input for tool|Please rewrite the input so/.test(f.text)).map((f) => relative(SRC, f.path));
    expect(builders).toEqual(["core/result.ts"]);
  });

  test("which code a failed result exits with is decided in cmd/exit.ts alone (commands call exitCode)", () => {
    const deciders = files.filter((f) => /\bEXIT\.toolError\b/.test(f.text)).map((f) => relative(SRC, f.path));
    expect(deciders).toEqual(["cmd/exit.ts"]);
    for (const command of ["cmd/undo.ts", "cmd/session.ts", "cmd/call.ts", "cmd/_run.ts"]) {
      expect(files.find((f) => relative(SRC, f.path) === command)!.text, command).toContain("exitCode(");
    }
  });
});
