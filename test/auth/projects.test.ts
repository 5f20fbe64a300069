// Projects through the API: a server administrator (the first start's admin) creates a project with its first
// admin; nobody else can; bad input is a 400 naming the field.
import { beforeAll, describe, expect, it } from 'vitest';
import { call, useTestServer } from '../helpers/server.js';
import { addUser, createProject } from '../helpers/projects.js';

const server = useTestServer({ signIn: true });
let serverAdmin: string;

const CREATE = `mutation($name: String!, $email: String!, $password: String!) {
  createProject(name: $name, adminEmail: $email, adminPassword: $password) { project { id name } admin { id email serverAdmin } }
}`;

function gql(token: string, query: string, variables: Record<string, unknown> = {}) {
  return call(server.base, 'POST', 'graphql', {
    token,
    body: { query, variables },
    headers: { 'content-type': 'application/json' },
  });
}

beforeAll(async () => {
  serverAdmin = server.token;
});

describe('createProject', () => {
  it('the first start admin is a server administrator', async () => {
    const r = await gql(serverAdmin, '{ me { user { email serverAdmin } } }');
    expect(r.body.data.me.user.serverAdmin).toBe(true);
  });

  it('creates a project whose admin signs in to it, sees only it, and is not a server administrator', async () => {
    const b = await createProject(server.base, serverAdmin, 'Clinic B');
    const me = await gql(b.token, '{ me { project { id name } membership { admin } user { serverAdmin } } }');
    expect(me.body.data.me).toEqual({
      project: { id: b.projectId, name: 'Clinic B' },
      membership: { admin: true },
      user: { serverAdmin: false },
    });
    // The new admin cannot create projects.
    const r = await gql(b.token, CREATE, {
      name: 'C',
      email: 'c-admin@example.com',
      password: 'password-123',
    });
    expect(r.status).toBe(403);
    expect(r.body.errors[0].extensions.code).toBe('forbidden');
  });

  it('a member cannot create projects', async () => {
    const member = await addUser(server.base, serverAdmin, { admin: false });
    const r = await gql(member.token, CREATE, {
      name: 'C',
      email: 'c2-admin@example.com',
      password: 'password-123',
    });
    expect(r.status).toBe(403);
  });

  it('refuses an existing email (409), a bad email, a short password and an empty name (400), writing nothing', async () => {
    const before = await server.services.db.prisma.project.count();
    const dup = await gql(serverAdmin, CREATE, {
      name: 'X',
      email: 'admin@example.com',
      password: 'password-123',
    });
    expect(dup.status).toBe(409);
    expect(dup.body.errors[0].extensions.code).toBe('duplicate');
    const bad = await gql(serverAdmin, CREATE, {
      name: 'X',
      email: 'not-an-email',
      password: 'password-123',
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].extensions.expression).toEqual(['adminEmail']);
    const short = await gql(serverAdmin, CREATE, { name: 'X', email: 'x@example.com', password: 'short' });
    expect(short.body.errors[0].extensions.expression).toEqual(['adminPassword']);
    const empty = await gql(serverAdmin, CREATE, {
      name: '  ',
      email: 'x@example.com',
      password: 'password-123',
    });
    expect(empty.body.errors[0].extensions.expression).toEqual(['name']);
    // A lone surrogate (a valid JSON escape) answered 500.
    const surrogate = await gql(serverAdmin, CREATE, {
      name: 'Clinic \ud800',
      email: 'x@example.com',
      password: 'password-123',
    });
    expect(surrogate.status, surrogate.text).toBe(400);
    expect(surrogate.body.errors[0].message).toMatch(/Unicode/);
    expect(surrogate.body.errors[0].extensions.expression).toEqual(['name']);
    expect(await server.services.db.prisma.project.count()).toBe(before);
  });

  it('is refused without a token', async () => {
    const r = await gql('', CREATE, { name: 'X', email: 'y@example.com', password: 'password-123' });
    expect(r.status).toBe(401);
    expect(r.body.errors[0].extensions.code).toBe('login');
  });
});
