// A tool's parameters, described as plain data: the fields, their types, bounds and
// descriptions. Every call checks its input against this description with `accept`, which
// needs nothing loaded; zod is built from the same description (src/tools/_zod.ts) only for
// what needs it: the JSON Schema of `kt schema`, `kt mcp` and --help, and the prose of a
// call that does not pass. `accept` takes only what zod takes and returns what zod returns;
// anything it is not sure of goes to zod, so the two cannot disagree on an answer
// (test/params.equivalence.test.ts).

export interface StringParam {
  readonly kind: "string";
  readonly minLength?: number;
  readonly description?: string;
}
export interface IntParam {
  readonly kind: "int";
  readonly minimum?: number;
  readonly maximum?: number;
  readonly description?: string;
}
export interface BooleanParam {
  readonly kind: "boolean";
  readonly description?: string;
}
export interface EnumParam<V extends string = string> {
  readonly kind: "enum";
  readonly values: readonly V[];
  readonly description?: string;
}
export interface ArrayParam<E extends Param = Param> {
  readonly kind: "array";
  readonly element: E;
  readonly minLength?: number;
  readonly description?: string;
}
export interface UnionParam<O extends readonly Param[] = readonly Param[]> {
  readonly kind: "union";
  readonly options: O;
  readonly description?: string;
}
export type Shape = Readonly<Record<string, Param>>;
/** An object that takes no other keys (zod's strictObject). */
export interface ObjectParam<S extends Shape = Shape> {
  readonly kind: "object";
  readonly shape: S;
}
export interface OptionalParam<I extends Param = Param> {
  readonly kind: "optional";
  readonly inner: I;
}
export type Param = StringParam | IntParam | BooleanParam | EnumParam | ArrayParam<any> | UnionParam<any> | ObjectParam<any> | OptionalParam<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

type Flat<T> = { [K in keyof T]: T[K] } & {};
type InferShape<S extends Shape> = Flat<
  { -readonly [K in keyof S as S[K] extends OptionalParam ? never : K]: Infer<S[K]> } & { -readonly [K in keyof S as S[K] extends OptionalParam ? K : never]?: Infer<S[K]> }
>;
/** The parsed input a description stands for (as zod's z.infer of the schema built from it). */
export type Infer<P> = P extends StringParam ? string
  : P extends IntParam ? number
  : P extends BooleanParam ? boolean
  : P extends EnumParam<infer V> ? V
  : P extends ArrayParam<infer E> ? Infer<E>[]
  : P extends UnionParam<infer O> ? Infer<O[number]>
  : P extends ObjectParam<infer S> ? InferShape<S>
  : P extends OptionalParam<infer I> ? Infer<I> | undefined
  : never;

type Described = { description?: string };

/** The builders, named after the zod functions they stand for. */
export const p = {
  string: (opts: Described & { minLength?: number } = {}): StringParam => ({ kind: "string", ...opts }),
  int: (opts: Described & { minimum?: number; maximum?: number } = {}): IntParam => ({ kind: "int", ...opts }),
  boolean: (opts: Described = {}): BooleanParam => ({ kind: "boolean", ...opts }),
  enum: <const V extends string>(values: readonly V[], opts: Described = {}): EnumParam<V> => ({ kind: "enum", values, ...opts }),
  array: <E extends Param>(element: E, opts: Described & { minLength?: number } = {}): ArrayParam<E> => ({ kind: "array", element, ...opts }),
  union: <const O extends readonly Param[]>(options: O, opts: Described = {}): UnionParam<O> => ({ kind: "union", options, ...opts }),
  object: <S extends Shape>(shape: S): ObjectParam<S> => ({ kind: "object", shape }),
  optional: <I extends Param>(inner: I): OptionalParam<I> => ({ kind: "optional", inner }),
};

/** The description under optional wrappers (there a field's own text lives). */
export function unwrap(param: Param): Exclude<Param, OptionalParam> {
  let at = param;
  while (at.kind === "optional") at = at.inner;
  return at;
}

/** A value that stands for "not sure": the caller asks zod. */
const UNSURE: unique symbol = Symbol("unsure");

/**
 * `value` parsed as zod parses it against the schema built from `param`, or undefined when
 * zod might refuse it (or this check is not sure how zod would answer). Objects come back
 * as new objects with their fields in the description's order, lists as new lists, as zod's do.
 */
export function accept(param: ObjectParam, value: unknown): Record<string, unknown> | undefined {
  const out = check(param, value);
  return out === UNSURE ? undefined : (out as Record<string, unknown>);
}

function check(param: Param, value: unknown): unknown {
  switch (param.kind) {
    case "string":
      return typeof value === "string" && (param.minLength === undefined || codePoints(value) >= param.minLength) ? value : UNSURE;
    case "int":
      return typeof value === "number" && Number.isSafeInteger(value) && (param.minimum === undefined || value >= param.minimum) && (param.maximum === undefined || value <= param.maximum)
        ? value
        : UNSURE;
    case "boolean":
      return typeof value === "boolean" ? value : UNSURE;
    case "enum":
      return typeof value === "string" && param.values.includes(value) ? value : UNSURE;
    case "array": {
      if (!Array.isArray(value) || Object.getPrototypeOf(value) !== Array.prototype) return UNSURE;
      if (param.minLength !== undefined && value.length < param.minLength) return UNSURE;
      const out: unknown[] = [];
      for (let i = 0; i < value.length; i++) {
        if (!Object.hasOwn(value, i)) return UNSURE;
        const item = check(param.element, value[i]);
        if (item === UNSURE) return UNSURE;
        out.push(item);
      }
      return out;
    }
    case "union":
      for (const option of param.options as readonly Param[]) {
        const out = check(option, value);
        if (out !== UNSURE) return out;
      }
      return UNSURE;
    case "object": {
      // Plain objects only (what JSON.parse and a spread make); anything else is zod's to judge.
      if (typeof value !== "object" || value === null) return UNSURE;
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) return UNSURE;
      const record = value as Record<string, unknown>;
      const shape = param.shape as Shape;
      for (const key in record) if (!Object.hasOwn(shape, key) || !Object.hasOwn(record, key)) return UNSURE;
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(shape)) {
        const field = shape[key]!;
        // As zod reads a field: `in`, then the value; an optional field present as undefined is kept so.
        if (!(key in record)) {
          if (field.kind !== "optional") return UNSURE;
          continue;
        }
        const given = record[key];
        if (given === undefined) {
          if (field.kind !== "optional") return UNSURE;
          out[key] = undefined;
          continue;
        }
        const parsed = check(field.kind === "optional" ? field.inner : field, given);
        if (parsed === UNSURE) return UNSURE;
        out[key] = parsed;
      }
      return out;
    }
    case "optional":
      return value === undefined ? UNSURE : check(param.inner, value);
  }
}

/** A string's length as zod's minLength counts it: in code points (a surrogate pair is one). */
function codePoints(text: string): number {
  let count = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    if ((text.charCodeAt(i) & 0xfc00) === 0xd800 && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      count--;
      i++;
    }
  }
  return count;
}

/** `value` without the null values of fields the description marks optional, at every depth (a copy where anything changed). */
export function dropNulls(param: Param, value: unknown): unknown {
  const def = unwrap(param);
  if (def.kind === "object" && typeof value === "object" && value !== null && !Array.isArray(value)) {
    const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    for (const [key, field] of Object.entries(def.shape as Shape)) {
      if (!Object.hasOwn(out, key)) continue;
      if (out[key] === null && field.kind === "optional") delete out[key];
      else out[key] = dropNulls(field, out[key]);
    }
    return out;
  }
  if (def.kind === "array" && Array.isArray(value)) return value.map((item) => dropNulls(def.element as Param, item));
  return value;
}
