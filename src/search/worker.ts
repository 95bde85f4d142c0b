// A helper thread of a parallel walk (parallel.ts): grep's search or glob's scan, each a
// walk kind that builds this thread's visitor.
import { serveWalks } from "./parallel.ts";
import { grepWalk } from "./builtin.ts";
import { globWalk } from "./globscan.ts";

serveWalks([grepWalk, globWalk]);
