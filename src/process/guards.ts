// Pre-spawn guards for bash (SPEC §4.6): two call shapes fail in ways the model cannot
// learn from, so they are refused before anything runs. A program that wants a terminal
// would hang or quit on the closed stdin; a command made only of `cd`/`export`/assignments
// changes a shell that dies with the call. Anything the splitter cannot read with
// certainty (substitutions, redirections, pipes into the program) is let through.
import { basename } from "node:path";
import { KtError } from "../core/result.ts";
import { shortCommand } from "./format.ts";

interface Segment {
  words: string[];
  /** Joined to the previous segment by a pipe: its stdin is not the closed one. */
  piped: boolean;
  /** Holds a redirection, heredoc, substitution or subshell: not read with certainty. */
  opaque: boolean;
}

/** Splits on unquoted `&&`, `||`, `;`, `|`, `&` and newlines, honouring quotes and escapes. */
export function segments(command: string): Segment[] {
  const out: Segment[] = [];
  let words: string[] = [];
  let word = "";
  let inWord = false;
  let opaque = false;
  let piped = false;
  const endWord = () => {
    if (inWord) words.push(word);
    word = "";
    inWord = false;
  };
  const endSegment = (pipe: boolean) => {
    endWord();
    if (words.length > 0 || opaque) out.push({ words, piped, opaque });
    words = [];
    opaque = false;
    piped = pipe;
  };
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (c === "\\") {
      if (command[i + 1] === "\n") {
        i++;
        continue;
      }
      word += command[i + 1] ?? "";
      inWord = true;
      i++;
    } else if (c === "'") {
      const end = command.indexOf("'", i + 1);
      if (end === -1) return [{ words: [], piped: false, opaque: true }];
      word += command.slice(i + 1, end);
      inWord = true;
      i = end;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < command.length && command[j] !== '"'; j++) {
        if (command[j] === "\\") j++;
        else if (command[j] === "$" || command[j] === "`") opaque = true;
      }
      if (j >= command.length) return [{ words: [], piped: false, opaque: true }];
      word += command.slice(i + 1, j).replace(/\\(["\\$`])/g, "$1");
      inWord = true;
      i = j;
    } else if (c === " " || c === "\t") {
      endWord();
    } else if (c === "\n" || c === ";") {
      endSegment(false);
    } else if (c === "&" || c === "|") {
      const doubled = command[i + 1] === c;
      if (doubled) i++;
      endSegment(c === "|" && !doubled);
    } else if (c === "<" || c === ">" || c === "`" || c === "(" || c === ")" || c === "{" || c === "}" || (c === "$" && command[i + 1] === "(")) {
      opaque = true;
      word += c;
      inWord = true;
    } else if (c === "#" && !inWord) {
      const end = command.indexOf("\n", i);
      i = end === -1 ? command.length : end - 1;
    } else {
      word += c;
      inWord = true;
    }
  }
  endSegment(false);
  return out;
}

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*\+?=/;
const WRAPPERS = new Set(["sudo", "exec", "command", "nohup", "time", "nice", "env", "builtin"]);

/** The program a segment runs and its arguments, past assignments and wrappers like sudo. */
function program(words: string[]): { name: string; args: string[] } | undefined {
  let i = 0;
  for (;;) {
    while (i < words.length && ASSIGNMENT.test(words[i]!)) i++;
    if (i >= words.length) return undefined;
    if (!WRAPPERS.has(words[i]!)) break;
    i++;
    while (i < words.length && words[i]!.startsWith("-")) i++;
  }
  return { name: basename(words[i]!), args: words.slice(i + 1) };
}

type Kind = "editor" | "pager" | "monitor" | "git" | "repl";

const EDITORS = new Set(["vim", "vi", "nvim", "view", "nano", "pico", "emacs", "joe", "micro", "mcedit"]);
const PAGERS = new Set(["less", "more", "most"]);
const MONITORS = new Set(["top", "htop", "btop", "atop", "glances", "nmon"]);
const REPLS = /^(python[0-9.]*|pypy[0-9.]*|ipython[0-9]*|node|nodejs|irb|deno)$/;
const HELP = new Set(["--version", "-V", "--help", "-h"]);

function interactiveKind(seg: Segment): Kind | undefined {
  const prog = program(seg.words);
  if (!prog) return undefined;
  const { name, args } = prog;
  if (args.some((a) => HELP.has(a))) return undefined;
  if (EDITORS.has(name)) {
    if (name === "emacs" && args.some((a) => a === "--batch" || a === "-batch" || a === "--script")) return undefined;
    const batch = args.includes("-es") || args.includes("-Es") || (args.includes("-e") && args.includes("-s"));
    if (name !== "emacs" && batch) return undefined;
    return "editor";
  }
  if (PAGERS.has(name)) return "pager";
  if (MONITORS.has(name)) return name === "top" && args.some((a) => /^-[A-Za-z]*b/.test(a)) ? undefined : "monitor";
  if (name === "git") return gitInteractive(args) ? "git" : undefined;
  if (REPLS.test(name)) {
    if (seg.piped || seg.opaque) return undefined;
    if (name === "deno") return args.length === 0 || args[0] === "repl" ? "repl" : undefined;
    if (args.includes("-i") || args.includes("--interactive")) return "repl";
    const script = args.some((a) => !a.startsWith("-") || a === "-");
    const oneShot = args.some((a) => /^-(c|m|e|p)$|^--(eval|print|check|test|run)$|^-[A-Za-z]*[cm]$/.test(a));
    return script || oneShot ? undefined : "repl";
  }
  return undefined;
}

function gitInteractive(args: string[]): boolean {
  let i = 0;
  while (i < args.length && args[i]!.startsWith("-")) i += args[i] === "-C" || args[i] === "-c" ? 2 : 1;
  const sub = args[i];
  const rest = args.slice(i + 1);
  const has = (...flags: string[]) => rest.some((a) => flags.includes(a) || (/^-[A-Za-z]+$/.test(a) && flags.some((f) => f.length === 2 && a.slice(1).includes(f[1]!))));
  switch (sub) {
    case "rebase":
      return has("-i", "--interactive");
    case "add":
    case "checkout":
    case "reset":
    case "restore":
    case "stash":
      return has("-p", "--patch", "-i", "--interactive");
    case "commit":
      return has("-p", "--patch", "--interactive");
    case "clean":
      return has("-i", "--interactive");
    default:
      return false;
  }
}

const STATE_ONLY = new Set(["cd", "pushd", "popd", "export", "unset", "readonly", "declare", "typeset", "alias", "unalias"]);

function stateOnly(segs: Segment[]): boolean {
  if (segs.length === 0) return false;
  return segs.every((seg) => {
    if (seg.opaque || seg.piped) return false;
    const first = seg.words[0];
    if (first === undefined) return false;
    if (STATE_ONLY.has(first)) return true;
    return seg.words.every((w) => ASSIGNMENT.test(w));
  });
}

/** Throws the refusal for a command that must not run as given; returns quietly otherwise. */
export function checkCommand(command: string): void {
  const segs = segments(command);
  const shown = shortCommand(command, 80);
  for (const seg of segs) {
    const kind = interactiveKind(seg);
    if (kind) throw interactive(kind, program(seg.words)!.name, shown);
  }
  if (stateOnly(segs)) {
    throw new KtError(
      "STATE_ONLY_COMMAND",
      `Refusing to run "${shown}": it only changes the state of the shell (working directory or variables), and every bash call starts a fresh shell, so the change would be lost when the call ends. Pass the directory as workdir instead of using cd, and set variables in the same command that uses them (e.g. "FOO=1 npm test" or "export FOO=1 && npm test").`,
    );
  }
}

function interactive(kind: Kind, name: string, shown: string): KtError {
  const start = `Refusing to run "${shown}":`;
  // SPEC §7.4: on a terminal the program can be driven — the same command, with tty.
  const drive = `To drive it yourself, run it on a terminal: process {"action":"start","command":${JSON.stringify(shown)},"tty":true}, then {"action":"read","id":"pN","screen":true} shows its screen and {"action":"write","id":"pN","input":"...","keys":["Enter"]} types into it.`;
  const prose: Record<Kind, string> = {
    editor: `${start} ${name} is an interactive editor that needs a terminal, and bash runs commands with stdin closed, so it would hang or quit. Change files with the edit and write tools, and look at them with read. ${drive}`,
    pager: `${start} ${name} is an interactive pager. Look at a file with read (offset and limit page through large ones), or run the command that produces the text on its own — output is never paged here (PAGER=cat). ${drive}`,
    monitor: `${start} ${name} is a full-screen interactive program. For a one-time snapshot use "top -b -n 1" or "ps aux". ${drive}`,
    git: `${start} it opens an interactive git prompt or editor, and bash has no terminal. Use the non-interactive form: "git add <paths>" instead of "git add -p", "git rebase <branch>" (or GIT_SEQUENCE_EDITOR with a script) instead of "git rebase -i". ${drive}`,
    repl: `${start} without a script ${name} starts an interactive REPL, and bash runs commands with stdin closed. Run a script or a one-liner instead (e.g. ${name === "node" || name === "nodejs" || name === "deno" ? `${name} -e '...'` : name === "irb" ? "ruby -e '...'" : `${name} -c '...'`}). ${drive}`,
  };
  return new KtError("INTERACTIVE_COMMAND", prose[kind]);
}
