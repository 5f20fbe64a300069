// Projects and accounts for tests, made through the public API: GraphQL createProject (as the server
// administrator, the first start's admin) and createUser (as a project admin).
import crypto from 'node:crypto';
import { call, signIn } from './server.js';

/** A signed-in account of a project. */
export interface Account {
  projectId: string;
  userId: string;
  email: string;
  password: string;
  /** An access token of a fresh session. */
  token: string;
}

/** A new project's admin, with the project's first client application as createProject answered it. */
export interface ProjectAdmin extends Account {
  clientId: string;
  clientSecret: string;
}

async function graphql(base: string, token: string, query: string, variables: Record<string, unknown>) {
  const r = await call(base, 'POST', 'graphql', {
    token,
    body: { query, variables },
    headers: { 'content-type': 'application/json' },
  });
  if (r.status !== 200 || r.body?.errors) throw new Error(`GraphQL failed: ${r.status} ${r.text}`);
  return r.body.data;
}

const uniqueEmail = (prefix: string) => `${prefix}-${crypto.randomBytes(4).toString('hex')}@example.com`;

/** Creates a project with a new admin (createProject, as the server administrator) and signs the admin in; with the
 * project's first client application. */
export async function createProject(
  base: string,
  serverAdminToken: string,
  name = 'Other project',
): Promise<ProjectAdmin> {
  const email = uniqueEmail('admin');
  const password = `pw-${crypto.randomBytes(8).toString('hex')}`;
  const data = await graphql(
    base,
    serverAdminToken,
    `
      mutation ($name: String!, $email: String!, $password: String!) {
        createProject(name: $name, adminEmail: $email, adminPassword: $password) {
          project {
            id
          }
          admin {
            id
          }
          clientId
          clientSecret
        }
      }
    `,
    { name, email, password },
  );
  const token = (await signIn(base, email, password)).access_token;
  return {
    projectId: data.createProject.project.id,
    userId: data.createProject.admin.id,
    email,
    password,
    token,
    clientId: data.createProject.clientId,
    clientSecret: data.createProject.clientSecret,
  };
}

/** Adds a new user to the project of `adminToken` (createUser) as an admin or a member, and signs it in. */
export async function addUser(
  base: string,
  adminToken: string,
  opts: { admin?: boolean } = {},
): Promise<Account> {
  const email = uniqueEmail(opts.admin ? 'admin' : 'member');
  const password = `pw-${crypto.randomBytes(8).toString('hex')}`;
  const data = await graphql(
    base,
    adminToken,
    `
      mutation ($email: String!, $password: String!, $admin: Boolean) {
        createUser(email: $email, password: $password, admin: $admin) {
          id
        }
      }
    `,
    { email, password, admin: opts.admin ?? false },
  );
  const token = (await signIn(base, email, password)).access_token;
  const me = await graphql(base, token, '{ me { project { id } } }', {});
  return { projectId: me.me.project.id, userId: data.createUser.id, email, password, token };
}
