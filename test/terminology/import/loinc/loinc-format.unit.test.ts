import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loincFormat } from '../../../../src/terminology/import/loinc/format.js';
import { ReleaseFormatError, type ReleaseContent } from '../../../../src/terminology/import/release/types.js';
import type { ConceptInput } from '../../../../src/terminology/engine/index.js';
import { folderFiles, generateRelease } from '../release-dir.js';

async function all(content: ReleaseContent): Promise<Map<string, ConceptInput>> {
  const out = new Map<string, ConceptInput>();
  for await (const batch of content.codeSystems[0].concepts()) for (const c of batch) out.set(c.code, c);
  return out;
}

describe('LOINC release format', () => {
  let dir: string;
  beforeAll(() => {
    dir = generateRelease('gen-loinc.mjs', ['--terms', '300', '--version', '2.77']);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('is detected by Loinc.csv and its header, and nothing else is', async () => {
    expect(await loincFormat.detect(folderFiles(dir))).toBe(true);
    expect(await loincFormat.detect(folderFiles(path.join(dir, 'AccessoryFiles')))).toBe(false);
  });

  it('reads terms, answers and answer lists into http://loinc.org at the release version', async () => {
    const content = await loincFormat.read(folderFiles(dir), {});
    const { head } = content.codeSystems[0];
    expect(head).toMatchObject({
      url: 'http://loinc.org',
      version: '2.77',
      content: 'complete',
      count: 300 + 4 + 10,
    });
    const concepts = await all(content);
    expect(concepts.size).toBe(314);
    const glucose = concepts.get('1000-9')!;
    expect(glucose.display).toMatch(/^Glucose \[Mass concentration\] in [A-Z]/);
    expect(glucose.properties).toEqual(
      expect.arrayContaining([
        { code: 'COMPONENT', valueString: 'Glucose' },
        { code: 'PROPERTY', valueString: 'MCnc' },
        { code: 'STATUS', valueString: 'ACTIVE' },
        { code: 'VersionLastChanged', valueString: '2.77' },
      ]),
    );
    expect(glucose.designations).toEqual(
      expect.arrayContaining([
        {
          language: 'en-US',
          use: { system: 'http://loinc.org', code: 'SHORTNAME', display: 'Short name' },
          value: expect.stringMatching(/^Glucose /),
        },
        expect.objectContaining({ language: 'de-DE', value: expect.stringMatching(/^Glukose \[/) }),
      ]),
    );
    // The quoted definition with a line break inside its field.
    expect(concepts.get('1014-0')!.definition).toBe('A "quoted" definition\nover two lines');
    const deprecated = [...concepts.values()].filter((c) =>
      c.properties?.some((p) => p.code === 'STATUS' && p.valueString === 'DEPRECATED'),
    );
    expect(deprecated.length).toBeGreaterThan(0);
    expect(deprecated.every((c) => c.inactive === true)).toBe(true);
    expect([...concepts.values()].filter((c) => c.inactive).length).toBe(deprecated.length);
    // Answer lists and answers are concepts; an ordinal term links its list.
    expect(concepts.get('LL100-8')).toMatchObject({ display: 'Positive|Negative|Indeterminate' });
    const linked = [...concepts.values()].find((c) => c.properties?.some((p) => p.code === 'answer-list'))!;
    expect(linked.properties!.find((p) => p.code === 'SCALE_TYP')!.valueString).toBe('Ord');
  });

  it('writes one ValueSet per answer list, answers in sequence order; none for an external list', async () => {
    const content = await loincFormat.read(folderFiles(dir), {});
    const sets: Array<Record<string, any>> = []; // eslint-disable-line @typescript-eslint/no-explicit-any -- JSON read back
    for await (const vs of content.valueSets!()) sets.push(vs);
    expect(sets.map((s) => s.url)).toEqual([
      'http://loinc.org/vs/LL100-8',
      'http://loinc.org/vs/LL101-6',
      'http://loinc.org/vs/LL102-4',
    ]);
    const concepts = await all(content);
    const first = sets[0].compose.include[0];
    expect(first).toMatchObject({ system: 'http://loinc.org', version: '2.77' });
    expect(first.concept.map((c: { display: string }) => c.display)).toEqual([
      'Positive',
      'Negative',
      'Indeterminate',
    ]);
    for (const c of first.concept) expect(concepts.get(c.code)?.display).toBe(c.display);
  });

  it('names the file, line and column of a malformed record', async () => {
    const broken = generateRelease('gen-loinc.mjs', ['--terms', '20']);
    try {
      const file = path.join(broken, 'LoincTable/Loinc.csv');
      const lines = fs.readFileSync(file, 'utf8').split('\r\n');
      lines[6] = lines[6].replace(/^"[^"]*"/, '"12X45-6"');
      fs.writeFileSync(file, lines.join('\r\n'));
      const err = await loincFormat.read(folderFiles(broken), {}).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ReleaseFormatError);
      expect((err as Error).message).toBe(
        `${broken}/LoincTable/Loinc.csv:8:1: LOINC_NUM: "12X45-6" is not a LOINC code`,
      );

      lines[6] = lines[6].replace('"12X45-6"', '"1042-1"').replace(/,"[^"]*"$/, ',"x" y"');
      fs.writeFileSync(file, lines.join('\r\n'));
      const quote = await loincFormat.read(folderFiles(broken), {}).catch((e: unknown) => e);
      expect((quote as Error).message).toContain(
        `${broken}/LoincTable/Loinc.csv:8:40: Invalid Closing Quote`,
      );

      fs.writeFileSync(file, lines[0].replace('"STATUS",', '') + '\r\n');
      const header = await loincFormat.read(folderFiles(broken), {}).catch((e: unknown) => e);
      expect((header as Error).message).toBe(`${broken}/LoincTable/Loinc.csv:1:1: the header lacks STATUS`);
    } finally {
      fs.rmSync(broken, { recursive: true, force: true });
    }
  });
});
