// Shared setup for the bot test files: a second project with its own admin, bots from code, executing them.
import crypto from 'node:crypto';
import { hashPassword } from '../src/auth/passwords.js';
import { call, signIn, type TestServer } from './helpers/server.js';

/** Creates another project with an admin user (directly in the database) and returns that user's access token. */
export async function createOtherProject(server: TestServer): Promise<string> {
  const prisma = server.services.db.prisma;
  const email = `other-${crypto.randomBytes(4).toString('hex')}@example.com`;
  const password = 'other-password-123';
  const project = await prisma.project.create({ data: { name: 'Other project' } });
  const user = await prisma.user.create({ data: { email, passwordHash: await hashPassword(password) } });
  await prisma.projectMembership.create({ data: { projectId: project.id, userId: user.id, admin: true } });
  return (await signIn(server.base, email, password)).access_token;
}

/** Creates a bot with code and returns its id. */
export async function createBot(
  server: TestServer,
  token: string,
  code: string,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const r = await call(server.base, 'POST', 'fhir/R4/Bot', {
    token,
    body: { resourceType: 'Bot', name: 'test bot', code, ...extra },
  });
  if (r.status !== 201) throw new Error(`create bot failed: ${r.status} ${r.text}`);
  return r.body.id as string;
}

/** POSTs a body to a bot's $execute with a content type. */
export function execute(
  server: TestServer,
  token: string,
  id: string,
  body: string,
  contentType = 'application/json',
  headers: Record<string, string> = {},
) {
  return call(server.base, 'POST', `fhir/R4/Bot/${id}/$execute`, {
    token,
    raw: body,
    headers: { 'content-type': contentType, ...headers },
  });
}

/** Runs a GraphQL operation. */
export function gql(
  server: TestServer,
  token: string,
  query: string,
  variables: Record<string, unknown> = {},
) {
  return call(server.base, 'POST', 'graphql', {
    token,
    body: { query, variables },
    headers: { 'content-type': 'application/json' },
  });
}
