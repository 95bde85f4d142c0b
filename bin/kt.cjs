#!/usr/bin/env node
// npm's entry for kt: runs the compiled binary when it has been built, else the sources
// under the Bun that npm installed. Either way, stdio and the exit code pass through.
const { spawnSync } = require("node:child_process");
const { existsSync } = require("node:fs");
const { join } = require("node:path");

const root = join(__dirname, "..");
const exe = process.platform === "win32" ? "kt.exe" : "kt";
const compiled = join(root, "dist", exe);
const [cmd, args] = existsSync(compiled)
  ? [compiled, process.argv.slice(2)]
  : [require.resolve("bun/bin/bun.exe", { paths: [root] }), ["--no-env-file", join(root, "src", "main.ts"), ...process.argv.slice(2)]];
const child = spawnSync(cmd, args, { stdio: "inherit" });
if (child.error) {
  process.stderr.write(`kt: cannot start ${cmd}: ${child.error.message}\n`);
  process.exit(3);
}
process.exit(child.status ?? (child.signal ? 128 + 9 : 3));
