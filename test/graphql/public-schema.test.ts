// The public /graphql schema holds no OAuth2 protocol internals: `token`, `introspect` and `revokeToken` were
// public fields (and the GraphQL `token` answered tokens without Cache-Control: no-store, RFC 6749 5.1). They are
// internal now: REST /oauth2/token, /oauth2/introspect and /oauth2/revoke run them; /graphql does not know them.
import { describe, expect, it } from 'vitest';
import { CLIENT_ID, CLIENT_SECRET, signIn, useTestServer } from '../helpers/server.js';

const s = useTestServer();

async function gql(query: string, token?: string) {
  const r = await fetch(`${s.base}graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query }),
  });
  return {
    status: r.status,
    body: (await r.json()) as { data?: unknown; errors?: Array<{ message: string }> },
  };
}

describe('public /graphql', () => {
  it('lists no token, introspect or revokeToken field', async () => {
    const t = await signIn(s.base);
    const r = await gql(
      '{ __schema { queryType { fields { name } } mutationType { fields { name } } } }',
      t.access_token,
    );
    expect(r.status).toBe(200);
    const schema = (r.body.data as { __schema: Record<string, { fields: Array<{ name: string }> }> })
      .__schema;
    const names = [...schema.queryType.fields, ...schema.mutationType.fields].map((f) => f.name);
    expect(names).toContain('me');
    expect(names).not.toContain('token');
    expect(names).not.toContain('introspect');
    expect(names).not.toContain('revokeToken');
  });

  it('refuses a token mutation: no tokens come out of /graphql', async () => {
    const r = await gql(
      `mutation { token(grantType: "client_credentials", clientId: "${CLIENT_ID}", clientSecret: "${CLIENT_SECRET}") }`,
    );
    // A validation error (yoga answers application/json requests with 200 and the errors).
    expect(r.body.errors?.[0]?.message).toMatch(/Cannot query field "token"/);
    expect(r.body.data).toBeUndefined();
    expect(JSON.stringify(r.body)).not.toMatch(/access_token/);
  });

  it('refuses introspect and revokeToken', async () => {
    const t = await signIn(s.base);
    const a = await gql(`{ introspect(token: "${t.access_token}") }`, t.access_token);
    expect(a.body.errors?.[0]?.message).toMatch(/Cannot query field "introspect"/);
    const b = await gql(`mutation { revokeToken(token: "${t.access_token}") }`, t.access_token);
    expect(b.body.errors?.[0]?.message).toMatch(/Cannot query field "revokeToken"/);
  });

  it('REST /oauth2 still runs them: token (no-store), introspect, revoke', async () => {
    const basic = `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`;
    const form = (body: Record<string, string>) => ({
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
      body: new URLSearchParams(body).toString(),
    });
    const tr = await fetch(`${s.base}oauth2/token`, form({ grant_type: 'client_credentials' }));
    expect(tr.status).toBe(200);
    expect(tr.headers.get('cache-control')).toMatch(/no-store/);
    const { access_token } = (await tr.json()) as { access_token: string };
    const ir = await fetch(`${s.base}oauth2/introspect`, form({ token: access_token }));
    expect(ir.status).toBe(200);
    expect(((await ir.json()) as { active: boolean }).active).toBe(true);
    const rr = await fetch(`${s.base}oauth2/revoke`, form({ token: access_token }));
    expect(rr.status).toBe(200);
    const after = await fetch(`${s.base}oauth2/introspect`, form({ token: access_token }));
    expect(((await after.json()) as { active: boolean }).active).toBe(false);
  });
});
