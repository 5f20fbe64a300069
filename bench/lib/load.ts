// Load generation with autocannon: warm-up, then N timed runs; the median run is reported.
import autocannon from 'autocannon';

/** One load scenario: a single request shape at a fixed concurrency. */
export interface LoadSpec {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  /** Each path (with its query) sent exactly once, in order, instead of `url`'s for a duration (see eachPathOnce). */
  paths?: string[];
}

/** How long to warm up and measure, and how many times. */
export interface LoadPlan {
  warmupSec: number;
  durationSec: number;
  repeats: number;
}

/** One timed run. */
export interface RunStat {
  rps: number;
  p50: number;
  p99: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
}

/** The median run (by throughput) and all runs. */
export interface LoadResult extends RunStat {
  runs: RunStat[];
  statusCodes: Record<string, number>;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

async function once(spec: LoadSpec, durationSec: number, codes?: Record<string, number>): Promise<RunStat> {
  // autocannon's own latency histogram has 1 ms resolution; its per-response event carries a float
  // (hrtime) duration, so percentiles are computed here from every 2xx response.
  let lat = new Float64Array(1 << 16);
  let n = 0;
  let done!: (r: autocannon.Result) => void;
  let fail!: (e: unknown) => void;
  const finished = new Promise<autocannon.Result>((resolve, reject) => {
    done = resolve;
    fail = reject;
  });
  // A run of a fixed amount of requests ends on autocannon's next one-second tick, and it reports whole seconds:
  // its throughput is timed here, from the start to the last response.
  const t0 = performance.now();
  let tLast = t0;
  const instance = autocannon(
    {
      url: spec.url,
      method: spec.method ?? 'GET',
      headers: spec.headers,
      body: spec.body,
      connections: spec.connections,
      ...(spec.paths
        ? { amount: spec.paths.length, requests: [{ setupRequest: nextPath(spec.paths) }] }
        : {}),
      duration: durationSec,
      timeout: 10,
    },
    (err, result) => (err ? fail(err) : done(result)),
  );
  instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
    tLast = performance.now();
    if (codes) codes[statusCode] = (codes[statusCode] ?? 0) + 1;
    if (statusCode < 200 || statusCode >= 300) return;
    if (n === lat.length) {
      const bigger = new Float64Array(lat.length * 2);
      bigger.set(lat);
      lat = bigger;
    }
    lat[n++] = responseTime;
  });
  const result = await finished;
  const sorted = lat.subarray(0, n).sort();
  return {
    rps: spec.paths ? (n / (tLast - t0)) * 1000 : n / (result.duration || durationSec),
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    ok: n,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  };
}

/** autocannon's setupRequest: the next of `paths` for every request, across all connections. */
function nextPath(paths: string[]): (req: autocannon.Request) => autocannon.Request {
  let i = 0;
  return (req) => ({ ...req, path: paths[i++ % paths.length] });
}

/** Sends each of `spec.paths` once, `spec.connections` at a time, with autocannon (a client far cheaper per request
 * than fetch, so the server's cost shows): one run, no warm-up. */
export async function eachPathOnce(spec: LoadSpec & { paths: string[] }): Promise<LoadResult> {
  const statusCodes: Record<string, number> = {};
  const run = await once(spec, 60, statusCodes);
  return { ...run, runs: [run], statusCodes };
}

/** A scenario measured in alternation with a ceiling: each timed run of the scenario right after one of the
 * ceiling, so both see the same machine. On a shared machine throughput drifts by 20% or more over minutes; a
 * ceiling measured once at the start of the run is not what the scenario competed with. */
export interface PairedResult {
  scenario: LoadResult;
  ceiling: LoadResult;
  /** Scenario throughput / ceiling throughput, one per pair. */
  ratios: number[];
  /** The median of `ratios`. */
  ratio: number;
}

/** Warms both up, then `repeats` pairs of (ceiling run, scenario run); medians of each, and of the pair ratios. */
export async function measurePaired(
  spec: LoadSpec,
  ceiling: LoadSpec,
  plan: LoadPlan,
): Promise<PairedResult> {
  if (plan.warmupSec > 0) {
    await once(ceiling, plan.warmupSec);
    await once(spec, plan.warmupSec);
  }
  const runs: RunStat[] = [];
  const ceilingRuns: RunStat[] = [];
  const statusCodes: Record<string, number> = {};
  const ceilingCodes: Record<string, number> = {};
  const ratios: number[] = [];
  for (let i = 0; i < plan.repeats; i++) {
    const c = await once(ceiling, plan.durationSec, ceilingCodes);
    const r = await once(spec, plan.durationSec, statusCodes);
    ceilingRuns.push(c);
    runs.push(r);
    ratios.push(c.rps > 0 ? r.rps / c.rps : NaN);
  }
  const sortedRatios = [...ratios].sort((a, b) => a - b);
  return {
    scenario: { ...medianRun(runs), runs, statusCodes },
    ceiling: { ...medianRun(ceilingRuns), runs: ceilingRuns, statusCodes: ceilingCodes },
    ratios,
    ratio: sortedRatios[Math.floor((sortedRatios.length - 1) / 2)],
  };
}

function medianRun(runs: RunStat[]): RunStat {
  const byRps = [...runs].sort((a, b) => a.rps - b.rps);
  return byRps[Math.floor((byRps.length - 1) / 2)];
}

/** Warms up, runs `repeats` timed runs and returns the median by throughput. */
export async function measure(spec: LoadSpec, plan: LoadPlan): Promise<LoadResult> {
  if (plan.warmupSec > 0) await once(spec, plan.warmupSec);
  const runs: RunStat[] = [];
  const statusCodes: Record<string, number> = {};
  for (let i = 0; i < plan.repeats; i++) runs.push(await once(spec, plan.durationSec, statusCodes));
  return { ...medianRun(runs), runs, statusCodes };
}
