// The patch scenarios: test/fixtures/patch/, run by test/_scenarios.ts (the layout is described there).
import { scenarios } from "./_scenarios.ts";

scenarios("patch");
