// Claude Code's NotebookEdit (SPEC §8.5), accepted through kt call and kt mcp under that name
// (src/adapter/claude-code.ts) and not listed as a tool of kt's own: edit already changes
// notebooks. A NotebookEdit call is turned into the edit of the cell's text as read shows it
// (its marker and source), so it passes through edit's guards, writer, history and prose.
import { p, type Infer } from "./params.ts";
import { defineTool, invalidArgs, KtError, type ToolContext } from "./tool.ts";
import { absolutePath, realPath } from "../core/paths.ts";
import { decodeUtf8 } from "../core/text.ts";
import { readIfExists } from "../core/writer.ts";
import { notFound } from "../core/suggest.ts";
import { markerOf, parseNotebook, viewLines, type Notebook } from "../documents/notebook.ts";
import edit from "./edit.ts";

export const Parameters = p.object({
  notebook_path: p.string({ description: "Path of the .ipynb notebook (absolute preferred)." }),
  cell_id: p.optional(p.string({ description: 'The cell to change: its id, "cell-N" (0-based), or its number as read shows it. For insert, the new cell goes after it (first when omitted).' })),
  new_source: p.string({ description: "The cell's new source (ignored for delete)." }),
  cell_type: p.optional(p.enum(["code", "markdown"], { description: "The cell's type: required for insert; for replace, changes the type." })),
  edit_mode: p.optional(p.enum(["replace", "insert", "delete"], { description: "replace (default), insert or delete." })),
});

export default defineTool({
  name: "notebook_edit",
  schemaName: "NotebookEdit",
  description: "Replace, insert or delete one cell of a Jupyter notebook (Claude Code's NotebookEdit).",
  parameters: Parameters,
  primary: "notebook_path",
  aliases: {},
  annotations: { readOnlyHint: false, destructiveHint: true },
  async execute(input, ctx) {
    const path = absolutePath(ctx, input.notebook_path);
    const real = realPath(ctx, path);
    const bytes = readIfExists(real, path, ctx);
    if (bytes === null) throw notFound(ctx, path);
    const text = decodeUtf8(bytes);
    const nb = text === null ? "it is not valid UTF-8 text" : parseNotebook(text);
    if (typeof nb === "string") throw new KtError("INVALID_ARGS", `${path} cannot be edited as a notebook: ${nb}. Edit it as text with edit, or fix the file first.`);
    const { old_string, new_string } = asEdit(path, nb, input);
    const result = await edit.run({ file_path: input.notebook_path, old_string, new_string }, ctx satisfies ToolContext);
    if (result.isError) throw new KtError(result.error!.code, result.content);
    const { content, metadata } = result;
    const { durationMs: _, title, ...rest } = metadata;
    return { content, title: title.replace(/^Edit /, "NotebookEdit "), ...rest };
  },
});

/** The cell `cell_id` names: an id, "cell-N" (0-based, as Claude Code numbers cells without ids), or kt's 1-based number. */
function cellIndex(path: string, nb: Notebook, cellId: string): number {
  const byId = nb.cells.findIndex((c) => c.id === cellId);
  if (byId !== -1) return byId;
  const m = /^cell-(\d+)$/.exec(cellId) ?? /^(\d+)$/.exec(cellId);
  if (m) {
    const i = cellId.startsWith("cell-") ? Number(m[1]) : Number(m[1]) - 1;
    if (i >= 0 && i < nb.cells.length) return i;
  }
  const ids = nb.cells.slice(0, 12).map((c, i) => c.id ?? `cell-${i}`);
  throw new KtError("NO_MATCH", `${path} has no cell "${cellId}". Its cells are: ${ids.join(", ")}${nb.cells.length > 12 ? ", …" : ""}. Read the notebook to see each cell's id.`);
}

/** The old and new text of the edit a NotebookEdit call means, on the view read shows. */
function asEdit(path: string, nb: Notebook, input: Infer<typeof Parameters>): { old_string: string; new_string: string } {
  const mode = input.edit_mode ?? "replace";
  const lines = viewLines(nb);
  const blockOf = (i: number) => lines.filter((l) => l.cell === i).map((l) => l.text).join("\n");
  const newBlock = (type: string, id?: string) => `${id === undefined ? `[cell · ${type}]` : `[cell · ${type} · id ${id}]`}${input.new_source === "" ? "" : `\n${input.new_source.replace(/\r\n/g, "\n")}`}`;
  if (mode === "insert") {
    if (!input.cell_type) throw invalidArgs("NotebookEdit", 'parameter "cell_type" is required with edit_mode "insert" (code or markdown)');
    if (nb.cells.length === 0) throw new KtError("INVALID_ARGS", `${path} has no cells to insert beside. Write the notebook with write instead.`);
    if (input.cell_id === undefined) return { old_string: lines[0]!.text, new_string: `${newBlock(input.cell_type)}\n${lines[0]!.text}` };
    const i = cellIndex(path, nb, input.cell_id);
    return { old_string: blockOf(i), new_string: `${blockOf(i)}\n${newBlock(input.cell_type)}` };
  }
  if (input.cell_id === undefined) throw invalidArgs("NotebookEdit", `parameter "cell_id" is required with edit_mode "${mode}"`);
  const i = cellIndex(path, nb, input.cell_id);
  const cell = nb.cells[i]!;
  if (mode === "delete") {
    // The cell's lines and the newline after them: the next marker moves up.
    return { old_string: `${blockOf(i)}\n`, new_string: "" };
  }
  const type = input.cell_type ?? cell.type;
  const marker = type === cell.type ? markerOf(cell, i) : `[cell ${i + 1} · ${type}${cell.id !== undefined ? ` · id ${cell.id}` : ""}]`;
  const replaced = `${marker}${input.new_source === "" ? "" : `\n${input.new_source.replace(/\r\n/g, "\n")}`}`;
  return { old_string: blockOf(i), new_string: replaced };
}
