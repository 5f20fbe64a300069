// The `filter` parameter: every filter word starts a word of the display or a designation, case- and
// accent-insensitive; ranked exact code first, then displays starting with the filter, then the rest.
import { beforeAll, describe, expect, it } from 'vitest';
import {
  CodeSystemIndexBuilder,
  ExpansionEngine,
  type ExpandRequest,
} from '../../../src/terminology/engine/index.js';
import { HIER, TestResolver, standardResolver, LIMITS, vsOf, codes } from './helpers.js';

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
});
