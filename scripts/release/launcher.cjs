#!/usr/bin/env node
// The `kt` command of the npm package: runs the kt binary from the platform package
// (e.g. @kt-cli/linux-x64) that npm installed beside it as an optional dependency, passing
// stdio, the exit code and signals through. Plain Node (>= 18) and no dependencies: it is
// copied as is into the main package by scripts/build-binaries.ts.
"use strict";
const { spawn } = require("node:child_process");
const { accessSync, chmodSync, closeSync, constants, existsSync, openSync, readSync } = require("node:fs");
const { constants: osConstants } = require("node:os");
const { dirname, join } = require("node:path");

/**
 * Whether a program (by default the one running: Node, or Bun when kt is built) is linked
 * against musl, as on Alpine: its ELF interpreter, near the start of the file, is musl's
 * loader. npm picks a package by its `libc` from the same fact (Node's own C library), so
 * the launcher looks for the very package npm installed.
 */
function linkedToMusl(file = process.execPath) {
  try {
    const fd = openSync(file, "r");
    try {
      const head = Buffer.alloc(4096);
      return head.subarray(0, readSync(fd, head, 0, head.length, 0)).includes("/ld-musl-");
    } finally {
      closeSync(fd);
    }
  } catch {
    return false;
  }
}

/** This machine's platform as kt's packages name it: os-cpu, and "-musl" on a musl Linux. */
function platformKey(platform = process.platform, arch = process.arch, musl = platform === "linux" && linkedToMusl()) {
  return `${platform === "win32" ? "windows" : platform}-${arch}${platform === "linux" && musl ? "-musl" : ""}`;
}

/** Where the binary of the platform package `name` is, or undefined when it is not installed. */
function binaryOf(name, platform = process.platform) {
  let manifest;
  try {
    manifest = require.resolve(`${name}/package.json`);
  } catch {
    return undefined;
  }
  const file = join(dirname(manifest), "bin", platform === "win32" ? "kt.exe" : "kt");
  if (!existsSync(file)) return undefined;
  // A package manager that unpacked without modes leaves the binary unexecutable.
  if (platform !== "win32") {
    try {
      accessSync(file, constants.X_OK);
    } catch {
      try {
        chmodSync(file, 0o755);
      } catch {
        // read-only install: starting it says why
      }
    }
  }
  return file;
}

function refuse(message) {
  process.stderr.write(`kt: ${message}\n`);
  process.exit(3);
}

/** Runs the binary as if it were this process: same stdio, its exit code or its signal. */
function run(file, args) {
  const child = spawn(file, args, { stdio: "inherit", windowsHide: true });
  // A signal sent to this process alone (an MCP client stopping its server, `kill`) is
  // passed on. Ctrl-C and Ctrl-\ at a terminal already reach the binary, which shares the
  // terminal's process group: passing them on too would deliver them twice.
  const atTerminal = process.stdin.isTTY === true;
  const relayed = ["SIGTERM", "SIGHUP", "SIGUSR2", ...(atTerminal ? [] : ["SIGINT", "SIGQUIT"])];
  const relays = new Map();
  for (const signal of relayed) {
    const relay = () => child.kill(signal);
    try {
      process.on(signal, relay);
      relays.set(signal, relay);
    } catch {
      // a signal this platform cannot listen for (Windows)
    }
  }
  if (atTerminal) for (const signal of ["SIGINT", "SIGQUIT"]) process.on(signal, () => {}); // outlive the binary to report how it ended
  child.on("error", (error) => refuse(`cannot start ${file}: ${error.message}`));
  child.on("exit", (code, signal) => {
    if (signal === null) process.exit(code ?? 3);
    for (const [name, relay] of relays) process.off(name, relay);
    process.removeAllListeners(signal);
    // End the way the binary ended, so a shell sees the same signal; else the shell's convention.
    process.kill(process.pid, signal);
    setTimeout(() => process.exit(128 + (osConstants.signals[signal] ?? 0)), 1000);
  });
}

/** This platform's kt binary, or why there is none: prose for the user. */
function locate() {
  const pkg = require("../package.json");
  const scope = pkg.name.slice(0, pkg.name.indexOf("/") + 1);
  const known = Object.keys(pkg.optionalDependencies ?? {}).map((name) => name.slice(scope.length));
  const key = platformKey();
  if (!known.includes(key)) {
    return {
      refusal:
        `there is no kt binary for this platform (${key}; Node reports ${process.platform} ${process.arch}). ` +
        `kt ${pkg.version} is built for: ${known.join(", ")}. ` +
        `On another platform, build kt from its sources with Bun (bun build --compile) and put the binary on PATH.`,
    };
  }
  const file = binaryOf(scope + key);
  if (file) return { file };
  const elsewhere = known.filter((other) => binaryOf(scope + other) !== undefined);
  return {
    refusal:
      `the package ${scope}${key}, which holds kt's binary for this platform, is not installed. ` +
      (elsewhere.length > 0
        ? `Found the one for ${elsewhere.join(", ")} instead: node_modules was installed on another machine. `
        : `npm leaves it out when optional dependencies are omitted (--omit=optional, --no-optional). `) +
      `Install ${pkg.name} again on this machine, with optional dependencies.`,
  };
}

function main() {
  const found = locate();
  if (found.file) run(found.file, process.argv.slice(2));
  else refuse(found.refusal);
}

if (require.main === module) main();
// bin/kt.cjs, the checkout's `kt`, runs dist/kt or the sources through run() too; the
// package's install script asks locate() which binary to put in this file's place.
module.exports = { platformKey, linkedToMusl, locate, run };
