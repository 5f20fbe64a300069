// OpenID Connect through /oauth2/authorize (issue 24 item 5): the ID token (ES256, verified against the published
// JWKS with jose: iss, sub, aud, nonce, auth_time, amr, email by scope), the second-factor page (TOTP codes
// computed here with otplib; a wrong code, a code used twice, a recovery code), the page for a project that
// requires a factor the user lacks, /oauth2/userinfo and the userInfo query, and the discovery document.
import { createLocalJWKSet, jwtVerify } from 'jose';
import { generate } from 'otplib';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, useTestServer } from '../helpers/server.js';
import { addUser, createProject, type Account, type ProjectAdmin } from '../helpers/projects.js';
import {
  createClient,
  exchangeCode,
  FormBrowser,
  pkcePair,
  type AuthorizeAnswer,
  type TestClient,
} from '../helpers/authorize.js';

const s = useTestServer({ signIn: true, config: { trustProxy: true } });
const REDIRECT = 'http://localhost:8200/';
let admin: ProjectAdmin;
let app: TestClient;

const json = { 'content-type': 'application/json' };
const codeAt = (secret: string, steps = 0) =>
  generate({ secret, epoch: Math.floor(Date.now() / 1000) + steps * 30 });

/** Enrols a TOTP factor for the account (REST, as an app would); its secret and recovery codes. */
async function enrol(account: Account): Promise<{ secret: string; recoveryCodes: string[] }> {
  const status = await call(s.base, 'GET', 'auth/mfa/status', { token: account.token });
  const secret = new URL(status.body.enrollUri).searchParams.get('secret') ?? '';
  const r = await call(s.base, 'POST', 'auth/mfa/enroll', {
    token: account.token,
    body: { token: await codeAt(secret) },
    headers: json,
  });
  expect(r.status, r.text).toBe(200);
  return { secret, recoveryCodes: r.body.recoveryCodes };
}

beforeAll(async () => {
  admin = await createProject(s.base, s.token, 'OIDC project');
  app = await createClient(s.base, admin.token, [REDIRECT]);
});

/** The page, then the password form, in a browser of its own. */
async function start(account: Account, changes: Record<string, string> = {}) {
  const browser = new FormBrowser(s.base);
  const pkce = pkcePair();
  const page = await browser.open({
    response_type: 'code',
    client_id: app.id,
    redirect_uri: REDIRECT,
    state: 'xyz',
    code_challenge: pkce.challenge,
    code_challenge_method: 'S256',
    scope: 'openid profile email',
    ...changes,
  });
  expect(page.status, page.html).toBe(200);
  const answer = await browser.submit({ ...page.fields, email: account.email, password: account.password });
  return { browser, pkce, answer };
}

const codeOf = (a: AuthorizeAnswer) => new URL(a.location ?? '').searchParams.get('code') ?? '';

async function tokensFor(a: AuthorizeAnswer, verifier: string) {
  expect(a.status, a.html).toBe(303);
  const t = await exchangeCode(s.base, {
    code: codeOf(a),
    verifier,
    clientId: app.id,
    redirectUri: REDIRECT,
  });
  expect(t.status, t.text).toBe(200);
  return t.body;
}

async function verifyIdToken(idToken: string) {
  const jwks = await call(s.base, 'GET', '.well-known/jwks.json');
  return jwtVerify(idToken, createLocalJWKSet(jwks.body), {
    issuer: s.services.config.baseUrl,
    audience: app.id,
    algorithms: ['ES256'],
  });
}

describe('ID token', () => {
  it('verifies against /.well-known/jwks.json and carries sub, aud, nonce, auth_time, amr and email', async () => {
    const user = await addUser(s.base, admin.token);
    const before = Math.floor(Date.now() / 1000) - 1;
    const { answer, pkce } = await start(user, { nonce: 'nonce-123' });
    const body = await tokensFor(answer, pkce.verifier);
    const { payload, protectedHeader } = await verifyIdToken(body.id_token);
    expect(protectedHeader.alg).toBe('ES256');
    expect(payload.sub).toBe(user.userId);
    expect(payload.aud).toBe(app.id);
    expect(payload.nonce).toBe('nonce-123');
    expect(payload.amr).toEqual(['pwd']);
    expect(payload.email).toBe(user.email);
    expect(payload.auth_time).toBeGreaterThanOrEqual(before);
    expect(payload.exp! - payload.iat!).toBeGreaterThan(0);
    // The access token is not an ID token for this client: it has no aud, and the ID token is no access token.
    const me = await call(s.base, 'GET', 'auth/me', { token: body.id_token });
    expect(me.status).toBe(401);
  });

  it('no nonce asked: none in the token; no email scope: no email', async () => {
    const user = await addUser(s.base, admin.token);
    const { answer, pkce } = await start(user, { scope: 'openid' });
    const { payload } = await verifyIdToken((await tokensFor(answer, pkce.verifier)).id_token);
    expect(payload.nonce).toBeUndefined();
    expect(payload.email).toBeUndefined();
  });

  it('no openid scope: no ID token', async () => {
    const user = await addUser(s.base, admin.token);
    const { answer, pkce } = await start(user, { scope: 'offline_access' });
    const body = await tokensFor(answer, pkce.verifier);
    expect(body.id_token).toBeUndefined();
    expect(body.refresh_token).toBeTruthy();
  });
});

describe('second factor on the sign-in page', () => {
  let user: Account;
  let secret: string;
  let recoveryCodes: string[];
  beforeAll(async () => {
    user = await addUser(s.base, admin.token);
    ({ secret, recoveryCodes } = await enrol(user));
  });

  it('asks for the code; a wrong one shows the page again; a right one redirects; amr says otp', async () => {
    const { browser, pkce, answer } = await start(user, { nonce: 'n' });
    expect(answer.status).toBe(200);
    expect(answer.html).toContain('authenticator app');
    expect(answer.fields.step).toBe('mfa');
    expect(answer.fields.login).toBeTruthy();
    expect(answer.headers.get('cache-control')).toBe('no-store');
    const valid = new Set(await Promise.all([-2, -1, 0, 1, 2].map((n) => codeAt(secret, n))));
    const bad = ['000000', '111111', '222222'].find((c) => !valid.has(c)) ?? '333333';
    const wrong = await browser.submit({ ...answer.fields, token: bad });
    expect(wrong.status).toBe(400);
    expect(wrong.location).toBeNull();
    expect(wrong.fields.step).toBe('mfa');
    // The enrolment used the current step's code: the next step's (accepted within the window) signs in.
    const code = await codeAt(secret, 1);
    const ok = await browser.submit({ ...wrong.fields, token: code });
    const { payload } = await verifyIdToken((await tokensFor(ok, pkce.verifier)).id_token);
    expect(payload.amr).toEqual(['pwd', 'otp', 'mfa']);
    expect(payload.nonce).toBe('n');

    // The same code in a second sign-in is refused (a TOTP code is good once).
    const second = await start(user);
    const reused = await second.browser.submit({ ...second.answer.fields, token: code });
    expect(reused.status).toBe(400);
    expect(reused.html).toMatch(/already used/);
    expect(reused.location).toBeNull();
  });

  it('a recovery code completes it once', async () => {
    const first = await start(user);
    const ok = await first.browser.submit({ ...first.answer.fields, token: recoveryCodes[0] });
    const { payload } = await verifyIdToken((await tokensFor(ok, first.pkce.verifier)).id_token);
    expect(payload.amr).toEqual(['pwd', 'mfa']);
    const second = await start(user);
    const again = await second.browser.submit({ ...second.answer.fields, token: recoveryCodes[0] });
    expect(again.status).toBe(400);
  });

  it("the second step's form from another browser, or for another sign-in, is refused", async () => {
    const { answer } = await start(user);
    const other = new FormBrowser(s.base);
    await other.open({
      response_type: 'code',
      client_id: app.id,
      redirect_uri: REDIRECT,
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
    });
    expect((await other.submit({ ...answer.fields, token: await codeAt(secret, 2) })).status).toBe(403);
    const { browser, answer: mine } = await start(user);
    const swapped = await browser.submit({
      ...mine.fields,
      login: answer.fields.login,
      token: await codeAt(secret, 1),
    });
    expect(swapped.status).toBe(403);
  });

  it('a project that requires a factor the user lacks: enrol on the page, see the recovery codes, continue', async () => {
    const project = await createProject(s.base, s.token, 'MFA required');
    const required = await call(s.base, 'POST', 'graphql', {
      token: project.token,
      headers: json,
      body: { query: 'mutation { setProjectMfaRequired(required: true) { mfaRequired } }' },
    });
    expect(required.body.data?.setProjectMfaRequired.mfaRequired, required.text).toBe(true);
    const strictApp = await createClient(s.base, project.token, [REDIRECT]);
    const browser = new FormBrowser(s.base);
    const pkce = pkcePair();
    const page = await browser.open({
      response_type: 'code',
      client_id: strictApp.id,
      redirect_uri: REDIRECT,
      code_challenge: pkce.challenge,
      code_challenge_method: 'S256',
      state: 'e',
    });
    const enrol = await browser.submit({ ...page.fields, email: project.email, password: project.password });
    expect(enrol.status).toBe(200);
    expect(enrol.html).toContain('Set up your second factor');
    expect(enrol.html).toMatch(/<img src="data:image\/png;base64,/);
    const enrolSecret = new URL(enrol.fields.enroll_uri).searchParams.get('secret') ?? '';
    expect(enrol.html).toContain(enrolSecret);
    // A changed enrolment URI breaks the form's token.
    const tampered = await browser.submit({
      ...enrol.fields,
      enroll_uri: 'otpauth://totp/x?secret=AAAA',
      token: '1',
    });
    expect(tampered.status).toBe(403);
    const wrong = await browser.submit({ ...enrol.fields, token: 'abc' });
    expect(wrong.status).toBe(400);
    expect(wrong.html).toMatch(/<img src="data:image\/png;base64,/);
    expect(wrong.location).toBeNull();
    const codes = await browser.submit({ ...wrong.fields, token: await codeAt(enrolSecret) });
    expect(codes.status, codes.html).toBe(200);
    expect(codes.location).toBeNull();
    expect(codes.headers.get('cache-control')).toBe('no-store');
    expect(codes.html.match(/<li><code>/g)).toHaveLength(10);
    const done = await browser.submit(codes.fields);
    expect(done.status).toBe(303);
    const t = await exchangeCode(s.base, {
      code: codeOf(done),
      verifier: pkce.verifier,
      clientId: strictApp.id,
      redirectUri: REDIRECT,
    });
    expect(t.status, t.text).toBe(200);
    const jwks = await call(s.base, 'GET', '.well-known/jwks.json');
    const { payload } = await jwtVerify(t.body.id_token, createLocalJWKSet(jwks.body), {
      audience: strictApp.id,
    });
    expect(payload.amr).toEqual(['pwd', 'otp', 'mfa']);
    // Once the code is redeemed, Continue gives no other.
    const again = await browser.submit(codes.fields);
    expect(again.status).toBe(400);
    expect(again.location).toBeNull();
    // The renewal is not in the public schema.
    const direct = await call(s.base, 'POST', 'graphql', {
      headers: json,
      body: { query: `mutation { renewLoginCode(login: "${codes.fields.login}") { code } }` },
    });
    expect(direct.body.errors?.[0]?.message).toMatch(/renewLoginCode/);
  });
});

describe('userinfo', () => {
  it('answers the claims of the scope (GET and POST); the userInfo query the same', async () => {
    const user = await addUser(s.base, admin.token);
    const { answer, pkce } = await start(user);
    const token = (await tokensFor(answer, pkce.verifier)).access_token;
    const r = await call(s.base, 'GET', 'oauth2/userinfo', { token });
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.body).toEqual({ sub: user.userId, email: user.email });
    const p = await call(s.base, 'POST', 'oauth2/userinfo', { token });
    expect(p.body.sub).toBe(user.userId);
    const g = await call(s.base, 'POST', 'graphql', {
      token,
      headers: json,
      body: { query: '{ userInfo { sub email name } }' },
    });
    expect(g.body.data.userInfo).toEqual({ sub: user.userId, email: user.email, name: null });
  });

  it('openid scope only: sub alone', async () => {
    const user = await addUser(s.base, admin.token);
    const { answer, pkce } = await start(user, { scope: 'openid' });
    const token = (await tokensFor(answer, pkce.verifier)).access_token;
    expect((await call(s.base, 'GET', 'oauth2/userinfo', { token })).body).toEqual({ sub: user.userId });
  });

  it('no token or a bad one: 401 with WWW-Authenticate', async () => {
    for (const token of [undefined, 'not-a-token']) {
      const r = await call(s.base, 'GET', 'oauth2/userinfo', { token });
      expect(r.status).toBe(401);
      expect(r.headers.get('www-authenticate')).toMatch(/^Bearer /);
      expect(r.body.error).toBe('invalid_token');
    }
  });

  it("a client application's token: 403 insufficient_scope", async () => {
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: admin.clientId,
      client_secret: admin.clientSecret,
    });
    const t = await call(s.base, 'POST', 'oauth2/token', {
      raw: form.toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    const r = await call(s.base, 'GET', 'oauth2/userinfo', { token: t.body.access_token });
    expect(r.status).toBe(403);
    expect(r.body.error).toBe('insufficient_scope');
    expect(r.headers.get('www-authenticate')).toMatch(/insufficient_scope/);
  });
});

describe('discovery', () => {
  it('names the authorization and userinfo endpoints and the OIDC facts', async () => {
    const r = await call(s.base, 'GET', '.well-known/openid-configuration');
    const base = s.services.config.baseUrl;
    expect(r.body.authorization_endpoint).toBe(`${base}oauth2/authorize`);
    expect(r.body.userinfo_endpoint).toBe(`${base}oauth2/userinfo`);
    expect(r.body.response_types_supported).toEqual(['code']);
    expect(r.body.subject_types_supported).toEqual(['public']);
    expect(r.body.id_token_signing_alg_values_supported).toEqual(['ES256']);
    expect(r.body.scopes_supported).toEqual(expect.arrayContaining(['openid', 'email', 'profile']));
    expect(r.body.claims_supported).toEqual(expect.arrayContaining(['sub', 'nonce', 'amr', 'email']));
    expect(r.body.token_endpoint_auth_methods_supported).toContain('none');
  });
});
