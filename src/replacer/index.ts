// The replacer: a pure function from (content, old_string, new_string) to a tagged result.
// No I/O; every span is an offset into the content it was given.
export { replace, CASCADE, disproportionLimit, applyEdits } from "./cascade.ts";
export { nearMiss } from "./near-miss.ts";
export { Haystack } from "./_haystack.ts";
export { lineStarts, lineOfOffset, lineAt, rangeOfSpan } from "./lines.ts";
export { exact, MAX_LISTED } from "./exact.ts";
export { trailingWhitespace } from "./trailing-whitespace.ts";
export { indentationFlexible } from "./indentation-flexible.ts";
export { lineTrimmed } from "./line-trimmed.ts";
export { whitespaceNormalized } from "./whitespace-normalized.ts";
export { escapeNormalized } from "./escape-normalized.ts";
export { trimmedBoundary } from "./trimmed-boundary.ts";
export { blockAnchor, BLOCK_THRESHOLD } from "./block-anchor.ts";
export { contextAware, CONTEXT_THRESHOLD } from "./context-aware.ts";
export { multiOccurrence } from "./multi-occurrence.ts";
export { MARGIN, MAX_BLOCKS } from "./_anchors.ts";
export type * from "./types.ts";
export { locate, findLine, type LocateRequest, type Located } from "./locate.ts";
