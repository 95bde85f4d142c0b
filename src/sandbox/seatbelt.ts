// A policy as a Seatbelt profile for macOS's sandbox-exec, in Apple's profile language (SBPL,
// the Scheme-like text of /System/Library/Sandbox/Profiles). Deny by default; then what a
// command needs to run at all (its own processes, the system's configuration, the few system
// services every program asks), everything readable but the secret stores, writes only in the
// writable set and the temp directory, and the network only on loopback unless allowed.
// kt's state directory is neither readable nor writable. Later rules win in SBPL, so the
// denials come after the allowances they narrow.
//
// This text is tested as text only: sandbox-exec cannot run on the Linux machines kt is built
// and tested on (README says so).
import type { SandboxPolicy } from "../core/result.ts";

/** The system services a command may look up (user and group names, logging, notifications, certificates). */
const SERVICES = [
  "com.apple.system.opendirectoryd.libinfo",
  "com.apple.system.logger",
  "com.apple.system.notification_center",
  "com.apple.logd",
  "com.apple.trustd",
  "com.apple.trustd.agent",
  "com.apple.SecurityServer",
  "com.apple.CoreServices.coreservicesd",
];

/** Name resolution goes through mDNSResponder: with the network off, so does its door. */
const NETWORK_SERVICES = ["com.apple.dnssd.service", "com.apple.networkd", "com.apple.SystemConfiguration.configd"];

export function seatbeltProfile(policy: SandboxPolicy, stateDir: string): string {
  const writable = policy.writable.includes(policy.tmp) ? policy.writable : [...policy.writable, policy.tmp];
  const lines = [
    `; kt sandbox ${policy.mode}: generated, one per command`,
    "(version 1)",
    "(deny default)",
    "(allow process-fork)",
    "(allow process-exec)",
    "(allow signal (target same-sandbox))",
    "(allow process-info* (target same-sandbox))",
    "(allow sysctl-read)",
    "(allow pseudo-tty)",
    "(allow ipc-posix-sem)",
    "(allow ipc-posix-shm-read* ipc-posix-shm-write-data ipc-posix-shm-write-create)",
    `(allow mach-lookup ${(policy.network ? [...SERVICES, ...NETWORK_SERVICES] : SERVICES).map((s) => `(global-name ${str(s)})`).join(" ")})`,
    "(allow file-read*)",
    `(allow file-write* ${writable.map((d) => `(subpath ${str(d)})`).join(" ")} (literal "/dev/null") (literal "/dev/zero") (literal "/dev/dtracehelper") (literal "/dev/tty") (literal "/dev/ptmx") (regex #"^/dev/ttys[0-9]+$"))`,
    `(allow file-ioctl (literal "/dev/tty") (literal "/dev/ptmx") (regex #"^/dev/ttys[0-9]+$"))`,
  ];
  if (policy.network) lines.push("(allow network*)");
  else {
    lines.push(
      `(allow network-bind network-inbound (local ip "localhost:*"))`,
      `(allow network-outbound (remote ip "localhost:*"))`,
      `(allow network-outbound (remote unix-socket (path-literal "/private/var/run/syslog")))`,
    );
  }
  lines.push(`(deny file-read* file-write* ${[...policy.denyRead, stateDir].map((p) => `(subpath ${str(p)})`).join(" ")})`);
  return `${lines.join("\n")}\n`;
}

/** An SBPL string literal. */
function str(s: string): string {
  return `"${s.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}
