// Shared setup for the bot test files: a second project with its own admin, bots from code, executing them.
import { createProject } from '../helpers/projects.js';
import { call, signIn, type TestServer } from '../helpers/server.js';

/** The part of a test server these helpers use (a TestServer, or useTestServer's handle). */
type ServerBase = Pick<TestServer, 'base'>;

/** Creates another project with an admin user (GraphQL createProject) and returns that user's access token. */
export async function createOtherProject(server: ServerBase): Promise<string> {
  const serverAdmin = (await signIn(server.base)).access_token;
  return (await createProject(server.base, serverAdmin)).token;
}

/** Creates a bot with code and returns its id. */
export async function createBot(
  server: ServerBase,
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
  server: ServerBase,
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
  server: ServerBase,
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
