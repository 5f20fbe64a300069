// Designations and properties kept as columns (designation-columns.ts, property-columns.ts): every shape reads back
// as it was given (key order included: answers are JSON), built and through the index file, and the filters'
// and relations' readers agree with the objects.
import { describe, expect, it } from 'vitest';
import { CodeSystemIndexBuilder } from '../../../src/terminology/engine/index-builder.js';
import { deserializeIndex, serializeIndex } from '../../../src/terminology/engine/index-file.js';
import type { CodeSystemIndex } from '../../../src/terminology/engine/code-system-index.js';
import type { ConceptInput } from '../../../src/terminology/engine/types.js';
import { relationsOf } from '../../../src/terminology/engine/ecl/relations.js';

const SCT = 'http://snomed.info/sct';
const concepts: ConceptInput[] = [
  {
    code: 'a',
    display: 'Alpha',
    designations: [
      {
        language: 'en',
        use: { system: SCT, code: '900000000000003001', display: 'FSN' },
        value: 'Alpha (x)',
      },
      { language: 'en', use: { system: SCT, code: '900000000000003001', display: 'FSN' }, value: 'Ålpha' },
      { value: 'no language' },
      { use: { code: 'u', system: 's' }, value: 'use keys in another order' },
      { value: 'value first', language: 'de' },
      { language: 'fr', value: 'ext', extension: [{ url: 'http://x', valueCode: 'withdrawn' }] },
      {
        language: 'nl',
        use: { system: 's', code: 'c', extension: [{ url: 'u' }] } as never,
        value: 'nested use',
      },
    ],
    properties: [
      { code: 'moduleId', valueCode: '900000000000207008' },
      { code: 'effectiveTime', valueString: '20250101' },
      { code: 'sufficientlyDefined', valueBoolean: false },
      { code: '363698007', valueCode: 'b', group: 2 },
      { code: '363698007', valueCode: 'c', group: 0 },
      { code: 'n', valueInteger: -42 },
      { code: 'd', valueDecimal: 0.1 },
      { code: 'd', valueDecimal: 1e21 },
      { code: 'dt', valueDateTime: '2020-01-01T00:00:00Z' },
      { code: 'cod', valueCoding: { system: 's', code: 'b', display: 'Beta' } },
      { valueCode: 'x', code: 'order' },
      { code: 'big', valueInteger: 2 ** 40 },
      { code: 'two', valueCode: 'x', valueString: 'y' },
      { code: 'g', valueCode: 'b', group: 1.5 },
      { code: 'refset', valueCode: 'r' },
      { code: 'refset', valueCoding: { code: 'r' } },
    ],
  },
  { code: 'b', display: 'Beta', properties: [{ code: 'refset', valueCode: 'r' }] },
  { code: 'c', display: 'Gamma', designations: [], properties: [] },
  { code: 'r', display: 'Refset' },
];

function roundTrip(idx: CodeSystemIndex): CodeSystemIndex {
  return deserializeIndex(Buffer.concat(serializeIndex(idx, 's')), 's')!;
}

describe('designation and property columns', () => {
  const built = CodeSystemIndexBuilder.build({ url: SCT, version: '1' }, concepts);
  for (const [label, idx] of [
    ['built', built],
    ['read back from its file', roundTrip(built)],
  ] as const) {
    it(`read back as given, key order included (${label})`, () => {
      for (let o = 0; o < concepts.length; o++) {
        expect(JSON.stringify(idx.designationsOf(o))).toBe(JSON.stringify(concepts[o].designations ?? []));
        expect(JSON.stringify(idx.propertiesOf(o))).toBe(JSON.stringify(concepts[o].properties ?? []));
      }
      expect(idx.hasDesignations).toBe(true);
      // New objects each time: a caller changing one changes nothing held.
      idx.designationsOf(0)[0].use!.display = 'changed';
      expect(idx.designationsOf(0)[0].use!.display).toBe('FSN');
    });

    it(`propertyValues agree with the objects (${label})`, () => {
      expect(idx.propertyValues(0, '363698007')).toEqual(['b', 'c']);
      expect(idx.propertyValues(0, 'd')).toEqual(['0.1', '1e+21']);
      expect(idx.propertyValues(0, 'n')).toEqual(['-42']);
      expect(idx.propertyValues(0, 'sufficientlyDefined')).toEqual(['false']);
      expect(idx.propertyValues(0, 'cod')).toEqual(['b']);
      expect(idx.propertyValues(0, 'two')).toEqual(['x']);
      expect(idx.propertyValues(0, 'big')).toEqual([String(2 ** 40)]);
      expect(idx.propertyValues(1, 'refset')).toEqual(['r']);
      expect(idx.propertyValues(2, 'refset')).toEqual([]);
      expect(idx.propertyValues(0, 'absent')).toEqual([]);
      const rows = idx.propertyRows;
      const groups: number[] = [];
      for (let r = rows.cols.off[0]; r < rows.cols.off[1]; r++) groups.push(rows.groupOf(r));
      expect(groups).toEqual(concepts[0].properties!.map((p) => p.group ?? 0));
    });
  }

  it('keeps groups past 255 (32-bit column)', () => {
    const props = [
      { code: 'x', valueCode: 'a', group: 300 },
      { code: 'x', valueCode: 'a', group: -1 },
    ];
    const idx = roundTrip(CodeSystemIndexBuilder.build({ url: 'urn:x' }, [{ code: 'a', properties: props }]));
    expect(idx.propertiesOf(0)).toEqual(props);
  });

  it('an index without designations says so', () => {
    const idx = CodeSystemIndexBuilder.build({ url: 'urn:x' }, [{ code: 'a' }]);
    expect(idx.hasDesignations).toBe(false);
    expect(roundTrip(idx).designationsOf(0)).toEqual([]);
    expect(roundTrip(idx).propertiesOf(0)).toEqual([]);
    // No rows at all: the offsets are left out, and every reader still answers.
    expect(idx.parts.designations.off.length).toBe(0);
    expect(idx.parts.properties.off.length).toBe(0);
    expect(idx.propertyValues(0, 'refset')).toEqual([]);
    expect(relationsOf(idx).relType.length).toBe(0);
  });
});
