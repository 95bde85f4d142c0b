// grep (SPEC §4.4): regex search over the files below a path, grouped by file, newest
// files first. Two engines, one output: the built-in engine and ripgrep
// (KT_GREP_ENGINE=auto|builtin|rg) feed the same collector, and the text is written
// from it in exactly one place, below.
import * as z from "zod/mini";
import description from "./grep.txt" with { type: "text" };
import { defineTool, type ToolContext, type ToolOutput } from "./tool.ts";
import { spillFile } from "../core/truncate.ts";
import { compilePattern, type Compiled } from "../search/regex.ts";
import { count, makePlan, quoted, shownPath, timeLimitMs, type SearchOutcome, type SearchPlan } from "../search/plan.ts";
import { Collector, type FileHits } from "../search/collect.ts";
import { searchBuiltin, searchFile } from "../search/builtin.ts";
import { searchRg } from "../search/rg.ts";
import { nearest, probeFor } from "../search/nearmiss.ts";

/** Matching lines shown; the rest go to the spill file. */
export const MAX_SHOWN = 100;

export const Parameters = z.strictObject({
  pattern: z.string().check(
    z.minLength(1),
    z.describe("Regular expression to search for (the syntax ripgrep and JavaScript share). Case-insensitive unless it contains an uppercase letter."),
  ),
  path: z.optional(z.string().check(z.describe("Directory or file to search in. Defaults to the working directory."))),
  include: z.optional(z.string().check(z.describe('Glob filter for file names, e.g. "*.ts" or "src/**/*.py". A glob without "/" matches file names at any depth.'))),
});

export type Engine = { name: "builtin" } | { name: "rg"; path: string };

/** KT_GREP_ENGINE: auto (rg when on PATH), builtin or rg. */
export function chooseEngine(ctx: Pick<ToolContext, "warn">, env = process.env): Engine {
  const want = (env.KT_GREP_ENGINE ?? "auto").trim().toLowerCase() || "auto";
  if (want !== "auto" && want !== "builtin" && want !== "rg") {
    ctx.warn(`kt: KT_GREP_ENGINE=${env.KT_GREP_ENGINE} is not auto, builtin or rg; using auto`);
  }
  if (want === "builtin") return { name: "builtin" };
  const rg = Bun.which("rg", { PATH: env.PATH ?? "" });
  if (rg) return { name: "rg", path: rg };
  if (want === "rg") ctx.warn("kt: KT_GREP_ENGINE=rg but rg is not on PATH; using the built-in engine");
  return { name: "builtin" };
}

export default defineTool({
  name: "grep",
  description: description.trim(),
  parameters: Parameters,
  primary: "pattern",
  positionals: ["pattern", "path"],
  examples: ["kt grep 'TODO|FIXME' src", "kt grep createServer --include '*.ts'", "KT_GREP_ENGINE=builtin kt grep 'fn [a-z_]+' src"],
  annotations: { readOnlyHint: true, destructiveHint: false },
  async execute(input, ctx) {
    const started = performance.now();
    const compiled = compilePattern(input.pattern);
    const plan = makePlan(ctx, { tool: "grep", path: input.path, glob: input.include, basename: true }, started);
    const engine = chooseEngine(ctx);
    // The probe shares the search's pass where that is cheap (see nearMiss); else it is
    // made only if nothing matched.
    const together = engine.name === "builtin" || compiled.caseInsensitive;
    const probe = together ? probeFor(compiled) : null;
    const run = await search(engine, plan, compiled, ctx, probe);
    if (run.collector.lines === 0) return await noMatches(ctx, plan, compiled, together ? probe : probeFor(compiled), input.include, engine, run);
    return render(ctx, plan, quoted(input.pattern), run);
  },
});

interface Run {
  collector: Collector;
  outcome: SearchOutcome;
  engine: Engine["name"];
  /** Threads the built-in engine searched with. */
  threads?: number;
  /** The near-miss probe's findings, searched in the same pass while nothing matched;
   * absent when something matched or there was no probe. */
  probed?: { probe: Compiled; found: Collector };
}

/** One search, with the near-miss `probe` searched for in the same pass. */
async function search(engine: Engine, plan: SearchPlan, compiled: Compiled, ctx: ToolContext, probe: Compiled | null = null): Promise<Run> {
  if (plan.missing) return { collector: new Collector(), outcome: { timedOut: false, unreadable: [] }, engine: engine.name };
  if (engine.name === "rg") {
    const collector = new Collector();
    const outcome = await searchRg(engine.path, plan, compiled, collector, probe);
    if (outcome.failed === undefined) return { collector, outcome, engine: "rg", ...withProbed(probe, outcome.probed) };
    ctx.warn(`kt: rg could not run this search (${outcome.failed.split("\n")[0]}); using the built-in engine`);
  }
  const { collector, outcome, threads, probed } = await searchBuiltin(plan, compiled, probe);
  return { collector, outcome, engine: "builtin", threads, ...withProbed(probe, probed) };
}

/** Run's `probed`, when the engine searched for the probe and nothing matched. */
function withProbed(probe: Compiled | null, found: Collector | null): Pick<Run, "probed"> {
  return probe && found ? { probed: { probe, found } } : {};
}

function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

function groups(ctx: ToolContext, plan: SearchPlan, files: FileHits[], max: number): { lines: string[]; shown: number } {
  const lines: string[] = [];
  let shown = 0;
  for (const file of files) {
    if (shown >= max || file.hits.length === 0) break;
    lines.push(shownPath(ctx, plan, file.rel));
    for (const hit of file.hits) {
      if (shown >= max) break;
      lines.push(`  ${hit.line}: ${hit.text}`);
      shown++;
    }
    if (file.cut) break;
  }
  return { lines, shown };
}

function notes(ctx: ToolContext, plan: SearchPlan, outcome: SearchOutcome): string[] {
  const out: string[] = [];
  if (outcome.unreadable.length > 0) {
    const paths = outcome.unreadable.map((rel) => shownPath(ctx, plan, rel)).sort();
    const listed = paths.slice(0, 5).join(", ") + (paths.length > 5 ? ` and ${paths.length - 5} more` : "");
    out.push(`[${count(paths.length, "path", "paths")} could not be read (permission denied) and ${paths.length === 1 ? "was" : "were"} not searched: ${listed}.]`);
  }
  if (outcome.timedOut) {
    out.push(`[The search stopped at the ${seconds(timeLimitMs())} time limit, so these results are partial. Narrow path or include to search fewer files.]`);
  }
  return out;
}

/** What the shown lines may take, well under the 64 KB backstop (which would cut the
 * middle out of the results): 100 lines of 250 wide characters would not fit. */
const SHOWN_BYTES = 56 * 1024;

/** The first `max` matching lines, fewer if they would not fit in SHOWN_BYTES. */
function shownGroups(ctx: ToolContext, plan: SearchPlan, files: FileHits[], max: number): { lines: string[]; shown: number } {
  for (let limit = max; ; limit = Math.floor(limit * 0.8)) {
    const shown = groups(ctx, plan, files, limit);
    if (limit <= 10 || shown.lines.reduce((n, line) => n + Buffer.byteLength(line) + 1, 0) <= SHOWN_BYTES) return shown;
  }
}

function render(ctx: ToolContext, plan: SearchPlan, pattern: string, run: Run): ToolOutput {
  const { collector, outcome } = run;
  const files = collector.sorted();
  const total = collector.lines;
  const partial = outcome.timedOut ? ` (partial: stopped at the ${seconds(timeLimitMs())} limit)` : "";
  const summary = `${count(total, "match", "matches")} in ${count(collector.fileCount, "file", "files")} for "${pattern}"${partial}:`;
  const title = `Search "${pattern}" · ${count(total, "match", "matches")} in ${count(collector.fileCount, "file", "files")}`;
  const extra = { engine: run.engine, partial: outcome.timedOut, unreadable: outcome.unreadable.length, ...(run.threads ? { threads: run.threads } : {}) };
  const after = notes(ctx, plan, outcome);
  const shown = shownGroups(ctx, plan, files, MAX_SHOWN);
  if (shown.shown === total) {
    return { content: [summary, "", ...shown.lines, ...after].join("\n"), title, matches: total, files: collector.fileCount, extra };
  }
  const all = groups(ctx, plan, files, Number.POSITIVE_INFINITY);
  const unsaved = total - all.shown;
  const full = [summary, "", ...all.lines];
  if (unsaved > 0) full.push(`[… ${count(unsaved, "more matching line", "more matching lines")} not saved: too many results. Narrow the pattern, path or include to see them.]`);
  const fullText = full.join("\n");
  const spillPath = spillFile(ctx, "grep", `${fullText}\n`);
  const header = `Showing first ${shown.shown} of ${total.toLocaleString("en-US")} matching lines (${count(collector.fileCount, "file", "files")}) for "${pattern}"${partial}:`;
  const tail = spillPath
    ? `[Results truncated. Full results: ${spillPath} — or use a more specific pattern, path, or include filter.]`
    : "[Results truncated (the full results could not be saved). Use a more specific pattern, path, or include filter.]";
  const fullLines = full.length;
  return {
    content: [header, "", ...shown.lines, ...after, tail].join("\n"),
    title: `${title} (showing ${shown.shown})`,
    matches: total,
    files: collector.fileCount,
    truncation: {
      originalBytes: Buffer.byteLength(fullText),
      originalLines: fullLines,
      shownHeadLines: shown.lines.length + 2,
      shownTailLines: 0,
      omittedLines: fullLines - shown.lines.length - 2,
      ...(spillPath ? { spillPath } : {}),
    },
    extra,
  };
}

async function noMatches(ctx: ToolContext, plan: SearchPlan, compiled: Compiled, probe: Compiled | null, include: string | undefined, engine: Engine, run: Run): Promise<ToolOutput> {
  const pattern = quoted(compiled.pattern);
  const scope = `${plan.abs}${include !== undefined && !plan.file ? ` (include "${include}")` : ""}`;
  let text: string;
  if (plan.missing) {
    text = `No matches for "${pattern}" in ${plan.abs}: the include "${include}" starts with ${plan.walkRel}, which is not a directory there. Check the include or the path.`;
  } else if (plan.file && searchFile(plan.real, []) === null) {
    text = `No matches for "${pattern}" in ${plan.abs}: it is a binary file, and grep skips binary files. Use bash with a suitable tool (e.g. strings FILE | grep) to search it.`;
  } else if (run.outcome.timedOut) {
    text = `No matches for "${pattern}" in ${scope} before the ${seconds(timeLimitMs())} time limit, so the search is partial. Narrow path or include to search fewer files.`;
  } else {
    const hint = await nearMiss(ctx, plan, compiled, probe, engine, run);
    text = `No matches for "${pattern}" in ${scope}. Check the regex${hint === null ? "" : ` (did you mean "${hint}"?)`} or broaden the scope.`;
  }
  const after = notes(ctx, plan, { ...run.outcome, timedOut: false });
  return {
    content: [text, ...after].join("\n"),
    title: `Search "${pattern}" · no matches`,
    matches: 0,
    files: 0,
    extra: { engine: run.engine, partial: run.outcome.timedOut, unreadable: run.outcome.unreadable.length, ...(run.threads ? { threads: run.threads } : {}) },
  };
}

/**
 * The near-miss hint: the text nearest the pattern among what the probe (the same files,
 * a wider pattern) found. The built-in engine searches for the probe in the search's own
 * pass, and so does rg for a case-insensitive pattern (then the probe, case-insensitive
 * too, costs rg little more than the search); for a case-sensitive pattern a
 * case-insensitive rg pass would cost every search 20–40% more, so the probe gets a
 * second pass, only when nothing matched.
 */
async function nearMiss(ctx: ToolContext, plan: SearchPlan, compiled: Compiled, probe: Compiled | null, engine: Engine, first: Run): Promise<string | null> {
  if (first.probed) return first.probed.found.lines === 0 ? null : nearest(compiled, first.probed.probe, first.probed.found);
  if (!probe) return null;
  const quiet = { ...ctx, warn: () => {} };
  const run = await search(engine, plan, probe, quiet);
  if (run.outcome.timedOut || run.collector.lines === 0) return null;
  return nearest(compiled, probe, run.collector);
}
