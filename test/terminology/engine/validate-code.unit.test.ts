// $validate-code against a value set of a 1,000,000-concept code system costs what a $lookup costs once the value
// set's membership is cached: the second request evaluates nothing (the same Membership comes back) and a check
// reads a handful of concepts of the index (counted through a proxy, no timing).
import { beforeAll, describe, expect, it } from 'vitest';
import {
  checkRequest,
  CodeSystemIndexBuilder,
  ExpansionEngine,
  validateCodings,
  type CodeSystemIndex,
  type ConceptInput,
  type Resolver,
  type ValueSetResource,
} from '../../../src/terminology/engine/index.js';

const SIZE = 1_000_000;
const URL = 'urn:big';
const limits = { maxUnpaged: 1000 };
let index: CodeSystemIndex;
const reads = new Map<string, number>();

function* concepts(): Generator<ConceptInput> {
  yield { code: 'root', display: 'Root' };
  for (let g = 0; g < 1001; g++) {
    yield { code: `g${g}`, display: `Group ${g}`, parents: ['root'] };
    for (let i = 0; i < 998; i++)
      yield { code: `c${g}-${i}`, display: `Concept ${g} ${i}`, parents: [`g${g}`] };
  }
}

const all: ValueSetResource = {
  resourceType: 'ValueSet',
  id: 'all',
  meta: { versionId: '1' },
  url: 'urn:vs:all',
  compose: { include: [{ system: URL }] },
};

beforeAll(() => {
  const built = CodeSystemIndexBuilder.build({ url: URL, version: '1', caseSensitive: true }, concepts());
  // The index behind a proxy that counts every property read and method call by name.
  index = new Proxy(built, {
    get(target, key, receiver) {
      if (typeof key === 'string') reads.set(key, (reads.get(key) ?? 0) + 1);
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
}, 120_000);

const resolver: Resolver = {
  scope: 'p',
  codeSystem: async (url) => (url === URL ? index : undefined),
  valueSet: async () => undefined,
  generation: () => 1,
};

describe('$validate-code on a value set of 1,000,000 concepts', () => {
  it('the membership is evaluated once; then a check reads a few concepts, never the arrays', async () => {
    const engine = new ExpansionEngine();
    const first = await engine.membershipFor(all, checkRequest({}, limits), resolver, limits);
    expect(first.membership.size).toBe(SIZE);
    reads.clear();
    for (let i = 0; i < 100; i++) {
      const again = await engine.membershipFor(all, checkRequest({}, limits), resolver, limits);
      expect(again.membership).toBe(first.membership);
      const answer = await validateCodings(
        'coding',
        [{ system: URL, code: `c${i}-7`, display: `Concept ${i} 7` }],
        {
          valueSet: {
            membership: again.membership,
            canonical: 'urn:vs:all',
            statusNotes: [],
            versionSpecs: new Map(),
            excludesInactive: false,
          },
          supplements: again.supplements,
        },
        resolver,
      );
      expect(answer.parameter.find((p) => p.name === 'result')?.valueBoolean).toBe(true);
    }
    expect(reads.get('codes') ?? 0).toBe(0);
    expect(reads.get('displays') ?? 0).toBe(0);
    // Per check: the code's hash lookup, its code and display, and the display choices.
    expect(reads.get('code') ?? 0).toBeLessThan(100 * 10);
    expect(reads.get('display') ?? 0).toBeLessThan(100 * 10);
  });

  it('a code outside the value set is answered from its position (false), not from a walk', async () => {
    const engine = new ExpansionEngine();
    const vs: ValueSetResource = {
      ...all,
      id: 'g5',
      compose: { include: [{ system: URL, filter: [{ property: 'concept', op: 'is-a', value: 'g5' }] }] },
    };
    const { membership, supplements } = await engine.membershipFor(
      vs,
      checkRequest({}, limits),
      resolver,
      limits,
    );
    expect(membership.size).toBe(999);
    reads.clear();
    const answer = await validateCodings(
      'code',
      [{ system: URL, code: 'c900-1' }],
      {
        valueSet: {
          membership,
          canonical: 'urn:vs:g5',
          statusNotes: [],
          versionSpecs: new Map(),
          excludesInactive: false,
        },
        supplements,
      },
      resolver,
    );
    expect(answer.parameter.find((p) => p.name === 'result')?.valueBoolean).toBe(false);
    expect(reads.get('codes') ?? 0).toBe(0);
    expect(reads.get('code') ?? 0).toBeLessThan(10);
  });
});
