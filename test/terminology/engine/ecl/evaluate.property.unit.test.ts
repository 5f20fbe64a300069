// Property-based: random ECL expressions over a random SNOMED CT-like DAG (several parents, grouped attributes in a
// small attribute hierarchy, refsets, inactive concepts) give what a brute-force evaluation over the transitive
// closure gives. The expressions go through the text (formatEcl, then the parser) as a client would send them.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CodeSystemIndexBuilder,
  evaluateEcl,
  formatEcl,
  parseEcl,
  type ConceptInput,
} from '../../../../src/terminology/engine/index.js';
import type {
  Cardinality,
  EclExpr,
  EclRefinement,
  HierarchyOp,
} from '../../../../src/terminology/engine/ecl/ast.js';
import { generateSnomed, SCT } from './fixture.js';

const data = generateSnomed(300, 42, { attributeCount: 6, refsetCount: 4, inactiveShare: 0.05 });
const index = CodeSystemIndexBuilder.build({ url: SCT, version: 'gen' }, data.concepts);

/** The brute-force model: plain maps and the transitive closure. */
const byCode = new Map<string, ConceptInput>(data.concepts.map((c) => [c.code, c]));
const all = data.concepts.map((c) => c.code);
const ancestors = new Map<string, Set<string>>();
function ancestorsOf(code: string): Set<string> {
  let s = ancestors.get(code);
  if (!s) {
    s = new Set();
    for (const p of byCode.get(code)?.parents ?? []) {
      s.add(p);
      for (const a of ancestorsOf(p)) s.add(a);
    }
    ancestors.set(code, s);
  }
  return s;
}
interface Rel {
  src: string;
  type: string;
  dest: string;
  group: number;
}
const rels: Rel[] = data.concepts.flatMap((c) =>
  (c.properties ?? [])
    .filter((p) => p.code !== 'refset' && byCode.has(p.code))
    .map((p) => ({ src: c.code, type: p.code, dest: p.valueCode!, group: p.group ?? 0 })),
);

function brute(e: EclExpr): Set<string> {
  switch (e.kind) {
    case 'concept':
      return new Set(byCode.has(e.code) ? [e.code] : []);
    case 'any':
      return new Set(all.filter((c) => !byCode.get(c)!.inactive));
    case 'hierarchy': {
      const x = brute(e.expr);
      const self = e.op === '<<' || e.op === '>>' || e.op === '<<!' || e.op === '>>!';
      const direct = e.op.endsWith('!');
      const out = new Set(self ? x : []);
      for (const c of all) {
        const up = e.op.startsWith('<');
        for (const y of x) {
          const related = up
            ? direct
              ? (byCode.get(c)!.parents ?? []).includes(y)
              : ancestorsOf(c).has(y)
            : direct
              ? (byCode.get(y)!.parents ?? []).includes(c)
              : ancestorsOf(y).has(c);
          if (related) out.add(c);
        }
      }
      return out;
    }
    case 'memberOf': {
      const r = brute(e.expr);
      return new Set(
        all.filter((c) =>
          (byCode.get(c)!.properties ?? []).some((p) => p.code === 'refset' && r.has(p.valueCode!)),
        ),
      );
    }
    case 'and': {
      const b = brute(e.right);
      return new Set([...brute(e.left)].filter((c) => b.has(c)));
    }
    case 'or':
      return new Set([...brute(e.left), ...brute(e.right)]);
    case 'minus': {
      const b = brute(e.right);
      return new Set([...brute(e.left)].filter((c) => !b.has(c)));
    }
    case 'dot': {
      const src = brute(e.expr);
      const types = brute(e.attribute);
      return new Set(
        rels.filter((r) => src.has(r.src) && types.has(r.type) && byCode.has(r.dest)).map((r) => r.dest),
      );
    }
    case 'refined': {
      const focus = brute(e.focus);
      return new Set([...focus].filter((c) => refinementHolds(e.refinement, c)));
    }
  }
}

const within = (n: number, card: Cardinality | undefined): boolean => {
  const { min, max } = card ?? { min: 1, max: undefined };
  return n >= min && (max === undefined || n <= max);
};

function matches(r: EclRefinement & { kind: 'attribute' }, rel: Rel, other: string): boolean {
  return brute(r.attribute).has(rel.type) && brute(r.value).has(other) === (r.op === '=');
}

function refinementHolds(r: EclRefinement, c: string): boolean {
  switch (r.kind) {
    case 'and':
      return refinementHolds(r.left, c) && refinementHolds(r.right, c);
    case 'or':
      return refinementHolds(r.left, c) || refinementHolds(r.right, c);
    case 'attribute': {
      const n = r.reverse
        ? rels.filter((x) => x.dest === c && matches(r, x, x.src)).length
        : rels.filter((x) => x.src === c && matches(r, x, x.dest)).length;
      return within(n, r.cardinality);
    }
    case 'group': {
      const own = rels.filter((x) => x.src === c);
      const groups: Rel[][] = [];
      for (const g of new Set(own.filter((x) => x.group !== 0).map((x) => x.group)))
        groups.push(own.filter((x) => x.group === g));
      for (const x of own) if (x.group === 0) groups.push([x]);
      return within(groups.filter((g) => groupHolds(r.refinement, g)).length, r.cardinality);
    }
  }
}

function groupHolds(r: EclRefinement, group: Rel[]): boolean {
  switch (r.kind) {
    case 'and':
      return groupHolds(r.left, group) && groupHolds(r.right, group);
    case 'or':
      return groupHolds(r.left, group) || groupHolds(r.right, group);
    case 'attribute':
      return within(group.filter((x) => matches(r, x, x.dest)).length, r.cardinality);
    case 'group':
      throw new Error('nested group');
  }
}

// ------------------------------------------------------------------ generators

const conceptCode = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...data.codes.slice(0, 60)) },
  { weight: 3, arbitrary: fc.constantFrom(...data.codes) },
  { weight: 1, arbitrary: fc.constant('99999999') },
);
const cardinality: fc.Arbitrary<Cardinality | undefined> = fc.constantFrom(
  undefined,
  undefined,
  { min: 0, max: 0 },
  { min: 0, max: 1 },
  { min: 1, max: undefined },
  { min: 0, max: undefined },
  { min: 1, max: 2 },
  { min: 2, max: undefined },
);
const hierarchyOp = fc.constantFrom<HierarchyOp>('<', '<<', '<!', '<<!', '>', '>>', '>!', '>>!');
const simpleAttributeName: fc.Arbitrary<EclExpr> = fc.oneof(
  fc.constantFrom(...data.attributes).map((code): EclExpr => ({ kind: 'concept', code })),
  fc
    .tuple(fc.constantFrom<HierarchyOp>('<', '<<'), fc.constantFrom(...data.attributes))
    .map(([op, code]): EclExpr => ({ kind: 'hierarchy', op, expr: { kind: 'concept', code } })),
  fc.constant<EclExpr>({ kind: 'any' }),
);
// Compound attribute names print in parentheses: `(<<a OR b) = value`.
const attributeName: fc.Arbitrary<EclExpr> = fc.oneof(
  { weight: 4, arbitrary: simpleAttributeName },
  {
    weight: 1,
    arbitrary: fc
      .tuple(simpleAttributeName, simpleAttributeName)
      .map(([left, right]): EclExpr => ({ kind: 'or', left, right })),
  },
);

const { expr } = fc.letrec<{
  expr: EclExpr;
  refinement: EclRefinement;
  attribute: EclRefinement;
  inGroup: EclRefinement;
}>((tie) => ({
  expr: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    conceptCode.map((code): EclExpr => ({ kind: 'concept', code })),
    fc.constant<EclExpr>({ kind: 'any' }),
    fc.tuple(hierarchyOp, tie('expr')).map(([op, e]): EclExpr => ({ kind: 'hierarchy', op, expr: e })),
    fc
      .constantFrom(...data.refsets)
      .map((code): EclExpr => ({ kind: 'memberOf', expr: { kind: 'concept', code } })),
    tie('expr').map((e): EclExpr => ({ kind: 'memberOf', expr: e })),
    fc
      .tuple(
        fc.constantFrom('and', 'or', 'minus') as fc.Arbitrary<'and' | 'or' | 'minus'>,
        tie('expr'),
        tie('expr'),
      )
      .map(([kind, left, right]): EclExpr => ({ kind, left, right })),
    fc
      .tuple(tie('expr'), tie('refinement'))
      .map(([focus, refinement]): EclExpr => ({ kind: 'refined', focus, refinement })),
    fc
      .tuple(tie('expr'), attributeName)
      .map(([e, attribute]): EclExpr => ({ kind: 'dot', expr: e, attribute })),
  ),
  attribute: fc
    .tuple(cardinality, fc.boolean(), attributeName, fc.constantFrom<'=' | '!='>('=', '!='), tie('expr'))
    .map(([card, reverse, attribute, op, value]): EclRefinement => ({
      kind: 'attribute',
      ...(card ? { cardinality: card } : {}),
      reverse,
      attribute,
      op,
      value,
    })),
  inGroup: fc.oneof(
    { depthSize: 'small' },
    tie('attribute').map((a) => (a.kind === 'attribute' ? { ...a, reverse: false } : a)),
    fc
      .tuple(fc.constantFrom('and', 'or') as fc.Arbitrary<'and' | 'or'>, tie('inGroup'), tie('inGroup'))
      .map(([kind, left, right]): EclRefinement => ({ kind, left, right })),
  ),
  refinement: fc.oneof(
    { depthSize: 'small' },
    tie('attribute'),
    fc.tuple(cardinality, tie('inGroup')).map(([card, refinement]): EclRefinement => ({
      kind: 'group',
      ...(card ? { cardinality: card } : {}),
      refinement,
    })),
    fc
      .tuple(fc.constantFrom('and', 'or') as fc.Arbitrary<'and' | 'or'>, tie('refinement'), tie('refinement'))
      .map(([kind, left, right]): EclRefinement => ({ kind, left, right })),
  ),
}));

function evaluated(text: string): string[] {
  const b = evaluateEcl(index, text);
  const out: string[] = [];
  for (let o = 0; o < index.size; o++) if ((b[o >>> 5] & (1 << (o & 31))) !== 0) out.push(index.code(o));
  return out.sort();
}

describe('ECL evaluation against a brute-force model (fast-check)', () => {
  it('random expressions over a random DAG', () => {
    const sizes: number[] = [];
    fc.assert(
      fc.property(expr, (e) => {
        const text = formatEcl(e);
        // The canonical text reads back as the same expression.
        expect(formatEcl(parseEcl(text))).toBe(text);
        const want = [...brute(e)].sort();
        expect(evaluated(text)).toEqual(want);
        sizes.push(want.length);
      }),
      {
        numRuns: Number(process.env.ECL_RUNS ?? 400),
        seed: process.env.ECL_SEED ? Number(process.env.ECL_SEED) : 20261127,
      },
    );
    // Not a trivial run: a good share of the expressions selects something, and not everything.
    const partial = sizes.filter((n) => n > 0 && n < index.size - 20).length;
    expect(partial).toBeGreaterThan(sizes.length * 0.3);
  });
});
