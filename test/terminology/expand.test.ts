// ValueSet/$expand over HTTP: url, url|version, valueSetVersion, instance form, POST Parameters with an inline
// value set, filter/ranking/paging/count=0, too-costly, errors, spec examples, cache invalidation (also across
// two server instances on PostgreSQL), the FHIR core administrative-gender and MedplumClient.valueSetExpand.
import fs from 'node:fs';
import path from 'node:path';
import { MedplumClient } from '@medplum/core';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/database.js';
import { createProject } from '../helpers/projects.js';
import {
  CLIENT_ID,
  CLIENT_SECRET,
  call,
  onPostgres,
  signIn,
  type TestServer,
  useTestServer,
  withTestServer,
} from '../helpers/server.js';
import { FIXTURES } from '../helpers/paths.js';

function fixture(name: string): Record<string, unknown> {
  const r = JSON.parse(fs.readFileSync(path.join(FIXTURES, name), 'utf8')) as Record<string, unknown>;
  delete r.id;
  delete r.meta;
  return r;
}

const HIER = 'http://example.org/fhir/CodeSystem/example-hierarchical';
const HIER_VS = 'http://example.org/vs/hierarchical';
const VERSIONED_VS = 'http://example.org/vs/versioned';

const s = useTestServer({ config: { expandMaxUnpaged: 50 }, signIn: true });
let token: string;
let hierCsId: string;
let hierVsId: string;

async function post(type: string, body: unknown): Promise<string> {
  const res = await call(s.base, 'POST', `fhir/R4/${type}`, { token, body });
  if (res.status !== 201) throw new Error(`create ${type}: ${res.status} ${res.text}`);
  return res.body.id as string;
}

function expand(query: string, t = token) {
  return call(s.base, 'GET', `fhir/R4/ValueSet/$expand?${query}`, { token: t });
}

interface Entry {
  code: string;
  contains?: Entry[];
}
/** The codes of an expansion in order, depth first (a hierarchical expansion lists a parent before its children). */
function codes(body: { expansion: { contains?: Entry[] } }): string[] {
  const flat = (list: Entry[] | undefined): string[] =>
    (list ?? []).flatMap((c) => [c.code, ...flat(c.contains)]);
  return flat(body.expansion.contains);
}

beforeAll(async () => {
  token = s.token;
  hierCsId = await post('CodeSystem', fixture('CodeSystem-example-hierarchical.json'));
  await post('CodeSystem', fixture('CodeSystem-loinc-fragment.json'));
  await post('CodeSystem', fixture('CodeSystem-versioned-1.0.0.json'));
  await post('CodeSystem', fixture('CodeSystem-versioned-2.0.0.json'));
  await post('ValueSet', fixture('ValueSet-example-intensional.json'));
  await post('ValueSet', fixture('ValueSet-example-expansion.json'));
  hierVsId = await post('ValueSet', {
    resourceType: 'ValueSet',
    url: HIER_VS,
    version: '1',
    status: 'active',
    compose: { include: [{ system: HIER }] },
  });
  for (const v of ['1.0.0', '2.0.0']) {
    await post('ValueSet', {
      resourceType: 'ValueSet',
      url: VERSIONED_VS,
      version: v,
      status: 'active',
      compose: { include: [{ system: 'http://example.org/fhir/CodeSystem/versioned', version: v }] },
    });
  }
  const many = [];
  for (let i = 0; i < 60; i++) many.push({ code: `m${i}`, display: `Many ${i}` });
  await post('CodeSystem', {
    resourceType: 'CodeSystem',
    url: 'http://example.org/cs/many',
    status: 'active',
    content: 'complete',
    concept: many,
  });
  await post('ValueSet', {
    resourceType: 'ValueSet',
    url: 'http://example.org/vs/many',
    status: 'active',
    compose: { include: [{ system: 'http://example.org/cs/many' }] },
  });
});

describe('$expand by url', () => {
  it('expands a stored value set by url', async () => {
    const res = await expand(`url=${encodeURIComponent(HIER_VS)}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/fhir+json');
    expect(res.body.resourceType).toBe('ValueSet');
    expect(res.body.url).toBe(HIER_VS);
    expect(res.body.expansion.total).toBe(17);
    expect(codes(res.body).slice(0, 3)).toEqual(['disorder', 'liver', 'hepatitis']);
    expect(res.body.expansion.contains[0]).toMatchObject({ system: HIER, code: 'disorder', abstract: true });
    expect(res.body.expansion.parameter).toContainEqual({
      name: 'used-codesystem',
      valueUri: `${HIER}|1.0.0`,
    });
  });

  it('picks the version from url|version and from valueSetVersion', async () => {
    const v1 = await expand(`url=${encodeURIComponent(`${VERSIONED_VS}|1.0.0`)}`);
    expect(v1.status).toBe(200);
    expect(v1.body.version).toBe('1.0.0');
    expect(codes(v1.body)).toEqual(['a', 'b']);
    const v2 = await expand(`url=${encodeURIComponent(VERSIONED_VS)}&valueSetVersion=2.0.0`);
    expect(v2.status).toBe(200);
    expect(codes(v2.body)).toEqual(['a', 'b', 'c']);
    expect(v2.body.expansion.contains[0].display).toBe('Alpha (revised)');
    const missing = await expand(`url=${encodeURIComponent(VERSIONED_VS)}&valueSetVersion=9`);
    expect(missing.status).toBe(404);
    const clash = await expand(`url=${encodeURIComponent(`${VERSIONED_VS}|1.0.0`)}&valueSetVersion=2.0.0`);
    expect(clash.status).toBe(400);
  });

  it('expands the R4 example-intensional value set (LOINC parent filter minus an exclude)', async () => {
    const res = await expand(`url=${encodeURIComponent('http://hl7.org/fhir/ValueSet/example-intensional')}`);
    expect(res.status).toBe(200);
    expect(codes(res.body).sort()).toEqual(['14647-2', '2093-3', '35200-5'].sort());
  });

  it('expands the R4 example-expansion (pre-expanded) value set with a filter', async () => {
    const res = await expand(
      `url=${encodeURIComponent('http://hl7.org/fhir/ValueSet/example-expansion')}&filter=cholesterol`,
    );
    expect(res.status).toBe(200);
    expect(res.body.expansion.total).toBeGreaterThan(0);
    for (const c of res.body.expansion.contains) expect(c.display.toLowerCase()).toContain('cholesterol');
  });
});

describe('$expand instance form and POST', () => {
  it('GET and POST ValueSet/{id}/$expand', async () => {
    const get = await call(s.base, 'GET', `fhir/R4/ValueSet/${hierVsId}/$expand?count=2`, { token });
    expect(get.status).toBe(200);
    expect(codes(get.body)).toEqual(['disorder', 'liver']);
    const postRes = await call(s.base, 'POST', `fhir/R4/ValueSet/${hierVsId}/$expand`, {
      token,
      body: { resourceType: 'Parameters', parameter: [{ name: 'filter', valueString: 'heart' }] },
    });
    expect(postRes.status).toBe(200);
    expect(codes(postRes.body)).toContain('hf');
    const unknownId = await call(
      s.base,
      'GET',
      `fhir/R4/ValueSet/00000000-0000-4000-8000-000000000000/$expand`,
      {
        token,
      },
    );
    expect(unknownId.status).toBe(404);
  });

  it('POST Parameters with url and with an inline valueSet', async () => {
    const byUrl = await call(s.base, 'POST', 'fhir/R4/ValueSet/$expand', {
      token,
      body: {
        resourceType: 'Parameters',
        parameter: [
          { name: 'url', valueUri: HIER_VS },
          { name: 'count', valueInteger: 3 },
          { name: 'offset', valueInteger: 1 },
        ],
      },
    });
    expect(byUrl.status).toBe(200);
    expect(codes(byUrl.body)).toEqual(['liver', 'hepatitis', 'hepatitis-a']);
    expect(byUrl.body.expansion.offset).toBe(1);

    const inline = await call(s.base, 'POST', 'fhir/R4/ValueSet/$expand', {
      token,
      body: {
        resourceType: 'Parameters',
        parameter: [
          {
            name: 'valueSet',
            resource: {
              resourceType: 'ValueSet',
              status: 'active',
              compose: {
                include: [{ system: HIER, filter: [{ property: 'concept', op: 'is-a', value: 'heart' }] }],
              },
            },
          },
          { name: 'activeOnly', valueBoolean: true },
        ],
      },
    });
    expect(inline.status).toBe(200);
    expect(codes(inline.body)).toEqual(['heart', 'hf', 'hf-acute', 'hf-chronic']);
  });
});

describe('filter, ranking and paging', () => {
  it('matches word prefixes and ranks displays starting with the filter first', async () => {
    const res = await expand(`url=${encodeURIComponent(HIER_VS)}&filter=heart`);
    expect(res.status).toBe(200);
    const displays = res.body.expansion.contains.map((c: { display: string }) => c.display);
    expect(displays.slice(0, 2).sort()).toEqual(['Heart disease', 'Heart failure']);
    expect(displays).toContain('Acute heart failure');
    expect(res.body.expansion.total).toBe(displays.length);
    const prefix = await expand(`url=${encodeURIComponent(HIER_VS)}&filter=hep`);
    expect(codes(prefix.body)).toEqual(
      expect.arrayContaining(['hepatitis', 'hepatitis-a', 'hepatitis-b', 'hepatorenal']),
    );
    const accents = await expand(`url=${encodeURIComponent(HIER_VS)}&filter=MENIERE`);
    expect(codes(accents.body)).toEqual(['meniere']);
    const code = await expand(`url=${encodeURIComponent(HIER_VS)}&filter=hf`);
    expect(codes(code.body)[0]).toBe('hf');
  });

  it('finds codes by their start when the filter has a digit (typeahead by code)', async () => {
    const system = 'http://example.org/fhir/CodeSystem/code-prefix';
    await post('CodeSystem', {
      resourceType: 'CodeSystem',
      url: system,
      status: 'active',
      content: 'complete',
      concept: [
        { code: '22298006', display: 'Myocardial infarction' },
        { code: '404684003', display: 'Clinical finding' },
        { code: '404680009', display: 'Another finding' },
        { code: '1404684', display: 'Not a start: 4046 is inside' },
        { code: 'E11.9', display: 'Type 2 diabetes mellitus without complications' },
      ],
    });
    const url = `${system}?vs`;
    await post('ValueSet', {
      resourceType: 'ValueSet',
      url,
      status: 'active',
      compose: { include: [{ system }] },
    });
    const byCode = await expand(`url=${encodeURIComponent(url)}&filter=4046&count=10`);
    expect(byCode.status).toBe(200);
    // The codes starting with it (in code order), then the display that has the word 4046.
    expect(codes(byCode.body)).toEqual(['404680009', '404684003', '1404684']);
    expect(byCode.body.expansion.total).toBe(3);
    const icd = await expand(`url=${encodeURIComponent(url)}&filter=e11`);
    expect(codes(icd.body)).toEqual(['E11.9']);
    // Words never match codes: "infarction" finds its display only.
    const words = await expand(`url=${encodeURIComponent(url)}&filter=finding`);
    expect(codes(words.body)).toEqual(['404684003', '404680009']);
  });

  it('pages with offset/count and gives only total with count=0', async () => {
    const page = await expand(`url=${encodeURIComponent(HIER_VS)}&offset=15&count=5`);
    expect(page.status).toBe(200);
    expect(page.body.expansion.total).toBe(17);
    expect(page.body.expansion.offset).toBe(15);
    expect(codes(page.body)).toHaveLength(2);
    const zero = await expand(`url=${encodeURIComponent(HIER_VS)}&count=0`);
    expect(zero.body.expansion.total).toBe(17);
    expect(zero.body.expansion.contains).toBeUndefined();
    const active = await expand(`url=${encodeURIComponent(HIER_VS)}&activeOnly=true&count=0`);
    expect(active.body.expansion.total).toBeLessThan(17);
  });

  it('answers 422 too-costly for a big unpaged expansion, and pages it with count', async () => {
    const res = await expand(`url=${encodeURIComponent('http://example.org/vs/many')}`);
    expect(res.status).toBe(422);
    expect(res.body.issue[0].code).toBe('too-costly');
    const paged = await expand(`url=${encodeURIComponent('http://example.org/vs/many')}&count=10`);
    expect(paged.status).toBe(200);
    expect(paged.body.expansion.total).toBe(60);
  });
});

describe('errors', () => {
  it('400 without url or value set, 404 for an unknown url', async () => {
    const none = await call(s.base, 'GET', 'fhir/R4/ValueSet/$expand', { token });
    expect(none.status).toBe(400);
    expect(none.body.resourceType).toBe('OperationOutcome');
    const unknown = await expand('url=http://example.org/nope');
    expect(unknown.status).toBe(404);
    expect(unknown.body.issue[0].code).toBe('not-found');
  });

  it('400 for bad offset/count, unknown parameters and bad bodies, naming them', async () => {
    const u = `url=${encodeURIComponent(HIER_VS)}`;
    for (const q of ['offset=-1', 'count=abc', 'count=1.5', 'activeOnly=maybe']) {
      const res = await expand(`${u}&${q}`);
      expect(res.status, q).toBe(400);
      expect(res.body.issue[0].details.text).toContain(q.split('=')[0]);
    }
    const unknown = await expand(`${u}&foo=1&context=x`);
    expect(unknown.status).toBe(400);
    expect(unknown.body.issue[0].details.text).toContain('foo, context');
    const twice = await expand(`${u}&count=1&count=2`);
    expect(twice.status).toBe(400);
    const notParams = await call(s.base, 'POST', 'fhir/R4/ValueSet/$expand', {
      token,
      body: { resourceType: 'ValueSet' },
    });
    expect(notParams.status).toBe(400);
    const badInline = await call(s.base, 'POST', 'fhir/R4/ValueSet/$expand', {
      token,
      body: {
        resourceType: 'Parameters',
        parameter: [{ name: 'valueSet', resource: { resourceType: 'CodeSystem' } }],
      },
    });
    expect(badInline.status).toBe(400);
    const negative = await call(s.base, 'POST', 'fhir/R4/ValueSet/$expand', {
      token,
      body: {
        resourceType: 'Parameters',
        parameter: [
          { name: 'url', valueUri: HIER_VS },
          { name: 'count', valueInteger: -3 },
        ],
      },
    });
    expect(negative.status).toBe(400);
    const badFilter = await call(s.base, 'POST', 'fhir/R4/ValueSet/$expand', {
      token,
      body: {
        resourceType: 'Parameters',
        parameter: [
          {
            name: 'valueSet',
            resource: {
              resourceType: 'ValueSet',
              compose: {
                include: [{ system: HIER, filter: [{ property: 'concept', op: 'bogus', value: 'x' }] }],
              },
            },
          },
        ],
      },
    });
    expect(badFilter.status).toBe(400);
    const malformed = await call(s.base, 'POST', 'fhir/R4/ValueSet/$expand', {
      token,
      raw: '{not json',
      headers: { 'content-type': 'application/fhir+json' },
    });
    expect(malformed.status).toBe(400);
  });

  it('bounds every parameter: length, control characters, repeats; REST and GraphQL alike', async () => {
    const u = `url=${encodeURIComponent(HIER_VS)}`;
    const long = await expand(`${u}&displayLanguage=${'a'.repeat(201)}`);
    expect(long.status).toBe(400);
    expect(long.body.issue[0].details.text).toBe(
      'Parameter displayLanguage is 201 characters long, more than the limit of 200',
    );
    const control = await expand(`${u}&filter=a%01b`);
    expect(control.status).toBe(400);
    expect(control.body.issue[0].details.text).toBe('Parameter filter contains control characters');
    const versions = Array.from(
      { length: 101 },
      (_, i) => `system-version=${encodeURIComponent(`${HIER}|${i}`)}`,
    );
    const many = await expand(`${u}&${versions.join('&')}`);
    expect(many.status).toBe(400);
    expect(many.body.issue[0].details.text).toBe('Parameter system-version is given more than 100 times');
    const resourceByGet = await expand(`${u}&valueSet=x`);
    expect(resourceByGet.status).toBe(400);
    expect(resourceByGet.body.issue[0].details.text).toContain('POST');
    const gql = await call(s.base, 'POST', 'graphql', {
      token,
      headers: { 'content-type': 'application/json' },
      body: {
        query: 'query($v: [String!]) { expandValueSet(url: "x", systemVersion: $v) }',
        variables: { v: Array.from({ length: 101 }, (_, i) => `${HIER}|${i}`) },
      },
    });
    expect(gql.body.errors[0].message).toBe('Parameter system-version is given more than 100 times');
    const negative = await call(s.base, 'POST', 'graphql', {
      token,
      headers: { 'content-type': 'application/json' },
      body: { query: `{ expandValueSet(url: "${HIER_VS}", count: -1) }` },
    });
    expect(negative.body.errors[0].message).toContain('count must be a non-negative integer');
  });

  it('401 without a token', async () => {
    const res = await call(s.base, 'GET', `fhir/R4/ValueSet/$expand?url=${encodeURIComponent(HIER_VS)}`);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect(res.body.resourceType).toBe('OperationOutcome');
  });

  it("another project's caller gets 404 for this project's value set and code system", async () => {
    const b = await createProject(s.base, token, 'Expand B');
    // What this project's caller sees, so that B's 404s below are about B and not a missing resource.
    expect((await expand(`url=${encodeURIComponent(HIER_VS)}&count=1`)).status).toBe(200);
    const notFound = async (path: string) => {
      const r = await call(s.base, 'GET', path, { token: b.token });
      expect({ path, status: r.status }).toEqual({ path, status: 404 });
      expect(r.body.resourceType).toBe('OperationOutcome');
      expect(r.body.issue[0].code).toBe('not-found');
      expect(r.text).not.toContain('liver');
    };
    await notFound(`fhir/R4/ValueSet/$expand?url=${encodeURIComponent(HIER_VS)}`);
    await notFound(`fhir/R4/ValueSet/${hierVsId}/$expand`);
    await notFound(`fhir/R4/ValueSet/${hierVsId}`);
    await notFound(`fhir/R4/CodeSystem/${hierCsId}`);
    // A search by url finds nothing of A's either.
    const search = await call(s.base, 'GET', `fhir/R4/ValueSet?url=${encodeURIComponent(HIER_VS)}`, {
      token: b.token,
    });
    expect(search.status).toBe(200);
    expect(search.body.resourceType).toBe('Bundle');
    expect(search.body.entry ?? []).toEqual([]);
  });

  it('documents the filter rule in /metadata', async () => {
    const res = await call(s.base, 'GET', 'fhir/R4/metadata');
    const vs = res.body.rest[0].resource.find((r: { type: string }) => r.type === 'ValueSet');
    const op = vs.operation.find((o: { name: string }) => o.name === 'expand');
    expect(op.documentation).toContain('filter');
    // The parameter list comes from the same table the REST and GraphQL inputs are read with.
    expect(op.documentation).toContain('check-system-version (repeatable): system|version');
  });
});

describe('GraphQL', () => {
  it('expandValueSet query', async () => {
    const res = await call(s.base, 'POST', 'graphql', {
      token,
      headers: { 'content-type': 'application/json' },
      body: {
        query: 'query($url: String) { expandValueSet(url: $url, filter: "liver", count: 5) }',
        variables: { url: HIER_VS },
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.data.expandValueSet.expansion.contains.map((c: { code: string }) => c.code)).toContain(
      'liver',
    );
  });
});

describe('cache invalidation', () => {
  it('an updated CodeSystem changes the next expansion', async () => {
    const before = await expand(`url=${encodeURIComponent(HIER_VS)}&filter=cough`);
    expect(before.body.expansion.contains[0].display).toBe('Cough');
    const cs = (await call(s.base, 'GET', `fhir/R4/CodeSystem/${hierCsId}`, { token })).body;
    cs.concept[1].concept[1].display = 'Cough (persistent)';
    const put = await call(s.base, 'PUT', `fhir/R4/CodeSystem/${hierCsId}`, { token, body: cs });
    expect(put.status).toBe(200);
    const after = await expand(`url=${encodeURIComponent(HIER_VS)}&filter=persistent`);
    expect(after.status).toBe(200);
    expect(after.body.expansion.contains[0].display).toBe('Cough (persistent)');
  });

  it.runIf(onPostgres)('a second instance on the same database sees the change (NOTIFY)', async () => {
    await withTestServer({ schema: s.schema, config: { expandMaxUnpaged: 50 } }, async (b) => {
      const tb = (await signIn(b.base)).access_token;
      const q = `fhir/R4/ValueSet/$expand?url=${encodeURIComponent(HIER_VS)}&filter=fever`;
      const first = await call(b.base, 'GET', q, { token: tb });
      expect(first.body.expansion.contains[0].display).toBe('Fever');
      const cs = (await call(s.base, 'GET', `fhir/R4/CodeSystem/${hierCsId}`, { token })).body;
      cs.concept[1].concept[0].display = 'Fever (pyrexia)';
      expect((await call(s.base, 'PUT', `fhir/R4/CodeSystem/${hierCsId}`, { token, body: cs })).status).toBe(
        200,
      );
      let display = '';
      for (let i = 0; i < 40 && display !== 'Fever (pyrexia)'; i++) {
        await new Promise((r) => setTimeout(r, 50));
        display = (await call(b.base, 'GET', q, { token: tb })).body.expansion.contains[0].display;
      }
      expect(display).toBe('Fever (pyrexia)');
      // A value set deleted on one instance is gone on the other.
      const vsId = await post('ValueSet', {
        resourceType: 'ValueSet',
        url: 'http://example.org/vs/tmp',
        compose: { include: [{ system: HIER }] },
      });
      const tmp = `fhir/R4/ValueSet/$expand?url=${encodeURIComponent('http://example.org/vs/tmp')}&count=1`;
      expect((await call(b.base, 'GET', tmp, { token: tb })).status).toBe(200);
      await call(s.base, 'DELETE', `fhir/R4/ValueSet/${vsId}`, { token });
      let status = 200;
      for (let i = 0; i < 40 && status === 200; i++) {
        await new Promise((r) => setTimeout(r, 50));
        status = (await call(b.base, 'GET', tmp, { token: tb })).status;
      }
      expect(status).toBe(404);
    });
  });
});

describe('MedplumClient', () => {
  it('valueSetExpand works against the server', async () => {
    const medplum = new MedplumClient({ baseUrl: s.base, fetch: globalThis.fetch.bind(globalThis) });
    await medplum.startClientLogin(CLIENT_ID, CLIENT_SECRET);
    const vs = await medplum.valueSetExpand({ url: HIER_VS, filter: 'liver', count: 10 });
    expect(vs.resourceType).toBe('ValueSet');
    expect(vs.expansion?.contains?.map((c: { code?: string }) => c.code)).toContain('liver');
  });
});

describe('FHIR core definitions', () => {
  // The servers of this block share one database: the second instance finds the core already loaded.
  const db = useTestDatabase();
  let core: TestServer;
  // The core gender CodeSystem as the first instance loaded it: a load writes fresh row ids (random UUIDs).
  let loadedGender: { id: string; lastUpdated: string } | undefined;
  const genderCodeSystem = async (base: string, token: string) => {
    const r = await call(
      base,
      'GET',
      `fhir/R4/CodeSystem?url=${encodeURIComponent('http://hl7.org/fhir/administrative-gender')}`,
      { token },
    );
    expect({ status: r.status, total: r.body.total }).toEqual({ status: 200, total: 1 });
    const cs = r.body.entry[0].resource;
    return { id: cs.id as string, lastUpdated: cs.meta.lastUpdated as string };
  };

  it('expands administrative-gender on a fresh server, and shared rows are read-only', async () => {
    const started = Date.now();
    core = await db.start({ config: { loadCoreTerminology: true } });
    console.log(`server start with core terminology load: ${Date.now() - started} ms`);
    const t = (await signIn(core.base)).access_token;
    const res = await call(
      core.base,
      'GET',
      `fhir/R4/ValueSet/$expand?url=${encodeURIComponent('http://hl7.org/fhir/ValueSet/administrative-gender')}`,
      { token: t },
    );
    expect(res.status).toBe(200);
    expect(codes(res.body)).toEqual(['male', 'female', 'other', 'unknown']);
    const search = await call(
      core.base,
      'GET',
      `fhir/R4/ValueSet?url=${encodeURIComponent('http://hl7.org/fhir/ValueSet/administrative-gender')}`,
      { token: t },
    );
    expect(search.body.total).toBe(1);
    const id = search.body.entry[0].resource.id;
    const put = await call(core.base, 'PUT', `fhir/R4/ValueSet/${id}`, {
      token: t,
      body: search.body.entry[0].resource,
    });
    expect(put.status).toBe(403);
    const del = await call(core.base, 'DELETE', `fhir/R4/ValueSet/${id}`, { token: t });
    expect(del.status).toBe(403);
    // A v3 code system from v3-codesystems.json
    const v3 = await call(
      core.base,
      'GET',
      `fhir/R4/ValueSet/$expand?url=${encodeURIComponent('http://terminology.hl7.org/ValueSet/v3-ActEncounterCode')}&count=100`,
      { token: t },
    );
    expect(v3.status).toBe(200);
    expect(codes(v3.body)).toContain('AMB');

    // The project's own value set with a core url comes first.
    const own = await call(core.base, 'POST', 'fhir/R4/ValueSet', {
      token: t,
      body: {
        resourceType: 'ValueSet',
        url: 'http://hl7.org/fhir/ValueSet/administrative-gender',
        status: 'active',
        compose: {
          include: [{ system: 'http://hl7.org/fhir/administrative-gender', concept: [{ code: 'female' }] }],
        },
      },
    });
    expect(own.status).toBe(201);
    const mine = await call(
      core.base,
      'GET',
      `fhir/R4/ValueSet/$expand?url=${encodeURIComponent('http://hl7.org/fhir/ValueSet/administrative-gender')}`,
      { token: t },
    );
    expect(codes(mine.body)).toEqual(['female']);
    loadedGender = await genderCodeSystem(core.base, t);
  }, 120_000);

  it.runIf(onPostgres)(
    'a second instance on the same database does not load the core again',
    async () => {
      const started = Date.now();
      const second = await db.start({ config: { loadCoreTerminology: true } });
      console.log(`second instance start (core already loaded): ${Date.now() - started} ms`);
      const t = (await signIn(second.base)).access_token;
      // A second load would have deleted the core rows and written new ones: other ids, a later lastUpdated.
      expect(loadedGender).toBeDefined();
      expect(await genderCodeSystem(second.base, t)).toEqual(loadedGender);
      expect(await genderCodeSystem(core.base, (await signIn(core.base)).access_token)).toEqual(loadedGender);
    },
    120_000,
  );
});
