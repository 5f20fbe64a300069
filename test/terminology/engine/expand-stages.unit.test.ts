// The stages after compose: paging (offset/count), flags (activeOnly, excludeNotForUI), display languages and
// designations, the parameters an expansion echoes, and the membership cache's re-validation.
import { beforeAll, describe, expect, it } from 'vitest';
import {
  ExpansionEngine,
  type CodeSystemResource,
  type ExpandRequest,
} from '../../../src/terminology/engine/index.js';
import {
  load,
  HIER,
  GENDER,
  TestResolver,
  standardResolver,
  LIMITS,
  vsOf,
  codes,
  ALL_HIER,
} from './helpers.js';

describe('expandValueSet: parameters', () => {
  let r: TestResolver;
  let engine: ExpansionEngine;
  const all = vsOf([{ system: HIER }]);
  const expand = (req: ExpandRequest, vs = all) => engine.expand(vs, req, r, LIMITS);
  beforeAll(() => {
    r = standardResolver();
    engine = new ExpansionEngine();
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
