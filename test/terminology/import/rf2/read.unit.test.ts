// The RF2 format on the generated small release: what the server will serve for its concepts (display per
// language reference set, designations, parents, inactive, properties, refset membership, version URI), and
// malformed files refused with file:line:column.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConceptInput } from '../../../../src/terminology/engine/index.js';
import { folderFiles } from '../../../../src/terminology/import/release/folder.js';
import { detectReleaseFormat } from '../../../../src/terminology/import/release/formats.js';
import { ReleaseFormatError, type ReleaseContent } from '../../../../src/terminology/import/release/types.js';
import { rf2Format } from '../../../../src/terminology/import/rf2/format.js';
import { zipFiles } from '../../../../src/terminology/import/release/zip.js';
import { generateRf2, withLine, zipFolder, type Rf2Samples } from './rf2-release.js';

const EN_GB = '900000000000508004';
let dir: string;
let expected: Rf2Samples;
const made: string[] = [];

async function conceptsOf(content: ReleaseContent): Promise<Map<string, ConceptInput>> {
  const all = new Map<string, ConceptInput>();
  for await (const batch of content.codeSystems[0].concepts()) for (const c of batch) all.set(c.code, c);
  return all;
}

let content: ReleaseContent;
let concepts: Map<string, ConceptInput>;

beforeAll(async () => {
  ({ dir, expected } = generateRf2());
  made.push(dir);
  content = await rf2Format.read(folderFiles(dir), {});
  concepts = await conceptsOf(content);
});
afterAll(() => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
});

describe('RF2 release format', () => {
  it('is recognised by its files; a folder of FHIR JSON is not', async () => {
    expect((await detectReleaseFormat(folderFiles(dir)))?.name).toBe('rf2');
    const other = fs.mkdtempSync(`${dir}-fhir`);
    made.push(other);
    fs.writeFileSync(`${other}/cs.json`, '{"resourceType":"CodeSystem"}');
    expect(await detectReleaseFormat(folderFiles(other))).toBeUndefined();
  });

  it('reads the same release from a zip, streamed out of it', async () => {
    const zip = `${dir}.zip`;
    made.push(zip);
    zipFolder(dir, zip, 'SnomedCT_InternationalRF2_PRODUCTION_20250101T120000Z');
    const files = await zipFiles(zip);
    try {
      expect(files.list()).toContain(
        `SnomedCT_InternationalRF2_PRODUCTION_20250101T120000Z/Snapshot/Terminology/sct2_Concept_Snapshot_INT_${expected.date}.txt`,
      );
      expect((await detectReleaseFormat(files))?.name).toBe('rf2');
      const fromZip = await conceptsOf(await rf2Format.read(files, {}));
      expect(fromZip.size).toBe(concepts.size);
      const code = expected.samples.nonAscii.code;
      expect(fromZip.get(code)).toEqual(concepts.get(code));
    } finally {
      files.close();
    }
  });

  it('is one CodeSystem: the International Edition version URI, its count and property declarations', () => {
    const { head } = content.codeSystems[0];
    expect(head).toMatchObject({
      url: 'http://snomed.info/sct',
      version: `http://snomed.info/sct/900000000000207008/version/${expected.date}`,
      content: 'complete',
      hierarchyMeaning: 'is-a',
      count: expected.counts.concepts,
    });
    const codes = head.property!.map((p) => p.code);
    for (const c of [
      'inactive',
      'parent',
      'child',
      'sufficientlyDefined',
      'moduleId',
      'effectiveTime',
      'refset',
    ])
      expect(codes).toContain(c);
    expect(head.property).toContainEqual({
      code: '363698007',
      uri: 'http://snomed.info/id/363698007',
      description: 'Finding site',
      type: 'code',
    });
    expect(concepts.size).toBe(expected.counts.concepts);
  });

  it('shows the en-US preferred synonym by default and the en-GB one with that language refset', async () => {
    const { code, display, gbDisplay } = expected.samples.enGb;
    expect(concepts.get(code)!.display).toBe(display);
    const gb = await conceptsOf(await rf2Format.read(folderFiles(dir), { languageRefset: EN_GB }));
    expect(gb.get(code)!.display).toBe(gbDisplay);
    expect(gb.get(code)!.display).not.toBe(display);
    // Both spellings stay designations, so a text search finds either.
    const values = gb.get(code)!.designations!.map((d) => d.value);
    expect(values).toEqual(expect.arrayContaining([display, gbDisplay]));
  });

  it('lists the FSN and every synonym as designations with their language and use', () => {
    const s = expected.samples.synonyms;
    const c = concepts.get(s.code)!;
    expect(c.display).toBe(s.display);
    expect(c.designations).toContainEqual({
      language: 'en',
      use: { system: 'http://snomed.info/sct', code: '900000000000003001', display: 'Fully specified name' },
      value: s.fsn,
    });
    for (const syn of [s.display, ...s.synonyms]) {
      expect(c.designations).toContainEqual({
        language: 'en',
        use: { system: 'http://snomed.info/sct', code: '900000000000013009', display: 'Synonym' },
        value: syn,
      });
    }
    // Retired (inactive) descriptions are left out.
    expect(c.designations!.some((d) => d.value.includes('(retired term)'))).toBe(false);
  });

  it('keeps every active is-a parent', () => {
    const s = expected.samples.multiParent;
    expect(concepts.get(s.code)!.parents!.sort()).toEqual([...s.parents].sort());
    expect(concepts.get('404684003')!.parents).toEqual(['138875005']);
    expect(concepts.get('138875005')!.parents).toBeUndefined();
  });

  it('marks inactive concepts inactive, with their terms and no active parents', () => {
    const c = concepts.get(expected.samples.inactive.code)!;
    expect(c).toMatchObject({ inactive: true, display: expected.samples.inactive.display });
    expect(c.parents).toBeUndefined();
    expect(concepts.get(expected.samples.multiParent.code)!.inactive).toBeUndefined();
  });

  it('gives attributes with their relationship group, module, effective time and definition status', () => {
    const s = expected.samples.grouped;
    const c = concepts.get(s.code)!;
    for (const a of s.attributes) {
      const want =
        a.group === 0
          ? { code: a.type, valueCode: a.value }
          : { code: a.type, valueCode: a.value, group: a.group };
      expect(c.properties).toContainEqual(want);
    }
    expect(c.properties).toContainEqual({ code: 'moduleId', valueCode: '900000000000207008' });
    expect(c.properties!.find((p) => p.code === 'effectiveTime')!.valueString).toMatch(/^\d{8}$/);
    expect(c.properties!.filter((p) => p.code === 'sufficientlyDefined')).toHaveLength(1);
    expect(c.properties!.some((p) => p.code === '116680003')).toBe(false);
  });

  it('gives simple refset membership as the refset property, active members only', () => {
    const s = expected.samples.refset;
    expect(concepts.get(s.code)!.properties).toContainEqual({ code: 'refset', valueCode: s.refset });
    for (const [refset, members] of Object.entries(expected.refsets)) {
      const n = [...concepts.values()].filter((c) =>
        c.properties!.some((p) => p.code === 'refset' && p.valueCode === refset),
      ).length;
      expect(n).toBe(members);
    }
  });

  it('keeps text definitions and non-ASCII terms', () => {
    expect(concepts.get(expected.samples.definition.code)!.definition).toMatch(
      /^A synthetic .* defined for testing/,
    );
    expect(concepts.get(expected.samples.nonAscii.code)!.display).toBe(expected.samples.nonAscii.display);
    expect(expected.samples.nonAscii.display).toMatch(/[^\x20-\x7e]/);
  });
});

describe('malformed RF2 files', () => {
  const CONCEPT = /sct2_Concept_Snapshot/;
  const RELATIONSHIP = /sct2_Relationship_Snapshot/;
  const DESCRIPTION = /sct2_Description_Snapshot/;
  const cases: Array<[string, RegExp, number, (l: string) => string, RegExp]> = [
    ['a wrong header', CONCEPT, 1, (l) => l.replace('moduleId', 'module'), /:1:\d+: header is not RF2's/],
    [
      'a missing column',
      CONCEPT,
      5,
      (l) => l.split('\t').slice(0, 4).join('\t'),
      /:5:\d+: 4 columns, expected 5/,
    ],
    ['an extra column', CONCEPT, 5, (l) => `${l}\tx`, /:5:\d+: 6 columns, expected 5/],
    [
      'a wrong check digit',
      CONCEPT,
      4,
      (l) => l.replace(/^(\d+)(\d)\t/, (_, a, d) => `${a}${(Number(d) + 1) % 10}\t`),
      /:4:1: id "\d+" is not an SCTID \(wrong check digit\)/,
    ],
    [
      'a non-numeric SCTID',
      CONCEPT,
      4,
      (l) => l.replace(/\t900000000000207008\t/, '\t9000000x0000207008\t'),
      /:4:\d+: moduleId "9000000x0000207008" is not an SCTID/,
    ],
    [
      'a bad effective time',
      CONCEPT,
      3,
      (l) => l.replace(/\t\d{8}\t/, '\t20251341\t'),
      /:3:\d+: effectiveTime "20251341" is not a date YYYYMMDD/,
    ],
    [
      'active not 0/1',
      DESCRIPTION,
      6,
      (l) => l.replace(/^(\d+\t\d{8}\t)1\t/, '$12\t'),
      /:6:\d+: active "2" is not 0 or 1/,
    ],
    [
      'a relationship naming an unknown concept',
      RELATIONSHIP,
      7,
      (l) => {
        const f = l.split('\t');
        f[5] = '1999999004';
        return f.join('\t');
      },
      /:7:\d+: destinationId 1999999004 is not a concept of the release/,
    ],
  ];
  it.each(cases)('refuses %s naming file, line and column', async (_what, table, line, edit, message) => {
    const bad = withLine(dir, table, line, edit);
    made.push(bad);
    const err = await rf2Format.read(folderFiles(bad), {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReleaseFormatError);
    expect((err as ReleaseFormatError).file).toMatch(table);
    expect((err as Error).message).toMatch(message);
  });

  it('names the column where a field starts', async () => {
    const bad = withLine(dir, CONCEPT, 4, (l) => l.replace(/\t\d{8}\t/, '\t2025\t'));
    made.push(bad);
    const err = (await rf2Format.read(folderFiles(bad), {}).catch((e: unknown) => e)) as ReleaseFormatError;
    expect(err.line).toBe(4);
    // id (9-10 digits) + tab: effectiveTime starts right after.
    const idLength = fs
      .readFileSync(`${dir}/Snapshot/Terminology/sct2_Concept_Snapshot_INT_${expected.date}.txt`, 'utf8')
      .split('\r\n')[3]
      .indexOf('\t');
    expect(err.column).toBe(idLength + 2);
  });
});
