// A policy as the argv of bubblewrap (Linux): the whole file system read-only, the writable
// set and the temp directory bound writable over it, then what must stay out of reach hidden
// on top — the secret stores, the --deny-read paths, sockets that would run a command outside
// (the user's systemd and D-Bus, Docker, the ssh agent) and last kt's own state directory,
// whose host socket would run anything it is sent and whose index says where everything is.
// Mounts apply in order, so a hidden path stays hidden even inside a writable one.
//
// Namespaces: a user namespace (so that it works unprivileged, and so that nested ones can be
// forbidden with --disable-userns: a command must not build a sandbox of its own in which the
// mounts kt laid could be undone), pid (no /proc/<pid>/root of a process outside, no signals
// or ptrace across), ipc (no other program's SysV shared memory), and net unless the network
// is allowed — the new net namespace keeps its own loopback, so a server a command starts is
// reached from inside it.
//
// Two of bwrap's switches are left out on purpose. --die-with-parent: bwrap's init would take
// the command's background processes down with the shell, and kt keeps those (`server &`
// becomes process pN); kt's supervisor stops them through their group and marker as it does
// any command's. --new-session: a command here never shares a terminal with a person (pipes
// have none; a ps terminal is its own pseudo-terminal), so there is nothing to inject into,
// and its own session would cost the terminal its job control: Ctrl-C, resizes, /dev/tty.
import { lstatSync, realpathSync } from "node:fs";
import type { SandboxPolicy } from "../core/result.ts";
import { isUnder } from "./policy.ts";

export interface BwrapFacts {
  bwrap: string;
  /** The state directory (absolute): hidden from every command. */
  stateDir: string;
  /** Where the command starts. */
  cwd: string;
  uid: number;
  env: Record<string, string | undefined>;
  /** bwrap knows --disable-userns (0.8 and later). */
  disableUserns: boolean;
}

/** The argv that runs a command inside the policy: append the command (`bash -c …`). */
export function bwrapArgv(policy: SandboxPolicy, facts: BwrapFacts): string[] {
  const argv = [facts.bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"];
  const writable = policy.writable.includes(policy.tmp) ? policy.writable : [...policy.writable, policy.tmp];
  for (const dir of writable) argv.push("--bind", dir, dir);
  // After the binds, so that a hatch inside a writable directory (X11's in /tmp) stays
  // covered; a writable directory inside a hatch (a TMPDIR under /run/user) is bound again.
  const hidden = escapeHatches(facts).flatMap((p) => hide(argv, p) ?? []);
  for (const dir of writable) if (hidden.some((h) => isUnder(h, dir) && h !== dir)) argv.push("--bind", dir, dir);
  for (const p of policy.denyRead) hide(argv, p);
  hide(argv, facts.stateDir);
  argv.push("--unshare-user");
  if (facts.disableUserns) argv.push("--disable-userns");
  // No UTS or cgroup namespace: a hostname and the names of cgroups are no way out, and each namespace costs start-up time.
  argv.push("--unshare-pid", "--unshare-ipc");
  if (!policy.network) argv.push("--unshare-net");
  argv.push("--chdir", facts.cwd, "--");
  return argv;
}

/**
 * Sockets through which a command could have something outside the sandbox run for it: the
 * user's systemd and D-Bus (and Wayland), the system bus, container engines, X11, the ssh
 * agent — and every other place a kt state directory is found by default, whose hosts would
 * run a command as readily as this one's (a socket can be connected to on a read-only mount).
 */
function escapeHatches(facts: BwrapFacts): string[] {
  const { env } = facts;
  const hatches = [`/run/user/${facts.uid}`, "/run/docker.sock", "/var/run/docker.sock", "/run/containerd/containerd.sock", "/run/podman/podman.sock", "/run/dbus/system_bus_socket", "/tmp/.X11-unix"];
  for (const p of [env.SSH_AUTH_SOCK, env.KT_STATE_DIR, env.XDG_STATE_HOME && `${env.XDG_STATE_HOME}/kt`, env.HOME && `${env.HOME}/.local/state/kt`]) {
    if (p && p.startsWith("/")) hatches.push(p);
  }
  return hatches;
}

/**
 * Hides what exists at `p` (returning its real path): an empty read-only directory over a
 * directory, /dev/null over anything else. What does not exist needs no hiding (and a read-only tree cannot have a
 * mount point made for it); it cannot appear either, unless inside a writable directory —
 * where the file tools refuse it and a command's copy never leaves the sandbox's view.
 */
function hide(argv: string[], p: string): string | undefined {
  let real: string;
  let dir: boolean;
  try {
    real = realpathSync(p);
    dir = lstatSync(real).isDirectory();
  } catch {
    return undefined;
  }
  if (real === "/" || isUnder("/proc", real) || isUnder("/dev", real)) return undefined;
  if (dir) argv.push("--tmpfs", real, "--remount-ro", real);
  else argv.push("--ro-bind", "/dev/null", real);
  return real;
}
