// Builds kt for every supported platform (or the targets named) and packages each build
// the way users install it (SPEC §7.7):
//   dist/npm/@kt-cli/<target>/     an npm package holding that binary (os, cpu, libc set)
//   dist/npm/@kt-cli/kt/           the main package: a launcher as `kt`, and every platform
//                                  package as an optional dependency of the same version
//   dist/kt-<version>-<target>.tar.gz (.zip for Windows), dist/SHA256SUMS
//   dist/python/kt_tools-<version>-py3-none-<platform tag>.whl   a Python wheel holding the
//                                  binary (SPEC §8.8; scripts/release/wheel.ts)
// npm installs only the platform package whose os/cpu/libc fit, so a user downloads one
// binary (esbuild and Biome ship this way). Bun fetches each target's runtime from the npm
// registry the first time it builds for it.
//   bun scripts/build-binaries.ts [--out DIR] [target… | host]     (default: every target)
import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pkg from "../package.json" with { type: "json" };
import { tarGz, zip, type Entry } from "./release/archive.ts";
import { wheel } from "./release/wheel.ts";
// @ts-expect-error: plain CommonJS shipped as is, without type declarations
import launcher from "./release/launcher.cjs";

export const SCOPE = "@kt-cli";
export const MAIN = `${SCOPE}/kt`;

interface Target {
  /** Bun's --target. */
  bun: string;
  os: "linux" | "darwin" | "win32";
  cpu: "x64" | "arm64";
  libc?: "glibc" | "musl";
}

/** Every platform kt is released for, named as the launcher names them (platformKey). */
export const TARGETS: Record<string, Target> = {
  "linux-x64": { bun: "bun-linux-x64", os: "linux", cpu: "x64", libc: "glibc" },
  "linux-arm64": { bun: "bun-linux-arm64", os: "linux", cpu: "arm64", libc: "glibc" },
  "linux-x64-musl": { bun: "bun-linux-x64-musl", os: "linux", cpu: "x64", libc: "musl" },
  "linux-arm64-musl": { bun: "bun-linux-arm64-musl", os: "linux", cpu: "arm64", libc: "musl" },
  "darwin-x64": { bun: "bun-darwin-x64", os: "darwin", cpu: "x64" },
  "darwin-arm64": { bun: "bun-darwin-arm64", os: "darwin", cpu: "arm64" },
  "windows-x64": { bun: "bun-windows-x64", os: "win32", cpu: "x64" },
};

const ROOT = join(import.meta.dir, "..");

/** This machine's target, as the launcher would pick it. */
export function hostTarget(): string {
  return (launcher as { platformKey(): string }).platformKey();
}

/**
 * The compile command of `npm run build` (its flags and entry points) with another output,
 * and a --target unless it is this machine's: that build embeds the running Bun, as
 * `npm run build` does, so it needs no download (and a CPU without AVX2, whose npm install
 * brought Bun's baseline build, gets that build).
 */
function compileArgs(name: string, target: Target, outfile: string): string[] {
  const words = pkg.scripts.build.split(/\s+/);
  const out = words.indexOf("--outfile");
  if (words[0] !== "bun" || words[1] !== "build" || out === -1) throw new Error(`package.json "build" is not a "bun build … --outfile FILE" command: ${pkg.scripts.build}`);
  words.splice(out, 2, "--outfile", outfile);
  return [process.execPath, ...words.slice(1), ...(name === hostTarget() ? [] : [`--target=${target.bun}`])];
}

/** Seconds since 1970 that date the archives: SOURCE_DATE_EPOCH, else the commit's time, else now. */
function releaseTime(): number {
  const given = Number(process.env.SOURCE_DATE_EPOCH);
  if (Number.isInteger(given) && given > 0) return given;
  const git = Bun.spawnSync(["git", "log", "-1", "--format=%ct"], { cwd: ROOT, stderr: "ignore" });
  const committed = Number(git.stdout.toString().trim());
  return git.exitCode === 0 && committed > 0 ? committed : Math.floor(Date.now() / 1000);
}

function platformLabel(name: string, target: Target): string {
  const os = { linux: "Linux", darwin: "macOS", win32: "Windows" }[target.os];
  return `${os} ${target.cpu}${target.libc === "musl" ? ", musl libc as on Alpine" : target.libc === "glibc" ? ", glibc" : ""} (${name})`;
}

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

function writePlatformPackage(dir: string, name: string, target: Target): void {
  writeFileSync(
    join(dir, "package.json"),
    json({
      name: `${SCOPE}/${name}`,
      version: pkg.version,
      description: `The ${platformLabel(name, target)} binary of kt. Install ${MAIN}, which runs it.`,
      license: pkg.license,
      os: [target.os],
      cpu: [target.cpu],
      ...(target.libc ? { libc: [target.libc] } : {}),
      files: ["bin/"],
      // Yarn Plug'n'Play: keep the binary on disk so it can be executed.
      preferUnplugged: true,
    }),
  );
  writeFileSync(
    join(dir, "README.md"),
    `# ${SCOPE}/${name}\n\nThe ${platformLabel(name, target)} binary of kt ${pkg.version}. Do not install this package yourself: install [\`${MAIN}\`](https://www.npmjs.com/package/${MAIN}), which depends on the binary for every platform, and npm picks the one that fits.\n${target.libc === "musl" ? "\nBun's runtime needs the C++ runtime libraries: on Alpine, `apk add libstdc++ libgcc`.\n" : ""}`,
  );
}

function mainReadme(): string {
  const platforms = Object.entries(TARGETS)
    .map(([name, t]) => `- ${platformLabel(name, t)}: \`${SCOPE}/${name}\``)
    .join("\n");
  return `# kt

${pkg.description}

\`\`\`sh
npm install -g ${MAIN}        # or: npx ${MAIN} read README.md
kt read README.md
kt --help
source <(kt completion bash)      # zsh, fish: kt completion zsh|fish
\`\`\`

This package holds a small Node launcher; the kt binary itself (one self-contained
executable, built with Bun) comes in a package for each platform, an optional dependency
of this one, so npm downloads only the one that fits:

${platforms}

Once installed, the install script puts the binary in the launcher's place (after running
it once), so \`kt\` starts without Node; where install scripts do not run (Windows,
\`--ignore-scripts\`, pnpm and Bun by default) the launcher runs the binary. On another
platform the launcher says so and exits with code 3. Installing with optional
dependencies omitted (\`--omit=optional\`) leaves kt without its binary. Release archives
(\`kt-${pkg.version}-<platform>.tar.gz\`, \`.zip\` for Windows, with \`SHA256SUMS\`) hold the same
binaries for installs without npm.
`;
}

function writeMainPackage(dir: string): void {
  mkdirSync(join(dir, "bin"), { recursive: true });
  copyFileSync(join(import.meta.dir, "release", "launcher.cjs"), join(dir, "bin", "kt"));
  chmodSync(join(dir, "bin", "kt"), 0o755);
  copyFileSync(join(import.meta.dir, "release", "install.cjs"), join(dir, "install.cjs"));
  const optionalDependencies = Object.fromEntries(Object.keys(TARGETS).map((name) => [`${SCOPE}/${name}`, pkg.version]));
  writeFileSync(
    join(dir, "package.json"),
    json({
      name: MAIN,
      version: pkg.version,
      description: pkg.description,
      license: pkg.license,
      bin: { kt: "bin/kt" },
      files: ["bin/kt", "install.cjs"],
      // Puts the binary in place of the launcher where it can (install.cjs says when).
      scripts: { postinstall: "node install.cjs" },
      engines: pkg.engines,
      optionalDependencies,
    }),
  );
  writeFileSync(join(dir, "README.md"), mainReadme());
}

function archiveReadme(name: string, target: Target, exe: string): string {
  return `kt ${pkg.version} for ${platformLabel(name, target)}

${pkg.description}

Put ${exe} on your PATH (e.g. in ~/.local/bin), then run \`kt --help\`.
Shell completion: \`kt completion bash|zsh|fish\` prints the script and how to load it.${target.libc === "musl" ? "\nBun's runtime needs the C++ runtime libraries: on Alpine, `apk add libstdc++ libgcc`." : ""}
Check the download against SHA256SUMS: \`sha256sum -c --ignore-missing SHA256SUMS\`.
License: ${pkg.license}.
`;
}

function writeArchive(out: string, name: string, target: Target, binary: string, mtime: number): string {
  const exe = target.os === "win32" ? "kt.exe" : "kt";
  const base = `kt-${pkg.version}-${name}`;
  const entries: Entry[] = [
    { name: `${base}/`, mode: 0o755 },
    { name: `${base}/${exe}`, data: readFileSync(binary), mode: 0o755 },
    { name: `${base}/README.txt`, data: new TextEncoder().encode(archiveReadme(name, target, exe)), mode: 0o644 },
  ];
  const file = `${base}${target.os === "win32" ? ".zip" : ".tar.gz"}`;
  writeFileSync(join(out, file), target.os === "win32" ? zip(entries, mtime) : tarGz(entries, mtime));
  return file;
}

function writeWheel(out: string, target: Target, binary: string, mtime: number): string {
  const dir = join(out, "python");
  mkdirSync(dir, { recursive: true });
  const built = wheel({ version: pkg.version, summary: pkg.description, license: pkg.license, target, binary: readFileSync(binary), mtime });
  const file = join(dir, built.name);
  writeFileSync(file, built.data);
  return file;
}

/** SHA256SUMS over every archive of this version in `out`, in the format `sha256sum -c` reads. */
function writeChecksums(out: string): void {
  const prefix = `kt-${pkg.version}-`;
  const lines = readdirSync(out)
    .filter((f) => f.startsWith(prefix) && (f.endsWith(".tar.gz") || f.endsWith(".zip")))
    .sort()
    .map((f) => `${createHash("sha256").update(readFileSync(join(out, f))).digest("hex")}  ${f}\n`);
  writeFileSync(join(out, "SHA256SUMS"), lines.join(""));
}

function parseArgs(argv: string[]): { out: string; names: string[] } {
  let out = join(ROOT, "dist");
  const names: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--out") out = argv[++i] ?? usage("--out needs a directory");
    else if (arg.startsWith("--out=")) out = arg.slice(6);
    else if (arg.startsWith("-")) usage(`unknown option ${arg}`);
    else if (arg === "host") names.push(hostTarget());
    else if (Object.hasOwn(TARGETS, arg)) names.push(arg);
    else usage(`unknown target ${arg}`);
  }
  return { out, names: names.length > 0 ? [...new Set(names)] : Object.keys(TARGETS) };
}

function usage(message: string): never {
  console.error(`build-binaries: ${message}\nusage: bun scripts/build-binaries.ts [--out DIR] [target… | host]\ntargets: ${Object.keys(TARGETS).join(", ")}`);
  process.exit(2);
}

function main(): number {
  const { out, names } = parseArgs(process.argv.slice(2));
  const npm = join(out, "npm", SCOPE);
  const mtime = releaseTime();
  let failed = 0;
  for (const name of names) {
    const target = TARGETS[name]!;
    const dir = join(npm, name);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(join(dir, "bin"), { recursive: true });
    const binary = join(dir, "bin", target.os === "win32" ? "kt.exe" : "kt");
    const started = performance.now();
    const build = Bun.spawnSync(compileArgs(name, target, binary), { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    if (build.exitCode !== 0) {
      failed++;
      rmSync(dir, { recursive: true, force: true });
      console.error(`${name.padEnd(17)} FAILED (${seconds}s)\n${build.stderr.toString().trim()}`);
      continue;
    }
    writePlatformPackage(dir, name, target);
    const archive = writeArchive(out, name, target, binary, mtime);
    const whl = writeWheel(out, target, binary, mtime);
    console.log(`${name.padEnd(17)} ${dir}, ${join(out, archive)}, ${whl} (${seconds}s)`);
  }
  const main = join(npm, "kt");
  rmSync(main, { recursive: true, force: true });
  writeMainPackage(main);
  writeChecksums(out);
  console.log(`${"main package".padEnd(17)} ${main}\n${"checksums".padEnd(17)} ${join(out, "SHA256SUMS")}`);
  return failed === 0 ? 0 : 1;
}

if (import.meta.main) process.exit(main());
