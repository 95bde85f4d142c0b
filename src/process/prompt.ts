// A command that asked a question and got end-of-file (SPEC §8.7): bash runs commands with
// stdin closed, so a prompt (`package name: (app)`, `Continue? [y/N]`) is answered at once by
// end-of-file and the program gives up — fast, but its output only shows the question. This
// names what happened and the way on. Recognized only when the output ends on the prompt
// itself (no newline after it) and the command failed: a question nobody answered.

/** The prompt the output ends on, or undefined. `text` is the model text, `endsWithNewline` the raw log's last byte. */
export function trailingPrompt(text: string, endsWithNewline: boolean): string | undefined {
  if (endsWithNewline) return undefined;
  const last = text.slice(text.lastIndexOf("\n") + 1).trim();
  if (last.length === 0 || last.length > 200) return undefined;
  // A question or a label, with an optional default or choices after it: `name: (app)`, `[y/N]`, `Password:`.
  return /[?:>]\s*(?:\([^()]*\)|\[[^[\]]*\])?$|\[[yY]\/[nN]\]$|\([yY]\/[nN]\)$/.test(last) ? last : undefined;
}

export function promptHint(prompt: string): string {
  const shown = prompt.length > 80 ? `${prompt.slice(0, 80)}…` : prompt;
  return `The command stopped at a prompt (${JSON.stringify(shown)}) and read end-of-file: bash gives commands no input. Answer it on the command line (a flag such as --yes, -y or --non-interactive, the value as an argument, or piped in: printf 'answer\\n' | command), or run it with process start and answer with process write.`;
}
