// argv → tool input. Each input field has a flag (--old-string and --old_string), the
// primary field is positional, long text fields take --<field>-file PATH|-, and the
// switches below configure kt itself. Unknown flags are usage errors (exit 2).
import { readFileSync } from "node:fs";
import type * as z from "zod/mini";
import { KtError, type Tool } from "../tools/tool.ts";
import { decodeUtf8Exact, invalidUtf8At } from "../core/text.ts";

export class UsageError extends Error {
  override name = "UsageError";
}

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
}

type Kind = "string" | "number" | "boolean" | "json";

const SWITCHES: Record<string, { key: keyof Options; value: boolean; tools?: readonly string[] }> = {
  json: { key: "json", value: false },
  session: { key: "session", value: true },
  "state-dir": { key: "stateDir", value: true },
  root: { key: "root", value: true },
  "call-id": { key: "callId", value: true },
  verbose: { key: "verbose", value: false },
  "skip-read-check": { key: "skipReadCheck", value: false, tools: ["write", "edit"] },
  "dry-run": { key: "dryRun", value: false, tools: ["write", "edit", "patch"] },
  trace: { key: "trace", value: false, tools: ["edit", "patch"] },
  strict: { key: "strict", value: false, tools: ["edit"] },
};

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
  for (const [name, schema] of Object.entries(tool.parameters.shape)) kinds.set(name, kindOf(schema as z.ZodMiniType));
  return kinds;
}

function kindOf(schema: z.ZodMiniType): Kind {
  let def = schema._zod.def as { type: string; innerType?: z.ZodMiniType };
  while ((def.type === "optional" || def.type === "default" || def.type === "nullable") && def.innerType) {
    def = def.innerType._zod.def as typeof def;
  }
  if (def.type === "boolean") return "boolean";
  if (def.type === "number" || def.type === "int") return "number";
  // A list or an object (edit's edits) is given as JSON text, inline or through --<field>-file.
  if (def.type === "array" || def.type === "object") return "json";
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

  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    // No option holds a line break before its "=": such an argument is text (a unified diff
    // given whole starts with "--- "), never an unknown option.
    if (arg.includes("\n") && !/^--[A-Za-z][\w-]*=/.test(arg)) {
      positionals.push(arg);
      continue;
    }
    if (!arg.startsWith("--") || arg === "-") {
      if (arg.startsWith("-") && arg !== "-" && !/^-\d/.test(arg)) throw new UsageError(`unknown option ${arg}`);
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    const inline = eq === -1 ? undefined : arg.slice(eq + 1);
    const takeValue = (): string => {
      if (inline !== undefined) return inline;
      const next = argv[i + 1];
      if (next === undefined) throw new UsageError(`option --${name} needs a value`);
      i++;
      return next;
    };

    const sw = SWITCHES[name] ?? SWITCHES[name.replace(/_/g, "-")];
    if (sw) {
      if (sw.tools && !sw.tools.includes(tool.name)) throw new UsageError(`option --${name} does not apply to kt ${tool.name}`);
      (options as unknown as Record<string, unknown>)[sw.key] = sw.value ? takeValue() : parseBool(name, inline);
      continue;
    }
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
      continue;
    }
    const negated = name.startsWith("no-") ? names.get(name.slice(3)) : undefined;
    if (negated && kinds.get(negated) === "boolean") {
      input[negated] = false;
      continue;
    }
    const field = names.get(name);
    if (!field) throw new UsageError(`unknown option --${name}${suggestFlag(name, [...names.keys()])}`);
    const kind = kinds.get(field)!;
    if (kind === "boolean") input[field] = parseBool(name, inline);
    else if (kind === "json") input[field] = parseJson(takeValue(), `--${name}`);
    else if (kind === "number") {
      const raw = takeValue();
      const n = Number(raw);
      input[field] = raw.trim() !== "" && Number.isFinite(n) ? n : raw;
    } else input[field] = takeValue();
  }

  mapPositionals(tool, positionals, input);
  return { input, given: Object.keys(input).length > 0 || problem !== undefined, options, ...(problem ? { problem } : {}) };
}

function mapPositionals(tool: Tool, positionals: string[], input: Record<string, unknown>): void {
  if (positionals.length === 0) return;
  if (typeof tool.positionals === "function") {
    const kinds = fieldKinds(tool);
    for (const [field, value] of Object.entries(tool.positionals(positionals))) {
      if (field in input) throw new UsageError(`"${field}" was given both as an argument and as --${field.replace(/_/g, "-")}`);
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
  positionals.forEach((value, i) => {
    const field = order[i]!;
    if (field in input) throw new UsageError(`"${field}" was given both as an argument and as --${field.replace(/_/g, "-")}`);
    const n = Number(value);
    input[field] = kinds.get(field) === "number" && value.trim() !== "" && Number.isFinite(n) ? n : value;
  });
}

function parseJson(text: string, flag: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${flag}: not valid JSON (${(error as Error).message}); it takes a JSON array such as [{"old_string": "a", "new_string": "b"}]`);
  }
}

function parseBool(name: string, inline: string | undefined): boolean {
  if (inline === undefined || inline === "true" || inline === "1") return true;
  if (inline === "false" || inline === "0") return false;
  throw new UsageError(`option --${name} is a switch: use --${name} or --${name}=false`);
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
export function strictText(bytes: Uint8Array, what: string): string | KtError {
  const text = decodeUtf8Exact(bytes);
  if (text !== null) return text;
  return new KtError(
    "INVALID_ARGS",
    `${what} is not valid UTF-8 text (${invalidAt(bytes)}). kt carries text fields as UTF-8 and will not replace bytes it cannot decode, so nothing was changed. Send the text as UTF-8 (e.g. convert it with iconv -f latin1 -t utf-8).`,
  );
}

/**
 * An argument the runtime had to decode with U+FFFD: the raw command line (Linux, from
 * /proc/self/cmdline) tells whether it held bytes that are not UTF-8, which would else be
 * written as U+FFFD. Returns the refusal, or undefined.
 */
export function argvNotUtf8(argv: readonly string[]): KtError | undefined {
  if (!argv.some((a) => a.includes("\uFFFD"))) return undefined;
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
    const shown = (decodeUtf8Exact(args[k - 1] ?? Buffer.alloc(0)) ?? "").startsWith("--") ? ` (the value of ${decodeUtf8Exact(args[k - 1]!)})` : "";
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
