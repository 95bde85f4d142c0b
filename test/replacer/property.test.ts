// Property: over real source files, a block quoted with the drift models produce (re-indented,
// tabs for spaces, trailing spaces, collapsed spacing, over-escaped, curly quotes) and one line
// changed the same way either yields exactly the intended file — the original with that line
// changed, in the file's own indentation — or is refused. Never anything else. Unrelated and
// anchor-only quotes are never applied.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { FILES, blockArgs, call, drift, drifted, expectIntendedOrRefused, isBlank, junkLine, single } from "./_drift.ts";

const RUNS = Number(process.env.KT_RUNS ?? 400);

describe("property: drifted quotes of real files", () => {
  test(`applied exactly as intended or refused (${RUNS} cases)`, () => {
    const tally: Record<string, number> = {};
    fc.assert(
      fc.property(...blockArgs, drift, (fileIndex, at, len, pick, change, d) => {
        const c = drifted(fileIndex, at, len, pick, change, d);
        const key = c.result.kind === "ok" ? c.result.strategy : c.result.kind;
        tally[key] = (tally[key] ?? 0) + 1;
        expectIntendedOrRefused(c);
      }),
      { numRuns: RUNS },
    );
    if (process.env.KT_TALLY) console.log(tally);
    const refused = (tally["not-found"] ?? 0) + (tally.ambiguous ?? 0) + (tally.refused ?? 0);
    // Not vacuous: most drifted quotes are still applied.
    expect(1 - refused / RUNS).toBeGreaterThan(0.6);
  });

  test("one kind of drift alone is always applied as intended (or ambiguous)", () => {
    fc.assert(
      fc.property(...blockArgs, single, (fileIndex, at, len, pick, change, d) => {
        const c = drifted(fileIndex, at, len, pick, change, d);
        expectIntendedOrRefused(c);
        if (c.result.kind !== "ok" && c.result.kind !== "ambiguous") throw new Error(`${c.result.kind} at ${c.where}`);
      }),
      { numRuns: Math.max(200, RUNS / 2) },
    );
  });

  test("unrelated old_strings are never applied", () => {
    fc.assert(
      fc.property(fc.nat({ max: FILES.length - 1 }), fc.array(junkLine, { minLength: 1, maxLength: 6 }), (fileIndex, junk) => {
        const { content } = FILES[fileIndex]!;
        const old = junk.join("\n");
        fc.pre(!content.includes(old));
        expect(call(content, old, "replaced();").kind).not.toBe("ok");
      }),
      { numRuns: 150 },
    );
  });

  test("a block of another file none of whose lines occurs here is never applied", () => {
    fc.assert(
      fc.property(fc.nat({ max: FILES.length - 1 }), fc.nat({ max: FILES.length - 1 }), fc.nat(), fc.integer({ min: 1, max: 8 }), (a, b, at, len) => {
        fc.pre(a !== b);
        const target = FILES[a]!;
        const source = FILES[b]!.lines;
        const start = at % (source.length - len);
        const block = source.slice(start, start + len);
        // Unrelated: no line of the block occurs anywhere in the target, even as part of a line
        // or with its spacing removed (exact and whitespace matching accept substrings).
        const squeeze = (l: string) => l.replace(/\s+/g, "");
        const squeezed = squeeze(target.content);
        fc.pre(block.some((l) => !isBlank(l)) && block.every((l) => isBlank(l) || (!target.content.includes(l.trim()) && !squeezed.includes(squeeze(l)))));
        expect(call(target.content, block.join("\n"), "replaced();").kind).not.toBe("ok");
      }),
      { numRuns: 150 },
    );
  });

  test("anchor lines around a garbage middle, or with nothing between, are never applied by anchors", () => {
    fc.assert(
      fc.property(fc.nat({ max: FILES.length - 1 }), fc.nat(), fc.integer({ min: 3, max: 12 }), fc.array(junkLine, { minLength: 1, maxLength: 10 }), (fileIndex, at, len, junk) => {
        const { content, lines } = FILES[fileIndex]!;
        const start = at % (lines.length - len);
        const first = lines[start]!;
        const last = lines[start + len - 1]!;
        fc.pre(!isBlank(first) && !isBlank(last));
        const middle = Array.from({ length: len - 2 }, (_, i) => junk[i % junk.length]!);
        const garbage = [first, ...middle, last].join("\n");
        expect(call(content, garbage, `${first}\nreplaced();\n${last}`).kind).not.toBe("ok");
        const bare = call(content, `${first}\n${last}`, `${first}\nreplaced();\n${last}`);
        if (bare.kind === "ok") expect(["block-anchor", "context-aware"]).not.toContain(bare.strategy);
      }),
      { numRuns: 150 },
    );
  });
});
