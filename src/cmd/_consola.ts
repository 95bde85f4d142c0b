// consola, for src/cmd/_log.ts alone: required from this ESM module so that the bundle
// (`--splitting`) puts it in a chunk loaded at the call, not in every subcommand's chunks.
export { createConsola } from "consola";
