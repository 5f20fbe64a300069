// A second factor (issue 24, item 4): TOTP enrolment (otpauth URI and QR code, confirmed by a current code, with
// recovery codes shown once), sign-in that asks for the code (/auth/login answers mfaRequired, /auth/mfa/verify
// completes it; wrong codes throttled, a code good once, a recovery code good once), disabling it with the password
// re-checked, and a project setting that makes it mandatory (members without one enrol at sign-in). Codes are
// computed here with otplib from the secret in the URI, as an authenticator app would.
import crypto from 'node:crypto';
import { MedplumClient } from '@medplum/core';
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, CLIENT_ID, CLIENT_SECRET, signIn, useTestServer, withTestServer } from '../helpers/server.js';
import { addUser, createProject, type Account, type ProjectAdmin } from '../helpers/projects.js';

const s = useTestServer({
  signIn: true,
  config: {
    trustProxy: true,
    loginThrottle: { perSubjectAndAddress: 3, perAddress: 50, perSubject: 20, windowSec: 60 },
    mfaThrottle: { perSubjectAndAddress: 3, perAddress: 50, perSubject: 5, windowSec: 60 },
  },
});
let admin: ProjectAdmin;

beforeAll(async () => {
  admin = await createProject(s.base, s.token, 'MFA project');
  // MedplumClient on Node warns once per sign-in that it falls back to PKCE plain (medplum-client.test.ts).
  const warn = console.warn.bind(console);
  vi.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => {
    if (typeof args[0] === 'string' && args[0].startsWith('Failed to hash code verifier')) return;
    warn(...args);
  });
});
afterAll(() => {
  vi.restoreAllMocks();
});

const json = { 'content-type': 'application/json' };
const post = (path: string, body: unknown, opts: { token?: string; from?: string } = {}) =>
  call(s.base, 'POST', path, {
    token: opts.token,
    body,
    headers: opts.from ? { ...json, 'x-forwarded-for': opts.from } : json,
  });
const get = (path: string, token: string) => call(s.base, 'GET', path, { token });
const gql = (token: string | undefined, query: string, variables: Record<string, unknown> = {}) =>
  call(s.base, 'POST', 'graphql', { token, body: { query, variables }, headers: json });

/** The code an authenticator app shows `steps` time steps from now. */
const codeAt = (secret: string, steps = 0) =>
  generate({ secret, epoch: Math.floor(Date.now() / 1000) + steps * 30 });

/** A 6-digit code that is no code of the secret around now. */
async function wrongCode(secret: string): Promise<string> {
  const valid = new Set(await Promise.all([-2, -1, 0, 1, 2].map((n) => codeAt(secret, n))));
  for (let i = 0; ; i++) {
    const c = String(i).padStart(6, '0');
    if (!valid.has(c)) return c;
  }
}

const secretOf = (uri: string) => new URL(uri).searchParams.get('secret') ?? '';

/** POST /auth/login with PKCE S256; the verifier for the exchange. */
async function startLogin(email: string, password: string, from?: string) {
  const verifier = crypto.randomBytes(32).toString('base64url');
  const r = await post(
    'auth/login',
    {
      email,
      password,
      codeChallenge: crypto.createHash('sha256').update(verifier).digest('base64url'),
      codeChallengeMethod: 'S256',
    },
    { from },
  );
  return { ...r, verifier };
}

/** The token endpoint's answer to an authorization code. */
const exchange = (code: string, verifier: string) =>
  call(s.base, 'POST', 'oauth2/token', {
    raw: new URLSearchParams({ grant_type: 'authorization_code', code, code_verifier: verifier }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });

/** Enrols the account through REST (status, then a current code); its secret and recovery codes. */
async function enrol(account: Account): Promise<{ secret: string; recoveryCodes: string[] }> {
  const status = await get('auth/mfa/status', account.token);
  expect(status.status, status.text).toBe(200);
  const secret = secretOf(status.body.enrollUri);
  const r = await post('auth/mfa/enroll', { token: await codeAt(secret) }, { token: account.token });
  expect(r.status, r.text).toBe(200);
  return { secret, recoveryCodes: r.body.recoveryCodes };
}

/** Signs in with the password and a second-factor token; the access token. */
async function signInWithCode(account: Account, token: string): Promise<string> {
  const started = await startLogin(account.email, account.password);
  expect(started.status, started.text).toBe(200);
  expect(started.body.mfaRequired).toBe(true);
  const verified = await post('auth/mfa/verify', { login: started.body.login, token });
  expect(verified.status, verified.text).toBe(200);
  const tokens = await exchange(verified.body.code, started.verifier);
  expect(tokens.status, tokens.text).toBe(200);
  return tokens.body.access_token;
}

const me = async (token: string) => (await get('auth/me', token)).body;

describe('enrolment', () => {
  it('status gives an otpauth URI and its QR code; a current code confirms it and gives 10 recovery codes once', async () => {
    const user = await addUser(s.base, admin.token);
    expect((await me(user.token)).security.mfaEnrolled).toBe(false);
    const status = await get('auth/mfa/status', user.token);
    expect(status.status, status.text).toBe(200);
    expect(status.headers.get('cache-control')).toBe('no-store');
    expect(status.body.enrolled).toBe(false);
    const uri = new URL(status.body.enrollUri);
    expect(uri.protocol).toBe('otpauth:');
    expect(uri.host).toBe('totp');
    // The issuer (MFA_ISSUER unset): the host name of BASE_URL.
    const issuer = new URL(s.services.config.baseUrl).hostname;
    expect(decodeURIComponent(uri.pathname)).toBe(`/${issuer}:${user.email}`);
    expect(uri.searchParams.get('issuer')).toBe(issuer);
    // SHA-1, 6 digits, 30 s: the Key URI format's defaults, so the URI names none of them.
    expect([...uri.searchParams.keys()].sort()).toEqual(['issuer', 'secret']);
    expect(secretOf(status.body.enrollUri)).toMatch(/^[A-Z2-7]{32}$/);
    expect(status.body.enrollQrCode).toMatch(/^data:image\/png;base64,[A-Za-z0-9+/]+=*$/);
    // Asked again before confirming: the same secret (a code scanned once stays good).
    expect((await get('auth/mfa/status', user.token)).body.enrollUri).toBe(status.body.enrollUri);

    const secret = secretOf(status.body.enrollUri);
    const wrong = await post('auth/mfa/enroll', { token: await wrongCode(secret) }, { token: user.token });
    expect(wrong.status, wrong.text).toBe(400);
    expect(wrong.body.issue[0].expression).toEqual(['token']);
    expect((await me(user.token)).security.mfaEnrolled).toBe(false);

    const r = await post('auth/mfa/enroll', { token: await codeAt(secret) }, { token: user.token });
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.body.enrolled).toBe(true);
    expect(r.body.recoveryCodes).toHaveLength(10);
    for (const c of r.body.recoveryCodes) expect(c).toMatch(/^[a-z2-7]{4}(-[a-z2-7]{4}){3}$/);
    expect(new Set(r.body.recoveryCodes).size).toBe(10);

    expect((await me(user.token)).security.mfaEnrolled).toBe(true);
    const after = await get('auth/mfa/status', user.token);
    expect(after.body).toEqual({ enrolled: true, recoveryCodesLeft: 10, required: false });
    // The secret is never shown again, nor are the recovery codes.
    expect(after.text).not.toContain(secret);
    const again = await post('auth/mfa/enroll', { token: await codeAt(secret, 1) }, { token: user.token });
    expect(again.status, again.text).toBe(409);
    const restart = await gql(user.token, 'mutation { startMfaEnrollment { enrollUri } }');
    expect(restart.status, restart.text).toBe(409);
    expect(restart.text).not.toContain(secret);
  });

  it('through GraphQL: startMfaEnrollment, enrollMfa, mfaStatus, me.mfaEnrolled', async () => {
    const user = await addUser(s.base, admin.token);
    const started = await gql(user.token, 'mutation { startMfaEnrollment { enrollUri enrollQrCode } }');
    expect(started.status, started.text).toBe(200);
    const secret = secretOf(started.body.data.startMfaEnrollment.enrollUri);
    const done = await gql(user.token, 'mutation($t: String!) { enrollMfa(token: $t) }', {
      t: await codeAt(secret),
    });
    expect(done.status, done.text).toBe(200);
    expect(done.body.data.enrollMfa).toHaveLength(10);
    const status = await gql(
      user.token,
      '{ mfaStatus { enrolled recoveryCodesLeft required } me { mfaEnrolled } }',
    );
    expect(status.body.data).toEqual({
      mfaStatus: { enrolled: true, recoveryCodesLeft: 10, required: false },
      me: { mfaEnrolled: true },
    });
  });

  it('a client application has no second factor (403); no token is a 401', async () => {
    const client = await call(s.base, 'POST', 'oauth2/token', {
      raw: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
      }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(client.status, client.text).toBe(200);
    expect((await get('auth/mfa/status', client.body.access_token)).status).toBe(403);
    expect(
      (await post('auth/mfa/enroll', { token: '123456' }, { token: client.body.access_token })).status,
    ).toBe(403);
    expect((await me(client.body.access_token)).security.mfaEnrolled).toBe(false);
    expect((await call(s.base, 'GET', 'auth/mfa/status')).status).toBe(401);
    expect((await post('auth/mfa/enroll', { token: '123456' })).status).toBe(401);
    expect((await post('auth/mfa/disable', { password: 'x' })).status).toBe(401);
  });
});

describe('sign-in with the second factor', () => {
  it('asks for the code: no authorization code until a right one; the code is good once', async () => {
    const user = await addUser(s.base, admin.token);
    const { secret } = await enrol(user);

    const started = await startLogin(user.email, user.password);
    expect(started.status, started.text).toBe(200);
    expect(started.body).toEqual({ login: started.body.login, mfaRequired: true });
    // The waiting sign-in holds no code: nothing for the token endpoint to redeem.
    const row = await s.services.db.prisma.login.findUnique({ where: { id: started.body.login } });
    expect(row?.codeHash).toBeNull();
    const early = await exchange(started.body.login, started.verifier);
    expect(early.status, early.text).toBe(400);
    expect(early.body.error).toBe('invalid_grant');

    // The enrolment used the current step's code; the next step's is the next code the app shows.
    const code = await codeAt(secret, 1);
    const verified = await post('auth/mfa/verify', { login: started.body.login, token: code });
    expect(verified.status, verified.text).toBe(200);
    expect(verified.headers.get('cache-control')).toBe('no-store');
    expect(verified.body.login).toBe(started.body.login);
    const tokens = await exchange(verified.body.code, started.verifier);
    expect(tokens.status, tokens.text).toBe(200);
    const mine = await me(tokens.body.access_token);
    expect(mine.security.mfaEnrolled).toBe(true);
    expect(mine.security.sessions.find((x: { current: boolean }) => x.current).authMethod).toBe(
      'password+totp',
    );

    // The same sign-in cannot complete twice.
    const twice = await post('auth/mfa/verify', { login: started.body.login, token: code });
    expect(twice.status, twice.text).toBe(400);
    expect(twice.body.issue[0].expression).toEqual(['login']);
    // The same code on another sign-in: refused (replay), as is the code before it.
    const other = await startLogin(user.email, user.password);
    const replay = await post('auth/mfa/verify', { login: other.body.login, token: code });
    expect(replay.status, replay.text).toBe(400);
    expect(replay.body.issue[0].details.text).toContain('already used');
    const older = await post('auth/mfa/verify', { login: other.body.login, token: await codeAt(secret, 0) });
    expect(older.status, older.text).toBe(400);
  });

  it('wrong codes: 400 naming token, then 429 with Retry-After per account and address, then per account', async () => {
    const user = await addUser(s.base, admin.token);
    const { secret } = await enrol(user);
    const started = await startLogin(user.email, user.password);
    const wrong = await wrongCode(secret);
    for (let i = 0; i < 3; i++) {
      const r = await post(
        'auth/mfa/verify',
        { login: started.body.login, token: wrong },
        { from: '198.51.100.20' },
      );
      expect(r.status, r.text).toBe(400);
      expect(r.body.issue[0].expression).toEqual(['token']);
    }
    const right = await codeAt(secret, 1);
    const blocked = await post(
      'auth/mfa/verify',
      { login: started.body.login, token: right },
      { from: '198.51.100.20' },
    );
    expect(blocked.status, blocked.text).toBe(429);
    expect(blocked.body.issue[0].code).toBe('throttled');
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    // A new sign-in from the same address is no way around it.
    const fresh = await startLogin(user.email, user.password, '198.51.100.20');
    expect(
      (await post('auth/mfa/verify', { login: fresh.body.login, token: right }, { from: '198.51.100.20' }))
        .status,
    ).toBe(429);
    // From elsewhere the holder still completes the sign-in...
    const ok = await post(
      'auth/mfa/verify',
      { login: started.body.login, token: right },
      { from: '203.0.113.20' },
    );
    expect(ok.status, ok.text).toBe(200);
    // ...until failures from many addresses reach the account's own limit (5 here).
    const next = await startLogin(user.email, user.password);
    for (const from of ['203.0.113.21', '203.0.113.22']) {
      const r = await post('auth/mfa/verify', { login: next.body.login, token: wrong }, { from });
      expect(r.status, r.text).toBe(400);
    }
    const limited = await post(
      'auth/mfa/verify',
      { login: next.body.login, token: wrong },
      { from: '203.0.113.23' },
    );
    expect(limited.status, limited.text).toBe(429);
  });

  it('a recovery code completes a sign-in once, however it is typed', async () => {
    const user = await addUser(s.base, admin.token);
    const { recoveryCodes } = await enrol(user);
    const typed = recoveryCodes[0].toUpperCase().replace(/-/g, ' ');
    const token = await signInWithCode(user, typed);
    const mine = await me(token);
    expect(mine.security.sessions.find((x: { current: boolean }) => x.current).authMethod).toBe(
      'password+recovery',
    );
    const again = await startLogin(user.email, user.password);
    const reused = await post('auth/mfa/verify', { login: again.body.login, token: recoveryCodes[0] });
    expect(reused.status, reused.text).toBe(400);
    expect(reused.body.issue[0].expression).toEqual(['token']);
    expect((await get('auth/mfa/status', token)).body.recoveryCodesLeft).toBe(9);
    // Another one still works.
    expect(await signInWithCode(user, recoveryCodes[1])).toBeTruthy();
  });

  it('MedplumClient: startLogin answers mfaRequired, auth/mfa/verify gives the code, processCode signs in', async () => {
    const user = await addUser(s.base, admin.token);
    const { secret } = await enrol(user);
    const medplum = new MedplumClient({ baseUrl: s.base, fetch: globalThis.fetch.bind(globalThis) });
    const login = await medplum.startLogin({ email: user.email, password: user.password });
    expect(login.mfaRequired).toBe(true);
    expect(login.code).toBeUndefined();
    const verified = await medplum.post('auth/mfa/verify', {
      login: login.login,
      token: await codeAt(secret, 1),
    });
    const profile = await medplum.processCode(verified.code);
    expect(profile?.resourceType).toBe('Practitioner');
    const mine = await medplum.get('auth/me', { cache: 'no-cache' });
    expect(mine.security.mfaEnrolled).toBe(true);
  });

  it('a sign-in waiting for its code expires after MFA_LOGIN_TTL', async () => {
    // A server of its own with a 1-second wait (the setting's floor is 30 s; overrides are not range-checked).
    await withTestServer({ config: { mfaLoginTtlSec: 1 } }, async (server) => {
      const owner = await createProject(server.base, (await signIn(server.base)).access_token, 'Expiry');
      const status = await call(server.base, 'GET', 'auth/mfa/status', { token: owner.token });
      const secret = secretOf(status.body.enrollUri);
      const enrolled = await call(server.base, 'POST', 'auth/mfa/enroll', {
        token: owner.token,
        body: { token: await codeAt(secret) },
        headers: json,
      });
      expect(enrolled.status, enrolled.text).toBe(200);
      const started = await call(server.base, 'POST', 'auth/login', {
        body: {
          email: owner.email,
          password: owner.password,
          codeChallenge: crypto.createHash('sha256').update('v'.repeat(43)).digest('base64url'),
          codeChallengeMethod: 'S256',
        },
        headers: json,
      });
      expect(started.body.mfaRequired).toBe(true);
      await new Promise((r) => setTimeout(r, 1300));
      const late = await call(server.base, 'POST', 'auth/mfa/verify', {
        body: { login: started.body.login, token: await codeAt(secret, 1) },
        headers: json,
      });
      expect(late.status, late.text).toBe(400);
      expect(late.body.issue[0].expression).toEqual(['login']);
      expect(late.body.issue[0].details.text).toContain('expired');
    });
  });

  it('malformed input is a 400 naming the field', async () => {
    const user = await addUser(s.base, admin.token);
    const started = await startLogin(user.email, user.password);
    const login = started.body.login as string;
    for (const [body, field] of [
      [{ token: '123456' }, 'login'],
      [{ login: 5, token: '123456' }, 'login'],
      [{ login: 'not-a-uuid', token: '123456' }, 'login'],
      [{ login: crypto.randomUUID(), token: '123456' }, 'login'],
      // A sign-in of a user without a factor is complete already: nothing to verify.
      [{ login, token: '123456' }, 'login'],
      [{ login: crypto.randomUUID() }, 'token'],
      [{ login: crypto.randomUUID(), token: 123456 }, 'token'],
    ] as const) {
      const r = await post('auth/mfa/verify', body);
      expect(r.status, `${JSON.stringify(body)}: ${r.text}`).toBe(400);
      expect(r.body.issue[0].expression).toEqual([field]);
    }
    const enrolled = await addUser(s.base, admin.token);
    await enrol(enrolled);
    const waiting = (await startLogin(enrolled.email, enrolled.password)).body.login;
    for (const token of ['abc', '12345', '1234567', '１２３４５６', 'x'.repeat(5000)]) {
      const r = await post('auth/mfa/verify', { login: waiting, token });
      expect(r.status, r.text).toBe(400);
      expect(r.body.issue[0].expression).toEqual(['token']);
    }
    for (const body of [{}, { token: 7 }, { token: 'x'.repeat(100) }]) {
      const r = await post('auth/mfa/enroll', body, { token: user.token });
      expect(r.status, r.text).toBe(400);
      expect(r.body.issue[0].expression).toEqual(['token']);
    }
    expect((await post('auth/mfa/verify', [1])).status).toBe(400);
    // A NUL character is refused by the JSON body parser, before anything looks at the fields.
    expect((await post('auth/mfa/verify', { login: waiting, token: '12345\u0000' })).status).toBe(400);
    expect((await post('auth/mfa/verify', { login: '\u0000', token: '123456' })).status).toBe(400);
    const graphqlMissing = await gql(undefined, 'mutation { verifyMfa(login: "x") { code } }');
    expect(graphqlMissing.body.errors[0].message).toContain('token');
  });
});

describe('disabling it', () => {
  it('needs the password (wrong: 400, then throttled) or a current code; sign-in then gives a code at once', async () => {
    const user = await addUser(s.base, admin.token);
    const { secret } = await enrol(user);
    const token = await signInWithCode(user, await codeAt(secret, 1));
    for (const [body, field] of [
      [{}, 'password'],
      [{ password: 5 }, 'password'],
      [{ password: 'not-the-password' }, 'password'],
    ] as const) {
      const r = await post('auth/mfa/disable', body, { token });
      expect(r.status, r.text).toBe(400);
      expect(r.body.issue[0].expression).toEqual([field]);
    }
    for (let i = 0; i < 2; i++)
      expect((await post('auth/mfa/disable', { password: `wrong-${i}` }, { token })).status).toBe(400);
    const blocked = await post('auth/mfa/disable', { password: user.password }, { token });
    expect(blocked.status, blocked.text).toBe(429);
    expect((await me(token)).security.mfaEnrolled).toBe(true);

    // From another address (the limit is per account and address), the right password disables it.
    const done = await call(s.base, 'POST', 'auth/mfa/disable', {
      token,
      body: { password: user.password },
      headers: { ...json, 'x-forwarded-for': '203.0.113.40' },
    });
    expect(done.status, done.text).toBe(200);
    expect((await me(token)).security.mfaEnrolled).toBe(false);
    const plain = await startLogin(user.email, user.password);
    expect(plain.body.code).toBeTruthy();
    expect(plain.body.mfaRequired).toBeUndefined();
    // A new enrolment has a new secret: the old device is no use.
    const status = await get('auth/mfa/status', token);
    expect(secretOf(status.body.enrollUri)).not.toBe(secret);
    expect((await post('auth/mfa/disable', { password: user.password }, { token })).status).toBe(409);
  });

  it('with a current code instead (GraphQL disableMfa)', async () => {
    const user = await addUser(s.base, admin.token);
    const { secret } = await enrol(user);
    const wrong = await gql(user.token, 'mutation($t: String) { disableMfa(token: $t) }', {
      t: await wrongCode(secret),
    });
    expect(wrong.status, wrong.text).toBe(400);
    const r = await gql(user.token, 'mutation($t: String) { disableMfa(token: $t) }', {
      t: await codeAt(secret, 1),
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body.data.disableMfa).toBe(true);
  });
});

describe('a project that requires a second factor', () => {
  const setRequired = (token: string, required: boolean, projectId?: string) =>
    gql(
      token,
      'mutation($r: Boolean!, $p: ID) { setProjectMfaRequired(required: $r, projectId: $p) { projectId mfaRequired sessionsEnded } }',
      { r: required, p: projectId },
    );

  it('members without one enrol at sign-in; their open sessions end; only its admins may set it', async () => {
    const owner = await createProject(s.base, s.token, 'Strict project');
    const member = await addUser(s.base, owner.token);
    const other = await createProject(s.base, s.token, 'Other project');

    // Only an admin of the project: a member gets 403, another project's admin 404, a malformed id 400.
    expect((await setRequired(member.token, true)).status).toBe(403);
    const foreign = await setRequired(other.token, true, owner.projectId);
    expect(foreign.status, foreign.text).toBe(404);
    const malformed = await setRequired(owner.token, true, 'nope');
    expect(malformed.status, malformed.text).toBe(400);
    expect(malformed.body.errors[0].extensions.expression).toEqual(['projectId']);
    const unchanged = await gql(member.token, '{ me { project { mfaRequired } } }');
    expect(unchanged.body.data.me.project.mfaRequired).toBe(false);

    const set = await setRequired(owner.token, true, owner.projectId);
    expect(set.status, set.text).toBe(200);
    expect(set.body.data.setProjectMfaRequired.mfaRequired).toBe(true);
    // The member's session (and the one createProject's helper opened for the admin before this one) ended.
    expect(set.body.data.setProjectMfaRequired.sessionsEnded).toBeGreaterThanOrEqual(1);
    expect((await get('auth/me', member.token)).status).toBe(401);
    // The admin's own session goes on; the other project is untouched.
    expect(
      (await gql(owner.token, '{ me { project { mfaRequired } } }')).body.data.me.project.mfaRequired,
    ).toBe(true);
    expect(
      (await gql(other.token, '{ me { project { mfaRequired } } }')).body.data.me.project.mfaRequired,
    ).toBe(false);

    // Sign-in answers with the enrolment, and no code; the token endpoint has nothing to redeem.
    const started = await startLogin(member.email, member.password);
    expect(started.status, started.text).toBe(200);
    expect(started.body.mfaEnrollRequired).toBe(true);
    expect(started.body.code).toBeUndefined();
    expect(started.body.enrollQrCode).toMatch(/^data:image\/png;base64,/);
    const secret = secretOf(started.body.enrollUri);
    const notYet = await post('auth/mfa/verify', { login: started.body.login, token: await codeAt(secret) });
    expect(notYet.status, notYet.text).toBe(409);
    const wrong = await post('auth/mfa/login-enroll', {
      login: started.body.login,
      token: await wrongCode(secret),
    });
    expect(wrong.status, wrong.text).toBe(400);
    expect(wrong.body.issue[0].expression).toEqual(['token']);
    const enrolled = await post('auth/mfa/login-enroll', {
      login: started.body.login,
      token: await codeAt(secret),
    });
    expect(enrolled.status, enrolled.text).toBe(200);
    expect(enrolled.body.recoveryCodes).toHaveLength(10);
    const tokens = await exchange(enrolled.body.code, started.verifier);
    expect(tokens.status, tokens.text).toBe(200);
    const memberToken = tokens.body.access_token as string;
    expect((await me(memberToken)).security.mfaEnrolled).toBe(true);
    expect((await get('auth/mfa/status', memberToken)).body.required).toBe(true);

    // Enrolled now: the next sign-in asks for a code; the factor cannot be removed while the project requires it.
    const next = await startLogin(member.email, member.password);
    expect(next.body.mfaRequired).toBe(true);
    const refused = await post('auth/mfa/disable', { password: member.password }, { token: memberToken });
    expect(refused.status, refused.text).toBe(409);

    // Turned off again (no session ends then): the member may remove it.
    const off = await setRequired(owner.token, false);
    expect(off.body.data.setProjectMfaRequired).toEqual({
      projectId: owner.projectId,
      mfaRequired: false,
      sessionsEnded: 0,
    });
    expect(
      (await post('auth/mfa/disable', { password: member.password }, { token: memberToken })).status,
    ).toBe(200);
  });
});
