#!/usr/bin/env node
// npm's entry for kt in a checkout: runs the compiled binary when it has been built, else the
// sources under the Bun that npm installed. Either way stdio, the exit code and signals pass
// through, as the released package's launcher passes them (scripts/release/launcher.cjs).
const { existsSync } = require("node:fs");
const { join } = require("node:path");
const { run } = require("../scripts/release/launcher.cjs");

const root = join(__dirname, "..");
const compiled = join(root, "dist", process.platform === "win32" ? "kt.exe" : "kt");
if (existsSync(compiled)) run(compiled, process.argv.slice(2));
else run(require.resolve("bun/bin/bun.exe", { paths: [root] }), ["--no-env-file", join(root, "src", "main.ts"), ...process.argv.slice(2)]);
