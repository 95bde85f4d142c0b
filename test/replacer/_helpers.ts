// Shared assertions for the replacer tests: every applied edit must leave the bytes outside
// its spans untouched, whatever strategy produced it.
import { expect } from "bun:test";
import { applyEdits, replace } from "../../src/replacer/index.ts";
import type { CascadeOk, CascadeResult, ReplaceRequest, StrategyName } from "../../src/replacer/index.ts";

export function run(content: string, oldString: string, newString: string, opts: Partial<ReplaceRequest> = {}): CascadeResult {
  return replace({ content, oldString, newString, replaceAll: false, strict: false, ...opts });
}

/** Edits are sorted, disjoint, in bounds, and the new content is the old one with only them applied. */
export function expectOnlySpansChanged(content: string, r: CascadeOk): void {
  let at = 0;
  for (const e of r.edits) {
    expect(e.start).toBeGreaterThanOrEqual(at);
    expect(e.end).toBeGreaterThanOrEqual(e.start);
    expect(e.end).toBeLessThanOrEqual(content.length);
    at = e.end;
  }
  expect(applyEdits(content, r.edits)).toBe(r.newContent);
  const first = r.edits[0]!;
  const last = r.edits[r.edits.length - 1]!;
  expect(r.newContent.slice(0, first.start)).toBe(content.slice(0, first.start));
  expect(r.newContent.slice(r.newContent.length - (content.length - last.end))).toBe(content.slice(last.end));
}

export function expectApplied(
  content: string,
  oldString: string,
  newString: string,
  expected: string,
  strategy: StrategyName,
  opts: Partial<ReplaceRequest> = {},
): CascadeOk {
  const r = run(content, oldString, newString, opts);
  if (r.kind !== "ok") throw new Error(`expected ok via ${strategy}, got ${JSON.stringify(r, null, 1)}`);
  expect(r.strategy).toBe(strategy);
  expect(r.newContent).toBe(expected);
  expectOnlySpansChanged(content, r);
  return r;
}

export function expectNotApplied(content: string, oldString: string, newString: string, opts: Partial<ReplaceRequest> = {}): CascadeResult {
  const r = run(content, oldString, newString, opts);
  if (r.kind === "ok") throw new Error(`expected a refusal, got ok via ${r.strategy}:\n${r.newContent}`);
  return r;
}
