// ECL evaluation over the SNOMED CT-like fixture: each construct on known answers (the ECL spec's examples where
// they apply to the fixture), and the SNOMED compose filters (constraint, concept in <refset>, is-a on a DAG).
import { describe, expect, it } from 'vitest';
import {
  CodeSystemIndexBuilder,
  ExpansionEngine,
  evaluateEcl,
  TerminologyError,
  type ValueSetResource,
} from '../../../../src/terminology/engine/index.js';
import { TestResolver } from '../helpers.js';
import { relationsOf, relationsReady } from '../../../../src/terminology/engine/ecl/index.js';
import { fixtureIndex, generateSnomed, INACTIVE_CODE, SCT, SCT_VERSION } from './fixture.js';

const index = fixtureIndex();
const codes = (ecl: string): string[] => {
  const out: string[] = [];
  const b = evaluateEcl(index, ecl);
  for (let o = 0; o < index.size; o++) if ((b[o >>> 5] & (1 << (o & 31))) !== 0) out.push(index.code(o));
  return out.sort();
};
const sorted = (...c: string[]): string[] => [...c].sort();

describe('ECL evaluation', () => {
  it('self, any and the hierarchy operators on a DAG', () => {
    expect(codes('56265001 |Heart disease|')).toEqual(['56265001']);
    expect(codes('99999999')).toEqual([]);
    expect(codes(INACTIVE_CODE)).toEqual([INACTIVE_CODE]);
    expect(codes('*')).not.toContain(INACTIVE_CODE);
    expect(codes('*')).toHaveLength(index.size - 1);
    // 56786000 has two parents, both in the subtree: once.
    expect(codes('< 56265001')).toEqual(sorted('22298006', '56786000', '368009'));
    expect(codes('<< 56265001')).toEqual(sorted('56265001', '22298006', '56786000', '368009'));
    expect(codes('<! 56265001')).toEqual(sorted('22298006', '56786000', '368009'));
    expect(codes('<<! 368009')).toEqual(sorted('368009', '56786000'));
    expect(codes('> 56786000')).toEqual(sorted('368009', '56265001', '64572001', '404684003', '138875005'));
    expect(codes('>! 56786000')).toEqual(sorted('368009', '56265001'));
    expect(codes('>>! 56786000')).toEqual(sorted('56786000', '368009', '56265001'));
    expect(codes('>> 22298006')).toContain('22298006');
    expect(codes('< (56265001 OR 49755003)')).toEqual(
      sorted('22298006', '56786000', '368009', '55641003', '415582006', '409774005', '23583003'),
    );
  });

  it('memberOf, AND/OR/MINUS', () => {
    expect(codes('^ 723264001')).toEqual(sorted('80891009', '39057004', '39607008'));
    expect(codes('^ 733073007')).toEqual([]);
    expect(codes('^ (< 900000000000455006)')).toEqual(sorted('80891009', '39057004', '39607008'));
    expect(codes('< 123037004 AND ^ 723264001')).toEqual(sorted('80891009', '39057004', '39607008'));
    expect(codes('<< 80891009 MINUS ^ 723264001')).toEqual(['17401000']);
    expect(codes('<! 64572001 OR <! 56265001')).toHaveLength(6);
    expect(codes('<< 56265001, < 368009')).toEqual(['56786000']);
  });

  it('refinements: attribute, subsumed attribute, value sets, !=, cardinality, groups, reverse, dot', () => {
    // Disorders with a finding site in the heart.
    expect(codes('< 404684003 : 363698007 = << 80891009')).toEqual(
      sorted('56265001', '22298006', '56786000', '368009'),
    );
    expect(codes('< 404684003 : 363698007 = << 39057004')).toEqual(['56786000']);
    // Any concept-model object attribute (subsumption on the attribute).
    expect(codes('< 404684003 : << 762705008 = << 409822003')).toEqual(['40733004']);
    expect(codes('< 404684003 : * = 55641003')).toEqual(['22298006']);
    expect(codes('< 404684003 : 363698007 = *, 116676008 = *')).toEqual(
      sorted('22298006', '56786000', '233604007'),
    );
    expect(codes('< 404684003 : 363698007 = 39057004 OR 246075003 = *')).toEqual(
      sorted('56786000', '40733004'),
    );
    expect(codes('< 404684003 : 363698007 != << 80891009')).toEqual(['233604007']);
    // Cardinality counts relationships (pneumonia has two finding sites).
    expect(codes('< 404684003 : [2..*] 363698007 = *')).toEqual(['233604007']);
    expect(codes('< 404684003 : [0..0] 363698007 = *')).toEqual(sorted('64572001', '40733004'));
    expect(codes('<< 64572001 : [0..*] 363698007 = 1')).toEqual(codes('<< 64572001'));
    expect(codes('< 404684003 : [1..1] 116676008 = *')).toEqual(sorted('22298006', '56786000'));
    // Groups: both attributes in one group.
    expect(codes('< 404684003 : { 363698007 = << 39607008, 116676008 = 23583003 }')).toEqual(['233604007']);
    expect(codes('< 404684003 : { 363698007 = << 80891009, 116676008 = 23583003 }')).toEqual([]);
    expect(codes('< 404684003 : [2..2] { 363698007 = * }')).toEqual(['233604007']);
    expect(codes('< 404684003 : [0..0] { 116676008 = * }')).toEqual(
      sorted('64572001', '56265001', '368009', '40733004'),
    );
    // Ungrouped relationships (group 0) are each a group of their own.
    expect(codes('< 404684003 : { 246075003 = * }')).toEqual(['40733004']);
    // Reverse: the body structures some disorder's finding site is.
    expect(codes('< 123037004 : R 363698007 = < 404684003')).toEqual(
      sorted('80891009', '17401000', '39057004', '39607008'),
    );
    expect(codes('< 404684003 . 363698007')).toEqual(sorted('80891009', '17401000', '39057004', '39607008'));
    // is-a as an attribute.
    expect(codes('* : 116680003 = 56265001')).toEqual(sorted('22298006', '56786000', '368009'));
  });

  it('caches results by canonical expression (terms, spaces and comments do not matter)', () => {
    const a = evaluateEcl(index, '<< 56265001 |Heart disease|');
    const b = evaluateEcl(index, '/* x */ <<56265001');
    expect(b).toBe(a);
  });
});

describe('relations', () => {
  it('built in slices (relationsReady) are the same as built at once', async () => {
    const data = generateSnomed(20_000, 3, { maxRelationships: 5 });
    const a = CodeSystemIndexBuilder.build({ url: SCT }, data.concepts);
    const b = CodeSystemIndexBuilder.build({ url: SCT }, data.concepts);
    const pending = relationsReady(a);
    expect(pending).toBeInstanceOf(Promise);
    expect(relationsReady(a)).toBe(pending);
    const sliced = await pending;
    const whole = relationsOf(b);
    expect(relationsReady(a)).toBe(sliced);
    expect(sliced.relType.length).toBeGreaterThan(20_000);
    expect(sliced.relOff).toEqual(whole.relOff);
    expect(sliced.relType).toEqual(whole.relType);
    expect(sliced.relDest).toEqual(whole.relDest);
    expect(sliced.relGroup).toEqual(whole.relGroup);
    expect([...sliced.refsetMembers.entries()]).toEqual([...whole.refsetMembers.entries()]);
  });
});

describe('SNOMED CT compose filters', () => {
  const resolver = new TestResolver();
  resolver.addCodeSystem(index);
  const engine = new ExpansionEngine();
  const expand = async (
    filter: Array<{ property: string; op: string; value: string }>,
  ): Promise<string[]> => {
    const vs: ValueSetResource = {
      resourceType: 'ValueSet',
      url: 'http://example.org/vs',
      status: 'active',
      compose: { include: [{ system: SCT, filter }] },
    };
    const out = await engine.expand(vs, { excludeNested: true }, resolver, { maxUnpaged: 1000 });
    return (out.expansion.contains ?? []).map((c) => c.code!).sort();
  };

  it('constraint (and its alias expression) = ECL', async () => {
    expect(await expand([{ property: 'constraint', op: '=', value: '<< 56265001' }])).toEqual(
      codes('<< 56265001'),
    );
    expect(await expand([{ property: 'expression', op: '=', value: '^ 723264001' }])).toHaveLength(3);
  });

  it('concept in <refset> = its members; is-a and descendent-of on the DAG', async () => {
    expect(await expand([{ property: 'concept', op: 'in', value: '723264001' }])).toEqual(
      codes('^ 723264001'),
    );
    expect(await expand([{ property: 'concept', op: 'is-a', value: '56265001' }])).toEqual(
      codes('<< 56265001'),
    );
    expect(await expand([{ property: 'concept', op: 'descendent-of', value: '56265001' }])).toEqual(
      codes('< 56265001'),
    );
  });

  it('an ECL error names the filter and the position', async () => {
    const err = await expand([
      { property: 'concept', op: 'is-a', value: '138875005' },
      { property: 'constraint', op: '=', value: '<< 56265001 OR' },
    ]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TerminologyError);
    const e = err as TerminologyError;
    expect(e.status).toBe(400);
    expect(e.expression?.[0]).toMatch(/include\[0\]\.filter\[1\]$/);
    expect(e.message).toMatch(/filter\[1\].*at character 15: expected a concept id/);
  });

  it('the version of the code system is the one asked for', () => {
    expect(index.version).toBe(SCT_VERSION);
  });
});
