// The Python wheel of one platform's kt (SPEC §8.8), shaped the way ruff and uv ship theirs:
// the binary goes in the wheel's scripts, so `pip install kt-tools` puts `kt` on PATH (in a
// virtualenv's bin/, Scripts\ on Windows), and a small `kt_tools` package finds it for
// Python code (`kt_tools.find_kt_bin()`, `python -m kt_tools`). A wheel is a zip with a
// dist-info folder whose RECORD lists every file's sha256 (PEP 427, PEP 491).
import { createHash } from "node:crypto";
import { zip, type Entry } from "./archive.ts";

/** The distribution name on PyPI and its normalized spelling in file names (PEP 503, PEP 427). */
export const PY_DIST = "kt-tools";
const PY_NAME = "kt_tools";

export interface WheelTarget {
  os: "linux" | "darwin" | "win32";
  cpu: "x64" | "arm64";
  libc?: "glibc" | "musl";
}

/**
 * The platform tags of a wheel holding `binary`, read from the binary itself where the tag
 * depends on it: the newest glibc symbol version it needs (manylinux, PEP 600), the oldest
 * macOS its Mach-O header names. musl builds take musllinux_1_2 (musl 1.2, Alpine 3.13 on).
 */
export function platformTags(target: WheelTarget, binary: Uint8Array): string[] {
  const arch = target.cpu === "x64" ? "x86_64" : "aarch64";
  if (target.os === "win32") return [target.cpu === "x64" ? "win_amd64" : "win_arm64"];
  if (target.os === "darwin") {
    const [major, minor] = macosMinimum(binary) ?? [11, 0];
    const macArch = target.cpu === "x64" ? "x86_64" : "arm64";
    return [`macosx_${major}_${minor}_${macArch}`];
  }
  if (target.libc === "musl") return [`musllinux_1_2_${arch}`];
  const [major, minor] = glibcNeeded(binary);
  const tags = [`manylinux_${major}_${minor}_${arch}`];
  // pip before 20.3 knows only the legacy aliases: manylinux2014 is glibc 2.17.
  if (major === 2 && minor <= 17) tags.push(`manylinux2014_${arch}`);
  return tags;
}

/** The newest GLIBC_x.y version an ELF binary's symbols ask for (2.17 if it names none). */
function glibcNeeded(binary: Uint8Array): [number, number] {
  const text = Buffer.from(binary.buffer, binary.byteOffset, binary.byteLength).toString("latin1");
  let best: [number, number] = [2, 17];
  for (const m of text.matchAll(/GLIBC_2\.(\d+)(?:\.\d+)?\0/g)) {
    const minor = Number(m[1]);
    if (minor > best[1]) best = [2, minor];
  }
  return best;
}

/** The minimum macOS of a 64-bit Mach-O binary (LC_BUILD_VERSION or LC_VERSION_MIN_MACOSX), or null. */
function macosMinimum(binary: Uint8Array): [number, number] | null {
  const view = new DataView(binary.buffer, binary.byteOffset, binary.byteLength);
  if (binary.byteLength < 32 || view.getUint32(0, true) !== 0xfeedfacf) return null;
  const commands = view.getUint32(16, true);
  let at = 32;
  for (let i = 0; i < commands && at + 16 <= binary.byteLength; i++) {
    const cmd = view.getUint32(at, true);
    const size = view.getUint32(at + 4, true);
    // LC_BUILD_VERSION: platform, then minos; LC_VERSION_MIN_MACOSX: version. Both are xxxx.yy.zz in nibbles.
    const version = cmd === 0x32 ? view.getUint32(at + 12, true) : cmd === 0x24 ? view.getUint32(at + 8, true) : undefined;
    if (version !== undefined) return [version >>> 16, (version >>> 8) & 0xff];
    if (size < 8) return null;
    at += size;
  }
  return null;
}

const PACKAGE_INIT = `"""kt, the tool layer a coding agent stands on, as a Python package.

The \`kt\` executable is installed beside Python's scripts (a virtualenv's bin/). Run it
with subprocess; \`find_kt_bin()\` says where it is:

    import subprocess, json
    from kt_tools import find_kt_bin
    out = subprocess.run([find_kt_bin(), "call", "--jsonl"], input=json.dumps(
        {"tool": "read", "input": {"file_path": "README.md"}}) + "\\n",
        capture_output=True, text=True).stdout
"""
import os
import sys
import sysconfig

__all__ = ["find_kt_bin"]


def find_kt_bin() -> str:
    """The path of the kt executable this package installed."""
    exe = "kt" + (sysconfig.get_config_var("EXE") or (".exe" if sys.platform == "win32" else ""))
    candidates = [os.path.join(sysconfig.get_path("scripts"), exe)]
    user = sysconfig.get_preferred_scheme("user") if hasattr(sysconfig, "get_preferred_scheme") else None
    if user:
        candidates.append(os.path.join(sysconfig.get_path("scripts", scheme=user), exe))
    for path in candidates:
        if os.path.isfile(path):
            return path
    raise FileNotFoundError("kt is not installed beside this Python: looked in " + ", ".join(candidates))
`;

const PACKAGE_MAIN = `"""python -m kt_tools ARGS…: runs kt with ARGS."""
import os
import subprocess
import sys

from kt_tools import find_kt_bin


def main() -> None:
    kt = find_kt_bin()
    if sys.platform == "win32":
        sys.exit(subprocess.call([kt, *sys.argv[1:]]))
    os.execv(kt, [kt, *sys.argv[1:]])


if __name__ == "__main__":
    main()
`;

function recordHash(data: Uint8Array): string {
  return `sha256=${createHash("sha256").update(data).digest("base64url")}`;
}

/** The wheel's file name and bytes. */
export function wheel(opts: { version: string; summary: string; license: string; target: WheelTarget; binary: Uint8Array; mtime: number }): { name: string; data: Uint8Array } {
  const tags = platformTags(opts.target, opts.binary);
  const { version } = opts;
  const exe = opts.target.os === "win32" ? "kt.exe" : "kt";
  const info = `${PY_NAME}-${version}.dist-info`;
  const enc = new TextEncoder();
  const files: Entry[] = [
    { name: `${PY_NAME}/__init__.py`, data: enc.encode(PACKAGE_INIT), mode: 0o644 },
    { name: `${PY_NAME}/__main__.py`, data: enc.encode(PACKAGE_MAIN), mode: 0o644 },
    { name: `${PY_NAME}-${version}.data/scripts/${exe}`, data: opts.binary, mode: 0o755 },
    {
      name: `${info}/METADATA`,
      data: enc.encode(
        `Metadata-Version: 2.1\nName: ${PY_DIST}\nVersion: ${version}\nSummary: ${opts.summary}\nLicense: ${opts.license}\nRequires-Python: >=3.8\n\n` +
          "kt in a wheel: `pip install kt-tools` puts the `kt` executable on PATH. See kt's README for its tools and adapters.\n",
      ),
      mode: 0o644,
    },
    {
      name: `${info}/WHEEL`,
      data: enc.encode(`Wheel-Version: 1.0\nGenerator: kt build-binaries\nRoot-Is-Purelib: false\n${tags.map((t) => `Tag: py3-none-${t}\n`).join("")}`),
      mode: 0o644,
    },
  ];
  const record = `${files.map((f) => `${f.name},${recordHash(f.data!)},${f.data!.length}`).join("\n")}\n${info}/RECORD,,\n`;
  files.push({ name: `${info}/RECORD`, data: enc.encode(record), mode: 0o644 });
  return { name: `${PY_NAME}-${version}-py3-none-${tags.join(".")}.whl`, data: zip(files, opts.mtime) };
}
