// A project's client applications as its admins manage them (issue 24): createProject's first client; create,
// list, update, rotate (the old secret kept for the grace, then refused), delete (its tokens refused on the next
// request); a public client (no secret, no client_credentials, PKCE and an exactly matched redirect URI); a member
// gets 403, another project 404, malformed ids and input 400 naming the field.
import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, useTestServer } from '../helpers/server.js';
import { addUser, createProject, type Account, type ProjectAdmin } from '../helpers/projects.js';

/** A short grace, so the test sees the old secret refused once it ends. */
const GRACE_SEC = 5;
const s = useTestServer({ signIn: true, config: { clientSecretRotationGraceSec: GRACE_SEC } });
let admin: ProjectAdmin;
let member: Account;
let other: ProjectAdmin;

const gql = (token: string, query: string, variables: Record<string, unknown> = {}) =>
  call(s.base, 'POST', 'graphql', {
    token,
    body: { query, variables },
    headers: { 'content-type': 'application/json' },
  });

const FIELDS = 'id name type redirectUris createdAt lastUsed previousSecretExpiresAt membershipId role';
const LIST = `{ projectClients { ${FIELDS} } }`;
const CREATE = `mutation($name: String!, $type: ClientType, $uris: [String!], $admin: Boolean) {
  createClientApplication(name: $name, type: $type, redirectUris: $uris, admin: $admin) {
    client { ${FIELDS} } secret } }`;
const UPDATE = `mutation($id: ID!, $name: String, $uris: [String!]) {
  updateClientApplication(id: $id, name: $name, redirectUris: $uris) { ${FIELDS} } }`;
const ROTATE = `mutation($id: ID!) { rotateClientSecret(id: $id) { client { ${FIELDS} } secret } }`;
const DELETE = 'mutation($id: ID!) { deleteClientApplication(id: $id) }';

type Client = {
  id: string;
  name: string;
  type: string;
  redirectUris: string[];
  lastUsed: string | null;
  previousSecretExpiresAt: string | null;
  role: string;
};

async function list(token = admin.token): Promise<Client[]> {
  const r = await gql(token, LIST);
  expect(r.status, r.text).toBe(200);
  return r.body.data.projectClients as Client[];
}

async function create(vars: Record<string, unknown>, token = admin.token) {
  const r = await gql(token, CREATE, vars);
  expect(r.status, r.text).toBe(200);
  return r.body.data.createClientApplication as { client: Client; secret: string | null };
}

function token(form: Record<string, string>) {
  return call(s.base, 'POST', 'oauth2/token', {
    raw: new URLSearchParams(form).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
}

const clientCredentials = (id: string, secret: string, extra: Record<string, string> = {}) =>
  token({ grant_type: 'client_credentials', client_id: id, client_secret: secret, ...extra });

const me = (accessToken: string) => call(s.base, 'GET', 'auth/me', { token: accessToken });

/** The project admin signs in naming a client (and a redirect URI); returns the code and its verifier. */
async function signInThrough(clientId: string | undefined, redirectUri?: string) {
  const verifier = crypto.randomBytes(32).toString('base64url');
  const challenge = crypto.createHash('sha256').update(verifier).digest('base64url');
  const r = await call(s.base, 'POST', 'auth/login', {
    body: {
      email: admin.email,
      password: admin.password,
      codeChallenge: challenge,
      codeChallengeMethod: 'S256',
      clientId,
      redirectUri,
    },
    headers: { 'content-type': 'application/json' },
  });
  return { status: r.status, body: r.body, code: r.body?.code as string, verifier };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  admin = await createProject(s.base, s.token, 'Clients project');
  member = await addUser(s.base, admin.token);
  other = await createProject(s.base, s.token, 'Another clients project');
});

describe("createProject's first client application", () => {
  it('is answered once with its secret; its client_credentials token works in the project', async () => {
    expect(admin.clientId).toMatch(/^[0-9a-f-]{36}$/);
    expect(admin.clientSecret.length).toBeGreaterThanOrEqual(43);
    const t = await clientCredentials(admin.clientId, admin.clientSecret);
    expect(t.status, t.text).toBe(200);
    expect(t.body.project.reference).toBe(`Project/${admin.projectId}`);
    const who = await me(t.body.access_token);
    expect(who.status).toBe(200);
    expect(who.body.project.id).toBe(admin.projectId);

    const clients = await list();
    expect(clients).toHaveLength(1);
    expect(clients[0]).toMatchObject({ id: admin.clientId, type: 'confidential', role: 'admin' });
    expect(Date.parse(clients[0].lastUsed!)).toBeGreaterThan(Date.now() - 10 * 60_000);
    // Listed without its secret, which is kept only as a hash.
    expect(JSON.stringify(clients)).not.toContain(admin.clientSecret);
    // The type has no secret to ask for (a validation error: yoga answers it with 200 and the errors).
    const noSecret = await gql(admin.token, '{ projectClients { id secret } }');
    expect(noSecret.body.errors[0].message).toMatch(/Cannot query field "secret"/);
    expect(noSecret.body.data).toBeUndefined();
  });
});

describe('a project admin manages client applications', () => {
  it('create -> token -> API call; rotate -> both secrets, then the old one refused; delete -> refused', async () => {
    const uris = ['https://app.example/callback', 'http://127.0.0.1:8123/cb'];
    const made = await create({ name: '  Lab interface  ', uris });
    expect(made.client).toMatchObject({ name: 'Lab interface', type: 'confidential', redirectUris: uris });
    expect(made.client.role).toBe('member');
    expect(made.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const id = made.client.id;
    const first = made.secret!;
    const stored = await s.services.db.prisma.clientApplication.findUniqueOrThrow({ where: { id } });
    expect(stored.secretHash).toBe(crypto.createHash('sha256').update(first).digest('hex'));
    expect(JSON.stringify(await list())).not.toContain(first);

    // Its token (with a refresh token) works in the project, as a member.
    const t = await clientCredentials(id, first, { scope: 'openid offline_access' });
    expect(t.status, t.text).toBe(200);
    expect(t.body.refresh_token).toBeTruthy();
    const asClient = await gql(t.body.access_token, '{ me { clientId project { id } } }');
    expect(asClient.body.data.me).toEqual({ clientId: id, project: { id: admin.projectId } });
    expect((await gql(t.body.access_token, LIST)).status).toBe(403);

    // Rotate: a new secret, shown once; the old one still works within the grace, then not.
    const rotated = await gql(admin.token, ROTATE, { id });
    expect(rotated.status, rotated.text).toBe(200);
    const second = rotated.body.data.rotateClientSecret.secret as string;
    expect(second).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(second).not.toBe(first);
    const graceEnd = Date.parse(rotated.body.data.rotateClientSecret.client.previousSecretExpiresAt);
    expect(graceEnd).toBeGreaterThan(Date.now());
    expect(graceEnd).toBeLessThanOrEqual(Date.now() + GRACE_SEC * 1000);
    expect((await clientCredentials(id, second)).status).toBe(200);
    const old = await clientCredentials(id, first);
    expect(old.status, old.text).toBe(200);
    await sleep(Math.max(0, graceEnd - Date.now()) + 300);
    const late = await clientCredentials(id, first);
    expect(late.status).toBe(401);
    expect(late.body.error).toBe('invalid_client');
    expect((await clientCredentials(id, second)).status).toBe(200);
    expect((await list()).find((c) => c.id === id)!.previousSecretExpiresAt).toBeNull();

    // Rename and re-register the redirect URIs.
    const upd = await gql(admin.token, UPDATE, { id, name: 'Lab', uris: ['https://lab.example/cb'] });
    expect(upd.status, upd.text).toBe(200);
    expect(upd.body.data.updateClientApplication).toMatchObject({
      name: 'Lab',
      redirectUris: ['https://lab.example/cb'],
    });

    // Delete: the token it had is refused on the very next request, and so are its refresh token and secret.
    const del = await gql(admin.token, DELETE, { id });
    expect(del.status, del.text).toBe(200);
    expect(del.body.data.deleteClientApplication).toBe(true);
    expect((await me(t.body.access_token)).status).toBe(401);
    const refresh = await token({
      grant_type: 'refresh_token',
      refresh_token: t.body.refresh_token,
      client_id: id,
      client_secret: second,
    });
    expect(refresh.status).toBe(401);
    expect(refresh.body.error).toBe('invalid_client');
    const refreshAlone = await token({ grant_type: 'refresh_token', refresh_token: t.body.refresh_token });
    expect(refreshAlone.status).toBe(400);
    expect(refreshAlone.body.error).toBe('invalid_grant');
    expect((await clientCredentials(id, second)).status).toBe(401);
    expect((await list()).map((c) => c.id)).not.toContain(id);
    expect((await gql(admin.token, DELETE, { id })).status).toBe(404);
  }, 60_000);

  it("a user's sign-in through a client names one of its redirect URIs, repeated exactly at the exchange", async () => {
    const { client, secret } = await create({ name: 'Web app', uris: ['https://web.example/cb'] });
    const unregistered = await signInThrough(client.id, 'https://web.example/cb/');
    expect(unregistered.status).toBe(400);
    expect(unregistered.body.issue[0].expression).toEqual(['redirectUri']);

    const l = await signInThrough(client.id, 'https://web.example/cb');
    expect(l.status).toBe(200);
    const wrong = await token({
      grant_type: 'authorization_code',
      code: l.code,
      code_verifier: l.verifier,
      client_id: client.id,
      client_secret: secret!,
      redirect_uri: 'https://web.example/other',
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe('invalid_grant');

    const l2 = await signInThrough(client.id, 'https://web.example/cb');
    const ok = await token({
      grant_type: 'authorization_code',
      code: l2.code,
      code_verifier: l2.verifier,
      client_id: client.id,
      client_secret: secret!,
      redirect_uri: 'https://web.example/cb',
    });
    expect(ok.status, ok.text).toBe(200);

    // Deleting the client ends the user's session made through it too.
    expect((await me(ok.body.access_token)).status).toBe(200);
    expect((await gql(admin.token, DELETE, { id: client.id })).status).toBe(200);
    expect((await me(ok.body.access_token)).status).toBe(401);
  });

  it('token requests racing the deletion get a token or 401, never a 5xx, and no token outlives it', async () => {
    const { client, secret } = await create({ name: 'Raced' });
    const requests = Array.from({ length: 12 }, () => clientCredentials(client.id, secret!));
    const del = await gql(admin.token, DELETE, { id: client.id });
    expect(del.status, del.text).toBe(200);
    const answers = await Promise.all(requests);
    for (const r of answers) expect([200, 401], r.text).toContain(r.status);
    for (const r of answers.filter((a) => a.status === 200))
      expect((await me(r.body.access_token)).status).toBe(401);
  });

  it('a public client has no secret, is refused at client_credentials, and redeems codes with PKCE alone', async () => {
    const made = await create({ name: 'SPA', type: 'public', uris: ['http://localhost:3000/cb'] });
    expect(made.secret).toBeNull();
    expect(made.client.type).toBe('public');
    const id = made.client.id;

    for (const form of [
      { grant_type: 'client_credentials', client_id: id } as Record<string, string>,
      { grant_type: 'client_credentials', client_id: id, client_secret: 'guessed-secret' },
    ]) {
      const r = await token(form);
      expect(r.status, r.text).toBe(400);
      expect(r.body.error).toBe('unauthorized_client');
    }

    const l = await signInThrough(id, 'http://localhost:3000/cb');
    expect(l.status).toBe(200);
    const noRedirect = await signInThrough(id);
    const missing = await token({
      grant_type: 'authorization_code',
      code: l.code,
      code_verifier: l.verifier,
      client_id: id,
    });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toBe('invalid_grant');
    const ok = await token({
      grant_type: 'authorization_code',
      code: noRedirect.code,
      code_verifier: noRedirect.verifier,
      client_id: id,
    });
    expect(ok.status, ok.text).toBe(200);
    expect((await me(ok.body.access_token)).status).toBe(200);

    // Nor can it authenticate to introspect.
    const intro = await call(s.base, 'POST', 'oauth2/introspect', {
      raw: new URLSearchParams({ token: ok.body.access_token }).toString(),
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${id}:guessed-secret`).toString('base64')}`,
      },
    });
    expect(intro.status).toBe(400);
    expect(intro.body.error).toBe('unauthorized_client');

    const rotate = await gql(admin.token, ROTATE, { id });
    expect(rotate.status).toBe(409);
    expect((await gql(admin.token, DELETE, { id })).status).toBe(200);
  });
});

describe('who may manage client applications, and what they may send', () => {
  it('a member gets 403; another project gets 404 for these ids and never sees them', async () => {
    const id = admin.clientId;
    for (const [query, vars] of [
      [LIST, {}],
      [CREATE, { name: 'Nope' }],
      [UPDATE, { id, name: 'Nope' }],
      [ROTATE, { id }],
      [DELETE, { id }],
    ] as const) {
      const r = await gql(member.token, query, vars);
      expect(r.status, `${query}: ${r.text}`).toBe(403);
    }
    for (const [query, vars] of [
      [UPDATE, { id, name: 'Taken over' }],
      [ROTATE, { id }],
      [DELETE, { id }],
    ] as const) {
      const r = await gql(other.token, query, vars);
      expect(r.status, `${query}: ${r.text}`).toBe(404);
    }
    expect((await list(other.token)).map((c) => c.id)).toEqual([other.clientId]);
    // Nothing changed: the client keeps its name and secret.
    expect((await list()).find((c) => c.id === id)!.name).toBe('Default Client');
    expect((await clientCredentials(id, admin.clientSecret)).status).toBe(200);
  });

  it('malformed ids and input answer 400 naming the field, and create nothing', async () => {
    const before = (await list()).length;
    for (const query of [UPDATE, ROTATE, DELETE]) {
      const r = await gql(admin.token, query, { id: 'not-a-uuid' });
      expect(r.status, r.text).toBe(400);
      expect(r.body.errors[0].extensions.expression).toEqual(['id']);
    }
    const bad: Array<[Record<string, unknown>, RegExp]> = [
      [{ name: '' }, /name/],
      [{ name: 'x'.repeat(201) }, /name/],
      [{ name: 'a\u0007b' }, /control/],
      // A lone surrogate (valid JSON as an escape) reached the database and answered 500.
      [{ name: 'a\ud800b' }, /Unicode/],
      [{ name: 'ok', uris: ['http://app.example/cb'] }, /redirectUris\[0\].*http/],
      [{ name: 'ok', uris: ['https://app.example/cb#frag'] }, /fragment/],
      [{ name: 'ok', uris: ['/relative/cb'] }, /absolute/],
      [{ name: 'ok', uris: ['javascript:alert(1)'] }, /scheme/],
      [{ name: 'ok', uris: ['https://user:pw@app.example/cb'] }, /user info/],
      [{ name: 'ok', uris: ['https://app.example/ cb'] }, /whitespace/],
      [{ name: 'ok', uris: [`https://app.example/${'a'.repeat(2000)}`] }, /2000/],
      [{ name: 'ok', uris: Array.from({ length: 11 }, (_, i) => `https://app.example/${i}`) }, /At most 10/],
    ];
    for (const [vars, message] of bad) {
      const r = await gql(admin.token, CREATE, vars);
      expect(r.status, `${JSON.stringify(vars).slice(0, 80)}: ${r.text.slice(0, 300)}`).toBe(400);
      expect(r.body.errors[0].message).toMatch(message);
      expect(r.body.errors[0].extensions.expression).toEqual([vars.uris ? 'redirectUris' : 'name']);
    }
    const badUpdate = await gql(admin.token, UPDATE, { id: admin.clientId, uris: ['ftp://x.example/'] });
    expect(badUpdate.status).toBe(400);
    const badType = await gql(admin.token, CREATE, { name: 'ok', type: 'secretive' });
    expect(badType.status).toBeLessThan(500);
    expect(badType.body.errors[0].message).toMatch(/ClientType/);
    expect(badType.body.data).toBeUndefined();
    expect((await list()).length).toBe(before);
    // A sign-in's redirectUri needs a client, and a bounded length.
    const noClient = await signInThrough(undefined, 'https://x.example/cb');
    expect(noClient.status).toBe(400);
    expect(noClient.body.issue[0].expression).toEqual(['redirectUri']);
    const tooLong = await signInThrough(admin.clientId, `https://x.example/${'a'.repeat(2000)}`);
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.issue[0].expression).toEqual(['redirectUri']);
  });

  it('a project holds at most 100 client applications: the next one is 409', async () => {
    const full = await createProject(s.base, s.token, 'Full of clients');
    // 98 more rows at once (a hundred API calls would only cost time), then the 100th through the API.
    await s.services.db.sql(
      `INSERT INTO "ClientApplication" (id, "projectId", name, "secretHash")
        SELECT gen_random_uuid(), $1::uuid, 'Client ' || i, md5(i::text) FROM generate_series(1, 98) i`,
      [full.projectId],
    );
    expect((await create({ name: 'The hundredth' }, full.token)).secret).toBeTruthy();
    expect(await list(full.token)).toHaveLength(100);
    const over = await gql(full.token, CREATE, { name: 'One too many' });
    expect(over.status).toBe(409);
    expect(over.body.errors[0].message).toMatch(/at most 100/);
    expect(await list(full.token)).toHaveLength(100);
  }, 60_000);
});
