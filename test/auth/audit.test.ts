// The audit log (issue 24, item 6): every sign-in, failed sign-in and admin action leaves a record with its actor,
// target, address and user agent, readable by the project's admins only (auditEvents: newest first, cursor paging,
// filters; a member gets 403); tenants apart; an action refused or rolled back leaves none; an unknown address leaves
// no row. Passwords, second factors, secrets and retention: audit-accounts.test.ts.
import crypto from 'node:crypto';
import pino from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  AUDIT_EVENTS as EVENTS,
  AUDIT_HEADERS as headers,
  auditRequests,
  FROM,
  UA,
  type AuditEvent as Event,
} from '../helpers/audit.js';
import { call, signIn, useTestServer } from '../helpers/server.js';
import { addUser, createProject, type Account, type ProjectAdmin } from '../helpers/projects.js';

/** The server's log lines (what has no project is logged instead of recorded). */
const logLines: string[] = [];
const logger = pino({ level: 'info' }, { write: (line: string) => void logLines.push(line) });
const s = useTestServer({ signIn: true, config: { trustProxy: true }, logger });
const { gql, page, latest, login, countRows } = auditRequests(s);

let admin: ProjectAdmin;
let other: ProjectAdmin;
let member: Account;

beforeAll(async () => {
  admin = await createProject(s.base, s.token, 'Audit project');
  other = await createProject(s.base, s.token, 'Audit other project');
  member = await addUser(s.base, admin.token);
});

describe('sign-ins', () => {
  it('records a sign-in with the user, session, address and user agent', async () => {
    const tokens = await signIn(s.base, member.email, member.password, { userAgent: UA, forwardedFor: FROM });
    const e = await latest(admin.token, 'signin');
    expect(e).toMatchObject({
      outcome: 'success',
      actorUserId: member.userId,
      actorLoginId: tokens.loginId,
      targetType: 'session',
      targetId: tokens.loginId,
      detail: { method: 'password', waitsFor: null },
    });
  });

  it('records a failed sign-in of a known account in each of its projects; an unknown address leaves no row', async () => {
    // The member joins the other project too (an invitation, accepted): the account is in both.
    const inv = await gql(other.token, 'mutation($e: String!) { inviteUser(email: $e) { id } }', {
      e: member.email,
    });
    const id = inv.body.data.inviteUser.id as string;
    const ok = await gql(member.token, 'mutation($id: ID!) { acceptInvitation(id: $id) { id } }', { id });
    expect(ok.status, ok.text).toBe(200);
    expect(await latest(other.token, 'invitation.accept')).toMatchObject({
      actorUserId: member.userId,
      // The session is the member's in the first project: not named in the other's log.
      actorLoginId: null,
      targetType: 'invitation',
      targetId: id,
    });

    const wrong = await login(member.email, 'not-the-password');
    expect(wrong.status).toBe(400);
    for (const token of [admin.token, other.token]) {
      const e = await latest(token, 'signin.failed');
      expect(e).toMatchObject({ outcome: 'failure', actorUserId: member.userId, actorLoginId: null });
      expect(e.detail).toEqual({ reason: 'wrong password' });
    }

    const before = await countRows();
    for (let i = 0; i < 3; i++)
      expect((await login(`nobody-${i}@example.com`, 'whatever-pw')).status).toBe(400);
    expect(await countRows()).toBe(before);
    // The log says it happened, from where, with a hash prefix of the address: never the address itself.
    const lines = logLines
      .filter((l) => l.includes('audit event without a project'))
      .map((l) => JSON.parse(l));
    expect(lines.filter((l) => l.audit === 'signin.failed')).toHaveLength(3);
    const hash = crypto.createHash('sha256').update('nobody-0@example.com').digest('hex').slice(0, 12);
    expect(lines[0]).toMatchObject({
      emailHash: hash,
      remoteAddress: FROM,
      detail: { reason: 'unknown account' },
    });
    expect(logLines.join('\n')).not.toContain('nobody-0@example.com');
  });

  it('records a failed client authentication in the client’s project', async () => {
    const r = await call(s.base, 'POST', 'oauth2/token', {
      raw: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: admin.clientId,
        client_secret: 'wrong-secret',
      }).toString(),
      headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(r.status).toBe(401);
    const e = await latest(admin.token, 'signin.failed', false);
    expect(e).toMatchObject({ actorClientId: admin.clientId, actorUserId: null, remoteAddress: FROM });
    expect(e.detail).toEqual({ reason: 'wrong client secret' });
  });

  it('records a replayed refresh token: the system ends the session, from the replaying address', async () => {
    const t = await signIn(s.base, member.email, member.password, { scope: 'openid offline_access' });
    const refresh = () =>
      call(s.base, 'POST', 'oauth2/token', {
        raw: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: t.refresh_token! }).toString(),
        headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
      });
    expect((await refresh()).status).toBe(200);
    expect((await refresh()).status).toBe(400);
    const e = await latest(admin.token, 'session.revoke', false);
    expect(e).toMatchObject({
      actorUserId: null,
      actorLoginId: null,
      targetId: t.loginId,
      remoteAddress: FROM,
      detail: { reason: 'refresh token replay', userId: member.userId },
    });
  });

  it('records a client_credentials sign-in', async () => {
    const r = await call(s.base, 'POST', 'oauth2/token', {
      raw: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: admin.clientId,
        client_secret: admin.clientSecret,
      }).toString(),
      headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(r.status, r.text).toBe(200);
    const e = await latest(admin.token, 'signin');
    expect(e).toMatchObject({
      actorClientId: admin.clientId,
      actorUserId: null,
      detail: { method: 'client_credentials' },
    });
  });
});

describe('admin actions', () => {
  it('records members created, invited, promoted, removed and invitations cancelled', async () => {
    const email = `audit-new-${crypto.randomBytes(3).toString('hex')}@example.com`;
    const password = `pw-${crypto.randomBytes(8).toString('hex')}`;
    const created = await gql(
      admin.token,
      'mutation($e: String!, $p: String!) { createUser(email: $e, password: $p) { id } }',
      {
        e: email,
        p: password,
      },
    );
    const userId = created.body.data.createUser.id as string;
    expect(await latest(admin.token, 'member.create')).toMatchObject({
      actorUserId: admin.userId,
      targetType: 'user',
      targetId: userId,
      detail: { email, role: 'member' },
    });

    const list = await gql(admin.token, '{ projectMembers { id userId } }');
    const mid = (list.body.data.projectMembers as { id: string; userId: string }[]).find(
      (m) => m.userId === userId,
    )!.id;
    await gql(admin.token, 'mutation($id: ID!) { setMemberRole(id: $id, admin: true) { id } }', { id: mid });
    expect(await latest(admin.token, 'member.role')).toMatchObject({
      targetType: 'membership',
      targetId: mid,
      detail: { role: 'admin', userId, sessionsEnded: 0 },
    });
    await gql(admin.token, 'mutation($id: ID!) { removeMember(id: $id) }', { id: mid });
    expect(await latest(admin.token, 'member.remove')).toMatchObject({
      targetId: mid,
      detail: { role: 'admin', userId },
    });

    const inv = await gql(
      admin.token,
      'mutation($e: String!) { inviteUser(email: $e, admin: true) { id } }',
      {
        e: 'someone@example.org',
      },
    );
    const invId = inv.body.data.inviteUser.id as string;
    expect(await latest(admin.token, 'member.invite')).toMatchObject({
      targetType: 'invitation',
      targetId: invId,
      detail: { email: 'someone@example.org', role: 'admin' },
    });
    await gql(admin.token, 'mutation($id: ID!) { cancelInvitation(id: $id) }', { id: invId });
    expect(await latest(admin.token, 'invitation.cancel')).toMatchObject({
      targetId: invId,
      actorUserId: admin.userId,
    });
  });

  it('records client applications created, changed, rotated and deleted (never their secret)', async () => {
    const made = await gql(
      admin.token,
      'mutation { createClientApplication(name: "Audited") { client { id } secret } }',
    );
    const id = made.body.data.createClientApplication.client.id as string;
    expect(await latest(admin.token, 'client.create')).toMatchObject({
      targetType: 'client',
      targetId: id,
      detail: { name: 'Audited', type: 'confidential', role: 'member', redirectUris: 0 },
    });
    await gql(
      admin.token,
      'mutation($id: ID!) { updateClientApplication(id: $id, name: "Renamed") { id } }',
      { id },
    );
    expect(await latest(admin.token, 'client.update')).toMatchObject({
      targetId: id,
      detail: { name: 'Renamed' },
    });
    await gql(admin.token, 'mutation($id: ID!) { rotateClientSecret(id: $id) { secret } }', {
      id,
    });
    expect(await latest(admin.token, 'client.rotate')).toMatchObject({
      targetId: id,
      actorUserId: admin.userId,
    });
    await gql(admin.token, 'mutation($id: ID!) { deleteClientApplication(id: $id) }', { id });
    expect(await latest(admin.token, 'client.delete')).toMatchObject({
      targetId: id,
      detail: { name: 'Renamed' },
    });
  });

  it('records sessions ended by an admin and by a logout, and the project’s MFA setting', async () => {
    const extra = await signIn(s.base, member.email, member.password);
    await gql(admin.token, 'mutation($l: String!) { revokeSession(loginId: $l) }', { l: extra.loginId });
    expect(await latest(admin.token, 'session.revoke')).toMatchObject({
      actorUserId: admin.userId,
      targetType: 'session',
      targetId: extra.loginId,
      detail: { reason: 'revokeSession', userId: member.userId },
    });
    const mine = await signIn(s.base, member.email, member.password);
    await gql(mine.access_token, 'mutation { logout }');
    expect(await latest(admin.token, 'signout')).toMatchObject({
      actorUserId: member.userId,
      targetId: mine.loginId,
    });

    await gql(other.token, 'mutation { setProjectMfaRequired(required: false) { mfaRequired } }');
    expect(await latest(other.token, 'project.mfa.required')).toMatchObject({
      targetType: 'project',
      targetId: other.projectId,
      detail: { required: false, sessionsEnded: 0 },
    });
    expect(await latest(other.token, 'project.create', false)).toMatchObject({ targetId: other.projectId });
  });

  it('an action refused or rolled back leaves no record', async () => {
    const before = await countRows();
    const self = (await gql(admin.token, '{ projectMembers { id userId } }')).body.data.projectMembers.find(
      (m: { userId: string }) => m.userId === admin.userId,
    );
    // The last admin cannot be demoted: the transaction that would have recorded it rolls back.
    expect(
      (
        await gql(admin.token, 'mutation($id: ID!) { setMemberRole(id: $id, admin: false) { id } }', {
          id: self.id,
        })
      ).status,
    ).toBe(409);
    expect(
      (
        await gql(admin.token, 'mutation($id: ID!) { cancelInvitation(id: $id) }', {
          id: crypto.randomUUID(),
        })
      ).status,
    ).toBe(404);
    expect(
      (await gql(member.token, 'mutation { createClientApplication(name: "x") { secret } }')).status,
    ).toBe(403);
    expect(await countRows()).toBe(before);
  });
});

describe('reading the log', () => {
  it('a member gets 403; another project sees none of this one’s records', async () => {
    const r = await gql(member.token, EVENTS, {});
    expect(r.status, r.text).toBe(403);
    expect(r.body.errors[0].message).toMatch(/project admin/);
    const mine = new Set((await page(admin.token, { first: 100 })).events.map((e) => e.id));
    const theirs = await page(other.token, { first: 100 });
    expect(theirs.events.length).toBeGreaterThan(0);
    expect(theirs.events.filter((e) => mine.has(e.id))).toEqual([]);
    // Filtering by another project's user finds nothing of theirs that happened there.
    const byAdmin = await page(other.token, { actor: admin.userId });
    expect(byAdmin.events).toEqual([]);
  });

  it('pages newest first with a stable cursor, equal times included', async () => {
    const p = await createProject(s.base, s.token, 'Audit paging');
    // Six records at one instant (as one transaction's would be), beside the project's own.
    await s.services.db.sql(
      `INSERT INTO "AuditEvent" (id, "projectId", at, action, outcome)
        SELECT gen_random_uuid(), $1::uuid, '2026-01-01 12:00:00.000', 'member.role', 'success'
          FROM generate_series(1, 6)`,
      [p.projectId],
    );
    const all = (await page(p.token, { first: 100 })).events;
    expect(all.length).toBeGreaterThanOrEqual(7);
    for (let i = 1; i < all.length; i++) {
      const [a, b] = [all[i - 1], all[i]];
      expect(Date.parse(a.at) > Date.parse(b.at) || (a.at === b.at && a.id > b.id), `${i}`).toBe(true);
    }
    const paged: string[] = [];
    let after: string | null = null;
    for (let i = 0; i < 20; i++) {
      const got: { events: Event[]; nextCursor: string | null } = await page(p.token, { first: 2, after });
      paged.push(...got.events.map((e) => e.id));
      after = got.nextCursor;
      if (!after) break;
    }
    expect(paged).toEqual(all.map((e) => e.id));
    const roles = await page(p.token, { action: 'member.role' });
    expect(roles.events).toHaveLength(6);
  });

  it('answers 400 to a bad cursor, a page over the limit, an unknown action or actor', async () => {
    for (const [vars, field, message] of [
      [{ after: 'bm90LWEtY3Vyc29y' }, 'after', /not a cursor/],
      [
        { after: Buffer.from('["2026-13-45T99:00:00.000","x"]').toString('base64url') },
        'after',
        /not a cursor/,
      ],
      [{ after: 'x'.repeat(5000) }, 'after', /not a cursor/],
      [{ first: 101 }, 'first', /1 to 100/],
      [{ first: 0 }, 'first', /1 to 100/],
      [{ action: 'drop table' }, 'action', /one of/],
      [{ actor: 'not-a-uuid' }, 'actor', /not a valid/],
    ] as const) {
      const r = await gql(admin.token, EVENTS, vars);
      expect(r.status, `${JSON.stringify(vars)}: ${r.text}`).toBe(400);
      expect(r.body.errors[0].message).toMatch(message);
      expect(r.text).toContain(field);
    }
  });
});
