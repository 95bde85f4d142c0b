// Small renderings shared by bash, ps and the completion notices. Kept free of imports so
// the notice check every kt call makes stays cheap.

/** `06:12`, or `1:02:03` past an hour. */
export function clock(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const mm = String(m).padStart(2, "0");
  const ss = String(s).padStart(2, "0");
  return h > 0 ? `${h}:${mm}:${ss}` : `${mm}:${ss}`;
}

/** `3.2s` under 100 s, whole seconds above. */
export function seconds(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  return s < 100 ? `${s.toFixed(1)}s` : `${Math.round(s)}s`;
}

/** A timeout as the model gave it: `120s`, `0.5s`. */
export function budget(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${(ms / 1000).toFixed(1)}s`;
}

/** A command on one line, at most `max` characters. */
export function shortCommand(command: string, max = 60): string {
  const one = command.trim().replace(/\s+/g, " ");
  return one.length <= max ? one : `${one.slice(0, max - 1)}…`;
}
