// edit's side of a notebook (SPEC §8.5): the cascade runs on the view read showed (cell
// markers and sources, src/documents/notebook.ts), and the changed view is written back into
// the JSON. Not a second edit path: edit.ts keeps its guards, prose, diff and writer.
import { randomBytes } from "node:crypto";
import { KtError } from "./tool.ts";
import { applyView, isNotebookPath, parseNotebook, viewText, type Notebook } from "../documents/notebook.ts";

export interface NotebookPlan {
  /** What the cascade matches against: the cells as read shows them, without line numbers. */
  view: string;
  /** The notebook's JSON for a changed view, and a note for the model on what else changed. */
  write(view: string): { text: string; note?: string };
}

/** The plan for editing `text` as a notebook, or undefined when it is not one kt shows as cells (edited as plain JSON then). */
export function notebookEdit(abs: string, real: string, text: string): NotebookPlan | undefined {
  if (!isNotebookPath(real)) return undefined;
  const nb = parseNotebook(text);
  if (typeof nb === "string") return undefined;
  return { view: viewText(nb), write: (view) => writeView(abs, nb, view) };
}

function writeView(abs: string, nb: Notebook, view: string): { text: string; note?: string } {
  const written = applyView(nb, view, () => randomBytes(4).toString("hex"));
  if (typeof written === "string") {
    throw new KtError("INVALID_ARGS", `The edit cannot be written into the notebook ${abs}: ${written}. Nothing was changed.`);
  }
  // Code cells whose source changed and that had run: their outputs and count are gone now.
  const after = parseNotebook(written.text);
  if (typeof after === "string") throw new Error(`kt wrote a notebook it cannot read back: ${after}`);
  const cleared = nb.cells
    .map((cell, i) => ({ cell, i, now: nb.hasIds ? after.cells.find((c) => c.id === cell.id) : after.cells[i] }))
    .filter(({ cell, now }) => cell.type === "code" && now?.type === "code" && (cell.outputs.length > 0 || (cell.executionCount ?? null) !== null) && now.source !== cell.source)
    .map(({ i }) => i + 1);
  const retyped = nb.cells
    .map((cell, i) => ({ cell, i, now: nb.hasIds ? after.cells.find((c) => c.id === cell.id) : undefined }))
    .filter(({ cell, now }) => now !== undefined && now.type !== cell.type)
    .map(({ i, now }) => `cell ${i + 1} is now a ${now!.type} cell`);
  const parts: string[] = [];
  if (cleared.length > 0) {
    const renumbered = written.added > 0 || written.removed > 0 || retyped.length > 0 ? " (numbered as before this edit)" : "";
    parts.push(`the outputs and execution count of cell${cleared.length === 1 ? "" : "s"} ${cleared.join(", ")}${renumbered} were cleared, since the changed code has not run`);
  }
  parts.push(...retyped);
  if (written.added > 0) parts.push(`${written.added} cell${written.added === 1 ? "" : "s"} added`);
  if (written.removed > 0) parts.push(`${written.removed} cell${written.removed === 1 ? "" : "s"} deleted`);
  return { text: written.text, ...(parts.length > 0 ? { note: `(Notebook: ${parts.join("; ")}.)` } : {}) };
}
