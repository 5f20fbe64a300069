// Accounts between two projects (issue 12 item 2): an admin of one project can neither take over nor enumerate
// another tenant's accounts through createUser; an existing account joins a project only by accepting an invitation.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, dropSchema, signIn, startTestServer, type TestServer } from './helpers/server.js';
import { addUser, createProject, type Account } from './helpers/projects.js';

let s: TestServer;
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
  s = await startTestServer();
  const serverAdmin = (await signIn(s.base)).access_token;
  a = await createProject(s.base, serverAdmin, 'Tenant A');
  b = await createProject(s.base, serverAdmin, 'Tenant B');
});
afterAll(async () => {
  await s?.close();
  await dropSchema(s?.schema);
});

describe('createUser with an address that already has an account', () => {
  it('no takeover: B made the account with its password; A "creating" it as admin gives B nothing in A', async () => {
    const victim = email('x');
    const made = await gql(b.token, CREATE_USER, { e: victim, p: 'password-of-b-123' });
    expect(made.body.data.createUser.email).toBe(victim);
    const r = await gql(a.token, CREATE_USER, { e: victim, p: 'password-of-a-123', admin: true });
    expect(r.status).toBe(409);
    expect(r.body.data).toBeNull();
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

  it("no enumeration: the answer for another tenant's account equals the one for an own member, and names nobody", async () => {
    // B's admin has a name; A probes B's admin's address and its own member's address.
    await s.services.db.prisma.user.update({
      where: { id: b.userId },
      data: { firstName: 'Bea', lastName: 'Secret' },
    });
    const ownMember = await addUser(s.base, a.token);
    const other = await gql(a.token, CREATE_USER, { e: b.email, p: 'password-123' });
    const own = await gql(a.token, CREATE_USER, { e: ownMember.email, p: 'password-123' });
    expect(other.status).toBe(409);
    expect(own.status).toBe(409);
    expect(other.body).toEqual(own.body);
    expect(other.text).not.toMatch(/Bea|Secret|Tenant B/);
    expect(other.text).not.toContain(b.userId);
    expect(other.body.errors[0].extensions.expression).toEqual(['email']);
  });

  it('a new address still creates an account in the caller project, which signs in at once', async () => {
    const fresh = email('new');
    const r = await gql(a.token, CREATE_USER, { e: fresh, p: 'fresh-password-1' });
    expect(r.status).toBe(200);
    const login = await loginTo(fresh, 'fresh-password-1');
    expect(login.status).toBe(200);
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
