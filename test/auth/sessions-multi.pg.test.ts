// Two server PROCESSES on one PostgreSQL schema: a session revoked through one (or ended with its deleted client
// application) is refused by the other on the very next request (LISTEN/NOTIFY invalidation of the per-process
// session cache), also under concurrent load.
import pg from 'pg';
import { LISTENER_APP_NAME } from '../../src/db/database.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_ID, CLIENT_SECRET, call, signIn } from '../helpers/server.js';
import { addUser, createProject } from '../helpers/projects.js';
import { useTestDatabase } from '../helpers/database.js';
import type { ServerProcess } from '../helpers/processes.js';

const DATABASE_URL = process.env.TEST_DATABASE_URL!;
const db = useTestDatabase();
let a: ServerProcess;
let b: ServerProcess;
// Instances behind one load balancer share the public base URL, which is the tokens' issuer.
const env = { BASE_URL: 'http://fhir.example.test/' };

beforeAll(async () => {
  // A first, so the two do not race on the first-start bootstrap (the bootstrap takes a lock anyway).
  a = await db.startProcess({ env });
  b = await db.startProcess({ env });
}, 120_000);

function revokeVia(base: string, token: string, loginId: string) {
  return call(base, 'POST', 'auth/revoke', {
    token,
    body: { loginId },
    headers: { 'content-type': 'application/json' },
  });
}

function refreshVia(base: string, refreshToken: string) {
  return call(base, 'POST', 'oauth2/token', {
    raw: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
}

describe('revocation across server processes', () => {
  it('a token revoked on A is refused by B on the next request (B had it cached)', async () => {
    const victim = await signIn(a.base);
    const revoker = await signIn(a.base);
    // Warm B's cache with the victim's session.
    for (let i = 0; i < 3; i++) {
      expect((await call(b.base, 'GET', 'auth/me', { token: victim.access_token })).status).toBe(200);
    }
    const t0 = performance.now();
    const r = await revokeVia(a.base, revoker.access_token, victim.loginId);
    const took = performance.now() - t0;
    expect(r.status).toBe(200);
    console.info(`idle: revoke via A (acknowledged by B) took ${took.toFixed(1)} ms`);
    const next = await call(b.base, 'GET', 'auth/me', { token: victim.access_token });
    expect(next.status).toBe(401);
    expect(next.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect((await call(a.base, 'GET', 'auth/me', { token: victim.access_token })).status).toBe(401);
    expect((await call(b.base, 'GET', 'auth/me', { token: revoker.access_token })).status).toBe(200);
  });

  it('logout on B is refused by A at once', async () => {
    const t = await signIn(b.base);
    expect((await call(a.base, 'GET', 'auth/me', { token: t.access_token })).status).toBe(200);
    expect((await call(b.base, 'POST', 'oauth2/logout', { token: t.access_token })).status).toBe(200);
    expect((await call(a.base, 'GET', 'auth/me', { token: t.access_token })).status).toBe(401);
  });

  it('a refresh on B fails after the session was revoked on A; introspection on B is inactive', async () => {
    const t = await signIn(a.base, undefined, undefined, { scope: 'openid offline_access' });
    // B caches the session through a refresh-token introspection and an access.
    expect((await call(b.base, 'GET', 'auth/me', { token: t.access_token })).status).toBe(200);
    const revoker = await signIn(a.base);
    expect((await revokeVia(a.base, revoker.access_token, t.loginId)).status).toBe(200);
    const rf = await refreshVia(b.base, t.refresh_token!);
    expect(rf.status).toBe(400);
    expect(rf.body.error).toBe('invalid_grant');
    const intro = await call(b.base, 'POST', 'oauth2/introspect', {
      raw: new URLSearchParams({ token: t.access_token }).toString(),
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`,
      },
    });
    expect(intro.body).toEqual({ active: false });
  });

  it('a refresh token rotated on A and replayed on B revokes the session on both (RFC 9700 4.14.2)', async () => {
    const t = await signIn(a.base, undefined, undefined, { scope: 'openid offline_access' });
    const r1 = await refreshVia(a.base, t.refresh_token!);
    expect(r1.status).toBe(200);
    // A has the new session state cached.
    expect((await call(a.base, 'GET', 'auth/me', { token: r1.body.access_token })).status).toBe(200);
    expect((await refreshVia(b.base, t.refresh_token!)).body.error).toBe('invalid_grant');
    // The replay on B ended the session: A refuses the newest access token on the next request.
    expect((await call(a.base, 'GET', 'auth/me', { token: r1.body.access_token })).status).toBe(401);
    expect((await call(b.base, 'GET', 'auth/me', { token: r1.body.access_token })).status).toBe(401);
    expect((await refreshVia(a.base, r1.body.refresh_token)).body.error).toBe('invalid_grant');
  });

  it('a client application deleted through A: its token is refused by B on the next request', async () => {
    const admin = await signIn(a.base);
    const gql = (query: string) =>
      call(a.base, 'POST', 'graphql', {
        token: admin.access_token,
        body: { query },
        headers: { 'content-type': 'application/json' },
      });
    const made = await gql(
      'mutation { createClientApplication(name: "Two instances") { client { id } secret } }',
    );
    expect(made.status, made.text).toBe(200);
    const { client, secret } = made.body.data.createClientApplication;
    const t = await call(b.base, 'POST', 'oauth2/token', {
      raw: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: client.id,
        client_secret: secret,
      }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(t.status, t.text).toBe(200);
    // B has the client's session cached.
    for (let i = 0; i < 3; i++)
      expect((await call(b.base, 'GET', 'auth/me', { token: t.body.access_token })).status).toBe(200);
    const del = await gql(`mutation { deleteClientApplication(id: "${client.id}") }`);
    expect(del.body.data.deleteClientApplication).toBe(true);
    expect((await call(b.base, 'GET', 'auth/me', { token: t.body.access_token })).status).toBe(401);
  });

  it("a member promoted, demoted and removed through A: each time the member's token is refused by B", async () => {
    const serverAdmin = await signIn(a.base);
    const admin = await createProject(a.base, serverAdmin.access_token, 'Two-instance members');
    const member = await addUser(a.base, admin.token);
    const gql = (query: string, variables: Record<string, unknown>) =>
      call(a.base, 'POST', 'graphql', {
        token: admin.token,
        body: { query, variables },
        headers: { 'content-type': 'application/json' },
      });
    const list = await gql('{ projectMembers { id userId } }', {});
    const id = (list.body.data.projectMembers as { id: string; userId: string }[]).find(
      (m) => m.userId === member.userId,
    )!.id;
    const step = async (query: string, variables: Record<string, unknown>) => {
      // Signed in again through B, and cached there by a few requests.
      const token = (await signIn(b.base, member.email, member.password)).access_token;
      for (let i = 0; i < 3; i++) expect((await call(b.base, 'GET', 'auth/me', { token })).status).toBe(200);
      const r = await gql(query, variables);
      expect(r.status, r.text).toBe(200);
      expect((await call(b.base, 'GET', 'auth/me', { token })).status).toBe(401);
    };
    const role = 'mutation($id: ID!, $admin: Boolean!) { setMemberRole(id: $id, admin: $admin) { id } }';
    await step(role, { id, admin: true });
    await step(role, { id, admin: false });
    await step('mutation($id: ID!) { removeMember(id: $id) }', { id });
  });

  it('under load on both instances: zero 200s for requests sent after the revoke returned', async () => {
    const victim = await signIn(a.base);
    const revoker = await signIn(a.base);
    const results: Array<{ on: string; sentAt: number; doneAt: number; status: number }> = [];
    let stop = false;
    const loop = async (base: string, on: string) => {
      while (!stop) {
        const sentAt = performance.now();
        const res = await fetch(`${base}auth/me`, {
          headers: { authorization: `Bearer ${victim.access_token}` },
        });
        await res.arrayBuffer();
        results.push({ on, sentAt, doneAt: performance.now(), status: res.status });
      }
    };
    const loops = [
      ...Array.from({ length: 12 }, () => loop(b.base, 'B')),
      ...Array.from({ length: 4 }, () => loop(a.base, 'A')),
    ];
    await new Promise((r) => setTimeout(r, 1500));
    const t0 = performance.now();
    const rv = await revokeVia(a.base, revoker.access_token, victim.loginId);
    const returned = performance.now();
    expect(rv.status).toBe(200);
    await new Promise((r) => setTimeout(r, 1000));
    stop = true;
    await Promise.all(loops);

    const before = results.filter((x) => x.doneAt < t0);
    const after = results.filter((x) => x.sentAt > returned);
    expect(before.filter((x) => x.on === 'B').length).toBeGreaterThan(10);
    expect(before.every((x) => x.status === 200)).toBe(true);
    expect(after.filter((x) => x.on === 'B').length).toBeGreaterThan(10);
    expect(after.filter((x) => x.status === 200)).toEqual([]);
    expect(after.every((x) => x.status === 401)).toBe(true);
    console.info(
      `load: ${results.length} requests; revoke took ${(returned - t0).toFixed(1)} ms; ` +
        `${before.length} before, ${after.length} after (all 401)`,
    );
  });

  it('revocation still holds across a lost notification connection, and the peers find each other again', async () => {
    const victim = await signIn(a.base);
    const revoker = await signIn(a.base);
    expect((await call(b.base, 'GET', 'auth/me', { token: victim.access_token })).status).toBe(200);
    // Cut both instances' LISTEN connections (the database restarting or a network blip would do the same).
    const admin = new pg.Client({ connectionString: DATABASE_URL });
    await admin.connect();
    try {
      const killed = await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()`,
        [`${LISTENER_APP_NAME}:${db.schema}`],
      );
      expect(killed.rowCount).toBeGreaterThanOrEqual(2);
    } finally {
      await admin.end();
    }
    // Whatever state the listeners are in now, a revoked session must not be accepted by either instance.
    expect((await revokeVia(a.base, revoker.access_token, victim.loginId)).status).toBe(200);
    expect((await call(b.base, 'GET', 'auth/me', { token: victim.access_token })).status).toBe(401);
    expect((await call(a.base, 'GET', 'auth/me', { token: victim.access_token })).status).toBe(401);

    // After reconnecting, caching resumes and revocations are again acknowledged by the peer.
    await new Promise((r) => setTimeout(r, 2500));
    const v2 = await signIn(a.base);
    for (let i = 0; i < 3; i++) {
      expect((await call(b.base, 'GET', 'auth/me', { token: v2.access_token })).status).toBe(200);
    }
    const t0 = performance.now();
    expect((await revokeVia(a.base, revoker.access_token, v2.loginId)).status).toBe(200);
    const took = performance.now() - t0;
    console.info(`after reconnect: revoke via A (acknowledged by B) took ${took.toFixed(1)} ms`);
    expect((await call(b.base, 'GET', 'auth/me', { token: v2.access_token })).status).toBe(401);
    // Well under the 2 s acknowledgement timeout: B answered.
    expect(took).toBeLessThan(1500);
  });

  it('both processes exit cleanly (code 0) on SIGTERM', async () => {
    const codeB = await b.stop();
    const codeA = await a.stop();
    expect(codeB).toBe(0);
    expect(codeA).toBe(0);
    // Nothing secret reached the logs.
    for (const out of [a.output(), b.output()]) {
      expect(out).not.toMatch(/eyJ[\w-]+\.eyJ/);
      expect(out).not.toContain('admin-password-123');
      expect(out).not.toContain('test-client-secret');
    }
  });
});
