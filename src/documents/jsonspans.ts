// Where each value of a JSON document sits in its text: a parse that keeps offsets, so that a
// writer can replace one value's bytes and leave every other byte as it was (the notebook
// writer keeps a file's own layout, key order and escapes this way). Strict JSON only.

export type JsonNode =
  | { kind: "object"; start: number; end: number; entries: Array<{ key: string; keyStart: number; value: JsonNode }> }
  | { kind: "array"; start: number; end: number; items: JsonNode[] }
  | { kind: "scalar"; start: number; end: number };

export class JsonSyntaxError extends Error {}

/** The tree of `text`'s values with their [start, end) offsets; throws JsonSyntaxError. */
export function jsonSpans(text: string): JsonNode {
  let at = 0;
  const fail = (what: string): never => {
    throw new JsonSyntaxError(`${what} at offset ${at}`);
  };
  const space = () => {
    while (at < text.length) {
      const c = text.charCodeAt(at);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) at++;
      else break;
    }
  };
  const string = (): void => {
    if (text[at] !== '"') fail("a string expected");
    at++;
    for (;;) {
      if (at >= text.length) fail("an unterminated string");
      const c = text[at]!;
      if (c === '"') {
        at++;
        return;
      }
      at += c === "\\" ? 2 : 1;
    }
  };
  const value = (depth: number): JsonNode => {
    if (depth > 512) fail("nesting too deep");
    space();
    const start = at;
    const c = text[at];
    if (c === "{") {
      at++;
      const entries: Array<{ key: string; keyStart: number; value: JsonNode }> = [];
      space();
      if (text[at] === "}") {
        at++;
        return { kind: "object", start, end: at, entries };
      }
      for (;;) {
        space();
        const keyStart = at;
        string();
        const key = JSON.parse(text.slice(keyStart, at)) as string;
        space();
        if (text[at] !== ":") fail('":" expected');
        at++;
        entries.push({ key, keyStart, value: value(depth + 1) });
        space();
        if (text[at] === ",") {
          at++;
          continue;
        }
        if (text[at] === "}") {
          at++;
          return { kind: "object", start, end: at, entries };
        }
        fail('"," or "}" expected');
      }
    }
    if (c === "[") {
      at++;
      const items: JsonNode[] = [];
      space();
      if (text[at] === "]") {
        at++;
        return { kind: "array", start, end: at, items };
      }
      for (;;) {
        items.push(value(depth + 1));
        space();
        if (text[at] === ",") {
          at++;
          continue;
        }
        if (text[at] === "]") {
          at++;
          return { kind: "array", start, end: at, items };
        }
        fail('"," or "]" expected');
      }
    }
    if (c === '"') {
      string();
      return { kind: "scalar", start, end: at };
    }
    const m = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(text.slice(at, at + 64));
    if (!m) fail("a value expected");
    at += m![0].length;
    return { kind: "scalar", start, end: at };
  };
  const root = value(0);
  space();
  if (at !== text.length) fail("text after the document");
  return root;
}

/** The value of an object node's `key`, if it has one. */
export function member(node: JsonNode, key: string): JsonNode | undefined {
  return node.kind === "object" ? node.entries.find((e) => e.key === key)?.value : undefined;
}
