// Accounts between two projects (issue 12 item 2): an admin of one project can neither take over nor enumerate
// another tenant's accounts through createUser; an existing account joins a project only by accepting an invitation.
import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, signIn, useTestServer } from '../helpers/server.js';
import { addUser, createProject, type Account } from '../helpers/projects.js';

const s = useTestServer({ signIn: true });
let a: Account;
let b: Account;

function gql(token: string, query: string, variables: Record<string, unknown> = {}) {
  return call(s.base, 'POST', 'graphql', {
    token,
    body: { query, variables },
    headers: { 'content-type': 'application/json' },
  });
}

const CREATE_USER = `mutation($e: String!, $p: String!, $admin: Boolean) {
  createUser(email: $e, password: $p, admin: $admin) { id email firstName lastName }
}`;
const INVITE = `mutation($e: String!, $admin: Boolean) {
  inviteUser(email: $e, admin: $admin) { id email admin status project { id } }
}`;

function loginTo(email: string, password: string, projectId?: string) {
  const verifier = crypto.randomBytes(32).toString('base64url');
  return call(s.base, 'POST', 'auth/login', {
    body: {
      email,
      password,
      projectId,
      codeChallenge: crypto.createHash('sha256').update(verifier).digest('base64url'),
      codeChallengeMethod: 'S256',
    },
    headers: { 'content-type': 'application/json' },
  });
}

const email = (p: string) => `${p}-${crypto.randomBytes(4).toString('hex')}@victim.example`;

beforeAll(async () => {
  a = await createProject(s.base, s.token, 'Tenant A');
  b = await createProject(s.base, s.token, 'Tenant B');
});

describe('createUser with an address that already has an account', () => {
  /** A's rows that B's admin must not change: the account (password, names), memberships, sessions. */
  async function snapshotOf(account: Account) {
    const db = s.services.db.prisma;
    return {
      user: await db.user.findUnique({ where: { email: account.email } }),
      memberships: await db.projectMembership.findMany({
        where: { user: { email: account.email } },
        orderBy: { id: 'asc' },
      }),
      projectMembers: await db.projectMembership.count({ where: { projectId: a.projectId } }),
      sessions: await db.login.count({ where: { user: { email: account.email } } }),
    };
  }

  /** What the caller can compare: status, headers that matter, and the body with its values reduced to types. */
  function shape(r: Awaited<ReturnType<typeof gql>>, sent: string) {
    const u = r.body.data?.createUser;
    return {
      status: r.status,
      contentType: r.headers.get('content-type'),
      errors: r.body.errors,
      keys: u ? Object.keys(u).sort() : null,
      id: u && /^[0-9a-f-]{36}$/.test(u.id),
      email: u?.email === sent,
      names: u ? [u.firstName, u.lastName, u.serverAdmin] : null,
      createdAt: u && Math.abs(Date.parse(u.createdAt) - Date.now()) < 60_000,
    };
  }

  const FULL = `mutation($e: String!, $p: String!, $admin: Boolean) {
    createUser(email: $e, password: $p, admin: $admin) { id email firstName lastName serverAdmin createdAt }
  }`;

  it("B's admin cannot tell A's member from a new address (status, body, timing) and nothing of A changes", async () => {
    // A's member has a name, a session and a membership; B's admin probes that address and fresh ones.
    const member = await addUser(s.base, a.token);
    await s.services.db.prisma.user.update({
      where: { email: member.email },
      data: { firstName: 'Ann', lastName: 'Private' },
    });
    const before = await snapshotOf(member);
    const timings = { existing: [] as number[], fresh: [] as number[] };
    let existingShape: ReturnType<typeof shape> | undefined;
    let freshShape: ReturnType<typeof shape> | undefined;
    for (let i = 0; i < 3; i++) {
      const fresh = email(`fresh${i}`);
      // Alternate the order so a warm-up effect does not favour one branch.
      for (const which of i % 2 ? (['fresh', 'existing'] as const) : (['existing', 'fresh'] as const)) {
        const addr = which === 'existing' ? member.email : fresh;
        const t0 = performance.now();
        const r = await gql(b.token, FULL, { e: addr, p: 'password-of-b-123', admin: true });
        timings[which].push(performance.now() - t0);
        if (which === 'existing') existingShape = shape(r, addr);
        else freshShape = shape(r, addr);
        expect(r.text).not.toMatch(/Ann|Private|Tenant A/);
        expect(r.text).not.toContain(member.userId);
        expect(r.text).not.toContain(a.projectId);
      }
    }
    expect(existingShape).toEqual(freshShape);
    expect(existingShape).toMatchObject({ status: 200, keys: expect.any(Array), id: true, email: true });
    // Timing: the same work on both branches (one password hash each), so the medians are within a small factor
    // of each other, on a quiet or a loaded machine (a skipped hash would be 10-100x).
    const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[1];
    const ratio = median(timings.existing) / median(timings.fresh);
    expect(ratio).toBeGreaterThan(0.2);
    expect(ratio).toBeLessThan(5);
    // Nothing of A changed; B's password does not open the account; the holder is not in B.
    expect(await snapshotOf(member)).toEqual(before);
    expect((await loginTo(member.email, 'password-of-b-123')).status).toBe(400);
    expect((await loginTo(member.email, member.password, b.projectId)).status).toBe(403);
    expect((await loginTo(member.email, member.password, a.projectId)).status).toBe(200);
    // What B's call left is an invitation the holder sees and may accept or decline (as inviteUser would).
    const me = await gql(member.token, '{ me { invitations { admin project { id } } } }');
    expect(me.body.data.me.invitations).toEqual([{ admin: true, project: { id: b.projectId } }]);
  });

  it('no takeover: B made the account with its password; A "creating" it as admin gives B nothing in A', async () => {
    const victim = email('x');
    const made = await gql(b.token, CREATE_USER, { e: victim, p: 'password-of-b-123' });
    expect(made.body.data.createUser.email).toBe(victim);
    const r = await gql(a.token, CREATE_USER, { e: victim, p: 'password-of-a-123', admin: true });
    expect(r.status).toBe(200);
    expect(r.body.data.createUser.id).not.toBe(made.body.data.createUser.id);
    // B's holder of the password cannot sign in to A, and A's password does not open the account.
    const asB = await loginTo(victim, 'password-of-b-123', a.projectId);
    expect(asB.status).toBe(403);
    expect((await loginTo(victim, 'password-of-a-123')).status).toBe(400);
    expect(
      await s.services.db.prisma.projectMembership.count({
        where: { projectId: a.projectId, user: { email: victim } },
      }),
    ).toBe(0);
  });

  it("no enumeration: another tenant's account, an own member and a new address get the same answer", async () => {
    await s.services.db.prisma.user.update({
      where: { id: b.userId },
      data: { firstName: 'Bea', lastName: 'Secret' },
    });
    const ownMember = await addUser(s.base, a.token);
    const fresh = email('new');
    const other = await gql(a.token, CREATE_USER, { e: b.email, p: 'password-123' });
    const own = await gql(a.token, CREATE_USER, { e: ownMember.email, p: 'password-123' });
    const made = await gql(a.token, CREATE_USER, { e: fresh, p: 'password-123' });
    const strip = (r: Awaited<ReturnType<typeof gql>>) => ({
      status: r.status,
      keys: Object.keys(r.body.data.createUser).sort(),
      names: [r.body.data.createUser.firstName, r.body.data.createUser.lastName],
    });
    expect(strip(other)).toEqual(strip(made));
    expect(strip(own)).toEqual(strip(made));
    expect(other.text).not.toMatch(/Bea|Secret|Tenant B/);
    expect(other.text).not.toContain(b.userId);
  });

  it('a new address still creates an account in the caller project, which signs in at once', async () => {
    const fresh = email('new');
    const r = await gql(a.token, CREATE_USER, { e: fresh, p: 'fresh-password-1' });
    expect(r.status).toBe(200);
    const login = await loginTo(fresh, 'fresh-password-1');
    expect(login.status).toBe(200);
  });
});

describe('createUser and inviteUser budgets; invitation expiry', () => {
  const t = useTestServer({
    config: { accountInviteLimit: { perAdmin: 3, perProject: 4, windowSec: 60 }, invitationTtlSec: 2 },
    signIn: true,
  });
  let x: Account;

  function gqlT(token: string, query: string, variables: Record<string, unknown> = {}) {
    return call(t.base, 'POST', 'graphql', {
      token,
      body: { query, variables },
      headers: { 'content-type': 'application/json' },
    });
  }

  beforeAll(async () => {
    x = await createProject(t.base, t.token, 'Tenant X');
  });

  it('an admin gets 429 with Retry-After past its share; a second admin of the project past the project share', async () => {
    const other = await addUser(t.base, x.token, { admin: true }); // x: 1 of 3
    const ok1 = await gqlT(x.token, CREATE_USER, { e: email('t1'), p: 'password-123' }); // x: 2
    const ok2 = await gqlT(x.token, INVITE, { e: email('t2') }); // x: 3 (inviteUser shares the budget)
    expect([ok1.status, ok2.status]).toEqual([200, 200]);
    const over = await gqlT(x.token, CREATE_USER, { e: email('t3'), p: 'password-123' });
    expect(over.status).toBe(429);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(over.body.errors[0].message).toMatch(/ACCOUNT_INVITES_PER_ADMIN/);
    const overInvite = await gqlT(x.token, INVITE, { e: email('t4') });
    expect(overInvite.status).toBe(429);
    // The other admin: the project's fourth call passes, its fifth is over the project's share.
    expect((await gqlT(other.token, INVITE, { e: email('t5') })).status).toBe(200);
    const overProject = await gqlT(other.token, INVITE, { e: email('t6') });
    expect(overProject.status).toBe(429);
    expect(overProject.body.errors[0].message).toMatch(/ACCOUNT_INVITES_PER_PROJECT/);
    expect(await t.services.db.prisma.invitation.count({ where: { email: { contains: 't4-' } } })).toBe(0);
  });

  it('an invitation expires after INVITATION_TTL: no longer listed, accepting it is 404', async () => {
    const y = await createProject(t.base, (await signIn(t.base)).access_token, 'Tenant Y');
    const holder = await createProject(t.base, (await signIn(t.base)).access_token, 'Tenant H');
    const inv = (await gqlT(y.token, INVITE, { e: holder.email })).body.data.inviteUser;
    const listed = await gqlT(holder.token, '{ me { invitations { id } } }');
    expect(listed.body.data.me.invitations).toEqual([{ id: inv.id }]);
    await new Promise((r) => setTimeout(r, 2_500));
    expect((await gqlT(holder.token, '{ me { invitations { id } } }')).body.data.me.invitations).toEqual([]);
    const late = await gqlT(holder.token, 'mutation($id: ID!) { acceptInvitation(id: $id) { id } }', {
      id: inv.id,
    });
    expect(late.status).toBe(404);
    // Inviting again renews it.
    const again = (await gqlT(y.token, INVITE, { e: holder.email })).body.data.inviteUser;
    const ok = await gqlT(holder.token, 'mutation($id: ID!) { acceptInvitation(id: $id) { admin } }', {
      id: again.id,
    });
    expect(ok.body.data.acceptInvitation).toEqual({ admin: false });
  });
});

describe('invitations', () => {
  it('inviteUser answers the same for an existing and an unknown address', async () => {
    const known = await gql(a.token, INVITE, { e: b.email });
    const unknown = await gql(a.token, INVITE, { e: email('nobody') });
    expect(known.status).toBe(200);
    expect(unknown.status).toBe(200);
    const shape = (x: { id: string; email: string }) => ({ ...x, id: typeof x.id, email: typeof x.email });
    expect(shape(known.body.data.inviteUser)).toEqual(shape(unknown.body.data.inviteUser));
    expect(known.body.data.inviteUser).toMatchObject({
      status: 'pending',
      admin: false,
      project: { id: a.projectId },
    });
  });

  it("the holder sees A's invitation in me, accepts it, and then signs in to A; nothing changed before", async () => {
    const holder = await addUser(s.base, b.token);
    const inv = (await gql(a.token, INVITE, { e: holder.email, admin: false })).body.data.inviteUser;
    // Until accepted the holder is not in A.
    expect((await loginTo(holder.email, holder.password, a.projectId)).status).toBe(403);
    const me = await gql(holder.token, '{ me { invitations { id admin project { id name } } } }');
    expect(me.body.data.me.invitations).toEqual([
      { id: inv.id, admin: false, project: { id: a.projectId, name: 'Tenant A' } },
    ]);
    // Someone else cannot accept it (404, as for an unknown id).
    const intruder = await gql(b.token, 'mutation($id: ID!) { acceptInvitation(id: $id) { id } }', {
      id: inv.id,
    });
    expect(intruder.status).toBe(404);
    const ok = await gql(
      holder.token,
      'mutation($id: ID!) { acceptInvitation(id: $id) { admin project { id } } }',
      {
        id: inv.id,
      },
    );
    expect(ok.body.data.acceptInvitation).toEqual({ admin: false, project: { id: a.projectId } });
    expect((await loginTo(holder.email, holder.password, a.projectId)).status).toBe(200);
    // The holder's own password still works for B; the invitation is no longer pending.
    expect((await loginTo(holder.email, holder.password, b.projectId)).status).toBe(200);
    expect((await gql(holder.token, '{ me { invitations { id } } }')).body.data.me.invitations).toEqual([]);
    const again = await gql(holder.token, 'mutation($id: ID!) { acceptInvitation(id: $id) { id } }', {
      id: inv.id,
    });
    expect(again.status).toBe(404);
  });

  it('a declined invitation gives no membership; a member cannot invite; a bad id is 400', async () => {
    const holder = await addUser(s.base, b.token);
    const inv = (await gql(a.token, INVITE, { e: holder.email })).body.data.inviteUser;
    const no = await gql(holder.token, 'mutation($id: ID!) { declineInvitation(id: $id) }', { id: inv.id });
    expect(no.body.data.declineInvitation).toBe(true);
    expect((await loginTo(holder.email, holder.password, a.projectId)).status).toBe(403);
    const member = await addUser(s.base, a.token);
    const denied = await gql(member.token, INVITE, { e: email('y') });
    expect(denied.status).toBe(403);
    const bad = await gql(holder.token, 'mutation { acceptInvitation(id: "nope") { id } }');
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].extensions.expression).toEqual(['id']);
  });
});
