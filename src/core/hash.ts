// Content hashes: sha256 in hex names every version kt records (stamps, history, journals).
// A module of its own, with no state behind it, so that search threads can hash what they read.

export function sha256(bytes: Uint8Array | string): string {
  return new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
}
