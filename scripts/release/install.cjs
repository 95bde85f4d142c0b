// The main package's postinstall. When npm has installed this platform's binary and it
// runs, bin/kt (the Node launcher) is replaced by that binary, so that every `kt` starts the
// binary at once instead of starting Node first (esbuild does the same). Whatever does not
// fit leaves the launcher, which works everywhere: Windows (npm's shims run bin/kt with
// Node), a binary that does not run here, or scripts not run at all (--ignore-scripts, pnpm
// and Bun by default).
"use strict";
const { execFileSync } = require("node:child_process");
const fs = require("node:fs");
const { join } = require("node:path");

const bin = join(__dirname, "bin", "kt");

/** True while bin/kt is still the launcher (a script), not the binary put there before. */
function isLauncher() {
  const fd = fs.openSync(bin, "r");
  try {
    const head = Buffer.alloc(2);
    fs.readSync(fd, head, 0, 2, 0);
    return head.toString() === "#!";
  } finally {
    fs.closeSync(fd);
  }
}

function install() {
  if (process.platform === "win32" || !isLauncher()) return;
  const { file } = require(bin).locate();
  if (!file) return; // the launcher explains, each time kt is run
  const { version } = require("./package.json");
  const said = execFileSync(file, ["--version"], { encoding: "utf8", timeout: 20000, stdio: ["ignore", "pipe", "ignore"] });
  if (!said.startsWith(`kt ${version} `)) return;
  // A hard link costs no space; across file systems, a copy. Renamed into place in one step.
  const next = `${bin}.${process.pid}.tmp`;
  try {
    try {
      fs.linkSync(file, next);
    } catch {
      fs.copyFileSync(file, next);
      fs.chmodSync(next, 0o755);
    }
    fs.renameSync(next, bin);
  } finally {
    fs.rmSync(next, { force: true });
  }
}

try {
  install();
} catch {
  // Any failure leaves the launcher in place: slower by Node's start-up, never broken.
}
