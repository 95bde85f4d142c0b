// SPEC §8.5: Jupyter notebooks read as cells and edited as cells. read shows each cell's
// marker and source as one numbered text, then its outputs (text bounded, errors with their
// traceback, an image as an image block where the door carries one); edit matches what read
// showed, through the same cascade and guards, and writes back only the JSON values that
// changed, so the file keeps its layout; Claude Code's NotebookEdit replaces, inserts and
// deletes cells through kt call and kt mcp. Every result is parsed by Python's json.
import { describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { applyView, parseNotebook, viewText, type Notebook } from "../src/documents/notebook.ts";
import { call, KT, kt, MODES, ROOT, tempDir } from "./_helpers.ts";

const FIXTURES = join(ROOT, "test", "fixtures", "notebooks");
const PYTHON = Bun.which("python3");
const NBFORMAT = PYTHON !== null && Bun.spawnSync([PYTHON, "-c", "import nbformat"]).exitCode === 0;
if (!NBFORMAT) console.warn("notebook.test: Python's nbformat is not installed, so results are checked with Python's json and kt's own structure checks only.");

function workspace(tmp: { path: string }) {
  const work = join(tmp.path, "work");
  mkdirSync(work);
  for (const name of ["fit.ipynb", "no-ids.ipynb"]) copyFileSync(join(FIXTURES, name), join(work, name));
  return { work, opts: { cwd: work, stateDir: join(tmp.path, "state") } };
}

/** Python's json reads the file, and nbformat validates it where it is installed; returns the notebook as Python dumped it. */
function pythonReads(file: string): { cells: Array<{ cell_type: string; id?: string; metadata?: unknown; source: string[] | string; outputs?: unknown[]; execution_count?: number | null }> } {
  expect(PYTHON, "python3 checks the notebooks kt writes").not.toBeNull();
  const check = NBFORMAT ? "import nbformat; nbformat.validate(nbformat.read(sys.argv[1], as_version=4)); " : "";
  const r = Bun.spawnSync([PYTHON!, "-c", `import json, sys; ${check}print(json.dumps(json.load(open(sys.argv[1], encoding="utf-8"))))`, file], { stdout: "pipe", stderr: "pipe" });
  expect(r.stderr.toString()).toBe("");
  expect(r.exitCode).toBe(0);
  return JSON.parse(r.stdout.toString());
}

/** Jupyter's own layout for a notebook: json.dumps(indent=1, sort_keys=True, ensure_ascii=False) and a newline. */
function jupyterLayout(file: string): string {
  const r = Bun.spawnSync([PYTHON!, "-c", 'import json, sys; print(json.dumps(json.load(open(sys.argv[1], encoding="utf-8")), indent=1, sort_keys=True, ensure_ascii=False))', file], { stdout: "pipe" });
  return r.stdout.toString();
}

const FIT_READ = (work: string) =>
  [
    `${work}/fit.ipynb · notebook, 6 cells (python)`,
    "     1→[cell 1 · markdown · id a1b2c3d4]",
    "     2→# Fitting a line",
    "     3→",
    "     4→We fit `y = a x + b` to noisy points.",
    "     5→[cell 2 · code · id 4f2a9e01]",
    "     6→import math",
    "     7→points = [(0, 1.1), (1, 2.9), (2, 5.2)]",
    '     8→print(f"loaded {len(points)} points")',
    "       [output 1 · stdout]",
    "       loaded 3 points",
    "     9→[cell 3 · code · id 9c0d1e2f]",
    "    10→def fit(points):",
    "    11→    n = len(points)",
    "    12→    sx = sum(x for x, _ in points)",
    "    13→    sy = sum(y for _, y in points)",
    "    14→    sxx = sum(x * x for x, _ in points)",
    "    15→    sxy = sum(x * y for x, y in points)",
    "    16→    a = (n * sxy - sx * sy) / (n * sxx - sx * sx)",
    "    17→    b = (sy - a * sx) / n",
    "    18→    return round(a, 4), round(b, 4)",
    "    19→",
    "    20→fit(points)",
    "       [output 1 · result]",
    "       (2.05, 1.0167)",
    "    21→[cell 4 · code · id 5e6f7a8b]",
    "    22→fit([(1, 1), (1, 2)])",
    "       [output 1 · error · ZeroDivisionError: division by zero]",
    "       ---------------------------------------------------------------------------",
    "       ZeroDivisionError                         Traceback (most recent call last)",
    "       Cell In[3], line 1",
    "       ----> 1 fit([(1, 1), (1, 2)])",
    "       ZeroDivisionError: division by zero",
    "    23→[cell 5 · code · id 0a1b2c3d]",
    "    24→plot(points)",
    "       [output 1 · image/png, 84 bytes]",
    "    25→[cell 6 · markdown · id e4f5a6b7]",
  ].join("\n");

for (const mode of MODES) {
  describe(`notebooks (${mode})`, () => {
    test("read shows the cells: markers and sources numbered as one text, outputs after each cell, the image as an image block", async () => {
      using tmp = tempDir();
      const { work, opts } = workspace(tmp);
      const r = await call(mode, "read", { file_path: "fit.ipynb" }, opts);
      expect(r.isError, r.content).toBe(false);
      expect(r.content).toBe(FIT_READ(work));
      const png = readFileSync(join(ROOT, "test", "fixtures", "images", "dot.png"));
      expect(r.image).toEqual({ type: "image", mediaType: "image/png", data: png.toString("base64"), width: 3, height: 2 });
      expect(r.metadata.extra).toEqual({ path: `${work}/fit.ipynb`, notebook: { cells: 6, language: "python" }, lines: 25, totalLines: 25 });
      const page = await call(mode, "read", { file_path: "fit.ipynb", offset: 9, limit: 3 }, opts);
      expect(page.content).toBe(`${work}/fit.ipynb · notebook, 6 cells (python)\n     9→[cell 3 · code · id 9c0d1e2f]\n    10→def fit(points):\n    11→    n = len(points)\n(Showing lines 9–11 of 25. Use offset=12 to continue.)`);
    });

    test("a notebook without cell ids (nbformat 4.2) with string sources reads the same way", async () => {
      using tmp = tempDir();
      const { work, opts } = workspace(tmp);
      const r = await call(mode, "read", { file_path: "no-ids.ipynb" }, opts);
      expect(r.content).toBe(`${work}/no-ids.ipynb · notebook, 2 cells (python)\n     1→[cell 1 · code]\n     2→x = 1\n     3→print(x)\n     4→[cell 2 · markdown]\n     5→Notes`);
    });

    test("edit of a code cell: only its source, outputs and execution count change in the file, in Jupyter's own layout", async () => {
      using tmp = tempDir();
      const { work, opts } = workspace(tmp);
      const before = readFileSync(join(work, "fit.ipynb"), "utf8");
      await call(mode, "read", { file_path: "fit.ipynb" }, opts);
      const r = await call(mode, "edit", { file_path: "fit.ipynb", old_string: "    b = (sy - a * sx) / n", new_string: "    b = (sy - a * sx) / n  # the intercept" }, opts);
      expect(r.isError, r.content).toBe(false);
      expect(r.content).toStartWith(`Edited ${work}/fit.ipynb (1 replacement, matched exactly).\nSnippet of the edited region (lines 13–21):\n`);
      expect(r.content).toEndWith("\n(Notebook: the outputs and execution count of cell 3 were cleared, since the changed code has not run.)");
      const after = readFileSync(join(work, "fit.ipynb"), "utf8");
      // Byte for byte what Jupyter itself would write for the changed notebook.
      expect(after).toBe(jupyterLayout(join(work, "fit.ipynb")));
      const nb = pythonReads(join(work, "fit.ipynb"));
      expect(nb.cells[2]).toMatchObject({ execution_count: null, outputs: [] });
      expect((nb.cells[2]!.source as string[])[7]).toBe("    b = (sy - a * sx) / n  # the intercept\n");
      // Outside the edited cell's JSON, every byte is as it was.
      const cellStart = before.indexOf('  {\n   "cell_type": "code",\n   "execution_count": 2');
      const nextCell = before.indexOf('  {\n   "cell_type": "code",\n   "execution_count": 3');
      expect(after.slice(0, cellStart)).toBe(before.slice(0, cellStart));
      expect(after.slice(after.length - (before.length - nextCell))).toBe(before.slice(nextCell));
    });

    test("edit of a markdown cell through a slip the cascade repairs (indentation and trailing spaces), outputs elsewhere untouched", async () => {
      using tmp = tempDir();
      const { work, opts } = workspace(tmp);
      await call(mode, "read", { file_path: "fit.ipynb" }, opts);
      const r = await call(mode, "edit", { file_path: "fit.ipynb", old_string: "  # Fitting a line  \n\n  We fit `y = a x + b` to noisy points.", new_string: "# Fitting a straight line\n\nWe fit `y = a x + b` to noisy points." }, opts);
      expect(r.isError, r.content).toBe(false);
      expect(r.content).not.toContain("(Notebook:");
      const nb = pythonReads(join(work, "fit.ipynb"));
      expect(nb.cells[0]!.source).toEqual(["# Fitting a straight line\n", "\n", "We fit `y = a x + b` to noisy points."]);
      expect(nb.cells[1]).toMatchObject({ execution_count: 1 });
      expect(readFileSync(join(work, "fit.ipynb"), "utf8")).toBe(jupyterLayout(join(work, "fit.ipynb")));
    });

    test("a view that is no notebook is refused, nothing written: text before the first marker, a cell id twice", async () => {
      using tmp = tempDir();
      const { work, opts } = workspace(tmp);
      const before = readFileSync(join(work, "fit.ipynb"));
      await call(mode, "read", { file_path: "fit.ipynb" }, opts);
      const moved = await call(mode, "edit", { file_path: "fit.ipynb", old_string: "[cell 1 · markdown · id a1b2c3d4]\n# Fitting a line", new_string: "# Fitting a line\n[cell 1 · markdown · id a1b2c3d4]" }, opts);
      expect(moved.isError).toBe(true);
      expect(moved.error?.code).toBe("INVALID_ARGS");
      expect(moved.content).toBe(`The edit cannot be written into the notebook ${work}/fit.ipynb: the text before the first cell marker ("# Fitting a line") belongs to no cell; every line must follow a [cell N · type · id …] marker. Nothing was changed.`);
      const twice = await call(mode, "edit", { file_path: "fit.ipynb", old_string: "[cell 3 · code · id 9c0d1e2f]", new_string: "[cell 3 · code · id 4f2a9e01]" }, opts);
      expect(twice.content).toBe(`The edit cannot be written into the notebook ${work}/fit.ipynb: cell id 4f2a9e01 appears twice; each cell keeps its one marker. Nothing was changed.`);
      expect(readFileSync(join(work, "fit.ipynb")).equals(before)).toBe(true);
    });

    test("a notebook without ids: sources change in place (string sources stay strings, 2-space layout kept); cells cannot be added", async () => {
      using tmp = tempDir();
      const { work, opts } = workspace(tmp);
      const before = readFileSync(join(work, "no-ids.ipynb"), "utf8");
      await call(mode, "read", { file_path: "no-ids.ipynb" }, opts);
      const r = await call(mode, "edit", { file_path: "no-ids.ipynb", old_string: "print(x)", new_string: "print(x + 1)" }, opts);
      expect(r.isError, r.content).toBe(false);
      expect(readFileSync(join(work, "no-ids.ipynb"), "utf8")).toBe(before.replace('"source": "x = 1\\nprint(x)"', '"source": "x = 1\\nprint(x + 1)"'));
      const added = await call(mode, "edit", { file_path: "no-ids.ipynb", old_string: "Notes", new_string: "Notes\n[cell · code]\ny = 2" }, opts);
      expect(added.content).toBe(`The edit cannot be written into the notebook ${work}/no-ids.ipynb: this notebook's cells have no ids (nbformat before 4.5), so edit cannot insert or delete cells in it: change only their sources, and keep every marker. Nothing was changed.`);
    });

    test("read before write and stale checks hold for notebooks; undo puts the file back byte for byte", async () => {
      using tmp = tempDir();
      const { work, opts } = workspace(tmp);
      const before = readFileSync(join(work, "fit.ipynb"));
      const unread = await call(mode, "edit", { file_path: "fit.ipynb", old_string: "plot(points)", new_string: "show(points)" }, opts);
      expect(unread.error?.code).toBe("NOT_READ");
      await call(mode, "read", { file_path: "fit.ipynb" }, opts);
      expect((await call(mode, "edit", { file_path: "fit.ipynb", old_string: "plot(points)", new_string: "show(points)" }, opts)).isError).toBe(false);
      writeFileSync(join(work, "fit.ipynb"), readFileSync(join(work, "fit.ipynb"), "utf8").replace("Fitting", "Fittin"));
      expect((await call(mode, "edit", { file_path: "fit.ipynb", old_string: "show(points)", new_string: "plot(points)" }, opts)).error?.code).toBe("STALE_FILE");
      writeFileSync(join(work, "fit.ipynb"), before);
      await call(mode, "read", { file_path: "fit.ipynb" }, opts);
      await call(mode, "edit", { file_path: "fit.ipynb", old_string: "plot(points)", new_string: "show(points)" }, opts);
      const undo = kt(["undo", join(work, "fit.ipynb")], { cwd: work, stateDir: opts.stateDir });
      expect(undo.exitCode, undo.stdout + undo.stderr).toBe(0);
      expect(readFileSync(join(work, "fit.ipynb")).equals(before)).toBe(true);
    });
  });
}

describe("the view written back (src/documents/notebook.ts)", () => {
  const fit = () => parseNotebook(readFileSync(join(FIXTURES, "fit.ipynb"), "utf8")) as Notebook;
  let n = 0;
  const ids = () => `new${++n}`;

  test("the unchanged view writes the same bytes", () => {
    const nb = fit();
    expect(applyView(nb, viewText(nb), ids)).toEqual({ text: nb.text, changed: [], added: 0, removed: 0 });
  });

  test("a cell inserted, one deleted, one retyped: Jupyter's layout, ids kept, the rest untouched", () => {
    using tmp = tempDir();
    const nb = fit();
    const view = viewText(nb)
      .replace("[cell 4 · code · id 5e6f7a8b]\nfit([(1, 1), (1, 2)])\n", "")
      .replace("[cell 5 · code · id 0a1b2c3d]\nplot(points)\n", "[cell 5 · markdown · id 0a1b2c3d]\nA plot.\n[cell · code]\nprint('end')\n");
    const written = applyView(nb, view, ids);
    if (typeof written === "string") throw new Error(written);
    expect(written).toMatchObject({ added: 1, removed: 1 });
    const file = join(tmp.path, "x.ipynb");
    writeFileSync(file, written.text);
    expect(written.text).toBe(jupyterLayout(file));
    const cells = pythonReads(file).cells;
    expect(cells.map((c) => [c.cell_type, c.id])).toEqual([["markdown", "a1b2c3d4"], ["code", "4f2a9e01"], ["code", "9c0d1e2f"], ["markdown", "0a1b2c3d"], ["code", "new1"], ["markdown", "e4f5a6b7"]]);
    expect(cells[3]).toEqual({ cell_type: "markdown", id: "0a1b2c3d", metadata: {}, source: ["A plot."] });
    expect(cells[4]).toEqual({ cell_type: "code", execution_count: null, id: "new1", metadata: {}, outputs: [], source: ["print('end')"] });
    expect(cells[1]).toMatchObject({ execution_count: 1 });
  });

  test("a source with a trailing newline and an emptied cell round-trip", () => {
    const nb = fit();
    const view = viewText(nb).replace("print(f\"loaded {len(points)} points\")\n", "print(f\"loaded {len(points)} points\")\n\n").replace("[cell 4 · code · id 5e6f7a8b]\nfit([(1, 1), (1, 2)])\n", "[cell 4 · code · id 5e6f7a8b]\n");
    const written = applyView(nb, view, ids);
    if (typeof written === "string") throw new Error(written);
    const again = parseNotebook(written.text) as Notebook;
    expect(again.cells[1]!.source).toBe('import math\npoints = [(0, 1.1), (1, 2.9), (2, 5.2)]\nprint(f"loaded {len(points)} points")\n');
    expect(again.cells[3]!.source).toBe("");
    expect(viewText(again)).toBe(view);
  });
});

describe("Claude Code's NotebookEdit through kt call and kt mcp", () => {
  function notebookEdit(cwd: string, stateDir: string, input: Record<string, unknown>) {
    const r = kt(["call", "--format", "anthropic"], { cwd, stateDir, stdin: JSON.stringify({ type: "tool_use", id: "toolu_1", name: "NotebookEdit", input }) });
    return JSON.parse(r.stdout) as { content: string; is_error: boolean };
  }

  test("replace, insert (after a cell and first), delete, and a change of type; the notebook stays valid, read first", () => {
    using tmp = tempDir();
    const { work, opts } = workspace(tmp);
    const unread = notebookEdit(work, opts.stateDir, { notebook_path: "fit.ipynb", cell_id: "4f2a9e01", new_source: "x" });
    expect(unread.is_error).toBe(true);
    expect(unread.content).toStartWith(`Refusing to edit ${work}/fit.ipynb: you have not read this file in this session.`);
    kt(["read", "fit.ipynb"], { cwd: work, stateDir: opts.stateDir });
    const replaced = notebookEdit(work, opts.stateDir, { notebook_path: "fit.ipynb", cell_id: "4f2a9e01", new_source: "import math\npoints = []" });
    expect(replaced.is_error, replaced.content).toBe(false);
    expect(replaced.content).toStartWith(`Edited ${work}/fit.ipynb (1 replacement, matched exactly).`);
    expect(notebookEdit(work, opts.stateDir, { notebook_path: "fit.ipynb", cell_id: "4f2a9e01", new_source: "## Data", cell_type: "markdown", edit_mode: "insert" }).is_error).toBe(false);
    expect(notebookEdit(work, opts.stateDir, { notebook_path: "fit.ipynb", new_source: "Top note", cell_type: "markdown", edit_mode: "insert" }).is_error).toBe(false);
    expect(notebookEdit(work, opts.stateDir, { notebook_path: "fit.ipynb", cell_id: "5e6f7a8b", new_source: "", edit_mode: "delete" }).is_error).toBe(false);
    const retyped = notebookEdit(work, opts.stateDir, { notebook_path: "fit.ipynb", cell_id: "0a1b2c3d", new_source: "A plot.", cell_type: "markdown" });
    expect(retyped.content).toEndWith("(Notebook: cell 6 is now a markdown cell.)");
    const cells = pythonReads(join(work, "fit.ipynb")).cells;
    expect(cells.map((c) => c.cell_type)).toEqual(["markdown", "markdown", "code", "markdown", "code", "markdown", "markdown"]);
    expect(cells[0]!.source).toEqual(["Top note"]);
    expect(cells[2]).toMatchObject({ id: "4f2a9e01", source: ["import math\n", "points = []"], outputs: [], execution_count: null });
    expect(cells[3]!.source).toEqual(["## Data"]);
    expect(cells.some((c) => c.id === "5e6f7a8b")).toBe(false);
    expect(readFileSync(join(work, "fit.ipynb"), "utf8")).toBe(jupyterLayout(join(work, "fit.ipynb")));
  });

  test("an unknown cell, insert without a type: prose and a code", () => {
    using tmp = tempDir();
    const { work, opts } = workspace(tmp);
    kt(["read", "fit.ipynb"], { cwd: work, stateDir: opts.stateDir });
    expect(notebookEdit(work, opts.stateDir, { notebook_path: "fit.ipynb", cell_id: "nope", new_source: "x" }).content).toBe(
      `${work}/fit.ipynb has no cell "nope". Its cells are: a1b2c3d4, 4f2a9e01, 9c0d1e2f, 5e6f7a8b, 0a1b2c3d, e4f5a6b7. Read the notebook to see each cell's id.`,
    );
    expect(notebookEdit(work, opts.stateDir, { notebook_path: "fit.ipynb", cell_id: "4f2a9e01", new_source: "x", edit_mode: "insert" }).content).toBe(
      'Invalid input for tool "NotebookEdit": parameter "cell_type" is required with edit_mode "insert" (code or markdown). Please rewrite the input so it satisfies the expected schema.',
    );
  });

  test("through kt mcp: read's image reaches the client as an image item; NotebookEdit under Claude Code's name", async () => {
    using tmp = tempDir();
    const { work } = workspace(tmp);
    const client = new Client({ name: "kt-test", version: "0" });
    await client.connect(new StdioClientTransport({ command: KT, args: ["mcp"], cwd: work, env: { PATH: process.env.PATH ?? "", KT_STATE_DIR: join(tmp.path, "state"), NO_COLOR: "1" }, stderr: "pipe" }));
    try {
      const read = (await client.callTool({ name: "read", arguments: { file_path: "fit.ipynb" } })) as { content: Array<{ type: string; text?: string; mimeType?: string }> };
      expect(read.content[0]).toEqual({ type: "text", text: FIT_READ(work) });
      expect(read.content[1]).toMatchObject({ type: "image", mimeType: "image/png" });
      const edited = (await client.callTool({ name: "NotebookEdit", arguments: { notebook_path: "fit.ipynb", cell_id: "e4f5a6b7", new_source: "Done." } })) as { content: Array<{ text: string }>; isError: boolean };
      expect(edited.isError, edited.content[0]!.text).toBe(false);
      expect(pythonReads(join(work, "fit.ipynb")).cells[5]!.source).toEqual(["Done."]);
    } finally {
      await client.close();
    }
  });
});
