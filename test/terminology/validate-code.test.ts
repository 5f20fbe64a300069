// ValueSet/$validate-code and CodeSystem/$validate-code over REST and GraphQL on a real server: in and out of a
// value set, unknown codes and systems, displays (wrong, lenient, by language), inactive codes with activeOnly,
// abstract codes, code/coding/codeableConcept, instance level, project walls, and hostile inputs (each a clear
// 4xx, the inline value set held to the limits of $expand).
import { beforeAll, describe, expect, it } from 'vitest';
import { createProject, type Account } from '../helpers/projects.js';
import { call, useTestServer } from '../helpers/server.js';

const s = useTestServer({ config: { valueSetMaxEntries: 20, expandMaxComposeClauses: 30 }, signIn: true });

const CS = 'http://example.org/validate/body';
const VS = 'http://example.org/validate/arms';
const ALL = 'http://example.org/validate/all';
const TX = 'http://hl7.org/fhir/tools/CodeSystem/tx-issue-type';

let other: Account;
let vsId: string;
let csId: string;

interface Param {
  name: string;
  resource?: { issue: Issue[] };
  [k: string]: unknown;
}
interface Issue {
  severity: string;
  code: string;
  details: { coding: Array<{ system: string; code: string }>; text: string };
  expression?: string[];
}
type Body = { parameter?: Param[]; issue?: Issue[] };

const one = (body: Body, name: string): unknown => {
  const p = (body.parameter ?? []).find((x) => x.name === name);
  return p ? Object.entries(p).find(([k]) => k.startsWith('value'))?.[1] : undefined;
};
/** `severity tx-issue-type expression` of each issue of the answer. */
const issues = (body: Body): string[] =>
  ((body.parameter ?? []).find((p) => p.name === 'issues')?.resource?.issue ?? [])
    .map(
      (i) =>
        `${i.severity} ${i.details.coding.find((c) => c.system === TX)?.code} ${i.expression?.[0] ?? ''}`,
    )
    .sort();

async function post(token: string, type: string, body: unknown): Promise<Record<string, unknown>> {
  const r = await call(s.base, 'POST', `fhir/R4/${type}`, { token, body });
  if (r.status !== 201) throw new Error(`create ${type}: ${r.status} ${r.text}`);
  return r.body;
}

const get = (query: string, token = s.token, path = 'fhir/R4/ValueSet/$validate-code') =>
  call(s.base, 'GET', `${path}?${query}`, { token });
const postParams = (parameter: unknown[], token = s.token, path = 'fhir/R4/ValueSet/$validate-code') =>
  call(s.base, 'POST', path, { token, body: { resourceType: 'Parameters', parameter } });
const graphql = (query: string, variables: Record<string, unknown> = {}) =>
  call(s.base, 'POST', 'graphql', {
    token: s.token,
    headers: { 'content-type': 'application/json' },
    body: { query, variables },
  });

beforeAll(async () => {
  other = await createProject(s.base, s.token, 'Validate B');
  const cs = await post(s.token, 'CodeSystem', {
    resourceType: 'CodeSystem',
    url: CS,
    version: '2.0',
    language: 'en',
    status: 'active',
    content: 'complete',
    hierarchyMeaning: 'is-a',
    property: [
      { code: 'inactive', uri: 'http://hl7.org/fhir/concept-properties#inactive', type: 'boolean' },
      { code: 'notSelectable', uri: 'http://hl7.org/fhir/concept-properties#notSelectable', type: 'boolean' },
    ],
    concept: [
      {
        code: 'limb',
        display: 'Limb',
        property: [{ code: 'notSelectable', valueBoolean: true }],
        concept: [
          {
            code: 'arm',
            display: 'Arm',
            designation: [{ language: 'de', value: 'Arm (de)' }],
            concept: [
              { code: 'hand', display: 'Hand' },
              { code: 'old-hand', display: 'Old hand', property: [{ code: 'inactive', valueBoolean: true }] },
            ],
          },
          { code: 'leg', display: 'Leg' },
        ],
      },
    ],
  });
  csId = cs.id as string;
  const vs = await post(s.token, 'ValueSet', {
    resourceType: 'ValueSet',
    url: VS,
    version: '1',
    status: 'active',
    compose: { include: [{ system: CS, filter: [{ property: 'concept', op: 'is-a', value: 'arm' }] }] },
  });
  vsId = vs.id as string;
  await post(s.token, 'ValueSet', {
    resourceType: 'ValueSet',
    url: ALL,
    status: 'active',
    compose: { include: [{ system: CS }] },
  });
}, 120_000);

describe('ValueSet/$validate-code answers', () => {
  it('a code in the value set: result true, with its display, system, version and code', async () => {
    const r = await get(`url=${VS}&system=${CS}&code=hand`);
    expect(r.status).toBe(200);
    expect(r.body.resourceType).toBe('Parameters');
    expect(one(r.body, 'result')).toBe(true);
    expect(one(r.body, 'display')).toBe('Hand');
    expect(one(r.body, 'system')).toBe(CS);
    expect(one(r.body, 'version')).toBe('2.0');
    expect(one(r.body, 'code')).toBe('hand');
    expect(one(r.body, 'message')).toBeUndefined();
  });

  it('a code of the code system outside the value set: false, not-in-vs naming the value set', async () => {
    const r = await get(`url=${VS}&system=${CS}&code=leg`);
    expect(r.status).toBe(200);
    expect(one(r.body, 'result')).toBe(false);
    expect(issues(r.body)).toEqual(['error not-in-vs code']);
    // The IG's message id; `expression` only (R4 deprecates `location`).
    const issue = r.body.parameter.find((p: Param) => p.name === 'issues').resource.issue[0];
    expect(issue.extension).toEqual([
      {
        url: 'http://hl7.org/fhir/StructureDefinition/operationoutcome-message-id',
        valueString: 'None_of_the_provided_codes_are_in_the_value_set_one',
      },
    ]);
    expect(issue.location).toBeUndefined();
    expect(one(r.body, 'message')).toBe(
      `The provided code '${CS}#leg' was not found in the value set '${VS}|1'`,
    );
  });

  it('an unknown code: false, invalid-code naming the code system version', async () => {
    const r = await get(`url=${VS}&system=${CS}&code=tail`);
    expect(one(r.body, 'result')).toBe(false);
    expect(issues(r.body)).toEqual(['error invalid-code code', 'error not-in-vs code']);
    expect(String(one(r.body, 'message'))).toContain(
      `Unknown code 'tail' in the CodeSystem '${CS}' version '2.0'`,
    );
  });

  it('a wrong display: false with invalid-display; lenient-display-validation makes it a warning', async () => {
    const r = await get(`url=${VS}&system=${CS}&code=arm&display=Leg`);
    expect(one(r.body, 'result')).toBe(false);
    expect(issues(r.body)).toEqual(['error invalid-display display']);
    expect(one(r.body, 'message')).toBe(
      `Wrong Display Name 'Leg' for ${CS}#arm. Valid display is one of 2 choices: 'Arm' (en) or 'Arm (de)' (de) ` +
        "(for the language(s) '--')",
    );
    const lenient = await get(`url=${VS}&system=${CS}&code=arm&display=Leg&lenient-display-validation=true`);
    expect(one(lenient.body, 'result')).toBe(true);
    expect(issues(lenient.body)).toEqual(['warning invalid-display display']);
    const designation = await get(
      `url=${VS}&system=${CS}&code=arm&display=${encodeURIComponent('Arm (de)')}`,
    );
    expect(one(designation.body, 'result')).toBe(true);
    const de = await get(`url=${VS}&system=${CS}&code=arm&displayLanguage=de`);
    expect(one(de.body, 'display')).toBe('Arm (de)');
  });

  it("a value set's language says which displays are right when the request names none", async () => {
    await post(s.token, 'ValueSet', {
      resourceType: 'ValueSet',
      url: 'http://example.org/validate/arms-de',
      language: 'de',
      status: 'active',
      compose: { include: [{ system: CS, concept: [{ code: 'arm' }] }] },
    });
    const base = `url=http://example.org/validate/arms-de&system=${CS}&code=arm`;
    const en = await get(`${base}&display=Arm`);
    expect(one(en.body, 'result')).toBe(false);
    expect(issues(en.body)).toEqual(['error invalid-display display']);
    const de = await get(`${base}&display=${encodeURIComponent('Arm (de)')}`);
    expect(one(de.body, 'result')).toBe(true);
    const asked = await get(`${base}&display=Arm&displayLanguage=en`);
    expect(one(asked.body, 'result')).toBe(true);
  });

  it('an unknown system: false, not-found on system, x-unknown-system', async () => {
    const r = await get(`url=${VS}&system=http://example.org/none&code=hand`);
    expect(r.status).toBe(200);
    expect(one(r.body, 'result')).toBe(false);
    expect(one(r.body, 'x-unknown-system')).toBe('http://example.org/none');
    expect(issues(r.body)).toEqual(['error not-found system', 'error not-in-vs code']);
  });

  it('a value set naming a missing system, asked about a code of another unknown system: false, both issues', async () => {
    const r = await postParams([
      {
        name: 'valueSet',
        resource: {
          resourceType: 'ValueSet',
          url: 'http://example.org/validate/missing-system',
          version: '1',
          status: 'active',
          compose: { include: [{ system: 'http://example.org/nobody-has-this' }] },
        },
      },
      { name: 'code', valueCode: 'x' },
      { name: 'system', valueUri: 'http://example.org/nor-this' },
    ]);
    expect(r.status).toBe(200);
    expect(one(r.body, 'result')).toBe(false);
    expect(one(r.body, 'x-unknown-system')).toBe('http://example.org/nor-this');
    expect(issues(r.body)).toEqual(['error not-found system', 'error not-in-vs code']);
  });

  it('an unknown code system version: false, naming the versions there are', async () => {
    const r = await get(`url=${VS}&system=${CS}&code=hand&systemVersion=9`);
    expect(one(r.body, 'result')).toBe(false);
    expect(String(one(r.body, 'message'))).toContain('Valid versions: 2.0');
  });

  it('an inactive code: in the value set, but not with activeOnly', async () => {
    const r = await get(`url=${VS}&system=${CS}&code=old-hand`);
    expect(one(r.body, 'result')).toBe(true);
    expect(one(r.body, 'inactive')).toBe(true);
    expect(issues(r.body)).toEqual(['warning code-comment code']);
    const active = await get(`url=${VS}&system=${CS}&code=old-hand&activeOnly=true`);
    expect(one(active.body, 'result')).toBe(false);
    expect(issues(active.body)).toEqual([
      'error code-rule code',
      'error not-in-vs code',
      'warning code-comment code',
    ]);
  });

  it('abstract=false refuses an abstract code', async () => {
    const ok = await get(`url=${ALL}&system=${CS}&code=limb`);
    expect(one(ok.body, 'result')).toBe(true);
    const r = await get(`url=${ALL}&system=${CS}&code=limb&abstract=false`);
    expect(one(r.body, 'result')).toBe(false);
    expect(issues(r.body)).toContain('error code-rule code');
  });

  it('inferSystem finds the system of a code in the value set', async () => {
    const r = await get(`url=${VS}&code=hand&inferSystem=true`);
    expect(one(r.body, 'result')).toBe(true);
    expect(one(r.body, 'system')).toBe(CS);
  });

  it('POST: a coding, and a codeableConcept valid when one of its codings is', async () => {
    const coding = await postParams([
      { name: 'url', valueUri: VS },
      { name: 'coding', valueCoding: { system: CS, code: 'arm', display: 'Arm' } },
    ]);
    expect(one(coding.body, 'result')).toBe(true);
    const cc = {
      coding: [
        { system: CS, code: 'leg' },
        { system: CS, code: 'hand' },
      ],
    };
    const r = await postParams([
      { name: 'url', valueUri: VS },
      { name: 'codeableConcept', valueCodeableConcept: cc },
    ]);
    expect(one(r.body, 'result')).toBe(true);
    expect(one(r.body, 'code')).toBe('hand');
    expect(one(r.body, 'codeableConcept')).toEqual(cc);
    expect(issues(r.body)).toEqual(['information this-code-not-in-vs CodeableConcept.coding[0].code']);
    const none = await postParams([
      { name: 'url', valueUri: VS },
      { name: 'codeableConcept', valueCodeableConcept: { coding: [{ system: CS, code: 'leg' }] } },
    ]);
    expect(one(none.body, 'result')).toBe(false);
    expect(issues(none.body)).toContain('error not-in-vs ');
  });

  it('an inline valueSet, and instance level by id', async () => {
    const inline = await postParams([
      {
        name: 'valueSet',
        resource: {
          resourceType: 'ValueSet',
          compose: { include: [{ system: CS, concept: [{ code: 'leg' }] }] },
        },
      },
      { name: 'code', valueCode: 'leg' },
      { name: 'system', valueUri: CS },
    ]);
    expect(one(inline.body, 'result')).toBe(true);
    const byId = await get(`system=${CS}&code=hand`, s.token, `fhir/R4/ValueSet/${vsId}/$validate-code`);
    expect(one(byId.body, 'result')).toBe(true);
  });

  it('an unknown value set: 404 not-found with the IG text and issue type', async () => {
    const r = await get(`url=http://example.org/none&system=${CS}&code=hand`);
    expect(r.status).toBe(404);
    expect(r.body.issue[0].code).toBe('not-found');
    expect(r.body.issue[0].details.coding[0]).toEqual({ system: TX, code: 'not-found' });
    expect(r.body.issue[0].details.text).toBe(
      "A definition for the value Set 'http://example.org/none' could not be found",
    );
  });

  it("another project's value set is invisible (404), by url and by id", async () => {
    const byUrl = await get(`url=${VS}&system=${CS}&code=hand`, other.token);
    expect(byUrl.status).toBe(404);
    const byId = await get(`system=${CS}&code=hand`, other.token, `fhir/R4/ValueSet/${vsId}/$validate-code`);
    expect(byId.status).toBe(404);
    expect(byId.text).not.toContain('Hand');
  });

  it('GraphQL validateCode takes the same parameters', async () => {
    const r = await graphql(
      'query ($u: String, $s: String) { validateCode(url: $u, system: $s, code: "hand") }',
      {
        u: VS,
        s: CS,
      },
    );
    expect(r.status).toBe(200);
    expect(one(r.body.data.validateCode, 'result')).toBe(true);
  });
});

describe('CodeSystem/$validate-code answers', () => {
  const path = 'fhir/R4/CodeSystem/$validate-code';

  it('a code of the code system, an unknown one, a wrong display', async () => {
    const ok = await get(`url=${CS}&code=leg`, s.token, path);
    expect(ok.status).toBe(200);
    expect(one(ok.body, 'result')).toBe(true);
    expect(one(ok.body, 'display')).toBe('Leg');
    expect(one(ok.body, 'version')).toBe('2.0');
    const bad = await get(`url=${CS}&code=tail`, s.token, path);
    expect(one(bad.body, 'result')).toBe(false);
    expect(issues(bad.body)).toEqual(['error invalid-code code']);
    const display = await get(`url=${CS}&code=leg&display=Arm`, s.token, path);
    expect(one(display.body, 'result')).toBe(false);
    expect(issues(display.body)).toEqual(['error invalid-display display']);
  });

  it('a coding (POST), instance level, an unknown code system', async () => {
    const coding = await postParams(
      [{ name: 'coding', valueCoding: { system: CS, code: 'arm' } }],
      s.token,
      path,
    );
    expect(one(coding.body, 'result')).toBe(true);
    const byId = await get('code=hand', s.token, `fhir/R4/CodeSystem/${csId}/$validate-code`);
    expect(one(byId.body, 'result')).toBe(true);
    const none = await get('url=http://example.org/none&code=a', s.token, path);
    expect(one(none.body, 'result')).toBe(false);
    expect(issues(none.body)).toEqual(['error not-found system']);
    const hidden = await get(`url=${CS}&code=leg`, other.token, path);
    expect(one(hidden.body, 'result')).toBe(false);
    expect(hidden.text).not.toContain('Leg');
  });

  it('a withdrawn designation is accepted with a warning naming the current displays; another use is no display', async () => {
    const url = 'http://example.org/validate/designations';
    await post(s.token, 'CodeSystem', {
      resourceType: 'CodeSystem',
      url,
      status: 'active',
      content: 'complete',
      concept: [
        {
          code: 'k',
          display: 'Knee',
          designation: [
            {
              value: 'Old knee',
              extension: [
                {
                  url: 'http://hl7.org/fhir/StructureDefinition/structuredefinition-standards-status',
                  valueCode: 'withdrawn',
                },
              ],
            },
            { value: 'KN', use: { system: 'http://example.org/uses', code: 'abbreviation' } },
          ],
        },
      ],
    });
    const old = await get(`url=${url}&code=k&display=${encodeURIComponent('Old knee')}`, s.token, path);
    expect(one(old.body, 'result')).toBe(true);
    expect(issues(old.body)).toEqual(['warning display-comment display']);
    const text = (old.body.parameter as Param[]).find((p) => p.name === 'issues')!.resource!.issue[0].details
      .text;
    expect(text).toBe(
      `'Old knee' is no longer considered a correct display for code 'k' (status = deprecated). The correct display is one of "Knee".`,
    );
    expect(one(old.body, 'message')).toBeUndefined();
    const abbreviation = await get(`url=${url}&code=k&display=KN`, s.token, path);
    expect(one(abbreviation.body, 'result')).toBe(false);
    expect(issues(abbreviation.body)).toEqual(['error invalid-display display']);
  });

  it('GraphQL validateCodeInCodeSystem', async () => {
    const r = await graphql(`{ validateCodeInCodeSystem(url: "${CS}", code: "arm") }`);
    expect(one(r.body.data.validateCodeInCodeSystem, 'result')).toBe(true);
  });
});

describe('$validate-code refuses hostile input with a 4xx naming it', () => {
  const big = { resourceType: 'ValueSet', compose: { include: [{ system: CS, concept: [] as unknown[] }] } };
  big.compose.include[0].concept = Array.from({ length: 21 }, (_, i) => ({ code: `c${i}` }));
  const clauses = {
    resourceType: 'ValueSet',
    compose: { include: Array.from({ length: 31 }, () => ({ system: CS })) },
  };
  const cases: Array<[string, () => Promise<{ status: number; text: string }>, RegExp]> = [
    ['no token', () => call(s.base, 'GET', `fhir/R4/ValueSet/$validate-code?url=${VS}&code=a`), /(?:)/],
    ['no code', () => get(`url=${VS}&system=${CS}`), /code/],
    ['no value set', () => get(`system=${CS}&code=hand`), /url/],
    [
      'a 5,000-character code',
      () => get(`url=${VS}&system=${CS}&code=${'x'.repeat(5000)}`),
      /code.*limit of 4096/,
    ],
    [
      'a 5,000-character display',
      () => get(`url=${VS}&system=${CS}&code=a&display=${'x'.repeat(5000)}`),
      /display/,
    ],
    ['control characters', () => get(`url=${VS}&system=${CS}&code=a%07b`), /control characters/],
    [
      'useSupplement 101 times',
      () => get(`url=${VS}&system=${CS}&code=arm&${'useSupplement=a&'.repeat(101)}`),
      /useSupplement is given more than 100 times/,
    ],
    [
      'an unknown parameter',
      () => get(`url=${VS}&code=arm&filter=x`),
      /Unknown or unsupported \$validate-code/,
    ],
    ['code twice', () => get(`url=${VS}&code=arm&code=leg`), /code given more than once/],
    ['a coding in the query string', () => get(`url=${VS}&coding=x`), /POST Parameters body/],
    [
      'code and coding together',
      () =>
        postParams([
          { name: 'url', valueUri: VS },
          { name: 'code', valueCode: 'arm' },
          { name: 'coding', valueCoding: { system: CS, code: 'arm' } },
        ]),
      /one of code, coding and codeableConcept/,
    ],
    [
      'a codeableConcept of 101 codings',
      () =>
        postParams([
          { name: 'url', valueUri: VS },
          {
            name: 'codeableConcept',
            valueCodeableConcept: {
              coding: Array.from({ length: 101 }, () => ({ system: CS, code: 'arm' })),
            },
          },
        ]),
      /more than 100 codings/,
    ],
    [
      'a codeableConcept that is not one',
      () =>
        postParams([
          { name: 'url', valueUri: VS },
          { name: 'codeableConcept', valueCodeableConcept: { coding: { $ne: 1 } } },
        ]),
      /codeableConcept\.coding must be an array/,
    ],
    [
      'a coding with a foreign element',
      () =>
        postParams([
          { name: 'url', valueUri: VS },
          { name: 'coding', valueCoding: { code: 'a', evil: 1 } },
        ]),
      /a Coding has no element/,
    ],
    [
      'an inline valueSet over VALUESET_MAX_ENTRIES',
      () =>
        postParams([
          { name: 'valueSet', resource: big },
          { name: 'system', valueUri: CS },
          { name: 'code', valueCode: 'c1' },
        ]),
      /VALUESET_MAX_ENTRIES/,
    ],
    [
      'an inline valueSet over EXPAND_MAX_COMPOSE_CLAUSES',
      () =>
        postParams([
          { name: 'valueSet', resource: clauses },
          { name: 'system', valueUri: CS },
          { name: 'code', valueCode: 'arm' },
        ]),
      /EXPAND_MAX_COMPOSE_CLAUSES/,
    ],
    [
      'a valueSet that is not a ValueSet',
      () =>
        postParams([
          { name: 'valueSet', resource: { resourceType: 'Patient' } },
          { name: 'code', valueCode: 'a' },
        ]),
      /ValueSet/,
    ],
    [
      'instance level with a url',
      () => get(`url=${VS}&system=${CS}&code=hand`, s.token, `fhir/R4/ValueSet/${vsId}/$validate-code`),
      /no url/,
    ],
    [
      'CodeSystem: a 5,000-character url',
      () => get(`url=${'x'.repeat(5000)}&code=a`, s.token, 'fhir/R4/CodeSystem/$validate-code'),
      /url.*limit of 4096/,
    ],
    ['CodeSystem: no url', () => get('code=a', s.token, 'fhir/R4/CodeSystem/$validate-code'), /url/],
    [
      'CodeSystem instance level with another url',
      () => get('url=urn:other&code=a', s.token, `fhir/R4/CodeSystem/${csId}/$validate-code`),
      /is not the url of CodeSystem/,
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

  it('GraphQL: validateCode and validateCodeInCodeSystem are expensive fields (5 aliases: 400, up front)', async () => {
    for (const field of [
      'validateCode(url: "urn:x", code: "a")',
      'validateCodeInCodeSystem(url: "urn:x", code: "a")',
    ]) {
      const fields = Array.from({ length: 5 }, (_, i) => `a${i}: ${field}`);
      const r = await graphql(`{ ${fields.join(' ')} }`);
      expect(r.status).toBe(400);
      expect(r.text).toMatch(/GRAPHQL_MAX_EXPENSIVE_FIELDS/);
    }
  });
});
