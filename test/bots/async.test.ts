// Prefer: respond-async: 202 + Content-Location of a job, polling it, and a job surviving the restart of the
// instance that accepted it (the job runner of that instance is disabled; a second instance on the same database
// runs it).
import { beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config.js';
import { useTestDatabase } from '../helpers/database.js';
import { call, onPostgres, signIn, useTestServer } from '../helpers/server.js';
import { createBot, createOtherProject } from './helpers.js';
import { addUser } from '../helpers/projects.js';

async function poll(base: string, url: string, token: string, maxMs = 15_000) {
  const path = url.slice(url.indexOf('fhir/R4/'));
  const until = Date.now() + maxMs;
  for (;;) {
    const r = await call(base, 'GET', path, { token });
    if (r.status !== 202 || Date.now() > until) return r;
    await new Promise((res) => setTimeout(res, 100));
  }
}

describe('respond-async', () => {
  const server = useTestServer({ signIn: true });
  let token: string;
  beforeAll(async () => {
    token = server.token;
  });

  it('answers 202 with Content-Location; the job reports 202 while running, then the bot response', async () => {
    const id = await createBot(
      server,
      token,
      `export async function handler(m, event) { await new Promise((r) => setTimeout(r, 700)); return { got: event.input }; }`,
    );
    const r = await call(server.base, 'POST', `fhir/R4/Bot/${id}/$execute`, {
      token,
      raw: '{"x":1}',
      headers: { 'content-type': 'application/json', prefer: 'respond-async' },
    });
    expect(r.status).toBe(202);
    const loc = r.headers.get('content-location') ?? '';
    expect(loc).toMatch(/fhir\/R4\/job\/[0-9a-f-]{36}$/);
    const running = await call(server.base, 'GET', loc.slice(loc.indexOf('fhir/R4/')), { token });
    expect(running.status).toBe(202);
    expect(['queued', 'running']).toContain(running.headers.get('x-progress'));
    const done = await poll(server.base, loc, token);
    expect(done.status).toBe(200);
    expect(done.headers.get('content-type')).toMatch(/^application\/json/);
    expect(done.body).toEqual({ got: { x: 1 } });
  });

  it('reports a failing bot with its error status, and refuses bad input and other projects right away', async () => {
    const id = await createBot(
      server,
      token,
      `export async function handler() { throw new Error('async boom'); }`,
    );
    const r = await call(server.base, 'POST', `fhir/R4/Bot/${id}/$execute`, {
      token,
      raw: '{}',
      headers: { 'content-type': 'application/json', prefer: 'respond-async' },
    });
    const done = await poll(server.base, r.headers.get('content-location') ?? '', token);
    expect(done.status).toBe(400);
    expect(done.body.issue[0].details.text).toContain('async boom');

    const bad = await call(server.base, 'POST', `fhir/R4/Bot/${id}/$execute`, {
      token,
      raw: '[oops',
      headers: { 'content-type': 'application/json', prefer: 'respond-async' },
    });
    expect(bad.status).toBe(400);

    const other = await createOtherProject(server);
    const theirs = await call(
      server.base,
      'GET',
      (r.headers.get('content-location') ?? '').replace(/^.*fhir/, 'fhir'),
      {
        token: other,
      },
    );
    expect(theirs.status).toBe(404);
    const unknown = await call(server.base, 'GET', 'fhir/R4/job/00000000-0000-0000-0000-000000000000', {
      token,
    });
    expect(unknown.status).toBe(404);
  });

  it('requeues a job whose claim went stale (its instance died mid-run) and runs it', async () => {
    const id = await createBot(server, token, "export async function handler() { return 'rescued'; }", {
      timeout: 1,
    });
    const r = await call(server.base, 'POST', `fhir/R4/Bot/${id}/$execute`, {
      token,
      raw: '',
      headers: { 'content-type': 'text/plain', prefer: 'respond-async' },
    });
    const loc = r.headers.get('content-location') ?? '';
    const jobId = loc.split('/').pop() as string;
    await poll(server.base, loc, token);
    // Pretend another instance claimed it an hour ago and died.
    await server.services.db.prisma.botJob.update({
      where: { id: jobId },
      data: {
        status: 'running',
        claimedBy: 'dead-instance',
        claimedAt: new Date(Date.now() - 3600_000),
        responseStatus: null,
        responseBody: null,
      },
    });
    const pending = await call(server.base, 'GET', loc.slice(loc.indexOf('fhir/R4/')), { token });
    expect(pending.status).toBe(202);
    expect(pending.headers.get('x-progress')).toBe('running');
    const done = await poll(server.base, loc, token, 20_000);
    expect(done.status).toBe(200);
    expect(done.text).toBe('rescued');
  }, 30_000);
});

describe('jobs: fair share, sessions, attempts', () => {
  const server = useTestServer({ signIn: true });
  let token: string;
  beforeAll(async () => {
    token = server.token;
  });

  const enqueue = async (tok: string, id: string, body = '') => {
    const r = await call(server.base, 'POST', `fhir/R4/Bot/${id}/$execute`, {
      token: tok,
      raw: body,
      headers: { 'content-type': 'text/plain', prefer: 'respond-async' },
    });
    expect(r.status).toBe(202);
    return r.headers.get('content-location') ?? '';
  };
  const slow = (ms: number) =>
    `export async function handler() { await new Promise((r) => setTimeout(r, ${ms})); return 'slow'; }`;

  it("one project's queue of slow jobs does not delay another project's job", async () => {
    const other = await createOtherProject(server);
    const slowId = await createBot(server, other, slow(2500));
    const quick = await createBot(server, token, "export async function handler() { return 'quick'; }");
    const theirs = [];
    for (let i = 0; i < 8; i++) theirs.push(await enqueue(other, slowId));
    const mine = await poll(server.base, await enqueue(token, quick), token);
    expect(mine.status).toBe(200);
    expect(mine.text).toBe('quick');
    // Their 8 jobs of 2.5 s run 2 at a time (10 s in all): mine did not wait behind their queue, so most of theirs
    // are still pending when it is done (a queue served in order would have finished them all first).
    const pending = (
      await Promise.all(
        theirs.map((loc) => call(server.base, 'GET', loc.slice(loc.indexOf('fhir/R4/')), { token: other })),
      )
    ).filter((r) => r.status === 202).length;
    expect(pending).toBeGreaterThanOrEqual(4);
    for (const loc of theirs) expect((await poll(server.base, loc, other, 30_000)).text).toBe('slow');
  }, 60_000);

  it('a job whose session was revoked before it started does not run', async () => {
    const member = await addUser(server.base, token);
    const family = `Revoked${Date.now()}`;
    const writer = await createBot(
      server,
      token,
      `export async function handler(medplum) {
         await medplum.createResource({ resourceType: 'Patient', name: [{ family: '${family}' }] });
         return 'wrote';
       }`,
    );
    // The project's job slots are busy, so the member's job waits in the queue...
    const slowId = await createBot(server, token, slow(2000));
    const busy = [await enqueue(token, slowId), await enqueue(token, slowId)];
    await new Promise((r) => setTimeout(r, 300));
    const loc = await enqueue(member.token, writer);
    // ... and the member signs out before it starts.
    const out = await call(server.base, 'POST', 'oauth2/logout', { token: member.token, body: {} });
    expect(out.status).toBeLessThan(300);
    for (const b of busy) await poll(server.base, b, token);
    const job = await poll(server.base, loc, token);
    expect(job.status).toBe(401);
    expect(job.text).toMatch(/session .* has ended/);
    const found = await call(server.base, 'GET', `fhir/R4/Patient?name=${family}`, { token });
    expect(found.body.total ?? found.body.entry?.length ?? 0).toBe(0);
  }, 30_000);
});

describe('queued jobs per project', () => {
  // No runner on this instance: every job stays queued, so the count is exact.
  const server = useTestServer({ signIn: true, config: { botJobRunner: false, botJobsQueuedPerProject: 3 } });

  it('a project with BOT_JOBS_QUEUED_PER_PROJECT jobs queued gets 429 with Retry-After; another project does not', async () => {
    const token = server.token;
    const id = await createBot(server, token, "export async function handler() { return 'ok'; }");
    const send = (tok: string, bot: string) =>
      call(server.base, 'POST', `fhir/R4/Bot/${bot}/$execute`, {
        token: tok,
        raw: 'x',
        headers: { 'content-type': 'text/plain', prefer: 'respond-async' },
      });
    for (let i = 0; i < 3; i++) expect((await send(token, id)).status).toBe(202);
    const over = await send(token, id);
    expect(over.status).toBe(429);
    expect(over.headers.get('retry-after')).toBe('5');
    expect(over.body.issue[0].code).toBe('throttled');
    expect(over.body.issue[0].details.text).toMatch(/BOT_JOBS_QUEUED_PER_PROJECT=3/);
    const other = await createOtherProject(server);
    const theirs = await createBot(server, other, "export async function handler() { return 'ok'; }");
    expect((await send(other, theirs)).status).toBe(202);
  });
});

describe('orphaned jobs', () => {
  const db = useTestDatabase({ onDisk: true });
  const start = () => db.start({ config: { baseUrl: 'http://bots-orphan.test/' } });

  it('a job left running by a dead instance is re-run promptly, and the bot sees attempt 2', async () => {
    const a = await start();
    const token = (await signIn(a.url)).access_token;
    const id = await createBot(
      { ...a, base: a.url },
      token,
      'export async function handler(m, e) { return `attempt ${e.attempt}`; }',
      { timeout: 60 },
    );
    const r = await call(a.url, 'POST', `fhir/R4/Bot/${id}/$execute`, {
      token,
      raw: '',
      headers: { 'content-type': 'text/plain', prefer: 'respond-async' },
    });
    const loc = r.headers.get('content-location') ?? '';
    expect((await poll(a.url, loc, token)).text).toBe('attempt 1');
    // An instance claimed it a moment ago, started it (attempt 1) and died.
    const jobId = loc.split('/').pop() as string;
    await a.services.db.prisma.botJob.update({
      where: { id: jobId },
      data: { status: 'running', claimedBy: 'dead-instance', claimedAt: new Date(), responseStatus: null },
    });
    await a.close();
    const b = await start();
    const started = Date.now();
    // Embedded database: at once (every running job at start is an orphan); PostgreSQL: after 3 missed
    // heartbeats (15 s). Before: the bot's timeout plus 30 s (90 s here).
    const done = await poll(b.url, loc, token, 25_000);
    expect(done.text).toBe('attempt 2');
    expect(Date.now() - started).toBeLessThan(onPostgres ? 25_000 : 3_000);
  }, 60_000);
});

describe('restart survival', () => {
  const db = useTestDatabase({ onDisk: true });
  // Same issuer on both instances (tokens name it), though their ports differ.
  const start = (extra: Partial<Config>) =>
    db.start({ config: { baseUrl: 'http://bots-restart.test/', ...extra } });

  it('a job accepted by an instance that stops before running it completes on the next instance', async () => {
    const a = await start({ botJobRunner: false });
    const token = (await signIn(a.url)).access_token;
    const id = await createBot(
      { ...a, base: a.url },
      token,
      `export async function handler(m, e) { return 'ran ' + e.input; }`,
    );
    const r = await call(a.url, 'POST', `fhir/R4/Bot/${id}/$execute`, {
      token,
      raw: 'later',
      headers: { 'content-type': 'text/plain', prefer: 'respond-async' },
    });
    expect(r.status).toBe(202);
    const loc = r.headers.get('content-location') ?? '';
    await new Promise((res) => setTimeout(res, 300));
    const queued = await call(a.url, 'GET', loc.slice(loc.indexOf('fhir/R4/')), { token });
    expect(queued.status).toBe(202);
    expect(queued.headers.get('x-progress')).toBe('queued');
    await a.close();

    const b = await start({});
    const done = await poll(b.url, loc, token);
    expect(done.status).toBe(200);
    expect(done.text).toBe('ran later');
  }, 60_000);
});
