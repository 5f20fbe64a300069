// CodeSystem and ValueSet over FHIR REST: create/read/update/delete/search, nested concepts round-trip,
// validation errors, project isolation, shared core rows read-only, a 100,000-concept CodeSystem POSTed inline.
import { beforeAll, describe, expect, it } from 'vitest';
import { call, useTestServer } from '../helpers/server.js';
import { createProject } from '../helpers/projects.js';

const server = useTestServer({ signIn: true });
let token: string;
let otherToken: string;

const hierarchical = {
  resourceType: 'CodeSystem',
  url: 'http://example.org/cs/body',
  version: '1',
  name: 'BodySites',
  status: 'active',
  content: 'complete',
  identifier: [{ system: 'urn:ietf:rfc:3986', value: 'urn:oid:1.2.3.4' }],
  property: [{ code: 'status', type: 'code' }],
  concept: [
    {
      code: 'limb',
      display: 'Limb',
      concept: [
        {
          code: 'arm',
          display: 'Arm',
          definition: 'Upper limb',
          concept: [{ code: 'hand', display: 'Hand' }],
        },
        { code: 'leg', display: 'Leg', property: [{ code: 'status', valueCode: 'retired' }] },
      ],
    },
    { code: 'head', display: 'Head', designation: [{ language: 'de', value: 'Kopf' }] },
  ],
};

beforeAll(async () => {
  token = server.token;
  otherToken = (await createProject(server.base, token, 'Other Project')).token;
});

describe('CodeSystem CRUD', () => {
  let id: string;

  it('creates a CodeSystem and returns it with id, meta and Location', async () => {
    const res = await call(server.base, 'POST', 'fhir/R4/CodeSystem', { token, body: hierarchical });
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toContain('application/fhir+json');
    expect(res.body.resourceType).toBe('CodeSystem');
    expect(res.body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body.meta.versionId).toBe('1');
    expect(res.body.meta.lastUpdated).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(res.headers.get('location')).toContain(`/fhir/R4/CodeSystem/${res.body.id}`);
    expect(res.headers.get('etag')).toBe('W/"1"');
    id = res.body.id;
  });

  it('reads it back with the nested concepts rebuilt in document order', async () => {
    const res = await call(server.base, 'GET', `fhir/R4/CodeSystem/${id}`, { token });
    expect(res.status).toBe(200);
    expect(res.body.url).toBe(hierarchical.url);
    expect(res.body.identifier).toEqual(hierarchical.identifier);
    expect(res.body.concept).toEqual(hierarchical.concept);
    expect(res.body.meta.versionId).toBe('1');
  });

  it('updates it (versionId increments, concepts replaced)', async () => {
    const body = { ...hierarchical, id, concept: [{ code: 'torso', display: 'Torso' }] };
    const res = await call(server.base, 'PUT', `fhir/R4/CodeSystem/${id}`, { token, body });
    expect(res.status).toBe(200);
    expect(res.body.meta.versionId).toBe('2');
    const read = await call(server.base, 'GET', `fhir/R4/CodeSystem/${id}`, { token });
    expect(read.body.concept).toEqual([{ code: 'torso', display: 'Torso' }]);
    expect(read.body.meta.versionId).toBe('2');
  });

  it('searches by url, version, name and identifier', async () => {
    const byUrl = await call(
      server.base,
      'GET',
      `fhir/R4/CodeSystem?url=${encodeURIComponent(hierarchical.url)}`,
      {
        token,
      },
    );
    expect(byUrl.status).toBe(200);
    expect(byUrl.body.resourceType).toBe('Bundle');
    expect(byUrl.body.total).toBe(1);
    expect(byUrl.body.entry[0].resource.id).toBe(id);
    const byVersion = await call(
      server.base,
      'GET',
      `fhir/R4/CodeSystem?url=${encodeURIComponent(hierarchical.url)}&version=2`,
      { token },
    );
    expect(byVersion.body.total).toBe(0);
    const byName = await call(server.base, 'GET', 'fhir/R4/CodeSystem?name=bodys', { token });
    expect(byName.body.total).toBe(1);
    const byIdentifier = await call(
      server.base,
      'GET',
      `fhir/R4/CodeSystem?identifier=${encodeURIComponent('urn:ietf:rfc:3986|urn:oid:1.2.3.4')}`,
      { token },
    );
    expect(byIdentifier.body.total).toBe(1);
    const byValueOnly = await call(server.base, 'GET', 'fhir/R4/CodeSystem?identifier=urn:oid:1.2.3.4', {
      token,
    });
    expect(byValueOnly.body.total).toBe(1);
    const noMatch = await call(server.base, 'GET', 'fhir/R4/CodeSystem?identifier=other|urn:oid:1.2.3.4', {
      token,
    });
    expect(noMatch.body.total).toBe(0);
  });

  it('refuses duplicate codes with 400 naming the code, and writes nothing', async () => {
    const body = {
      ...hierarchical,
      url: 'http://example.org/cs/dup',
      concept: [{ code: 'a', concept: [{ code: 'b' }] }, { code: 'b' }],
    };
    const res = await call(server.base, 'POST', 'fhir/R4/CodeSystem', { token, body });
    expect(res.status).toBe(400);
    expect(res.body.resourceType).toBe('OperationOutcome');
    expect(res.body.issue[0].details.text).toContain('Duplicate code "b"');
    const search = await call(server.base, 'GET', 'fhir/R4/CodeSystem?url=http://example.org/cs/dup', {
      token,
    });
    expect(search.body.total).toBe(0);
  });

  it('refuses a body of another resource type, a concept without code, and a malformed id', async () => {
    const wrong = await call(server.base, 'POST', 'fhir/R4/CodeSystem', {
      token,
      body: { resourceType: 'ValueSet', url: 'x' },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.issue[0].details.text).toContain('Expected a CodeSystem');
    const noCode = await call(server.base, 'POST', 'fhir/R4/CodeSystem', {
      token,
      body: { resourceType: 'CodeSystem', concept: [{ display: 'x' }] },
    });
    expect(noCode.status).toBe(400);
    expect(noCode.body.issue[0].details.text).toContain('CodeSystem.concept[0].code');
    const notUuid = await call(server.base, 'GET', 'fhir/R4/CodeSystem/not-a-row', { token });
    expect(notUuid.status).toBe(404);
  });

  it('keeps another project out: read, search, update and delete', async () => {
    const read = await call(server.base, 'GET', `fhir/R4/CodeSystem/${id}`, { token: otherToken });
    expect(read.status).toBe(404);
    const search = await call(
      server.base,
      'GET',
      `fhir/R4/CodeSystem?url=${encodeURIComponent(hierarchical.url)}`,
      {
        token: otherToken,
      },
    );
    expect(search.body.total).toBe(0);
    const put = await call(server.base, 'PUT', `fhir/R4/CodeSystem/${id}`, {
      token: otherToken,
      body: { ...hierarchical, id },
    });
    expect(put.status).toBe(404);
    const del = await call(server.base, 'DELETE', `fhir/R4/CodeSystem/${id}`, { token: otherToken });
    expect(del.status).toBe(404);
  });

  it('deletes it; then it is gone', async () => {
    const res = await call(server.base, 'DELETE', `fhir/R4/CodeSystem/${id}`, { token });
    expect(res.status).toBe(200);
    const read = await call(server.base, 'GET', `fhir/R4/CodeSystem/${id}`, { token });
    expect(read.status).toBe(404);
    expect(read.body.resourceType).toBe('OperationOutcome');
  });

  it('requires authentication', async () => {
    const res = await call(server.base, 'GET', 'fhir/R4/CodeSystem');
    expect(res.status).toBe(401);
  });
});

describe('ValueSet CRUD', () => {
  const vs = {
    resourceType: 'ValueSet',
    url: 'http://example.org/vs/body',
    version: '1',
    name: 'BodyVS',
    status: 'active',
    identifier: [{ system: 'urn:ietf:rfc:3986', value: 'urn:oid:9.9' }],
    compose: { include: [{ system: 'http://example.org/cs/body' }] },
  };

  it('creates, reads, updates, searches and deletes a ValueSet; isolates projects', async () => {
    const created = await call(server.base, 'POST', 'fhir/R4/ValueSet', { token, body: vs });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const read = await call(server.base, 'GET', `fhir/R4/ValueSet/${id}`, { token });
    expect(read.status).toBe(200);
    expect(read.body.compose).toEqual(vs.compose);
    expect(read.body.meta.versionId).toBe('1');

    const updated = await call(server.base, 'PUT', `fhir/R4/ValueSet/${id}`, {
      token,
      body: { ...vs, id, title: 'Body sites' },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.meta.versionId).toBe('2');
    expect((await call(server.base, 'GET', `fhir/R4/ValueSet/${id}`, { token })).body.title).toBe(
      'Body sites',
    );

    const search = await call(server.base, 'GET', 'fhir/R4/ValueSet?identifier=urn:oid:9.9', { token });
    expect(search.body.total).toBe(1);
    const other = await call(server.base, 'GET', `fhir/R4/ValueSet/${id}`, { token: otherToken });
    expect(other.status).toBe(404);
    const otherSearch = await call(server.base, 'GET', 'fhir/R4/ValueSet?identifier=urn:oid:9.9', {
      token: otherToken,
    });
    expect(otherSearch.body.total).toBe(0);

    expect((await call(server.base, 'DELETE', `fhir/R4/ValueSet/${id}`, { token })).status).toBe(200);
    expect((await call(server.base, 'GET', `fhir/R4/ValueSet/${id}`, { token })).status).toBe(404);
  });

  it('refuses a malformed compose with 400', async () => {
    const res = await call(server.base, 'POST', 'fhir/R4/ValueSet', {
      token,
      body: { resourceType: 'ValueSet', compose: [1] },
    });
    expect(res.status).toBe(400);
    expect(res.body.issue[0].details.text).toContain('ValueSet.compose');
  });
});

describe('big CodeSystem inline', () => {
  it('POSTs a 100,000-concept CodeSystem through REST and reads it back', async () => {
    const concept = [];
    for (let p = 0; p < 100; p++) {
      const children = [];
      for (let c = 0; c < 999; c++)
        children.push({ code: `C${p}-${c}`, display: `child ${c} of parent ${p}` });
      concept.push({ code: `P${p}`, display: `parent ${p}`, concept: children });
    }
    const body = { resourceType: 'CodeSystem', url: 'http://example.org/cs/big', status: 'active', concept };
    const started = Date.now();
    const res = await call(server.base, 'POST', 'fhir/R4/CodeSystem', { token, body });
    const ms = Date.now() - started;
    expect(res.status).toBe(201);
    console.log(`100,000-concept inline POST: ${ms} ms`);
    const read = await call(server.base, 'GET', `fhir/R4/CodeSystem/${res.body.id}`, { token });
    expect(read.status).toBe(200);
    expect(read.body.concept).toHaveLength(100);
    expect(read.body.concept[99].concept).toHaveLength(999);
    expect(read.body.concept[99].concept[998]).toEqual({
      code: 'C99-998',
      display: 'child 998 of parent 99',
    });
  }, 120_000);
});

describe('deeply nested CodeSystem', () => {
  /** A CodeSystem whose concepts nest `depth` levels deep (each concept the only child of the one before). */
  function nested(depth: number, url: string): Record<string, unknown> {
    const root: Record<string, unknown> = { code: 'n0', display: 'Level 0' };
    let cur = root;
    for (let i = 1; i < depth; i++) {
      const next = { code: `n${i}`, display: `Level ${i}` };
      cur.concept = [next];
      cur = next;
    }
    return { resourceType: 'CodeSystem', url, status: 'active', content: 'complete', concept: [root] };
  }

  /** The same as JSON text, built without recursion. */
  function nestedJson(depth: number, url: string): string {
    let concept = '';
    for (let i = depth - 1; i >= 0; i--)
      concept = `{"code":"n${i}"${concept ? `,"concept":[${concept}]` : ''}}`;
    return `{"resourceType":"CodeSystem","url":"${url}","status":"active","content":"complete","concept":[${concept}]}`;
  }

  it('nested 5,000 deep is a 400 naming the depth limit (it was a 500: stack overflow)', async () => {
    // JSON.stringify itself overflows at this depth: the body is written as text.
    const r = await call(server.base, 'POST', 'fhir/R4/CodeSystem', {
      token,
      raw: nestedJson(5000, 'http://example.org/deep/5000'),
      headers: { 'content-type': 'application/fhir+json' },
    });
    expect(r.status).toBe(400);
    expect(r.body.resourceType).toBe('OperationOutcome');
    expect(r.body.issue[0].details.text).toMatch(/nest|deep|depth/i);
    const search = await call(
      server.base,
      'GET',
      `fhir/R4/CodeSystem?url=${encodeURIComponent('http://example.org/deep/5000')}`,
      { token },
    );
    expect(search.body.total).toBe(0);
  });

  it('nested 100 deep (the limit) is stored, read back nested, and expands', async () => {
    const url = 'http://example.org/deep/100';
    const r = await call(server.base, 'POST', 'fhir/R4/CodeSystem', { token, body: nested(100, url) });
    expect(r.status).toBe(201);
    const read = await call(server.base, 'GET', `fhir/R4/CodeSystem/${r.body.id as string}`, { token });
    let depth = 0;
    for (let c = read.body.concept?.[0]; c; c = c.concept?.[0]) depth++;
    expect(depth).toBe(100);
    const e = await call(server.base, 'POST', 'fhir/R4/ValueSet/$expand', {
      token,
      body: {
        resourceType: 'Parameters',
        parameter: [
          {
            name: 'valueSet',
            resource: {
              resourceType: 'ValueSet',
              compose: {
                include: [
                  { system: url, filter: [{ property: 'concept', op: 'descendent-of', value: 'n97' }] },
                ],
              },
            },
          },
        ],
      },
    });
    expect(e.status).toBe(200);
    // Hierarchical (excludeNested not given): n99 nested under its parent n98.
    expect(e.body.expansion.total).toBe(2);
    expect(e.body.expansion.contains).toHaveLength(1);
    expect(e.body.expansion.contains[0].code).toBe('n98');
    expect(e.body.expansion.contains[0].contains.map((c: { code: string }) => c.code)).toEqual(['n99']);
  });

  it('nested 101 deep is refused', async () => {
    const r = await call(server.base, 'POST', 'fhir/R4/CodeSystem', {
      token,
      body: nested(101, 'http://example.org/deep/101'),
    });
    expect(r.status).toBe(400);
    expect(r.body.issue[0].details.text).toMatch(/more than 100 levels/);
  });
});
