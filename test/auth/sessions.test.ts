// Sessions over real HTTP: listing (/auth/me), revoking (/auth/revoke, logout, revokeOtherSessions, RFC 7009),
// introspection (RFC 7662), the audit trail, and revocation under concurrent load on one instance.
import { beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  CLIENT_ID,
  CLIENT_SECRET,
  call,
  signIn,
  useTestServer,
} from '../helpers/server.js';

const CHROME =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
const FIREFOX = 'Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0';

const s = useTestServer({ signIn: true });
let adminToken: string;
const MEMBER = { email: 'sessions-member@example.com', password: 'member-password-1' };
const OTHER = { email: 'sessions-other@example.com', password: 'other-password-1' };

async function gql(token: string | undefined, query: string, variables?: Record<string, unknown>) {
  return call(s.base, 'POST', 'graphql', {
    token,
    headers: { 'content-type': 'application/json' },
    body: { query, variables },
  });
}

async function refresh(refreshToken: string) {
  return call(s.base, 'POST', 'oauth2/token', {
    raw: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
}

const BASIC = `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`;

/** A form POST, authenticated as the client application over HTTP Basic unless another Authorization is given. */
function form(path: string, params: Record<string, string>, authorization: string | null = BASIC) {
  return call(s.base, 'POST', path, {
    raw: new URLSearchParams(params).toString(),
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(authorization ? { authorization } : {}),
    },
  });
}

function revoke(token: string, body: unknown) {
  return call(s.base, 'POST', 'auth/revoke', {
    token,
    body,
    headers: { 'content-type': 'application/json' },
  });
}

beforeAll(async () => {
  adminToken = s.token;
  for (const u of [MEMBER, OTHER]) {
    const r = await gql(
      adminToken,
      'mutation($e:String!,$p:String!){ createUser(email:$e,password:$p,admin:false){ id } }',
      { e: u.email, p: u.password },
    );
    expect(r.body.errors).toBeUndefined();
  }
});

describe('the two-sessions scenario', () => {
  it('lists both sessions, revokes the second, then logs out the first', async () => {
    const chrome = await signIn(s.base, MEMBER.email, MEMBER.password, {
      userAgent: CHROME,
      scope: 'openid offline_access',
    });
    const firefox = await signIn(s.base, MEMBER.email, MEMBER.password, {
      userAgent: FIREFOX,
      scope: 'openid offline_access',
    });

    const me = await call(s.base, 'GET', 'auth/me', { token: chrome.access_token });
    expect(me.status).toBe(200);
    expect(me.body.profile.resourceType).toBe('Practitioner');
    expect(me.body.project.resourceType).toBe('Project');
    expect(me.body.membership.resourceType).toBe('ProjectMembership');
    const sessions = me.body.security.sessions as Array<Record<string, unknown>>;
    expect(sessions).toHaveLength(2);
    const c = sessions.find((x) => x.id === chrome.loginId)!;
    const f = sessions.find((x) => x.id === firefox.loginId)!;
    expect(c).toMatchObject({ userAgent: CHROME, current: true, authMethod: 'password' });
    expect(f).toMatchObject({ userAgent: FIREFOX, current: false, authMethod: 'password' });
    expect(c.browser).toMatch(/^Chrome 120/);
    expect(c.os).toMatch(/^Windows/);
    expect(f.browser).toMatch(/^Firefox 121/);
    expect(f.os).toMatch(/^Linux/);
    expect(c.remoteAddress).toMatch(/127\.0\.0\.1/);
    expect(typeof c.createdAt).toBe('string');
    expect(typeof c.lastUsed).toBe('string');

    // The other session's own view marks it as current.
    const meF = await call(s.base, 'GET', 'auth/me', { token: firefox.access_token });
    expect(meF.body.security.sessions.find((x: { current: boolean }) => x.current).id).toBe(firefox.loginId);

    const r = await revoke(chrome.access_token, { loginId: firefox.loginId });
    expect(r.status).toBe(200);
    expect(r.body.resourceType).toBe('OperationOutcome');
    expect(r.body.issue[0].severity).toBe('information');

    expect((await call(s.base, 'GET', 'auth/me', { token: firefox.access_token })).status).toBe(401);
    const rf = await refresh(firefox.refresh_token!);
    expect(rf.status).toBe(400);
    expect(rf.body.error).toBe('invalid_grant');
    const still = await call(s.base, 'GET', 'auth/me', { token: chrome.access_token });
    expect(still.status).toBe(200);
    expect(still.body.security.sessions.map((x: { id: string }) => x.id)).toEqual([chrome.loginId]);

    const out = await call(s.base, 'POST', 'oauth2/logout', {
      token: chrome.access_token,
      headers: { 'content-type': 'application/json' },
      raw: '{}',
    });
    expect(out.status).toBe(200);
    expect(out.body.resourceType).toBe('OperationOutcome');
    expect(out.body.issue[0].severity).toBe('information');
    const after = await call(s.base, 'GET', 'auth/me', { token: chrome.access_token });
    expect(after.status).toBe(401);
    expect(after.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect((await refresh(chrome.refresh_token!)).body.error).toBe('invalid_grant');

    // Audit: the rows stay, with who revoked them and when.
    const rowF = await s.services.db.prisma.login.findUnique({ where: { id: firefox.loginId } });
    expect(rowF?.revokedAt).toBeInstanceOf(Date);
    expect(rowF?.revokedBy).toBe(chrome.loginId);
    const rowC = await s.services.db.prisma.login.findUnique({ where: { id: chrome.loginId } });
    expect(rowC?.revokedAt).toBeInstanceOf(Date);
    expect(rowC?.revokedBy).toBe(chrome.loginId);
  });

  it('logout with an empty body and with GET both work', async () => {
    const a = await signIn(s.base, MEMBER.email, MEMBER.password);
    const r1 = await call(s.base, 'POST', 'oauth2/logout', { token: a.access_token });
    expect(r1.status).toBe(200);
    expect((await call(s.base, 'GET', 'auth/me', { token: a.access_token })).status).toBe(401);
    const b = await signIn(s.base, MEMBER.email, MEMBER.password);
    const r2 = await call(s.base, 'GET', 'oauth2/logout', { token: b.access_token });
    expect(r2.status).toBe(200);
    expect((await call(s.base, 'GET', 'auth/me', { token: b.access_token })).status).toBe(401);
  });

  it('logout without a token is 401', async () => {
    const r = await call(s.base, 'POST', 'oauth2/logout');
    expect(r.status).toBe(401);
  });

  it('GraphQL logout ends the session', async () => {
    const a = await signIn(s.base, MEMBER.email, MEMBER.password);
    const r = await gql(a.access_token, 'mutation { logout }');
    expect(r.body.data.logout).toBe(true);
    expect((await call(s.base, 'GET', 'auth/me', { token: a.access_token })).status).toBe(401);
  });
});

describe('revoke rules', () => {
  it("another user's login id is 404, and that session keeps working", async () => {
    const mine = await signIn(s.base, MEMBER.email, MEMBER.password);
    const theirs = await signIn(s.base, OTHER.email, OTHER.password);
    const r = await revoke(mine.access_token, { loginId: theirs.loginId });
    expect(r.status).toBe(404);
    expect(r.body.issue[0].code).toBe('not-found');
    // Same answer as for an id that does not exist: nothing is revealed.
    const unknown = await revoke(mine.access_token, { loginId: '00000000-0000-4000-8000-000000000000' });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual(r.body);
    expect((await call(s.base, 'GET', 'auth/me', { token: theirs.access_token })).status).toBe(200);
  });

  it('bad ids are 400 naming loginId', async () => {
    const t = await signIn(s.base, MEMBER.email, MEMBER.password);
    for (const body of [{}, { loginId: 42 }, { loginId: 'not-a-uuid' }, { loginId: null }, { loginId: '' }]) {
      const r = await revoke(t.access_token, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.resourceType).toBe('OperationOutcome');
      expect(r.body.issue[0].expression).toEqual(['loginId']);
    }
    const noBody = await call(s.base, 'POST', 'auth/revoke', { token: t.access_token });
    expect(noBody.status).toBe(400);
    const arr = await revoke(t.access_token, [1]);
    expect(arr.status).toBe(400);
    const malformed = await call(s.base, 'POST', 'auth/revoke', {
      token: t.access_token,
      raw: '{"loginId":',
      headers: { 'content-type': 'application/json' },
    });
    expect(malformed.status).toBe(400);
    expect((await call(s.base, 'GET', 'auth/me', { token: t.access_token })).status).toBe(200);
  });

  it('revoke without a token is 401', async () => {
    const r = await call(s.base, 'POST', 'auth/revoke', { body: { loginId: crypto.randomUUID() } });
    expect(r.status).toBe(401);
  });

  it("a project admin may revoke a member's session; a member may not revoke the admin's", async () => {
    const member = await signIn(s.base, MEMBER.email, MEMBER.password);
    const admin = await signIn(s.base, ADMIN_EMAIL, ADMIN_PASSWORD);
    const denied = await revoke(member.access_token, { loginId: admin.loginId });
    expect(denied.status).toBe(404);
    expect((await call(s.base, 'GET', 'auth/me', { token: admin.access_token })).status).toBe(200);
    const ok = await revoke(admin.access_token, { loginId: member.loginId });
    expect(ok.status).toBe(200);
    expect((await call(s.base, 'GET', 'auth/me', { token: member.access_token })).status).toBe(401);
    const row = await s.services.db.prisma.login.findUnique({ where: { id: member.loginId } });
    expect(row?.revokedBy).toBe(admin.loginId);
  });

  it('revoking an already revoked session is 200 and keeps the first audit record', async () => {
    const a = await signIn(s.base, MEMBER.email, MEMBER.password);
    const b = await signIn(s.base, MEMBER.email, MEMBER.password);
    const c = await signIn(s.base, MEMBER.email, MEMBER.password);
    expect((await revoke(a.access_token, { loginId: b.loginId })).status).toBe(200);
    const first = await s.services.db.prisma.login.findUnique({ where: { id: b.loginId } });
    expect((await revoke(c.access_token, { loginId: b.loginId })).status).toBe(200);
    const second = await s.services.db.prisma.login.findUnique({ where: { id: b.loginId } });
    expect(second?.revokedAt?.getTime()).toBe(first?.revokedAt?.getTime());
    expect(second?.revokedBy).toBe(a.loginId);
  });

  it('revokeSession via GraphQL, with the same rules', async () => {
    const a = await signIn(s.base, MEMBER.email, MEMBER.password);
    const b = await signIn(s.base, MEMBER.email, MEMBER.password);
    const bad = await gql(a.access_token, 'mutation($id:String!){ revokeSession(loginId:$id) }', { id: 'x' });
    expect(bad.body.errors[0].message).toMatch(/loginId/);
    const r = await gql(a.access_token, 'mutation($id:String!){ revokeSession(loginId:$id) }', {
      id: b.loginId,
    });
    expect(r.body.data.revokeSession).toBe(true);
    expect((await call(s.base, 'GET', 'auth/me', { token: b.access_token })).status).toBe(401);
  });

  it('revokeOtherSessions ends every other session of the user, not the current one', async () => {
    const u = { email: 'sessions-solo@example.com', password: 'solo-password-1' };
    await gql(adminToken, 'mutation($e:String!,$p:String!){ createUser(email:$e,password:$p){ id } }', {
      e: u.email,
      p: u.password,
    });
    const keep = await signIn(s.base, u.email, u.password);
    const x = await signIn(s.base, u.email, u.password);
    const y = await signIn(s.base, u.email, u.password, { scope: 'openid offline_access' });
    const r = await gql(keep.access_token, 'mutation { revokeOtherSessions }');
    expect(r.body.data.revokeOtherSessions).toBe(2);
    expect((await call(s.base, 'GET', 'auth/me', { token: x.access_token })).status).toBe(401);
    expect((await call(s.base, 'GET', 'auth/me', { token: y.access_token })).status).toBe(401);
    expect((await refresh(y.refresh_token!)).body.error).toBe('invalid_grant');
    const me = await gql(keep.access_token, '{ me { sessions { id current browser os } } }');
    expect(me.body.data.me.sessions).toEqual([expect.objectContaining({ id: keep.loginId, current: true })]);
  });
});

describe('RFC 7009 revoke and RFC 7662 introspect', () => {
  it('introspection is active, then inactive after /oauth2/revoke of the access token', async () => {
    const t = await signIn(s.base, MEMBER.email, MEMBER.password, { scope: 'openid offline_access' });
    const i1 = await form('oauth2/introspect', { token: t.access_token });
    expect(i1.status).toBe(200);
    expect(i1.body).toMatchObject({ active: true, token_type: 'Bearer', login_id: t.loginId });
    expect(i1.body.exp).toBeGreaterThan(Date.now() / 1000);
    const ir = await form('oauth2/introspect', { token: t.refresh_token! });
    expect(ir.body.active).toBe(true);
    const r = await form('oauth2/revoke', { token: t.access_token });
    expect(r.status).toBe(200);
    expect((await form('oauth2/introspect', { token: t.access_token })).body).toEqual({ active: false });
    expect((await form('oauth2/introspect', { token: t.refresh_token! })).body).toEqual({ active: false });
    expect((await call(s.base, 'GET', 'auth/me', { token: t.access_token })).status).toBe(401);
    expect((await refresh(t.refresh_token!)).body.error).toBe('invalid_grant');
  });

  it('revoking by refresh token ends the session too', async () => {
    const t = await signIn(s.base, MEMBER.email, MEMBER.password, { scope: 'openid offline_access' });
    const r = await form('oauth2/revoke', { token: t.refresh_token!, token_type_hint: 'refresh_token' });
    expect(r.status).toBe(200);
    expect((await call(s.base, 'GET', 'auth/me', { token: t.access_token })).status).toBe(401);
  });

  it('introspection requires a Bearer token or client credentials', async () => {
    const t = await signIn(s.base, MEMBER.email, MEMBER.password);
    const anon = await form('oauth2/introspect', { token: t.access_token }, null);
    expect(anon.status).toBe(401);
    expect(anon.body.error).toBe('invalid_client');
    expect(anon.headers.get('www-authenticate')).toBeTruthy();
    const wrong = `Basic ${Buffer.from(`${CLIENT_ID}:wrong`).toString('base64')}`;
    expect((await form('oauth2/introspect', { token: t.access_token }, wrong)).status).toBe(401);
    const other = await signIn(s.base, OTHER.email, OTHER.password);
    const viaBearer = await form(
      'oauth2/introspect',
      { token: t.access_token },
      `Bearer ${other.access_token}`,
    );
    expect(viaBearer.status).toBe(200);
    expect(viaBearer.body.active).toBe(true);
  });

  it('unknown tokens: revoke is 200, introspect is inactive; a missing token is invalid_request', async () => {
    expect((await form('oauth2/revoke', { token: 'garbage' })).status).toBe(200);
    expect((await form('oauth2/introspect', { token: 'garbage' })).body).toEqual({ active: false });
    const m = await form('oauth2/introspect', {});
    expect(m.status).toBe(400);
    expect(m.body.error).toBe('invalid_request');
    const m2 = await form('oauth2/revoke', {});
    expect(m2.status).toBe(400);
    expect(m2.body.error).toBe('invalid_request');
  });
});

describe('revocation under concurrent load (one instance)', () => {
  it('no request sent after the revoke returned gets a 200', async () => {
    const victim = await signIn(s.base, MEMBER.email, MEMBER.password);
    const revoker = await signIn(s.base, MEMBER.email, MEMBER.password);
    const results: Array<{ sentAt: number; doneAt: number; status: number }> = [];
    let stop = false;
    const loop = async () => {
      while (!stop) {
        const sentAt = performance.now();
        const r = await fetch(`${s.base}auth/me`, {
          headers: { authorization: `Bearer ${victim.access_token}` },
        });
        await r.arrayBuffer();
        results.push({ sentAt, doneAt: performance.now(), status: r.status });
      }
    };
    const loops = Array.from({ length: 16 }, () => loop());
    await new Promise((r) => setTimeout(r, 1000));
    const t0 = performance.now();
    const rv = await revoke(revoker.access_token, { loginId: victim.loginId });
    const revokedAt = performance.now();
    expect(rv.status).toBe(200);
    await new Promise((r) => setTimeout(r, 700));
    stop = true;
    await Promise.all(loops);
    // Requests answered before the revoke was sent were all accepted; those in flight during it may go either way.
    const before = results.filter((x) => x.doneAt < t0);
    const after = results.filter((x) => x.sentAt > revokedAt);
    expect(before.length).toBeGreaterThan(3);
    expect(before.every((x) => x.status === 200)).toBe(true);
    expect(after.length).toBeGreaterThan(10);
    expect(after.filter((x) => x.status === 200)).toEqual([]);
    expect(after.every((x) => x.status === 401)).toBe(true);
  });
});
