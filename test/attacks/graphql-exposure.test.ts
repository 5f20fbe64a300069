// /graphql seen from a browser: mutations were accepted as cross-site form posts, CORS reflected any origin with
// credentials, introspection and "Did you mean" suggestions were on in production, and no security headers were
// sent. Now: CSRF prevention, a CORS allow-list, introspection/suggestions in production only for signed-in
// callers (GRAPHQL_INTROSPECTION=signed-in, its production default), helmet's headers.
import { describe, expect, it } from 'vitest';
import { useAttackTarget } from './harness.js';

const ALLOWED = 'https://app.example.org';
const target = useAttackTarget({ NODE_ENV: 'production', CORS_ORIGINS: ALLOWED }, { signIn: true });

const post = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${target.base}graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${target.token}`, ...headers },
    body: JSON.stringify(body),
  });

describe('/graphql browser exposure', () => {
  it('refuses a mutation sent as a cross-site form post (no CSRF header): 403, the session lives on', async () => {
    const r = await fetch(`${target.base}graphql`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Bearer ${target.token}`,
        origin: 'https://evil.example',
      },
      body: new URLSearchParams({ query: 'mutation { logout }' }).toString(),
    });
    expect(r.status, await r.text()).toBe(403);
    const me = await post({ query: '{ me { loginId } }' });
    expect(me.status).toBe(200);
    expect(((await me.json()) as { data: { me: { loginId: string } } }).data.me.loginId).toBeTruthy();
  });

  it('does not reflect an unlisted origin; answers the listed one with credentials', async () => {
    const evil = await fetch(`${target.base}graphql`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://evil.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type',
      },
    });
    expect(evil.headers.get('access-control-allow-origin')).not.toBe('https://evil.example');
    expect(evil.headers.get('access-control-allow-origin')).not.toBe('*');
    const good = await fetch(`${target.base}graphql`, {
      method: 'OPTIONS',
      headers: {
        origin: ALLOWED,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type',
      },
    });
    expect(good.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    expect(good.headers.get('access-control-allow-credentials')).toBe('true');
  });

  it('hides introspection and field suggestions from anonymous callers in production', async () => {
    const anonymous = (query: string) =>
      fetch(`${target.base}graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query }),
      });
    const intro = await anonymous('{ __schema { types { name } } }');
    const introBody = await intro.text();
    expect(introBody).not.toMatch(/"types"\s*:\s*\[/);
    expect(introBody).toMatch(/introspection/i);
    const typo = (await (await anonymous('{ mee { loginId } }')).json()) as { errors: { message: string }[] };
    expect(typo.errors[0].message).toMatch(/Cannot query field "mee"/);
    expect(typo.errors[0].message).not.toMatch(/Did you mean/);
  });

  it('gives signed-in callers introspection and suggestions in production (GraphiQL after sign-in)', async () => {
    const intro = await post({ query: '{ __schema { queryType { name } types { name } } }' });
    expect(intro.status).toBe(200);
    const body = (await intro.json()) as {
      data: { __schema: { queryType: { name: string }; types: unknown[] } };
    };
    expect(body.data.__schema.queryType.name).toBe('Query');
    expect(body.data.__schema.types.length).toBeGreaterThan(10);
    const typo = (await (await post({ query: '{ mee { loginId } }' })).json()) as {
      errors: { message: string }[];
    };
    expect(typo.errors[0].message).toMatch(/Did you mean "me"\?/);
    // A token that is not (or no longer) valid is refused before GraphQL: 401, no schema.
    const forged = await post(
      { query: '{ __schema { types { name } } }' },
      { authorization: 'Bearer not-a-token' },
    );
    expect(forged.status).toBe(401);
    expect(await forged.text()).not.toMatch(/"types"/);
  });

  it('sends security headers; GraphiQL still gets a page and a policy that lets it load', async () => {
    const r = await post({ query: '{ me { loginId } }' });
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    expect(r.headers.get('content-security-policy')).toMatch(/default-src 'self'/);
    expect(r.headers.get('x-frame-options')).toBeTruthy();
    const page = await fetch(`${target.base}graphql`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    // GraphiQL's files come from this server: the page's policy allows this origin's scripts only.
    expect(page.headers.get('content-security-policy')).toMatch(/script-src 'self'(;|$)/);
    expect(page.headers.get('content-security-policy')).not.toMatch(/unpkg|https:/);
  });
});
