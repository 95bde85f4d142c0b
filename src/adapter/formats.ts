// The names of the shapes kt speaks, alone in a module so that the command-line switches can
// list them without loading what builds the shapes (zod's JSON Schema conversion).

/** What `kt call --format` answers in. */
export const REPLY_FORMATS = ["text", "json", "anthropic", "openai", "openai-responses", "mcp"] as const;

/** What `kt schema --format` prints a tool's definition as. */
export const FORMATS = ["json", "anthropic", "openai", "openai-responses", "mcp"] as const;
