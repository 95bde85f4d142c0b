// The search's hot functions kept below JavaScriptCore's top tier (FTL). A search lasts
// a second or two, and FTL's compiles of its loops took longer than they ever saved:
// on the Python standard library and node_modules ×4, the search threads spent no more
// time with FTL off, and the compiler threads 150-300 ms less. Those compiles are made
// again for every thread (each has its own copy of the code), on the same cores as the
// search: with two threads on two cores they took a quarter of the second core. DFG, the
// tier below, still compiles them. Every thread marks its own functions as its modules
// load; only compilations after the mark are affected.
import { noFTL } from "bun:jsc";

export function belowTopTier(...functions: ((...args: never[]) => unknown)[]): void {
  for (const f of functions) noFTL(f as (...args: unknown[]) => unknown);
}
