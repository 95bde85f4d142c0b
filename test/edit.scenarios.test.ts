// The edit scenarios: test/fixtures/edit/, run by test/_scenarios.ts (the layout is described there).
import { scenarios } from "./_scenarios.ts";

scenarios("edit");
