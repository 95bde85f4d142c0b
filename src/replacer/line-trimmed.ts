// The first round's name for the strategy that trims both ends of each line: since SPEC §4.3 was
// amended it is indentation-flexible (3). Kept so that callers of the old exports still work.
export { lineWindows } from "./_windows.ts";
/** @deprecated use indentationFlexible */
export { indentationFlexible as lineTrimmed } from "./indentation-flexible.ts";
