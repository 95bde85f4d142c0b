// argv → tool input. Each input field has a flag (--old-string and --old_string), the
// primary field is positional, long text fields take --<field>-file PATH|-, and the
// switches of switches.ts configure kt itself. Unknown flags are usage errors (exit 2).
import { readFileSync } from "node:fs";
import { unwrap, type Param } from "../tools/params.ts";
import { KtError, type Tool } from "../tools/tool.ts";
import { UsageError } from "./exit.ts";
import { flag, parseSwitches } from "./switches.ts";
import { decodeUtf8Exact, invalidUtf8At } from "../core/text.ts";
import { invalidInput } from "../core/result.ts";

export { UsageError };

/** Switches every tool subcommand takes; never input fields, so a model cannot set them. */
export interface Options {
  json: boolean;
  session?: string;
  stateDir?: string;
  root?: string;
  callId?: string;
  verbose: boolean;
  skipReadCheck: boolean;
  dryRun: boolean;
  trace: boolean;
  strict: boolean;
  /** SPEC §8.2, set by a person only. */
  sandbox?: string;
  writable?: string[];
  allowNetwork?: boolean;
  denyRead?: string[];
  /** --no-diagnostics (SPEC §8.1). */
  noDiagnostics?: boolean;
}

type Kind = "string" | "number" | "boolean" | "json";

export interface ParsedArgv {
  input: Record<string, unknown>;
  /** At least one input field came from the command line. */
  given: boolean;
  options: Options;
  /** A flag's value kt cannot carry (a --<field>-file that is not UTF-8): answered as a tool error. */
  problem?: KtError;
}

/** Parses the switches that every subcommand shares, leaving the rest. */
export function baseOptions(): Options {
  return { json: false, verbose: false, skipReadCheck: false, dryRun: false, trace: false, strict: false };
}

export function fieldKinds(tool: Tool): Map<string, Kind> {
  const kinds = new Map<string, Kind>();
  for (const [name, param] of Object.entries(tool.parameters.shape)) kinds.set(name, kindOf(param as Param));
  return kinds;
}

function kindOf(param: Param): Kind {
  const def = unwrap(param);
  if (def.kind === "boolean") return "boolean";
  if (def.kind === "int") return "number";
  // A list or an object (edit's edits) is given as JSON text, inline or through --<field>-file.
  if (def.kind === "array" || def.kind === "object") return "json";
  return "string";
}

export function parseToolArgv(tool: Tool, argv: readonly string[]): ParsedArgv {
  const kinds = fieldKinds(tool);
  const options = baseOptions();
  const input: Record<string, unknown> = {};
  const positionals: string[] = [];
  const names = new Map<string, string>(); // flag spelling → field
  for (const field of kinds.keys()) {
    names.set(field, field);
    names.set(field.replace(/_/g, "-"), field);
  }
  for (const [alias, field] of Object.entries(tool.aliases ?? {})) {
    names.set(alias, field);
    names.set(alias.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`), field);
  }
  const longText = new Set(tool.longText ?? []);
  let stdinUsed = false;
  let problem: KtError | undefined = argvNotUtf8(argv);

  // A tool's input fields, after the switches: returns how many arguments after the flag it used.
  const field = (name: string, inline: string | undefined, next: string | undefined): number | undefined => {
    let used = 0;
    const takeValue = (): string => {
      if (inline !== undefined) return inline;
      if (next === undefined) throw new UsageError(`option --${name} needs a value`);
      used = 1;
      return next;
    };
    const fileField = name.endsWith("-file") || name.endsWith("_file") ? names.get(name.slice(0, -5)) : undefined;
    if (fileField && longText.has(fileField)) {
      const source = takeValue();
      if (source === "-") {
        if (stdinUsed) throw new UsageError("only one option can read from stdin (-)");
        stdinUsed = true;
      }
      const text = readText(source === "-" ? 0 : source, name);
      if (text instanceof KtError) problem ??= text;
      else input[fileField] = kinds.get(fileField) === "json" ? parseJson(text, `--${name}`) : text;
      return used;
    }
    const negated = name.startsWith("no-") ? names.get(name.slice(3)) : undefined;
    if (negated && kinds.get(negated) === "boolean") {
      input[negated] = false;
      return 0;
    }
    const target = names.get(name);
    if (!target) return undefined;
    const kind = kinds.get(target)!;
    if (kind === "boolean") input[target] = flag(name, inline);
    else if (kind === "json") input[target] = parseJson(takeValue(), `--${name}`);
    else if (kind === "number") {
      const raw = takeValue();
      const n = Number(raw);
      input[target] = raw.trim() !== "" && Number.isFinite(n) ? n : raw;
    } else input[target] = takeValue();
    return used;
  };
  const switched = parseSwitches(tool.name, argv, { tool: true, other: field, hint: (name) => suggestFlag(name, [...names.keys()]) });
  Object.assign(options, switched.values);
  positionals.push(...switched.positionals);

  mapPositionals(tool, positionals, input);
  return { input, given: Object.keys(input).length > 0 || problem !== undefined, options, ...(problem ? { problem } : {}) };
}

function mapPositionals(tool: Tool, positionals: string[], input: Record<string, unknown>): void {
  if (positionals.length === 0) return;
  if (typeof tool.positionals === "function") {
    const kinds = fieldKinds(tool);
    for (const [field, value] of Object.entries(tool.positionals(positionals))) {
      if (field in input) throw new UsageError(`"${field}" was given both as an argument and as --${field.replace(/_/g, "-")}`);
      // A list field (replace's paths) takes the rest of the arguments as they are.
      if (Array.isArray(value)) {
        input[field] = value;
        continue;
      }
      const n = Number(value);
      input[field] = kinds.get(field) === "number" && value.trim() !== "" && Number.isFinite(n) ? n : value;
    }
    return;
  }
  const order = tool.positionals ?? [tool.primary];
  if (positionals.length > order.length) {
    throw new UsageError(`too many arguments: kt ${tool.name} takes ${order.map((f) => f.toUpperCase()).join(" ")} (got ${positionals.map((p) => JSON.stringify(p)).join(" ")})`);
  }
  const kinds = fieldKinds(tool);
  // A plain loop, as in argvNotUtf8: the first Array.prototype.forEach or .some of a process
  // is compiled from the engine's own source, a cost every `kt read` would pay.
  for (let i = 0; i < positionals.length; i++) {
    const value = positionals[i]!;
    const field = order[i]!;
    if (field in input) throw new UsageError(`"${field}" was given both as an argument and as --${field.replace(/_/g, "-")}`);
    const n = Number(value);
    input[field] = kinds.get(field) === "number" && value.trim() !== "" && Number.isFinite(n) ? n : value;
  }
}

function parseJson(text: string, flag: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${flag}: not valid JSON (${(error as Error).message}); it takes a JSON array such as [{"old_string": "a", "new_string": "b"}]`);
  }
}


/**
 * The text of a --<field>-file, byte for byte. Text fields are UTF-8 strings, so bytes that
 * are not UTF-8 cannot be carried: they are refused rather than turned into U+FFFD.
 */
function readText(source: string | number, flag: string): string | KtError {
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(source);
  } catch (error) {
    throw new UsageError(`--${flag}: cannot read ${source === 0 ? "stdin" : source}: ${(error as Error).message}`);
  }
  const text = decodeUtf8Exact(bytes);
  if (text !== null) return text;
  {
    const what = source === 0 ? "stdin" : String(source);
    return new KtError(
      "INVALID_ARGS",
      `--${flag}: ${what} is not valid UTF-8 text (${invalidAt(bytes)}). kt carries text fields as UTF-8 and will not replace bytes it cannot decode, so nothing was changed. Convert the file to UTF-8 first (e.g. iconv -f latin1 -t utf-8), or copy a binary file with cp.`,
    );
  }
}

function invalidAt(bytes: Uint8Array): string {
  return `the first byte that is not UTF-8 is at offset ${invalidUtf8At(bytes)}`;
}

/**
 * Text that reached kt some other way than a --<field>-file (stdin JSON, a call line): bytes
 * that are not UTF-8 are refused with prose rather than turned into U+FFFD.
 */
export function strictText(bytes: Uint8Array, what: string, tool?: string): string | KtError {
  const text = decodeUtf8Exact(bytes);
  if (text !== null) return text;
  const detail = `${what} is not valid UTF-8 text (${invalidAt(bytes)})`;
  const next = "kt carries text fields as UTF-8 and will not replace bytes it cannot decode, so nothing was changed. Send the text as UTF-8 (e.g. convert it with iconv -f latin1 -t utf-8).";
  return new KtError("INVALID_ARGS", tool === undefined ? `${detail}. ${next}` : invalidInput(tool, detail, next));
}

/**
 * An argument the runtime had to decode with U+FFFD: the raw command line (Linux, from
 * /proc/self/cmdline) tells whether it held bytes that are not UTF-8, which would else be
 * written as U+FFFD. Returns the refusal, or undefined.
 */
export function argvNotUtf8(argv: readonly string[]): KtError | undefined {
  let replaced = false;
  for (const arg of argv) if (arg.includes("\uFFFD")) replaced = true;
  if (!replaced) return undefined;
  let raw: Buffer;
  try {
    raw = readFileSync("/proc/self/cmdline");
  } catch {
    return undefined;
  }
  const args: Buffer[] = [];
  for (let start = 0; start < raw.length; ) {
    const end = raw.indexOf(0, start);
    args.push(raw.subarray(start, end === -1 ? raw.length : end));
    start = end === -1 ? raw.length : end + 1;
  }
  for (const [k, bytes] of args.entries()) {
    if (decodeUtf8Exact(bytes) !== null) continue;
    const shown = (decodeUtf8Exact(args[k - 1] ?? new Uint8Array(0)) ?? "").startsWith("--") ? ` (the value of ${decodeUtf8Exact(args[k - 1]!)})` : "";
    return new KtError(
      "INVALID_ARGS",
      `A command-line argument${shown} is not valid UTF-8 text (${invalidAt(bytes)}). kt carries text fields as UTF-8 and will not replace bytes it cannot decode, so nothing was changed. Pass the text as UTF-8, or give it in a file with the matching --<field>-file option.`,
    );
  }
  return undefined;
}

function suggestFlag(name: string, known: string[]): string {
  const hit = known.find((k) => k.startsWith(name) || name.startsWith(k));
  return hit ? ` (did you mean --${hit}?)` : "";
}
