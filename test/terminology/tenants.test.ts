// Two projects on one server: one project's terminology never shows in, or changes, another project's $expand
// (issue 12 item 1: the expansion caches were keyed by the value set alone, not by who asks).
import { beforeAll, describe, expect, it } from 'vitest';
import { createProject, type Account } from '../helpers/projects.js';
import { call, useTestServer } from '../helpers/server.js';

const s = useTestServer({ config: { loadCoreTerminology: true }, signIn: true });
let adminA: string;
let b: Account;

const PRIVATE = 'http://example.org/tenant-a/private';
const GENDER = 'http://hl7.org/fhir/administrative-gender';
const GENDER_VS = 'http://hl7.org/fhir/ValueSet/administrative-gender';

async function post(token: string, type: string, body: unknown): Promise<Record<string, unknown>> {
  const r = await call(s.base, 'POST', `fhir/R4/${type}`, { token, body });
  if (r.status !== 201) throw new Error(`create ${type}: ${r.status} ${r.text}`);
  return r.body;
}

function expandInline(token: string, valueSet: unknown) {
  return call(s.base, 'POST', 'fhir/R4/ValueSet/$expand', {
    token,
    body: { resourceType: 'Parameters', parameter: [{ name: 'valueSet', resource: valueSet }] },
  });
}

interface Entry {
  code: string;
  contains?: Entry[];
}
const flat = (list: Entry[] | undefined): string[] =>
  (list ?? []).flatMap((c) => [c.code, ...flat(c.contains)]);
/** Every code of the expansion (nested ones too), sorted. */
const codes = (body: { expansion?: { contains?: Entry[] } }) => flat(body.expansion?.contains).sort();

beforeAll(async () => {
  adminA = s.token;
  b = await createProject(s.base, adminA, 'Tenant B');
  await post(adminA, 'CodeSystem', {
    resourceType: 'CodeSystem',
    url: PRIVATE,
    status: 'active',
    content: 'complete',
    concept: [
      { code: 'secret-1', display: 'Secret one' },
      { code: 'secret-2', display: 'Secret two' },
    ],
  });
}, 120_000);

describe('$expand caches are per project', () => {
  it("(a) B posting A's inline ValueSet gets 422 (unknown code system), before and after A's expansion", async () => {
    const vs = { resourceType: 'ValueSet', compose: { include: [{ system: PRIVATE }] } };
    const before = await expandInline(b.token, vs);
    expect(before.status).toBe(422);
    const a = await expandInline(adminA, vs);
    expect(a.status).toBe(200);
    expect(codes(a.body)).toEqual(['secret-1', 'secret-2']);
    const after = await expandInline(b.token, vs);
    expect(after.status).toBe(422);
    expect(after.body.issue[0].code).toBe('not-found');
    expect(after.text).not.toContain('secret-1');
  });

  it("(b) B posting an inline ValueSet with A's stored id, versionId and url gets its own compose's answer", async () => {
    const stored = await post(adminA, 'ValueSet', {
      resourceType: 'ValueSet',
      url: 'http://example.org/tenant-a/vs',
      status: 'active',
      compose: { include: [{ system: PRIVATE }] },
    });
    const a = await call(s.base, 'GET', `fhir/R4/ValueSet/${stored.id as string}/$expand`, { token: adminA });
    expect(codes(a.body)).toEqual(['secret-1', 'secret-2']);
    // Same identity, a compose B can resolve (the core gender codes): B gets those, never A's codes.
    const forged = {
      resourceType: 'ValueSet',
      id: stored.id,
      meta: stored.meta,
      url: 'http://example.org/tenant-a/vs',
      status: 'active',
      compose: { include: [{ system: GENDER }] },
    };
    const r = await expandInline(b.token, forged);
    expect(r.status).toBe(200);
    expect(codes(r.body)).toEqual(['female', 'male', 'other', 'unknown']);
    expect(r.text).not.toContain('secret-1');
    // And with A's compose, B is told the code system does not exist.
    const r2 = await expandInline(b.token, { ...forged, compose: { include: [{ system: PRIVATE }] } });
    expect(r2.status).toBe(422);
    expect(r2.text).not.toContain('secret-1');
  });

  it("(c) B's CodeSystem with a core url changes B's expansion of the core ValueSet, never A's", async () => {
    const url = `fhir/R4/ValueSet/$expand?url=${encodeURIComponent(GENDER_VS)}`;
    const a0 = await call(s.base, 'GET', url, { token: adminA });
    expect(codes(a0.body)).toEqual(['female', 'male', 'other', 'unknown']);
    await post(b.token, 'CodeSystem', {
      resourceType: 'CodeSystem',
      url: GENDER,
      status: 'active',
      content: 'complete',
      concept: [{ code: 'EVIL', display: 'Evil' }],
    });
    const bView = await call(s.base, 'GET', url, { token: b.token });
    expect(bView.status).toBe(200);
    expect(codes(bView.body)).toEqual(['EVIL']);
    const a1 = await call(s.base, 'GET', url, { token: adminA });
    expect(codes(a1.body)).toEqual(['female', 'male', 'other', 'unknown']);
    // Twice: the second answer comes from the cached fast path.
    const a2 = await call(s.base, 'GET', `${url}&filter=e`, { token: adminA });
    expect(a2.text).not.toContain('EVIL');
    const b2 = await call(s.base, 'GET', url, { token: b.token });
    expect(codes(b2.body)).toEqual(['EVIL']);
  });
});
