// Another tenant going about its business while an attack runs: /auth/me, a small CodeSystem created, read and
// deleted, a $expand of a small value set, a bot echo, one after another with a token it signed in for before.
// Each request is timed by the server itself (its `Server-Timing` header: from the request's first middleware to
// its headers), so what is judged is how long the server made the bystander wait, not how busy this machine's
// cores are; the stalls of the whole loop that this time cannot see are the harness's measure (the server's loop
// delay). The attack files assert none failed and the 99th percentile (of at least 200 requests) stayed within
// twice its quiet figure.
import { expect } from 'vitest';
import { call } from '../helpers/server.js';
import { createProject, type Account } from '../helpers/projects.js';

/** The other tenant: its account, a small value set and an echo bot. */
export interface Bystander {
  account: Account;
  valueSetUrl: string;
  botId: string;
}

/** Creates a project with its admin, a 20-concept CodeSystem with a ValueSet over it, and an echo bot. */
export async function makeBystander(base: string, serverAdminToken: string): Promise<Bystander> {
  const account = await createProject(base, serverAdminToken, 'Bystander project');
  const system = 'http://example.org/bystander/cs';
  const valueSetUrl = 'http://example.org/bystander/vs';
  const post = async (type: string, body: unknown) => {
    const r = await call(base, 'POST', `fhir/R4/${type}`, { token: account.token, body });
    if (r.status !== 201) throw new Error(`bystander ${type}: ${r.status} ${r.text}`);
    return r.body as { id: string };
  };
  await post('CodeSystem', {
    resourceType: 'CodeSystem',
    url: system,
    status: 'active',
    content: 'complete',
    concept: Array.from({ length: 20 }, (_, i) => ({ code: `b${i}`, display: `Bystander heart ${i}` })),
  });
  await post('ValueSet', {
    resourceType: 'ValueSet',
    url: valueSetUrl,
    status: 'active',
    compose: { include: [{ system }] },
  });
  const bot = await post('Bot', {
    resourceType: 'Bot',
    name: 'echo',
    code: 'export async function handler(medplum, event) { return event.input; }',
  });
  return { account, valueSetUrl, botId: bot.id };
}

/** What the bystander saw while it ran. */
export interface BystanderRun {
  /** Server-side milliseconds of each request, in order. */
  samples: number[];
  /** Slowest request (server ms) and which it was. */
  worstMs: number;
  worst: string;
  requests: number;
  /** Slowest request of each kind (server ms). */
  byKind: Record<string, number>;
  /** Requests that did not answer as expected. */
  failures: string[];
}

/** The server's own time for an answer (`Server-Timing: app;dur=<ms>`), or NaN when absent. */
function serverMs(headers: Headers): number {
  const m = /(?:^|,)\s*app;dur=([\d.]+)/.exec(headers.get('server-timing') ?? '');
  return m ? Number(m[1]) : NaN;
}

/** Requests a run is judged on at least: its 99th percentile is then below its worst sample. */
const MIN_SAMPLES = 200;
/** How long `stop()` keeps the bystander going for MIN_SAMPLES at most (about 6 s of requests when quiet). */
const MIN_SAMPLES_WAIT_MS = 20_000;

/** Runs the bystander's requests one after another until `stop()`, which lets it reach MIN_SAMPLES requests
 * first (an attack's aftermath, such as a background removal, is then measured too); resolves with what it saw. */
export function runBystander(base: string, b: Bystander): { stop(): Promise<BystanderRun> } {
  let running = true;
  const run: BystanderRun = { samples: [], worstMs: 0, worst: '', requests: 0, byKind: {}, failures: [] };
  const token = b.account.token;
  const timed = async (
    what: string,
    fn: () => Promise<{ status: number; headers: Headers; ok: boolean }>,
  ): Promise<void> => {
    try {
      const r = await fn();
      const ms = serverMs(r.headers);
      if (!r.ok || Number.isNaN(ms)) {
        if (run.failures.length < 20) run.failures.push(`${what}: unexpected answer ${r.status}`);
        return;
      }
      run.requests++;
      run.samples.push(ms);
      run.byKind[what] = Math.max(run.byKind[what] ?? 0, Math.round(ms));
      if (ms > run.worstMs) {
        run.worstMs = ms;
        run.worst = what;
      }
    } catch (err) {
      if (run.failures.length < 20) run.failures.push(`${what}: ${String(err)}`);
    }
  };
  const loop = (async () => {
    let i = 0;
    while (running) {
      i++;
      await timed('/auth/me', async () => {
        const r = await call(base, 'GET', 'auth/me', { token });
        return { ...r, ok: r.status === 200 };
      });
      let id = '';
      await timed('create CodeSystem', async () => {
        const r = await call(base, 'POST', 'fhir/R4/CodeSystem', {
          token,
          body: {
            resourceType: 'CodeSystem',
            url: `http://example.org/bystander/small-${i}`,
            status: 'active',
            content: 'complete',
            concept: [{ code: 'a', display: 'A' }],
          },
        });
        id = r.body?.id;
        return { ...r, ok: r.status === 201 };
      });
      await timed('read CodeSystem', async () => {
        const r = await call(base, 'GET', `fhir/R4/CodeSystem/${id}`, { token });
        return { ...r, ok: r.status === 200 && r.body.concept?.[0]?.code === 'a' };
      });
      await timed('delete CodeSystem', async () => {
        const r = await call(base, 'DELETE', `fhir/R4/CodeSystem/${id}`, { token });
        return { ...r, ok: r.status === 200 };
      });
      await timed('$expand', async () => {
        const r = await call(
          base,
          'GET',
          `fhir/R4/ValueSet/$expand?url=${encodeURIComponent(b.valueSetUrl)}&filter=heart&count=5`,
          { token },
        );
        return { ...r, ok: r.status === 200 && r.body.expansion?.total === 20 };
      });
      await timed('bot echo', async () => {
        const r = await call(base, 'POST', `fhir/R4/Bot/${b.botId}/$execute`, {
          token,
          body: { hello: i },
          headers: { 'content-type': 'application/json' },
        });
        return { ...r, ok: r.status === 200 && r.body?.hello === i };
      });
    }
  })();
  return {
    async stop() {
      // A percentile of fewer samples is the single worst request: a short attack (a DELETE answered in 25 ms)
      // gave 78, and one read waiting 185 ms for a database turn on a loaded machine judged the whole run.
      const deadline = Date.now() + MIN_SAMPLES_WAIT_MS;
      while (run.requests + run.failures.length < MIN_SAMPLES && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      running = false;
      await loop;
      return run;
    },
  };
}

/** The 99th percentile of a run's server-side times (ms). */
export function p99(run: BystanderRun): number {
  const sorted = [...run.samples].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] : 0;
}

/** See expectUndisturbed. */
const QUIET_FLOOR_MS = 150;

/** The bystander's measure: every request answered as expected, and the 99th percentile of the server's time for
 * its requests within twice its quiet figure (`quiet`, measured before the attacks), or within QUIET_FLOOR_MS of it
 * when that is more. A bystander's write is about ten statements, and between two of them it may wait one turn of
 * the admitted large work (up to 8 ms of JavaScript and one statement of its batch), while the database (on
 * PostgreSQL a server on the same two cores) works for both: tens of milliseconds that twice a quiet figure of 13 ms
 * cannot hold. Measured with 60,000-concept writes and reads: embedded, quiet p99 39 ms, under attack 44-80 ms;
 * PostgreSQL, quiet 13 ms, under attack 62-131 ms (its creates and deletes the slowest). The stalls this guards
 * against were seconds. */
export function expectUndisturbed(run: BystanderRun, quiet: BystanderRun): void {
  const limit = Math.max(2 * p99(quiet), p99(quiet) + QUIET_FLOOR_MS);
  const { samples: _s, ...shown } = run;
  const detail = JSON.stringify({ ...shown, p99: p99(run), quietP99: p99(quiet) });
  expect(run.failures, `bystander failures: ${detail}`).toEqual([]);
  expect(run.requests, `bystander requests: ${detail}`).toBeGreaterThan(0);
  expect(p99(run), `bystander p99 (server ms) against ${limit.toFixed(1)}: ${detail}`).toBeLessThanOrEqual(
    limit,
  );
}
