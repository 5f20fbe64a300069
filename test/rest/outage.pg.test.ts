// A PostgreSQL outage, seen from outside: the server reaches PostgreSQL through a TCP proxy run by this test,
// which the test closes (every connection dropped, new ones refused) and reopens. During the outage every request
// that needs the database is a 503 with Retry-After (OperationOutcome `transient`, OAuth2 `temporarily_unavailable`,
// a GraphQL error with code `transient`), /healthz/ready is 503 and /healthz/live 200; after it the same requests
// succeed again without a restart. Before, they were 500 "Internal server error" and /healthz said "ok".
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CLIENT_ID,
  CLIENT_SECRET,
  call,
  signIn,
  startTestServer,
  type TestServer,
} from '../helpers/server.js';

const TARGET = new URL(process.env.TEST_DATABASE_URL!);

/** A TCP proxy to the test PostgreSQL that can be cut (connections dropped, new ones refused) and restored. */
class CuttableProxy {
  private server!: net.Server;
  private sockets = new Set<net.Socket>();
  port = 0;

  async open(port = 0): Promise<void> {
    this.server = net.createServer((client) => this.connect(client));
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => resolve());
    });
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  /** Refuses new connections and drops the open ones (as a stopped PostgreSQL, seen from the server). */
  async cut(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    await closed;
  }

  private connect(client: net.Socket): void {
    const upstream = net.connect(Number(TARGET.port || 5432), TARGET.hostname);
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => {
        this.sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  }

  url(): string {
    const u = new URL(TARGET.href);
    u.hostname = '127.0.0.1';
    u.port = String(this.port);
    return u.href;
  }
}

const proxy = new CuttableProxy();
let s: TestServer;
let token: string;

beforeAll(async () => {
  await proxy.open();
  s = await startTestServer({ config: { databaseUrl: proxy.url() } });
  token = (await signIn(s.base)).access_token;
});

afterAll(async () => {
  await s?.close();
  await proxy.cut().catch(() => undefined);
});

/** What the test asks during and after the outage. */
const requests = {
  fhir: () => call(s.base, 'GET', 'fhir/R4/CodeSystem?_count=1', { token }),
  oauth: () =>
    call(s.base, 'POST', 'oauth2/token', {
      raw: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
      }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    }),
  graphql: () =>
    call(s.base, 'POST', 'graphql', {
      raw: JSON.stringify({
        query:
          'mutation { login(email: "nobody@example.com", password: "x", codeChallenge: "' +
          'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", codeChallengeMethod: "S256") { login } }',
      }),
      headers: { 'content-type': 'application/json' },
    }),
};

async function until(cond: () => Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('PostgreSQL unreachable', () => {
  it('is ready while the database answers', async () => {
    const ready = await call(s.base, 'GET', 'healthz/ready');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ok' });
    expect((await call(s.base, 'GET', 'healthz')).body).toMatchObject({ status: 'ok', ready: true });
    expect((await requests.fhir()).status).toBe(200);
  });

  it('answers 503 with Retry-After on REST, OAuth2 and GraphQL; readiness fails, liveness holds', async () => {
    await proxy.cut();

    const fhir = await requests.fhir();
    expect(fhir.status).toBe(503);
    expect(fhir.headers.get('retry-after')).toBe('5');
    expect(fhir.body).toMatchObject({
      resourceType: 'OperationOutcome',
      issue: [
        {
          severity: 'error',
          code: 'transient',
          details: { text: 'The database is unreachable; retry later' },
        },
      ],
    });

    const oauth = await requests.oauth();
    expect(oauth.status).toBe(503);
    expect(oauth.headers.get('retry-after')).toBe('5');
    expect(oauth.body).toEqual({
      error: 'temporarily_unavailable',
      error_description: 'The database is unreachable; retry later',
    });

    const gql = await requests.graphql();
    expect(gql.status).toBe(503);
    expect(gql.headers.get('retry-after')).toBe('5');
    expect(gql.body.errors[0]).toMatchObject({
      message: 'The database is unreachable; retry later',
      extensions: { code: 'transient' },
    });

    // Readiness probes the database (a cached SELECT 1): 503 within the cache time.
    await until(async () => (await call(s.base, 'GET', 'healthz/ready')).status === 503, 5_000);
    const ready = await call(s.base, 'GET', 'healthz/ready');
    expect(ready.status).toBe(503);
    expect(ready.headers.get('retry-after')).toBe('5');
    expect(ready.body).toEqual({ status: 'unavailable', reason: 'database unreachable' });
    // What needs no database still answers.
    expect((await call(s.base, 'GET', 'fhir/R4/metadata')).status).toBe(200);
    const live = await call(s.base, 'GET', 'healthz/live');
    expect(live.status).toBe(200);
    expect(live.body).toEqual({ status: 'ok' });
    // /healthz stays 200 (liveness, as before) and says what is wrong.
    const health = await call(s.base, 'GET', 'healthz');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({
      status: 'degraded',
      ready: false,
      reason: 'database unreachable',
      database: 'postgres',
    });
  });

  it('recovers without a restart once the database is back', async () => {
    await proxy.open(proxy.port);
    await until(async () => (await call(s.base, 'GET', 'healthz/ready')).status === 200, 10_000);
    // The pool reconnects on demand: the first requests after the outage succeed.
    await until(async () => (await requests.fhir()).status === 200, 10_000);
    expect((await requests.oauth()).status).toBe(200);
    const gql = await requests.graphql();
    expect(gql.body.errors[0].extensions.code).not.toBe('transient');
    expect((await call(s.base, 'GET', 'healthz')).body).toMatchObject({ status: 'ok', ready: true });
  });
});
