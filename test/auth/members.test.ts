// A project's members as its admins manage them (issue 24, item 2): list with role and last sign-in, promote,
// demote, remove (the member's tokens refused on the next request), pending invitations listed and cancelled; a
// member gets 403, another project's ids 404, and the last admin can be neither demoted nor removed (409).
import { beforeAll, describe, expect, it } from 'vitest';
import { call, signIn, useTestServer } from '../helpers/server.js';
import { addUser, createProject, type Account } from '../helpers/projects.js';

const s = useTestServer({ signIn: true });
let admin: Account;
let member: Account;
let other: Account;

const gql = (token: string, query: string, variables: Record<string, unknown> = {}) =>
  call(s.base, 'POST', 'graphql', {
    token,
    body: { query, variables },
    headers: { 'content-type': 'application/json' },
  });

const MEMBERS = '{ projectMembers { id userId email role admin lastSignIn } }';
const SET_ROLE = 'mutation($id: ID!, $admin: Boolean!) { setMemberRole(id: $id, admin: $admin) { id role } }';
const REMOVE = 'mutation($id: ID!) { removeMember(id: $id) }';

type Member = { id: string; userId: string; email: string; role: string; admin: boolean; lastSignIn: string };

async function members(token = admin.token): Promise<Member[]> {
  const r = await gql(token, MEMBERS);
  expect(r.status, r.text).toBe(200);
  return r.body.data.projectMembers as Member[];
}

const membershipOf = async (account: Account) => (await members()).find((m) => m.userId === account.userId)!;
const me = (token: string) => call(s.base, 'GET', 'auth/me', { token });

beforeAll(async () => {
  admin = await createProject(s.base, s.token, 'Members project');
  member = await addUser(s.base, admin.token);
  other = await createProject(s.base, s.token, 'Another project');
});

describe('project members', () => {
  it('lists the members with their role and last sign-in, admins first', async () => {
    const list = await members();
    expect(list.map((m) => m.role)).toEqual(['admin', 'admin', 'member']);
    const users = list.filter((m) => m.userId);
    expect(users.map((m) => [m.email, m.role])).toEqual([
      [admin.email, 'admin'],
      [member.email, 'member'],
    ]);
    // The other admin is createProject's first client application (no user, no email).
    expect(list.filter((m) => !m.userId).map((m) => [m.email, m.role])).toEqual([[null, 'admin']]);
    expect(Date.parse(users[1].lastSignIn)).toBeGreaterThan(Date.now() - 10 * 60_000);
  });

  it('a member gets 403 for every admin operation; another project gets 404 for these ids', async () => {
    const target = await membershipOf(member);
    for (const [query, vars] of [
      [MEMBERS, {}],
      [SET_ROLE, { id: target.id, admin: true }],
      [REMOVE, { id: target.id }],
      ['{ projectInvitations { id } }', {}],
    ] as const) {
      const r = await gql(member.token, query, vars);
      expect(r.status, `${query}: ${r.text}`).toBe(403);
    }
    const r1 = await gql(other.token, SET_ROLE, { id: target.id, admin: true });
    expect(r1.status, r1.text).toBe(404);
    const r2 = await gql(other.token, REMOVE, { id: target.id });
    expect(r2.status, r2.text).toBe(404);
    // Nothing changed, and the member's session still works.
    expect((await membershipOf(member)).role).toBe('member');
    expect((await me(member.token)).status).toBe(200);
  });

  it('promotion ends the member’s sessions; signed in again, they are an admin', async () => {
    const target = await membershipOf(member);
    const r = await gql(admin.token, SET_ROLE, { id: target.id, admin: true });
    expect(r.status, r.text).toBe(200);
    expect(r.body.data.setMemberRole).toEqual({ id: target.id, role: 'admin' });
    expect((await me(member.token)).status).toBe(401);
    member.token = (await signIn(s.base, member.email, member.password)).access_token;
    expect((await gql(member.token, MEMBERS)).status).toBe(200);
  });

  it('demotion ends the sessions too; the last admin cannot be demoted or removed (409)', async () => {
    const target = await membershipOf(member);
    const r = await gql(admin.token, SET_ROLE, { id: target.id, admin: false });
    expect(r.status, r.text).toBe(200);
    expect((await me(member.token)).status).toBe(401);
    member.token = (await signIn(s.base, member.email, member.password)).access_token;
    expect((await gql(member.token, MEMBERS)).status).toBe(403);

    const self = await membershipOf(admin);
    for (const [query, vars] of [
      [SET_ROLE, { id: self.id, admin: false }],
      [REMOVE, { id: self.id }],
    ] as const) {
      const last = await gql(admin.token, query, vars);
      expect(last.status, last.text).toBe(409);
      expect(last.body.errors[0].message).toMatch(/last admin/);
    }
    expect((await me(admin.token)).status).toBe(200);
  });

  it('removal ends the member’s sessions at once and takes them off the list', async () => {
    const target = await membershipOf(member);
    const r = await gql(admin.token, REMOVE, { id: target.id });
    expect(r.status, r.text).toBe(200);
    expect(r.body.data.removeMember).toBe(true);
    expect((await me(member.token)).status).toBe(401);
    const left = await members();
    expect(left.filter((m) => m.userId).map((m) => m.email)).toEqual([admin.email]);
    expect(left).toHaveLength(2); // and the project's client application
    const again = await gql(admin.token, REMOVE, { id: target.id });
    expect(again.status).toBe(404);
  });

  it('pending invitations are listed and can be cancelled', async () => {
    const invited = await gql(admin.token, 'mutation($e: String!) { inviteUser(email: $e) { id } }', {
      e: other.email,
    });
    expect(invited.status, invited.text).toBe(200);
    const id = invited.body.data.inviteUser.id as string;
    const list = await gql(admin.token, '{ projectInvitations { id email status } }');
    expect(list.body.data.projectInvitations).toEqual([{ id, email: other.email, status: 'pending' }]);
    // The invited account's holder sees it, until it is cancelled.
    const before = await gql(other.token, '{ me { invitations { id } } }');
    expect(before.body.data.me.invitations).toEqual([{ id }]);
    const cancel = await gql(admin.token, 'mutation($id: ID!) { cancelInvitation(id: $id) }', { id });
    expect(cancel.body.data.cancelInvitation).toBe(true);
    const after = await gql(other.token, '{ me { invitations { id } } }');
    expect(after.body.data.me.invitations).toEqual([]);
    const accept = await gql(other.token, 'mutation($id: ID!) { acceptInvitation(id: $id) { id } }', { id });
    expect(accept.status).toBe(404);
    const twice = await gql(admin.token, 'mutation($id: ID!) { cancelInvitation(id: $id) }', { id });
    expect(twice.status).toBe(404);
  });
});
