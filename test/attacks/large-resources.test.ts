// Attacks with the largest resources the limits allow: one tenant writes, reads, searches, expands and deletes a
// big CodeSystem (several reads at once, too) while another tenant reads /auth/me, writes a small CodeSystem,
// expands a small value set and runs a bot: the 99th percentile of the server's time for the bystander's requests
// stays within twice its quiet figure, measured right before (bystanders.ts), the server's event loop is never
// held 500 ms (harness.ts).
// Before (issue 11 remainder): POST of 100,000 concepts held the event loop 4.7 s in one
// stretch (PGlite statements chained as microtasks, one transaction holding the embedded database's only
// connection), a GET 1.4-1.9 s (one SELECT of every row, the whole tree, one JSON.stringify).
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/server.js';
import { expectContained, underAttack, useAttackTarget } from './harness.js';
import {
  expectUndisturbed,
  makeBystander,
  p99,
  runBystander,
  type Bystander,
  type BystanderRun,
} from './bystanders.js';

/** Concepts of the big CodeSystem: the smallest size whose write and read stalled the old code past 500 ms. */
const N = 60_000;
const PER_PARENT = 100;
const URL = 'http://example.org/attack/big';

const target = useAttackTarget({}, { signIn: true });
let bystander: Bystander;
let bigId = '';

/** The big CodeSystem's JSON: N concepts, 100 children under each parent, displays tagged with `tag`. */
function bigCodeSystem(tag: string): string {
  const parents: string[] = [];
  for (let p = 0; p * PER_PARENT < N; p++) {
    const kids: string[] = [];
    for (let k = 1; k < PER_PARENT && p * PER_PARENT + k < N; k++)
      kids.push(`{"code":"C${p}-${k}","display":"Child ${k} of ${p} fracture ${tag}"}`);
    parents.push(`{"code":"P${p}","display":"Parent ${p} heart ${tag}","concept":[${kids.join(',')}]}`);
  }
  return `{"resourceType":"CodeSystem","url":"${URL}","status":"active","content":"complete","concept":[${parents.join(',')}]}`;
}

interface Concept {
  code: string;
  display?: string;
  concept?: Concept[];
}

/** Counts the concepts of a tree and checks every display carries `tag`. */
function countTagged(concepts: Concept[], tag: string): number {
  let n = 0;
  for (const c of concepts) {
    expect(c.display?.endsWith(tag), `${c.code}: ${c.display}`).toBe(true);
    n += 1 + countTagged(c.concept ?? [], tag);
  }
  return n;
}

const authorized = (extra: Record<string, string> = {}) => ({
  authorization: `Bearer ${target.token}`,
  ...extra,
});

let downloads = '';

/** GETs a path with curl, in another process: the 4 MB bodies are received there, not in this process, whose own
 * timers measure the server (/healthz, the bystander). The body is read from its file when asked for. */
async function download(
  path_: string,
  signal?: AbortSignal,
): Promise<{ status: number; retryAfter: string | null; text(): string }> {
  const file = path.join(downloads, crypto.randomUUID());
  const { stdout } = await promisify(execFile)(
    'curl',
    [
      '-s',
      '-o',
      file,
      '-D',
      `${file}.h`,
      '-w',
      '%{http_code}',
      '-H',
      `authorization: Bearer ${target.token}`,
      `${target.base}${path_}`,
    ],
    { signal },
  );
  const head = fs.readFileSync(`${file}.h`, 'utf8');
  return {
    status: Number(stdout),
    retryAfter: /^retry-after:\s*(\S+)/im.exec(head)?.[1] ?? null,
    text: () => fs.readFileSync(file, 'utf8'),
  };
}

beforeAll(async () => {
  downloads = fs.mkdtempSync(path.join(os.tmpdir(), 'large-resources-'));
  bystander = await makeBystander(target.base, target.token);
}, 120_000);

afterAll(async () => {
  if (downloads) fs.rmSync(downloads, { recursive: true, force: true });
});

/** The quiet run of the last attack. */
let lastQuiet: BystanderRun;

/** The bystander with nothing else going on, measured right before each attack: the machine's other work (the
 * other test files, PostgreSQL on the same two cores) changes through the run, and a baseline taken once in
 * beforeAll judged a later attack against a quieter machine (on PostgreSQL under load: quiet p99 27 ms then, 220 ms
 * for creates and deletes minutes later while the first $expand built its index). */
async function quietRun(): Promise<BystanderRun> {
  const quiet = await runBystander(target.base, bystander).stop();
  expect(quiet.failures).toEqual([]);
  return quiet;
}

/** Runs `send` under the harness's /healthz poller with the bystander at work; `check` sees the outcome first
 * (so what a later test needs is kept even when the judgement fails), then both are judged. */
async function attack(
  send: Parameters<typeof underAttack>[1],
  status: number | number[],
  opts: { maxMs?: number; check?: (o: Awaited<ReturnType<typeof underAttack>>) => void } = {},
) {
  const maxMs = opts.maxMs ?? 120_000;
  const quiet = (lastQuiet = await quietRun());
  const by = runBystander(target.base, bystander);
  const o = await underAttack(target, send, { limitMs: maxMs });
  const run = await by.stop();
  console.info(
    `[bystander] ${expect.getState().currentTestName}: p99 ${p99(run).toFixed(1)} ms (quiet ` +
      `${p99(quiet).toFixed(1)} ms), worst ${run.worstMs.toFixed(1)} ms (${run.worst}), ${run.requests} requests`,
  );
  opts.check?.(o);
  expectContained(o, { status, maxMs });
  expectUndisturbed(run, quiet);
  return o;
}

describe('a CodeSystem of 60,000 concepts', () => {
  it('POST: 201, and nobody else waits', async () => {
    const body = bigCodeSystem('v1');
    await attack(
      (signal) =>
        fetch(`${target.base}fhir/R4/CodeSystem`, {
          method: 'POST',
          signal,
          headers: authorized({ 'content-type': 'application/fhir+json' }),
          body,
        }),
      201,
      {
        // The body's start (the harness keeps 2 KB): the resource's elements come before its concepts.
        check: (o) => (bigId = /"id":"([0-9a-f-]{36})"/.exec(o.body)?.[1] ?? ''),
      },
    );
    expect(bigId).not.toBe('');
  }, 180_000);

  it('GET: the whole nested tree, streamed, and nobody else waits', async () => {
    // Bodies are checked after the attack: parsing 4 MB in the test process would slow its own measurements.
    let got: Awaited<ReturnType<typeof download>> | undefined;
    await attack(async (signal) => {
      got = await download(`fhir/R4/CodeSystem/${bigId}`, signal);
      return { status: got.status };
    }, 200);
    const text = got!.text();
    expect(text).toMatch(/^\{"resourceType":"CodeSystem"/);
    const cs = JSON.parse(text);
    expect(cs.meta.versionId).toBe('1');
    expect(cs.concept).toHaveLength(N / PER_PARENT);
    expect(cs.concept[0].concept).toHaveLength(PER_PARENT - 1);
    expect(countTagged(cs.concept, 'v1')).toBe(N);
  }, 180_000);

  it('three GETs at once by one project: two stream, the third is told to retry (429), nobody else waits', async () => {
    const outcomes: Array<Awaited<ReturnType<typeof download>>> = [];
    await attack(async (signal) => {
      await Promise.all(
        [0, 1, 2].map(async () => outcomes.push(await download(`fhir/R4/CodeSystem/${bigId}`, signal))),
      );
      return { status: 200 };
    }, 200);
    const statuses = outcomes.map((o) => o.status);
    const ok = outcomes.filter((o) => o.status === 200);
    const refused = outcomes.filter((o) => o.status === 429);
    expect(ok.length + refused.length, JSON.stringify(statuses)).toBe(3);
    for (const o of ok) expect(countTagged(JSON.parse(o.text()).concept, 'v1')).toBe(N);
    expect(refused.length, JSON.stringify(statuses)).toBeGreaterThanOrEqual(1);
    expect(refused[0].retryAfter).toBe('2');
    expect(JSON.parse(refused[0].text()).issue[0].details.text).toMatch(/LARGE_REQUESTS_PER_PROJECT=2/);
  }, 180_000);

  it('search by url returns it whole; _summary=true and _elements leave the concepts out', async () => {
    let got: Awaited<ReturnType<typeof download>> | undefined;
    await attack(async (signal) => {
      got = await download(`fhir/R4/CodeSystem?url=${URL}`, signal);
      return { status: got.status };
    }, 200);
    const bundle = JSON.parse(got!.text());
    expect(bundle.total).toBe(1);
    expect(countTagged(bundle.entry[0].resource.concept, 'v1')).toBe(N);
    for (const q of ['_summary=true', '_elements=url,version']) {
      const t0 = performance.now();
      const r = await call(target.base, 'GET', `fhir/R4/CodeSystem?url=${URL}&${q}`, { token: target.token });
      expect(r.status).toBe(200);
      const cs = r.body.entry[0].resource;
      expect(cs.concept).toBeUndefined();
      expect(cs.url).toBe(URL);
      expect(cs.status).toBe('active'); // mandatory elements stay
      expect(cs.meta.tag).toContainEqual({
        system: 'http://terminology.hl7.org/CodeSystem/v3-ObservationValue',
        code: 'SUBSETTED',
      });
      expect(performance.now() - t0).toBeLessThan(1000);
    }
    const read = await call(target.base, 'GET', `fhir/R4/CodeSystem/${bigId}?_elements=name`, {
      token: target.token,
    });
    expect(read.status).toBe(200);
    expect(read.body.concept).toBeUndefined();
    const count = await call(target.base, 'GET', `fhir/R4/CodeSystem?url=${URL}&_summary=count`, {
      token: target.token,
    });
    expect(count.body.total).toBe(1);
    expect(count.body.entry ?? []).toEqual([]);
  }, 180_000);

  it('the first filtered $expand (the index built from the rows) does not stall anyone', async () => {
    const o = await attack(
      (signal) =>
        fetch(`${target.base}fhir/R4/ValueSet/$expand`, {
          method: 'POST',
          signal,
          headers: authorized({ 'content-type': 'application/fhir+json' }),
          body: JSON.stringify({
            resourceType: 'Parameters',
            parameter: [
              {
                name: 'valueSet',
                resource: { resourceType: 'ValueSet', compose: { include: [{ system: URL }] } },
              },
              { name: 'filter', valueString: 'heart' },
              { name: 'count', valueInteger: 3 },
            ],
          }),
        }),
      200,
    );
    expect(JSON.parse(o.body).expansion.total).toBe(N / PER_PARENT);
  }, 180_000);

  it('GraphQL and bots get a 422 naming INLINE_MAX_CONCEPTS instead of the whole tree; without concepts, the rest', async () => {
    const r = await call(target.base, 'POST', 'graphql', {
      token: target.token,
      headers: { 'content-type': 'application/json' },
      body: { query: `{ readResource(resourceType: "CodeSystem", id: "${bigId}") }` },
    });
    expect(r.text).toMatch(/60000 concepts, more than the 20000 \(INLINE_MAX_CONCEPTS\)/);
    const slim = await call(target.base, 'POST', 'graphql', {
      token: target.token,
      headers: { 'content-type': 'application/json' },
      body: { query: `{ readResource(resourceType: "CodeSystem", id: "${bigId}", elements: "url") }` },
    });
    expect(slim.body.data.readResource.url).toBe(URL);
    expect(slim.body.data.readResource.concept).toBeUndefined();

    const bot = await call(target.base, 'POST', 'fhir/R4/Bot', {
      token: target.token,
      body: {
        resourceType: 'Bot',
        name: 'reader',
        code: `export async function handler(medplum, event) {
          try { const cs = await medplum.readResource('CodeSystem', event.input.id); return { n: cs.concept.length }; }
          catch (err) { return { error: String(err.message ?? err) }; }
        }`,
      },
    });
    const run = await call(target.base, 'POST', `fhir/R4/Bot/${bot.body.id}/$execute`, {
      token: target.token,
      body: { id: bigId },
      headers: { 'content-type': 'application/json' },
    });
    expect(run.status).toBe(200);
    expect(run.body.error).toMatch(/INLINE_MAX_CONCEPTS/);
  }, 60_000);

  it('clients that go away mid-stream free their large-request slots (the next two reads stream)', async () => {
    for (let i = 0; i < 2; i++) {
      const abort = new AbortController();
      const r = await fetch(`${target.base}fhir/R4/CodeSystem/${bigId}`, {
        signal: abort.signal,
        headers: authorized(),
      });
      expect(r.status).toBe(200);
      const reader = r.body!.getReader();
      await reader.read();
      abort.abort();
    }
    // The server notices the closed connections as it writes its next pieces.
    await new Promise((r) => setTimeout(r, 1000));
    const statuses = await Promise.all(
      [0, 1].map(async () => {
        const r = await fetch(`${target.base}fhir/R4/CodeSystem/${bigId}?_elements=url,concept`, {
          headers: authorized(),
        });
        await r.text();
        return r.status;
      }),
    );
    expect(statuses).toEqual([200, 200]);
    expect((await fetch(`${target.base}healthz`)).status).toBe(200);
  }, 60_000);

  it('PUT replaces it while a GET streams: the GET sees one whole version, later GETs the new one', async () => {
    const reading = download(`fhir/R4/CodeSystem/${bigId}`);
    await attack(
      (signal) =>
        fetch(`${target.base}fhir/R4/CodeSystem/${bigId}`, {
          method: 'PUT',
          signal,
          headers: authorized({ 'content-type': 'application/fhir+json' }),
          body: bigCodeSystem('v2').replace(
            '{"resourceType":"CodeSystem",',
            `{"resourceType":"CodeSystem","id":"${bigId}",`,
          ),
        }),
      200,
    );
    const read = await reading;
    expect(read.status).toBe(200);
    const cs = JSON.parse(read.text());
    expect(countTagged(cs.concept, `v${cs.meta.versionId}`)).toBe(N);
    const after = await call(target.base, 'GET', `fhir/R4/CodeSystem/${bigId}`, { token: target.token });
    expect(after.body.meta.versionId).toBe('2');
    expect(countTagged(after.body.concept, 'v2')).toBe(N);
  }, 180_000);

  it('DELETE: gone at once, its concepts removed in the background without stalling anyone', async () => {
    await attack(
      (signal) =>
        fetch(`${target.base}fhir/R4/CodeSystem/${bigId}`, {
          method: 'DELETE',
          signal,
          headers: authorized(),
        }),
      200,
      { maxMs: 5_000 },
    );
    expect(
      (await call(target.base, 'GET', `fhir/R4/CodeSystem/${bigId}`, { token: target.token })).status,
    ).toBe(404);
    const search = await call(target.base, 'GET', `fhir/R4/CodeSystem?url=${URL}`, { token: target.token });
    expect(search.body.total).toBe(0);
    // The background removal runs while the bystander works: judged by the bystander and by the server's loop.
    // Judged against the quiet run before the DELETE: one now would measure the removal itself.
    const quiet = lastQuiet;
    const since = Date.now();
    const by = runBystander(target.base, bystander);
    await new Promise((r) => setTimeout(r, 3000));
    expectUndisturbed(await by.stop(), quiet);
    const health = await call(target.base, 'GET', `healthz?since=${since}`);
    expect(health.body.eventLoop.recent.maxMs).toBeLessThan(500);
  }, 60_000);
});
