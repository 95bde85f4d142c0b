// The shape every subcommand module has for the bin entry (src/main.ts) and completion.
import type { CommandDef } from "citty";

/** A non-tool subcommand: its help definition and its entry point. */
export interface Subcommand {
  command: CommandDef;
  /** Text appended to the rendered help (examples). */
  helpTail?: string;
  run(argv: string[]): Promise<number>;
}
