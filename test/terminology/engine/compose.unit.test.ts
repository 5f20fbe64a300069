// Compose evaluation (FHIR R4): whole systems, concept lists, excludes, imports of other value sets, duplicates, and
// pre-expanded value sets (a nested contains, however deep).
import { beforeAll, describe, expect, it } from 'vitest';
import {
  ExpansionEngine,
  type ExpandRequest,
  type ValueSetInclude,
  type ValueSetResource,
} from '../../../src/terminology/engine/index.js';
import {
  load,
  HIER,
  LOINC,
  TestResolver,
  standardResolver,
  LIMITS,
  DISPLAY_USE,
  vsOf,
  codes,
  statusProperty,
  param,
  expectError,
  ALL_HIER,
} from './helpers.js';

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
