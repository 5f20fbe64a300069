// CORS on the REST paths (CORS_ORIGINS): an allowed origin's preflight is answered before authentication and its
// answers carry Access-Control-Allow-Origin with credentials; any other origin, or a server without CORS_ORIGINS,
// gets no CORS headers at all (the browser then keeps the answer from the page).
import { describe, expect, it } from 'vitest';
import { call, useTestServer } from '../helpers/server.js';

const APP = 'http://127.0.0.1:9911';

describe('CORS_ORIGINS set', () => {
  const s = useTestServer({ signIn: true, config: { corsOrigins: [APP] } });

  it("answers an allowed origin's preflight with 204, the methods and the asked headers", async () => {
    const r = await fetch(`${s.base}fhir/R4/ValueSet/$expand?url=x`, {
      method: 'OPTIONS',
      headers: {
        origin: APP,
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization, x-medplum',
      },
    });
    expect(r.status).toBe(204);
    expect(r.headers.get('access-control-allow-origin')).toBe(APP);
    expect(r.headers.get('access-control-allow-credentials')).toBe('true');
    expect(r.headers.get('access-control-allow-methods')).toContain('GET');
    expect(r.headers.get('access-control-allow-headers')).toBe('authorization, x-medplum');
  });

  it('an allowed origin reads answers of the token endpoint and /auth/me, errors included', async () => {
    const me = await call(s.base, 'GET', 'auth/me', { token: s.token, headers: { origin: APP } });
    expect(me.status).toBe(200);
    expect(me.headers.get('access-control-allow-origin')).toBe(APP);
    expect(me.headers.get('vary')).toMatch(/Origin/);
    const token = await call(s.base, 'POST', 'oauth2/token', {
      raw: 'grant_type=authorization_code&code=x',
      headers: { origin: APP, 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(token.status).toBe(400);
    expect(token.headers.get('access-control-allow-origin')).toBe(APP);
  });

  it('another origin gets no CORS headers, and its preflight is not answered', async () => {
    const r = await fetch(`${s.base}auth/me`, {
      method: 'OPTIONS',
      headers: { origin: 'http://127.0.0.1:9912', 'access-control-request-method': 'GET' },
    });
    expect(r.status).not.toBe(204);
    expect(r.headers.get('access-control-allow-origin')).toBeNull();
    const me = await call(s.base, 'GET', 'auth/me', {
      token: s.token,
      headers: { origin: 'https://evil.example' },
    });
    expect(me.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('CORS_ORIGINS unset', () => {
  const s = useTestServer({ signIn: true });
  it('no CORS headers for any origin', async () => {
    const me = await call(s.base, 'GET', 'auth/me', { token: s.token, headers: { origin: APP } });
    expect(me.status).toBe(200);
    expect(me.headers.get('access-control-allow-origin')).toBeNull();
  });
});
