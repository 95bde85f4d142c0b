// Whether a command's output shows it failed at the sandbox's boundary, told from the text it
// printed, conservatively: the error a read-only mount gives (EROFS), a hidden path named
// beside a failure, a network that is not there. Ordinary failures that look alike (a closed
// port on a machine with the network on, a file that is truly missing) get no line: with the
// network allowed no network failure counts, and a missing file counts only under a hidden path.
import type { SandboxPolicy } from "../core/result.ts";
import { boundaryLine } from "./prose.ts";

const READ_ONLY = /Read-only file system|\bEROFS\b/;
const NETWORK = /Network is unreachable|\bENETUNREACH\b|Could not resolve host|Temporary failure in name resolution|Name or service not known|No address associated with hostname|getaddrinfo (?:ENOTFOUND|EAI_AGAIN)|Connection refused|\bECONNREFUSED\b/;
const MISSING = /No such file or directory|\bENOENT\b|Permission denied|\bEACCES\b|Not a directory/;

/** The line to add to a command's output, or undefined when nothing in it points at the boundary. */
export function boundaryNote(policy: SandboxPolicy | undefined, output: string): string | undefined {
  if (!policy || policy.mode === "off" || output === "") return undefined;
  for (const line of output.split("\n")) {
    if (!MISSING.test(line) && !READ_ONLY.test(line)) continue;
    const hidden = policy.denyRead.find((p) => line.includes(p));
    if (hidden) return boundaryLine(policy, hidden);
  }
  if (READ_ONLY.test(output) || (!policy.network && NETWORK.test(output))) return boundaryLine(policy);
  return undefined;
}
