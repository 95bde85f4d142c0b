// Jupyter notebooks as documents (SPEC §8.5): read shows the cells, edit changes their
// sources. Both work on one text *view* of the notebook — each cell a marker line
// (`[cell 3 · code · id 4f2a]`) followed by its source — so that edit's cascade, its guards
// and its prose apply to what read showed, line numbers included. The view is written back
// into the JSON by replacing only the values that changed (a cell's source; a changed code
// cell's outputs and execution count, cleared; cells inserted or deleted), so every other
// byte keeps the file's own layout, key order and escapes.
import { jsonSpans, JsonSyntaxError, member, type JsonNode } from "./jsonspans.ts";
import { grouped } from "../core/text.ts";

export type CellType = "code" | "markdown" | "raw";

export interface Cell {
  type: CellType;
  id?: string;
  source: string;
  outputs: unknown[];
  executionCount?: number | null;
  metadata: unknown;
  node: JsonNode;
}

export interface Notebook {
  text: string;
  root: JsonNode;
  cellsNode: Extract<JsonNode, { kind: "array" }>;
  cells: Cell[];
  language?: string;
  /** nbformat 4.5 and later give every cell an id. */
  hasIds: boolean;
}

const MARKER = /^\[cell(?: (\d+))? · (code|markdown|raw)(?: · id ([^\s\]]+))?\]$/;

export function isNotebookPath(path: string): boolean {
  return path.toLowerCase().endsWith(".ipynb");
}

/** The notebook in `text`, or why it is not one kt can show as cells. */
export function parseNotebook(text: string): Notebook | string {
  let root: JsonNode;
  let json: { cells?: unknown; metadata?: { kernelspec?: { language?: unknown }; language_info?: { name?: unknown } }; nbformat?: unknown; nbformat_minor?: unknown };
  try {
    root = jsonSpans(text);
    json = JSON.parse(text);
  } catch (error) {
    return error instanceof JsonSyntaxError || error instanceof SyntaxError ? `it is not valid JSON (${error.message})` : String(error);
  }
  const cellsNode = member(root, "cells");
  if (typeof json !== "object" || json === null || !Array.isArray(json.cells) || cellsNode?.kind !== "array") return 'it has no "cells" list (nbformat 4 keeps cells in one)';
  if (json.nbformat !== 4) return `it is nbformat ${String(json.nbformat)}; kt reads nbformat 4 notebooks`;
  const cells: Cell[] = [];
  for (const [i, raw] of (json.cells as unknown[]).entries()) {
    const cell = raw as { cell_type?: unknown; id?: unknown; source?: unknown; outputs?: unknown; execution_count?: unknown; metadata?: unknown };
    if (cell.cell_type !== "code" && cell.cell_type !== "markdown" && cell.cell_type !== "raw") return `cell ${i + 1} has no known cell_type`;
    const source = Array.isArray(cell.source) ? cell.source.join("") : typeof cell.source === "string" ? cell.source : null;
    if (source === null) return `cell ${i + 1}'s source is neither a string nor a list of strings`;
    for (const line of source.split("\n")) if (MARKER.test(line)) return `cell ${i + 1} holds a line that reads like kt's cell marker ("${line}")`;
    cells.push({
      type: cell.cell_type,
      ...(typeof cell.id === "string" ? { id: cell.id } : {}),
      source,
      outputs: Array.isArray(cell.outputs) ? cell.outputs : [],
      metadata: cell.metadata ?? {},
      ...(cell.cell_type === "code" ? { executionCount: typeof cell.execution_count === "number" ? cell.execution_count : null } : {}),
      node: cellsNode.items[i]!,
    });
  }
  const language = json.metadata?.kernelspec?.language ?? json.metadata?.language_info?.name;
  return {
    text,
    root,
    cellsNode,
    cells,
    ...(typeof language === "string" ? { language } : {}),
    hasIds: cells.length > 0 ? cells.every((c) => c.id !== undefined) : Number(json.nbformat_minor) >= 5,
  };
}

export function markerOf(cell: Pick<Cell, "type" | "id">, index: number): string {
  return `[cell ${index + 1} · ${cell.type}${cell.id !== undefined ? ` · id ${cell.id}` : ""}]`;
}

/** The view's lines: each cell's marker, then its source's lines (none for an empty source). */
export function viewLines(nb: Pick<Notebook, "cells">): Array<{ text: string; cell: number; marker: boolean }> {
  const out: Array<{ text: string; cell: number; marker: boolean }> = [];
  for (const [i, cell] of nb.cells.entries()) {
    out.push({ text: markerOf(cell, i), cell: i, marker: true });
    if (cell.source !== "") for (const line of cell.source.split("\n")) out.push({ text: line, cell: i, marker: false });
  }
  return out;
}

/** The view as one text, as edit's cascade sees it: the lines joined, ending with a newline. */
export function viewText(nb: Pick<Notebook, "cells">): string {
  const lines = viewLines(nb);
  return lines.length === 0 ? "" : `${lines.map((l) => l.text).join("\n")}\n`;
}

// ---------------------------------------------------------------------------------------
// Writing a changed view back.

interface Block {
  type: CellType;
  id?: string;
  source: string;
  marker: string;
}

function blocksOf(view: string): Block[] | string {
  const lines = view.endsWith("\n") ? view.slice(0, -1).split("\n") : view.split("\n");
  if (view === "") return [];
  const heads: Array<Omit<Block, "source">> = [];
  const bodies: string[][] = [];
  for (const line of lines) {
    const m = MARKER.exec(line);
    if (m) {
      heads.push({ type: m[2] as CellType, ...(m[3] !== undefined ? { id: m[3] } : {}), marker: line });
      bodies.push([]);
      continue;
    }
    if (bodies.length === 0) return `the text before the first cell marker ("${line.slice(0, 60)}") belongs to no cell; every line must follow a [cell N · type · id …] marker`;
    bodies.at(-1)!.push(line);
  }
  return heads.map((head, i) => ({ ...head, source: bodies[i]!.join("\n") }));
}

export interface Written {
  text: string;
  /** Cells whose source changed (0-based, in the new notebook), and how many were added and removed. */
  changed: number[];
  added: number;
  removed: number;
}

/**
 * The notebook's JSON with `view` written into it, or prose saying why the view cannot be
 * taken: cells are known by id (by position in a notebook without ids), keep their order
 * and their type, and new cells come as markers without a known id.
 */
export function applyView(nb: Notebook, view: string, newId: () => string): Written | string {
  const blocks = blocksOf(view);
  if (typeof blocks === "string") return blocks;
  const byId = new Map(nb.cells.map((c, i) => [c.id, i] as const));
  // Each block is an existing cell (its index) or a new one (-1); retyped: block → the cell it retypes.
  const origin: number[] = [];
  const retyped = new Map<number, number>();
  if (nb.hasIds) {
    let last = -1;
    for (const b of blocks) {
      const i = b.id !== undefined ? byId.get(b.id) : undefined;
      if (i === undefined) {
        if (b.id !== undefined && !/^[a-zA-Z0-9-_]{1,64}$/.test(b.id)) return `"${b.marker}" names a cell id that is not valid (1 to 64 letters, digits, - or _)`;
        origin.push(-1);
        continue;
      }
      if (origin.includes(i) || [...retyped.values()].includes(i)) return `cell id ${b.id} appears twice; each cell keeps its one marker`;
      if (i < last) return `cell id ${b.id} was moved before a cell that came ahead of it; edit does not reorder cells`;
      last = i;
      // A marker whose type changed retypes the cell: it is written anew, keeping its id and metadata.
      if (b.type !== nb.cells[i]!.type) {
        retyped.set(origin.length, i);
        origin.push(-1);
        continue;
      }
      origin.push(i);
    }
  } else {
    if (blocks.length !== nb.cells.length) return "this notebook's cells have no ids (nbformat before 4.5), so edit cannot insert or delete cells in it: change only their sources, and keep every marker";
    for (const [i, b] of blocks.entries()) {
      if (b.type !== nb.cells[i]!.type || b.id !== undefined) return `"${b.marker}" is not cell ${i + 1}'s marker ("${markerOf(nb.cells[i]!, i)}"); keep every marker as it was`;
      origin.push(i);
    }
  }
  const style = styleOf(nb);
  const kept = new Set(origin.filter((i) => i >= 0));
  const replacements: Array<{ start: number; end: number; text: string }> = [];
  const changed: number[] = [];
  for (const [j, b] of blocks.entries()) {
    const i = origin[j]!;
    if (i < 0) continue;
    const cell = nb.cells[i]!;
    if (b.source === cell.source) continue;
    changed.push(j);
    const node = cell.node;
    const src = member(node, "source")!;
    replacements.push({ start: src.start, end: src.end, text: sourceJson(nb.text, src, b.source, style) });
    if (cell.type === "code") {
      // The outputs and count belong to the old source: a changed cell has not run.
      const outputs = member(node, "outputs");
      if (outputs && !(outputs.kind === "array" && outputs.items.length === 0)) replacements.push({ start: outputs.start, end: outputs.end, text: "[]" });
      const count = member(node, "execution_count");
      if (count && nb.text.slice(count.start, count.end) !== "null") replacements.push({ start: count.start, end: count.end, text: "null" });
    }
  }
  // Removed cells, and new ones inserted after the existing cell before them (or first).
  const removedCells = nb.cells.map((_, i) => i).filter((i) => !kept.has(i));
  const inserts = new Map<number, Block[]>();
  let prev = -1;
  const inserted: Array<{ block: Block; from?: Cell }> = [];
  for (const [j, b] of blocks.entries()) {
    if (origin[j]! >= 0) prev = origin[j]!;
    else {
      const from = retyped.has(j) ? nb.cells[retyped.get(j)!] : undefined;
      (inserts.get(prev) ?? inserts.set(prev, []).get(prev)!).push(b);
      inserted.push({ block: b, ...(from ? { from } : {}) });
      if (from) prev = retyped.get(j)!;
      changed.push(j);
    }
  }
  const fromOf = (b: Block) => inserted.find((x) => x.block === b)?.from;
  const added = blocks.length - kept.size - retyped.size;
  if (removedCells.length === 0 && added === 0 && retyped.size === 0) return { text: splice(nb.text, replacements), changed: changed.sort((a, b) => a - b), added: 0, removed: 0 };
  // Structural changes rewrite the cells list's text between its brackets from the pieces:
  // each kept cell's own text (with its value replacements), each new cell serialized in the
  // file's style.
  const items: string[] = [];
  const within = (node: JsonNode) => splice(nb.text.slice(node.start, node.end), replacements.filter((r) => r.start >= node.start && r.end <= node.end).map((r) => ({ start: r.start - node.start, end: r.end - node.start, text: r.text })));
  const emit = (b: Block, from?: Cell) => items.push(newCellJson(b, nb.hasIds ? b.id ?? newId() : undefined, style, from));
  for (const b of inserts.get(-1) ?? []) emit(b, fromOf(b));
  for (const [i, cell] of nb.cells.entries()) {
    if (kept.has(i)) items.push(within(cell.node));
    for (const b of inserts.get(i) ?? []) emit(b, fromOf(b));
  }
  const open = nb.cellsNode.start + 1;
  const close = nb.cellsNode.end - 1;
  const inner = items.length === 0 ? "" : `\n${style.itemIndent}${items.join(`,\n${style.itemIndent}`)}\n${style.closeIndent}`;
  const text = nb.text.slice(0, open) + inner + nb.text.slice(close);
  return { text, changed: changed.sort((a, b) => a - b), added, removed: removedCells.length - retyped.size };
}

function splice(text: string, replacements: Array<{ start: number; end: number; text: string }>): string {
  let out = text;
  for (const r of [...replacements].sort((a, b) => b.start - a.start)) out = out.slice(0, r.start) + r.text + out.slice(r.end);
  return out;
}

interface Style {
  /** One level of the file's indentation ("" for a file on one line). */
  unit: string;
  /** The indentation of a cell in the cells list, and of the list's closing bracket. */
  itemIndent: string;
  closeIndent: string;
}

/** The indentation the file uses, read off its cells list (Jupyter writes one space a level). */
function styleOf(nb: Notebook): Style {
  const lineStart = (at: number) => nb.text.lastIndexOf("\n", at - 1) + 1;
  const indentAt = (at: number) => {
    const start = lineStart(at);
    const m = /^[ \t]*/.exec(nb.text.slice(start, at));
    return m && start + m[0].length === at ? m[0] : null;
  };
  const listKey = nb.root.kind === "object" ? nb.root.entries.find((e) => e.key === "cells")!.keyStart : 0;
  const keyIndent = indentAt(listKey) ?? "";
  const first = nb.cellsNode.items[0];
  const itemIndent = first ? indentAt(first.start) : null;
  const oneLine = !nb.text.slice(nb.root.start, nb.root.end).includes("\n");
  const unit = oneLine ? "" : itemIndent !== null && itemIndent.startsWith(keyIndent) && itemIndent.length > keyIndent.length ? itemIndent.slice(keyIndent.length) : keyIndent || " ";
  return { unit, itemIndent: oneLine ? "" : itemIndent ?? keyIndent + unit, closeIndent: oneLine ? "" : keyIndent };
}

/** A source as nbformat writes it: a list of lines, each but the last ending with "\n". */
function sourceLines(source: string): string[] {
  if (source === "") return [];
  const parts = source.split("\n");
  return parts.map((p, i) => (i < parts.length - 1 ? `${p}\n` : p)).filter((p) => p !== "");
}

/** The JSON of a changed source, in the form (string or list) and indentation the old one had. */
function sourceJson(text: string, node: JsonNode, source: string, style: Style): string {
  if (node.kind === "scalar") return JSON.stringify(source);
  const lines = sourceLines(source);
  if (lines.length === 0) return "[]";
  const old = text.slice(node.start, node.end);
  if (!old.includes("\n") && node.kind === "array" && node.items.length > 0) return `[${lines.map((l) => JSON.stringify(l)).join(", ")}]`;
  const lineStart = text.lastIndexOf("\n", node.start - 1) + 1;
  const keyIndent = /^[ \t]*/.exec(text.slice(lineStart))![0];
  const first = node.kind === "array" ? node.items[0] : undefined;
  let itemIndent = keyIndent + style.unit;
  if (first) {
    const s = text.lastIndexOf("\n", first.start - 1) + 1;
    itemIndent = /^[ \t]*/.exec(text.slice(s))![0];
  }
  if (style.unit === "" && !old.includes("\n")) return JSON.stringify(lines);
  return `[\n${lines.map((l) => itemIndent + JSON.stringify(l)).join(",\n")}\n${keyIndent}]`;
}

/** A new cell as Jupyter writes one: keys sorted, the file's indentation; a retyped cell keeps its metadata. */
function newCellJson(b: Block, id: string | undefined, style: Style, from?: Cell): string {
  const cell: Record<string, unknown> = { cell_type: b.type };
  if (b.type === "code") cell.execution_count = null;
  if (id !== undefined) cell.id = id;
  cell.metadata = from?.metadata ?? {};
  if (b.type === "code") cell.outputs = [];
  cell.source = sourceLines(b.source);
  if (style.unit === "") return JSON.stringify(cell);
  return JSON.stringify(cell, null, style.unit).replace(/\n/g, `\n${style.itemIndent}`);
}

// ---------------------------------------------------------------------------------------
// Reading: the view with line numbers, each cell's outputs after its source.

export interface OutputImage {
  mediaType: "image/png" | "image/jpeg";
  data: string;
}

export interface Rendered {
  /** The page's lines, numbered or not: numbered ones carry their view line number. */
  lines: Array<{ n?: number; text: string }>;
  totalLines: number;
  /** The last view line shown. */
  last: number;
  /** The first image among the outputs shown, for doors that carry one. */
  image?: OutputImage;
  imagesNotShown: number;
}

const OUTPUT_LINES = 30;
const OUTPUT_CHARS = 3000;
const OUTPUT_INDENT = "       ";

/** The page of the view from line `offset` (1-based), at most `limit` numbered lines and `budget` bytes. */
export function renderNotebook(nb: Notebook, offset: number, limit: number, budget: number, maxLineChars: number): Rendered {
  const view = viewLines(nb);
  const lines: Rendered["lines"] = [];
  let bytes = 0;
  let last = offset - 1;
  let image: OutputImage | undefined;
  let imagesNotShown = 0;
  const push = (line: { n?: number; text: string }): boolean => {
    const size = Buffer.byteLength(line.text) + 10;
    if (lines.length > 0 && bytes + size > budget) return false;
    lines.push(line);
    bytes += size;
    return true;
  };
  for (let k = offset - 1; k < view.length && k < offset - 1 + limit; k++) {
    const v = view[k]!;
    let text = v.text;
    if (text.length > maxLineChars) text = `${text.slice(0, maxLineChars)}… [line truncated]`;
    if (!push({ n: k + 1, text })) break;
    last = k + 1;
    const endOfCell = k + 1 === view.length || view[k + 1]!.cell !== v.cell;
    if (!endOfCell) continue;
    const cell = nb.cells[v.cell]!;
    let stop = false;
    for (const [o, output] of cell.outputs.entries()) {
      const shown = outputLines(output, o + 1);
      if (shown.image) {
        if (!image) image = shown.image;
        else imagesNotShown++;
      }
      for (const text of shown.lines) {
        if (!push({ text: `${OUTPUT_INDENT}${text}` })) {
          stop = true;
          break;
        }
      }
      if (stop) break;
    }
    if (stop) break;
  }
  return { lines, totalLines: view.length, last, ...(image ? { image } : {}), imagesNotShown };
}

/** ANSI colour codes, as tracebacks carry them. */
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;

function textOf(value: unknown): string {
  return Array.isArray(value) ? value.join("") : typeof value === "string" ? value : "";
}

/** One output as lines under a heading, bounded; an image named (and handed over) instead of its bytes. */
function outputLines(output: unknown, n: number): { lines: string[]; image?: OutputImage } {
  const o = output as { output_type?: string; name?: string; text?: unknown; data?: Record<string, unknown>; ename?: string; evalue?: string; traceback?: unknown };
  const bounded = (heading: string, text: string): string[] => {
    const clean = text.replace(ANSI, "").replace(/\r\n?/g, "\n").replace(/\n$/, "");
    let lines = clean === "" ? [] : clean.split("\n");
    let note = "";
    if (lines.length > OUTPUT_LINES) {
      note = `[… ${lines.length - OUTPUT_LINES} more lines of this output]`;
      lines = lines.slice(0, OUTPUT_LINES);
    }
    let chars = 0;
    const kept: string[] = [];
    for (const line of lines) {
      if (chars + line.length > OUTPUT_CHARS) {
        note = `[… the rest of this output, ${clean.length - chars} characters, not shown]`;
        break;
      }
      kept.push(line);
      chars += line.length + 1;
    }
    return [heading, ...kept, ...(note ? [note] : [])];
  };
  switch (o.output_type) {
    case "stream":
      return { lines: bounded(`[output ${n} · ${o.name ?? "stream"}]`, textOf(o.text)) };
    case "error":
      return { lines: bounded(`[output ${n} · error · ${o.ename ?? "Error"}: ${(o.evalue ?? "").replace(/\s+/g, " ").slice(0, 200)}]`, Array.isArray(o.traceback) ? o.traceback.join("\n") : "") };
    case "execute_result":
    case "display_data": {
      const data = o.data ?? {};
      for (const mediaType of ["image/png", "image/jpeg"] as const) {
        const b64 = textOf(data[mediaType]).replace(/\s+/g, "");
        if (b64) {
          const size = Math.floor((b64.length * 3) / 4);
          return { lines: [`[output ${n} · ${mediaType}, ${grouped(size)} bytes]`], image: { mediaType, data: b64 } };
        }
      }
      const kind = o.output_type === "execute_result" ? "result" : "display";
      if (data["text/plain"] !== undefined) return { lines: bounded(`[output ${n} · ${kind}]`, textOf(data["text/plain"])) };
      const types = Object.keys(data);
      return { lines: [`[output ${n} · ${kind} · ${types.join(", ") || "no data"}, not shown as text]`] };
    }
    default:
      return { lines: [`[output ${n} · ${String(o.output_type)}]`] };
  }
}
