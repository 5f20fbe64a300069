// ConceptMap storage and ConceptMap/$translate on a real server: CRUD scoped to the project, translation by url,
// by id, by the systems alone, inline and as tx-resource, forward and reverse with R4's and R5's parameter names,
// GraphQL, project walls, and hostile inputs (each a clear 4xx).
import { beforeAll, describe, expect, it } from 'vitest';
import { createProject, type ProjectAdmin } from '../helpers/projects.js';
import { call, useTestServer } from '../helpers/server.js';

const s = useTestServer({ config: { valueSetMaxEntries: 20 }, signIn: true });

const MAP = 'http://example.org/translate/colour-to-hue';
const SRC = 'http://example.org/translate/colour';
const TGT = 'http://example.org/translate/hue';

const conceptMap = (version: string, equivalence = 'equivalent') => ({
  resourceType: 'ConceptMap',
  url: MAP,
  version,
  status: 'active',
  group: [
    {
      source: SRC,
      target: TGT,
      element: [
        { code: 'red', target: [{ code: 'R', display: 'Hue R', equivalence }] },
        { code: 'crimson', target: [{ code: 'R', equivalence: 'narrower' }] },
        { code: 'grey', target: [{ code: 'none', equivalence: 'disjoint' }] },
      ],
      unmapped: { mode: 'fixed', code: 'other', display: 'Other hue' },
    },
  ],
});

interface Param {
  name: string;
  part?: Param[];
  [k: string]: unknown;
}
type Answer = { parameter: Param[] };

const value = (p: Param | undefined) =>
  p ? Object.entries(p).find(([k]) => k.startsWith('value'))?.[1] : undefined;
const first = (a: Answer, name: string) => value(a.parameter.find((p) => p.name === name));
/** Each match as `equivalence concept.code [source.code]`. */
const matches = (a: Answer): string[] =>
  a.parameter
    .filter((p) => p.name === 'match')
    .map((m) => {
      const part = (n: string) => value(m.part!.find((x) => x.name === n));
      const concept = part('concept') as { code: string };
      const source = part('source') as { code: string } | undefined;
      return [part('equivalence'), concept.code, source?.code].filter(Boolean).join(' ');
    });

let mapId: string;
let other: ProjectAdmin;

beforeAll(async () => {
  const v1 = await call(s.base, 'POST', 'fhir/R4/ConceptMap', {
    token: s.token,
    body: conceptMap('1', 'inexact'),
  });
  expect(v1.status).toBe(201);
  const v2 = await call(s.base, 'POST', 'fhir/R4/ConceptMap', { token: s.token, body: conceptMap('2') });
  expect(v2.status).toBe(201);
  mapId = v2.body.id;
  other = await createProject(s.base, s.token, 'Translate other project');
});

describe('ConceptMap storage', () => {
  it('reads and searches the project own maps', async () => {
    const read = await call(s.base, 'GET', `fhir/R4/ConceptMap/${mapId}`, { token: s.token });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ resourceType: 'ConceptMap', url: MAP, version: '2' });
    const found = await call(s.base, 'GET', `fhir/R4/ConceptMap?url=${encodeURIComponent(MAP)}`, {
      token: s.token,
    });
    expect(found.body.total).toBe(2);
  });

  it("hides a project's map from another project", async () => {
    const read = await call(s.base, 'GET', `fhir/R4/ConceptMap/${mapId}`, { token: other.token });
    expect(read.status).toBe(404);
    const found = await call(s.base, 'GET', `fhir/R4/ConceptMap?url=${encodeURIComponent(MAP)}`, {
      token: other.token,
    });
    expect(found.body.total).toBe(0);
  });

  it('refuses a malformed map (400) and one over VALUESET_MAX_ENTRIES (422), and stores nothing', async () => {
    const bad = await call(s.base, 'POST', 'fhir/R4/ConceptMap', {
      token: s.token,
      body: {
        resourceType: 'ConceptMap',
        url: 'http://example.org/bad',
        status: 'active',
        group: { source: SRC },
      },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.issue[0].details.text).toMatch(/group/);
    const big = await call(s.base, 'POST', 'fhir/R4/ConceptMap', {
      token: s.token,
      body: {
        resourceType: 'ConceptMap',
        url: 'http://example.org/big',
        status: 'active',
        group: [
          { source: SRC, target: TGT, element: Array.from({ length: 30 }, (_, i) => ({ code: `c${i}` })) },
        ],
      },
    });
    expect(big.status).toBe(422);
    expect(big.body.issue[0].details.text).toMatch(/VALUESET_MAX_ENTRIES/);
    const none = await call(s.base, 'GET', 'fhir/R4/ConceptMap?url=http://example.org/big', {
      token: s.token,
    });
    expect(none.body.total).toBe(0);
  });
});

describe('ConceptMap/$translate', () => {
  const get = (query: string, token = s.token) =>
    call(s.base, 'GET', `fhir/R4/ConceptMap/$translate?${query}`, { token });

  it('translates a code with the highest version of the map named by url', async () => {
    const r = await get(`url=${encodeURIComponent(MAP)}&system=${encodeURIComponent(SRC)}&code=red`);
    expect(r.status).toBe(200);
    expect(first(r.body, 'result')).toBe(true);
    expect(matches(r.body)).toEqual(['equivalent R']);
    const m = r.body.parameter.find((p: Param) => p.name === 'match');
    expect(m.part).toEqual(
      expect.arrayContaining([
        { name: 'concept', valueCoding: { system: TGT, code: 'R', display: 'Hue R' } },
        { name: 'originMap', valueCanonical: `${MAP}|2` },
        { name: 'relationship', valueCode: 'equivalent' },
      ]),
    );
    const v1 = await get(`url=${encodeURIComponent(`${MAP}|1`)}&system=${encodeURIComponent(SRC)}&code=red`);
    expect(matches(v1.body)).toEqual(['inexact R']);
  });

  it('finds the maps from the systems alone, by id, and with R5 parameter names', async () => {
    const bySystems = await get(
      `system=${encodeURIComponent(SRC)}&code=crimson&targetsystem=${encodeURIComponent(TGT)}`,
    );
    expect(matches(bySystems.body)).toEqual(['narrower R', 'narrower R']);
    const byId = await call(
      s.base,
      'GET',
      `fhir/R4/ConceptMap/${mapId}/$translate?system=${encodeURIComponent(SRC)}&code=red`,
      {
        token: s.token,
      },
    );
    expect(matches(byId.body)).toEqual(['equivalent R']);
    const r5 = await get(
      `url=${encodeURIComponent(MAP)}&sourceSystem=${encodeURIComponent(SRC)}&sourceCode=red&targetSystem=${encodeURIComponent(TGT)}`,
    );
    expect(matches(r5.body)).toEqual(['equivalent R']);
  });

  it('translates back: R4 reverse=true and R5 targetCode find the sources of a target code', async () => {
    const r4 = await get(
      `url=${encodeURIComponent(MAP)}&system=${encodeURIComponent(TGT)}&code=R&reverse=true`,
    );
    expect(matches(r4.body)).toEqual(['equivalent R red', 'narrower R crimson']);
    const r5 = await get(
      `url=${encodeURIComponent(MAP)}&targetSystem=${encodeURIComponent(TGT)}&targetCode=R`,
    );
    expect(matches(r5.body)).toEqual(['equivalent R red', 'narrower R crimson']);
  });

  it('answers false with a message for a disjoint or unknown code, and uses the unmapped rule', async () => {
    const grey = await get(`url=${encodeURIComponent(MAP)}&system=${encodeURIComponent(SRC)}&code=grey`);
    expect(first(grey.body, 'result')).toBe(false);
    expect(matches(grey.body)).toEqual(['disjoint none']);
    const unmapped = await get(`url=${encodeURIComponent(MAP)}&system=${encodeURIComponent(SRC)}&code=teal`);
    expect(matches(unmapped.body)).toEqual(['inexact other']);
    const nowhere = await get(`system=http://example.org/nothing&code=x`);
    expect(first(nowhere.body, 'result')).toBe(false);
    expect(first(nowhere.body, 'message')).toMatch(/No ConceptMap found/);
  });

  it('uses a map sent inline or as tx-resource, bounded like a stored one', async () => {
    const inline = await call(s.base, 'POST', 'fhir/R4/ConceptMap/$translate', {
      token: other.token,
      body: {
        resourceType: 'Parameters',
        parameter: [
          { name: 'conceptMap', resource: conceptMap('9') },
          { name: 'coding', valueCoding: { system: SRC, code: 'red' } },
        ],
      },
    });
    expect(inline.status).toBe(200);
    expect(matches(inline.body)).toEqual(['equivalent R']);
    const big = await call(s.base, 'POST', 'fhir/R4/ConceptMap/$translate', {
      token: s.token,
      body: {
        resourceType: 'Parameters',
        parameter: [
          {
            name: 'tx-resource',
            resource: {
              resourceType: 'ConceptMap',
              url: 'http://example.org/big',
              group: [
                {
                  source: SRC,
                  target: TGT,
                  element: Array.from({ length: 30 }, (_, i) => ({ code: `c${i}` })),
                },
              ],
            },
          },
          { name: 'system', valueUri: SRC },
          { name: 'code', valueCode: 'red' },
        ],
      },
    });
    expect(big.status).toBe(422);
    expect(big.body.issue[0].details.text).toMatch(/VALUESET_MAX_ENTRIES/);
  });

  it("never uses another project's map: its url is not found, its systems find nothing", async () => {
    const byUrl = await get(
      `url=${encodeURIComponent(MAP)}&system=${encodeURIComponent(SRC)}&code=red`,
      other.token,
    );
    expect(byUrl.status).toBe(404);
    const bySystem = await get(`system=${encodeURIComponent(SRC)}&code=red`, other.token);
    expect(first(bySystem.body, 'result')).toBe(false);
    const byId = await call(
      s.base,
      'GET',
      `fhir/R4/ConceptMap/${mapId}/$translate?system=${encodeURIComponent(SRC)}&code=red`,
      {
        token: other.token,
      },
    );
    expect(byId.status).toBe(404);
  });

  it('refuses a request without a code, with both directions, or with an unknown parameter (400)', async () => {
    const noCode = await get(`url=${encodeURIComponent(MAP)}&system=${encodeURIComponent(SRC)}`);
    expect(noCode.status).toBe(400);
    expect(noCode.body.issue[0].details.text).toMatch(/code to translate is required/);
    const both = await get(
      `sourceCode=red&sourceSystem=${encodeURIComponent(SRC)}&targetCode=R&targetSystem=${encodeURIComponent(TGT)}`,
    );
    expect(both.status).toBe(400);
    const unknown = await get(`code=red&system=${encodeURIComponent(SRC)}&nonsense=1`);
    expect(unknown.status).toBe(400);
    expect(unknown.body.issue[0].details.text).toMatch(/nonsense/);
    const anonymous = await call(
      s.base,
      'GET',
      `fhir/R4/ConceptMap/$translate?code=red&system=${encodeURIComponent(SRC)}`,
    );
    expect(anonymous.status).toBe(401);
  });

  it('GraphQL translate answers as REST does', async () => {
    const r = await call(s.base, 'POST', 'graphql', {
      token: s.token,
      headers: { 'content-type': 'application/json' },
      body: {
        query: 'query ($u: String, $s: String, $c: String) { translate(url: $u, system: $s, code: $c) }',
        variables: { u: MAP, s: SRC, c: 'red' },
      },
    });
    expect(r.status).toBe(200);
    expect(matches(r.body.data.translate)).toEqual(['equivalent R']);
  });
});
