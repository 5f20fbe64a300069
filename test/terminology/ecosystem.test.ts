// $expand over HTTP with the HL7 terminology ecosystem IG's parameters, on stored resources: `property` (stored
// definitions are read from the database), `useSupplement` (a stored supplement), `designation`,
// `displayLanguage` lists and Accept-Language, `default-valueset-version`, `versionsMatch`, R5 filter operators as
// R4 sends them, and each one's errors as OperationOutcomes with the IG's tx-issue-type; GraphQL takes the same.
import { beforeAll, describe, expect, it } from 'vitest';
import { call, useTestServer } from '../helpers/server.js';

const CS = 'http://example.org/eco/CodeSystem/fruit';
const SUPP = 'http://example.org/eco/CodeSystem/fruit-de';
const VS = 'http://example.org/eco/ValueSet/fruit';
const PICK = 'http://example.org/eco/ValueSet/pick';
const PROP = 'http://hl7.org/fhir/5.0/StructureDefinition/extension-ValueSet.expansion.contains.property';
const TX_ISSUE = 'http://hl7.org/fhir/tools/CodeSystem/tx-issue-type';

const s = useTestServer({ signIn: true });
let token: string;

async function post(type: string, body: unknown): Promise<void> {
  const res = await call(s.base, 'POST', `fhir/R4/${type}`, { token, body });
  if (res.status !== 201) throw new Error(`create ${type}: ${res.status} ${res.text}`);
}
const get = (query: string, headers?: Record<string, string>) =>
  call(s.base, 'GET', `fhir/R4/ValueSet/$expand?${query}`, { token, headers });
const postExpand = (parameter: unknown[]) =>
  call(s.base, 'POST', 'fhir/R4/ValueSet/$expand', {
    token,
    body: { resourceType: 'Parameters', parameter },
  });
const q = (o: Record<string, string | string[]>) =>
  Object.entries(o)
    .flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).map((x) => `${k}=${encodeURIComponent(x)}`))
    .join('&');

interface Entry {
  code: string;
  display?: string;
  designation?: Array<{ language?: string; value: string }>;
  extension?: Array<{ url: string; extension?: Array<Record<string, unknown>> }>;
}
const entries = (body: { expansion: { contains?: Entry[] } }) =>
  Object.fromEntries((body.expansion.contains ?? []).map((c) => [c.code, c]));
/** An entry's properties, from their R4 cross-version extensions. */
const props = (e: Entry): Record<string, unknown> =>
  Object.fromEntries(
    (e.extension ?? [])
      .filter((x) => x.url === PROP)
      .map((x) => {
        const code = x.extension!.find((p) => p.url === 'code')!.valueCode;
        const v = x.extension!.find((p) => p.url === 'value')!;
        return [code, v[Object.keys(v).find((k) => k.startsWith('value'))!]];
      }),
  );

beforeAll(async () => {
  token = s.token;
  await post('CodeSystem', {
    resourceType: 'CodeSystem',
    url: CS,
    version: '1',
    status: 'active',
    content: 'complete',
    language: 'en',
    property: [{ code: 'colour', uri: 'http://example.org/props#colour', type: 'code' }],
    concept: [
      {
        code: 'apple',
        display: 'Apple',
        definition: 'A pome',
        property: [{ code: 'colour', valueCode: 'red' }],
        designation: [{ language: 'fr', value: 'Pomme' }],
      },
      {
        code: 'pear',
        display: 'Pear',
        definition: 'Another pome',
        designation: [{ language: 'fr', value: 'Poire' }],
      },
      {
        code: 'quince',
        display: 'Quince',
        extension: [
          { url: 'http://hl7.org/fhir/StructureDefinition/codesystem-conceptOrder', valueInteger: 3 },
          {
            url: 'http://hl7.org/fhir/StructureDefinition/rendering-style',
            valueString: 'font-style: italic',
          },
        ],
      },
    ],
  });
  await post('CodeSystem', {
    resourceType: 'CodeSystem',
    url: SUPP,
    version: '1.1',
    status: 'active',
    content: 'supplement',
    supplements: CS,
    property: [{ code: 'taste', uri: 'http://example.org/props#taste', type: 'string' }],
    concept: [
      {
        code: 'apple',
        designation: [{ language: 'de', value: 'Apfel' }],
        property: [{ code: 'taste', valueString: 'sweet' }],
      },
      {
        code: 'pear',
        designation: [{ language: 'de', value: 'Birne' }],
        extension: [{ url: 'http://hl7.org/fhir/StructureDefinition/codesystem-label', valueString: 'b)' }],
      },
    ],
  });
  await post('ValueSet', {
    resourceType: 'ValueSet',
    url: VS,
    version: '1',
    status: 'active',
    compose: { include: [{ system: CS }] },
  });
  for (const [version, code] of [
    ['1.0.0', 'apple'],
    ['2.0.0', 'pear'],
  ]) {
    await post('ValueSet', {
      resourceType: 'ValueSet',
      url: PICK,
      version,
      status: 'active',
      compose: { include: [{ system: CS, concept: [{ code }] }] },
    });
  }
});

describe('property', () => {
  it("returns stored definitions and the code system's properties as R4 property extensions", async () => {
    const res = await get(q({ url: VS, property: ['definition', 'colour'] }));
    expect(res.status, res.text).toBe(200);
    const e = entries(res.body);
    expect(props(e.apple)).toEqual({ definition: 'A pome', colour: 'red' });
    expect(props(e.pear)).toEqual({ definition: 'Another pome' });
    expect(props(e.quince)).toEqual({ order: 3 });
    // Declared in expansion.property (R4: its cross-version extension), not echoed as a parameter.
    const declared = res.body.expansion.extension.map(
      (x: { extension: Array<{ valueCode?: string }> }) => x.extension[0].valueCode,
    );
    expect(declared).toEqual(['definition', 'colour', 'order']);
    expect(res.body.expansion.parameter.map((p: { name: string }) => p.name)).not.toContain('property');
  });
});

describe('concept extensions of stored code systems', () => {
  it('are kept (reading the code system back returns them) and shown in every expansion', async () => {
    const found = await call(s.base, 'GET', `fhir/R4/CodeSystem?url=${encodeURIComponent(CS)}`, { token });
    const quince = found.body.entry[0].resource.concept.find((c: { code: string }) => c.code === 'quince');
    expect(quince.extension).toEqual([
      { url: 'http://hl7.org/fhir/StructureDefinition/codesystem-conceptOrder', valueInteger: 3 },
      { url: 'http://hl7.org/fhir/StructureDefinition/rendering-style', valueString: 'font-style: italic' },
    ]);
    const res = await get(q({ url: VS }));
    const e = entries(res.body);
    expect(props(e.quince)).toEqual({ order: 3 });
    expect(e.quince.extension).toContainEqual({
      url: 'http://hl7.org/fhir/StructureDefinition/rendering-style',
      valueString: 'font-style: italic',
    });
    expect(e.apple.extension).toBeUndefined();
    // A stored supplement's concept extensions too.
    const supp = await get(q({ url: VS, useSupplement: SUPP }));
    expect(props(entries(supp.body).pear)).toEqual({ label: 'b)' });
  });
});

describe('useSupplement', () => {
  it('applies a stored supplement: its designations choose displays, its properties come back', async () => {
    const res = await get(q({ url: VS, useSupplement: SUPP, displayLanguage: 'de', property: 'taste' }));
    expect(res.status, res.text).toBe(200);
    const e = entries(res.body);
    expect(e.apple.display).toBe('Apfel');
    expect(e.quince.display).toBe('Quince');
    expect(props(e.apple)).toEqual({ taste: 'sweet' });
    expect(res.body.expansion.parameter).toContainEqual({ name: 'used-supplement', valueUri: `${SUPP}|1.1` });
  });

  it('a supplement that is not there is 422 not-found with the IG issue type', async () => {
    const res = await postExpand([
      { name: 'url', valueUri: VS },
      { name: 'useSupplement', valueCanonical: `${SUPP}-missing` },
    ]);
    expect(res.status).toBe(422);
    expect(res.body.issue[0]).toEqual({
      severity: 'error',
      code: 'not-found',
      details: {
        coding: [{ system: TX_ISSUE, code: 'not-found' }],
        text: `Required supplement not found: ${SUPP}-missing`,
      },
    });
  });
});

describe('languages and designations', () => {
  it('displayLanguage lists and Accept-Language lists, echoed as displayLanguage', async () => {
    const fr = await get(q({ url: VS, displayLanguage: 'fr,*;q=0' }));
    expect(fr.status, fr.text).toBe(200);
    const e = entries(fr.body);
    expect([e.apple.display, e.pear.display, e.quince.display]).toEqual(['Pomme', 'Poire', undefined]);
    expect(fr.body.expansion.parameter).toContainEqual({ name: 'displayLanguage', valueCode: 'fr, *; q=0' });
    const header = await get(q({ url: VS }), { 'accept-language': 'fr, en;q=0.5' });
    expect(entries(header.body).quince.display).toBe('Quince');
    expect(entries(header.body).apple.display).toBe('Pomme');
    expect(header.body.expansion.parameter).toContainEqual({
      name: 'displayLanguage',
      valueCode: 'fr, en; q=0.5',
    });
  });

  it('designation filters the designations listed', async () => {
    const res = await get(q({ url: VS, includeDesignations: 'true', designation: 'urn:ietf:bcp:47|fr' }));
    expect(entries(res.body).apple.designation).toEqual([{ language: 'fr', value: 'Pomme' }]);
    expect(res.body.expansion.parameter).toContainEqual({
      name: 'designation',
      valueString: 'urn:ietf:bcp:47|fr',
    });
  });

  it('a malformed language list is 400, naming displayLanguage', async () => {
    const res = await get(q({ url: VS, displayLanguage: 'fr;q=7' }));
    expect(res.status).toBe(400);
    expect(res.body.issue[0].details.text).toContain('displayLanguage');
  });
});

describe('versions of imported value sets and code systems', () => {
  const outer = (extra: unknown[] = []) => [
    {
      name: 'valueSet',
      resource: { resourceType: 'ValueSet', status: 'active', compose: { include: [{ valueSet: [PICK] }] } },
    },
    ...extra,
  ];

  it('default-valueset-version picks the version of an import that names none; echoed', async () => {
    const latest = await postExpand(outer());
    expect(Object.keys(entries(latest.body))).toEqual(['pear']);
    const pinned = await postExpand(
      outer([{ name: 'default-valueset-version', valueCanonical: `${PICK}|1.0.0` }]),
    );
    expect(pinned.status, pinned.text).toBe(200);
    expect(Object.keys(entries(pinned.body))).toEqual(['apple']);
    expect(pinned.body.expansion.parameter).toContainEqual({
      name: 'default-valueset-version',
      valueUri: `${PICK}|1.0.0`,
    });
  });

  it('default-valueset-version: a version that is not there is 422, a value that is not url|version 400', async () => {
    const missing = await postExpand(
      outer([{ name: 'default-valueset-version', valueCanonical: `${PICK}|3.0.0` }]),
    );
    expect(missing.status).toBe(422);
    expect(missing.body.issue[0]).toMatchObject({
      code: 'not-found',
      details: { coding: [{ system: TX_ISSUE, code: 'not-found' }] },
    });
    expect(missing.body.issue[0].details.text).toContain(`'${PICK}' version '3.0.0'`);
    const malformed = await postExpand(outer([{ name: 'default-valueset-version', valueCanonical: PICK }]));
    expect(malformed.status).toBe(400);
    expect(malformed.body.issue[0].details.text).toContain('default-valueset-version');
  });

  it('versionsMatch is a boolean; anything else is 400', async () => {
    expect((await get(q({ url: VS, versionsMatch: 'true' }))).status).toBe(200);
    const bad = await get(q({ url: VS, versionsMatch: 'perhaps' }));
    expect(bad.status).toBe(400);
    expect(bad.body.issue[0].details.text).toBe(
      'Parameter versionsMatch must be true or false, got "perhaps"',
    );
  });
});

describe('R5 filter operators as an R4 client sends them', () => {
  it('child-of in the cross-version extension of op; the operator missing altogether is 400 vs-invalid', async () => {
    const filter = (f: Record<string, unknown>) => [
      {
        name: 'valueSet',
        resource: {
          resourceType: 'ValueSet',
          status: 'active',
          implicitRules: 'https://hl7.org/fhir/implicit-rules/omitted-mandatory-interversion-code',
          compose: { include: [{ system: CS, filter: [f] }] },
        },
      },
    ];
    const none = await postExpand(filter({ property: 'concept', value: 'apple' }));
    expect(none.status).toBe(400);
    expect(none.body.issue[0].details.coding).toEqual([{ system: TX_ISSUE, code: 'vs-invalid' }]);
    expect(none.body.issue[0].expression).toEqual(['ValueSet.compose.include[0].filter[0]']);
    const childOf = await postExpand(
      filter({
        property: 'concept',
        value: 'apple',
        _op: {
          extension: [
            {
              url: 'http://hl7.org/fhir/5.0/StructureDefinition/extension-ValueSet.compose.include.filter.op',
              valueCode: 'child-of',
            },
          ],
        },
      }),
    );
    expect(childOf.status, childOf.text).toBe(200);
    expect(childOf.body.expansion.total).toBe(0);
  });
});

describe('GraphQL', () => {
  it('expandValueSet takes the same parameters', async () => {
    const res = await call(s.base, 'POST', 'graphql', {
      token,
      headers: { 'content-type': 'application/json' },
      body: {
        query: `query($url: String, $p: [String!], $s: [String!]) {
          expandValueSet(url: $url, property: $p, useSupplement: $s, displayLanguage: "de") }`,
        variables: { url: VS, p: ['definition'], s: [SUPP] },
      },
    });
    expect(res.status, res.text).toBe(200);
    const e = entries(res.body.data.expandValueSet);
    expect(e.pear.display).toBe('Birne');
    expect(props(e.pear)).toEqual({ definition: 'Another pome', label: 'b)' });
  });
});
