// The index's layout check (src/core/state.ts) is skipped while the schema cookie is the one
// noted at the last check: the note follows every change of the schema, by kt or anyone else,
// so a table dropped or altered after the note is still found (test/hardening.test.ts, item 8).
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { kt, tempDir } from "./_helpers.ts";

function header(index: string): { schema_version: number; application_id: number } {
  const db = new Database(index, { readonly: true });
  try {
    return db.query("SELECT * FROM pragma_schema_version, pragma_application_id").get() as { schema_version: number; application_id: number };
  } finally {
    db.close();
  }
}

describe("the index's checked layout", () => {
  test("noted as the schema cookie once checked, and checked again after any change of the schema", () => {
    using tmp = tempDir();
    const stateDir = join(tmp.path, "state");
    writeFileSync(join(tmp.path, "a.txt"), "alpha\n");
    expect(kt(["read", "a.txt"], { cwd: tmp.path, stateDir }).exitCode).toBe(0);
    // The index is made by the first call that needs it (a read's stamp goes to the log of reads), and the
    // tables of history by the first change: the call after that checks the layout and notes the cookie.
    expect(kt(["edit", "a.txt", "--old-string", "alpha", "--new-string", "alpha!"], { cwd: tmp.path, stateDir }).exitCode).toBe(0);
    expect(kt(["write", "b.txt", "--content", "b\n"], { cwd: tmp.path, stateDir }).exitCode).toBe(0);
    const index = join(stateDir, "index.db");
    const first = header(index);
    expect(first.application_id).toBe(first.schema_version);
    expect(first.application_id).not.toBe(0);
    // Another program adds a table of its own: the cookie moves, kt checks (its own tables are intact) and notes the new one.
    const db = new Database(index);
    db.exec("CREATE TABLE visitor (x)");
    db.close();
    const moved = header(index);
    expect(moved.schema_version).not.toBe(first.schema_version);
    expect(moved.application_id).toBe(first.application_id);
    expect(kt(["read", "a.txt"], { cwd: tmp.path, stateDir }).exitCode).toBe(0);
    const r = kt(["edit", "a.txt", "--old-string", "alpha!", "--new-string", "alpha"], { cwd: tmp.path, stateDir });
    expect([r.exitCode, r.stderr]).toEqual([0, ""]);
    const again = header(index);
    expect(again.application_id).toBe(again.schema_version);
    expect(kt(["edit", "a.txt", "--old-string", "alpha", "--new-string", "beta"], { cwd: tmp.path, stateDir }).exitCode).toBe(0);
  });
});
