// The grep scenarios: test/fixtures/grep/, run by test/_scenarios.ts (the layout is described there).
import { scenarios } from "./_scenarios.ts";

scenarios("grep");
