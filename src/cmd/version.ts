// `kt --version`: the package version and the commit kt was built from, so a bug report
// names the exact source. Loaded only for --version: from source, the macro runs git.
import { version } from "../../package.json" with { type: "json" };
import { buildCommit } from "./_commit.ts" with { type: "macro" };

/** Where the running code came from: a compiled binary's modules live in Bun's embedded file system. */
function fromSource(path = import.meta.path): boolean {
  return !/^\/\$bunfs\/|^[A-Za-z]:[\\/]~BUN[\\/]/.test(path);
}

export function versionLine(commit: string = buildCommit(), source = fromSource()): string {
  const [hash, dirty] = commit.split("+");
  const origin = hash
    ? `commit ${hash}${dirty ? " with uncommitted changes" : ""}`
    : "commit unknown: built outside a git checkout";
  return `kt ${version} (${origin}${source ? ", run from source" : ""})`;
}
