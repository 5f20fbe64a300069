// The conformance runner's comparison (a port of the official runner's CompareUtilities) and response scrubbing:
// each convention accepts what it should and rejects what it should.
import { describe, expect, it } from 'vitest';
import { compareJson, lenientBase64, matchesString, type Json } from '../../conformance/compare.js';
import fs from 'node:fs';
import path from 'node:path';
import {
  loadExpandTests,
  loadTests,
  OPERATIONS,
  suiteDir,
  TX_FHIR_ORG_TESTS,
} from '../../conformance/loader.js';
import { normalizeCapabilities, normalizeResponse } from '../../conformance/normalize.js';
import { EXT, fromR4, OMITTED_CODE_RULES, toR4 } from '../../conformance/r4.js';

const ok = (e: Json, a: Json, modes?: string[]) =>
  expect(compareJson(e, a, { modes: modes ? new Set(modes) : undefined })).toBeNull();
const bad = (e: Json, a: Json, msg: string | RegExp, modes?: string[]) =>
  expect(compareJson(e, a, { modes: modes ? new Set(modes) : undefined })).toMatch(msg);

describe('strict objects', () => {
  it('an unexpected property fails, a missing one fails, equal ones pass', () => {
    ok({ a: 1, b: 'x' }, { b: 'x', a: 1 });
    bad({ a: 1 }, { a: 1, compose: {} }, 'unexpected property compose');
    bad({ a: 1, total: 3 }, { a: 1 }, 'missing property total');
    bad({ a: 1 }, { a: 2 }, 'number property values differ at .a');
    bad({ a: true }, { a: false }, 'boolean property values differ at .a');
    bad({ a: 'x' }, { a: 1 }, 'property types differ at .a');
    bad({ a: { b: 1 } }, { a: [1] }, 'properties differ at .a');
  });
});

describe('$optional-properties$', () => {
  it('lists properties that may be absent; others stay required; present ones are still compared', () => {
    const e = { '$optional-properties$': ['id', 'compose'], id: '$id$', url: 'u', compose: { x: 1 } };
    ok(e, { url: 'u' });
    ok(e, { url: 'u', id: 'abc', compose: { x: 1 } });
    bad(e, { url: 'u', compose: { x: 2 } }, 'number property values differ at .compose.x');
    bad(e, { id: 'abc' }, 'missing property url');
  });
});

describe('$optional$ array items', () => {
  const e = {
    parameter: [
      { name: 'excludeNested', valueBoolean: true },
      { $optional$: true, name: 'displayLanguage', valueString: 'en' },
    ],
  };
  it('an optional item may be missing or present', () => {
    ok(e, { parameter: [{ name: 'excludeNested', valueBoolean: true }] });
    ok(e, { parameter: [e.parameter[0], { name: 'displayLanguage', valueString: 'en' }] });
  });
  it('a required item missing, an extra item, or a wrong optional item fail', () => {
    bad(e, { parameter: [{ name: 'displayLanguage', valueString: 'en' }] }, /did not match|differ/);
    bad(e, { parameter: [e.parameter[0], { name: 'offset', valueInteger: 0 }] }, /Unexpected Node|differ/);
    bad(e, { parameter: [e.parameter[0], e.parameter[1], { name: 'x' }] }, 'array item count differs');
  });
  it('a property whose array has only optional items may be absent', () => {
    ok({ a: 1, property: [{ $optional$: true, code: 'status' }] }, { a: 1 });
    bad({ a: 1, property: [{ code: 'status' }] }, { a: 1 }, 'missing property property');
  });
  it('a mode token makes an item optional only in that mode ("!mode": outside it)', () => {
    const m = { p: [{ a: 1 }, { $optional$: 'tx.fhir.org', a: 2 }] };
    ok(m, { p: [{ a: 1 }] }, ['tx.fhir.org']);
    bad(m, { p: [{ a: 1 }] }, 'array item count differs', ['general']);
    const n = { p: [{ a: 1 }, { $optional$: '!tx.fhir.org', a: 2 }] };
    ok(n, { p: [{ a: 1 }] }, ['general']);
    bad(n, { p: [{ a: 1 }] }, 'array item count differs', ['tx.fhir.org']);
  });
});

describe('$count-arrays$', () => {
  const e = {
    '$optional-properties$': ['total'],
    '$count-arrays$': ['contains'],
    contains: [{ code: 'a' }, {}],
  };
  it('compares only the number of items', () => {
    ok(e, { contains: [{ code: 'zz', display: 'anything' }, { code: 'b' }] });
    bad(e, { contains: [{ code: 'a' }] }, 'array item count differs at .contains');
    bad(e, { contains: [{ code: 'a' }, { code: 'b' }, { code: 'c' }] }, 'array item count differs');
  });
});

describe('string placeholders', () => {
  it('$instant$', () => {
    expect(matchesString('2026-11-23T15:12:53.123Z', '$instant$')).toBe(true);
    expect(matchesString('2026-11-23T15:12:53+01:00', '$instant$')).toBe(true);
    expect(matchesString('2026-11-23', '$instant$')).toBe(false);
    expect(matchesString('2026-11-23T15:12:53', '$instant$')).toBe(false);
  });
  it('$uuid$', () => {
    expect(matchesString('urn:uuid:8acdbfdc-e9d2-11ed-a05b-0242ac120003', '$uuid$')).toBe(true);
    expect(matchesString('8acdbfdc-e9d2-11ed-a05b-0242ac120003', '$uuid$')).toBe(false);
    expect(matchesString('urn:uuid:8ACDBFDC-E9D2-11ED-A05B-0242AC120003', '$uuid$')).toBe(false);
  });
  it('$id$', () => {
    expect(matchesString('3f2b7c1e-0000-4000-8000-000000000001', '$id$')).toBe(true);
    expect(matchesString('simple-all', '$id$')).toBe(true);
    expect(matchesString('has space', '$id$')).toBe(false);
    expect(matchesString('x'.repeat(65), '$id$')).toBe(false);
  });
  it('$semver$', () => {
    expect(matchesString('1.0.0', '$semver$')).toBe(true);
    expect(matchesString('1.2.3-beta.1+build.5', '$semver$')).toBe(true);
    expect(matchesString('1.0', '$semver$')).toBe(false);
    expect(matchesString('01.0.0', '$semver$')).toBe(false);
  });
  it('$url$', () => {
    expect(matchesString('http://hl7.org/fhir/test/ValueSet/simple-all', '$url$')).toBe(true);
    expect(matchesString('urn:oid:1.2.3', '$url$')).toBe(false);
    expect(matchesString('http://x.org/a b', '$url$')).toBe(false);
  });
  it('$token$', () => {
    expect(matchesString('not-found', '$token$')).toBe(true);
    expect(matchesString('-leading', '$token$')).toBe(false);
    expect(matchesString('a b', '$token$')).toBe(false);
  });
  it('$string$ (any string without surrounding blanks)', () => {
    expect(matchesString('Display 1', '$string$')).toBe(true);
    expect(matchesString(' padded', '$string$')).toBe(false);
  });
  it('$choice:a|b$', () => {
    expect(matchesString('not-found', '$choice:business-rule|not-found$')).toBe(true);
    expect(matchesString('invalid', '$choice:business-rule|not-found$')).toBe(false);
  });
  it('$fragments:$ and $external:$ (without an externals file: all fragments, case-insensitive)', () => {
    expect(matchesString('The code ABC is unknown in X', '$fragments:abc|unknown$')).toBe(true);
    expect(matchesString('The code ABC is fine', '$fragments:abc|unknown$')).toBe(false);
    expect(matchesString('Unknown code system http://x', '$external:m1:unknown|http://x$')).toBe(true);
    expect(matchesString('Something else', '$external:m1:unknown|http://x$')).toBe(false);
  });
  it('$version$ must equal the FHIR version variable; $$ matches anything; an unknown template throws', () => {
    expect(compareJson({ v: '$version$' }, { v: '4.0.1' }, { variables: { version: '4.0.1' } })).toBeNull();
    expect(compareJson({ v: '$version$' }, { v: '5.0.0' }, { variables: { version: '4.0.1' } })).toMatch(
      'string property values differ',
    );
    expect(matchesString('whatever', '$$')).toBe(true);
    expect(() => matchesString('x', '$nonsense$')).toThrow('Unhandled template');
  });
  it('$version$ inside a string stands for the version variable (one expected file for R4 and R5 servers)', () => {
    const e = { v: 'http://hl7.org/fhir/administrative-gender|$version$' };
    const r4 = { variables: { version: '4.0.1' } };
    expect(compareJson(e, { v: 'http://hl7.org/fhir/administrative-gender|4.0.1' }, r4)).toBeNull();
    expect(compareJson(e, { v: 'http://hl7.org/fhir/administrative-gender|5.0.0' }, r4)).toMatch(
      'string property values differ',
    );
    // The placeholder itself, sent back as it is, passes as it does under the official runner: its last fallback
    // compares the raw strings as lenient Base64 (identical text, identical bytes).
    expect(compareJson(e, { v: 'http://hl7.org/fhir/administrative-gender|$version$' }, r4)).toBeNull();
    // Without the variable any version matches, as a whole `$version$` does, but not none.
    expect(matchesString('http://hl7.org/fhir/administrative-gender|5.0.0', e.v)).toBe(true);
    expect(matchesString('http://hl7.org/fhir/administrative-gender|', e.v)).toBe(false);
  });
  it('a literal string is compared exactly', () => {
    bad({ display: 'Display 1' }, { display: 'display 1' }, 'string property values differ at .display');
  });
});

describe('normalizeResponse (the runner scrubs and sorts the actual response)', () => {
  it('drops text, meta and unmanaged extensions, and sorts parameters and contains', () => {
    const vs = normalizeResponse({
      resourceType: 'ValueSet',
      meta: { versionId: '1' },
      text: { status: 'generated', div: '<div/>' },
      extension: [
        { url: 'http://example.org/private', valueString: 'x' },
        { url: 'http://hl7.org/fhir/StructureDefinition/valueset-deprecated', valueBoolean: true },
      ],
      expansion: {
        parameter: [
          { name: 'used-codesystem', valueUri: 'b' },
          { name: 'excludeNested', valueBoolean: true },
          { name: 'used-codesystem', valueUri: 'a' },
        ],
        contains: [{ code: 'z', contains: [{ code: 'y' }, { code: 'x' }] }, { code: 'a' }],
      },
    }) as Record<string, unknown>;
    expect(vs).toEqual({
      resourceType: 'ValueSet',
      extension: [{ url: 'http://hl7.org/fhir/StructureDefinition/valueset-deprecated', valueBoolean: true }],
      expansion: {
        parameter: [
          { name: 'excludeNested', valueBoolean: true },
          { name: 'used-codesystem', valueUri: 'a' },
          { name: 'used-codesystem', valueUri: 'b' },
        ],
        contains: [{ code: 'a' }, { code: 'z', contains: [{ code: 'x' }, { code: 'y' }] }],
      },
    });
  });
  it('a Parameters answer ($lookup) is sorted as TxTesterSorters.sortParameters sorts it', () => {
    const part = (name: string, value: string) => ({ name, valueCode: value });
    const p = normalizeResponse({
      resourceType: 'Parameters',
      meta: { versionId: '1' },
      parameter: [
        { name: 'version', valueString: '1' },
        { name: 'property', part: [part('value', 'x'), part('code', 'parent')] },
        { name: 'property', part: [part('code', 'child'), part('value', 'B')] },
        { name: 'property', part: [part('code', 'child'), part('value', 'a')] },
        { name: 'designation', part: [part('value', 'second'), part('language', 'en')] },
        { name: 'designation', part: [part('value', 'first'), part('language', 'en')] },
        { name: 'designation', part: [part('value', 'none')] },
        { name: 'abstract', valueBoolean: false },
      ],
    });
    expect(p).toEqual({
      resourceType: 'Parameters',
      parameter: [
        { name: 'abstract', valueBoolean: false },
        // By language only: two of one language keep their order (the runner compares no part's value here).
        { name: 'designation', part: [part('value', 'none')] },
        { name: 'designation', part: [part('language', 'en'), part('value', 'second')] },
        { name: 'designation', part: [part('language', 'en'), part('value', 'first')] },
        // By code, then by value, lowercased.
        { name: 'property', part: [part('code', 'child'), part('value', 'a')] },
        { name: 'property', part: [part('code', 'child'), part('value', 'B')] },
        { name: 'property', part: [part('code', 'parent'), part('value', 'x')] },
        { name: 'version', valueString: '1' },
      ],
    });
  });
  it('an OperationOutcome loses issues with diagnostics but no details, and every diagnostics', () => {
    const oo = normalizeResponse({
      resourceType: 'OperationOutcome',
      issue: [
        { severity: 'error', code: 'invalid', diagnostics: 'stack' },
        { severity: 'error', code: 'not-found', details: { text: 'x' }, diagnostics: 'more' },
      ],
    });
    expect(oo).toEqual({
      resourceType: 'OperationOutcome',
      issue: [{ severity: 'error', code: 'not-found', details: { text: 'x' } }],
    });
  });

  it('a $validate-code answer: only its issues are scrubbed; issues and message parts sorted', () => {
    const ext = { url: 'http://example.org/own-extension', valueString: 'kept on the parameter' };
    const messageId = {
      url: 'http://hl7.org/fhir/StructureDefinition/operationoutcome-message-id',
      valueString: 'X',
    };
    const p = normalizeResponse(
      {
        resourceType: 'Parameters',
        meta: { versionId: '1' },
        parameter: [
          { name: 'result', valueBoolean: false, extension: [ext] },
          { name: 'diagnostics', valueString: 'trace' },
          { name: 'message', valueString: 'b second; a first' },
          {
            name: 'issues',
            resource: {
              resourceType: 'OperationOutcome',
              issue: [
                { severity: 'warning', code: 'invalid', details: { text: 'w' } },
                { severity: 'error', code: 'not-found', details: { text: 'n' }, expression: ['system'] },
                {
                  severity: 'error',
                  code: 'code-invalid',
                  details: { text: 'c' },
                  diagnostics: 'gone',
                  extension: [messageId, ext],
                },
                { severity: 'information', code: 'informational', diagnostics: 'no details: dropped' },
              ],
            },
          },
        ],
      },
      'validate-code',
    );
    expect(p).toEqual({
      resourceType: 'Parameters',
      parameter: [
        {
          name: 'issues',
          resource: {
            resourceType: 'OperationOutcome',
            issue: [
              { severity: 'error', code: 'code-invalid', details: { text: 'c' }, extension: [messageId] },
              { severity: 'error', code: 'not-found', details: { text: 'n' }, expression: ['system'] },
              { severity: 'warning', code: 'invalid', details: { text: 'w' } },
            ],
          },
        },
        { name: 'message', valueString: 'a first; b second' },
        { name: 'result', valueBoolean: false, extension: [ext] },
      ],
    });
  });
});

describe('R4 conversion (the runner talks to an R4 server through its R4 client)', () => {
  it('a request: R5 filter operators move to the cross-version extension (no implicitRules marker)', () => {
    const vs = toR4({
      resourceType: 'ValueSet',
      versionAlgorithmCoding: { code: 'semver' },
      compose: {
        include: [{ system: 's', filter: [{ property: 'concept', op: 'child-of', value: 'a' }] }],
        property: ['definition'],
      },
    });
    expect(vs).toEqual({
      resourceType: 'ValueSet',
      extension: [{ url: EXT.versionAlgorithm, valueCoding: { code: 'semver' } }],
      compose: {
        include: [
          {
            system: 's',
            filter: [
              {
                property: 'concept',
                value: 'a',
                _op: { extension: [{ url: EXT.filterOp, valueCode: 'child-of' }] },
              },
            ],
          },
        ],
        extension: [{ url: EXT.composeProperty, valueString: 'definition' }],
      },
    });
    // R4 operators are left alone, and nothing is marked.
    const plain = toR4({ resourceType: 'ValueSet', compose: { include: [{ filter: [{ op: 'is-a' }] }] } });
    expect(plain).toEqual({ resourceType: 'ValueSet', compose: { include: [{ filter: [{ op: 'is-a' }] }] } });
  });
  it('a response: property extensions become expansion.property and contains.property', () => {
    const vs = {
      resourceType: 'ValueSet',
      implicitRules: OMITTED_CODE_RULES,
      expansion: {
        extension: [
          {
            url: EXT.expansionProperty,
            extension: [
              { url: 'code', valueCode: 'status' },
              { url: 'uri', valueUri: 'http://hl7.org/fhir/concept-properties#status' },
            ],
          },
        ],
        contains: [
          {
            code: 'a',
            extension: [
              {
                url: EXT.containsProperty,
                extension: [
                  { url: 'code', valueCode: 'status' },
                  { url: 'value', valueCode: 'retired' },
                ],
              },
              { url: 'http://hl7.org/fhir/StructureDefinition/rendering-style', valueString: 'x' },
            ],
          },
        ],
      },
    };
    fromR4(vs);
    expect(vs).toEqual({
      resourceType: 'ValueSet',
      expansion: {
        property: [{ code: 'status', uri: 'http://hl7.org/fhir/concept-properties#status' }],
        contains: [
          {
            code: 'a',
            extension: [{ url: 'http://hl7.org/fhir/StructureDefinition/rendering-style', valueString: 'x' }],
            property: [{ code: 'status', valueCode: 'retired' }],
          },
        ],
      },
    });
  });
  it('a response carrying the R5 elements themselves loses them (the R4 parser drops unknown content)', () => {
    const vs = {
      resourceType: 'ValueSet',
      versionAlgorithmString: 'semver',
      expansion: { property: [{ code: 'x' }], contains: [{ code: 'a', property: [{ code: 'x' }] }] },
    };
    fromR4(vs);
    expect(vs).toEqual({ resourceType: 'ValueSet', expansion: { contains: [{ code: 'a' }] } });
  });
});

const haveSuite = fs.existsSync(path.join(suiteDir(), 'tests', 'test-cases.json'));
describe.skipIf(!haveSuite)('loader', () => {
  it('lists the 175 general-mode expand tests and the 3 tx.fhir.org-mode ones, the latter with that mode', () => {
    const tests = loadExpandTests();
    const extra = tests.filter((t) => t.modes.has('tx.fhir.org'));
    expect(extra.map((t) => t.name).sort()).toEqual([...TX_FHIR_ORG_TESTS].sort());
    expect(tests.length - extra.length).toBe(175);
    // Requests go out in R4: the child-of value set of simple-cases carries the operator as an extension.
    const childOf = tests.find((t) => t.name === 'simple-expand-child-of')!;
    const params = (childOf.body as { parameter: Array<{ resource?: { url?: string } }> }).parameter;
    const vs = params.find(
      (p) => p.resource?.url === 'http://hl7.org/fhir/test/ValueSet/simple-filter-child-of',
    );
    expect(JSON.stringify(vs)).toContain(EXT.filterOp);
  });
});

describe.skipIf(!haveSuite)('loader: lookup', () => {
  it('lists the 5 general-mode lookup tests, POSTed to CodeSystem/$lookup with the setup as tx-resource', () => {
    const tests = loadTests().filter((t) => t.operation === 'lookup');
    expect(tests.map((t) => t.name).sort()).toEqual([
      'parameters-lookup-supplement-bad',
      'parameters-lookup-supplement-good',
      'parameters-lookup-supplement-none',
      'simple-lookup-1',
      'simple-lookup-2',
    ]);
    expect(OPERATIONS.lookup).toBe('CodeSystem/$lookup');
    const body = tests[0].body as { parameter: Array<{ name: string }> };
    expect(body.parameter.some((p) => p.name === 'tx-resource')).toBe(true);
  });
});

describe('the lenient Base64 fallback (commons-codec Base64.decodeBase64, as CompareUtilities uses it)', () => {
  it('decodes valid Base64 as Node does, and both alphabets', () => {
    for (const text of ['', 'M', 'Ma', 'Man', 'Many hands make light work.', '\u00ff\u0000\u00fe binary']) {
      const b64 = Buffer.from(text, 'latin1').toString('base64');
      expect(lenientBase64(b64).equals(Buffer.from(b64, 'base64')), b64).toBe(true);
      expect(
        lenientBase64(b64.replace(/\+/g, '-').replace(/\//g, '_')).equals(Buffer.from(b64, 'base64')),
      ).toBe(true);
    }
  });

  it('skips characters outside the alphabet, stops at the first pad, drops a lone last digit', () => {
    expect(lenientBase64('TW Fu').toString('latin1')).toBe('Man');
    expect(lenientBase64('T#W.F u').toString('latin1')).toBe('Man');
    expect(lenientBase64('TWE=TWFu').toString('latin1')).toBe('Ma');
    expect(lenientBase64('TWFuT').toString('latin1')).toBe('Man');
  });

  it('makes two strings equal when they decode alike: "Display 2" and "Display #2", not "Display 3"', () => {
    ok({ display: 'Display #2' }, { display: 'Display 2' });
    bad({ display: 'Display #2' }, { display: 'Display 3' }, 'string property values differ at .display');
    // Nothing to decode is never equal.
    bad({ display: '#' }, { display: '!' }, 'string property values differ at .display');
  });
});

describe('pattern mode (metadata and term-caps)', () => {
  const pat = (e: Json, a: Json) => compareJson(e, a, { pattern: true });
  it('allows properties the template lacks, still requires the ones it names', () => {
    expect(pat({ a: 1 }, { a: 1, extra: true })).toBeNull();
    expect(pat({ a: 1, b: 2 }, { a: 1 })).toMatch('missing property b');
  });
  it('finds each expected array item, in order, among more actual items', () => {
    const exp = { op: [{ name: 'lookup' }, { name: 'validate-code' }] };
    expect(
      pat(exp, { op: [{ name: 'lookup' }, { name: 'subsumes' }, { name: 'validate-code' }] }),
    ).toBeNull();
    expect(pat(exp, { op: [{ name: 'validate-code' }, { name: 'lookup' }] })).toMatch(
      'The expected item at .op at index 1 was not found',
    );
    expect(pat(exp, { op: [{ name: 'lookup' }] })).toMatch(
      'The expected item at .op at index 1 was not found',
    );
  });
  it('a strict comparison keeps refusing extra items and properties', () => {
    expect(compareJson({ op: [{ name: 'a' }] }, { op: [{ name: 'a' }, { name: 'b' }] })).toMatch(
      'array item count differs',
    );
  });
  it('the lists are sorted as the runner sorts them before the comparison', () => {
    const cs = normalizeCapabilities({
      resourceType: 'CapabilityStatement',
      format: ['json', 'application/fhir+json'],
      rest: [
        {
          mode: 'server',
          resource: [
            { type: 'ValueSet', interaction: [{ code: 'search-type' }, { code: 'read' }] },
            { type: 'CodeSystem', operation: [{ name: 'validate-code' }, { name: 'lookup' }] },
          ],
        },
      ],
    }) as { format: string[]; rest: { resource: { type: string }[] }[] };
    expect(cs.format).toEqual(['application/fhir+json', 'json']);
    expect(cs.rest[0].resource.map((r) => r.type)).toEqual(['CodeSystem', 'ValueSet']);
    expect(cs.rest[0].resource[1]).toEqual({
      type: 'ValueSet',
      interaction: [{ code: 'read' }, { code: 'search-type' }],
    });
    const tc = normalizeCapabilities({
      resourceType: 'TerminologyCapabilities',
      expansion: { parameter: [{ name: 'offset' }, { name: 'count' }] },
    }) as { expansion: { parameter: { name: string }[] } };
    expect(tc.expansion.parameter.map((p) => p.name)).toEqual(['count', 'offset']);
  });
});
