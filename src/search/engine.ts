// One interface over grep's two engines (KT_GREP_ENGINE=auto|builtin|rg): a search of a
// plan for a pattern, with maybe the near-miss probe searched in the same pass under its
// policy, "retire once the pattern has a hit" (nearmiss.ts decides when). Both engines
// fill the same Collector; a failed rg search is answered by the built-in engine.
import type { ToolContext } from "../core/result.ts";
import type { Compiled } from "./regex.ts";
import type { SearchOutcome, SearchPlan } from "./plan.ts";
import { Collector } from "./collect.ts";
import { searchBuiltin } from "./builtin.ts";
import { searchRg } from "./rg.ts";
import type { Worked } from "./rewrite.ts";

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

export interface Run {
  collector: Collector;
  outcome: SearchOutcome;
  engine: Engine["name"];
  /** Threads the built-in engine searched with. */
  threads?: number;
  /** The near-miss probe's findings, searched in the same pass while nothing matched;
   * absent when something matched or there was no probe. */
  probed?: { probe: Compiled; found: Collector };
  /** With plan.replace, the changes the built-in engine's threads worked out (by rel); absent for rg's search. */
  worked?: Map<string, Worked>;
}

/** One search, with the near-miss `probe` searched for in the same pass. */
export async function search(engine: Engine, plan: SearchPlan, compiled: Compiled, ctx: Pick<ToolContext, "warn">, probe: Compiled | null = null): Promise<Run> {
  if (plan.missing) return { collector: new Collector(), outcome: { timedOut: false, unreadable: [] }, engine: engine.name };
  if (engine.name === "rg") {
    const collector = new Collector();
    const outcome = await searchRg(engine.path, plan, compiled, collector, probe);
    if (outcome.failed === undefined) return { collector, outcome, engine: "rg", ...withProbed(probe, outcome.probed) };
    ctx.warn(`kt: rg could not run this search (${outcome.failed.split("\n")[0]}); using the built-in engine`);
  }
  const { collector, outcome, threads, probed, worked } = await searchBuiltin(plan, compiled, probe);
  return { collector, outcome, engine: "builtin", threads, ...withProbed(probe, probed), ...(plan.replace ? { worked: new Map(worked.map((w) => [w.rel, w])) } : {}) };
}

/** Run's `probed`, when the engine searched for the probe and nothing matched. */
function withProbed(probe: Compiled | null, found: Collector | null): Pick<Run, "probed"> {
  return probe && found ? { probed: { probe, found } } : {};
}
