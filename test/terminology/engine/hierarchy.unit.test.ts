// Hierarchical expansions: a whole system or an is-a branch nested under parents unless excludeNested; flat for
// polyhierarchies, concept lists, imports, combined filters, text filters and pages.
import { describe, expect, it } from 'vitest';
import {
  ExpansionEngine,
  type CodeSystemResource,
  type ExpandRequest,
  type ValueSetContains,
  type ValueSetResource,
} from '../../../src/terminology/engine/index.js';
import { load, HIER, GENDER, standardResolver, LIMITS, vsOf, codes, param, ALL_HIER } from './helpers.js';

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
