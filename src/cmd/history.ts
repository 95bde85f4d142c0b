// `kt history PATH`: the subcommand entry; the work is in undo.ts, beside the undo it feeds.
export { historyCommand as command, runHistory as run } from "./undo.ts";
