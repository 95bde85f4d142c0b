// The environment a command runs in (SPEC §4.6, KHAELOR §7.2): the caller's, without kt's
// own variables — a script that calls kt inside a command then gets kt's defaults unless
// the command sets them — and without NO_COLOR, so programs keep their colours in the log
// (the model's view is stripped of them). Pagers and prompts are disarmed (SPEC §8.7: nothing
// waits on a person — see NON_INTERACTIVE). One variable is added: the marker by which kt finds every process the command starts, even one that left
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

/**
 * What an editor is, for a command nobody can type into: it fails at once, saying so on
 * stderr (which the model sees) and how to give the text instead. Failing is chosen over
 * accepting the proposed text (`true`): a commit, merge or rebase step made with a message
 * nobody read is worse than a clear failure the model can repair in one call, and the
 * message says how to accept git's proposal deliberately (GIT_EDITOR=true). Programs run an
 * editor through sh (`$EDITOR "$@"`), as git, crontab and npm do: the file is "$1".
 */
/** The variable that holds NO_EDITOR's message (so the editor command is short: git repeats it in its own error). */
const NO_EDITOR_TEXT = "__KT_NO_EDITOR";
export const NO_EDITOR = `sh -c 'echo "$${NO_EDITOR_TEXT}" >&2; exit 1' kt-no-editor`;
export const NO_EDITOR_MESSAGE =
  "kt: this command opened an editor, and nothing here can type into it (bash runs commands without a terminal). " +
  "Give the text on the command line instead: git commit -m MESSAGE, git commit --amend --no-edit, git merge --no-edit, " +
  "GIT_EDITOR=true git rebase --continue (keeps the proposed message); for an interactive rebase, a GIT_SEQUENCE_EDITOR script, or process start with tty.";

/**
 * The environment that keeps a command from waiting on a person: pagers print, editors fail
 * (NO_EDITOR), git never asks for credentials on a terminal (GIT_TERMINAL_PROMPT, Git
 * Credential Manager's GCM_INTERACTIVE), ssh under git runs in batch mode (no password or
 * host-key question; a GIT_SSH_COMMAND or GIT_SSH the caller set is kept), Debian's tools
 * take their defaults. A command has no controlling terminal (its supervisor is in a session
 * of its own) and, under bash, stdin at end-of-file: ssh, sudo and anything else that asks on
 * /dev/tty or stdin fails at once rather than waiting.
 */
function nonInteractive(env: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {
    [NO_EDITOR_TEXT]: NO_EDITOR_MESSAGE,
    GIT_EDITOR: NO_EDITOR,
    GIT_SEQUENCE_EDITOR: NO_EDITOR,
    EDITOR: NO_EDITOR,
    VISUAL: NO_EDITOR,
    GCM_INTERACTIVE: "never",
    DEBIAN_FRONTEND: "noninteractive",
  };
  if (env.GIT_SSH_COMMAND === undefined && env.GIT_SSH === undefined) out.GIT_SSH_COMMAND = "ssh -o BatchMode=yes";
  return out;
}

/**
 * `interactive`: a command started on a terminal by ps start, where the model types into it
 * (SPEC §7.4) — it keeps the caller's editors, and git may ask on that terminal.
 */
export function commandEnv(base: Record<string, string | undefined>, marker?: string, interactive = false): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) {
    if (v === undefined || isKtVariable(k) || k === "NO_COLOR") continue;
    env[k] = v;
  }
  Object.assign(env, { PAGER: "cat", GIT_PAGER: "cat" });
  if (!interactive) Object.assign(env, { GIT_TERMINAL_PROMPT: "0" }, nonInteractive(env));
  if (marker !== undefined) env[MARKER] = marker;
  return env;
}
