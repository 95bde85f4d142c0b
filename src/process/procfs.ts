// Where process facts come from. On Linux they are read from /proc, and the session's host
// (src/process/host.ts) and the child-subreaper (prctl) are used; every other platform
// takes the portable path: kill(pid, 0), process groups and `ps`. KT_PORTABLE_PROCESSES=1
// makes Linux take the portable path too, so that the test suite runs it here (SPEC §8.8):
// /proc then reads as absent, exactly as it is on macOS.

/** True when this process reads /proc and may use Linux's own process features. */
export const LINUX_PROC = process.platform === "linux" && process.env.KT_PORTABLE_PROCESSES !== "1";

/** `/proc/<rel>`, or a path that never exists when /proc is not used. */
export function procPath(rel = ""): string {
  return LINUX_PROC ? (rel === "" ? "/proc" : `/proc/${rel}`) : "/nonexistent/kt-portable-processes";
}
