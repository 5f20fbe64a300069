// $expand as the HL7 terminology ecosystem runner calls it: a `uuid` cache-buster, the code systems and value sets
// given as `tx-resource` (for that request only), the definition (compose) only with includeDefinition,
// contains.version only when several versions of a system contribute, the echoes the IG expects (no
// valueSetVersion, system-version only when it chose a version, offset only when asked, no publisher/description),
// Accept-Language, wildcard versions, check-system-version and error bodies with tx-issue-type codings.
import { beforeAll, describe, expect, it } from 'vitest';
import { call, useTestServer } from '../helpers/server.js';

const CS = 'http://example.org/tx/CodeSystem/colours';
const VS = 'http://example.org/tx/ValueSet/colours';

const colours = (version: string, codes: string[]) => ({
  resourceType: 'CodeSystem',
  url: CS,
  version,
  status: 'active',
  content: 'complete',
  concept: codes.map((c) => ({
    code: c,
    display: `${c} (${version})`,
    designation: [{ language: 'de', value: `${c} (de)` }],
  })),
});
const allColours = {
  resourceType: 'ValueSet',
  url: VS,
  version: '1.0.0',
  status: 'active',
  publisher: 'Example',
  description: 'All colours',
  compose: { include: [{ system: CS }] },
};

const s = useTestServer({ signIn: true });
let token: string;

function expand(parameter: unknown[], headers?: Record<string, string>) {
  return call(s.base, 'POST', 'fhir/R4/ValueSet/$expand', {
    token,
    headers,
    body: { resourceType: 'Parameters', parameter },
  });
}
const uuid = { name: 'uuid', valueUuid: 'urn:uuid:8acdbfdc-e9d2-11ed-a05b-0242ac120003' };
const tx = (resource: unknown) => ({ name: 'tx-resource', resource });

beforeAll(async () => {
  token = s.token;
});

describe('$expand with the parameters the HL7 test runner sends', () => {
  it('accepts uuid and expands a value set given as tx-resource over a code system given as tx-resource', async () => {
    const res = await expand([
      { name: 'url', valueUri: VS },
      tx(colours('2.0.0', ['red', 'green'])),
      tx(allColours),
      uuid,
    ]);
    expect(res.status, res.text).toBe(200);
    expect(res.body.url).toBe(VS);
    expect(res.body.expansion.total).toBe(2);
    // One version contributes: it is named once in used-codesystem, not on every code.
    expect(res.body.expansion.contains).toEqual([
      { system: CS, code: 'red', display: 'red (2.0.0)' },
      { system: CS, code: 'green', display: 'green (2.0.0)' },
    ]);
    expect(res.body.expansion.parameter).toEqual([{ name: 'used-codesystem', valueUri: `${CS}|2.0.0` }]);
    // The expansion identifies its value set; the definition and descriptive metadata are not repeated.
    expect(res.body.compose).toBeUndefined();
    expect(res.body.publisher).toBeUndefined();
    expect(res.body.description).toBeUndefined();
    expect(res.body.expansion.offset).toBeUndefined();
  });

  it('echoes what the IG expects: offset only when asked, system-version when it chose, not valueSetVersion', async () => {
    const res = await expand([
      { name: 'url', valueUri: VS },
      { name: 'valueSetVersion', valueString: '1.0.0' },
      { name: 'system-version', valueUri: `${CS}|1.0.0` },
      { name: 'count', valueInteger: 1 },
      tx(colours('1.0.0', ['red', 'green'])),
      tx(colours('2.0.0', ['blue'])),
      tx(allColours),
    ]);
    expect(res.status, res.text).toBe(200);
    expect(res.body.expansion.offset).toBeUndefined();
    expect(res.body.expansion.parameter).toEqual([
      { name: 'count', valueInteger: 1 },
      { name: 'system-version', valueUri: `${CS}|1.0.0` },
      { name: 'used-codesystem', valueUri: `${CS}|1.0.0` },
    ]);
    const paged = await expand([
      { name: 'url', valueUri: VS },
      { name: 'offset', valueInteger: 1 },
      tx(colours('1.0.0', ['red', 'green'])),
      tx(allColours),
    ]);
    expect(paged.body.expansion.offset).toBe(1);
    expect(paged.body.expansion.contains.map((c: { code: string }) => c.code)).toEqual(['green']);
  });

  it('wildcard versions, check-system-version, and error bodies with a tx-issue-type coding', async () => {
    const both = [tx(colours('1.0.0', ['red'])), tx(colours('1.2.0', ['red', 'green']))];
    const withVersion = (version: string) => ({
      name: 'valueSet',
      resource: { resourceType: 'ValueSet', compose: { include: [{ system: CS, version }] } },
    });
    const wild = await expand([withVersion('1.x.x'), ...both, uuid]);
    expect(wild.status, wild.text).toBe(200);
    expect(wild.body.expansion.parameter).toEqual([{ name: 'used-codesystem', valueUri: `${CS}|1.2.0` }]);

    const unknown = await expand([withVersion('1'), ...both]);
    expect(unknown.status).toBe(422);
    expect(unknown.body.issue).toEqual([
      {
        severity: 'error',
        code: 'not-found',
        details: {
          coding: [{ system: 'http://hl7.org/fhir/tools/CodeSystem/tx-issue-type', code: 'not-found' }],
          text:
            `A definition for CodeSystem '${CS}' version '1' could not be found, so the value set cannot be ` +
            'expanded. Valid versions: 1.0.0 or 1.2.0',
        },
      },
    ]);

    const check = { name: 'check-system-version', valueUri: `${CS}|1.0.x` };
    const checked = await expand([{ name: 'url', valueUri: VS }, tx(allColours), ...both, check]);
    expect(checked.status, checked.text).toBe(200);
    expect(checked.body.expansion.parameter).toEqual([
      { name: 'check-system-version', valueUri: `${CS}|1.0.x` },
      { name: 'used-codesystem', valueUri: `${CS}|1.0.0` },
    ]);
    const refused = await expand([withVersion('1.2.0'), ...both, check]);
    expect(refused.status).toBe(400);
    expect(refused.body.issue[0]).toMatchObject({
      code: 'exception',
      details: {
        coding: [{ system: 'http://hl7.org/fhir/tools/CodeSystem/tx-issue-type', code: 'version-error' }],
        text: `The version '1.2.0' is not allowed for system '${CS}': required to be '1.0.x' by a version-check parameter`,
      },
    });
  });

  it('Accept-Language acts as displayLanguage (the parameter wins; "*" alone is no preference)', async () => {
    const params = [{ name: 'url', valueUri: VS }, tx(colours('1.0.0', ['red'])), tx(allColours)];
    const de = await expand(params, { 'accept-language': 'fr;q=0.5, de' });
    expect(de.status, de.text).toBe(200);
    expect(de.body.expansion.contains[0].display).toBe('red (de)');
    // The whole list is the display language (echoed as the IG writes a list with qualities).
    expect(de.body.expansion.parameter).toContainEqual({
      name: 'displayLanguage',
      valueCode: 'fr; q=0.5, de',
    });
    const param = await expand([...params, { name: 'displayLanguage', valueCode: 'en' }], {
      'accept-language': 'de',
    });
    expect(param.body.expansion.contains[0].display).toBe('red (1.0.0)');
    const any = await expand(params, { 'accept-language': '*' });
    expect(any.body.expansion.contains[0].display).toBe('red (1.0.0)');
    expect(any.body.expansion.parameter).toEqual([{ name: 'used-codesystem', valueUri: `${CS}|1.0.0` }]);
  });

  it('returns the compose only with includeDefinition', async () => {
    const res = await expand([
      { name: 'url', valueUri: VS },
      { name: 'includeDefinition', valueBoolean: true },
      tx(colours('2.0.0', ['red'])),
      tx(allColours),
    ]);
    expect(res.status, res.text).toBe(200);
    expect(res.body.compose).toEqual(allColours.compose);
    expect(res.body.expansion.contains[0]).toEqual({ system: CS, code: 'red', display: 'red (2.0.0)' });
  });

  it('without a version the latest tx-resource version is used; contains.version appears when two contribute', async () => {
    const latest = await expand([
      { name: 'url', valueUri: VS },
      tx(colours('1.0.0', ['red'])),
      tx(colours('1.10.0', ['red', 'blue'])),
      tx(colours('1.2.0', ['red', 'green'])),
      tx(allColours),
    ]);
    expect(latest.status, latest.text).toBe(200);
    expect(latest.body.expansion.contains.map((c: { code: string }) => c.code)).toEqual(['red', 'blue']);

    const both = await expand([
      tx(colours('1.0.0', ['red', 'old'])),
      tx(colours('2.0.0', ['red', 'new'])),
      {
        name: 'valueSet',
        resource: {
          resourceType: 'ValueSet',
          compose: {
            include: [
              { system: CS, version: '1.0.0', concept: [{ code: 'old' }] },
              { system: CS, version: '2.0.0', concept: [{ code: 'new' }] },
            ],
          },
        },
      },
    ]);
    expect(both.status, both.text).toBe(200);
    // The includes of one code system in several versions come latest first.
    expect(both.body.expansion.contains).toMatchObject([
      { system: CS, version: '2.0.0', code: 'new', display: 'new (2.0.0)' },
      { system: CS, version: '1.0.0', code: 'old', display: 'old (1.0.0)' },
    ]);
  });

  it('a tx-resource is used for its request only: it wins over a stored one, and is gone afterwards', async () => {
    const stored = await call(s.base, 'POST', 'fhir/R4/CodeSystem', {
      token,
      body: colours('9.0.0', ['stored']),
    });
    expect(stored.status).toBe(201);
    const vs = await call(s.base, 'POST', 'fhir/R4/ValueSet', { token, body: allColours });
    expect(vs.status).toBe(201);
    const withTx = await expand([{ name: 'url', valueUri: VS }, tx(colours('9.0.0', ['given']))]);
    expect(withTx.status, withTx.text).toBe(200);
    expect(withTx.body.expansion.contains.map((c: { code: string }) => c.code)).toEqual(['given']);
    const after = await expand([{ name: 'url', valueUri: VS }]);
    expect(after.status, after.text).toBe(200);
    expect(after.body.expansion.contains.map((c: { code: string }) => c.code)).toEqual(['stored']);
  });

  it('a repeated tx-resource is answered from its cached index; changed content, same url and version, is not', async () => {
    const inline = (codes: string[], filter?: string) =>
      expand([
        { name: 'valueSet', resource: allColours },
        tx(colours('7.0.0', codes)),
        ...(filter ? [{ name: 'filter', valueString: filter }] : []),
      ]);
    const codesOf = (r: { body: { expansion: { contains?: Array<{ code: string }> } } }) =>
      (r.body.expansion.contains ?? []).map((c) => c.code);
    expect(codesOf(await inline(['red', 'green']))).toEqual(['red', 'green']);
    expect(codesOf(await inline(['red', 'green'], 'gr'))).toEqual(['green']);
    // The same url and version with other concepts: a new index, not the cached one.
    expect(codesOf(await inline(['red', 'grey']))).toEqual(['red', 'grey']);
    expect(codesOf(await inline(['red', 'grey'], 'gr'))).toEqual(['grey']);
    expect(codesOf(await inline(['red', 'green'], 'gr'))).toEqual(['green']);
  });

  it('warns (warning-*) about a draft, experimental or deprecated code system and a withdrawn value set', async () => {
    const withdrawn = {
      ...allColours,
      status: 'draft', // a draft value set itself gives no warning
      extension: [
        {
          url: 'http://hl7.org/fhir/StructureDefinition/structuredefinition-standards-status',
          valueCode: 'withdrawn',
        },
      ],
    };
    const res = await expand([
      { name: 'url', valueUri: VS },
      tx({ ...colours('1.0.0', ['red']), status: 'draft', experimental: true }),
      tx(withdrawn),
    ]);
    expect(res.status, res.text).toBe(200);
    expect(res.body.expansion.parameter).toEqual([
      { name: 'used-codesystem', valueUri: `${CS}|1.0.0` },
      { name: 'warning-draft', valueUri: `${CS}|1.0.0` },
      { name: 'warning-experimental', valueUri: `${CS}|1.0.0` },
      { name: 'warning-withdrawn', valueUri: `${VS}|1.0.0` },
    ]);
    const plain = await expand([
      { name: 'url', valueUri: VS },
      tx(colours('1.0.0', ['red'])),
      tx({ ...allColours, status: 'draft' }),
    ]);
    expect(plain.body.expansion.parameter).toEqual([{ name: 'used-codesystem', valueUri: `${CS}|1.0.0` }]);
  });

  it('a tx-resource that is not a resource, or too many of them, is a 400 naming tx-resource', async () => {
    const notResource = await expand([
      { name: 'url', valueUri: VS },
      { name: 'tx-resource', valueString: 'x' },
    ]);
    expect(notResource.status).toBe(400);
    expect(notResource.body.resourceType).toBe('OperationOutcome');
    expect(notResource.body.issue[0].details.text).toContain('tx-resource');
    const many = await expand([
      { name: 'url', valueUri: VS },
      ...Array.from({ length: 101 }, (_, i) => tx({ ...allColours, url: `${VS}-${i}` })),
    ]);
    expect(many.status).toBe(400);
    expect(many.body.issue[0].details.text).toContain('At most 100 tx-resource');
  });
});
