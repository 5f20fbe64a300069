// Passwords (issue 24, item 3): a signed-in user changes their password with the current one (POST
// /auth/changepassword, Medplum's path, and GraphQL changePassword); every other session of the user ends at once,
// the current one goes on; wrong current passwords are throttled as sign-ins are; a client application has no
// password; and every new password (change, createUser, createProject) meets the policy: at least
// PASSWORD_MIN_LENGTH characters, at most 1,024, not one of the common passwords, not the account's address.
import { beforeAll, describe, expect, it } from 'vitest';
import { call, CLIENT_ID, CLIENT_SECRET, signIn, useTestServer } from '../helpers/server.js';
import { addUser, createProject, type Account } from '../helpers/projects.js';

const s = useTestServer({
  signIn: true,
  config: { loginThrottle: { perSubjectAndAddress: 3, perAddress: 50, perSubject: 20, windowSec: 60 } },
});
let admin: Account;

const change = (token: string, body: unknown) =>
  call(s.base, 'POST', 'auth/changepassword', {
    token,
    body,
    headers: { 'content-type': 'application/json' },
  });
const me = (token: string) => call(s.base, 'GET', 'auth/me', { token });
const gql = (token: string, query: string, variables: Record<string, unknown>) =>
  call(s.base, 'POST', 'graphql', {
    token,
    body: { query, variables },
    headers: { 'content-type': 'application/json' },
  });

/** The 400 of a refused password: names the field, never repeats the password. */
function expectRefused(r: Awaited<ReturnType<typeof call>>, field: string, says: string, password: string) {
  expect(r.status, r.text).toBe(400);
  expect(r.text).toContain(says);
  expect(r.text).not.toContain(password);
  const issue = r.body.issue?.[0] ?? r.body.errors?.[0]?.extensions;
  expect(JSON.stringify(issue)).toContain(field);
}

beforeAll(async () => {
  admin = await createProject(s.base, s.token, 'Passwords project');
});

describe('changing a password', () => {
  it('ends every other session at once, keeps the current one; the new password signs in, the old does not', async () => {
    const user = await addUser(s.base, admin.token);
    const other = await signIn(s.base, user.email, user.password, { scope: 'openid offline_access' });
    expect(other.refresh_token).toBeTruthy();
    const current = await signIn(s.base, user.email, user.password);
    const r = await change(current.access_token, {
      oldPassword: user.password,
      newPassword: 'a new long passphrase',
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body.resourceType).toBe('OperationOutcome');
    expect(r.body.issue[0].details.text).toBe('Password changed; 2 other sessions ended');
    // The sessions made with the old password (the one addUser made too) are refused on the next request.
    expect((await me(user.token)).status).toBe(401);
    expect((await me(other.access_token)).status).toBe(401);
    const refreshed = await call(s.base, 'POST', 'oauth2/token', {
      raw: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: other.refresh_token ?? '',
      }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(refreshed.status, refreshed.text).toBe(400);
    expect(refreshed.body.error).toBe('invalid_grant');
    expect((await me(current.access_token)).status).toBe(200);
    await expect(signIn(s.base, user.email, user.password)).rejects.toThrow(/login failed: 400/);
    expect((await signIn(s.base, user.email, 'a new long passphrase')).access_token).toBeTruthy();
  });

  it('through GraphQL: answers how many sessions ended', async () => {
    const user = await addUser(s.base, admin.token);
    const current = await signIn(s.base, user.email, user.password);
    const r = await gql(
      current.access_token,
      'mutation($o: String!, $n: String!) { changePassword(oldPassword: $o, newPassword: $n) }',
      { o: user.password, n: 'another long passphrase' },
    );
    expect(r.status, r.text).toBe(200);
    expect(r.body.data.changePassword).toBe(1);
  });

  it('a wrong current password is a 400 naming oldPassword, throttled like sign-ins (429 + Retry-After); nothing changes', async () => {
    const user = await addUser(s.base, admin.token);
    for (let i = 0; i < 3; i++) {
      const r = await change(user.token, {
        oldPassword: `wrong-password-${i}`,
        newPassword: 'a fine new passphrase',
      });
      expect(r.status, r.text).toBe(400);
      expect(r.body.issue[0].expression).toEqual(['oldPassword']);
    }
    const blocked = await change(user.token, {
      oldPassword: user.password,
      newPassword: 'a fine new passphrase',
    });
    expect(blocked.status, blocked.text).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    // Nothing changed: the old password still signs in, the session still works.
    expect((await signIn(s.base, user.email, user.password)).access_token).toBeTruthy();
    expect((await me(user.token)).status).toBe(200);
  });

  it('refuses a new password that breaks the policy, naming newPassword, and keeps the old one', async () => {
    const user = await addUser(s.base, admin.token);
    const local = user.email.slice(0, user.email.indexOf('@'));
    for (const [newPassword, says] of [
      ['short1', 'at least 8 characters'],
      ['password123', 'most common passwords'],
      ['Sunshine1', 'most common passwords'],
      [local, 'email address'],
      [user.email.toUpperCase(), 'email address'],
      ['zzzzzzzzzzzz', 'one character repeated'],
      ['x'.repeat(1024) + 'y', 'at most 1024 characters'],
      [user.password, 'differ from the current password'],
    ] as const) {
      expectRefused(
        await change(user.token, { oldPassword: user.password, newPassword }),
        'newPassword',
        says,
        newPassword,
      );
    }
    expect((await me(user.token)).status).toBe(200);
    expect((await signIn(s.base, user.email, user.password)).access_token).toBeTruthy();
  });

  it('malformed requests are 400s naming the field; no token is a 401; a client application gets 403', async () => {
    const user = await addUser(s.base, admin.token);
    for (const [body, field] of [
      [{ newPassword: 'a fine new passphrase' }, 'oldPassword'],
      [{ oldPassword: user.password }, 'newPassword'],
      [{ oldPassword: 5, newPassword: 'a fine new passphrase' }, 'oldPassword'],
      [{ oldPassword: 'x'.repeat(5000), newPassword: 'a fine new passphrase' }, 'oldPassword'],
    ] as const) {
      const r = await change(user.token, body);
      expect(r.status, r.text).toBe(400);
      expect(r.body.issue[0].expression).toEqual([field]);
    }
    expect((await change(user.token, [1])).status).toBe(400);
    const anonymous = await call(s.base, 'POST', 'auth/changepassword', {
      body: { oldPassword: user.password, newPassword: 'a fine new passphrase' },
      headers: { 'content-type': 'application/json' },
    });
    expect(anonymous.status).toBe(401);
    const client = await call(s.base, 'POST', 'oauth2/token', {
      raw: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
      }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(client.status, client.text).toBe(200);
    const r = await change(client.body.access_token, {
      oldPassword: 'anything-1',
      newPassword: 'a fine new passphrase',
    });
    expect(r.status, r.text).toBe(403);
  });
});

describe('the password policy on new accounts', () => {
  it('createUser and createProject refuse a common password or the address itself, naming the field', async () => {
    const created = await gql(
      admin.token,
      'mutation($e: String!, $p: String!) { createUser(email: $e, password: $p) { id } }',
      { e: 'policy-user@example.com', p: 'qwertyuiop' },
    );
    expectRefused(created, 'password', 'most common passwords', 'qwertyuiop');
    const project = await gql(
      s.token,
      'mutation($e: String!, $p: String!) { createProject(name: "P", adminEmail: $e, adminPassword: $p) { project { id } } }',
      { e: 'policy-admin@example.com', p: 'policy-admin' },
    );
    expectRefused(project, 'adminPassword', 'email address', 'policy-admin');
    // Nothing was created: the address can still be used.
    const ok = await gql(
      admin.token,
      'mutation($e: String!, $p: String!) { createUser(email: $e, password: $p) { id } }',
      { e: 'policy-user@example.com', p: 'correct horse battery staple' },
    );
    expect(ok.status, ok.text).toBe(200);
    expect(
      (await signIn(s.base, 'policy-user@example.com', 'correct horse battery staple')).access_token,
    ).toBeTruthy();
  });
});
