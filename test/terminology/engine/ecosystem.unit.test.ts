// The engine's HL7 terminology ecosystem IG behaviour, in process: concept properties (status, `property`, those
// derived from extensions) and carried-over extensions, supplements, display languages and designations, R5
// filter operators (also as R4's cross-version extension), contained and version-defaulted imports, the value
// set's own expansion parameters.
import { describe, expect, it } from 'vitest';
import {
  ExpansionEngine,
  TerminologyError,
  indexCodeSystemResource,
  type CodeSystemIndex,
  type CodeSystemResource,
  type ExpandRequest,
  type Extension,
  type Resolver,
  type ValueSetContains,
  type ValueSetResource,
  type ValueSetResourceWithExpansion,
} from '../../../src/terminology/engine/index.js';

const CS = 'http://example.org/cs/colours';
const SUPP = 'http://example.org/cs/colours-de';
const PROP = 'http://hl7.org/fhir/5.0/StructureDefinition/extension-ValueSet.expansion.contains.property';
const DECL = 'http://hl7.org/fhir/5.0/StructureDefinition/extension-ValueSet.expansion.property';
const SD = 'http://hl7.org/fhir/StructureDefinition/';

const colours: CodeSystemResource = {
  resourceType: 'CodeSystem',
  url: CS,
  version: '1.0.0',
  language: 'en',
  content: 'complete',
  property: [{ code: 'hue', uri: 'http://example.org/props#hue', type: 'integer' }],
  concept: [
    {
      code: 'warm',
      display: 'Warm colours',
      definition: 'Colours of fire',
      concept: [
        {
          code: 'red',
          display: 'Red',
          definition: 'The colour of blood',
          property: [{ code: 'hue', valueInteger: 0 }],
          designation: [
            { language: 'fr', value: 'Rouge' },
            { language: 'de-CH', value: 'Rot (CH)' },
          ],
          extension: [
            { url: `${SD}codesystem-conceptOrder`, valueInteger: 2 },
            { url: `${SD}rendering-style`, valueString: 'color: red' },
          ],
        },
        {
          code: 'orange',
          display: 'Orange',
          property: [{ code: 'status', valueCode: 'retired' }],
          extension: [{ url: `${SD}structuredefinition-standards-status`, valueCode: 'deprecated' }],
        },
      ],
    },
    { code: 'blue', display: 'Blue', designation: [{ language: 'fr', value: 'Bleu' }] },
  ],
};

const supplement: CodeSystemResource = {
  resourceType: 'CodeSystem',
  url: SUPP,
  version: '2.0.0',
  content: 'supplement',
  supplements: CS,
  property: [{ code: 'mood', uri: 'http://example.org/props#mood', type: 'string' }],
  concept: [
    {
      code: 'red',
      designation: [{ language: 'de', value: 'Rot' }],
      property: [{ code: 'mood', valueString: 'angry' }],
      extension: [{ url: `${SD}codesystem-label`, valueString: 'a)' }],
    },
    { code: 'blue', designation: [{ language: 'de', value: 'Blau' }] },
  ],
};

/** Code systems by url|version (latest wins without a version) and value sets by url|version. */
class Resolve implements Resolver {
  private readonly cs: CodeSystemIndex[] = [];
  private readonly vs: ValueSetResource[] = [];
  constructor(cs: CodeSystemResource[], vs: ValueSetResource[] = []) {
    this.cs = cs.map(indexCodeSystemResource);
    this.vs = vs;
  }
  async codeSystem(url: string, version?: string) {
    const all = this.cs.filter((c) => c.url === url && (version === undefined || c.version === version));
    return all[all.length - 1];
  }
  async valueSet(url: string, version?: string) {
    const all = this.vs.filter((v) => v.url === url && (version === undefined || v.version === version));
    return all[all.length - 1];
  }
}

const resolver = new Resolve([colours, supplement]);
const engine = new ExpansionEngine();
const LIMITS = { maxUnpaged: 100 };
const vsOf = (
  compose: ValueSetResource['compose'],
  extra: Partial<ValueSetResource> = {},
): ValueSetResource => ({
  resourceType: 'ValueSet',
  url: 'http://example.org/vs/test',
  version: '3.0.0',
  status: 'active',
  compose,
  ...extra,
});
const ALL = vsOf({ include: [{ system: CS }] });
const expand = (vs: ValueSetResource, req: ExpandRequest = {}, r: Resolver = resolver) =>
  engine.expand(vs, req, r, LIMITS, { inline: true });

const entry = (res: ValueSetResourceWithExpansion, code: string): ValueSetContains => {
  const stack = [...(res.expansion.contains ?? [])];
  while (stack.length > 0) {
    const c = stack.shift()!;
    if (c.code === code) return c;
    stack.push(...(c.contains ?? []));
  }
  throw new Error(`no ${code}`);
};
/** An entry's properties (from their R4 extensions) as code -> values. */
const props = (c: ValueSetContains): Record<string, unknown[]> => {
  const out: Record<string, unknown[]> = {};
  for (const e of c.extension ?? []) {
    if (e.url !== PROP) continue;
    const code = e.extension!.find((x) => x.url === 'code')!.valueCode as string;
    const v = e.extension!.find((x) => x.url === 'value')!;
    const key = Object.keys(v).find((k) => k.startsWith('value'))!;
    (out[code] ??= []).push(v[key]);
  }
  return out;
};
const echoed = (c: ValueSetContains): string[] =>
  (c.extension ?? []).filter((e) => e.url !== PROP).map((e) => e.url.replace(SD, ''));
const declared = (res: ValueSetResourceWithExpansion): string[] =>
  (res.expansion.extension ?? [])
    .filter((e) => e.url === DECL)
    .map((e: Extension) => e.extension!.map((x) => x.valueCode ?? x.valueUri).join(' '));
const param = (res: ValueSetResourceWithExpansion, name: string) =>
  (res.expansion.parameter ?? [])
    .filter((p) => p.name === name)
    .map((p) => p.valueUri ?? p.valueCode ?? p.valueBoolean);

async function failure(p: Promise<unknown>): Promise<TerminologyError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TerminologyError);
  return err as TerminologyError;
}

describe('concept properties', () => {
  it('status for inactive and deprecated concepts, order from conceptOrder; carried-over extensions', async () => {
    const res = await expand(ALL, { excludeNested: true });
    expect(props(entry(res, 'red'))).toEqual({ order: [2] });
    expect(echoed(entry(res, 'red'))).toEqual(['rendering-style']);
    // The code system's standards-status extension is the status property; retired makes the concept inactive.
    expect(entry(res, 'orange')).toMatchObject({ inactive: true });
    expect(props(entry(res, 'orange'))).toEqual({ status: ['deprecated'] });
    expect(entry(res, 'blue').extension).toBeUndefined();
    // Each property used is declared once, with its uri.
    expect(declared(res).sort()).toEqual([
      'order http://hl7.org/fhir/concept-properties#order',
      'status http://hl7.org/fhir/concept-properties#status',
    ]);
  });

  it('`property` returns definition and the code system properties asked for, by code or uri; * all', async () => {
    const res = await expand(ALL, {
      excludeNested: true,
      property: ['definition', 'http://example.org/props#hue'],
    });
    expect(props(entry(res, 'red'))).toEqual({ definition: ['The colour of blood'], hue: [0], order: [2] });
    expect(props(entry(res, 'warm'))).toEqual({ definition: ['Colours of fire'] });
    expect(declared(res)).toContain('hue http://example.org/props#hue');
    // `property` is not echoed (the IG's expansions leave it out).
    expect(res.expansion.parameter!.map((p) => p.name)).not.toContain('property');
    const star = await expand(ALL, { excludeNested: true, property: ['*'] });
    expect(props(entry(star, 'orange')).status).toEqual(['deprecated']);
    expect(props(entry(star, 'red')).hue).toEqual([0]);
  });

  it("the value set's concept extensions win over the code system's and are carried over", async () => {
    const vs = vsOf({
      include: [
        {
          system: CS,
          concept: [
            {
              code: 'red',
              extension: [
                { url: `${SD}valueset-conceptOrder`, valueInteger: 7 },
                { url: `${SD}valueset-label`, valueString: 'R.' },
                { url: `${SD}itemWeight`, valueDecimal: 1.5 },
                { url: `${SD}valueset-deprecated`, valueBoolean: true },
                { url: 'http://example.org/unknown', valueString: 'dropped' },
              ],
            },
          ],
        },
      ],
    });
    const red = entry(await expand(vs), 'red');
    expect(props(red)).toEqual({ order: [7], label: ['R.'], weight: [1.5] });
    expect(echoed(red)).toEqual(['rendering-style', 'valueset-deprecated']);
  });
});

describe('supplements', () => {
  it('useSupplement adds designations, properties and label; used-supplement names it', async () => {
    const res = await expand(ALL, {
      excludeNested: true,
      includeDesignations: true,
      useSupplement: [SUPP],
      property: ['mood'],
    });
    const red = entry(res, 'red');
    expect(red.designation).toContainEqual({ language: 'de', value: 'Rot' });
    expect(props(red)).toMatchObject({ mood: ['angry'], label: ['a)'] });
    expect(declared(res)).toContain('mood http://example.org/props#mood');
    expect(param(res, 'used-supplement')).toEqual([`${SUPP}|2.0.0`]);
    // Its designations choose displays too.
    const de = await expand(ALL, { excludeNested: true, useSupplement: [SUPP], displayLanguage: 'de' });
    expect(entry(de, 'blue').display).toBe('Blau');
  });

  it("a value set's valueset-supplement extension asks for it too", async () => {
    const vs = vsOf(ALL.compose, { extension: [{ url: `${SD}valueset-supplement`, valueCanonical: SUPP }] });
    const res = await expand(vs, { displayLanguage: 'de', excludeNested: true });
    expect(entry(res, 'red').display).toBe('Rot');
    expect(param(res, 'used-supplement')).toEqual([`${SUPP}|2.0.0`]);
    // The value set's own extensions come back only with its definition.
    expect(res.extension).toBeUndefined();
    expect((await expand(vs, { includeDefinition: true })).extension).toEqual(vs.extension);
  });

  it('a supplement that is missing, not a supplement, or for a code system not used: 422 not-found', async () => {
    for (const canonical of [`${SUPP}-X`, `${SUPP}|9.9`, CS]) {
      const err = await failure(expand(ALL, { useSupplement: [canonical] }));
      expect(err).toMatchObject({ status: 422, issueCode: 'not-found', txIssueType: 'not-found' });
      expect(err.message).toBe(`Required supplement not found: ${canonical}`);
    }
    const other = vsOf({ include: [{ system: CS, concept: [{ code: 'red' }] }] });
    const otherCs = new Resolve([colours, { ...supplement, supplements: 'http://example.org/cs/other' }]);
    const err = await failure(expand(other, { useSupplement: [SUPP] }, otherCs));
    expect(err.message).toBe(`Required supplement not found: ${SUPP}`);
  });
});

describe('display languages and designations', () => {
  it('a language list picks, for each concept, the closest designation; an implicit * keeps the display', async () => {
    const res = await expand(ALL, { displayLanguage: 'fr', excludeNested: true });
    expect(entry(res, 'red').display).toBe('Rouge');
    expect(entry(res, 'warm').display).toBe('Warm colours');
    // `de` matches de-CH by language; q orders the list.
    const de = await expand(ALL, { displayLanguage: 'es;q=0.5, de', excludeNested: true });
    expect(entry(de, 'red').display).toBe('Rot (CH)');
    // *;q=0: no display where the language has none.
    const hard = await expand(ALL, { displayLanguage: 'fr,*;q=0', excludeNested: true });
    expect(entry(hard, 'blue').display).toBe('Bleu');
    expect(entry(hard, 'warm').display).toBeUndefined();
    expect(param(hard, 'displayLanguage')).toEqual(['fr, *; q=0']);
  });

  it('with includeDesignations the display not chosen is a designation; `designation` filters them', async () => {
    const res = await expand(ALL, { displayLanguage: 'fr', includeDesignations: true, excludeNested: true });
    expect(entry(res, 'red').designation).toEqual([
      {
        language: 'en',
        use: {
          system: 'http://terminology.hl7.org/CodeSystem/hl7TermMaintInfra',
          code: 'preferredForLanguage',
          display: 'Preferred For Language',
        },
        value: 'Red',
      },
      { language: 'de-CH', value: 'Rot (CH)' },
    ]);
    const only = await expand(ALL, {
      includeDesignations: true,
      designation: ['urn:ietf:bcp:47|fr'],
      excludeNested: true,
    });
    expect(entry(only, 'red').designation).toEqual([{ language: 'fr', value: 'Rouge' }]);
    expect(only.expansion.parameter).toContainEqual({
      name: 'designation',
      valueString: 'urn:ietf:bcp:47|fr',
    });
  });

  it('a malformed language list is a 400 naming displayLanguage', async () => {
    for (const bad of ['fr;q=2', 'not a tag', 'fr;x=1']) {
      const err = await failure(expand(ALL, { displayLanguage: bad }));
      expect(err).toMatchObject({ status: 400, issueCode: 'invalid', expression: ['displayLanguage'] });
    }
  });

  it("the value set's expansion parameters apply where the request is silent", async () => {
    const param = (name: string, value: Record<string, unknown>) => ({
      url: `${SD}valueset-expansion-parameter`,
      extension: [
        { url: 'name', valueCode: name },
        { url: 'value', ...value },
      ],
    });
    const vs = vsOf({
      extension: [
        param('displayLanguage', { valueCode: 'fr' }),
        param('excludeNested', { valueString: 'true' }),
      ],
      include: [{ system: CS }],
    });
    const res = await expand(vs);
    expect(entry(res, 'red').display).toBe('Rouge');
    expect(res.expansion.contains!.map((c) => c.code)).toEqual(['warm', 'red', 'orange', 'blue']);
    expect(res.expansion.parameter).toContainEqual({ name: 'displayLanguage', valueCode: 'fr' });
    // The request wins.
    expect(entry(await expand(vs, { displayLanguage: 'en' }), 'red').display).toBe('Red');
    const bad = vsOf({ extension: [param('count', { valueString: 'many' })], include: [{ system: CS }] });
    expect((await failure(expand(bad))).status).toBe(400);
    // A repeatable one at most 100 times, as in a request.
    const many = vsOf({
      extension: Array.from({ length: 101 }, (_, i) => param('property', { valueString: `p${i}` })),
      include: [{ system: CS }],
    });
    expect((await failure(expand(many))).message).toContain('more than 100 times');
  });
});

describe('filters, imports and versions', () => {
  const childOf = (op: Record<string, unknown>) =>
    vsOf({ include: [{ system: CS, filter: [{ property: 'concept', value: 'warm', ...op }] }] });

  it('child-of and descendent-leaf, also as the R4 cross-version extension of op', async () => {
    expect((await expand(childOf({ op: 'child-of' }))).expansion.contains!.map((c) => c.code)).toEqual([
      'red',
      'orange',
    ]);
    const r4 = childOf({
      _op: {
        extension: [
          {
            url: 'http://hl7.org/fhir/5.0/StructureDefinition/extension-ValueSet.compose.include.filter.op',
            valueCode: 'child-of',
          },
        ],
      },
    });
    expect((await expand(r4)).expansion.total).toBe(2);
    const leaf = await expand(childOf({ op: 'descendent-leaf' }));
    expect(leaf.expansion.contains!.map((c) => c.code)).toEqual(['red', 'orange']);
  });

  it('a contained value set imported by #id; not reported as used', async () => {
    const vs = vsOf(
      { include: [{ valueSet: ['#reds', ALL.url!] }] },
      {
        url: 'http://example.org/vs/outer',
        contained: [
          {
            resourceType: 'ValueSet',
            id: 'reds',
            status: 'active',
            compose: { include: [{ system: CS, concept: [{ code: 'red' }] }] },
          },
        ],
      },
    );
    const r = new Resolve([colours], [ALL]);
    const res = await expand(vs, {}, r);
    expect(res.expansion.contains!.map((c) => c.code)).toEqual(['red']);
    expect(param(res, 'used-valueset')).toEqual([`${ALL.url}|3.0.0`]);
    const missing = vsOf({ include: [{ valueSet: ['#nope'] }] });
    expect((await failure(expand(missing, {}, r))).status).toBe(422);
  });

  it('a contained value set imported many times over is evaluated once (no exponential work)', async () => {
    // c0 imports c1 twice, c1 imports c2 twice, ...: 2^30 evaluations if each import re-evaluated.
    const depth = 30;
    const contained: ValueSetResource[] = [];
    for (let i = 0; i < depth; i++) {
      contained.push({
        resourceType: 'ValueSet',
        id: `c${i}`,
        status: 'active',
        compose: {
          include:
            i === depth - 1
              ? [{ system: CS, concept: [{ code: 'red' }] }]
              : [{ valueSet: [`#c${i + 1}`] }, { valueSet: [`#c${i + 1}`] }],
        },
      });
    }
    const vs = vsOf({ include: [{ valueSet: ['#c0'] }, { valueSet: ['#c0'] }] }, { contained });
    const started = Date.now();
    expect((await expand(vs)).expansion.contains!.map((c) => c.code)).toEqual(['red']);
    expect(Date.now() - started).toBeLessThan(2000);
    // A contained value set importing itself is a cycle.
    const loop = vsOf(
      { include: [{ valueSet: ['#a'] }] },
      {
        contained: [
          {
            resourceType: 'ValueSet',
            id: 'a',
            status: 'active',
            compose: { include: [{ valueSet: ['#a'] }] },
          },
        ],
      },
    );
    expect(await failure(expand(loop))).toMatchObject({
      status: 400,
      issueCode: 'processing',
      txIssueType: 'vs-invalid',
    });
  });

  it('default-valueset-version pins an import without a version; a version that is not there is 422', async () => {
    const v1 = vsOf(
      { include: [{ system: CS, concept: [{ code: 'red' }] }] },
      { url: 'http://example.org/vs/v', version: '1' },
    );
    const v2 = vsOf(
      { include: [{ system: CS, concept: [{ code: 'blue' }] }] },
      { url: 'http://example.org/vs/v', version: '2' },
    );
    const outer = vsOf({ include: [{ valueSet: ['http://example.org/vs/v'] }] });
    const r = new Resolve([colours], [v1, v2]);
    expect((await expand(outer, {}, r)).expansion.contains!.map((c) => c.code)).toEqual(['blue']);
    const pinned = await expand(outer, { defaultValueSetVersion: ['http://example.org/vs/v|1'] }, r);
    expect(pinned.expansion.contains!.map((c) => c.code)).toEqual(['red']);
    expect(param(pinned, 'default-valueset-version')).toEqual(['http://example.org/vs/v|1']);
    const err = await failure(expand(outer, { defaultValueSetVersion: ['http://example.org/vs/v|3'] }, r));
    expect(err).toMatchObject({ status: 422, issueCode: 'not-found', txIssueType: 'not-found' });
    expect(err.message).toContain("Unable to find included value set 'http://example.org/vs/v' version '3'");
    expect((await failure(expand(outer, { defaultValueSetVersion: ['no-bar'] }, r))).status).toBe(400);
  });

  it('several versions named: every entry shows its version; one version: none does', async () => {
    const two = new Resolve([
      colours,
      { ...colours, version: '2.0.0', concept: [{ code: 'red', display: 'Red 2' }] },
    ]);
    const res = await expand(
      vsOf({
        include: [
          { system: CS, version: '1.0.0', concept: [{ code: 'blue' }] },
          { system: CS, version: '2.0.0' },
        ],
      }),
      {},
      two,
    );
    expect(res.expansion.contains!.map((c) => `${c.code}@${c.version}:${c.display}`)).toEqual([
      'red@2.0.0:Red 2',
      'blue@1.0.0:Blue',
    ]);
    const one = await expand(vsOf({ include: [{ system: CS, version: '2.0.0' }] }), {}, two);
    expect(one.expansion.contains![0].version).toBeUndefined();
  });
});
