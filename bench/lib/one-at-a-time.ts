// Requests sent one at a time (keep-alive fetch: what one user sees), with latency percentiles.
import { fmt } from './report.js';

export interface LoopResult {
  n: number;
  ok: number;
  p50: number;
  p95: number;
  p99: number;
  rps: number;
  statuses: Record<string, number>;
}

/** Sends each url once, one at a time (keep-alive fetch: what one typist sees), and reports latency percentiles. */
export async function oneAtATime(urls: string[], token: string): Promise<LoopResult> {
  const lat: number[] = [];
  const statuses: Record<string, number> = {};
  const t0 = performance.now();
  for (const url of urls) {
    const s = performance.now();
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    await res.arrayBuffer();
    const ms = performance.now() - s;
    statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    if (res.status === 200) lat.push(ms);
  }
  const wall = performance.now() - t0;
  lat.sort((a, b) => a - b);
  const pct = (p: number) =>
    lat[Math.min(lat.length - 1, Math.max(0, Math.ceil((p / 100) * lat.length) - 1))];
  return {
    n: urls.length,
    ok: lat.length,
    p50: pct(50),
    p95: pct(95),
    p99: pct(99),
    rps: (lat.length / wall) * 1000,
    statuses,
  };
}

/** A row's note for a one-at-a-time loop. */
export function loopNote(r: LoopResult): string {
  return (
    `${r.ok}/${r.n} requests, one at a time: p50 ${fmt(r.p50, 2)} ` +
    `p95 ${fmt(r.p95, 2)} p99 ${fmt(r.p99, 2)} ms, ${fmt(r.rps)} req/s; statuses ${JSON.stringify(r.statuses)}`
  );
}
