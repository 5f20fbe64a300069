// The server's frame: health, routing errors, body limits, GraphQL endpoint, metadata, logs without secrets.
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import express from 'express';
import pino from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer } from '../../src/rest/http-server.js';
import { startServer, type RunningServer } from '../../src/server.js';
import {
  ADMIN_PASSWORD,
  CLIENT_ID,
  CLIENT_SECRET,
  call,
  dropSchema,
  newSchemaName,
  onPostgres,
  signIn,
  useTestServer,
  withTestServer,
} from '../helpers/server.js';

const s = useTestServer({ config: { bodyLimit: '2kb', authBodyLimit: '2kb' }, signIn: true });
let token: string;

beforeAll(async () => {
  token = s.token;
});

describe('operations endpoints', () => {
  it('GET /healthz answers 200 JSON with a request id', async () => {
    const r = await call(s.base, 'GET', 'healthz');
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('ok');
    expect(r.headers.get('x-request-id')).toMatch(/[\w-]{8,}/);
    // Before authentication: a bad token does not matter here; the trailing slash is accepted too.
    const slash = await call(s.base, 'GET', 'healthz/', { token: 'not-a-token' });
    expect(slash.status).toBe(200);
    expect(slash.body.status).toBe('ok');
  });

  it('echoes a well-formed X-Request-Id', async () => {
    const r = await call(s.base, 'GET', 'healthz', { headers: { 'x-request-id': 'abc-123' } });
    expect(r.headers.get('x-request-id')).toBe('abc-123');
  });
});

describe('routing errors', () => {
  it('unknown paths are 404 OperationOutcome', async () => {
    const r = await call(s.base, 'GET', 'no/such/path');
    expect(r.status).toBe(404);
    expect(r.headers.get('content-type')).toContain('application/fhir+json');
    expect(r.body.resourceType).toBe('OperationOutcome');
    expect(r.body.issue[0].code).toBe('not-found');
  });

  it('unknown /oauth2 paths are 404 OAuth2 error JSON', async () => {
    const r = await call(s.base, 'POST', 'oauth2/nope');
    expect(r.status).toBe(404);
    expect(r.body.error).toBe('invalid_request');
  });

  it('an unsupported resource type is 404 not-supported', async () => {
    const r = await call(s.base, 'GET', 'fhir/R4/Patient/123', { token });
    expect(r.status).toBe(404);
    expect(r.body.issue[0].code).toBe('not-supported');
    expect(r.body.issue[0].details.text).toContain('Patient');
  });

  it('FHIR paths without a token are 401 with WWW-Authenticate', async () => {
    const r = await call(s.base, 'GET', 'fhir/R4/ValueSet');
    expect(r.status).toBe(401);
    expect(r.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect(r.body.resourceType).toBe('OperationOutcome');
  });

  it('a bad resource id or search parameter is 400', async () => {
    const bad = await call(s.base, 'GET', 'fhir/R4/ValueSet/' + 'x'.repeat(80), { token });
    expect(bad.status).toBe(400);
    expect(bad.body.resourceType).toBe('OperationOutcome');
    expect(bad.body.issue[0].severity).toBe('error');
    const param = await call(s.base, 'GET', 'fhir/R4/ValueSet?bogus=1', { token });
    expect(param.status).toBe(400);
    expect(param.headers.get('content-type')).toContain('application/fhir+json');
    expect(param.body.resourceType).toBe('OperationOutcome');
    expect(param.body.issue).toHaveLength(1);
    expect(param.body.issue[0]).toMatchObject({ severity: 'error', code: 'invalid', expression: ['bogus'] });
    expect(param.body.issue[0].details.text).toBe('Unknown search parameter: bogus');
  });

  it('malformed JSON is 400 naming the problem', async () => {
    const r = await call(s.base, 'POST', 'auth/login', {
      raw: '{"email": "a@b.c", ',
      headers: { 'content-type': 'application/json' },
    });
    expect(r.status).toBe(400);
    expect(r.body.issue[0].details.text).toMatch(/Malformed JSON/);
  });

  it('a body over the limit is 413', async () => {
    const r = await call(s.base, 'POST', 'auth/login', {
      raw: JSON.stringify({ email: 'x@example.com', password: 'p'.repeat(5000) }),
      headers: { 'content-type': 'application/json' },
    });
    expect(r.status).toBe(413);
    expect(r.body.resourceType).toBe('OperationOutcome');
  });
});

describe('FHIR metadata', () => {
  it('GET [base]/metadata returns a CapabilityStatement without authentication', async () => {
    const r = await call(s.base, 'GET', 'fhir/R4/metadata');
    expect(r.status).toBe(200);
    expect(r.body.resourceType).toBe('CapabilityStatement');
    expect(r.body.fhirVersion).toBe('4.0.1');
    expect(Array.isArray(r.body.rest[0].resource)).toBe(true);
  });
});

describe('GraphQL endpoint', () => {
  it('answers a signed-in query with the same bearer token', async () => {
    const r = await call(s.base, 'POST', 'graphql', {
      token,
      body: { query: '{ me { loginId project { name } membership { admin } } }' },
      headers: { 'content-type': 'application/json' },
    });
    expect(r.status).toBe(200);
    expect(r.body.data.me.membership.admin).toBe(true);
    expect(r.body.data.me.project.name).toBe('Default Project');
  });

  it('refuses a signed-out query with an error naming authentication', async () => {
    const r = await call(s.base, 'POST', 'graphql', {
      body: { query: '{ me { loginId } }' },
      headers: { 'content-type': 'application/json' },
    });
    expect(r.body.errors[0].message).toMatch(/Authentication required/);
    expect(r.body.data).toBeNull();
  });

  it('serves GraphiQL to a browser', async () => {
    const r = await call(s.base, 'GET', 'graphql', { headers: { accept: 'text/html' } });
    expect(r.status).toBe(200);
    expect(r.text).toMatch(/graphiql/i);
  });
});

describe('logs', () => {
  it('never contain passwords, tokens or client secrets', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    // src's startServer itself: the helpers log nowhere; this test reads every log line, at debug level.
    const schema = onPostgres ? newSchemaName() : undefined;
    const server: RunningServer = await startServer({
      env: process.env,
      inMemory: !onPostgres,
      logger: pino({ level: 'debug' }, sink),
      config: {
        port: 0,
        host: '127.0.0.1',
        adminPassword: ADMIN_PASSWORD,
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        databaseUrl: process.env.TEST_DATABASE_URL,
        databaseSchema: schema,
        loadCoreTerminology: false,
      },
    });
    try {
      const base = server.url;
      const t = await signIn(base, 'admin@example.com', ADMIN_PASSWORD, { scope: 'openid offline_access' });
      await call(base, 'GET', 'auth/me', { token: t.access_token });
      await call(base, 'GET', 'auth/me', { token: 'garbage.token.value' });
      await fetch(`${base}oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: CLIENT_ID,
          client_secret: CLIENT_SECRET,
        }),
      });
      expect(lines.length).toBeGreaterThan(3);
      const all = lines.join('\n');
      expect(all).not.toContain(ADMIN_PASSWORD);
      expect(all).not.toContain(CLIENT_SECRET);
      expect(all).not.toContain(t.access_token);
      expect(all).not.toContain(t.refresh_token);
      expect(all).not.toContain('garbage.token.value');
    } finally {
      await server.close();
      await dropSchema(schema);
    }
  });
});

describe('client addresses behind a proxy', () => {
  const sessionAddress = async (base: string, forwardedFor: string) => {
    const t = await signIn(base, undefined, undefined, { forwardedFor });
    const me = await call(base, 'GET', 'auth/me', { token: t.access_token });
    return me.body.security.sessions.find((x: { current: boolean }) => x.current).remoteAddress as string;
  };

  it('ignores X-Forwarded-For by default', async () => {
    expect(await sessionAddress(s.base, '203.0.113.7')).toMatch(/127\.0\.0\.1/);
  });

  it('records the forwarded address when TRUST_PROXY trusts the proxy', async () => {
    await withTestServer({ config: { trustProxy: 'loopback' } }, async (proxied) => {
      expect(await sessionAddress(proxied.base, '203.0.113.7')).toBe('203.0.113.7');
    });
  });
});

describe('HTTP server', () => {
  it("hands Express requests and responses that already carry the app's prototypes", async () => {
    // Express re-prototypes every req/res it is given; objects born with its prototypes make that a no-op (see
    // src/rest/http-server.ts). Express's own request and response helpers must work on them unchanged.
    const app = express();
    app.get('/probe', (req, res) => {
      res.status(201).json({ q: req.query.q, path: req.path, accepts: req.accepts('json') });
    });
    const server = createHttpServer(app);
    const born: boolean[] = [];
    // Runs before Express sees the objects.
    server.prependListener('request', (req, res) => {
      born.push(Object.getPrototypeOf(req) === app.request, Object.getPrototypeOf(res) === app.response);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const res = await fetch(`http://127.0.0.1:${port}/probe?q=heart`, {
        headers: { accept: 'application/json' },
      });
      expect(res.status).toBe(201);
      expect(await res.json()).toEqual({ q: 'heart', path: '/probe', accepts: 'json' });
      expect(born).toEqual([true, true]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
