// Prefer: respond-async: 202 + Content-Location of a job, polling it, and a job surviving the restart of the
// instance that accepted it (the job runner of that instance is disabled; a second instance on the same database
// runs it).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../src/config.js';
import {
  call,
  dropSchema,
  newSchemaName,
  onPostgres,
  signIn,
  startTestServer,
  type TestServer,
} from './helpers/server.js';
import { createBot, createOtherProject } from './bots-helpers.js';

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
  let server: TestServer;
  let token: string;
  beforeAll(async () => {
    server = await startTestServer();
    token = (await signIn(server.base)).access_token;
  });
  afterAll(async () => {
    await server?.close();
    await dropSchema(server?.schema);
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

describe('restart survival', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bots-async-'));
  const schema = onPostgres ? newSchemaName() : undefined;
  const start = (extra: Partial<Config>) =>
    startTestServer({
      schema,
      dataDir: tmp,
      // Same issuer on both instances (tokens name it), though their ports differ.
      config: { baseUrl: 'http://bots-restart.test/', ...extra },
    });

  afterAll(async () => {
    await dropSchema(schema);
    fs.rmSync(tmp, { recursive: true, force: true });
  });

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
    try {
      const done = await poll(b.url, loc, token);
      expect(done.status).toBe(200);
      expect(done.text).toBe('ran later');
    } finally {
      await b.close();
    }
  }, 60_000);
});
