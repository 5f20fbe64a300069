// Security headers on every route (helmet's defaults), not only on /graphql: FHIR REST, /auth, /oauth2, /healthz,
// errors and unknown paths. /graphql keeps its own (GraphiQL's page policy allows its own scripts and workers).
import { beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_ID, CLIENT_SECRET, useTestServer } from '../helpers/server.js';

const s = useTestServer({ signIn: true });
let token: string;
beforeAll(async () => {
  token = s.token;
});

function expectSecurityHeaders(r: Response, what: string) {
  expect(r.headers.get('content-security-policy'), what).toMatch(/default-src 'self'/);
  expect(r.headers.get('content-security-policy'), what).toMatch(/object-src 'none'/);
  expect(r.headers.get('x-content-type-options'), what).toBe('nosniff');
  expect(r.headers.get('x-frame-options'), what).toBe('SAMEORIGIN');
  expect(r.headers.get('referrer-policy'), what).toBe('no-referrer');
  expect(r.headers.get('strict-transport-security'), what).toMatch(/max-age=/);
}

describe('security headers', () => {
  it('on FHIR REST (success, error, 401), /auth, /oauth2, /.well-known, /healthz and unknown paths', async () => {
    const auth = { authorization: `Bearer ${token}` };
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const requests: Array<[string, RequestInit]> = [
      ['fhir/R4/metadata', {}],
      ['fhir/R4/CodeSystem', { headers: auth }],
      ['fhir/R4/CodeSystem/not-there', { headers: auth }],
      ['fhir/R4/CodeSystem', {}],
      ['auth/me', { headers: auth }],
      ['auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }],
      [
        'oauth2/token',
        {
          method: 'POST',
          headers: form,
          body: `grant_type=client_credentials&client_id=${CLIENT_ID}&client_secret=${CLIENT_SECRET}`,
        },
      ],
      ['oauth2/token', { method: 'POST', headers: form, body: 'grant_type=nope' }],
      ['.well-known/openid-configuration', {}],
      ['healthz', {}],
      ['no/such/path', {}],
    ];
    for (const [path, init] of requests) {
      const r = await fetch(`${s.base}${path}`, init);
      await r.arrayBuffer();
      expect(r.status, path).toBeLessThan(500);
      expectSecurityHeaders(r, `${init.method ?? 'GET'} ${path} (${r.status})`);
    }
  });

  it('/graphql keeps its policies: strict for JSON, the GraphiQL page allows its own workers', async () => {
    const json = await fetch(`${s.base}graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    await json.arrayBuffer();
    expectSecurityHeaders(json, 'POST /graphql');
    const page = await fetch(`${s.base}graphql`, { headers: { accept: 'text/html' } });
    await page.arrayBuffer();
    expect(page.headers.get('content-security-policy')).toMatch(/worker-src 'self' blob:/);
  });
});
