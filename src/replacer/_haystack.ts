// The file content plus facts about it that several strategies need, each computed once and
// only when first asked for. It never holds a modified copy of the content: every offset it
// hands out is an offset into `content`.
import { lineOfOffset, lineStarts } from "./lines.ts";
import { fold, hasFoldable, isBlank, looseKey, squeezeKey } from "./_text.ts";
import { detectUnit, type MergeContext, type Unit } from "./_merge.ts";

/** Lines either side of a match whose indentation shows the file's unit. */
const UNIT_WINDOW = 200;

export class Haystack {
  readonly content: string;
  readonly starts: Int32Array;
  readonly lineCount: number;
  #trimmedIds?: Int32Array;
  #idByTrimmed?: Map<string, number>;
  #linesById?: number[][];
  #looseKeys?: (string | undefined)[];
  #squeezed?: Map<string, number[]>;
  #folded?: string;

  constructor(content: string, starts: Int32Array = lineStarts(content)) {
    this.content = content;
    this.starts = starts;
    this.lineCount = this.starts.length;
  }

  /**
   * The content from line `from` (0-based, < lineCount) on, as a haystack of its own: its line
   * starts are this one's, shifted, so the rest of the file is not scanned for line breaks
   * again (apply_patch searches each hunk after the one before it).
   */
  from(from: number): Haystack {
    const base = this.starts[from]!;
    const starts = this.starts.slice(from);
    for (let i = 0; i < starts.length; i++) starts[i]! -= base;
    return new Haystack(this.content.slice(base), starts);
  }

  /** Line i (0-based) without its "\n". */
  line(i: number): string {
    return this.content.slice(this.starts[i]!, this.lineEnd(i));
  }

  /** Offset of the "\n" that ends line i, or the content length for the last line. */
  lineEnd(i: number): number {
    return i + 1 < this.lineCount ? this.starts[i + 1]! - 1 : this.content.length;
  }

  /** 1-based line of an offset. */
  lineOf(offset: number): number {
    return lineOfOffset(this.starts, offset);
  }

  /** Span of lines [first, last] (0-based); with `newline`, the "\n" after `last` too when there is one. */
  span(first: number, last: number, newline: boolean): { start: number; end: number } {
    const end = this.lineEnd(last);
    return { start: this.starts[first]!, end: newline && end < this.content.length ? end + 1 : end };
  }

  /** Id of each line's trimmed text: equal ids ⇔ equal trimmed lines. */
  trimmedIds(): Int32Array {
    if (this.#trimmedIds) return this.#trimmedIds;
    const ids = new Int32Array(this.lineCount);
    const byText = new Map<string, number>();
    const linesById: number[][] = [];
    for (let i = 0; i < this.lineCount; i++) {
      const t = this.line(i).trim();
      let id = byText.get(t);
      if (id === undefined) {
        id = linesById.length;
        byText.set(t, id);
        linesById.push([]);
      }
      ids[i] = id;
      linesById[id]!.push(i);
    }
    this.#idByTrimmed = byText;
    this.#linesById = linesById;
    return (this.#trimmedIds = ids);
  }

  /** Id of a trimmed text, or -1 when no line of the file trims to it. */
  idOf(trimmed: string): number {
    this.trimmedIds();
    return this.#idByTrimmed!.get(trimmed) ?? -1;
  }

  /** Lines (0-based, ascending) whose trimmed text has this id. */
  linesWithId(id: number): readonly number[] {
    this.trimmedIds();
    return id < 0 ? [] : this.#linesById![id]!;
  }

  /** looseKey of line i, cached. */
  looseKey(i: number): string {
    this.#looseKeys ??= new Array(this.lineCount);
    return (this.#looseKeys[i] ??= looseKey(this.line(i)));
  }

  /** Lines (0-based) by squeezeKey: every line that equals a given one up to whitespace and typography. */
  squeezed(): Map<string, number[]> {
    if (this.#squeezed) return this.#squeezed;
    const map = new Map<string, number[]>();
    for (let i = 0; i < this.lineCount; i++) {
      const key = squeezeKey(this.line(i));
      if (key === "") continue;
      const list = map.get(key);
      if (list) list.push(i);
      else map.set(key, [i]);
    }
    return (this.#squeezed = map);
  }

  /**
   * What a merge needs to know of the file beyond the span [start, end): the next non-blank line
   * after it, and the indentation unit of the lines around it (a span is often too short to show
   * it; the whole file would cost a pass over every line on each edit).
   */
  context(start: number, end: number): MergeContext {
    let unit: Unit | undefined;
    const unitAround = () => {
      if (unit) return unit;
      const first = Math.max(0, this.lineOf(start) - 1 - UNIT_WINDOW);
      const last = Math.min(this.lineCount, this.lineOf(end) + UNIT_WINDOW);
      const around: string[] = [];
      for (let i = first; i < last; i++) around.push(this.line(i));
      return (unit = detectUnit(around));
    };
    let line = end > 0 && this.content[end - 1] === "\n" ? this.lineOf(end) - 1 : this.lineOf(end);
    while (line < this.lineCount && isBlank(this.line(line))) line++;
    return { unit: unitAround, ...(line < this.lineCount ? { after: this.line(line) } : {}) };
  }

  /** The content with typographic look-alikes folded; same length, so offsets carry over. */
  folded(): string {
    return (this.#folded ??= hasFoldable(this.content) ? fold(this.content) : this.content);
  }
}
