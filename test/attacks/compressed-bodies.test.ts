// Attacks: compressed request bodies and bot input sent before the caller's budget admits it. Before: 122 KB of gzip
// to a bot's $execute inflated to 48 MB of JSON (BODY_LIMIT, 50 MB, applied to bot input), which the server read,
// parsed and stringified on the event loop: /healthz stalled 5 s and RSS grew by 280 MB per request, and a project
// already running its share of bot executions paid all of it before its 429.
import fs from 'node:fs';
import http from 'node:http';
import zlib from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, CLIENT_ID, signIn } from '../helpers/server.js';
import { expectContained, underAttack, useAttackTarget } from './harness.js';

const ITEM = '{"a":1,"b":[1,2]}';

/** gzip of a JSON array of `mb` MB of ITEM: about 1 KB on the wire per MB. */
function jsonBomb(mb: number): Uint8Array<ArrayBuffer> {
  return gzip(`[${`${ITEM},`.repeat((mb * 1024 * 1024) / (ITEM.length + 1))}${ITEM}]`, { level: 9 });
}

/** gzip of `text`, as fetch takes a body. */
function gzip(text: string, opts: zlib.ZlibOptions = {}): Uint8Array<ArrayBuffer> {
  return new Uint8Array(zlib.gzipSync(text, opts));
}

/** The resident set of a process, current and peak (MB), from /proc (Linux); undefined elsewhere. */
function memoryOf(pid: number | undefined): { rss: number; peak: number } | undefined {
  if (pid === undefined || !fs.existsSync(`/proc/${pid}/status`)) return undefined;
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

/** Sends a request whose body starts with `first` and is never finished; resolves with the answer (status and
 * body) as soon as it comes, or rejects when `signal` aborts. */
function unfinished(
  url: string,
  headers: Record<string, string>,
  first: string,
  signal: AbortSignal,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers, signal });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body });
        req.destroy();
      });
    });
    req.on('error', reject);
    req.write(first);
  });
}

describe('compression bombs', () => {
  const target = useAttackTarget({}, { signIn: true });
  let botId: string;
  // Built before the attacks: compressing 60 MB while one runs would stall this process's own /healthz polls.
  const bomb = jsonBomb(48);
  const bigBomb = jsonBomb(60);
  const loginBomb = gzip(JSON.stringify({ email: 'a@example.com', password: 'p'.repeat(20 * 1024 * 1024) }));
  const formBomb = gzip(
    `grant_type=client_credentials&client_id=${CLIENT_ID}&x=${'a'.repeat(20 * 1024 * 1024)}`,
  );

  beforeAll(async () => {
    const r = await call(target.base, 'POST', 'fhir/R4/Bot', {
      token: target.token,
      body: {
        resourceType: 'Bot',
        name: 'bomb',
        memoryLimit: 1024,
        timeout: 20,
        code: 'export async function handler(medplum, event) { return String(event.input.length); }',
      },
    });
    botId = r.body.id as string;
  });

  for (const type of ['application/json', 'text/plain']) {
    it(`a 48 MB gzip bomb to $execute as ${type}: 413 naming BOT_INPUT_LIMIT, no stall, no memory jump`, async () => {
      expect(bomb.length).toBeLessThan(128 * 1024);
      // What an ordinary compressed input costs the server's memory under the same measure (a server that has just
      // started still grows as it serves: V8's heap and lazily loaded code), then what the bomb costs beyond that.
      const send = (body: Uint8Array<ArrayBuffer>) => (signal: AbortSignal) =>
        fetch(`${target.base}fhir/R4/Bot/${botId}/$execute`, {
          method: 'POST',
          signal,
          headers: {
            'content-type': type,
            'content-encoding': 'gzip',
            authorization: `Bearer ${target.token}`,
          },
          body,
        });
      const start = memoryOf(target.child.pid);
      const small = await underAttack(target, send(gzip(type === 'text/plain' ? 'hello' : '[{"a":1}]')));
      expect(small.status).toBe(200);
      const before = memoryOf(target.child.pid);
      const o = await underAttack(target, send(bomb));
      const after = memoryOf(target.child.pid);
      expectContained(o, { status: 413, maxMs: 2_000 });
      expect(JSON.parse(o.body).issue[0]).toMatchObject({
        code: 'too-costly',
        details: { text: 'Bot input may be at most 1048576 bytes (BOT_INPUT_LIMIT)' },
      });
      if (start && before && after) {
        // The body is cut at 1 MiB, inflated with its output bounded: the process's peak grows by less than the
        // 48 MB the body inflates to (before: it was held whole, with hundreds of MB of parsed objects) beyond
        // what the small input cost it.
        const detail = JSON.stringify({ start, before, after });
        expect(after.peak - before.peak, detail).toBeLessThan(48 + Math.max(0, before.peak - start.peak));
      }
    });
  }

  it('a 60 MB gzip bomb to a FHIR write is cut at BODY_LIMIT with a 413 naming it', async () => {
    const o = await underAttack(target, (signal) =>
      fetch(`${target.base}fhir/R4/Basic`, {
        method: 'POST',
        signal,
        headers: {
          'content-type': 'application/fhir+json',
          'content-encoding': 'gzip',
          authorization: `Bearer ${target.token}`,
        },
        body: bigBomb,
      }),
    );
    expectContained(o, { status: 413 });
    expect(JSON.parse(o.body).issue[0].code).toBe('too-costly');
    expect(o.body).toMatch(/52428800 bytes \(BODY_LIMIT\)/);
  });

  it('a compressed FHIR write waits for the large-request budget: 429 at once while its project holds its share', async () => {
    const url = `${target.base}fhir/R4/CodeSystem`;
    const headers = { 'content-type': 'application/fhir+json', authorization: `Bearer ${target.token}` };
    // Two writes declared large and never finished hold the project's two places (LARGE_REQUESTS_PER_PROJECT).
    const hold = new AbortController();
    const held = [0, 1].map(() =>
      unfinished(
        url,
        { ...headers, 'content-length': String(2 * 1024 * 1024) },
        '{"resourceType":',
        hold.signal,
      ).catch(() => undefined),
    );
    await new Promise((r) => setTimeout(r, 500));
    const small = gzip(JSON.stringify({ resourceType: 'CodeSystem', status: 'active', content: 'complete' }));
    const o = await underAttack(target, (signal) =>
      fetch(url, {
        method: 'POST',
        signal,
        headers: { ...headers, 'content-encoding': 'gzip' },
        body: small,
      }),
    );
    hold.abort();
    await Promise.all(held);
    expectContained(o, { status: 429, maxMs: 1_000 });
    expect(o.body).toMatch(/LARGE_REQUESTS_PER_PROJECT/);
    // The places are given back when the held requests go away: the same write is then stored.
    await new Promise((r) => setTimeout(r, 200));
    const after = await fetch(url, {
      method: 'POST',
      headers: { ...headers, 'content-encoding': 'gzip' },
      body: small,
    });
    expect(after.status, await after.clone().text()).toBe(201);
  });

  it('a gzip bomb to the sign-in endpoints is cut at their 64 kB limits (OperationOutcome / OAuth2 error)', async () => {
    const login = await underAttack(target, (signal) =>
      fetch(`${target.base}auth/login`, {
        method: 'POST',
        signal,
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
        body: loginBomb,
      }),
    );
    expectContained(login, { status: 413 });
    expect(login.body).toMatch(/65536 bytes \(AUTH_BODY_LIMIT\)/);

    const token = await underAttack(target, (signal) =>
      fetch(`${target.base}oauth2/token`, {
        method: 'POST',
        signal,
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-encoding': 'gzip' },
        body: formBomb,
      }),
    );
    expectContained(token, { status: 413 });
    expect(JSON.parse(token.body)).toMatchObject({ error: 'invalid_request' });
    expect(token.body).toMatch(/65536 bytes/);
    // Sign-in still works.
    expect((await signIn(target.base)).access_token).toBeTruthy();
  });

  it('an unknown Content-Encoding is a 415 naming it, on FHIR writes and bot input alike', async () => {
    for (const path of ['fhir/R4/Basic', `fhir/R4/Bot/${botId}/$execute`]) {
      const r = await call(target.base, 'POST', path, {
        token: target.token,
        raw: '{"resourceType":"Basic"}',
        headers: { 'content-type': 'application/json', 'content-encoding': 'x-squash' },
      });
      expect(r.status, `${path}: ${r.text}`).toBe(415);
      expect(r.body.resourceType).toBe('OperationOutcome');
      expect(r.body.issue[0]).toMatchObject({
        code: 'not-supported',
        details: { text: 'Unsupported Content-Encoding "x-squash"; use gzip, deflate, br or identity' },
      });
    }
  });
});

describe('bot input waits for the budget', () => {
  // One execution at a time per project, and one queued job.
  const target = useAttackTarget(
    { BOT_PROJECT_MAX_CONCURRENT: '1', BOT_JOB_RUNNER: 'false', BOT_JOBS_QUEUED_PER_PROJECT: '1' },
    { signIn: true },
  );
  let sleeper: string;
  let echo: string;

  const createBot = async (code: string): Promise<string> => {
    const r = await call(target.base, 'POST', 'fhir/R4/Bot', {
      token: target.token,
      body: { resourceType: 'Bot', name: 'budget', timeout: 20, code },
    });
    if (r.status !== 201) throw new Error(`create bot failed: ${r.status} ${r.text}`);
    return r.body.id as string;
  };
  const run = (id: string, body = '{}', headers: Record<string, string> = {}) =>
    call(target.base, 'POST', `fhir/R4/Bot/${id}/$execute`, {
      token: target.token,
      raw: body,
      headers: { 'content-type': 'application/json', ...headers },
    });

  beforeAll(async () => {
    sleeper = await createBot(
      'export async function handler() { await new Promise((r) => setTimeout(r, 8000)); return "slept"; }',
    );
    echo = await createBot('export async function handler(medplum, event) { return event.input; }');
  });

  it('a project running its share gets 429 at once for a body it never finishes sending', async () => {
    const busy = run(sleeper);
    // Its place is taken as soon as its request arrives (before: once its isolate runs, well within a second).
    await new Promise((r) => setTimeout(r, 1_000));

    const url = `${target.base}fhir/R4/Bot/${echo}/$execute`;
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${target.token}` };
    // A declared length under the limit, and a chunked body: neither is ever finished.
    const declared: Record<string, string>[] = [{ 'content-length': String(512 * 1024) }, {}];
    for (const extra of declared) {
      const o = await underAttack(target, (signal) =>
        unfinished(url, { ...headers, ...extra }, '[{"a":1},', signal),
      );
      expectContained(o, { status: 429, maxMs: 1_000 });
      expect(JSON.parse(o.body).issue[0]).toMatchObject({ code: 'throttled' });
      expect(o.body).toMatch(/BOT_PROJECT_MAX_CONCURRENT/);
    }
    expect((await busy).text).toBe('slept');
    // Every place is given back: refused, cut and finished requests alike.
    const after = await run(echo, '{"ok":true}');
    expect(after.status, after.text).toBe(200);
    expect(after.body).toEqual({ ok: true });
  });

  it('a project with its share of jobs queued gets 429 at once for a respond-async body it never finishes', async () => {
    const queued = await run(echo, '{}', { prefer: 'respond-async' });
    expect(queued.status, queued.text).toBe(202);
    const o = await underAttack(target, (signal) =>
      unfinished(
        `${target.base}fhir/R4/Bot/${echo}/$execute`,
        {
          'content-type': 'application/json',
          authorization: `Bearer ${target.token}`,
          prefer: 'respond-async',
        },
        '[{"a":1},',
        signal,
      ),
    );
    expectContained(o, { status: 429, maxMs: 1_000 });
    expect(o.body).toMatch(/BOT_JOBS_QUEUED_PER_PROJECT/);
  });
});
