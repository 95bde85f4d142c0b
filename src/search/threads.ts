// How many threads a search uses: the machine's cores, as ripgrep does by default, or
// KT_THREADS. Never capped at a fixed number: kt runs on 8–16-core laptops, and a cap
// picked on a small machine leaves most of a large one idle.
export function threadCount(env: Record<string, string | undefined> = process.env): number {
  const raw = Number(env.KT_THREADS);
  if (Number.isInteger(raw) && raw >= 1) return raw;
  return Math.max(1, navigator.hardwareConcurrency || 1);
}
