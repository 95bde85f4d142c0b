// Where the language servers run, alone in a module so that a one-shot call can say so
// without loading the rest of src/lsp: in this process (kt mcp, kt call --jsonl,
// embedders), or in the session's host (a one-shot kt call).
export const routing: { host: boolean } = { host: false };
