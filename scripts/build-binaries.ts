// Cross-compiles kt for every supported platform into dist/. Bun fetches each target's
// runtime from the npm registry the first time it is needed.
//   bun scripts/build-binaries.ts [target…]     (default: all targets)
import { join } from "node:path";

const TARGETS: Record<string, string> = {
  "linux-x64": "bun-linux-x64",
  "linux-arm64": "bun-linux-arm64",
  "darwin-x64": "bun-darwin-x64",
  "darwin-arm64": "bun-darwin-arm64",
  "windows-x64": "bun-windows-x64",
};

const root = join(import.meta.dir, "..");
const wanted = process.argv.slice(2);
const names = wanted.length > 0 ? wanted : Object.keys(TARGETS);
let failed = 0;
for (const name of names) {
  const target = TARGETS[name];
  if (!target) {
    console.error(`unknown target ${name}; known: ${Object.keys(TARGETS).join(", ")}`);
    process.exit(2);
  }
  const outfile = join(root, "dist", `kt-${name}${name.startsWith("windows") ? ".exe" : ""}`);
  const started = performance.now();
  const build = Bun.spawnSync(
    [process.execPath, "build", "--compile", "--minify", "--bytecode", "--splitting", "--format=esm", "--no-compile-autoload-dotenv", "--no-compile-autoload-bunfig", `--target=${target}`, join(root, "src", "main.ts"), join(root, "src", "search", "worker.ts"), "--outfile", outfile],
    { cwd: root, stdout: "pipe", stderr: "pipe" },
  );
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  if (build.exitCode === 0) {
    console.log(`${name.padEnd(13)} ${outfile} (${seconds}s)`);
  } else {
    failed++;
    console.error(`${name.padEnd(13)} FAILED (${seconds}s)\n${build.stderr.toString().trim()}`);
  }
}
process.exit(failed === 0 ? 0 : 1);
