import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { icd10cmFormat, seventhCharacterCode } from '../../../../src/terminology/import/icd10cm/format.js';
import { ReleaseFormatError } from '../../../../src/terminology/import/release/types.js';
import type { ConceptInput } from '../../../../src/terminology/engine/index.js';
import { folderFiles, generateRelease } from '../release-dir.js';

async function read(dir: string) {
  const content = await icd10cmFormat.read(folderFiles(dir), {});
  const concepts = new Map<string, ConceptInput>();
  for await (const batch of content.codeSystems[0].concepts()) for (const c of batch) concepts.set(c.code, c);
  return { head: content.codeSystems[0].head, concepts };
}

describe('ICD-10-CM release format', () => {
  let dir: string;
  beforeAll(() => {
    dir = generateRelease('gen-icd10cm.mjs', ['--year', '2025']);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('is detected by the tabular list, not by other XML', async () => {
    expect(await icd10cmFormat.detect(folderFiles(dir))).toBe(true);
    const other = fs.mkdtempSync(path.join(path.dirname(dir), 'other-'));
    fs.writeFileSync(path.join(other, 'x.xml'), '<?xml version="1.0"?><ClaML/>');
    expect(await icd10cmFormat.detect(folderFiles(other))).toBe(false);
    fs.rmSync(other, { recursive: true });
  });

  it('reads chapters, sections, categories and codes as the hierarchy; only billable codes are selectable', async () => {
    const { head, concepts } = await read(dir);
    expect(head).toMatchObject({
      url: 'http://hl7.org/fhir/sid/icd-10-cm',
      version: '2025',
      count: concepts.size,
    });
    expect(concepts.get('A00-A99')).toMatchObject({
      display: 'Made-up diseases of group A',
      parents: [],
      notSelectable: true,
    });
    expect(concepts.get('A00-A49')).toMatchObject({ parents: ['A00-A99'], notSelectable: true });
    expect(concepts.get('A00')).toMatchObject({
      display: 'Cholera',
      parents: ['A00-A49'],
      notSelectable: true,
    });
    expect(concepts.get('A00.1')).toMatchObject({ parents: ['A00'], notSelectable: true });
    expect(concepts.get('A00.11')).toMatchObject({
      display: 'Cholera, site 1, detail 1',
      parents: ['A00.1'],
      notSelectable: false,
    });
    expect(concepts.get('A00.2')).toMatchObject({ display: 'Cholera, site 2 & other', notSelectable: false });
    // A category without sub-codes is billable.
    expect(concepts.get('A02')).toMatchObject({ notSelectable: false });
  });

  it('adds the 7th-character codes a sevenChrDef implies, padded with X, under each leaf code', async () => {
    const { concepts } = await read(dir);
    expect(seventhCharacterCode('S02.0', 'A')).toBe('S02.0XXA');
    expect(seventhCharacterCode('T07', 'D')).toBe('T07.XXXD');
    // Chapter 2 (B), category B00 declares A/D/S.
    expect(concepts.get('B00.0')).toMatchObject({ notSelectable: true });
    expect(concepts.get('B00.0XXA')).toMatchObject({
      parents: ['B00.0'],
      display: expect.stringMatching(/, initial encounter$/),
    });
    expect(concepts.get('B00.11XS')).toMatchObject({
      parents: ['B00.11'],
      display: expect.stringMatching(/, sequela$/),
    });
    expect(concepts.get('B00.1XXA')).toBeUndefined();
    expect(concepts.has('B01.0XXA')).toBe(false);
    expect(concepts.get('B00.2XXD')!.display).toBe('Hypertension, site 2 & other, subsequent encounter');
    expect(concepts.get('B02')!.display).toBe('Sjögren syndrome type 2');
  });

  it('names the file, line and column of a fault', async () => {
    const broken = generateRelease('gen-icd10cm.mjs', ['--chapters', '1']);
    try {
      const [file] = fs.readdirSync(broken);
      const full = path.join(broken, file);
      const text = fs.readFileSync(full, 'utf8');
      fs.writeFileSync(full, text.replace('<name>A01.1</name>', '<name>A01;1</name>'));
      const bad = await icd10cmFormat.read(folderFiles(broken), {}).catch((e: unknown) => e);
      expect(bad).toBeInstanceOf(ReleaseFormatError);
      const line = text.split('\n').findIndex((l) => l.includes('<name>A01.1</name>'));
      expect((bad as Error).message).toBe(
        `${broken}/${file}:${line + 1}:17: diag name "A01;1" is not an ICD-10-CM code`,
      );

      fs.writeFileSync(full, text.replace('</desc>\n      <diag>', '</desc>\n      <diag'));
      const xml = await icd10cmFormat.read(folderFiles(broken), {}).catch((e: unknown) => e);
      expect((xml as Error).message).toMatch(new RegExp(`^${broken}/${file}:\\d+:\\d+: `));
    } finally {
      fs.rmSync(broken, { recursive: true, force: true });
    }
  });
});
