// Helpers of the in-process engine benches (bench/ecl-engine.ts, bench/snomed-index.ts): units, a median, and a
// series of expansions (the first, other new ones, then the first repeated).

/** Bytes as MiB, rounded. */
export const mib = (b: number): string => `${(b / 1048576).toFixed(0)} MiB`;
/** Milliseconds, two decimals below 10. */
export const ms = (x: number): string => `${x.toFixed(x < 10 ? 2 : 0)} ms`;
/** The median of a list. */
export const p50 = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** One expansion's time and total. */
export type Expand = (url: string) => Promise<{ ms: number; total: number | undefined }>;

/** Expands urls[0] (first), each other url once (new), then urls[0] `repeat` times, and prints the timings. */
export async function series(label: string, urls: string[], repeat: number, expand: Expand): Promise<void> {
  const first = await expand(urls[0]);
  const cold: number[] = [];
  for (const u of urls.slice(1)) cold.push((await expand(u)).ms);
  const warm: number[] = [];
  for (let i = 0; i < repeat; i++) warm.push((await expand(urls[0])).ms);
  console.log(
    `${label}: first ${ms(first.ms)} (total ${first.total})` +
      (cold.length ? `, other new expressions p50 ${ms(p50(cold))} (${cold.length})` : '') +
      `, repeated p50 ${ms(p50(warm))} (${repeat})`,
  );
}
