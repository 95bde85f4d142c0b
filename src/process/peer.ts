// Who is at the other end of a Unix socket: the kernel's own answer (SO_PEERCRED), which the
// peer cannot forge. A session's host asks it of every connection before reading a byte of
// it (src/process/host.ts). Through libc's getsockopt by FFI; where that cannot be loaded the
// answer is "unknown", and the host then serves nobody (kt calls fall back to a supervisor
// of their own).

export interface Peer {
  pid: number;
  uid: number;
  gid: number;
}

interface Libc {
  getsockopt(fd: number, level: number, name: number, value: Uint8Array, length: Uint32Array): number;
}

let libc: Libc | null | undefined;

function load(): Libc | null {
  if (libc !== undefined) return libc;
  libc = null;
  if (process.platform !== "linux") return libc;
  try {
    const { dlopen, FFIType } = require("bun:ffi") as typeof import("bun:ffi");
    for (const name of ["libc.so.6", "libc.musl-x86_64.so.1", "libc.musl-aarch64.so.1", "libc.so"]) {
      try {
        const lib = dlopen(name, {
          getsockopt: { args: [FFIType.i32, FFIType.i32, FFIType.i32, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
        });
        libc = lib.symbols as unknown as Libc;
        break;
      } catch {
        // Try the next name.
      }
    }
  } catch {
    // No FFI in this runtime.
  }
  return libc;
}

const SOL_SOCKET = 1;
const SO_PEERCRED = 17;

/** Loads what peerOf needs ahead of the first connection; false when it cannot be had here. */
export function canAskPeers(): boolean {
  return load() !== null;
}

/** The credentials of the process at the other end of socket `fd`, or undefined when they cannot be known. */
export function peerOf(fd: number): Peer | undefined {
  const c = load();
  if (!c || !Number.isInteger(fd) || fd < 0) return undefined;
  // struct ucred { pid_t pid; uid_t uid; gid_t gid; }: three 32-bit fields.
  const value = new Uint32Array(3);
  const length = new Uint32Array([12]);
  if (c.getsockopt(fd, SOL_SOCKET, SO_PEERCRED, new Uint8Array(value.buffer), length) !== 0 || length[0] !== 12) return undefined;
  return { pid: value[0]! | 0, uid: value[1]!, gid: value[2]! };
}
