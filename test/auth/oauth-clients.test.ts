// Client binding on the token endpoint (RFC 6749 3.2.1 and 4.1.3) and PKCE (RFC 7636 4.1, RFC 9700 2.1.1):
// a named client authenticates, client_id is never free text copied into tokens, PKCE is required and well formed.
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  CLIENT_ID,
  CLIENT_SECRET,
  call,
  useTestServer,
  withTestServer,
} from '../helpers/server.js';
import { createProject } from '../helpers/projects.js';

const s = useTestServer();

function pkce() {
  const verifier = crypto.randomBytes(32).toString('base64url');
  return { verifier, challenge: crypto.createHash('sha256').update(verifier).digest('base64url') };
}

function loginRaw(body: Record<string, unknown>, email = ADMIN_EMAIL, password = ADMIN_PASSWORD) {
  return call(s.base, 'POST', 'auth/login', {
    body: { email, password, ...body },
    headers: { 'content-type': 'application/json' },
  });
}

/** Signs in with S256 PKCE (optionally naming a client); returns the code and its verifier. */
async function login(extra: Record<string, unknown> = {}, email = ADMIN_EMAIL, password = ADMIN_PASSWORD) {
  const { verifier, challenge } = pkce();
  const r = await loginRaw(
    { codeChallenge: challenge, codeChallengeMethod: 'S256', ...extra },
    email,
    password,
  );
  expect(r.status).toBe(200);
  return { code: r.body.code as string, verifier, login: r.body.login as string };
}

function token(form: Record<string, string>, headers: Record<string, string> = {}) {
  return call(s.base, 'POST', 'oauth2/token', {
    raw: new URLSearchParams(form).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
  });
}

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
const claims = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString('utf8'));

describe('authorization_code: the named client authenticates', () => {
  it('a wrong client_secret is 401 invalid_client, and the code stays good for the real client', async () => {
    const l = await login({ clientId: CLIENT_ID });
    const form = {
      grant_type: 'authorization_code',
      code: l.code,
      code_verifier: l.verifier,
      client_id: CLIENT_ID,
    };
    const bad = await token({ ...form, client_secret: 'wrong-secret' });
    expect(bad.status).toBe(401);
    expect(bad.body.error).toBe('invalid_client');
    const badBasic = await token(
      { grant_type: 'authorization_code', code: l.code, code_verifier: l.verifier },
      { authorization: basic(CLIENT_ID, 'wrong-secret') },
    );
    expect(badBasic.status).toBe(401);
    expect(badBasic.headers.get('www-authenticate')).toBeTruthy();
    const good = await token({ ...form, client_secret: CLIENT_SECRET });
    expect(good.status).toBe(200);
    expect(claims(good.body.access_token).client_id).toBe(CLIENT_ID);
  });

  it('a code issued to a client is refused when the client does not authenticate (client_id alone)', async () => {
    const l = await login({ clientId: CLIENT_ID });
    const r = await token({
      grant_type: 'authorization_code',
      code: l.code,
      code_verifier: l.verifier,
      client_id: CLIENT_ID,
    });
    expect(r.status).toBe(401);
    expect(r.body.error).toBe('invalid_client');
    expect(r.body.error_description).toMatch(/client_secret/);
    // Nor with no client at all: the code was issued to a client.
    const none = await token({ grant_type: 'authorization_code', code: l.code, code_verifier: l.verifier });
    expect(none.status).toBe(400);
    expect(none.body.error).toBe('invalid_grant');
  });

  it('client_id is not free text: an unknown client_id is 401 and never lands in a token', async () => {
    const l = await login();
    const r = await token({
      grant_type: 'authorization_code',
      code: l.code,
      code_verifier: l.verifier,
      client_id: 'evil-client',
    });
    expect(r.status).toBe(401);
    expect(r.body.error).toBe('invalid_client');
    expect(r.body.access_token).toBeUndefined();
    // The same code, redeemed without a client (as MedplumClient does with client_id=''), has no client_id claim.
    const ok = await token({
      grant_type: 'authorization_code',
      code: l.code,
      code_verifier: l.verifier,
      client_id: '',
    });
    expect(ok.status).toBe(200);
    expect(claims(ok.body.access_token).client_id).toBeUndefined();
  });

  it("another project's client cannot redeem this project's code, even with its own secret", async () => {
    const admin = await login();
    const tokens = await token({
      grant_type: 'authorization_code',
      code: admin.code,
      code_verifier: admin.verifier,
    });
    const b = await createProject(s.base, tokens.body.access_token, 'Client binding B');
    // Project B's own confidential client (there is no client-management API yet: inserted as the bootstrap does).
    const bClient = crypto.randomUUID();
    const bSecret = 'project-b-client-secret';
    await s.services.db.sql(
      `INSERT INTO "ClientApplication" (id, "projectId", name, "secretHash") VALUES ($1, $2, 'B client', $3)`,
      [bClient, b.projectId, crypto.createHash('sha256').update(bSecret).digest('hex')],
    );
    // A's admin signs in without a client; B's client tries to redeem the code.
    const l = await login();
    const r = await token(
      { grant_type: 'authorization_code', code: l.code, code_verifier: l.verifier },
      { authorization: basic(bClient, bSecret) },
    );
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('invalid_grant');
    // And A's admin cannot bind a sign-in to B's client.
    const cross = await loginRaw({ ...pkceBody(), clientId: bClient });
    expect(cross.status).toBe(400);
    expect(cross.body.issue[0].expression).toEqual(['clientId']);
  });
});

function pkceBody() {
  const { challenge } = pkce();
  return { codeChallenge: challenge, codeChallengeMethod: 'S256' };
}

describe('refresh_token: the session client authenticates', () => {
  async function clientSession() {
    const l = await login({ clientId: CLIENT_ID, scope: 'openid offline_access' });
    const t = await token(
      { grant_type: 'authorization_code', code: l.code, code_verifier: l.verifier },
      { authorization: basic(CLIENT_ID, CLIENT_SECRET) },
    );
    expect(t.status).toBe(200);
    return t.body as { access_token: string; refresh_token: string };
  }

  it('a wrong client_secret is 401 invalid_client and does not use up the refresh token', async () => {
    const t = await clientSession();
    const bad = await token({
      grant_type: 'refresh_token',
      refresh_token: t.refresh_token,
      client_id: CLIENT_ID,
      client_secret: 'wrong-secret',
    });
    expect(bad.status).toBe(401);
    expect(bad.body.error).toBe('invalid_client');
    // Without any client credentials: refused too.
    const none = await token({ grant_type: 'refresh_token', refresh_token: t.refresh_token });
    expect(none.status).toBe(401);
    expect(none.body.error).toBe('invalid_client');
    // The session is intact and the right client refreshes.
    expect((await call(s.base, 'GET', 'auth/me', { token: t.access_token })).status).toBe(200);
    const good = await token(
      { grant_type: 'refresh_token', refresh_token: t.refresh_token },
      { authorization: basic(CLIENT_ID, CLIENT_SECRET) },
    );
    expect(good.status).toBe(200);
    expect(claims(good.body.access_token).client_id).toBe(CLIENT_ID);
  });

  it('a wrong client_secret on a session without a client is 401 too', async () => {
    const l = await login({ scope: 'openid offline_access' });
    const t = await token({ grant_type: 'authorization_code', code: l.code, code_verifier: l.verifier });
    const bad = await token({
      grant_type: 'refresh_token',
      refresh_token: t.body.refresh_token,
      client_id: CLIENT_ID,
      client_secret: 'wrong-secret',
    });
    expect(bad.status).toBe(401);
    expect(bad.body.error).toBe('invalid_client');
  });
});

describe('PKCE (RFC 7636)', () => {
  it('a sign-in without a code challenge is 400 naming codeChallenge', async () => {
    const r = await loginRaw({});
    expect(r.status).toBe(400);
    expect(r.body.issue[0].expression).toEqual(['codeChallenge']);
    expect(await s.services.db.prisma.login.count({ where: { codeChallenge: null } })).toBe(0);
  });

  it('a 3-character plain verifier is refused at sign-in', async () => {
    const r = await loginRaw({ codeChallenge: 'abc', codeChallengeMethod: 'plain' });
    expect(r.status).toBe(400);
    expect(r.body.issue[0].expression).toEqual(['codeChallenge']);
    expect(r.body.issue[0].details.text).toMatch(/43-128/);
  });

  it('a malformed S256 challenge, an unknown method, and a missing method are 400', async () => {
    for (const body of [
      { codeChallenge: 'short', codeChallengeMethod: 'S256' },
      { codeChallenge: pkce().challenge, codeChallengeMethod: 'S512' },
      { codeChallenge: pkce().challenge },
    ]) {
      const r = await loginRaw(body);
      expect(r.status).toBe(400);
      expect(r.body.issue[0].expression?.[0]).toMatch(/^codeChallenge/);
    }
  });

  it('plain with a well-formed verifier works (MedplumClient on Node sends it); a short verifier at the token endpoint is invalid_request', async () => {
    const verifier = crypto.randomBytes(64).toString('hex').slice(0, 128);
    const r = await loginRaw({ codeChallenge: verifier, codeChallengeMethod: 'plain' });
    expect(r.status).toBe(200);
    const t = await token({ grant_type: 'authorization_code', code: r.body.code, code_verifier: verifier });
    expect(t.status).toBe(200);
    const l = await login();
    const short = await token({ grant_type: 'authorization_code', code: l.code, code_verifier: 'abc' });
    expect(short.status).toBe(400);
    expect(short.body.error).toBe('invalid_request');
    expect(short.body.error_description).toMatch(/43-128/);
  });

  it('PKCE_ALLOW_PLAIN=false refuses plain and the discovery document says S256 only', async () => {
    await withTestServer({ config: { pkceAllowPlain: false } }, async (strict) => {
      const verifier = crypto.randomBytes(48).toString('base64url');
      const r = await call(strict.base, 'POST', 'auth/login', {
        body: {
          email: ADMIN_EMAIL,
          password: ADMIN_PASSWORD,
          codeChallenge: verifier,
          codeChallengeMethod: 'plain',
        },
        headers: { 'content-type': 'application/json' },
      });
      expect(r.status).toBe(400);
      expect(r.body.issue[0].expression).toEqual(['codeChallengeMethod']);
      const d = await call(strict.base, 'GET', '.well-known/openid-configuration');
      expect(d.body.code_challenge_methods_supported).toEqual(['S256']);
    });
  }, 120_000);
});
