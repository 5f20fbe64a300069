// OAuth2 discovery over real HTTP: the OpenID configuration names live endpoints, and tokens verify against the
// published JWKS (so a resource server can check them without calling us).
import { createLocalJWKSet, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { call, signIn, useTestServer } from '../helpers/server.js';

const s = useTestServer();

describe('discovery', () => {
  it('openid-configuration lists the endpoints this server serves', async () => {
    const r = await call(s.base, 'GET', '.well-known/openid-configuration');
    expect(r.status).toBe(200);
    expect(r.body.issuer).toBe(s.services.config.baseUrl);
    expect(r.body.grant_types_supported).toEqual(
      expect.arrayContaining(['authorization_code', 'client_credentials', 'refresh_token']),
    );
    expect(r.body.code_challenge_methods_supported).toContain('S256');
    for (const key of ['token_endpoint', 'introspection_endpoint', 'revocation_endpoint', 'jwks_uri']) {
      expect(r.body[key]).toMatch(new RegExp(`^${s.services.config.baseUrl}`));
    }
  });

  it('an access token verifies against the published JWKS (ES256) and names its Login', async () => {
    const t = await signIn(s.base);
    const jwks = await call(s.base, 'GET', '.well-known/jwks.json');
    expect(jwks.status).toBe(200);
    expect(jwks.body.keys[0].kty).toBe('EC');
    expect(jwks.body.keys[0].d).toBeUndefined();
    const { payload, protectedHeader } = await jwtVerify(t.access_token, createLocalJWKSet(jwks.body), {
      issuer: s.services.config.baseUrl,
    });
    expect(protectedHeader.alg).toBe('ES256');
    expect(payload.login_id).toBe(t.loginId);
    expect(payload.token_use).toBe('access');
    expect(payload.exp! - payload.iat!).toBeGreaterThanOrEqual(t.expires_in);
  });

  it('the token endpoint refuses GET and unknown /oauth2 paths with OAuth2 error JSON', async () => {
    const r = await call(s.base, 'GET', 'oauth2/token');
    expect(r.status).toBe(404);
    expect(r.body.error).toBe('invalid_request');
  });
});
