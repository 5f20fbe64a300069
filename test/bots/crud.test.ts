// Bot storage over REST: CRUD, search by identifier, identifier uniqueness per project, $deploy, compile errors.
import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, useTestServer } from '../helpers/server.js';
import { createOtherProject } from './helpers.js';

const server = useTestServer({ signIn: true });
let token: string;
let otherToken: string;

beforeAll(async () => {
  token = server.token;
  otherToken = await createOtherProject(server);
});

const sys = 'https://example.com/bots';

describe('Bot CRUD', () => {
  it('creates, reads, updates, searches and deletes a bot', async () => {
    const created = await call(server.base, 'POST', 'fhir/R4/Bot', {
      token,
      body: {
        resourceType: 'Bot',
        name: 'Echo',
        description: 'echoes',
        identifier: [{ system: sys, value: 'echo-crud' }],
        code: 'export async function handler(medplum, event) { return event.input; }',
        timeout: 5,
        memoryLimit: 32,
      },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      resourceType: 'Bot',
      name: 'Echo',
      timeout: 5,
      memoryLimit: 32,
      meta: { versionId: '1' },
    });
    expect(created.headers.get('location')).toContain(`/fhir/R4/Bot/${created.body.id}`);
    const id = created.body.id as string;

    const read = await call(server.base, 'GET', `fhir/R4/Bot/${id}`, { token });
    expect(read.status).toBe(200);
    expect(read.body.code).toContain('handler');

    const updated = await call(server.base, 'PUT', `fhir/R4/Bot/${id}`, {
      token,
      body: { resourceType: 'Bot', id, name: 'Echo 2', identifier: [{ system: sys, value: 'echo-crud' }] },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ name: 'Echo 2', meta: { versionId: '2' } });
    // Code is kept when an update leaves it out (deployed separately).
    expect(updated.body.code).toContain('handler');

    const found = await call(
      server.base,
      'GET',
      `fhir/R4/Bot?identifier=${encodeURIComponent(`${sys}|echo-crud`)}`,
      {
        token,
      },
    );
    expect(found.status).toBe(200);
    expect(found.body.total).toBe(1);
    expect(found.body.entry[0].resource.id).toBe(id);
    const byName = await call(server.base, 'GET', 'fhir/R4/Bot?name=Echo', { token });
    expect(byName.body.entry.map((e: { resource: { id: string } }) => e.resource.id)).toContain(id);

    const del = await call(server.base, 'DELETE', `fhir/R4/Bot/${id}`, { token });
    expect(del.status).toBe(200);
    const gone = await call(server.base, 'GET', `fhir/R4/Bot/${id}`, { token });
    expect(gone.status).toBe(404);
    expect(gone.body.resourceType).toBe('OperationOutcome');
  });

  it('refuses a duplicate identifier in the same project (409) but allows it in another project', async () => {
    const body = { resourceType: 'Bot', name: 'A', identifier: [{ system: sys, value: 'dup' }] };
    expect((await call(server.base, 'POST', 'fhir/R4/Bot', { token, body })).status).toBe(201);
    const dup = await call(server.base, 'POST', 'fhir/R4/Bot', { token, body });
    expect(dup.status).toBe(409);
    expect(dup.body.issue[0].code).toBe('duplicate');
    expect(dup.body.issue[0].details.text).toContain('dup');
    // Nothing half-written: still exactly one bot with it.
    const search = await call(
      server.base,
      'GET',
      `fhir/R4/Bot?identifier=${encodeURIComponent(`${sys}|dup`)}`,
      {
        token,
      },
    );
    expect(search.body.total).toBe(1);
    const named = await call(server.base, 'GET', 'fhir/R4/Bot?name=A', { token });
    expect(named.body.total).toBe(1);
    const other = await call(server.base, 'POST', 'fhir/R4/Bot', { token: otherToken, body });
    expect(other.status).toBe(201);
    // Updating another bot to take the identifier is refused too, and leaves it unchanged.
    const b = await call(server.base, 'POST', 'fhir/R4/Bot', {
      token,
      body: { resourceType: 'Bot', name: 'B', identifier: [{ system: sys, value: 'b-own' }] },
    });
    const clash = await call(server.base, 'PUT', `fhir/R4/Bot/${b.body.id}`, {
      token,
      body: { resourceType: 'Bot', id: b.body.id, name: 'B', identifier: [{ system: sys, value: 'dup' }] },
    });
    expect(clash.status).toBe(409);
    const still = await call(server.base, 'GET', `fhir/R4/Bot/${b.body.id}`, { token });
    expect(still.body.identifier).toEqual([{ system: sys, value: 'b-own' }]);
    expect(still.body.meta.versionId).toBe('1');
  });

  it('does not show one project the bots of another', async () => {
    const mine = await call(server.base, 'POST', 'fhir/R4/Bot', {
      token,
      body: { resourceType: 'Bot', name: 'Mine' },
    });
    expect(mine.status).toBe(201);
    // It exists for its own project: the 404s below are about the other project, not a missing bot.
    const own = await call(server.base, 'GET', `fhir/R4/Bot/${mine.body.id}`, { token });
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ id: mine.body.id, name: 'Mine' });
    const theirs = await call(server.base, 'GET', `fhir/R4/Bot/${mine.body.id}`, { token: otherToken });
    expect(theirs.status).toBe(404);
    const del = await call(server.base, 'DELETE', `fhir/R4/Bot/${mine.body.id}`, { token: otherToken });
    expect(del.status).toBe(404);
    // The other project's DELETE removed nothing.
    const after = await call(server.base, 'GET', `fhir/R4/Bot/${mine.body.id}`, { token });
    expect(after.status).toBe(200);
    expect(after.body).toMatchObject({
      id: mine.body.id,
      name: 'Mine',
      meta: { versionId: own.body.meta.versionId },
    });
  });

  it('deploys code with {code} and with Parameters, compiles TypeScript, refuses code that does not compile', async () => {
    const bot = await call(server.base, 'POST', 'fhir/R4/Bot', {
      token,
      body: { resourceType: 'Bot', name: 'D' },
    });
    const id = bot.body.id as string;
    const ts = `interface In { n: number }
export async function handler(_m: unknown, event: { input: In }): Promise<number> {
  const x: number = event.input.n * 2;
  return x;
}`;
    const dep = await call(server.base, 'POST', `fhir/R4/Bot/${id}/$deploy`, { token, body: { code: ts } });
    expect(dep.status).toBe(200);
    const run = await call(server.base, 'POST', `fhir/R4/Bot/${id}/$execute`, {
      token,
      raw: JSON.stringify({ n: 21 }),
      headers: { 'content-type': 'application/json' },
    });
    expect(run.status).toBe(200);
    expect(run.body).toBe(42);

    const params = await call(server.base, 'POST', `fhir/R4/Bot/${id}/$deploy`, {
      token,
      body: {
        resourceType: 'Parameters',
        parameter: [{ name: 'code', valueString: 'exports.handler = async () => "cjs";' }],
      },
    });
    expect(params.status).toBe(200);
    const run2 = await call(server.base, 'POST', `fhir/R4/Bot/${id}/$execute`, {
      token,
      raw: 'x',
      headers: { 'content-type': 'text/plain' },
    });
    expect(run2.text).toBe('cjs');

    const bad = await call(server.base, 'POST', `fhir/R4/Bot/${id}/$deploy`, {
      token,
      body: { code: 'export async function handler() {\n  return 1 +;\n}' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.issue[0].details.text).toMatch(/line 2/);
    // The old code stays deployed.
    const run3 = await call(server.base, 'POST', `fhir/R4/Bot/${id}/$execute`, {
      token,
      raw: 'x',
      headers: { 'content-type': 'text/plain' },
    });
    expect(run3.text).toBe('cjs');

    const badCreate = await call(server.base, 'POST', 'fhir/R4/Bot', {
      token,
      body: { resourceType: 'Bot', name: 'bad', code: 'const = ;' },
    });
    expect(badCreate.status).toBe(400);
    expect(badCreate.body.issue[0].details.text).toMatch(/line 1/);

    const noCode = await call(server.base, 'POST', `fhir/R4/Bot/${id}/$deploy`, { token, body: {} });
    expect(noCode.status).toBe(400);
    const unknown = await call(server.base, 'POST', `fhir/R4/Bot/${crypto.randomUUID()}/$deploy`, {
      token,
      body: { code: 'exports.handler = () => 1' },
    });
    expect(unknown.status).toBe(404);
  });

  it('validates fields', async () => {
    const r = await call(server.base, 'POST', 'fhir/R4/Bot', {
      token,
      body: { resourceType: 'Bot', timeout: 0 },
    });
    expect(r.status).toBe(400);
    expect(r.body.issue[0].details.text).toContain('timeout');
    const r2 = await call(server.base, 'POST', 'fhir/R4/Bot', {
      token,
      body: { resourceType: 'Bot', identifier: [{ system: sys }] },
    });
    expect(r2.status).toBe(400);
  });
});
