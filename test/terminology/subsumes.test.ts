// CodeSystem/$subsumes over REST and GraphQL on a real server: the four outcomes over an is-a DAG (a concept with
// two parents), codings, instance level, the shared core, project walls, and hostile inputs (each a clear 4xx).
import { beforeAll, describe, expect, it } from 'vitest';
import { addUser, createProject, type Account } from '../helpers/projects.js';
import { call, useTestServer } from '../helpers/server.js';

const s = useTestServer({ signIn: true });

const CS = 'http://example.org/subsumes/dag';
let other: Account;
let member: Account;
let csId: string;

async function post(token: string, type: string, body: unknown): Promise<Record<string, unknown>> {
  const r = await call(s.base, 'POST', `fhir/R4/${type}`, { token, body });
  if (r.status !== 201) throw new Error(`create ${type}: ${r.status} ${r.text}`);
  return r.body;
}

const get = (token: string, query: string, path = 'fhir/R4/CodeSystem/$subsumes') =>
  call(s.base, 'GET', `${path}?${query}`, { token });
const postSubsumes = (token: string, parameter: unknown[]) =>
  call(s.base, 'POST', 'fhir/R4/CodeSystem/$subsumes', {
    token,
    body: { resourceType: 'Parameters', parameter },
  });
const outcome = (body: { parameter?: Array<{ name: string; valueCode?: string }> }) =>
  body.parameter?.find((p) => p.name === 'outcome')?.valueCode;

beforeAll(async () => {
  other = await createProject(s.base, s.token, 'Subsumes B');
  member = await addUser(s.base, s.token);
  // root > animal > dog > puppy; root > pet > dog (pet's child property: dog has two parents, a DAG); root > plant.
  const cs = await post(s.token, 'CodeSystem', {
    resourceType: 'CodeSystem',
    url: CS,
    version: '1',
    status: 'active',
    content: 'complete',
    hierarchyMeaning: 'is-a',
    concept: [
      {
        code: 'root',
        concept: [
          { code: 'animal', concept: [{ code: 'dog', concept: [{ code: 'puppy' }] }] },
          { code: 'pet', property: [{ code: 'child', valueCode: 'dog' }] },
          { code: 'plant' },
        ],
      },
    ],
  });
  csId = cs.id as string;
  await post(s.token, 'CodeSystem', {
    resourceType: 'CodeSystem',
    url: 'http://example.org/subsumes/parts',
    status: 'active',
    content: 'complete',
    hierarchyMeaning: 'part-of',
    concept: [{ code: 'car', concept: [{ code: 'wheel' }] }],
  });
}, 120_000);

describe('CodeSystem/$subsumes answers', () => {
  const q = (a: string, b: string) => `system=${CS}&codeA=${a}&codeB=${b}`;
  it.each([
    ['dog', 'dog', 'equivalent'],
    ['root', 'puppy', 'subsumes'],
    ['puppy', 'animal', 'subsumed-by'],
    ['animal', 'pet', 'not-subsumed'],
    ['pet', 'puppy', 'subsumes'],
    ['puppy', 'pet', 'subsumed-by'],
    ['plant', 'dog', 'not-subsumed'],
  ])('%s and %s: %s (across both parents of dog)', async (a, b, expected) => {
    const r = await get(s.token, q(a, b));
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      resourceType: 'Parameters',
      parameter: [{ name: 'outcome', valueCode: expected }],
    });
  });

  it('POST with codingA/codingB (their system is the code system), and system|version', async () => {
    const r = await postSubsumes(s.token, [
      { name: 'codingA', valueCoding: { system: CS, code: 'animal' } },
      { name: 'codingB', valueCoding: { system: CS, code: 'puppy' } },
    ]);
    expect(outcome(r.body)).toBe('subsumes');
    const v = await get(s.token, `system=${encodeURIComponent(`${CS}|1`)}&codeA=dog&codeB=puppy`);
    expect(outcome(v.body)).toBe('subsumes');
    const clash = await postSubsumes(s.token, [
      { name: 'codingA', valueCoding: { system: CS, code: 'animal' } },
      { name: 'codingB', valueCoding: { system: 'urn:other', code: 'puppy' } },
    ]);
    expect(clash.status).toBe(400);
    expect(clash.text).toMatch(/codingB\.system/);
  });

  it('instance level, GET; a member may call it', async () => {
    const r = await get(member.token, 'codeA=root&codeB=dog', `fhir/R4/CodeSystem/${csId}/$subsumes`);
    expect(r.status).toBe(200);
    expect(outcome(r.body)).toBe('subsumes');
  });

  it('unknown codes: 404 naming each; unknown system: 404', async () => {
    const r = await get(s.token, q('cat', 'fish'));
    expect(r.status).toBe(404);
    expect(r.body.issue[0].details.text).toBe(`Unable to find codes 'cat' and 'fish' in ${CS} version 1`);
    expect(r.body.issue[0].expression).toEqual(['codeA', 'codeB']);
    const one = await get(s.token, q('dog', 'fish'));
    expect(one.body.issue[0].details.text).toBe(`Unable to find code 'fish' in ${CS} version 1`);
    const cs = await get(s.token, 'system=http://example.org/none&codeA=a&codeB=b');
    expect(cs.status).toBe(404);
  });

  it('a hierarchy that is not is-a defines no subsumption: 422', async () => {
    const r = await get(s.token, 'system=http://example.org/subsumes/parts&codeA=car&codeB=wheel');
    expect(r.status).toBe(422);
    expect(r.body.issue[0].details.text).toContain("hierarchyMeaning 'part-of'");
  });

  it("another project's code system is invisible (404), by url and by id", async () => {
    expect((await get(other.token, q('root', 'dog'))).status).toBe(404);
    const byId = await get(other.token, 'codeA=root&codeB=dog', `fhir/R4/CodeSystem/${csId}/$subsumes`);
    expect(byId.status).toBe(404);
    expect(byId.text).not.toContain('root');
  });

  it('GraphQL subsumes takes the same parameters', async () => {
    const r = await call(s.base, 'POST', 'graphql', {
      token: s.token,
      headers: { 'content-type': 'application/json' },
      body: { query: `{ subsumes(system: "${CS}", codeA: "animal", codeB: "puppy") }` },
    });
    expect(r.status).toBe(200);
    expect(outcome(r.body.data.subsumes)).toBe('subsumes');
  });
});

describe('CodeSystem/$subsumes refuses hostile input with a 4xx naming it', () => {
  const cases: Array<[string, () => Promise<{ status: number; text: string }>, RegExp]> = [
    ['no codeB', () => get(s.token, `system=${CS}&codeA=dog`), /codeB/],
    ['no system', () => get(s.token, 'codeA=a&codeB=b'), /system/],
    [
      'a 5,000-character codeA',
      () => get(s.token, `system=${CS}&codeA=${'x'.repeat(5000)}&codeB=b`),
      /codeA.*limit/,
    ],
    ['control characters', () => get(s.token, `system=${CS}&codeA=a%07&codeB=b`), /control characters/],
    [
      'an unknown parameter',
      () => get(s.token, `system=${CS}&codeA=a&codeB=b&code=c`),
      /\$subsumes parameter/,
    ],
    ['codeA twice', () => get(s.token, `system=${CS}&codeA=a&codeA=b&codeB=c`), /given more than once/],
    [
      'a codingA with a number for code',
      () => postSubsumes(s.token, [{ name: 'codingA', valueCoding: { code: 7 } }]),
      /codingA\.code must be a string/,
    ],
    [
      'a codingA given as a list',
      () => postSubsumes(s.token, [{ name: 'codingA', valueCoding: [{ code: 'a' }] }]),
      /must be a Coding/,
    ],
    [
      'codeA and codingA that differ',
      () =>
        postSubsumes(s.token, [
          { name: 'system', valueUri: CS },
          { name: 'codeA', valueCode: 'dog' },
          { name: 'codingA', valueCoding: { code: 'cat' } },
          { name: 'codeB', valueCode: 'dog' },
        ]),
      /codingA\.code/,
    ],
  ];
  for (const [what, run, message] of cases) {
    it(what, async () => {
      const r = await run();
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
      expect(r.text).toMatch(message);
    });
  }
});
