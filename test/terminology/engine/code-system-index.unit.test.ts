// The code system index: concepts flattened from a CodeSystem (document order, parents both ways), and at scale the
// ranked page and exact total of the whole-system fast path (per-prefix counts, postings by first display word,
// only the page ranked) equal what ranking every match gives; the file form reads back identical. Ranking and the
// file form are tested white-box, through their own modules.
import { describe, expect, it } from 'vitest';
import {
  CodeSystemIndex,
  CodeSystemIndexBuilder,
  Membership,
  flattenCodeSystemConcepts,
  indexCodeSystemResource,
  tokenize,
  type CodeSystemResource,
  type ConceptInput,
} from '../../../src/terminology/engine/index.js';
import { deserializeIndex, serializeIndex } from '../../../src/terminology/engine/index-file.js';
import {
  filterAndRank,
  filterPage,
  prepareFilter,
  warmFilterPaths,
} from '../../../src/terminology/engine/ranking.js';
import { ALL_HIER, load } from './helpers.js';

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

const VOCAB = [
  'car',
  'card',
  'cardiac',
  'care',
  'carcinoma',
  'heart',
  'heartburn',
  'hea',
  'acute',
  'acuté',
  'Ärzte',
  'arzt',
  'a',
  'ab',
  'abc',
  'left',
  'lefty',
  'right',
  'x',
  'x1',
  '12',
  '123',
  'fracture',
  'frac',
  'of',
];

function rng(seed: number): () => number {
  return () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
}

function concepts(n: number, seed: number): ConceptInput[] {
  const r = rng(seed);
  const pick = () => VOCAB[Math.floor(r() * VOCAB.length)];
  const out: ConceptInput[] = [];
  for (let i = 0; i < n; i++) {
    const words = Array.from({ length: 1 + Math.floor(r() * 4) }, pick);
    const c: ConceptInput = {
      // Some codes look like words, and one code repeats (the first wins).
      code: i % 97 === 5 ? pick() + String(i) : i === 300 ? 'C0001' : `C${String(i).padStart(4, '0')}`,
      display: i % 53 === 7 ? undefined : words.join(i % 3 ? ' ' : '-'),
    };
    if (i % 11 === 3) c.designations = [{ language: 'de', value: `${pick()} ${pick()}` }];
    out.push(c);
  }
  // Exact codes that also match as words, ranked first: one whose display does not start with it, two that do.
  out.push(
    { code: 'heart', display: 'Cardiac left' },
    { code: 'acute heart', display: 'x' },
    { code: 'cardiac', display: 'Cardiac arrest of heart' },
    { code: 'x x1', display: 'x x1 car' },
  );
  return out;
}

function wholeSystem(idx: CodeSystemIndex): Membership {
  const m = new Membership();
  for (let i = 0; i < idx.size; i++) m.add(idx, i);
  m.seal();
  return m;
}

const limits = { maxUnpaged: 1e9, maxFilterWords: 50 };

describe('code system index: whole-system fast path', () => {
  for (const caseSensitive of [true, false]) {
    it(`pages and totals equal a full ranking, also after the warm-up at load (caseSensitive ${caseSensitive})`, async () => {
      const idx = CodeSystemIndexBuilder.build(
        { url: 'urn:t', caseSensitive },
        concepts(2500, caseSensitive ? 7 : 8),
      );
      // What the server runs on every big index it loads: it shares the scratch buffers with real requests.
      await warmFilterPaths(idx);
      const m = wholeSystem(idx);
      expect(m.isWholeSystemInOrder()).toBe(true);
      const filters = new Set<string>([
        'heart',
        'HEART',
        'acute heart',
        'heart heart',
        'C0001',
        'c0001',
        'zzz',
        // Code prefixes (a token with a digit): the code class, deduplicated against the word matches.
        'C0',
        'c01',
        'C00',
        'C1',
        'C249',
        'x1',
        'abc1',
        '12',
      ]);
      for (const w of VOCAB) {
        const t = tokenize(w)[0] ?? w;
        for (let L = 1; L <= t.length; L++) filters.add(t.slice(0, L));
        filters.add(`${w} car`);
        filters.add(`car ${w.slice(0, 2)}`);
        filters.add(`${w} ${w}`);
      }
      let checked = 0;
      for (const raw of filters) {
        const f = prepareFilter(raw, limits)!;
        const full = filterAndRank(m, f, 0, undefined);
        for (const need of [1, 3, 20, 400, Infinity, full.length - 1, full.length >> 1]) {
          if (need < 1) continue;
          const page = filterPage(m, f, 0, undefined, need);
          expect({ raw, need, total: page.total }).toEqual({ raw, need, total: full.length });
          const want = Array.from(full.subarray(0, Math.min(need, full.length)));
          expect({ raw, need, positions: Array.from(page.positions).slice(0, want.length) }).toEqual({
            raw,
            need,
            positions: want,
          });
          expect(page.complete).toBe(page.positions.length === full.length);
          checked++;
        }
      }
      expect(checked).toBeGreaterThan(500);
    });
  }

  it('matches the start of codes when the filter has a digit: exact code, then codes in code order, then words', () => {
    const idx = CodeSystemIndexBuilder.build({ url: 'http://snomed.info/sct' }, [
      { code: '22298006', display: 'Myocardial infarction' },
      { code: '404684003', display: 'Clinical finding', definition: 'A finding' },
      { code: '4046', display: 'Short code' },
      { code: '40468', display: 'Code 4046 in its display' },
      { code: '404680009', display: 'Another finding' },
      { code: '1404684', display: 'Not a prefix match' },
      { code: 'E11.9', display: 'Type 2 diabetes mellitus without complications' },
      { code: 'E11', display: 'Type 2 diabetes mellitus' },
    ]);
    const m = wholeSystem(idx);
    const codes = (raw: string) => {
      const f = prepareFilter(raw, limits)!;
      const page = filterPage(m, f, 0, undefined, 20);
      const full = filterAndRank(m, f, 0, undefined);
      expect(Array.from(page.positions)).toEqual(Array.from(full));
      return { total: page.total, codes: Array.from(page.positions).map((o) => idx.code(o)) };
    };
    // The exact code first, then the other codes starting with it in code order; the display match is counted once.
    expect(codes('4046')).toEqual({ total: 4, codes: ['4046', '40468', '404680009', '404684003'] });
    expect(codes('40468')).toEqual({ total: 3, codes: ['40468', '404680009', '404684003'] });
    // Case-insensitive unless the system says caseSensitive.
    expect(codes('e11')).toEqual({ total: 2, codes: ['E11', 'E11.9'] });
    expect(codes('E11.')).toEqual({ total: 1, codes: ['E11.9'] });
    // A filter of words does not look at codes; one character with a digit neither (only the word "4046" matches).
    expect(codes('type')).toEqual({ total: 2, codes: ['E11.9', 'E11'] });
    expect(codes('4')).toEqual({ total: 1, codes: ['40468'] });
    // Read back from its file form, the index keeps its code order, and which concepts have a definition.
    const back = deserializeIndex(Buffer.concat(serializeIndex(idx, 'stamp')), 'stamp')!;
    for (const i of [idx, back]) {
      expect(i.mayHaveDefinition(i.ordinalOf('404684003'))).toBe(true);
      expect(i.mayHaveDefinition(i.ordinalOf('4046'))).toBe(false);
    }
    expect(Array.from(back.codePrefixOrdinals('4046')).map((o) => back.code(o))).toEqual([
      '4046',
      '40468',
      '404680009',
      '404684003',
    ]);
  });

  it('counts the concepts with a word starting with each prefix exactly (each concept once)', () => {
    const list = concepts(3000, 3);
    const idx = CodeSystemIndexBuilder.build({ url: 'urn:t' }, list);
    const seen = new Set<string>();
    const texts = list
      .filter((c) => (seen.has(c.code) ? false : (seen.add(c.code), true)))
      .map((c) => [
        ...tokenize(c.display ?? ''),
        ...(c.designations ?? []).flatMap((d) => tokenize(d.value)),
      ]);
    for (const w of idx.words) {
      for (let L = 1; L <= w.length; L++) {
        const p = w.slice(0, L);
        const brute = texts.filter((ws) => ws.some((x) => x.startsWith(p))).length;
        expect({ p, n: idx.prefixTotal(p) }).toEqual({ p, n: brute });
      }
    }
    expect(idx.prefixTotal('nothing')).toBe(0);
  });

  it('reads back from its file form identical (codes, displays, hierarchy, words, filters)', () => {
    const list = concepts(1500, 11);
    list[10].parents = ['C0003', 'C0004', 'C0003', 'nope'];
    list[11].parents = ['C1400'];
    list[12] = { ...list[12], status: 'retired', properties: [{ code: 'p', valueString: 'v' }] };
    const idx = CodeSystemIndexBuilder.build({ url: 'urn:t', version: '2', id: 'a', versionId: 3 }, list);
    const back = deserializeIndex(Buffer.concat(serializeIndex(idx, 'stamp-1')), 'stamp-1')!;
    expect(deserializeIndex(Buffer.concat(serializeIndex(idx, 'stamp-1')), 'stamp-2')).toBeUndefined();
    expect(back.cacheKey).toBe(idx.cacheKey);
    expect(back.size).toBe(idx.size);
    for (let i = 0; i < idx.size; i++) {
      expect([back.code(i), back.display(i), back.flags[i]]).toEqual([
        idx.code(i),
        idx.display(i),
        idx.flags[i],
      ]);
      expect(back.ordinalOf(idx.code(i))).toBe(i);
      expect(back.lookupCode(idx.code(i).toUpperCase())).toBe(idx.lookupCode(idx.code(i).toUpperCase()));
    }
    expect(Array.from(back.parentsOf(10))).toEqual([3, 4]);
    expect(Array.from(back.childrenOf(3))).toEqual([10]);
    expect(Array.from(back.parentsOf(11))).toEqual([back.ordinalOf('C1400')]);
    expect(back.ordinalOf('C1400')).toBe(1399); // C0001 repeated at 300: the first one wins
    expect(back.statuses.get(12)).toBe('retired');
    expect(back.propertyValues(12, 'p')).toEqual(['v']);
    expect(back.words).toEqual(idx.words);
    const m1 = wholeSystem(idx);
    const m2 = wholeSystem(back);
    for (const raw of ['car', 'heart acu', 'x', 'ärzte', 'C0001']) {
      const f = prepareFilter(raw, limits)!;
      expect(Array.from(filterAndRank(m2, f, 0, undefined))).toEqual(
        Array.from(filterAndRank(m1, f, 0, undefined)),
      );
    }
  });

  it('keeps word ids 32-bit past 65,536 distinct words: filters, totals and the file form stay exact', () => {
    // Each concept has a word of its own (70,000 distinct words), and shares "common" and one of "alpha"/"beta".
    const n = 70_000;
    const word = (i: number) => `w${i.toString(36)}`;
    const list: ConceptInput[] = Array.from({ length: n }, (_, i) => ({
      code: `K${i}`,
      display: `${i % 2 ? 'alpha' : 'beta'} ${word(i)} common`,
    }));
    const idx = CodeSystemIndexBuilder.build({ url: 'urn:wide' }, list);
    expect(idx.words.length).toBeGreaterThan(65_536);
    const back = deserializeIndex(Buffer.concat(serializeIndex(idx, 's')), 's')!;
    for (const ix of [idx, back]) {
      const m = wholeSystem(ix);
      const total = (raw: string) => filterPage(m, prepareFilter(raw, limits)!, 0, undefined, 20).total;
      expect(total('common')).toBe(n);
      expect(total('alpha')).toBe(n / 2);
      // The last concept's own word: an id above 65,535 if it were cut to 16 bits would name another word.
      const last = word(n - 1);
      expect(total(last)).toBe(1);
      expect(total(`beta ${last}`)).toBe(0);
      expect(total(`alpha ${last}`)).toBe(1);
      const page = filterPage(m, prepareFilter(`alpha ${last}`, limits)!, 0, undefined, 20);
      expect(ix.code(m.entOrd[page.positions[0]])).toBe(`K${n - 1}`);
      expect(ix.prefixTotal(last)).toBe(1);
    }
  });
});
