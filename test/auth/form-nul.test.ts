// A NUL byte (%00) in a form-encoded /oauth2 body (token, introspect, revoke) or a form posted to /auth/login:
// PostgreSQL text cannot hold NUL, so a value that reached a query answered 500. Each is the client's mistake:
// 400 invalid_request (OAuth2 error JSON) naming the NUL, and nothing is stored.
import { describe, expect, it } from 'vitest';
import { CLIENT_ID, CLIENT_SECRET, signIn, useTestServer } from '../helpers/server.js';

const s = useTestServer();

async function postForm(path: string, body: string, headers: Record<string, string> = {}) {
  const r = await fetch(`${s.base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body,
  });
  const text = await r.text();
  return {
    status: r.status,
    text,
    json: (() => {
      try {
        return JSON.parse(text);
      } catch {
        return undefined;
      }
    })(),
  };
}

describe('NUL in form-encoded bodies', () => {
  const cases: Array<[string, string]> = [
    [
      'oauth2/token',
      `grant_type=client_credentials&client_id=${CLIENT_ID}%00&client_secret=${CLIENT_SECRET}`,
    ],
    ['oauth2/token', `grant_type=client_credentials&client_id=${CLIENT_ID}&client_secret=x%00y`],
    ['oauth2/token', 'grant_type=authorization_code&code=abc%00def&code_verifier=' + 'a'.repeat(43)],
    ['oauth2/token', 'grant_type=refresh_token&refresh_token=a%00b'],
    ['oauth2/token', 'grant_type=client_credentials%00'],
    [
      'oauth2/token',
      `grant_type=client_credentials&client_id=${CLIENT_ID}&client_secret=${CLIENT_SECRET}&scope=openid%00`,
    ],
    ['oauth2/introspect', 'token=abc%00def'],
    ['oauth2/revoke', 'token=abc%00def'],
    ['oauth2/revoke', 'tok%00en=abc'],
  ];
  for (const [path, body] of cases) {
    it(`${path} ${body.slice(0, 60)}: 400 invalid_request`, async () => {
      const r = await postForm(path, body);
      expect(r.status, r.text).toBe(400);
      expect(r.json?.error).toBe('invalid_request');
      expect(r.json?.error_description).toMatch(/NUL/);
    });
  }

  it('HTTP Basic client credentials holding a NUL: a 4xx, never a 500', async () => {
    for (const creds of [`${CLIENT_ID}\0:${CLIENT_SECRET}`, `${CLIENT_ID}:${CLIENT_SECRET}\0`, `a\0b:c`]) {
      const r = await postForm('oauth2/token', 'grant_type=client_credentials&scope=openid', {
        authorization: `Basic ${Buffer.from(creds).toString('base64')}`,
      });
      expect(r.status, r.text).toBeGreaterThanOrEqual(400);
      expect(r.status, r.text).toBeLessThan(500);
    }
  });

  it('/auth/login posted as a form with a NUL: a 4xx, never a 500', async () => {
    const r = await postForm('auth/login', 'email=a%00b@example.com&password=password-123');
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
  });

  it('nothing was stored: no session was made by these requests', async () => {
    const before = await s.services.db.prisma.login.count();
    await postForm(
      'oauth2/token',
      `grant_type=client_credentials&client_id=${CLIENT_ID}&client_secret=${CLIENT_SECRET}&scope=x%00`,
    );
    expect(await s.services.db.prisma.login.count()).toBe(before);
    // The well-formed request still works.
    expect((await signIn(s.base)).access_token).toBeTruthy();
  });
});
