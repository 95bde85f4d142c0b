// Whether bubblewrap works here: present on PATH is not enough — user namespaces may be off
// (a sysctl, a container without them, an AppArmor rule), and then every sandboxed command
// would fail. So bwrap is tried once, as a command would run, and a success is remembered in
// the state directory under the facts that could change the answer (which bwrap, the user,
// the boot, the user-namespace limit), so that a kt call pays a stat and a read, not a spawn.
// A failure is not remembered: the person who fixes it is answered at once.
import { readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Unavailable } from "./prose.ts";

export type Probe = { ok: true; bwrap: string; disableUserns: boolean } | { ok: false; unavailable: Unavailable };

const CACHE = "sandbox-probe.json";
const INSTALL = "install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap; Arch: pacman -S bubblewrap)";

export function probeBwrap(stateDir: string, env: Record<string, string | undefined> = process.env): Probe {
  const bwrap = Bun.which("bwrap", { PATH: env.PATH ?? "" });
  if (!bwrap) return { ok: false, unavailable: { why: "bubblewrap (bwrap) is not installed, or not on PATH", fix: INSTALL } };
  const key = cacheKey(bwrap);
  const cachePath = join(stateDir, CACHE);
  if (key) {
    try {
      const cached = JSON.parse(readFileSync(cachePath, "utf8")) as { key?: string; disableUserns?: boolean };
      if (cached.key === key) return { ok: true, bwrap, disableUserns: cached.disableUserns === true };
    } catch {
      // No cache yet, or an unreadable one: probe.
    }
  }
  let tried = tryBwrap(bwrap, true);
  // bubblewrap before 0.8 has no --disable-userns; it still sandboxes.
  if (!tried.ok && /disable-userns/.test(tried.message)) tried = { ...tryBwrap(bwrap, false), disableUserns: false };
  if (!tried.ok) {
    return {
      ok: false,
      unavailable: {
        why: `bubblewrap (${bwrap}) is installed but cannot make a sandbox here (it said: ${tried.message || `exit ${tried.exitCode}`})`,
        fix: "allow unprivileged user namespaces (sysctl user.max_user_namespaces above 0; on Debian also kernel.unprivileged_userns_clone=1; on Ubuntu an AppArmor profile for bwrap), or run kt where they are allowed",
      },
    };
  }
  if (key) {
    try {
      const tmp = `${cachePath}.${process.pid}`;
      writeFileSync(tmp, JSON.stringify({ key, disableUserns: tried.disableUserns }), { mode: 0o600 });
      renameSync(tmp, cachePath);
    } catch {
      // A state directory kt cannot write: probe again next time.
    }
  }
  return { ok: true, bwrap, disableUserns: tried.disableUserns };
}

function tryBwrap(bwrap: string, disableUserns: boolean): { ok: boolean; message: string; exitCode: number | null; disableUserns: boolean } {
  const args = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-user", ...(disableUserns ? ["--disable-userns"] : []), "--unshare-pid", "--unshare-ipc", "--unshare-net", "--", "true"];
  try {
    const run = Bun.spawnSync(args, { stdin: "ignore", stdout: "ignore", stderr: "pipe", cwd: "/" });
    return { ok: run.exitCode === 0, message: run.stderr.toString().trim().split("\n").slice(-1)[0] ?? "", exitCode: run.exitCode, disableUserns };
  } catch (error) {
    return { ok: false, message: (error as Error).message, exitCode: null, disableUserns };
  }
}

/** What the answer depends on; undefined when it cannot be told (then nothing is cached). */
function cacheKey(bwrap: string): string | undefined {
  try {
    const st = statSync(bwrap);
    const boot = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    let userns = "";
    for (const knob of ["/proc/sys/user/max_user_namespaces", "/proc/sys/kernel/unprivileged_userns_clone", "/proc/sys/kernel/apparmor_restrict_unprivileged_userns"]) {
      try {
        userns += `${readFileSync(knob, "utf8").trim()};`;
      } catch {
        userns += "-;";
      }
    }
    return `${bwrap}:${st.dev}:${st.ino}:${st.mtimeMs}:${process.getuid?.()}:${boot}:${userns}`;
  } catch {
    return undefined;
  }
}
