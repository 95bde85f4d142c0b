// Installing kt where it is used (SPEC §7.7): scripts/build-binaries.ts builds this
// machine's target into a temp directory; its npm packages are packed with `npm pack` and
// installed with the network off into an empty directory, where kt must run; the launcher
// refuses a platform kt is not built for; every archive matches SHA256SUMS.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { hostTarget, MAIN, SCOPE, TARGETS } from "../scripts/build-binaries.ts";
import { tarGz, zip } from "../scripts/release/archive.ts";
import { platformTags } from "../scripts/release/wheel.ts";
import { loadAllTools, schemaName } from "../src/tools/registry.ts";
import { ROOT, tempDir } from "./_helpers.ts";
import pkg from "../package.json" with { type: "json" };

const NODE = Bun.which("node");
const PYTHON = Bun.which("python3");
const NPM = Bun.which("npm");
const HOST = hostTarget();
const EXE = process.platform === "win32" ? "kt.exe" : "kt";
const ALL = Object.keys(TARGETS).join(", ");
// A skipped part says why.
if (!NODE) console.warn("release.test: node is not on PATH, so the launcher and the npm install tests are skipped.");
else if (!NPM) console.warn("release.test: npm is not on PATH, so the npm pack and install tests are skipped.");
if (!PYTHON) console.warn("release.test: python3 is not on PATH, so the Python wheel install test is skipped.");
for (const tool of ["tar", "unzip"]) if (!Bun.which(tool)) console.warn(`release.test: ${tool} is not on PATH, so the test reading the archive with it is skipped.`);

const tmp = tempDir("kt-release-");
const out = join(tmp.path, "dist");
const npmDir = join(out, "npm", SCOPE);
let build: { exitCode: number | null; stdout: string; stderr: string };

// The ~110 MB binary is compressed and unpacked several times (archive, npm pack, two
// installs): about 15 s of CPU, minutes on a loaded machine; hence the hooks' long timeouts.
const SLOW = 300_000;

beforeAll(() => {
  const run = Bun.spawnSync([process.execPath, join(ROOT, "scripts", "build-binaries.ts"), "--out", out, "host"], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  build = { exitCode: run.exitCode, stdout: run.stdout.toString(), stderr: run.stderr.toString() };
}, SLOW);
afterAll(() => tmp[Symbol.dispose]());

interface Ran {
  stdout: string;
  stderr: string;
  exitCode: number | null;
}

function spawn(argv: string[], opts: { cwd: string; env?: Record<string, string | undefined>; stdin?: string }): Ran {
  const run = Bun.spawnSync(argv, {
    cwd: opts.cwd,
    env: { PATH: process.env.PATH ?? "", HOME: tmp.path, NO_COLOR: "1", ...opts.env },
    stdin: opts.stdin === undefined ? "ignore" : Buffer.from(opts.stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  return { stdout: run.stdout.toString(), stderr: run.stderr.toString(), exitCode: run.exitCode };
}

/** A require hook that makes Node report another platform, for the launcher to refuse. */
function fakePlatform(dir: string, platform: string, arch: string): string {
  const file = join(dir, `fake-${platform}-${arch}.cjs`);
  writeFileSync(file, `Object.defineProperty(process, "platform", { value: ${JSON.stringify(platform)} });\nObject.defineProperty(process, "arch", { value: ${JSON.stringify(arch)} });\n`);
  return file;
}

describe("scripts/build-binaries.ts for this machine", () => {
  test("builds the platform package, the main package, the archive and SHA256SUMS", () => {
    expect(build.stderr).toBe("");
    expect(build.exitCode).toBe(0);
    const platform = JSON.parse(readFileSync(join(npmDir, HOST, "package.json"), "utf8"));
    const t = TARGETS[HOST]!;
    expect(platform).toMatchObject({ name: `${SCOPE}/${HOST}`, version: pkg.version, license: pkg.license, os: [t.os], cpu: [t.cpu], files: ["bin/"] });
    expect(platform.libc).toEqual(t.libc ? [t.libc] : undefined);
    expect(platform.bin).toBeUndefined(); // only the main package's launcher is linked as `kt`
    expect(statSync(join(npmDir, HOST, "bin", EXE)).mode & 0o111).not.toBe(0);
    expect(readFileSync(join(npmDir, HOST, "README.md"), "utf8")).toContain(`install [\`${MAIN}\`]`);

    const main = JSON.parse(readFileSync(join(npmDir, "kt", "package.json"), "utf8"));
    expect(main).toMatchObject({ name: MAIN, version: pkg.version, bin: { kt: "bin/kt" }, engines: pkg.engines, scripts: { postinstall: "node install.cjs" } });
    // Every platform, each pinned to exactly this version.
    expect(main.optionalDependencies).toEqual(Object.fromEntries(Object.keys(TARGETS).map((name) => [`${SCOPE}/${name}`, pkg.version])));
    expect(readFileSync(join(npmDir, "kt", "bin", "kt"), "utf8")).toBe(readFileSync(join(ROOT, "scripts", "release", "launcher.cjs"), "utf8"));
    expect(readFileSync(join(npmDir, "kt", "install.cjs"), "utf8")).toBe(readFileSync(join(ROOT, "scripts", "release", "install.cjs"), "utf8"));
    expect(readdirSync(out).sort()).toEqual([`kt-${pkg.version}-${HOST}${HOST.startsWith("windows") ? ".zip" : ".tar.gz"}`, "SHA256SUMS", "npm", "python"].sort());
  });

  test("every archive's checksum matches SHA256SUMS, and sha256sum -c agrees", () => {
    const sums = readFileSync(join(out, "SHA256SUMS"), "utf8");
    const lines = sums.trimEnd().split("\n");
    const archives = readdirSync(out).filter((f) => f.endsWith(".tar.gz") || f.endsWith(".zip"));
    expect(archives.length).toBeGreaterThan(0);
    expect(lines.map((l) => l.slice(66)).sort()).toEqual(archives.sort());
    for (const line of lines) {
      const [, hash, file] = /^([0-9a-f]{64}) {2}(\S+)$/.exec(line) ?? [];
      expect(file).toBeDefined();
      expect(createHash("sha256").update(readFileSync(join(out, file!))).digest("hex")).toBe(hash!);
    }
    const sha256sum = Bun.which("sha256sum");
    if (sha256sum) expect(spawn([sha256sum, "-c", "SHA256SUMS"], { cwd: out })).toMatchObject({ exitCode: 0, stdout: archives.map((a) => `${a}: OK\n`).join("") });
  });

  test.skipIf(HOST.startsWith("windows"))("the archive unpacks to kt-<version>-<target>/ with a binary that runs and a README", () => {
    const base = `kt-${pkg.version}-${HOST}`;
    const dir = join(tmp.path, "unpacked");
    mkdirSync(dir);
    expect(spawn(["tar", "-xzf", join(out, `${base}.tar.gz`)], { cwd: dir }).exitCode).toBe(0);
    expect(readdirSync(join(dir, base)).sort()).toEqual(["README.txt", "kt"]);
    expect(readFileSync(join(dir, base, "README.txt"), "utf8")).toStartWith(`kt ${pkg.version} for `);
    const version = spawn([join(dir, base, "kt"), "--version"], { cwd: dir });
    expect(version).toMatchObject({ exitCode: 0, stderr: "" });
    expect(version.stdout).toMatch(new RegExp(`^kt ${pkg.version.replace(/\./g, "\\.")} \\(commit [0-9a-f]{12}( with uncommitted changes)?\\)\\n$`));
  });

  test("an unknown target or option is refused with the list of targets, exit 2", () => {
    const r = spawn([process.execPath, join(ROOT, "scripts", "build-binaries.ts"), "--out", join(tmp.path, "nothing"), "plan9-x64"], { cwd: ROOT });
    expect(r).toEqual({
      stdout: "",
      stderr: `build-binaries: unknown target plan9-x64\nusage: bun scripts/build-binaries.ts [--out DIR] [target… | host]\ntargets: ${ALL}\n`,
      exitCode: 2,
    });
    expect(existsSync(join(tmp.path, "nothing"))).toBe(false);
  });
});

describe.skipIf(!NODE || !NPM)("the npm packages, packed and installed offline", () => {
  // Installed twice: as npm does by default (the install script puts the binary in place of
  // the launcher) and with --ignore-scripts (the launcher stays, as under pnpm or Bun).
  const app = join(tmp.path, "app");
  const bare = join(tmp.path, "app-ignore-scripts");
  const packs = join(tmp.path, "packs");
  // No registry can answer: an address nothing listens on, an empty cache, no user config.
  const offline = {
    npm_config_registry: "http://127.0.0.1:9/",
    npm_config_cache: join(tmp.path, "npm-cache"),
    npm_config_userconfig: join(tmp.path, "no-npmrc"),
    npm_config_offline: "true",
    npm_config_audit: "false",
    npm_config_fund: "false",
    npm_config_update_notifier: "false",
  };
  let packed: Ran;
  const installs = new Map<string, Ran>();
  beforeAll(async () => {
    mkdirSync(packs);
    packed = spawn([NPM!, "pack", "--silent", "--pack-destination", packs, join(npmDir, "kt"), join(npmDir, HOST)], { cwd: tmp.path, env: offline });
    const tarballs = readdirSync(packs).map((t) => join(packs, t));
    await Promise.all(
      [
        [app, []],
        [bare, ["--ignore-scripts"]],
      ].map(async ([dir, flags]) => {
        mkdirSync(dir as string);
        const proc = Bun.spawn([NPM!, "install", "--offline", ...(flags as string[]), ...tarballs], {
          cwd: dir as string,
          env: { PATH: process.env.PATH ?? "", HOME: tmp.path, ...offline },
          stdout: "pipe",
          stderr: "pipe",
        });
        const [stdout, stderr, exitCode] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
        installs.set(dir as string, { stdout, stderr, exitCode });
      }),
    );
  }, SLOW);

  const kt = (dir: string) => join(dir, "node_modules", ".bin", process.platform === "win32" ? "kt.cmd" : "kt");
  const launcherIn = (dir: string) => join(dir, "node_modules", SCOPE, "kt", "bin", "kt");
  const binaryIn = (dir: string) => join(dir, "node_modules", SCOPE, HOST, "bin", EXE);

  /** kt read, kt --version and one MCP tools/list, run from the installed directory. */
  async function exercise(dir: string): Promise<void> {
    expect(installs.get(dir)?.exitCode).toBe(0);
    // Only the packages given: every other platform's package was skipped, not fetched.
    expect(readdirSync(join(dir, "node_modules", SCOPE)).sort()).toEqual(["kt", HOST].sort());
    const state = { KT_STATE_DIR: join(tmp.path, "state") };
    writeFileSync(join(dir, "hello.txt"), "hello\nworld\n");
    expect(spawn([kt(dir), "read", "hello.txt"], { cwd: dir, env: state })).toEqual({ stdout: `${join(dir, "hello.txt")}\n     1→hello\n     2→world\n`, stderr: "", exitCode: 0 });
    // stdin and exit codes pass through: JSON input, a tool error (1), a usage error (2).
    expect(spawn([kt(dir), "read"], { cwd: dir, env: state, stdin: '{"file_path":"hello.txt","offset":2}' }).stdout).toBe(`${join(dir, "hello.txt")}\n     2→world\n`);
    expect(spawn([kt(dir), "read", "missing.txt"], { cwd: dir, env: state }).exitCode).toBe(1);
    expect(spawn([kt(dir), "reed"], { cwd: dir, env: state }).exitCode).toBe(2);

    const version = spawn([kt(dir), "--version"], { cwd: dir, env: state });
    expect(version).toMatchObject({ exitCode: 0, stderr: "" });
    expect(version.stdout).toMatch(new RegExp(`^kt ${pkg.version.replace(/\./g, "\\.")} \\(commit [0-9a-f]{12}( with uncommitted changes)?\\)\\n$`));

    const requests = [
      { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "kt-test", version: "0" } } },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
    ];
    const mcp = spawn([kt(dir), "mcp"], { cwd: dir, env: state, stdin: requests.map((r) => `${JSON.stringify(r)}\n`).join("") });
    expect(mcp.exitCode).toBe(0);
    const answers = mcp.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
    expect(answers.map((a) => a.id)).toEqual([1, 2]);
    expect(answers[0].result.serverInfo).toMatchObject({ name: "kt", version: pkg.version });
    expect(answers[1].result.tools.map((t: { name: string }) => t.name)).toEqual((await loadAllTools()).map(schemaName));
  }

  test("npm publish --dry-run takes the main package as it is: nothing to correct", () => {
    const r = spawn([NPM!, "publish", "--dry-run", "--access", "public", join(npmDir, "kt")], { cwd: tmp.path, env: offline });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe(`+ ${MAIN}@${pkg.version}\n`);
    // Only npm's notices and the dry run's note that nobody is logged in; a corrected field would warn.
    expect(r.stderr.split("\n").filter((l) => l !== "" && !l.startsWith("npm notice") && !/requires you to be logged in/.test(l))).toEqual([]);
  });

  test("npm pack makes one tarball per package", () => {
    expect(packed.exitCode).toBe(0);
    expect(readdirSync(packs).sort()).toEqual([`kt-cli-kt-${pkg.version}.tgz`, `kt-cli-${HOST}-${pkg.version}.tgz`].sort());
  });

  test.skipIf(process.platform === "win32")("npm install --offline into an empty directory: the binary takes the launcher's place; kt reads, names its version, serves MCP", async () => {
    await exercise(app);
    const [placed, binary] = [statSync(launcherIn(app)), statSync(binaryIn(app))];
    expect(placed.size).toBe(binary.size);
    expect(readFileSync(launcherIn(app)).subarray(0, 2).toString()).not.toBe("#!");
  });

  test("npm install --offline --ignore-scripts: the launcher stays and runs the binary; kt reads, names its version, serves MCP", async () => {
    expect(readFileSync(launcherIn(bare), "utf8")).toBe(readFileSync(join(ROOT, "scripts", "release", "launcher.cjs"), "utf8"));
    await exercise(bare);
  });

  test.skipIf(process.platform === "win32")("a binary unpacked without its execute bit is made executable by the launcher", () => {
    chmodSync(binaryIn(bare), 0o644);
    expect(spawn([kt(bare), "--version"], { cwd: bare }).exitCode).toBe(0);
    expect(statSync(binaryIn(bare)).mode & 0o777).toBe(0o755);
  });

  test.skipIf(process.platform !== "linux")("a signal sent to the launcher reaches kt; kt killed by a signal ends the launcher with it", async () => {
    const childOf = async (pid: number): Promise<number> => {
      for (let i = 0; i < 100; i++) {
        for (const entry of readdirSync("/proc")) {
          if (!/^\d+$/.test(entry)) continue;
          try {
            const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
            if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid) return Number(entry);
          } catch {
            // gone meanwhile
          }
        }
        await Bun.sleep(50);
      }
      throw new Error(`no child of ${pid}`);
    };
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    const env = { PATH: process.env.PATH ?? "", HOME: tmp.path, KT_STATE_DIR: join(tmp.path, "state") };

    // SIGTERM to the launcher alone (how an MCP client stops its server): kt ends cleanly, exit 0.
    const server = Bun.spawn([kt(bare), "mcp"], { cwd: bare, env, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    const binary = await childOf(server.pid);
    // Once kt has answered, it is serving (and listening for SIGTERM).
    server.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "kt-test", version: "0" } } })}\n`);
    server.stdin.flush();
    const { value } = await server.stdout.getReader().read();
    expect(new TextDecoder().decode(value)).toContain('"serverInfo"');
    server.kill("SIGTERM");
    expect(await server.exited).toBe(0);
    expect(alive(binary)).toBe(false);

    // kt killed by SIGKILL: the launcher ends by the same signal, as a shell would see it.
    const killed = Bun.spawn([kt(bare), "mcp"], { cwd: bare, env, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    process.kill(await childOf(killed.pid), "SIGKILL");
    await killed.exited;
    expect(killed.signalCode).toBe("SIGKILL");
  });

  test("on another machine's node_modules, the launcher says which platform package it found instead; exit 3", () => {
    const other = HOST === "darwin-arm64" ? ["linux", "x64"] : ["darwin", "arm64"];
    const hook = fakePlatform(tmp.path, other[0]!, other[1]!);
    const r = spawn([NODE!, "--require", hook, launcherIn(bare), "read", "hello.txt"], { cwd: bare });
    const key = `${other[0]}-${other[1]}`;
    expect(r).toEqual({
      stdout: "",
      stderr: `kt: the package ${SCOPE}/${key}, which holds kt's binary for this platform, is not installed. Found the one for ${HOST} instead: node_modules was installed on another machine. Install ${MAIN} again on this machine, with optional dependencies.\n`,
      exitCode: 3,
    });
  });
});
describe.skipIf(!NODE)("the launcher", () => {
  test("refuses a platform kt is not built for with the list of those it is, exit 3", () => {
    const hook = fakePlatform(tmp.path, "aix", "ppc64");
    const r = spawn([NODE!, "--require", hook, join(npmDir, "kt", "bin", "kt"), "read", "x"], { cwd: tmp.path });
    expect(r).toEqual({
      stdout: "",
      stderr: `kt: there is no kt binary for this platform (aix-ppc64; Node reports aix ppc64). kt ${pkg.version} is built for: ${ALL}. On another platform, build kt from its sources with Bun (bun build --compile) and put the binary on PATH.\n`,
      exitCode: 3,
    });
  });

  test("says when the platform package is missing (optional dependencies omitted), exit 3", () => {
    // The main package alone, outside any node_modules: no platform package can be found.
    const r = spawn([NODE!, join(npmDir, "kt", "bin", "kt"), "--version"], { cwd: tmp.path });
    expect(r).toEqual({
      stdout: "",
      stderr: `kt: the package ${SCOPE}/${HOST}, which holds kt's binary for this platform, is not installed. npm leaves it out when optional dependencies are omitted (--omit=optional, --no-optional). Install ${MAIN} again on this machine, with optional dependencies.\n`,
      exitCode: 3,
    });
  });

  test("the checkout's kt (bin/kt.cjs, what npx kt runs) runs dist/kt through it: stdout, stdin, exit codes", () => {
    const checkout = join(ROOT, "bin", "kt.cjs");
    const env = { KT_STATE_DIR: join(tmp.path, "checkout-state") };
    expect(spawn([NODE!, checkout, "read", "package.json", "--limit", "1"], { cwd: ROOT, env })).toEqual({
      stdout: `${join(ROOT, "package.json")}\n     1→{\n(Showing lines 1–1 of ${readFileSync(join(ROOT, "package.json"), "utf8").split("\n").length - 1}. Use offset=2 to continue.)\n`,
      stderr: "",
      exitCode: 0,
    });
    expect(spawn([NODE!, checkout, "read"], { cwd: ROOT, env, stdin: '{"file_path":"package.json","offset":2,"limit":1}' }).stdout).toStartWith(`${join(ROOT, "package.json")}\n     2→  "name": "kt",\n`);
    expect(spawn([NODE!, checkout, "read", "no-such-file"], { cwd: ROOT, env }).exitCode).toBe(1);
    expect(spawn([NODE!, checkout, "reed"], { cwd: ROOT, env }).exitCode).toBe(2);
  });

  test("names the platform as npm picks packages: os, cpu, and musl when Node is linked against it", () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { platformKey, linkedToMusl } = require("../scripts/release/launcher.cjs") as { platformKey(p: string, a: string, musl: boolean): string; linkedToMusl(file?: string): boolean };
    expect(platformKey("linux", "x64", false)).toBe("linux-x64");
    expect(platformKey("linux", "x64", true)).toBe("linux-x64-musl");
    expect(platformKey("linux", "arm64", true)).toBe("linux-arm64-musl");
    expect(platformKey("darwin", "arm64", false)).toBe("darwin-arm64");
    expect(platformKey("darwin", "arm64", true)).toBe("darwin-arm64");
    expect(platformKey("win32", "x64", false)).toBe("windows-x64");
    for (const key of Object.keys(TARGETS)) expect(key).toMatch(/^(linux|darwin|windows)-(x64|arm64)(-musl)?$/);
    // The ELF interpreter decides: musl's loader, glibc's, or a file that is no program.
    const elf = (interpreter: string) => {
      const file = join(tmp.path, `elf-${interpreter.replace(/\W/g, "_")}`);
      writeFileSync(file, Buffer.concat([Buffer.from("\x7fELF"), Buffer.alloc(700), Buffer.from(`${interpreter}\0`), Buffer.alloc(5000)]));
      return file;
    };
    expect(linkedToMusl(elf("/lib/ld-musl-x86_64.so.1"))).toBe(true);
    expect(linkedToMusl(elf("/lib64/ld-linux-x86-64.so.2"))).toBe(false);
    expect(linkedToMusl(join(tmp.path, "no-such-file"))).toBe(false);
    // The binaries kt builds: the musl one's interpreter is musl's.
    const built = join(npmDir, HOST, "bin", EXE);
    expect(linkedToMusl(built)).toBe(HOST.endsWith("-musl"));
  });
});

describe("release archive writers", () => {
  const entries = [
    { name: "kt-1/", mode: 0o755 },
    { name: "kt-1/kt", data: new TextEncoder().encode("#!/bin/sh\necho from the archive\n"), mode: 0o755 },
    { name: "kt-1/README.txt", data: new TextEncoder().encode("read me, ünïcode\n".repeat(50)), mode: 0o644 },
  ];
  const mtime = Date.UTC(2026, 0, 2, 3, 4, 6) / 1000;

  test("the same entries make the same bytes", () => {
    expect(Buffer.from(tarGz(entries, mtime)).equals(Buffer.from(tarGz(entries, mtime)))).toBe(true);
    expect(Buffer.from(zip(entries, mtime)).equals(Buffer.from(zip(entries, mtime)))).toBe(true);
  });

  test.skipIf(!Bun.which("tar"))("tar reads the tarball: names, modes, owner 0, date, contents", () => {
    using dir = tempDir();
    writeFileSync(join(dir.path, "a.tar.gz"), tarGz(entries, mtime));
    const list = spawn(["tar", "-tvzf", "a.tar.gz", "--numeric-owner"], { cwd: dir.path, env: { TZ: "UTC" } });
    expect(list.exitCode).toBe(0);
    expect(list.stdout.split("\n").filter(Boolean).map((l) => l.split(/\s+/).filter((_, i) => i !== 2 && i !== 4).join(" "))).toEqual([
      "drwxr-xr-x 0/0 2026-01-02 kt-1/",
      "-rwxr-xr-x 0/0 2026-01-02 kt-1/kt",
      "-rw-r--r-- 0/0 2026-01-02 kt-1/README.txt",
    ]);
    expect(spawn(["tar", "-xzf", "a.tar.gz"], { cwd: dir.path }).exitCode).toBe(0);
    expect(spawn([join(dir.path, "kt-1", "kt")], { cwd: dir.path }).stdout).toBe("from the archive\n");
    expect(readFileSync(join(dir.path, "kt-1", "README.txt"), "utf8")).toBe("read me, ünïcode\n".repeat(50));
  });

  test.skipIf(!Bun.which("unzip"))("unzip tests the zip, and unpacks it with the modes kept", () => {
    using dir = tempDir();
    writeFileSync(join(dir.path, "a.zip"), zip(entries, mtime));
    const tested = spawn(["unzip", "-t", "a.zip"], { cwd: dir.path });
    expect(tested.stdout).toContain("No errors detected in compressed data of a.zip.");
    expect(spawn(["unzip", "-q", "a.zip"], { cwd: dir.path }).exitCode).toBe(0);
    expect(statSync(join(dir.path, "kt-1", "kt")).mode & 0o777).toBe(0o755);
    expect(statSync(join(dir.path, "kt-1", "README.txt")).mode & 0o777).toBe(0o644);
    expect(spawn([join(dir.path, "kt-1", "kt")], { cwd: dir.path }).stdout).toBe("from the archive\n");
    expect(readFileSync(join(dir.path, "kt-1", "README.txt"), "utf8")).toBe("read me, ünïcode\n".repeat(50));
  });
});

describe("the Python wheel (SPEC §8.8)", () => {
  const wheels = () => readdirSync(join(out, "python"));

  test("one wheel for this machine, named by the platform tags its binary needs, its RECORD true to every file", () => {
    expect(build.exitCode).toBe(0);
    const binary = readFileSync(join(npmDir, HOST, "bin", EXE));
    const tags = platformTags(TARGETS[HOST]!, binary);
    expect(wheels()).toEqual([`kt_tools-${pkg.version}-py3-none-${tags.join(".")}.whl`]);
    if (HOST === "linux-x64") expect(tags).toEqual(["manylinux_2_17_x86_64", "manylinux2014_x86_64"]);
    const dir = join(tmp.path, "wheel-unzipped");
    mkdirSync(dir);
    const unzip = Bun.which("unzip");
    expect(unzip, "unzip (Debian's unzip, which .ci/run installs) reads the wheel").not.toBeNull();
    expect(spawn([unzip!, "-q", join(out, "python", wheels()[0]!)], { cwd: dir }).exitCode).toBe(0);
    const info = `kt_tools-${pkg.version}.dist-info`;
    expect(readFileSync(join(dir, info, "WHEEL"), "utf8")).toBe(`Wheel-Version: 1.0\nGenerator: kt build-binaries\nRoot-Is-Purelib: false\n${tags.map((t) => `Tag: py3-none-${t}\n`).join("")}`);
    expect(readFileSync(join(dir, info, "METADATA"), "utf8")).toStartWith(`Metadata-Version: 2.1\nName: kt-tools\nVersion: ${pkg.version}\n`);
    const record = readFileSync(join(dir, info, "RECORD"), "utf8").trimEnd().split("\n");
    expect(record.at(-1)).toBe(`${info}/RECORD,,`);
    const listed = record.slice(0, -1).map((line) => line.split(","));
    expect(listed.map(([name]) => name).sort()).toEqual([`kt_tools-${pkg.version}.data/scripts/${EXE}`, "kt_tools/__init__.py", "kt_tools/__main__.py", `${info}/METADATA`, `${info}/WHEEL`].sort());
    for (const [name, hash, size] of listed) {
      const data = readFileSync(join(dir, name!));
      expect(hash, name).toBe(`sha256=${createHash("sha256").update(data).digest("base64url")}`);
      expect(Number(size), name).toBe(data.length);
    }
    expect(readFileSync(join(dir, `kt_tools-${pkg.version}.data`, "scripts", EXE)).equals(binary)).toBe(true);
  });

  test("the platform tags: glibc and macOS minimums read from the binary, musl, Windows", () => {
    const elf = (needs: string[]) => new TextEncoder().encode(`\x7fELF junk ${needs.map((n) => `${n}\0`).join("junk")}`);
    expect(platformTags(TARGETS["linux-x64"]!, elf(["GLIBC_2.2.5", "GLIBC_2.14", "GLIBC_2.17"]))).toEqual(["manylinux_2_17_x86_64", "manylinux2014_x86_64"]);
    expect(platformTags(TARGETS["linux-arm64"]!, elf(["GLIBC_2.17", "GLIBC_2.28"]))).toEqual(["manylinux_2_28_aarch64"]);
    expect(platformTags(TARGETS["linux-x64-musl"]!, elf([]))).toEqual(["musllinux_1_2_x86_64"]);
    expect(platformTags(TARGETS["windows-x64"]!, new Uint8Array(8))).toEqual(["win_amd64"]);
    // A Mach-O header with one LC_BUILD_VERSION naming macOS 13.0.
    const macho = new DataView(new ArrayBuffer(64));
    macho.setUint32(0, 0xfeedfacf, true);
    macho.setUint32(16, 1, true);
    macho.setUint32(32, 0x32, true);
    macho.setUint32(36, 24, true);
    macho.setUint32(40, 1, true); // platform: macOS
    macho.setUint32(44, (13 << 16) | (0 << 8), true);
    expect(platformTags(TARGETS["darwin-arm64"]!, new Uint8Array(macho.buffer))).toEqual(["macosx_13_0_arm64"]);
    expect(platformTags(TARGETS["darwin-x64"]!, new Uint8Array(macho.buffer))).toEqual(["macosx_13_0_x86_64"]);
  });

  test.skipIf(!PYTHON || process.platform === "win32")("pip install --no-index into a fresh virtualenv: kt on its PATH reads, names its version, serves MCP; python -m kt_tools runs it", async () => {
    const venv = join(tmp.path, "venv");
    expect(spawn([PYTHON!, "-m", "venv", venv], { cwd: tmp.path }).exitCode).toBe(0);
    const pip = spawn([join(venv, "bin", "python"), "-m", "pip", "install", "--no-index", "--no-cache-dir", "--disable-pip-version-check", "-q", join(out, "python", wheels()[0]!)], { cwd: tmp.path });
    expect(pip.stderr).toBe("");
    expect(pip.exitCode).toBe(0);
    const bin = join(venv, "bin");
    expect(statSync(join(bin, "kt")).mode & 0o111).not.toBe(0);
    // kt as the virtualenv puts it on PATH.
    const env = { PATH: `${bin}:/usr/bin:/bin`, KT_STATE_DIR: join(tmp.path, "venv-state") };
    const dir = join(tmp.path, "venv-work");
    mkdirSync(dir);
    writeFileSync(join(dir, "hello.txt"), "hello\n");
    expect(spawn(["kt", "read", "hello.txt"], { cwd: dir, env })).toEqual({ stdout: `${join(dir, "hello.txt")}\n     1→hello\n`, stderr: "", exitCode: 0 });
    expect(spawn(["kt", "--version"], { cwd: dir, env }).stdout).toStartWith(`kt ${pkg.version} (commit `);
    expect(spawn([join(bin, "python"), "-m", "kt_tools", "--version"], { cwd: dir, env }).stdout).toStartWith(`kt ${pkg.version} (commit `);
    expect(spawn([join(bin, "python"), "-c", "import kt_tools; print(kt_tools.find_kt_bin())"], { cwd: dir, env }).stdout).toBe(`${join(bin, "kt")}\n`);
    const requests = [
      { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "kt-test", version: "0" } } },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
    ];
    const mcp = spawn(["kt", "mcp"], { cwd: dir, env, stdin: requests.map((r) => `${JSON.stringify(r)}\n`).join("") });
    expect(mcp.exitCode).toBe(0);
    const answers = mcp.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
    expect(answers[1].result.tools.map((t: { name: string }) => t.name)).toEqual((await loadAllTools()).map(schemaName));
  }, SLOW);
});
