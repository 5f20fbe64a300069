// $lookup and $subsumes cost what the concept has (its hash lookup, parents, children, maps), never the size of the
// code system: on a 1,000,000-concept index they read a handful of concepts (counted through a proxy of the
// index, no timing).
import { beforeAll, describe, expect, it } from 'vitest';
import {
  CodeSystemIndexBuilder,
  LOOKUP_MAX_CHILDREN,
  lookupConcept,
  NO_SUPPLEMENTS,
  subsumption,
  type CodeSystemIndex,
  type ConceptInput,
  type Resolver,
} from '../../../src/terminology/engine/index.js';

const SIZE = 1_000_000;
let index: CodeSystemIndex;

/** A 1M-concept is-a hierarchy: 1,001 groups of 998 under one root (1 + 1,001 x 999 = SIZE). */
function* concepts(): Generator<ConceptInput> {
  yield { code: 'root', display: 'Root' };
  for (let g = 0; g < 1001; g++) {
    yield { code: `g${g}`, display: `Group ${g}`, parents: ['root'] };
    for (let i = 0; i < 998; i++)
      yield { code: `c${g}-${i}`, display: `Concept ${g} ${i}`, parents: [`g${g}`] };
  }
}

/** The index behind a proxy that counts every method call and property read by name. */
function counted(idx: CodeSystemIndex): { proxy: CodeSystemIndex; reads: Map<string, number> } {
  const reads = new Map<string, number>();
  const proxy = new Proxy(idx, {
    get(target, key, receiver) {
      if (typeof key === 'string') reads.set(key, (reads.get(key) ?? 0) + 1);
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
  return { proxy, reads };
}

const resolver: Resolver = { codeSystem: async () => undefined, valueSet: async () => undefined };

beforeAll(() => {
  index = CodeSystemIndexBuilder.build({ url: 'urn:big', caseSensitive: true }, concepts());
}, 120_000);

describe('$lookup and $subsumes on a 1,000,000-concept code system', () => {
  it('the index is that big', () => {
    expect(index.size).toBe(SIZE);
  });

  it('a lookup reads the concept and its parents only: no array view, no walk', async () => {
    const { proxy, reads } = counted(index);
    const ord = proxy.lookupCode('c500-7');
    const answer = await lookupConcept(
      proxy,
      ord,
      { properties: ['*'], supplements: NO_SUPPLEMENTS },
      resolver,
    );
    expect(answer.parameter.find((p) => p.name === 'display')?.valueString).toBe('Concept 500 7');
    expect(reads.get('codes') ?? 0).toBe(0);
    expect(reads.get('displays') ?? 0).toBe(0);
    expect(reads.get('code') ?? 0).toBeLessThan(10);
    expect(reads.get('display') ?? 0).toBeLessThan(10);
  });

  it('the root lists LOOKUP_MAX_CHILDREN of its 1,001 children', async () => {
    const { proxy, reads } = counted(index);
    const answer = await lookupConcept(
      proxy,
      proxy.lookupCode('root'),
      { properties: ['child'], supplements: NO_SUPPLEMENTS },
      resolver,
    );
    expect(LOOKUP_MAX_CHILDREN).toBeLessThan(1001);
    expect(answer.parameter.filter((p) => p.name === 'property')).toHaveLength(LOOKUP_MAX_CHILDREN);
    expect(reads.get('code') ?? 0).toBeLessThan(LOOKUP_MAX_CHILDREN + 10);
  });

  it('subsumption walks up the ancestors of the two concepts only', () => {
    const { proxy, reads } = counted(index);
    const a = proxy.lookupCode('root');
    const b = proxy.lookupCode('c1000-997');
    expect(subsumption(proxy, a, b)).toBe('subsumes');
    expect(subsumption(proxy, b, a)).toBe('subsumed-by');
    expect(subsumption(proxy, proxy.lookupCode('c1-1'), b)).toBe('not-subsumed');
    expect(reads.get('parentsOf') ?? 0).toBeLessThan(20);
    expect(reads.get('childrenOf') ?? 0).toBe(0);
  });
});
