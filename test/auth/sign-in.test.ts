// Accounts and tokens over real HTTP: login + PKCE, client credentials, refresh rotation, bad input, expiry.
import crypto from 'node:crypto';
import { SignJWT, decodeJwt, decodeProtectedHeader, generateKeyPair } from 'jose';
import { describe, expect, it } from 'vitest';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  CLIENT_ID,
  CLIENT_SECRET,
  call,
  signIn,
  useTestServer,
} from '../helpers/server.js';

const s = useTestServer();

function pkce() {
  const verifier = crypto.randomBytes(32).toString('base64url');
  const challenge = crypto.createHash('sha256').update(verifier).digest('base64url');
  return { verifier, challenge };
}

/** The PKCE fields of a sign-in body (required since RFC 9700 hardening). */
function pkceBody() {
  return { codeChallenge: pkce().challenge, codeChallengeMethod: 'S256' };
}

async function login(base: string, extra: Record<string, unknown> = {}) {
  const { verifier, challenge } = pkce();
  const r = await call(base, 'POST', 'auth/login', {
    body: {
      email: ADMIN_EMAIL,
      password: ADMIN_PASSWORD,
      codeChallenge: challenge,
      codeChallengeMethod: 'S256',
      ...extra,
    },
    headers: { 'content-type': 'application/json' },
  });
  expect(r.status).toBe(200);
  return { verifier, login: r.body.login as string, code: r.body.code as string };
}

async function token(base: string, form: Record<string, string>, headers: Record<string, string> = {}) {
  return call(base, 'POST', 'oauth2/token', {
    raw: new URLSearchParams(form).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
  });
}

describe('password sign-in with PKCE', () => {
  it('login returns {login, code}; the code exchanges for a Medplum-shaped token response', async () => {
    const l = await login(s.base);
    expect(l.login).toMatch(/^[0-9a-f-]{36}$/);
    expect(typeof l.code).toBe('string');
    const t = await token(s.base, {
      grant_type: 'authorization_code',
      code: l.code,
      code_verifier: l.verifier,
    });
    expect(t.status).toBe(200);
    expect(t.headers.get('cache-control')).toBe('no-store');
    expect(t.body.token_type).toBe('Bearer');
    expect(t.body.expires_in).toBeGreaterThan(0);
    expect(t.body.refresh_token).toBeUndefined();
    expect(t.body.project.reference).toMatch(/^Project\//);
    expect(t.body.profile.reference).toMatch(/^Practitioner\//);
    // The access token is an ES256 JWT naming its Login.
    const [header, payload] = t.body.access_token
      .split('.')
      .slice(0, 2)
      .map((p: string) => JSON.parse(Buffer.from(p, 'base64url').toString('utf8')));
    expect(header.alg).toBe('ES256');
    expect(payload.login_id).toBe(l.login);
    const me = await call(s.base, 'GET', 'auth/me', { token: t.body.access_token });
    expect(me.status).toBe(200);
    expect(me.body.user.email).toBe(ADMIN_EMAIL);
  });

  it('records user agent, remote address, auth method and time on the Login', async () => {
    const ua = 'AuthTest/1.0';
    const t = await signIn(s.base, ADMIN_EMAIL, ADMIN_PASSWORD, { userAgent: ua });
    const row = await s.services.db.prisma.login.findUnique({ where: { id: t.loginId } });
    expect(row?.userAgent).toBe(ua);
    expect(row?.remoteAddress).toMatch(/127\.0\.0\.1/);
    expect(row?.authMethod).toBe('password');
    expect(row?.createdAt.getTime()).toBeGreaterThan(Date.now() - 60_000);
  });

  it('a wrong password and an unknown email get the same 400 answer', async () => {
    const a = await call(s.base, 'POST', 'auth/login', {
      body: { email: ADMIN_EMAIL, password: 'wrong-password', ...pkceBody() },
      headers: { 'content-type': 'application/json' },
    });
    const b = await call(s.base, 'POST', 'auth/login', {
      body: { email: 'nobody@example.com', password: 'wrong-password', ...pkceBody() },
      headers: { 'content-type': 'application/json' },
    });
    expect(a.status).toBe(400);
    expect(b.status).toBe(400);
    expect(a.body.resourceType).toBe('OperationOutcome');
    expect(a.body).toEqual(b.body);
    expect(a.body.issue[0].details.text).toMatch(/email or password/i);
  });

  it('malformed JSON on /auth/login is 400 naming the problem', async () => {
    const r = await call(s.base, 'POST', 'auth/login', {
      raw: '{"email": ',
      headers: { 'content-type': 'application/json' },
    });
    expect(r.status).toBe(400);
    expect(r.body.resourceType).toBe('OperationOutcome');
    expect(r.body.issue[0].details.text).toMatch(/JSON/);
  });

  it('a non-JSON body on /auth/login is 400, as are missing fields and non-string fields', async () => {
    const r1 = await call(s.base, 'POST', 'auth/login', {
      raw: 'email=a&password=b',
      headers: { 'content-type': 'text/plain' },
    });
    expect(r1.status).toBe(400);
    expect(r1.body.issue[0].details.text).toMatch(/JSON/);
    const r2 = await call(s.base, 'POST', 'auth/login', {
      body: { email: ADMIN_EMAIL },
      headers: { 'content-type': 'application/json' },
    });
    expect(r2.status).toBe(400);
    expect(r2.body.issue[0].expression).toEqual(['password']);
    const r3 = await call(s.base, 'POST', 'auth/login', {
      body: { email: ADMIN_EMAIL, password: 12345678 },
      headers: { 'content-type': 'application/json' },
    });
    expect(r3.status).toBe(400);
    expect(r3.body.issue[0].expression).toEqual(['password']);
  });

  it('a wrong content type on /oauth2/token is 400 OAuth2 error JSON', async () => {
    const r = await call(s.base, 'POST', 'oauth2/token', {
      body: { grant_type: 'client_credentials' },
      headers: { 'content-type': 'application/json' },
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('invalid_request');
    expect(r.body.error_description).toMatch(/x-www-form-urlencoded/);
  });

  it('missing or unknown grant_type is an OAuth2 error', async () => {
    const a = await token(s.base, {});
    expect(a.status).toBe(400);
    expect(a.body.error).toBe('invalid_request');
    const b = await token(s.base, { grant_type: 'password' });
    expect(b.status).toBe(400);
    expect(b.body.error).toBe('unsupported_grant_type');
  });

  it('a wrong PKCE verifier is invalid_grant', async () => {
    const l = await login(s.base);
    const t = await token(s.base, {
      grant_type: 'authorization_code',
      code: l.code,
      code_verifier: 'not-the-verifier-not-the-verifier-not-the-verifier',
    });
    expect(t.status).toBe(400);
    expect(t.body.error).toBe('invalid_grant');
    expect(t.body.error_description).toMatch(/code_verifier/);
  });

  it('a missing verifier for a PKCE code is invalid_request', async () => {
    const l = await login(s.base);
    const t = await token(s.base, { grant_type: 'authorization_code', code: l.code });
    expect(t.status).toBe(400);
    expect(t.body.error).toBe('invalid_request');
  });

  it('an unknown code is invalid_grant', async () => {
    const t = await token(s.base, { grant_type: 'authorization_code', code: 'nope', code_verifier: 'x' });
    expect(t.status).toBe(400);
    expect(t.body.error).toBe('invalid_grant');
  });

  it('a reused authorization code is invalid_grant and revokes the tokens of that Login', async () => {
    const l = await login(s.base);
    const form = { grant_type: 'authorization_code', code: l.code, code_verifier: l.verifier };
    const first = await token(s.base, form);
    expect(first.status).toBe(200);
    expect((await call(s.base, 'GET', 'auth/me', { token: first.body.access_token })).status).toBe(200);
    const again = await token(s.base, form);
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_grant');
    expect(again.body.error_description).toMatch(/already used/);
    const after = await call(s.base, 'GET', 'auth/me', { token: first.body.access_token });
    expect(after.status).toBe(401);
    const row = await s.services.db.prisma.login.findUnique({ where: { id: l.login } });
    expect(row?.revokedAt).toBeInstanceOf(Date);
  });
});

describe('codes bound to a client', () => {
  it('a code issued with clientId is redeemed only with that client_id; the token names the client', async () => {
    const l = await login(s.base, { clientId: CLIENT_ID });
    const form = { grant_type: 'authorization_code', code: l.code, code_verifier: l.verifier };
    const t = await token(s.base, { ...form, client_id: CLIENT_ID, client_secret: CLIENT_SECRET });
    expect(t.status).toBe(200);
    const payload = JSON.parse(Buffer.from(t.body.access_token.split('.')[1], 'base64url').toString('utf8'));
    expect(payload.client_id).toBe(CLIENT_ID);

    // The client's own session list holds its client_credentials sessions, not users' sessions made through it.
    const cc = await token(s.base, {
      grant_type: 'client_credentials',
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
    });
    const me = await call(s.base, 'GET', 'auth/me', { token: cc.body.access_token });
    const ids = me.body.security.sessions.map((x: { id: string }) => x.id);
    expect(ids).not.toContain(l.login);
    expect(
      me.body.security.sessions.every((x: { authMethod: string }) => x.authMethod === 'client_credentials'),
    ).toBe(true);
    const gql = await call(s.base, 'POST', 'graphql', {
      token: cc.body.access_token,
      headers: { 'content-type': 'application/json' },
      body: { query: 'mutation { revokeOtherSessions }' },
    });
    expect(gql.body.errors).toBeUndefined();
    expect((await call(s.base, 'GET', 'auth/me', { token: t.body.access_token })).status).toBe(200);

    const l2 = await login(s.base, { clientId: CLIENT_ID });
    const t2 = await token(s.base, {
      grant_type: 'authorization_code',
      code: l2.code,
      code_verifier: l2.verifier,
      client_id: crypto.randomUUID(),
    });
    expect(t2.status).toBe(401);
    expect(t2.body.error).toBe('invalid_client');
  });

  it('an unknown or malformed clientId on /auth/login is 400 naming clientId', async () => {
    for (const clientId of ['nope', crypto.randomUUID()]) {
      const r = await call(s.base, 'POST', 'auth/login', {
        body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD, clientId, ...pkceBody() },
        headers: { 'content-type': 'application/json' },
      });
      expect(r.status).toBe(400);
      expect(r.body.issue[0].expression).toEqual(['clientId']);
    }
  });
});

describe('client credentials', () => {
  it('works with the secret in the form body', async () => {
    const t = await token(s.base, {
      grant_type: 'client_credentials',
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
    });
    expect(t.status).toBe(200);
    expect(t.body.profile.reference).toBe(`ClientApplication/${CLIENT_ID}`);
    const me = await call(s.base, 'GET', 'auth/me', { token: t.body.access_token });
    expect(me.status).toBe(200);
    expect(me.body.profile.resourceType).toBe('ClientApplication');
  });

  it('works with HTTP Basic', async () => {
    const basic = Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64');
    const t = await token(s.base, { grant_type: 'client_credentials' }, { authorization: `Basic ${basic}` });
    expect(t.status).toBe(200);
    expect(t.body.token_type).toBe('Bearer');
    const row = await s.services.db.prisma.login.findFirst({
      where: { clientId: CLIENT_ID },
      orderBy: { createdAt: 'desc' },
    });
    expect(row?.authMethod).toBe('client_credentials');
  });

  it('a wrong secret is 401 invalid_client (form and Basic), as is an unknown client', async () => {
    const a = await token(s.base, {
      grant_type: 'client_credentials',
      client_id: CLIENT_ID,
      client_secret: 'wrong',
    });
    expect(a.status).toBe(401);
    expect(a.body.error).toBe('invalid_client');
    const basic = Buffer.from(`${CLIENT_ID}:wrong`).toString('base64');
    const b = await token(s.base, { grant_type: 'client_credentials' }, { authorization: `Basic ${basic}` });
    expect(b.status).toBe(401);
    expect(b.body.error).toBe('invalid_client');
    const c = await token(s.base, {
      grant_type: 'client_credentials',
      client_id: crypto.randomUUID(),
      client_secret: CLIENT_SECRET,
    });
    expect(c.status).toBe(401);
    expect(c.body.error).toBe('invalid_client');
  });

  it('missing credentials are invalid_request', async () => {
    const t = await token(s.base, { grant_type: 'client_credentials' });
    expect(t.status).toBe(400);
    expect(t.body.error).toBe('invalid_request');
  });
});

describe('refresh tokens', () => {
  it('offline_access gets a refresh token; it rotates; replaying the old one ends the session', async () => {
    const t = await signIn(s.base, ADMIN_EMAIL, ADMIN_PASSWORD, { scope: 'openid offline_access' });
    expect(t.refresh_token).toBeTruthy();
    const r1 = await token(s.base, { grant_type: 'refresh_token', refresh_token: t.refresh_token! });
    expect(r1.status).toBe(200);
    expect(r1.body.refresh_token).toBeTruthy();
    expect(r1.body.refresh_token).not.toBe(t.refresh_token);
    expect((await call(s.base, 'GET', 'auth/me', { token: r1.body.access_token })).status).toBe(200);
    const r2 = await token(s.base, { grant_type: 'refresh_token', refresh_token: r1.body.refresh_token });
    expect(r2.status).toBe(200);
    const basicAuth = `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`;
    // Introspection agrees: the rotated-away refresh token is inactive, the current one active.
    const introspect = (t: string) =>
      call(s.base, 'POST', 'oauth2/introspect', {
        raw: new URLSearchParams({ token: t }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth },
      });
    expect((await introspect(r1.body.refresh_token)).body).toEqual({ active: false });
    expect((await introspect(r2.body.refresh_token)).body.active).toBe(true);
    // A replay of a rotated token is refused and ends the session (RFC 9700 4.14.2).
    const replay = await token(s.base, { grant_type: 'refresh_token', refresh_token: t.refresh_token! });
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe('invalid_grant');
    expect((await introspect(r2.body.refresh_token)).body).toEqual({ active: false });
  });

  it('an access token is not a refresh token, and garbage is invalid_grant', async () => {
    const t = await signIn(s.base, ADMIN_EMAIL, ADMIN_PASSWORD, { scope: 'openid offline_access' });
    const a = await token(s.base, { grant_type: 'refresh_token', refresh_token: t.access_token });
    expect(a.status).toBe(400);
    expect(a.body.error).toBe('invalid_grant');
    const b = await token(s.base, { grant_type: 'refresh_token', refresh_token: 'garbage' });
    expect(b.status).toBe(400);
    expect(b.body.error).toBe('invalid_grant');
  });

  it('a refresh token is not accepted as a Bearer access token', async () => {
    const t = await signIn(s.base, ADMIN_EMAIL, ADMIN_PASSWORD, { scope: 'openid offline_access' });
    const r = await call(s.base, 'GET', 'auth/me', { token: t.refresh_token });
    expect(r.status).toBe(401);
  });
});

describe('createUser', () => {
  it('an admin creates a user; the user signs in; a non-admin cannot create users', async () => {
    const admin = await signIn(s.base);
    const create = await call(s.base, 'POST', 'graphql', {
      token: admin.access_token,
      headers: { 'content-type': 'application/json' },
      body: {
        query: 'mutation($e:String!,$p:String!){ createUser(email:$e,password:$p,admin:false){ id email } }',
        variables: { e: 'member1@example.com', p: 'member-password-1' },
      },
    });
    expect(create.status).toBe(200);
    expect(create.body.errors).toBeUndefined();
    expect(create.body.data.createUser.email).toBe('member1@example.com');
    const member = await signIn(s.base, 'member1@example.com', 'member-password-1');
    const denied = await call(s.base, 'POST', 'graphql', {
      token: member.access_token,
      headers: { 'content-type': 'application/json' },
      body: {
        query: 'mutation($e:String!,$p:String!){ createUser(email:$e,password:$p,admin:true){ id } }',
        variables: { e: 'member2@example.com', p: 'member-password-2' },
      },
    });
    expect(denied.body.data).toBeNull();
    expect(denied.body.errors[0].message).toMatch(/admin/i);
    expect(
      await s.services.db.prisma.user.findUnique({ where: { email: 'member2@example.com' } }),
    ).toBeNull();
  });

  it('without a token createUser is refused', async () => {
    const r = await call(s.base, 'POST', 'graphql', {
      headers: { 'content-type': 'application/json' },
      body: { query: 'mutation{ createUser(email:"x@example.com",password:"abcdefgh1"){ id } }' },
    });
    expect(r.body.errors[0].message).toMatch(/auth|sign/i);
  });
});

describe('bearer token checks', () => {
  it('a garbage token is 401 with WWW-Authenticate', async () => {
    const r = await call(s.base, 'GET', 'auth/me', { token: 'not.a.jwt' });
    expect(r.status).toBe(401);
    expect(r.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect(r.body.resourceType).toBe('OperationOutcome');
    expect(r.body.issue[0].code).toBe('login');
  });

  it('no token on a protected path is 401 with WWW-Authenticate', async () => {
    const r = await call(s.base, 'GET', 'auth/me');
    expect(r.status).toBe(401);
    expect(r.headers.get('www-authenticate')).toMatch(/^Bearer /);
  });

  it('a well-formed token signed by another key, with alg none, or HS256 over the public key is 401', async () => {
    const t = await signIn(s.base);
    const header = decodeProtectedHeader(t.access_token);
    const claims = decodeJwt(t.access_token);
    expect(header).toMatchObject({ alg: 'ES256', typ: 'JWT' });
    expect(typeof header.kid).toBe('string');
    // The same header (kid included) and claims as the server's token: only the signature differs.
    const foreign = (await generateKeyPair('ES256')).privateKey;
    const otherKey = await new SignJWT(claims).setProtectedHeader({ ...header, alg: 'ES256' }).sign(foreign);
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const none = `${b64({ ...header, alg: 'none' })}.${b64(claims)}.`;
    // HS256 keyed with what the server publishes (the algorithm-confusion attack): its JWK and its PEM.
    const jwks = await call(s.base, 'GET', '.well-known/jwks.json');
    expect(jwks.status).toBe(200);
    const jwk = jwks.body.keys[0];
    expect(jwk.kid ?? header.kid).toBe(header.kid);
    const pem = crypto.createPublicKey({ key: jwk, format: 'jwk' }).export({ type: 'spki', format: 'pem' });
    const hs256 = (secret: string) =>
      new SignJWT(claims)
        .setProtectedHeader({ ...header, alg: 'HS256' })
        .sign(new TextEncoder().encode(secret));
    const forged = {
      otherKey,
      none,
      hs256Pem: await hs256(String(pem)),
      hs256Jwk: await hs256(JSON.stringify(jwk)),
    };
    // The server's own token passes the same check: the refusals below are about the signature alone.
    expect((await call(s.base, 'GET', 'auth/me', { token: t.access_token })).status).toBe(200);
    for (const [kind, token] of Object.entries(forged)) {
      const r = await call(s.base, 'GET', 'auth/me', { token });
      expect({ kind, status: r.status }).toEqual({ kind, status: 401 });
      expect(r.headers.get('www-authenticate')).toMatch(/^Bearer .*error="invalid_token"/);
      expect(r.body.resourceType).toBe('OperationOutcome');
      expect(r.body.issue[0].code).toBe('login');
      // Under /oauth2 the same refusal is OAuth2 error JSON.
      const o = await call(s.base, 'POST', 'oauth2/logout', { token });
      expect({ kind, status: o.status, error: o.body.error }).toEqual({
        kind,
        status: 401,
        error: 'invalid_token',
      });
      expect(o.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
    }
  });
});

describe('expiry', () => {
  const short = useTestServer({
    config: {
      sessionLifetimeSec: 1,
      accessTokenLifetimeSec: 1,
      authCodeLifetimeSec: 2,
      refreshTokenLifetimeSec: 1,
    },
  });

  it('an authorization code past AUTH_CODE_LIFETIME and a refresh token past REFRESH_TOKEN_LIFETIME are invalid_grant', async () => {
    const l = await login(short.base);
    const offline = await signIn(short.base, ADMIN_EMAIL, ADMIN_PASSWORD, { scope: 'openid offline_access' });
    expect(offline.refresh_token).toBeTruthy();
    // Both lifetimes run out (the code's 2 s, the refresh token's 1 s rounded up to the next whole second).
    await new Promise((r) => setTimeout(r, 2500));
    const code = await token(short.base, {
      grant_type: 'authorization_code',
      code: l.code,
      code_verifier: l.verifier,
    });
    expect({ status: code.status, ...code.body }).toEqual({
      status: 400,
      error: 'invalid_grant',
      error_description: 'Authorization code has expired',
    });
    const refresh = await token(short.base, {
      grant_type: 'refresh_token',
      refresh_token: offline.refresh_token!,
    });
    expect(refresh.status).toBe(400);
    expect(refresh.body.error).toBe('invalid_grant');
  });

  it('an expired access token is 401 with WWW-Authenticate', async () => {
    const t = await signIn(short.base);
    expect(t.expires_in).toBe(1);
    expect((await call(short.base, 'GET', 'auth/me', { token: t.access_token })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 2100));
    const r = await call(short.base, 'GET', 'auth/me', { token: t.access_token });
    expect(r.status).toBe(401);
    expect(r.headers.get('www-authenticate')).toMatch(/invalid_token/);
    const row = await short.services.db.prisma.login.findUnique({ where: { id: t.loginId } });
    expect(row?.revokedAt).toBeNull();
  });
});
