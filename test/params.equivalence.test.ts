// The check every call's input takes without zod (src/tools/params.ts, through quickParse)
// answers exactly what the full zod parse answers (src/tools/_zod.ts, the code every call
// once ran): for every tool, on random and adversarial inputs (wrong types, nulls for
// required and optional fields, extra keys and aliases, strings for booleans as Claude Code
// sends them, unsafe and fractional numbers, -0, NaN, unicode, nested lists of objects),
// the same accept or refuse, the same parsed value (fields, their order, -0 kept), and the
// same refusal prose. The schema zod builds is the one each tool wrote by hand: test/schema*
// snapshot its JSON Schema.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { loadAllTools, loadUnlistedTool } from "../src/tools/registry.ts";
import { parseInput, quickParse, type Tool } from "../src/tools/tool.ts";
import { parseWithZod } from "../src/tools/_zod.ts";
import { p, type ObjectParam, type Param } from "../src/tools/params.ts";

const tools: Tool[] = [...(await loadAllTools()), (await loadUnlistedTool("notebook_edit"))!];

/** Same value, same shape: keys in the same order, -0 is not 0, same prototypes. */
function same(a: unknown, b: unknown): boolean {
  if (typeof a !== "object" || a === null || typeof b !== "object" || b === null) return Object.is(a, b);
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  const ka = Reflect.ownKeys(a), kb = Reflect.ownKeys(b);
  if (ka.length !== kb.length || ka.some((k, i) => k !== kb[i])) return false;
  return ka.every((k) => same((a as Record<PropertyKey, unknown>)[k], (b as Record<PropertyKey, unknown>)[k]));
}

const JUNK: readonly unknown[] = [
  null, true, false, "true", "false", "1", "0", "", " ", "-1", "1e3", 0, -0, 1, -1, 1.5, 0.1, 2 ** 53, 2 ** 53 - 1, -(2 ** 53), 1e308, -1e308, Number.MIN_VALUE,
  NaN, Infinity, -Infinity, [], [null], [""], ["a", 1], {}, { a: 1 }, "😀", "\u0000", "\uD800", "e\u0301", "null", "undefined", "[]", "{}",
];
const junk = fc.oneof(fc.constantFrom(...JUNK), fc.jsonValue({ maxDepth: 2 }), fc.string({ unit: "grapheme" }), fc.double(), fc.integer());

/** A value the field takes. */
function valid(param: Param): fc.Arbitrary<unknown> {
  switch (param.kind) {
    case "string":
      return fc.oneof(fc.string({ unit: "grapheme", minLength: param.minLength ?? 0 }), fc.string({ unit: "binary", minLength: param.minLength ?? 0 }), fc.constantFrom("a", "true", "😀😀"));
    case "int": {
      const min = param.minimum ?? Number.MIN_SAFE_INTEGER, max = param.maximum ?? Number.MAX_SAFE_INTEGER;
      return fc.oneof(fc.integer({ min: Math.max(min, -1000), max: Math.min(max, 100_000) }), fc.constantFrom(min, max, ...(min <= 0 && max >= 0 ? [-0] : [])));
    }
    case "boolean":
      return fc.boolean();
    case "enum":
      return fc.constantFrom(...param.values);
    case "array":
      return fc.array(valid(param.element), { minLength: param.minLength ?? 0, maxLength: 4 });
    case "union":
      return fc.oneof(...(param.options as Param[]).map(valid));
    case "object":
      return object(param);
    case "optional":
      // null is "not given" (SPEC §7.5).
      return fc.oneof({ weight: 4, arbitrary: valid(param.inner) }, { weight: 1, arbitrary: fc.constant(null) });
  }
}

/** A value just outside what the field takes, or one of the same look. */
function near(param: Param): fc.Arbitrary<unknown> {
  switch (param.kind) {
    case "string":
      return fc.constantFrom(...(param.minLength ? ["", "😀".repeat(param.minLength - 1) || "", "\uD800"] : [1, true, ["a"]]));
    case "int": {
      const min = param.minimum ?? Number.MIN_SAFE_INTEGER, max = param.maximum ?? Number.MAX_SAFE_INTEGER;
      return fc.constantFrom(min - 1, max + 1, min + 0.5, String(min), NaN, Infinity, 2 ** 53, -(2 ** 53));
    }
    case "boolean":
      return fc.constantFrom("true", "false", 1, 0, "yes");
    case "enum":
      return fc.constantFrom(...param.values.map((v) => v.toUpperCase()), `${param.values[0]} `, "");
    case "array":
      return fc.oneof(fc.constant([]), fc.array(fc.oneof(valid(param.element), near(param.element)), { minLength: 1, maxLength: 3 }), valid(param.element));
    case "union":
      return fc.oneof(...(param.options as Param[]).map(near));
    case "object":
      return fc.oneof(object(param, {}, true), fc.constant({}));
    case "optional":
      return fc.oneof(near(param.inner), fc.constant(undefined));
  }
}

const EXTRA_KEYS = ["-i", "-n", "-A", "-C", "glob", "path", "filePath", "__proto__", "constructor", "toString", "hasOwnProperty", "file-path", "FILE_PATH", "limit ", "x"];

/** An object of fitting fields (some left out), with none, one or two things wrong (`spoiled`: at least one). */
function object(param: ObjectParam, aliases: Readonly<Record<string, string>> = {}, spoiled = false): fc.Arbitrary<Record<string, unknown>> {
  const keys = Object.keys(param.shape);
  const fields = keys.map((key) => {
    const f = param.shape[key]!;
    return f.kind === "optional" ? fc.option(valid(f), { nil: undefined, freq: 2 }) : fc.option(valid(f), { nil: undefined, freq: 30 });
  });
  const wrong = fc.oneof(
    fc.constantFrom(...keys).chain((key) => fc.tuple(fc.constant(key), fc.oneof(near(param.shape[key]!), junk))),
    fc.tuple(fc.oneof(fc.constantFrom(...EXTRA_KEYS, ...Object.keys(aliases)), fc.string()), fc.oneof(junk, valid(param.shape[keys[0]!] ?? p.string()), fc.constant(undefined))),
  );
  const mistakes = spoiled ? fc.array(wrong, { minLength: 1, maxLength: 2 }) : fc.oneof({ weight: 2, arbitrary: fc.constant([]) }, { weight: 2, arbitrary: fc.array(wrong, { minLength: 1, maxLength: 2 }) });
  return fc.tuple(fc.tuple(...fields), mistakes, fc.boolean()).map(([values, more, reversed]) => {
    const entries: [string, unknown][] = keys.flatMap((key, i) => (values[i] === undefined ? [] : [[key, values[i]] as [string, unknown]]));
    for (const [key, value] of more) {
      const at = entries.findIndex(([k]) => k === key);
      if (at === -1) entries.push([key, value]);
      else entries[at] = [key, value];
    }
    if (reversed) entries.reverse();
    // fromEntries makes "__proto__" an own key, as JSON.parse does.
    return Object.fromEntries(entries);
  });
}

function raw(tool: Tool): fc.Arbitrary<unknown> {
  return fc.oneof({ weight: 12, arbitrary: object(tool.parameters, tool.aliases) }, { weight: 1, arbitrary: junk });
}

/** Returns whether zod took the input. */
async function agree(tool: Tool, input: unknown): Promise<boolean> {
  const reference = parseWithZod(tool, input);
  const quick = quickParse(tool, input);
  const answered = await parseInput(tool, input);
  if (reference.ok) {
    // Everything zod takes, the quick check takes too, with the very same value.
    expect(quick !== undefined && same(quick, reference.input), `${tool.name}: ${Bun.inspect(input)}`).toBe(true);
    expect(answered.ok && same(answered.input, reference.input)).toBe(true);
  } else {
    expect(quick, `${tool.name} took what zod refuses: ${Bun.inspect(input)}`).toBeUndefined();
    expect(answered).toEqual(reference);
  }
  return reference.ok;
}

describe("the quick parse and zod's", () => {
  for (const tool of tools) {
    test(`${tool.name}: same answer on random and adversarial inputs`, async () => {
      let taken = 0;
      const runs = 1500;
      await fc.assert(fc.asyncProperty(raw(tool), async (input) => void (taken += Number(await agree(tool, input)))), { numRuns: runs });
      // Both answers are exercised, each often.
      expect(taken).toBeGreaterThan(runs * 0.05);
      expect(taken).toBeLessThan(runs * 0.95);
    });
  }

  test("hand-picked edges: undefined values, prototypes, holes, inherited and symbol keys", async () => {
    const read = tools.find((t) => t.name === "read")!;
    const edit = tools.find((t) => t.name === "edit")!;
    const inherited = Object.assign(Object.create({ offset: 3 }), { file_path: "a" });
    // The copy parseInput makes keeps own keys only: an inherited stray key is not seen by either.
    const polluted = Object.assign(Object.create({ stray: 1 }), { file_path: "a" });
    const hole = { file_path: "a", edits: [{ old_string: "x", new_string: "y" }, , { old_string: "p", new_string: "q" }] }; // eslint-disable-line no-sparse-arrays
    const cases: [Tool, unknown][] = [
      [read, { file_path: "a", offset: undefined }],
      [read, { file_path: undefined }],
      [read, inherited],
      [read, polluted],
      [read, Object.assign(Object.create(null), { file_path: "a", limit: 5 })],
      [read, { file_path: "a", [Symbol("s")]: 1 }],
      [read, new (class { file_path = "a"; })()],
      [read, new Date(0)],
      [read, JSON.parse('{"file_path":"a","__proto__":{"limit":1}}')],
      [read, { limit: 2, offset: -0, file_path: "a" }],
      [read, { path: "a", file_path: "a" }],
      [read, { path: "a", file_path: "b" }],
      [read, { path: null, file_path: "a", pages: null }],
      [edit, hole],
      [edit, { file_path: "a", edits: [] }],
      [edit, { file_path: "a", edits: [{ old_string: "x", new_string: "y", replace_all: null }] }],
      [edit, { file_path: "a", edits: Object.assign([{ old_string: "x", new_string: "y" }], { extra: 1 }) }],
      [tools.find((t) => t.name === "grep")!, { pattern: "a", "-i": true, case_sensitive: true }],
      [tools.find((t) => t.name === "grep")!, { pattern: "a", "-i": true, "-n": false, case_sensitive: null }],
      [tools.find((t) => t.name === "code")!, { action: "hover", line: "3:4" }],
      [tools.find((t) => t.name === "code")!, { action: "hover", line: 0 }],
    ];
    const taken = [];
    for (const [tool, input] of cases) taken.push(await agree(tool, input));
    expect(taken).toEqual([true, false, true, true, true, true, true, false, false, true, true, false, true, false, false, true, true, false, true, true, false]);
    // The value read gets starts at line… whatever was asked, in the description's order.
    expect(Object.keys(quickParse(read, { limit: 2, offset: -0, file_path: "a" })!)).toEqual(["file_path", "offset", "limit"]);
    expect(Object.is(quickParse(read, { file_path: "a", offset: -0 })!.offset, -0)).toBe(true);
  });

  test("a description of every kind, alone: bounds inclusive, a union takes its first fitting option", async () => {
    const tool = {
      name: "t",
      parameters: p.object({
        s: p.optional(p.string({ minLength: 2 })),
        n: p.optional(p.int({ minimum: -3, maximum: 3 })),
        u: p.optional(p.union([p.int({ minimum: 1 }), p.string()])),
        l: p.optional(p.array(p.enum(["a", "b"]), { minLength: 1 })),
      }),
    };
    for (const input of [{ s: "ab" }, { s: "a" }, { s: "😀" }, { n: -3 }, { n: 3 }, { n: 4 }, { n: -4 }, { u: 1 }, { u: 0 }, { u: "0" }, { l: ["a", "b"] }, { l: [] }, { l: ["c"] }, {}]) {
      await agree(tool as unknown as Tool, input);
    }
    // zod counts a string's length in code points: one emoji is one, two UTF-16 units.
    expect(quickParse(tool, { s: "😀" })).toBeUndefined();
    expect(quickParse(tool, { s: "😀😀" })).toEqual({ s: "😀😀" });
    expect(quickParse(tool, { n: 4 })).toBeUndefined();
  });
});
