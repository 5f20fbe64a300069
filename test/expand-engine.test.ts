// The in-memory $expand engine: FHIR R4 compose semantics, filter/rank/paging, errors, and speed on the
// 100,000-concept benchmark code system (generated at test time into the OS temp dir, never committed).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  CodeSystemIndex,
  CodeSystemIndexBuilder,
  ExpansionEngine,
  Membership,
  TerminologyError,
  flattenCodeSystemConcepts,
  indexCodeSystemResource,
  type CodeSystemResource,
  type ExpandLimits,
  type ExpandRequest,
  type Resolver,
  type ValueSetInclude,
  type ValueSetContains,
  type ValueSetResource,
  type ValueSetResourceWithExpansion,
} from '../src/terminology/engine/index.js';
import { GENERATOR } from './helpers/shared.js';

const FIXTURES = path.join(import.meta.dirname, 'fixtures', 'terminology');
const load = <T>(name: string): T => JSON.parse(fs.readFileSync(path.join(FIXTURES, name), 'utf8')) as T;

const HIER = 'http://example.org/fhir/CodeSystem/example-hierarchical';
const GENDER = 'http://hl7.org/fhir/administrative-gender';
const LOINC = 'http://loinc.org';
const VERSIONED = 'http://example.org/fhir/CodeSystem/versioned';

/** Code systems by url (the last registered version is the current one) and value sets by url. */
class TestResolver implements Resolver {
  readonly systems = new Map<string, CodeSystemIndex[]>();
  codeSystemVersions?: (url: string) => Promise<string[]>;
  readonly valueSets = new Map<string, ValueSetResource>();
  calls = 0;

  addCodeSystem(cs: CodeSystemResource | CodeSystemIndex): CodeSystemIndex {
    const idx = cs instanceof CodeSystemIndex ? cs : indexCodeSystemResource(cs);
    const list = (this.systems.get(idx.url) ?? []).filter((x) => x.version !== idx.version);
    list.push(idx);
    this.systems.set(idx.url, list);
    return idx;
  }

  addValueSet(vs: ValueSetResource): void {
    this.valueSets.set(vs.url!, vs);
  }

  async codeSystem(url: string, version?: string): Promise<CodeSystemIndex | undefined> {
    this.calls++;
    const list = this.systems.get(url) ?? [];
    return version === undefined ? list[list.length - 1] : list.find((x) => x.version === version);
  }

  async valueSet(url: string, version?: string): Promise<ValueSetResource | undefined> {
    const vs = this.valueSets.get(url);
    return vs && (version === undefined || vs.version === version) ? vs : undefined;
  }
}

function standardResolver(): TestResolver {
  const r = new TestResolver();
  r.addCodeSystem(load('CodeSystem-example-hierarchical.json'));
  r.addCodeSystem(load('CodeSystem-administrative-gender.json'));
  r.addCodeSystem(load('CodeSystem-loinc-fragment.json'));
  r.addCodeSystem(load('CodeSystem-versioned-1.0.0.json'));
  r.addCodeSystem(load('CodeSystem-versioned-2.0.0.json'));
  return r;
}

const LIMITS: ExpandLimits = { maxUnpaged: 1000 };
const DISPLAY_USE = {
  system: 'http://terminology.hl7.org/CodeSystem/hl7TermMaintInfra',
  code: 'preferredForLanguage',
  display: 'Preferred For Language',
};

const vsOf = (include: ValueSetInclude[], exclude?: ValueSetInclude[], extra?: object): ValueSetResource => ({
  resourceType: 'ValueSet',
  url: 'http://example.org/fhir/ValueSet/test',
  status: 'active',
  compose: { include, ...(exclude ? { exclude } : {}) },
  ...extra,
});

/** The codes of an expansion in order, depth first (a hierarchical expansion lists a parent before its children). */
const codes = (r: ValueSetResourceWithExpansion): string[] => flatCodes(r.expansion.contains);
function flatCodes(list: ValueSetContains[] | undefined): string[] {
  return (list ?? []).flatMap((c) => [c.code!, ...flatCodes(c.contains)]);
}
/** A concept property as R4 carries it in an expansion entry. */
const propertyExt = (code: string, value: Record<string, unknown>) => ({
  url: 'http://hl7.org/fhir/5.0/StructureDefinition/extension-ValueSet.expansion.contains.property',
  extension: [
    { url: 'code', valueCode: code },
    { url: 'value', ...value },
  ],
});
const statusProperty = (status: string) => propertyExt('status', { valueCode: status });

const param = (r: ValueSetResourceWithExpansion, name: string): unknown[] =>
  (r.expansion.parameter ?? [])
    .filter((p) => p.name === name)
    .map((p) => p.valueString ?? p.valueBoolean ?? p.valueInteger ?? p.valueCode ?? p.valueUri);

async function expectError(
  p: Promise<unknown>,
  status: number,
  issueCode: string,
  message: RegExp,
): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TerminologyError);
  const te = err as TerminologyError;
  expect({ status: te.status, issueCode: te.issueCode }).toEqual({ status, issueCode });
  expect(te.message).toMatch(message);
}

const ALL_HIER = [
  'disorder',
  'liver',
  'hepatitis',
  'hepatitis-a',
  'hepatitis-b',
  'cirrhosis',
  'hepatorenal',
  'heart',
  'hf',
  'hf-acute',
  'hf-chronic',
  'old-hf',
  'kidney',
  'meniere',
  'finding',
  'fever',
  'cough',
];

describe('flattenCodeSystemConcepts', () => {
  it('lists concepts in document order with parents from nesting and the parent property', () => {
    const rows = flattenCodeSystemConcepts(load<CodeSystemResource>('CodeSystem-example-hierarchical.json'));
    expect(rows.map((r) => r.code)).toEqual(ALL_HIER);
    const by = new Map(rows.map((r) => [r.code, r]));
    expect(by.get('disorder')).toMatchObject({ parents: [], notSelectable: true, inactive: false });
    expect(by.get('hepatorenal')!.parents).toEqual(['liver', 'kidney']);
    expect(by.get('old-hf')).toMatchObject({ parents: ['heart'], status: 'retired', inactive: true });
    expect(by.get('fever')).toMatchObject({ status: 'deprecated', inactive: false });
    expect(by.get('hepatitis')!.designations).toHaveLength(2);
  });

  it('indexes the hierarchy both ways', () => {
    const idx = indexCodeSystemResource(load('CodeSystem-example-hierarchical.json'));
    const kids = (code: string): string[] =>
      Array.from(idx.childrenOf(idx.ordinalOf(code)), (o) => idx.codes[o]);
    expect(kids('kidney')).toEqual(['hepatorenal']);
    expect(kids('heart')).toEqual(['hf', 'old-hf']);
    expect(idx.size).toBe(17);
    expect(idx.memoryEstimateBytes()).toBeGreaterThan(0);
  });
});

describe('expandValueSet: compose', () => {
  let r: TestResolver;
  let engine: ExpansionEngine;
  const expand = (vs: ValueSetResource, req: ExpandRequest = {}, limits = LIMITS) =>
    engine.expand(vs, req, r, limits);
  beforeAll(() => {
    r = standardResolver();
    engine = new ExpansionEngine();
  });

  it('a whole system: every concept in document order, with abstract and inactive; compose only when asked', async () => {
    const vs = vsOf([{ system: HIER }]);
    const res = await expand(vs, { excludeNested: true });
    expect(codes(res)).toEqual(ALL_HIER);
    expect(res.expansion.total).toBe(17);
    expect(res.expansion.offset).toBeUndefined();
    expect(res.expansion.identifier).toMatch(/^urn:uuid:[0-9a-f-]{36}$/);
    expect(new Date(res.expansion.timestamp).toISOString()).toBe(res.expansion.timestamp);
    // The definition comes back only with includeDefinition (the IG's expected expansions leave it out).
    expect(res.compose).toBeUndefined();
    expect((await expand(vs, { includeDefinition: true })).compose).toEqual(vs.compose);
    expect(res.url).toBe(vs.url);
    const c = res.expansion.contains!;
    expect(c[0]).toEqual({
      system: HIER,
      abstract: true,
      code: 'disorder',
      display: 'Disorder',
    });
    // An inactive concept says why in its status property (R4: the cross-version extension).
    expect(c[11]).toEqual({
      system: HIER,
      inactive: true,
      code: 'old-hf',
      display: 'Cardiac insufficiency (old term)',
      extension: [statusProperty('retired')],
    });
    expect(res.expansion.extension).toEqual([
      {
        url: 'http://hl7.org/fhir/5.0/StructureDefinition/extension-ValueSet.expansion.property',
        extension: [
          { url: 'code', valueCode: 'status' },
          { url: 'uri', valueUri: 'http://hl7.org/fhir/concept-properties#status' },
        ],
      },
    ]);
    // A deprecated concept (still active) says so in its status too.
    expect(c[15]).toEqual({
      system: HIER,
      code: 'fever',
      display: 'Fever',
      extension: [statusProperty('deprecated')],
    });
    // One version of the system is named: used-codesystem names it, contains carry no version.
    expect(c[16]).toEqual({ system: HIER, code: 'cough', display: 'Cough' });
    expect(param(res, 'used-codesystem')).toEqual([`${HIER}|1.0.0`]);
  });

  it('a concept list keeps its order, display overrides and designations', async () => {
    const vs = vsOf([
      {
        system: HIER,
        concept: [
          { code: 'hf', display: 'Cardiac failure' },
          { code: 'cough' },
          { code: 'hepatitis', designation: [{ language: 'es', value: 'Hepatitis viral' }] },
        ],
      },
    ]);
    const res = await expand(vs, { includeDesignations: true });
    expect(res.expansion.contains).toEqual([
      // The value set's display wins; the code system's is then one more designation.
      {
        system: HIER,
        code: 'hf',
        display: 'Cardiac failure',
        designation: [{ use: DISPLAY_USE, value: 'Heart failure' }],
      },
      { system: HIER, code: 'cough', display: 'Cough' },
      {
        system: HIER,
        code: 'hepatitis',
        display: 'Hepatitis',
        designation: [
          { language: 'fr', value: 'Hépatite' },
          { language: 'de-CH', value: 'Leberentzündung' },
          { language: 'es', value: 'Hepatitis viral' },
        ],
      },
    ]);
    // The filter sees the value set's display and designations as well as the code system's.
    expect(codes(await expand(vs, { filter: 'cardiac' }))).toEqual(['hf']);
    expect(codes(await expand(vs, { filter: 'heart' }))).toEqual(['hf']);
    expect(codes(await expand(vs, { filter: 'viral' }))).toEqual(['hepatitis']);
  });

  const filterCases: Array<[string, ValueSetInclude['filter'], string[]]> = [
    ['is-a', [{ property: 'concept', op: 'is-a', value: 'liver' }], ALL_HIER.slice(1, 7)],
    ['descendent-of', [{ property: 'concept', op: 'descendent-of', value: 'liver' }], ALL_HIER.slice(2, 7)],
    [
      'is-a (polyhierarchy via parent property)',
      [{ property: 'concept', op: 'is-a', value: 'kidney' }],
      ['hepatorenal', 'kidney'],
    ],
    ['is-not-a', [{ property: 'concept', op: 'is-not-a', value: 'disorder' }], ['finding', 'fever', 'cough']],
    [
      'generalizes',
      [{ property: 'concept', op: 'generalizes', value: 'hepatorenal' }],
      ['disorder', 'liver', 'hepatorenal', 'kidney'],
    ],
    ['is-a unknown code', [{ property: 'concept', op: 'is-a', value: 'nope' }], []],
    [
      '= on a code property',
      [{ property: 'severity', op: '=', value: 'severe' }],
      ['hepatitis-b', 'cirrhosis', 'hf'],
    ],
    ['= on an integer property', [{ property: 'rank', op: '=', value: '2' }], ['hepatitis']],
    ['= concept', [{ property: 'concept', op: '=', value: 'hf' }], ['hf']],
    ['= parent', [{ property: 'parent', op: '=', value: 'heart' }], ['hf', 'old-hf']],
    ['= child', [{ property: 'child', op: '=', value: 'hf-acute' }], ['hf']],
    ['= status', [{ property: 'status', op: '=', value: 'retired' }], ['old-hf']],
    ['= status deprecated', [{ property: 'status', op: '=', value: 'deprecated' }], ['fever']],
    ['= inactive', [{ property: 'inactive', op: '=', value: 'true' }], ['old-hf']],
    ['= notSelectable', [{ property: 'notSelectable', op: '=', value: 'true' }], ['disorder']],
    ['in', [{ property: 'severity', op: 'in', value: 'mild, moderate' }], ['hepatitis', 'hepatitis-a']],
    [
      'not-in',
      [{ property: 'severity', op: 'not-in', value: 'severe' }],
      ALL_HIER.filter((c) => !['hepatitis-b', 'cirrhosis', 'hf'].includes(c)),
    ],
    ['in on concept', [{ property: 'concept', op: 'in', value: 'cough,fever,zzz' }], ['fever', 'cough']],
    ['regex matches the whole code', [{ property: 'code', op: 'regex', value: 'hepatitis' }], ['hepatitis']],
    [
      'regex with a wildcard',
      [{ property: 'code', op: 'regex', value: 'hepatitis.*' }],
      ['hepatitis', 'hepatitis-a', 'hepatitis-b'],
    ],
    [
      'regex on display',
      [{ property: 'display', op: 'regex', value: '.* disease' }],
      ['liver', 'heart', 'kidney', 'meniere'],
    ],
    [
      'exists true',
      [{ property: 'severity', op: 'exists', value: 'true' }],
      ['hepatitis', 'hepatitis-a', 'hepatitis-b', 'cirrhosis', 'hf'],
    ],
    [
      'exists false',
      [{ property: 'severity', op: 'exists', value: 'false' }],
      ALL_HIER.filter((c) => !['hepatitis', 'hepatitis-a', 'hepatitis-b', 'cirrhosis', 'hf'].includes(c)),
    ],
    [
      'several filters are ANDed',
      [
        { property: 'concept', op: 'is-a', value: 'liver' },
        { property: 'severity', op: '=', value: 'severe' },
      ],
      ['hepatitis-b', 'cirrhosis'],
    ],
  ];
  it.each(filterCases)('filter %s', async (_name, filter, expected) => {
    // Flat: these check membership and order (hierarchical output has tests of its own).
    const res = await expand(vsOf([{ system: HIER, filter }]), { excludeNested: true });
    expect(codes(res)).toEqual(expected);
    expect(res.expansion.total).toBe(expected.length);
  });

  it('exclude subtracts (whole system minus is-a disorder)', async () => {
    const res = await expand(
      vsOf(
        [{ system: HIER }],
        [{ system: HIER, filter: [{ property: 'concept', op: 'is-a', value: 'disorder' }] }],
      ),
    );
    expect(codes(res)).toEqual(['finding', 'fever', 'cough']);
  });

  it('the spec example-intensional: LOINC parent = LP43571-6 minus 5932-9', async () => {
    const res = await expand(load('ValueSet-example-intensional.json'));
    expect(codes(res)).toEqual(['14647-2', '2093-3', '35200-5']);
    expect(param(res, 'used-codesystem')).toEqual(['http://loinc.org|2.73']);
    const ord = await expand(
      vsOf([{ system: LOINC, filter: [{ property: 'SCALE_TYP', op: '=', value: 'Ord' }] }]),
    );
    expect(codes(ord)).toEqual(['5932-9']);
  });

  it('listed codes a code system lacks are left out; a fragment says the expansion may be incomplete', async () => {
    const res = await expand(
      vsOf([{ system: LOINC, concept: [{ code: '2093-3' }, { code: '9999-9', display: 'Made up' }] }]),
    );
    expect(res.expansion.contains).toEqual([
      {
        system: LOINC,
        code: '2093-3',
        display: 'Cholesterol [Mass/volume] in Serum or Plasma',
      },
    ]);
    // The LOINC fixture is a fragment: used-fragment, and valueset-unclosed on the expansion.
    expect(param(res, 'used-fragment')).toEqual(param(res, 'used-codesystem'));
    expect(res.expansion.extension).toEqual([
      { url: 'http://hl7.org/fhir/StructureDefinition/valueset-unclosed', valueBoolean: true },
      {
        url: 'http://hl7.org/fhir/StructureDefinition/valueset-unclosed-reason',
        valueString: `This extension is based on a fragment of the code system ${LOINC}`,
      },
    ]);
    const complete = await expand(vsOf([{ system: HIER, concept: [{ code: 'nope' }, { code: 'cough' }] }]));
    expect(codes(complete)).toEqual(['cough']);
    expect(complete.expansion.extension).toBeUndefined();
  });

  it('duplicates (same system and code from two includes) appear once; the first wins', async () => {
    const res = await expand(
      vsOf([
        { system: HIER, concept: [{ code: 'hf', display: 'Cardiac failure' }] },
        { system: HIER, filter: [{ property: 'concept', op: 'is-a', value: 'heart' }] },
        { system: HIER, concept: [{ code: 'heart' }] },
      ]),
      { excludeNested: true },
    );
    expect(codes(res)).toEqual(['hf', 'heart', 'hf-acute', 'hf-chronic', 'old-hf']);
    expect(res.expansion.contains![0].display).toBe('Cardiac failure');
    expect(res.expansion.total).toBe(5);
  });

  describe('imported value sets', () => {
    const LIVER = 'http://example.org/fhir/ValueSet/liver';
    const SEVERE = 'http://example.org/fhir/ValueSet/severe';
    beforeAll(() => {
      r.addValueSet({
        ...vsOf([{ system: HIER, filter: [{ property: 'concept', op: 'is-a', value: 'liver' }] }]),
        url: LIVER,
        version: '1',
      });
      r.addValueSet({
        ...vsOf([{ system: HIER, filter: [{ property: 'severity', op: '=', value: 'severe' }] }]),
        url: SEVERE,
      });
    });

    it('valueSet imports in one include intersect', async () => {
      const res = await expand(vsOf([{ valueSet: [LIVER, SEVERE] }]));
      expect(codes(res)).toEqual(['hepatitis-b', 'cirrhosis']);
      expect(param(res, 'used-valueset')).toEqual([`${LIVER}|1`, SEVERE]);
    });

    it('the system part of an include intersects with its imports; includes are ORed', async () => {
      const res = await expand(
        vsOf([
          {
            system: HIER,
            filter: [{ property: 'concept', op: 'is-a', value: 'disorder' }],
            valueSet: [SEVERE],
          },
          { valueSet: [`${LIVER}|1`] },
        ]),
      );
      expect(codes(res)).toEqual([
        'hepatitis-b',
        'cirrhosis',
        'hf',
        'liver',
        'hepatitis',
        'hepatitis-a',
        'hepatorenal',
      ]);
    });

    it('a cyclic import is an error naming the cycle', async () => {
      const A = 'http://example.org/fhir/ValueSet/cycle-a';
      const B = 'http://example.org/fhir/ValueSet/cycle-b';
      r.addValueSet({ ...vsOf([{ valueSet: [B] }]), url: A });
      r.addValueSet({ ...vsOf([{ system: HIER }, { valueSet: [A] }]), url: B });
      await expectError(expand(r.valueSets.get(A)!), 400, 'processing', /cycle-a -> .*cycle-b -> .*cycle-a/);
      await expectError(expand(vsOf([{ valueSet: [A] }])), 400, 'processing', /Cyclic value set import/);
      const SELF = 'http://example.org/fhir/ValueSet/self';
      r.addValueSet({ ...vsOf([{ valueSet: [SELF] }]), url: SELF });
      await expectError(expand(r.valueSets.get(SELF)!), 400, 'processing', /self -> .*self/);
    });

    it('an unknown imported value set is an error', async () => {
      await expectError(
        expand(vsOf([{ valueSet: ['http://example.org/fhir/ValueSet/missing'] }])),
        422,
        'not-found',
        /Unable to find included value set 'http:\/\/example.org\/fhir\/ValueSet\/missing' .*include\[0\]/,
      );
    });
  });

  describe('code system versions', () => {
    it('an include without version uses the current version', async () => {
      const res = await expand(vsOf([{ system: VERSIONED }]));
      expect(codes(res)).toEqual(['a', 'b', 'c']);
      expect(res.expansion.contains![0]).toMatchObject({ display: 'Alpha (revised)' });
      expect(res.expansion.contains![0].version).toBeUndefined();
      expect(param(res, 'used-codesystem')).toEqual([`${VERSIONED}|2.0.0`]);
    });

    it('include.version selects the version', async () => {
      const res = await expand(vsOf([{ system: VERSIONED, version: '1.0.0' }]));
      expect(codes(res)).toEqual(['a', 'b']);
      expect(res.expansion.contains![0]).toEqual({ system: VERSIONED, code: 'a', display: 'Alpha' });
      expect(param(res, 'used-codesystem')).toEqual([`${VERSIONED}|1.0.0`]);
    });

    it('system-version fills in missing versions; force-system-version overrides', async () => {
      const vs = vsOf([{ system: VERSIONED }]);
      const sv = await expand(vs, { systemVersion: [`${VERSIONED}|1.0.0`] });
      expect(codes(sv)).toEqual(['a', 'b']);
      // Echoed because it chose the version (the IG's expected expansions show it so).
      expect(param(sv, 'system-version')).toEqual([`${VERSIONED}|1.0.0`]);
      expect(param(sv, 'used-codesystem')).toEqual([`${VERSIONED}|1.0.0`]);
      const pinned = vsOf([{ system: VERSIONED, version: '2.0.0' }]);
      expect(codes(await expand(pinned, { systemVersion: [`${VERSIONED}|1.0.0`] }))).toEqual(['a', 'b', 'c']);
      expect(codes(await expand(pinned, { forceSystemVersion: [`${VERSIONED}|1.0.0`] }))).toEqual(['a', 'b']);
    });

    it('a code in two versions is two entries, each with its version; versionsMatch merges them', async () => {
      const vs = vsOf([
        { system: VERSIONED, version: '1.0.0', concept: [{ code: 'a' }] },
        { system: VERSIONED, version: '2.0.0' },
      ]);
      const res = await expand(vs);
      // The latest version's include comes first; every entry names its version (two are named).
      expect(res.expansion.contains!.map((c) => `${c.code}@${c.version}`)).toEqual([
        'a@2.0.0',
        'b@2.0.0',
        'c@2.0.0',
        'a@1.0.0',
      ]);
      expect(param(res, 'used-codesystem')).toEqual([`${VERSIONED}|2.0.0`, `${VERSIONED}|1.0.0`]);
      const merged = await expand(vs, { versionsMatch: true });
      expect(merged.expansion.contains!.map((c) => `${c.code}@${c.version}`)).toEqual([
        'a@2.0.0',
        'b@2.0.0',
        'c@2.0.0',
      ]);
      expect(param(merged, 'versionsMatch')).toEqual([true]);
    });

    it('excluding one version from another removes the codes of every version (versionsMatch is implied)', async () => {
      const vs = vsOf([{ system: VERSIONED, version: '2.0.0' }], [{ system: VERSIONED, version: '1.0.0' }]);
      const res = await expand(vs);
      expect(codes(res)).toEqual(['c']);
      expect(param(res, 'versionsMatch')).toEqual([true]);
      // Asked not to match versions, the exclusion is of version 1.0.0 only.
      const scoped = await expand(vs, { versionsMatch: false });
      expect(codes(scoped)).toEqual(['a', 'b', 'c']);
      expect(param(scoped, 'versionsMatch')).toEqual([]);
      expect(param(scoped, 'used-codesystem').sort()).toEqual([`${VERSIONED}|1.0.0`, `${VERSIONED}|2.0.0`]);
    });

    it('an unknown version is an unknown code system', async () => {
      await expectError(
        expand(vsOf([{ system: VERSIONED, version: '9.9' }])),
        422,
        'not-found',
        /A definition for CodeSystem 'http:\/\/example.org\/fhir\/CodeSystem\/versioned' version '9.9' could not be found/,
      );
    });

    it('a wildcard version (1.x, 2.0.x, *) takes the highest matching version', async () => {
      // The test resolver knows no version list: give it one, as the service does.
      const rr = standardResolver();
      rr.codeSystemVersions = async (url: string) => (url === VERSIONED ? ['1.0.0', '2.0.0'] : []);
      const e = new ExpansionEngine();
      const used = async (include: ValueSetInclude, req: ExpandRequest = {}) =>
        param(await e.expand(vsOf([include]), req, rr, LIMITS), 'used-codesystem');
      expect(await used({ system: VERSIONED, version: '1.x' })).toEqual([`${VERSIONED}|1.0.0`]);
      expect(await used({ system: VERSIONED, version: '2.0.x' })).toEqual([`${VERSIONED}|2.0.0`]);
      expect(await used({ system: VERSIONED, version: '*' })).toEqual([`${VERSIONED}|2.0.0`]);
      await expectError(
        e.expand(vsOf([{ system: VERSIONED, version: '3.x' }]), {}, rr, LIMITS),
        422,
        'not-found',
        /version '3.x' could not be found, so the value set cannot be expanded. Valid versions: 1.0.0 or 2.0.0/,
      );
      // force-system-version and system-version take patterns too, and are echoed when they chose the version.
      const forced = await e.expand(
        vsOf([{ system: VERSIONED, version: '2.0.0' }]),
        { forceSystemVersion: [`${VERSIONED}|1.x`] },
        rr,
        LIMITS,
      );
      expect(param(forced, 'used-codesystem')).toEqual([`${VERSIONED}|1.0.0`]);
      expect(param(forced, 'force-system-version')).toEqual([`${VERSIONED}|1.x`]);
      const pinned = await e.expand(
        vsOf([{ system: VERSIONED, version: '2.0.0' }]),
        { systemVersion: [`${VERSIONED}|1.0.0`] },
        rr,
        LIMITS,
      );
      // system-version only fills in a missing version: not used here, so not echoed.
      expect(param(pinned, 'used-codesystem')).toEqual([`${VERSIONED}|2.0.0`]);
      expect(param(pinned, 'system-version')).toEqual([]);
    });

    it('check-system-version: the default for an include without version, an error for another version', async () => {
      const rr = standardResolver();
      rr.codeSystemVersions = async (url: string) => (url === VERSIONED ? ['1.0.0', '2.0.0'] : []);
      const e = new ExpansionEngine();
      const res = await e.expand(
        vsOf([{ system: VERSIONED }]),
        { checkSystemVersion: [`${VERSIONED}|1.x`] },
        rr,
        LIMITS,
      );
      expect(param(res, 'used-codesystem')).toEqual([`${VERSIONED}|1.0.0`]);
      expect(param(res, 'check-system-version')).toEqual([`${VERSIONED}|1.x`]);
      const ok = await e.expand(
        vsOf([{ system: VERSIONED, version: '1.0.0' }]),
        { checkSystemVersion: [`${VERSIONED}|1.x`] },
        rr,
        LIMITS,
      );
      expect(param(ok, 'check-system-version')).toEqual([]);
      await expectError(
        e.expand(
          vsOf([{ system: VERSIONED, version: '2.0.0' }]),
          { checkSystemVersion: [`${VERSIONED}|1.x`] },
          rr,
          LIMITS,
        ),
        400,
        'exception',
        /The version '2.0.0' is not allowed for system '.*versioned': required to be '1.x' by a version-check parameter/,
      );
    });
  });

  describe('pre-expanded value sets (spec example-expansion)', () => {
    let vs: ValueSetResource;
    beforeAll(() => {
      vs = load('ValueSet-example-expansion.json');
    });

    it('flattens the nested contains in document order, skipping codeless groupers', async () => {
      const res = await expand(vs);
      expect(codes(res)).toEqual([
        '14647-2',
        '2093-3',
        '48620-9',
        '9342-7',
        '2096-6',
        '35200-5',
        '48089-7',
        '55838-7',
      ]);
      expect(res.expansion.total).toBe(8);
      expect(res.expansion.contains![5]).toMatchObject({ code: '35200-5', inactive: true });
      expect(res.expansion.identifier).not.toBe(vs.expansion!.identifier);
      expect(param(res, 'used-codesystem')).toEqual(['http://loinc.org|2.50']);
    });

    it('filter, activeOnly and paging apply to the flattened list', async () => {
      expect(codes(await expand(vs, { filter: 'ratio' }))).toEqual([
        '2096-6',
        '35200-5',
        '48089-7',
        '55838-7',
      ]);
      expect(codes(await expand(vs, { filter: 'ratio', activeOnly: true }))).toEqual([
        '2096-6',
        '48089-7',
        '55838-7',
      ]);
      const page = await expand(vs, { offset: 3, count: 3 });
      expect(codes(page)).toEqual(['9342-7', '2096-6', '35200-5']);
      expect(page.expansion).toMatchObject({ total: 8, offset: 3 });
      expect(codes(await expand(vs, { filter: 'percent' }))).toEqual(['9342-7']);
    });
  });

  describe('errors', () => {
    it('unknown code system: 422 not-found with the tx-issue-type not-found', async () => {
      const err = await expand(vsOf([{ system: 'http://example.org/unknown' }])).catch((e: unknown) => e);
      expect((err as TerminologyError).txIssueType).toBe('not-found');
      await expectError(
        expand(vsOf([{ system: 'http://example.org/unknown' }])),
        422,
        'not-found',
        /A definition for CodeSystem 'http:\/\/example.org\/unknown' could not be found/,
      );
    });

    it('bad filters: 400 invalid naming the include and filter', async () => {
      const bad = (filter: ValueSetInclude['filter']) =>
        expand(vsOf([{ system: GENDER }, { system: HIER, filter }]));
      // The IG's message and issue type for a filter without a value; the path is the issue's expression.
      const noValue = await bad([
        { property: 'concept', op: 'is-a', value: 'heart' },
        { property: 'severity', op: '=' },
      ]).catch((e: unknown) => e as TerminologyError);
      expect(noValue).toMatchObject({
        status: 400,
        issueCode: 'invalid',
        txIssueType: 'vs-invalid',
        message: `The system ${HIER} filter with property = severity, op = = has no value`,
        expression: ['ValueSet.compose.include[1].filter[1]'],
      });
      await expectError(
        bad([{ property: 'concept', op: 'sounds-like', value: 'x' }]),
        400,
        'invalid',
        /include\[1\]\.filter\[0\].*unknown op 'sounds-like'/,
      );
      await expectError(
        bad([{ property: 'code', op: 'regex', value: '([a-' }]),
        400,
        'invalid',
        /include\[1\]\.filter\[0\].*invalid regular expression/,
      );
      await expectError(
        bad([{ property: 'colour', op: '=', value: 'red' }]),
        400,
        'invalid',
        /property 'colour' is not defined/,
      );
      await expectError(
        bad([{ property: 'severity', op: 'exists', value: 'maybe' }]),
        400,
        'invalid',
        /'exists' takes value 'true' or 'false'/,
      );
      await expectError(
        bad([{ property: 'severity', op: 'is-a', value: 'severe' }]),
        400,
        'invalid',
        /applies to property 'concept'/,
      );
    });

    it('too many entries without count: 422 too-costly (counted after the filter)', async () => {
      const vs = vsOf([{ system: HIER }]);
      await expectError(
        expand(vs, {}, { maxUnpaged: 10 }),
        422,
        'too-costly',
        /The value set 'http:\/\/example.org\/fhir\/ValueSet\/test' expansion has too many codes to produce \(>10\).*count and offset.*17 entries/,
      );
      expect((await expand(vs, { filter: 'hepat' }, { maxUnpaged: 10 })).expansion.total).toBe(4);
      expect(codes(await expand(vs, { count: 2 }, { maxUnpaged: 10 }))).toEqual(['disorder', 'liver']);
      expect((await expand(vs, { activeOnly: true }, { maxUnpaged: 16 })).expansion.total).toBe(16);
    });

    it('bad parameters: 400 invalid', async () => {
      const vs = vsOf([{ system: GENDER }]);
      await expectError(expand(vs, { offset: -1 }), 400, 'invalid', /offset must be a non-negative integer/);
      await expectError(expand(vs, { count: 1.5 }), 400, 'invalid', /count must be a non-negative integer/);
      await expectError(expand(vs, { systemVersion: ['nobar'] }), 400, 'invalid', /system-version/);
      await expectError(
        expand(vsOf([{}])),
        400,
        'invalid',
        /include\[0\] has neither a system nor a valueSet/,
      );
      await expectError(
        expand({ ...vs, version: '1' }, { valueSetVersion: '2' }),
        404,
        'not-found',
        /version 2 not found/,
      );
    });

    it('unknown listed code in a complete code system is left out; not-present content: 422', async () => {
      expect(
        codes(await expand(vsOf([{ system: GENDER, concept: [{ code: 'male' }, { code: 'M' }] }]))),
      ).toEqual(['male']);
      // Excluding a code the system lacks is harmless.
      expect(
        codes(await expand(vsOf([{ system: GENDER }], [{ system: GENDER, concept: [{ code: 'M' }] }]))),
      ).toEqual(['male', 'female', 'other', 'unknown']);
      const np = new TestResolver();
      np.addCodeSystem(
        CodeSystemIndexBuilder.build({ url: 'http://snomed.info/sct', content: 'not-present' }, []),
      );
      await expectError(
        engine.expand(vsOf([{ system: 'http://snomed.info/sct' }]), {}, np, LIMITS),
        422,
        'not-supported',
        /not-present/,
      );
    });

    it('errors carry an OperationOutcome', () => {
      const e = new TerminologyError(400, 'invalid', 'bad', ['ValueSet.compose.include[0]']);
      expect(e.toOperationOutcome()).toEqual({
        resourceType: 'OperationOutcome',
        issue: [
          {
            severity: 'error',
            code: 'invalid',
            diagnostics: 'bad',
            expression: ['ValueSet.compose.include[0]'],
          },
        ],
      });
    });
  });
});

describe('expandValueSet: parameters', () => {
  let r: TestResolver;
  let engine: ExpansionEngine;
  const all = vsOf([{ system: HIER }]);
  const expand = (req: ExpandRequest, vs = all) => engine.expand(vs, req, r, LIMITS);
  beforeAll(() => {
    r = standardResolver();
    engine = new ExpansionEngine();
  });

  it('filter: every word must start a word of the display or a designation', async () => {
    expect(codes(await expand({ filter: 'hepat' }))).toEqual([
      'hepatitis',
      'hepatitis-a',
      'hepatitis-b',
      'hepatorenal',
    ]);
    expect(codes(await expand({ filter: 'disease heart' }))).toEqual(['heart']);
    expect(codes(await expand({ filter: 'liver dis' }))).toEqual(['liver']);
    expect(codes(await expand({ filter: 'foie' }))).toEqual(['liver']);
    expect(codes(await expand({ filter: 'eart' }))).toEqual([]);
    expect(codes(await expand({ filter: 'xylophone' }))).toEqual([]);
    expect(codes(await expand({ filter: '(old' }))).toEqual(['old-hf']);
  });

  it('filter is case- and accent-insensitive', async () => {
    expect(codes(await expand({ filter: 'HÉPATITE' }))).toEqual(['hepatitis', 'hepatitis-a']);
    expect(codes(await expand({ filter: 'hépat' }))).toEqual([
      'hepatitis',
      'hepatitis-a',
      'hepatitis-b',
      'hepatorenal',
    ]);
    expect(codes(await expand({ filter: 'meniere' }))).toEqual(['meniere']);
    expect(codes(await expand({ filter: 'MÉN' }))).toEqual(['meniere']);
    expect(codes(await expand({ filter: 'leberentzundung' }))).toEqual(['hepatitis']);
  });

  it('ranking: exact code, then displays starting with the filter, then the rest (each in natural order)', async () => {
    const res = await expand({ filter: 'heart' });
    expect(codes(res)).toEqual(['heart', 'hf', 'hf-acute', 'hf-chronic']);
    expect(codes(await expand({ filter: 'heart failure' }))).toEqual(['hf', 'hf-acute', 'hf-chronic']);
    expect(codes(await expand({ filter: 'failure' }))).toEqual(['hf', 'hf-acute', 'hf-chronic']);
    // Ranking reorders a value set's own order; ties keep it.
    const listed = vsOf([
      { system: HIER, concept: [{ code: 'hf-acute' }, { code: 'hf-chronic' }, { code: 'hf' }] },
    ]);
    expect(codes(await expand({ filter: 'heart' }, listed))).toEqual(['hf', 'hf-acute', 'hf-chronic']);
    const overridden = vsOf([
      {
        system: HIER,
        concept: [{ code: 'hf-chronic' }, { code: 'cough', display: 'Heart cough' }, { code: 'hf' }],
      },
    ]);
    expect(codes(await expand({ filter: 'heart' }, overridden))).toEqual(['cough', 'hf', 'hf-chronic']);
    expect(codes(await expand({ filter: 'hf-acute' }))).toEqual(['hf-acute']);
  });

  it('an exact code matches case-insensitively only when the system is not case-sensitive', async () => {
    expect(codes(await expand({ filter: 'HF' }))).toEqual(['hf']);
    const sens = new TestResolver();
    sens.addCodeSystem(
      CodeSystemIndexBuilder.build({ url: 'urn:cs', caseSensitive: true }, [{ code: 'Ab', display: 'X' }]),
    );
    const insens = new TestResolver();
    insens.addCodeSystem(CodeSystemIndexBuilder.build({ url: 'urn:cs' }, [{ code: 'Ab', display: 'X' }]));
    const vs = vsOf([{ system: 'urn:cs' }]);
    expect((await engine.expand(vs, { filter: 'ab' }, sens, LIMITS)).expansion.total).toBe(0);
    expect((await engine.expand(vs, { filter: 'Ab' }, sens, LIMITS)).expansion.total).toBe(1);
    expect((await engine.expand(vs, { filter: 'ab' }, insens, LIMITS)).expansion.total).toBe(1);
  });

  it('offset/count page the ranked list stably; count=0 returns only the total', async () => {
    const pages: string[] = [];
    for (let offset = 0; offset < 20; offset += 5) {
      const res = await expand({ offset, count: 5 });
      expect(res.expansion).toMatchObject({ total: 17, offset });
      pages.push(...codes(res));
    }
    expect(pages).toEqual(ALL_HIER);
    const f1 = codes(await expand({ filter: 'heart', offset: 1, count: 2 }));
    expect(f1).toEqual(['hf', 'hf-acute']);
    const zero = await expand({ filter: 'hepat', count: 0 });
    expect(zero.expansion.total).toBe(4);
    expect(zero.expansion.offset).toBeUndefined(); // offset is there only when asked
    expect(zero.expansion.contains).toBeUndefined();
    expect(codes(await expand({ offset: 100, count: 5 }))).toEqual([]);
  });

  it('activeOnly, excludeNotForUI and compose.inactive=false drop entries', async () => {
    const res = await expand({ activeOnly: true });
    expect(codes(res)).toEqual(ALL_HIER.filter((c) => c !== 'old-hf'));
    expect(res.expansion.total).toBe(16);
    expect(codes(await expand({ filter: 'cardiac', activeOnly: true }))).toEqual([]);
    expect(codes(await expand({ filter: 'cardiac' }))).toEqual(['old-hf']);
    expect(codes(await expand({ excludeNotForUI: true, count: 2 }))).toEqual(['liver', 'hepatitis']);
    const inactiveOff = { ...all, compose: { ...all.compose, inactive: false } };
    expect((await expand({}, inactiveOff)).expansion.total).toBe(16);
  });

  it('displayLanguage picks a designation as display; includeDesignations lists them', async () => {
    const fr = await expand({ displayLanguage: 'fr', count: 4 });
    expect(fr.expansion.contains!.map((c) => c.display)).toEqual([
      'Disorder',
      'Maladie du foie',
      'Hépatite',
      'Hépatite A',
    ]);
    const de = await expand({ displayLanguage: 'de', filter: 'hepatitis', count: 1 });
    expect(de.expansion.contains![0].display).toBe('Leberentzündung');
    // Ranking follows the display shown: in French, 'hepat' starts 'Hépatite' but not 'Maladie du foie'.
    expect(codes(await expand({ displayLanguage: 'fr', filter: 'maladie' }))).toEqual(['liver']);
    const withD = await expand({ includeDesignations: true, filter: 'liver dis' });
    expect(withD.expansion.contains![0].designation).toEqual([{ language: 'fr', value: 'Maladie du foie' }]);
    const without = await expand({ filter: 'liver dis' });
    expect(without.expansion.contains![0].designation).toBeUndefined();
  });

  it('echoes every parameter that shaped the result', async () => {
    const res = await expand({
      filter: 'hepat',
      offset: 1,
      count: 2,
      activeOnly: true,
      includeDesignations: false,
      displayLanguage: 'fr',
      excludeNested: true,
    });
    expect(res.expansion.parameter).toEqual([
      { name: 'filter', valueString: 'hepat' },
      { name: 'offset', valueInteger: 1 },
      { name: 'count', valueInteger: 2 },
      { name: 'activeOnly', valueBoolean: true },
      { name: 'includeDesignations', valueBoolean: false },
      { name: 'displayLanguage', valueCode: 'fr' },
      { name: 'excludeNested', valueBoolean: true },
      { name: 'used-codesystem', valueUri: `${HIER}|1.0.0` },
    ]);
    expect(res.expansion.contains!.every((c) => c.contains === undefined)).toBe(true);
  });

  it('a cached membership is recomputed when a code system it used changes', async () => {
    const rr = new TestResolver();
    const cs = load<CodeSystemResource>('CodeSystem-administrative-gender.json');
    rr.addCodeSystem(cs);
    const vs = vsOf([{ system: GENDER }], undefined, { id: 'g', meta: { versionId: '1' } });
    expect((await engine.expand(vs, {}, rr, LIMITS)).expansion.total).toBe(4);
    rr.addCodeSystem({
      ...cs,
      meta: { versionId: '2' },
      concept: [...cs.concept!, { code: 'nonbinary', display: 'Non-binary' }],
    });
    const res = await engine.expand(vs, { filter: 'non' }, rr, LIMITS);
    expect(codes(res)).toEqual(['nonbinary']);
  });

  it('with a resolver generation, re-checks a cached membership only when the generation moves', async () => {
    const rr = new (class extends TestResolver {
      gen = 0;
      generation(): number {
        return this.gen;
      }
    })();
    const cs = load<CodeSystemResource>('CodeSystem-administrative-gender.json');
    rr.addCodeSystem(cs);
    const vs = vsOf([{ system: GENDER }], undefined, { id: 'gen', meta: { versionId: '1' } });
    expect((await engine.expand(vs, {}, rr, LIMITS)).expansion.total).toBe(4);
    const calls = rr.calls;
    expect((await engine.expand(vs, { filter: 'fem' }, rr, LIMITS)).expansion.total).toBe(1);
    expect(rr.calls).toBe(calls); // same generation: the code system was not looked up again

    rr.addCodeSystem({
      ...cs,
      meta: { versionId: '2' },
      concept: [...cs.concept!, { code: 'nonbinary', display: 'Non-binary' }],
    });
    rr.gen++; // what the terminology service does on every change notification
    const res = await engine.expand(vs, { filter: 'non' }, rr, LIMITS);
    expect(codes(res)).toEqual(['nonbinary']);
    expect(rr.calls).toBeGreaterThan(calls);
  });
});

// ------------------------------------------------------------------------------------------ benchmark data

describe('expandValueSet: hierarchical expansions', () => {
  const r = standardResolver();
  // The example hierarchy without its one concept of two parents (hepatorenal under liver and kidney).
  const TREE = 'http://example.org/cs/tree';
  const fixture = load<CodeSystemResource>('CodeSystem-example-hierarchical.json');
  const strip = (list: CodeSystemResource['concept']): CodeSystemResource['concept'] =>
    list?.map((c) => ({
      ...c,
      property: c.property?.filter((p) => p.code !== 'parent'),
      concept: strip(c.concept),
    }));
  r.addCodeSystem({ ...fixture, url: TREE, concept: strip(fixture.concept) });
  const engine = new ExpansionEngine();
  const expand = (vs: ValueSetResource, req: ExpandRequest = {}) => engine.expand(vs, req, r, LIMITS);
  /** The tree as nested code arrays: [code, [children...]] or code for a leaf. */
  type Tree = Array<string | [string, Tree]>;
  const tree = (list: ValueSetContains[] | undefined): Tree =>
    (list ?? []).map((c) => (c.contains ? [c.code!, tree(c.contains)] : c.code!));

  it('a whole system nests every concept under its parent unless excludeNested; total counts them all', async () => {
    const res = await expand(vsOf([{ system: TREE }]));
    expect(res.expansion.total).toBe(17);
    expect(tree(res.expansion.contains)).toEqual([
      [
        'disorder',
        [
          ['liver', [['hepatitis', ['hepatitis-a', 'hepatitis-b']], 'cirrhosis', 'hepatorenal']],
          ['heart', [['hf', ['hf-acute', 'hf-chronic']], 'old-hf']],
          'kidney',
          'meniere',
        ],
      ],
      ['finding', ['fever', 'cough']],
    ]);
    // excludeNested=false asks for the same; true gives the flat list.
    expect(
      tree((await expand(vsOf([{ system: TREE }]), { excludeNested: false })).expansion.contains),
    ).toEqual(tree(res.expansion.contains));
    expect(
      tree((await expand(vsOf([{ system: TREE }]), { excludeNested: true })).expansion.contains),
    ).toEqual(ALL_HIER);
  });

  it('a code system where a concept has two parents expands flat (as the HL7 reference server does)', async () => {
    const res = await expand(vsOf([{ system: HIER }]));
    expect(tree(res.expansion.contains)).toEqual(ALL_HIER);
    expect(res.expansion.total).toBe(17);
  });

  it('a concept list, an import, two filters or a concept included twice make the expansion flat', async () => {
    const whole = { system: TREE };
    for (const extra of [
      { system: TREE, concept: [{ code: 'cough' }] },
      { system: TREE, filter: [{ property: 'concept', op: 'is-a', value: 'heart' }] },
    ]) {
      const res = await expand(vsOf([whole, extra]));
      expect(tree(res.expansion.contains)).toEqual(ALL_HIER);
    }
    const twoFilters = await expand(
      vsOf([
        {
          system: TREE,
          filter: [
            { property: 'concept', op: 'is-a', value: 'liver' },
            { property: 'concept', op: 'is-a', value: 'hepatitis' },
          ],
        },
      ]),
    );
    expect(tree(twoFilters.expansion.contains)).toEqual(['hepatitis', 'hepatitis-a', 'hepatitis-b']);
  });

  it('a child whose parent is left out moves up; an is-a branch keeps its hierarchy', async () => {
    const active = await expand(vsOf([{ system: TREE }]), { activeOnly: true, excludeNotForUI: true });
    expect(active.expansion.total).toBe(15);
    expect(tree(active.expansion.contains).slice(0, 2)).toEqual([
      ['liver', [['hepatitis', ['hepatitis-a', 'hepatitis-b']], 'cirrhosis', 'hepatorenal']],
      ['heart', [['hf', ['hf-acute', 'hf-chronic']]]],
    ]);
    const isa = await expand(
      vsOf([{ system: HIER, filter: [{ property: 'concept', op: 'is-a', value: 'heart' }] }]),
    );
    expect(tree(isa.expansion.contains)).toEqual([['heart', [['hf', ['hf-acute', 'hf-chronic']], 'old-hf']]]);
  });

  it('stays flat for enumerated concepts, a text filter over a whole system, and a page', async () => {
    const enumerated = await expand(vsOf([{ system: HIER, concept: [{ code: 'heart' }, { code: 'hf' }] }]));
    expect(tree(enumerated.expansion.contains)).toEqual(['heart', 'hf']);
    // A text filter over the whole system is a search: a flat ranked list (the reference server answers so).
    const searched = await expand(vsOf([{ system: TREE }]), { filter: 'hepatitis' });
    expect(tree(searched.expansion.contains)).toEqual(['hepatitis', 'hepatitis-a', 'hepatitis-b']);
    // Within an is-a branch the matches keep their hierarchy.
    const branch = await expand(
      vsOf([{ system: HIER, filter: [{ property: 'concept', op: 'is-a', value: 'liver' }] }]),
      { filter: 'hepatitis' },
    );
    expect(tree(branch.expansion.contains)).toEqual([['hepatitis', ['hepatitis-a', 'hepatitis-b']]]);
    // count/offset page the flat list (a page of a tree is not defined).
    const page = await expand(vsOf([{ system: HIER }]), { count: 3 });
    expect(tree(page.expansion.contains)).toEqual(ALL_HIER.slice(0, 3));
  });

  it('an include that selects nothing still names its code system in used-codesystem', async () => {
    const res = await expand(
      vsOf([{ system: HIER, filter: [{ property: 'concept', op: 'is-a', value: 'no-such-code' }] }]),
    );
    expect(res.expansion.total).toBe(0);
    expect(param(res, 'used-codesystem')).toEqual([`${HIER}|1.0.0`]);
    // Everything excluded: the include still used it.
    const none = await expand(vsOf([{ system: GENDER }], [{ system: GENDER }]));
    expect(none.expansion.total).toBe(0);
    expect(param(none, 'used-codesystem')).toHaveLength(1);
  });

  it('a cycle of parent properties does not lose its concepts', async () => {
    const rr = standardResolver();
    rr.addCodeSystem({
      resourceType: 'CodeSystem',
      url: 'http://example.org/cs/cycle',
      content: 'complete',
      concept: [
        { code: 'a', property: [{ code: 'parent', valueCode: 'b' }] },
        { code: 'b', property: [{ code: 'parent', valueCode: 'a' }] },
        { code: 'c', property: [{ code: 'parent', valueCode: 'b' }] },
      ],
    });
    const res = await new ExpansionEngine().expand(
      vsOf([{ system: 'http://example.org/cs/cycle' }]),
      {},
      rr,
      LIMITS,
    );
    expect(res.expansion.total).toBe(3);
    expect(codes(res).sort()).toEqual(['a', 'b', 'c']);
  });
});

describe('expandValueSet: notSelectable', () => {
  const cs = (
    code: string,
    uri = 'http://hl7.org/fhir/concept-properties#notSelectable',
  ): CodeSystemResource => ({
    resourceType: 'CodeSystem',
    url: `http://example.org/cs/ns-${code}`,
    content: 'complete',
    property: [{ code, uri, type: 'boolean' }],
    concept: [
      { code: 'U', display: 'Says nothing' },
      { code: 'S', display: 'Selectable', property: [{ code, valueBoolean: false }] },
      { code: 'NS', display: 'Not selectable', property: [{ code, valueBoolean: true }] },
    ],
  });
  const r = standardResolver();
  r.addCodeSystem(cs('notSelectable'));
  r.addCodeSystem(cs('not-selectable'));
  const engine = new ExpansionEngine();
  const expand = (include: ValueSetInclude) => engine.expand(vsOf([include]), {}, r, LIMITS);

  it('notSelectable = false selects the concepts that say so; = true the abstract ones', async () => {
    const system = 'http://example.org/cs/ns-notSelectable';
    const f = (value: string) => [{ property: 'notSelectable', op: '=', value }];
    expect(codes(await expand({ system, filter: f('false') }))).toEqual(['S']);
    expect(codes(await expand({ system, filter: f('true') }))).toEqual(['NS']);
  });

  it('a property declared with the notSelectable uri under another code makes concepts abstract', async () => {
    const res = await expand({ system: 'http://example.org/cs/ns-not-selectable' });
    expect(res.expansion.contains!.filter((c) => c.abstract).map((c) => c.code)).toEqual(['NS']);
  });
});

describe('benchmark code system (100,000 concepts)', () => {
  // Generated outside the tree (100k concepts must not be committed, linted or formatted); reused when present.
  const dir = path.join(os.tmpdir(), 'fhir-expand-engine-bench');
  let idx: CodeSystemIndex;
  let vs: ValueSetResource;
  let expected: { filters: Record<string, { allWordsPrefix: number }> };
  let resolver: Resolver;
  const limits: ExpandLimits = { maxUnpaged: 1000 };
  let gc: () => void = () => undefined;

  beforeAll(() => {
    if (!fs.existsSync(path.join(dir, 'expected.json'))) {
      execFileSync(process.execPath, [GENERATOR, '--out', dir]);
    }
    v8.setFlagsFromString('--expose-gc'); // for a meaningful heap delta
    gc = vm.runInNewContext('gc') as () => void;
    gc();
    const before = process.memoryUsage().heapUsed;
    const t0 = performance.now();
    let cs: CodeSystemResource | undefined = JSON.parse(
      fs.readFileSync(path.join(dir, 'CodeSystem-synthetic-bench.json'), 'utf8'),
    ) as CodeSystemResource;
    const t1 = performance.now();
    idx = indexCodeSystemResource(cs);
    const t2 = performance.now();
    cs = undefined;
    gc();
    const after = process.memoryUsage().heapUsed;
    console.log(
      `[bench] parse ${(t1 - t0).toFixed(0)} ms, index build ${(t2 - t1).toFixed(0)} ms; ` +
        `memoryEstimateBytes ${(idx.memoryEstimateBytes() / 1e6).toFixed(1)} MB, ` +
        `heapUsed delta (JSON dropped) ${((after - before) / 1e6).toFixed(1)} MB; ${idx.words.length} words`,
    );
    vs = JSON.parse(
      fs.readFileSync(path.join(dir, 'ValueSet-synthetic-bench-all.json'), 'utf8'),
    ) as ValueSetResource;
    expected = JSON.parse(fs.readFileSync(path.join(dir, 'expected.json'), 'utf8'));
    resolver = {
      codeSystem: async (url) => (url === idx.url ? idx : undefined),
      valueSet: async () => undefined,
    };
  }, 120_000);

  it('totals equal expected.json allWordsPrefix for every filter', async () => {
    const engine = new ExpansionEngine();
    expect(idx.size).toBe(100_000);
    for (const [f, e] of Object.entries(expected.filters)) {
      const res = await engine.expand(vs, { filter: f, count: 20 }, resolver, limits);
      expect(res.expansion.total, f).toBe(e.allWordsPrefix);
      expect(res.expansion.contains?.length ?? 0).toBe(Math.min(20, e.allWordsPrefix));
    }
    const code = await engine.expand(vs, { filter: 'C054321', count: 20 }, resolver, limits);
    expect(code.expansion.contains![0]).toMatchObject({
      code: 'C054321',
      display: 'Dyspnea hip parathyroid abscess excision',
    });
    await expectError(engine.expand(vs, {}, resolver, limits), 422, 'too-costly', /100000 entries/);
  });

  it('is fast: filtered count=20, deep paging, count=1000 (timings printed)', async () => {
    const engine = new ExpansionEngine();
    const t0 = performance.now();
    await engine.expand(vs, { count: 1 }, resolver, limits);
    console.log(
      `[bench] first expansion (membership of 100k entries) ${(performance.now() - t0).toFixed(1)} ms`,
    );

    const time = async (label: string, req: ExpandRequest, n = 2000): Promise<number> => {
      for (let i = 0; i < 100; i++) await engine.expand(vs, req, resolver, limits);
      gc(); // measure steady state, not the collection of the 100k-concept JSON parsed above
      const ts: number[] = [];
      for (let i = 0; i < n; i++) {
        const s = performance.now();
        await engine.expand(vs, req, resolver, limits);
        ts.push(performance.now() - s);
      }
      ts.sort((a, b) => a - b);
      const med = ts[n >> 1];
      console.log(
        `[bench] ${label.padEnd(36)} median ${(med * 1000).toFixed(1).padStart(7)} µs   p99 ${(ts[Math.floor(n * 0.99)] * 1000).toFixed(1).padStart(7)} µs`,
      );
      return med;
    };
    const filters = [...Object.keys(expected.filters), 'a', 'he fa', 'with'];
    const budget = Membership.filterCacheBudget;
    try {
      Membership.filterCacheBudget = 0; // every query pays for filter + rank
      for (let i = 0; i < 300; i++) {
        for (const f of filters) await engine.expand(vs, { filter: f, count: 20 }, resolver, limits); // JIT warm-up
      }
      for (const f of filters) {
        const med = await time(`uncached filter '${f}' count=20`, { filter: f, count: 20 }, 500);
        expect(med).toBeLessThan(5);
      }
    } finally {
      Membership.filterCacheBudget = budget;
    }
    for (const f of Object.keys(expected.filters)) {
      expect(await time(`cached filter '${f}' count=20`, { filter: f, count: 20 })).toBeLessThan(5);
    }
    const p0 = await time('unfiltered offset=0 count=20', { offset: 0, count: 20 });
    const p90 = await time('unfiltered offset=90000 count=20', { offset: 90_000, count: 20 });
    expect(p90).toBeLessThan(2 * p0 + 0.05);
    await time('activeOnly offset=90000 count=20', { offset: 90_000, count: 20, activeOnly: true });
    expect(await time('unfiltered offset=5000 count=1000', { offset: 5000, count: 1000 }, 300)).toBeLessThan(
      5,
    );
    console.log(`[bench] engine caches ${((await engine.memoryEstimateBytes()) / 1e6).toFixed(1)} MB`);
  }, 120_000);
});

describe('regex filter budget', () => {
  it('yields the event loop while a costly regex filter runs, and answers 422 too-costly past its budget', async () => {
    const r = new TestResolver();
    // 60,000 codes of 150 characters: a 60-character alternation costs the engine real work per code (~90 ms on a
    // quiet machine here), well past the first 10 ms slice, so the 5 ms budget below is spent on any machine.
    const concepts = Array.from({ length: 60_000 }, (_, i) => ({ code: `${'ab'.repeat(75)}${i}` }));
    r.addCodeSystem({
      resourceType: 'CodeSystem',
      url: 'http://example.org/long-codes',
      content: 'complete',
      concept: concepts,
    } as CodeSystemResource);
    const pattern = `(${Array.from({ length: 12 }, (_, i) => `a${i}b`).join('|')}|ab|ba)*z`;
    const vs: ValueSetResource = {
      resourceType: 'ValueSet',
      compose: {
        include: [
          {
            system: 'http://example.org/long-codes',
            filter: [{ property: 'code', op: 'regex', value: pattern }],
          },
        ],
      },
    };
    const engine = new ExpansionEngine();
    // The event loop keeps turning: a timer every 5 ms records the longest gap while the filter runs.
    let worstGap = 0;
    let last = performance.now();
    const timer = setInterval(() => {
      const now = performance.now();
      worstGap = Math.max(worstGap, now - last);
      last = now;
    }, 5);
    const started = performance.now();
    const err = await engine
      .expand(vs, {}, r, { maxUnpaged: 100_000, regex: { maxPatternLength: 1000, budgetMs: 5 } })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    clearInterval(timer);
    const elapsed = performance.now() - started;
    expect(err).toBeInstanceOf(TerminologyError);
    expect((err as TerminologyError).status).toBe(422);
    expect((err as TerminologyError).issueCode).toBe('too-costly');
    expect((err as TerminologyError).message).toMatch(/EXPAND_REGEX_BUDGET_MS/);
    expect(elapsed).toBeLessThan(2_000);
    // Slices are ~10 ms; generous margin for a loaded machine.
    expect(worstGap).toBeLessThan(250);
  });

  it('the budget covers all the regex filters of one expansion, not each one', async () => {
    const r = new TestResolver();
    const concepts = Array.from({ length: 30_000 }, (_, i) => ({ code: `${'ab'.repeat(75)}${i}` }));
    r.addCodeSystem({
      resourceType: 'CodeSystem',
      url: 'http://example.org/long-codes-2',
      content: 'complete',
      concept: concepts,
    } as CodeSystemResource);
    const pattern = `(${Array.from({ length: 12 }, (_, i) => `a${i}b`).join('|')}|ab|ba)*z`;
    // Measure one filter's time, then give a budget of twice that to an expansion with four such filters.
    const one: ValueSetResource = {
      resourceType: 'ValueSet',
      compose: {
        include: [
          {
            system: 'http://example.org/long-codes-2',
            filter: [{ property: 'code', op: 'regex', value: pattern }],
          },
        ],
      },
    };
    const engine = new ExpansionEngine();
    await engine.expand(one, { count: 0 }, r, { maxUnpaged: 100_000 }); // builds the index
    // The fastest of three runs: one slow run (a collection, a busy machine) must not inflate the budget.
    let oneMs = Infinity;
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      await new ExpansionEngine().expand(one, { count: 0 }, r, { maxUnpaged: 100_000 });
      oneMs = Math.min(oneMs, performance.now() - t0);
    }
    const four: ValueSetResource = {
      resourceType: 'ValueSet',
      compose: {
        include: [1, 2, 3, 4].map((k) => ({
          system: 'http://example.org/long-codes-2',
          filter: [{ property: 'code', op: 'regex', value: `${pattern}|x${k}` }],
        })),
      },
    };
    const err = await new ExpansionEngine()
      .expand(four, { count: 0 }, r, {
        maxUnpaged: 100_000,
        regex: { maxPatternLength: 1000, budgetMs: Math.ceil(oneMs * 2) },
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect((err as TerminologyError)?.issueCode).toBe('too-costly');
  }, 60_000);
});

describe('deep pre-expanded value sets', () => {
  it('flattens contains nested 20,000 deep in document order (it overflowed the stack)', async () => {
    const root: { system: string; code: string; contains?: unknown[] } = { system: 'http://x', code: 'c0' };
    let cur = root;
    for (let i = 1; i < 20_000; i++) {
      const next = { system: 'http://x', code: `c${i}` };
      cur.contains = [next];
      cur = next;
    }
    const vs = { resourceType: 'ValueSet', expansion: { contains: [root] } } as unknown as ValueSetResource;
    const out = await new ExpansionEngine().expand(vs, { count: 3 }, new TestResolver(), {
      maxUnpaged: 100_000,
    });
    expect(out.expansion.total).toBe(20_000);
    expect(out.expansion.contains?.map((c) => c.code)).toEqual(['c0', 'c1', 'c2']);
  });
});
