// file:// URIs and paths: one spelling each way, so that a URI a server sends back (with its
// own percent-encoding) names the same file as the one kt sent.
import { fileURLToPath, pathToFileURL } from "node:url";

export function toUri(path: string): string {
  return pathToFileURL(path).href;
}

/** The path a file URI names; undefined for any other scheme. */
export function fromUri(uri: string): string | undefined {
  if (!uri.startsWith("file:")) return undefined;
  try {
    return fileURLToPath(uri);
  } catch {
    return undefined;
  }
}
