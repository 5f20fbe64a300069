// CodeSystem/$lookup over REST and GraphQL on a real server: the answer (name, version, display, abstract,
// definition, designations, properties, the `property` filter), versions, languages, supplements, instance level,
// the shared core definitions, project walls, and hostile inputs (each a clear 4xx).
import { beforeAll, describe, expect, it } from 'vitest';
import { addUser, createProject, type Account } from '../helpers/projects.js';
import { call, useTestServer } from '../helpers/server.js';

const s = useTestServer({ config: { loadCoreTerminology: true }, signIn: true });

const CS = 'http://example.org/lookup/body';
const VERSIONED = 'http://example.org/lookup/versioned';
const SUPPLEMENT = 'http://example.org/lookup/body-de';
const GENDER = 'http://hl7.org/fhir/administrative-gender';

let other: Account;
let member: Account;
let csId: string;

interface Param {
  name: string;
  part?: Param[];
  [k: string]: unknown;
}

const params = (body: { parameter?: Param[] }, name: string): Param[] =>
  (body.parameter ?? []).filter((p) => p.name === name);
const one = (body: { parameter?: Param[] }, name: string): unknown => {
  const p = params(body, name)[0];
  return p ? Object.entries(p).find(([k]) => k.startsWith('value'))?.[1] : undefined;
};
/** `code=value` of every property parameter, sorted. */
const props = (body: { parameter?: Param[] }): string[] =>
  params(body, 'property')
    .map((p) => {
      const code = p.part!.find((x) => x.name === 'code')!.valueCode as string;
      const value = p.part!.find((x) => x.name === 'value')!;
      const v = Object.entries(value).find(([k]) => k.startsWith('value'))![1];
      return `${code}=${typeof v === 'object' ? JSON.stringify(v) : String(v)}`;
    })
    .sort();

async function post(token: string, type: string, body: unknown): Promise<Record<string, unknown>> {
  const r = await call(s.base, 'POST', `fhir/R4/${type}`, { token, body });
  if (r.status !== 201) throw new Error(`create ${type}: ${r.status} ${r.text}`);
  return r.body;
}

const get = (token: string, query: string, headers?: Record<string, string>) =>
  call(s.base, 'GET', `fhir/R4/CodeSystem/$lookup?${query}`, { token, headers });
const postLookup = (token: string, parameter: unknown[], path = 'fhir/R4/CodeSystem/$lookup') =>
  call(s.base, 'POST', path, { token, body: { resourceType: 'Parameters', parameter } });

beforeAll(async () => {
  other = await createProject(s.base, s.token, 'Lookup B');
  member = await addUser(s.base, s.token);
  const cs = await post(s.token, 'CodeSystem', {
    resourceType: 'CodeSystem',
    url: CS,
    version: '2.0',
    name: 'BodyParts',
    language: 'en',
    status: 'active',
    content: 'complete',
    hierarchyMeaning: 'is-a',
    property: [
      { code: 'side', uri: 'http://example.org/lookup/side', type: 'code' },
      { code: 'status', uri: 'http://hl7.org/fhir/concept-properties#status', type: 'code' },
      { code: 'notSelectable', uri: 'http://hl7.org/fhir/concept-properties#notSelectable', type: 'boolean' },
    ],
    concept: [
      {
        code: 'limb',
        display: 'Limb',
        definition: 'An arm or a leg',
        property: [{ code: 'notSelectable', valueBoolean: true }],
        concept: [
          {
            code: 'arm',
            display: 'Arm',
            definition: 'The upper limb',
            designation: [{ language: 'de', value: 'Arm (de)' }],
            property: [{ code: 'side', valueCode: 'both' }],
            concept: [{ code: 'hand', display: 'Hand' }],
          },
          {
            code: 'old-leg',
            display: 'Old leg',
            property: [{ code: 'status', valueCode: 'retired' }],
          },
        ],
      },
    ],
  });
  csId = cs.id as string;
  for (const version of ['1.0.0', '1.10.0', '1.2.0'])
    await post(s.token, 'CodeSystem', {
      resourceType: 'CodeSystem',
      url: VERSIONED,
      version,
      status: 'active',
      content: 'complete',
      concept: [{ code: 'x', display: `X of ${version}` }],
    });
  await post(s.token, 'CodeSystem', {
    resourceType: 'CodeSystem',
    url: SUPPLEMENT,
    version: '1',
    status: 'active',
    content: 'supplement',
    supplements: CS,
    language: 'de',
    concept: [{ code: 'hand', designation: [{ language: 'de', value: 'Hand (Ergänzung)' }] }],
  });
}, 120_000);

describe('CodeSystem/$lookup answers', () => {
  it('GET: name, version, display, system, code, abstract, definition, designations and inactive by default', async () => {
    const r = await get(s.token, `system=${CS}&code=arm`);
    expect(r.status).toBe(200);
    expect(r.body.resourceType).toBe('Parameters');
    expect(one(r.body, 'name')).toBe('BodyParts');
    expect(one(r.body, 'version')).toBe('2.0');
    expect(one(r.body, 'display')).toBe('Arm');
    expect(one(r.body, 'system')).toBe(CS);
    expect(one(r.body, 'code')).toBe('arm');
    expect(one(r.body, 'abstract')).toBe(false);
    expect(one(r.body, 'definition')).toBe('The upper limb');
    const designations = params(r.body, 'designation').map((d) =>
      Object.fromEntries(d.part!.map((p) => [p.name, p.valueCode ?? p.valueString ?? p.valueCoding])),
    );
    expect(designations).toContainEqual({ language: 'de', value: 'Arm (de)' });
    expect(designations).toContainEqual({
      language: 'en',
      use: expect.objectContaining({ code: 'preferredForLanguage' }),
      value: 'Arm',
    });
    // Without `property`: inactive only (no hierarchy, no own properties).
    expect(props(r.body)).toEqual(['inactive=false']);
  });

  it('property=*: parent and child (with their displays), own properties, status, notSelectable', async () => {
    const arm = await get(s.token, `system=${CS}&code=arm&property=*`);
    expect(props(arm.body)).toEqual(['child=hand', 'inactive=false', 'parent=limb', 'side=both']);
    const parent = params(arm.body, 'property').find((p) => p.part!.some((x) => x.valueCode === 'parent'))!;
    expect(parent.part!.find((x) => x.name === 'description')?.valueString).toBe('Limb');
    const limb = await get(s.token, `system=${CS}&code=limb&property=*`);
    expect(one(limb.body, 'abstract')).toBe(true);
    expect(props(limb.body)).toEqual(['child=arm', 'child=old-leg', 'inactive=false', 'notSelectable=true']);
    const old = await get(s.token, `system=${CS}&code=old-leg&property=*`);
    expect(props(old.body)).toEqual(['inactive=true', 'parent=limb', 'status=retired']);
  });

  it('property names what comes back: by code or uri, designation and definition only when named', async () => {
    const r = await get(
      s.token,
      `system=${CS}&code=arm&property=parent&property=http://example.org/lookup/side`,
    );
    expect(props(r.body)).toEqual(['parent=limb', 'side=both']);
    expect(params(r.body, 'designation')).toEqual([]);
    expect(one(r.body, 'definition')).toBeUndefined();
    const d = await get(s.token, `system=${CS}&code=arm&property=definition`);
    expect(one(d.body, 'definition')).toBe('The upper limb');
    expect(props(d.body)).toEqual([]);
  });

  it('POST Parameters with a coding; the coding and separate parameters must agree', async () => {
    const r = await postLookup(s.token, [{ name: 'coding', valueCoding: { system: CS, code: 'hand' } }]);
    expect(r.status).toBe(200);
    expect(one(r.body, 'display')).toBe('Hand');
    const clash = await postLookup(s.token, [
      { name: 'coding', valueCoding: { system: CS, code: 'hand' } },
      { name: 'code', valueCode: 'arm' },
    ]);
    expect(clash.status).toBe(400);
    expect(clash.body.issue[0].diagnostics ?? clash.body.issue[0].details.text).toMatch(/coding\.code/);
  });

  it('versions: the highest without one (1.10.0 over 1.2.0), version or system|version picks one', async () => {
    const latest = await get(s.token, `system=${VERSIONED}&code=x`);
    expect(one(latest.body, 'version')).toBe('1.10.0');
    expect(one(latest.body, 'display')).toBe('X of 1.10.0');
    const v = await get(s.token, `system=${VERSIONED}&code=x&version=1.0.0`);
    expect(one(v.body, 'display')).toBe('X of 1.0.0');
    const bar = await get(s.token, `system=${encodeURIComponent(`${VERSIONED}|1.2.0`)}&code=x`);
    expect(one(bar.body, 'display')).toBe('X of 1.2.0');
    const missing = await get(s.token, `system=${VERSIONED}&code=x&version=9`);
    expect(missing.status).toBe(404);
    expect(missing.text).toContain('version');
  });

  it('displayLanguage (or Accept-Language) picks the display from the designations', async () => {
    const r = await get(s.token, `system=${CS}&code=arm&displayLanguage=de`);
    expect(one(r.body, 'display')).toBe('Arm (de)');
    const h = await get(s.token, `system=${CS}&code=arm`, { 'accept-language': 'de' });
    expect(one(h.body, 'display')).toBe('Arm (de)');
    const bad = await get(s.token, `system=${CS}&code=arm&displayLanguage=${encodeURIComponent('de;q=7')}`);
    expect(bad.status).toBe(400);
  });

  it('useSupplement adds the supplement designations (with their source) and says it was used', async () => {
    const r = await get(s.token, `system=${CS}&code=hand&useSupplement=${SUPPLEMENT}`);
    expect(r.status).toBe(200);
    const sup = params(r.body, 'designation').find((d) =>
      d.part!.some((p) => p.valueString === 'Hand (Ergänzung)'),
    );
    expect(sup?.part?.find((p) => p.name === 'source')?.valueCanonical).toBe(`${SUPPLEMENT}|1`);
    expect(one(r.body, 'used-supplement')).toBe(`${SUPPLEMENT}|1`);
    const bad = await get(s.token, `system=${CS}&code=hand&useSupplement=http://example.org/nope`);
    expect(bad.status).toBe(422);
    expect(bad.body.issue[0].details.text).toBe('Required supplement not found: http://example.org/nope');
  });

  it('instance level: CodeSystem/{id}/$lookup, GET and POST; a system that is not its url is a 400', async () => {
    const r = await call(s.base, 'GET', `fhir/R4/CodeSystem/${csId}/$lookup?code=hand`, { token: s.token });
    expect(r.status).toBe(200);
    expect(one(r.body, 'display')).toBe('Hand');
    const p = await postLookup(
      s.token,
      [{ name: 'code', valueCode: 'arm' }],
      `fhir/R4/CodeSystem/${csId}/$lookup`,
    );
    expect(one(p.body, 'display')).toBe('Arm');
    const wrong = await call(s.base, 'GET', `fhir/R4/CodeSystem/${csId}/$lookup?code=hand&system=urn:x`, {
      token: s.token,
    });
    expect(wrong.status).toBe(400);
    const nope = await call(s.base, 'GET', 'fhir/R4/CodeSystem/not-an-id/$lookup?code=hand', {
      token: s.token,
    });
    expect(nope.status).toBe(404);
  });

  it('unknown code system and unknown code: 404 not-found naming them', async () => {
    const cs = await get(s.token, 'system=http://example.org/none&code=a');
    expect(cs.status).toBe(404);
    expect(cs.body.issue[0].code).toBe('not-found');
    expect(cs.body.issue[0].details.text).toContain('http://example.org/none');
    const code = await get(s.token, `system=${CS}&code=tail`);
    expect(code.status).toBe(404);
    expect(code.body.issue[0].details.text).toBe(`Unable to find code 'tail' in ${CS} version 2.0`);
    expect(code.body.issue[0].expression).toEqual(['code']);
  });

  it('the shared core definitions, for a member too', async () => {
    const r = await get(member.token, `system=${GENDER}&code=female`);
    expect(r.status).toBe(200);
    expect(one(r.body, 'display')).toBe('Female');
  });

  it("another project's code system is invisible (404), by url and by id; its own comes before the core", async () => {
    const byUrl = await get(other.token, `system=${CS}&code=arm`);
    expect(byUrl.status).toBe(404);
    expect(byUrl.text).not.toContain('Arm');
    const byId = await call(s.base, 'GET', `fhir/R4/CodeSystem/${csId}/$lookup?code=arm`, {
      token: other.token,
    });
    expect(byId.status).toBe(404);
    await post(other.token, 'CodeSystem', {
      resourceType: 'CodeSystem',
      url: GENDER,
      status: 'active',
      content: 'complete',
      concept: [{ code: 'female', display: 'Female of project B' }],
    });
    const own = await get(other.token, `system=${GENDER}&code=female`);
    expect(one(own.body, 'display')).toBe('Female of project B');
    const core = await get(s.token, `system=${GENDER}&code=female`);
    expect(one(core.body, 'display')).toBe('Female');
  });

  it('/metadata declares $lookup and $subsumes on CodeSystem, documented from their tables', async () => {
    const r = await call(s.base, 'GET', 'fhir/R4/metadata');
    const cs = r.body.rest[0].resource.find((x: { type: string }) => x.type === 'CodeSystem');
    const ops = Object.fromEntries(
      (cs.operation as Array<{ name: string; definition: string; documentation: string }>).map((o) => [
        o.name,
        o,
      ]),
    );
    expect(ops.lookup.definition).toBe('http://hl7.org/fhir/OperationDefinition/CodeSystem-lookup');
    expect(ops.lookup.documentation).toContain('useSupplement (repeatable)');
    expect(ops.subsumes.documentation).toContain('codingB');
  });

  it('GraphQL lookupCode takes the same parameters', async () => {
    const r = await call(s.base, 'POST', 'graphql', {
      token: s.token,
      headers: { 'content-type': 'application/json' },
      body: {
        query: 'query ($s: String, $c: String) { lookupCode(system: $s, code: $c, property: ["parent"]) }',
        variables: { s: CS, c: 'hand' },
      },
    });
    expect(r.status).toBe(200);
    expect(props(r.body.data.lookupCode)).toEqual(['parent=arm']);
  });

  it('a case-insensitive code system finds a code whatever its case, and answers with its own', async () => {
    await post(s.token, 'CodeSystem', {
      resourceType: 'CodeSystem',
      url: 'http://example.org/lookup/ci',
      status: 'active',
      content: 'complete',
      caseSensitive: false,
      concept: [{ code: 'MixedCase', display: 'Mixed' }],
    });
    const r = await get(s.token, 'system=http://example.org/lookup/ci&code=mixedcase');
    expect(one(r.body, 'code')).toBe('MixedCase');
  });
});

describe('CodeSystem/$lookup refuses hostile input with a 4xx naming it', () => {
  const cases: Array<[string, () => Promise<{ status: number; text: string }>, RegExp]> = [
    ['no token', () => call(s.base, 'GET', `fhir/R4/CodeSystem/$lookup?system=${CS}&code=a`), /(?:)/],
    ['no system', () => get(s.token, 'code=arm'), /system/],
    ['no code', () => get(s.token, `system=${CS}`), /code/],
    [
      'a 5,000-character system',
      () => get(s.token, `system=${'x'.repeat(5000)}&code=a`),
      /system.*limit of 4096/,
    ],
    ['a 5,000-character code', () => get(s.token, `system=${CS}&code=${'x'.repeat(5000)}`), /code.*limit/],
    ['control characters', () => get(s.token, `system=${CS}&code=a%07b`), /control characters/],
    [
      'property 101 times',
      () => get(s.token, `system=${CS}&code=arm&${'property=a&'.repeat(101)}`),
      /property is given more than 100 times/,
    ],
    [
      'an unknown parameter',
      () => get(s.token, `system=${CS}&code=arm&filter=x`),
      /Unknown or unsupported \$lookup parameter/,
    ],
    ['code twice', () => get(s.token, `system=${CS}&code=arm&code=leg`), /code given more than once/],
    ['a coding in the query string', () => get(s.token, `coding=${CS}`), /POST Parameters body/],
    [
      'a coding that is not one',
      () => postLookup(s.token, [{ name: 'coding', valueCoding: { code: { $ne: 1 } } }]),
      /coding\.code must be a string/,
    ],
    [
      'a coding with a foreign element',
      () => postLookup(s.token, [{ name: 'coding', valueCoding: { code: 'a', evil: 'x' } }]),
      /a Coding has no element .*evil/,
    ],
    [
      'a coding given as valueString',
      () => postLookup(s.token, [{ name: 'coding', valueString: 'a' }]),
      /valueCoding/,
    ],
    [
      'a body that is not Parameters',
      () =>
        call(s.base, 'POST', 'fhir/R4/CodeSystem/$lookup', {
          token: s.token,
          body: { resourceType: 'Patient' },
        }),
      /must be a Parameters resource/,
    ],
    [
      'a malformed displayLanguage',
      () => get(s.token, `system=${CS}&code=arm&displayLanguage=${encodeURIComponent('<script>')}`),
      /displayLanguage/,
    ],
    [
      'a system|version clash',
      () => get(s.token, `system=${encodeURIComponent(`${CS}|1`)}&version=2&code=arm`),
      /differ/,
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

  it('more than 100 tx-resources is a 400', async () => {
    const tx = Array.from({ length: 101 }, () => ({
      name: 'tx-resource',
      resource: { resourceType: 'CodeSystem', url: 'urn:t', status: 'active', content: 'complete' },
    }));
    const r = await postLookup(s.token, [
      { name: 'system', valueUri: 'urn:t' },
      { name: 'code', valueCode: 'a' },
      ...tx,
    ]);
    expect(r.status).toBe(400);
    expect(r.text).toMatch(/tx-resource/);
  });

  it('GraphQL: lookupCode is an expensive field (5 aliases in one document: 400, up front)', async () => {
    const fields = Array.from({ length: 5 }, (_, i) => `a${i}: lookupCode(system: "urn:x", code: "a")`);
    const r = await call(s.base, 'POST', 'graphql', {
      token: s.token,
      headers: { 'content-type': 'application/json' },
      body: { query: `{ ${fields.join(' ')} }` },
    });
    expect(r.status).toBe(400);
    expect(r.text).toMatch(/GRAPHQL_MAX_EXPENSIVE_FIELDS/);
  });

  it('GraphQL: the same checks (a 5,000-character code is refused)', async () => {
    const r = await call(s.base, 'POST', 'graphql', {
      token: s.token,
      headers: { 'content-type': 'application/json' },
      body: {
        query: 'query ($c: String) { lookupCode(system: "urn:x", code: $c) }',
        variables: { c: 'x'.repeat(5000) },
      },
    });
    expect(JSON.stringify(r.body.errors)).toMatch(/code is 5000 characters long/);
  });
});
