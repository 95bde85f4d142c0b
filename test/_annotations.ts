// SPEC §5: which tools are read-only and which destructive, by the name models see.
// A new tool must be added here before the schema and MCP tests accept it.
export const EXPECTED_ANNOTATIONS: Record<string, { readOnlyHint: boolean; destructiveHint: boolean }> = {
  read: { readOnlyHint: true, destructiveHint: false },
  grep: { readOnlyHint: true, destructiveHint: false },
  glob: { readOnlyHint: true, destructiveHint: false },
  write: { readOnlyHint: false, destructiveHint: true },
  edit: { readOnlyHint: false, destructiveHint: true },
  bash: { readOnlyHint: false, destructiveHint: true },
  process: { readOnlyHint: false, destructiveHint: true },
  apply_patch: { readOnlyHint: false, destructiveHint: true },
  // rename changes files (through the same commit as apply_patch).
  code: { readOnlyHint: false, destructiveHint: true },
  replace: { readOnlyHint: false, destructiveHint: true },
};
