// `npm run conformance -- --stored`: each suite's setup is written through the REST API (POST [base]/{type}, in
// the suite's order) into a project of its own, and its tests are sent without tx-resource, so that stored
// resources are judged as the runner judges resources sent with the request (issue 26: a version bug that only
// stored resources showed). A project per suite keeps suites that reuse a url apart.
import crypto from 'node:crypto';
import type { Json } from './compare.js';
import { call, signIn } from '../test/helpers/server.js';

/** A suite's project: the token its tests run with, or why its setup could not be stored. */
export interface StoredSuite {
  token?: string;
  error?: string;
}

/** The resource types the server stores (others in a setup are left out: nothing here reads them). */
const STORED_TYPES = new Set(['CodeSystem', 'ValueSet', 'ConceptMap']);

/** Creates a project for the suite (as the server administrator) and stores its setup with the project admin. */
export async function storeSetup(
  base: string,
  serverAdminToken: string,
  suite: string,
  setup: readonly Json[],
): Promise<StoredSuite> {
  const email = `conformance-${crypto.randomBytes(6).toString('hex')}@example.com`;
  const password = `pw-${crypto.randomBytes(12).toString('hex')}`;
  const created = await call(base, 'POST', 'graphql', {
    token: serverAdminToken,
    headers: { 'content-type': 'application/json' },
    body: {
      query:
        'mutation ($n: String!, $e: String!, $p: String!) { createProject(name: $n, adminEmail: $e, adminPassword: $p) { project { id } } }',
      variables: { n: `conformance ${suite}`.slice(0, 100), e: email, p: password },
    },
  });
  if (created.status !== 200 || created.body?.errors)
    return { error: `createProject: ${created.status} ${created.text.slice(0, 200)}` };
  const token = (await signIn(base, email, password)).access_token;
  for (const resource of setup) {
    const r = resource as { resourceType?: string; url?: string; version?: string };
    if (!r.resourceType || !STORED_TYPES.has(r.resourceType)) continue;
    const { id: _id, ...body } = resource as Record<string, Json>;
    const res = await call(base, 'POST', `fhir/R4/${r.resourceType}`, { token, body });
    if (res.status !== 201)
      return {
        error: `POST ${r.resourceType} ${r.url ?? ''}|${r.version ?? ''}: ${res.status} ${res.text.slice(0, 300)}`,
      };
  }
  return { token };
}
