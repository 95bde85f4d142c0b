// The glob scenarios: test/fixtures/glob/, run by test/_scenarios.ts (the layout is described there).
import { scenarios } from "./_scenarios.ts";

scenarios("glob");
