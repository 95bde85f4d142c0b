// Named keys for `ps write` to a terminal (SPEC §7.4): each name becomes the bytes an xterm
// sends for that key. Arrows, Home and End depend on the mode the program set (application
// cursor keys: ESC O A instead of ESC [ A), so the caller says which mode holds.

const CSI = "\x1b[";
const SS3 = "\x1bO";

/** Keys whose bytes do not depend on the cursor-key mode, by lower-case name. */
const FIXED: Record<string, string> = {
  enter: "\r",
  return: "\r",
  tab: "\t",
  "s-tab": `${CSI}Z`,
  btab: `${CSI}Z`,
  esc: "\x1b",
  escape: "\x1b",
  space: " ",
  backspace: "\x7f",
  bspace: "\x7f",
  delete: `${CSI}3~`,
  del: `${CSI}3~`,
  insert: `${CSI}2~`,
  ins: `${CSI}2~`,
  pageup: `${CSI}5~`,
  pgup: `${CSI}5~`,
  pagedown: `${CSI}6~`,
  pgdn: `${CSI}6~`,
  f1: `${SS3}P`,
  f2: `${SS3}Q`,
  f3: `${SS3}R`,
  f4: `${SS3}S`,
  f5: `${CSI}15~`,
  f6: `${CSI}17~`,
  f7: `${CSI}18~`,
  f8: `${CSI}19~`,
  f9: `${CSI}20~`,
  f10: `${CSI}21~`,
  f11: `${CSI}23~`,
  f12: `${CSI}24~`,
};

/** Keys sent as CSI x normally and SS3 x in application cursor mode. */
const CURSOR: Record<string, string> = { up: "A", down: "B", right: "C", left: "D", home: "H", end: "F" };

/** Control characters that are not Ctrl+letter. */
const CONTROL_PUNCT: Record<string, string> = { "@": "\x00", space: "\x00", "[": "\x1b", "\\": "\x1c", "]": "\x1d", "^": "\x1e", _: "\x1f", "?": "\x7f" };

export const KEY_NAMES = "Enter, Tab, S-Tab, Esc, Space, Backspace, Delete, Insert, Up, Down, Left, Right, Home, End, PageUp, PageDown, F1–F12";

/** Whether any of the keys depends on the cursor-key mode (the caller then looks it up). */
export function needsCursorMode(keys: readonly string[]): boolean {
  return keys.some((k) => stripModifiers(k).toLowerCase() in CURSOR);
}

function stripModifiers(key: string): string {
  return key.replace(/^(?:(?:C|Ctrl|M|Alt|Meta)[-+])+/i, "");
}

/** The bytes for one key, or undefined when it names no key. */
export function keyBytes(key: string, applicationCursor: boolean): string | undefined {
  if ([...key].length === 1) return key;
  const ctrl = /^(?:C|Ctrl)[-+](.+)$/i.exec(key);
  if (ctrl) {
    const rest = ctrl[1]!;
    if (/^[A-Za-z]$/.test(rest)) return String.fromCharCode(rest.toUpperCase().charCodeAt(0) & 0x1f);
    const punct = CONTROL_PUNCT[rest.toLowerCase()];
    if (punct !== undefined) return punct;
    return undefined;
  }
  const meta = /^(?:M|Alt|Meta)[-+](.+)$/i.exec(key);
  if (meta) {
    const inner = keyBytes(meta[1]!, applicationCursor);
    return inner === undefined ? undefined : `\x1b${inner}`;
  }
  const name = key.toLowerCase();
  if (name in FIXED) return FIXED[name];
  if (name in CURSOR) return `${applicationCursor ? SS3 : CSI}${CURSOR[name]}`;
  return undefined;
}

/** All keys as one string of bytes; throws the prose naming the first key that is none. */
export function keysToBytes(keys: readonly string[], applicationCursor: boolean): { bytes: string } | { unknown: string } {
  let bytes = "";
  for (const key of keys) {
    const b = keyBytes(key, applicationCursor);
    if (b === undefined) return { unknown: key };
    bytes += b;
  }
  return { bytes };
}
