// The environment a command runs in (SPEC §4.6, KHAELOR §7.2): the caller's, without kt's
// own variables — a script that calls kt inside a command then gets kt's defaults unless
// the command sets them — and without NO_COLOR, so programs keep their colours in the log
// (the model's view is stripped of them). Pagers and prompts are disarmed. One variable is
// added: the marker by which kt finds every process the command starts, even one that left
// its process group or was orphaned (src/process/descendants.ts).

/** `<row key>@<absolute state dir>`: which row of which index a process belongs to. */
export const MARKER = "__KT_PROCESS";

export function markerValue(stateDir: string, key: number): string {
  return `${key}@${stateDir}`;
}

export function parseMarker(value: string): { key: number; stateDir: string } | undefined {
  const at = value.indexOf("@");
  const key = Number(value.slice(0, at));
  return at > 0 && Number.isInteger(key) ? { key, stateDir: value.slice(at + 1) } : undefined;
}

/** kt's own variables: any KT_*, and the marker of an enclosing kt command. */
export function isKtVariable(name: string): boolean {
  return name.startsWith("KT_") || name === MARKER;
}

export function commandEnv(base: Record<string, string | undefined>, marker?: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) {
    if (v === undefined || isKtVariable(k) || k === "NO_COLOR") continue;
    env[k] = v;
  }
  Object.assign(env, { PAGER: "cat", GIT_PAGER: "cat", GIT_TERMINAL_PROMPT: "0" });
  if (marker !== undefined) env[MARKER] = marker;
  return env;
}
