// The LOINC release format: `LoincTable/Loinc.csv` (required), the AnswerFile tables and the linguistic variants
// (optional) become the code system `http://loinc.org` (terms, answer lists and answers as concepts) and one ValueSet
// per answer list. The version is the highest `VersionLastChanged` of the table (a release changes some term).
import type { CodeSystemResource, ConceptInput, ConceptProperty, Designation } from '../../engine/index.js';
import { csvRows, findFile } from '../release/csv.js';
import { firstLine } from '../release/first-line.js';
import type { ReleaseContent, ReleaseFiles, ReleaseFormat } from '../release/types.js';
import { answerListValueSet, readAnswerLists, type AnswerLists } from './answers.js';
import { LOINC_CODE, LOINC_PROPERTIES, LOINC_REQUIRED, loincUse } from './columns.js';
import { readVariants } from './variants.js';

const BATCH = 2000;
const STATUSES = new Set(['ACTIVE', 'TRIAL', 'DISCOURAGED', 'DEPRECATED']);

/** Compares LOINC versions (`2.9` < `2.77`) by their numeric parts. */
export function compareLoincVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** First pass over Loinc.csv: every term checked, the set of terms, the version. */
async function scanTable(
  files: ReleaseFiles,
  table: string,
): Promise<{ terms: Set<string>; version: string }> {
  const terms = new Set<string>();
  let version = '';
  for await (const row of csvRows(files, table, LOINC_REQUIRED)) {
    const code = row.get('LOINC_NUM').trim();
    if (!LOINC_CODE.test(code) || code.startsWith('L'))
      throw row.error('LOINC_NUM', `"${code.slice(0, 40)}" is not a LOINC code`);
    if (terms.has(code)) throw row.error('LOINC_NUM', `${code} is listed twice`);
    terms.add(code);
    const status = row.get('STATUS').trim();
    if (!STATUSES.has(status)) throw row.error('STATUS', `"${status.slice(0, 40)}" is not a LOINC status`);
    const changed = row.get('VersionLastChanged').trim();
    if (changed !== '') {
      if (!/^\d+(\.\d+)*$/.test(changed))
        throw row.error('VersionLastChanged', `"${changed.slice(0, 20)}" is not a version`);
      if (version === '' || compareLoincVersions(changed, version) > 0) version = changed;
    }
  }
  if (terms.size === 0) throw new Error(`${table}: no LOINC terms`);
  return { terms, version: version || 'unknown' };
}

function head(version: string, count: number, withAnswers: boolean): CodeSystemResource {
  const property: Array<{ code: string; type: string; description?: string }> = LOINC_PROPERTIES.map(
    (code) => ({
      code,
      type: 'string',
    }),
  );
  if (withAnswers)
    property.push({ code: 'answer-list', type: 'Coding', description: 'The answer lists of a term' });
  return {
    resourceType: 'CodeSystem',
    url: 'http://loinc.org',
    version,
    name: 'LOINC',
    title: 'LOINC Code System',
    status: 'active',
    publisher: 'Regenstrief Institute, Inc.',
    copyright:
      'This content from LOINC(R) is copyright (C) Regenstrief Institute, Inc. and the LOINC Committee, and available at no cost under the license at http://loinc.org/license',
    caseSensitive: false,
    valueSet: 'http://loinc.org/vs',
    content: 'complete',
    count,
    property,
  } as CodeSystemResource;
}

function termConcept(
  get: (column: string) => string,
  answers: AnswerLists | undefined,
  variants: Map<string, Designation[]>,
): ConceptInput {
  const code = get('LOINC_NUM').trim();
  const fsn = ['COMPONENT', 'PROPERTY', 'TIME_ASPCT', 'SYSTEM', 'SCALE_TYP', 'METHOD_TYP']
    .map((c) => get(c).trim())
    .join(':')
    .replace(/:+$/, '');
  const display = get('LONG_COMMON_NAME').trim() || fsn;
  const designations: Designation[] = [];
  const short = get('SHORTNAME').trim();
  if (short) designations.push({ language: 'en-US', use: loincUse('SHORTNAME', 'Short name'), value: short });
  const consumer = get('DisplayName').trim();
  if (consumer && consumer !== display)
    designations.push({ language: 'en-US', use: loincUse('DisplayName', 'Display name'), value: consumer });
  const more = variants.get(code);
  if (more) designations.push(...more);
  const properties: ConceptProperty[] = [];
  for (const p of LOINC_PROPERTIES) {
    const v = get(p).trim();
    if (v !== '') properties.push({ code: p, valueString: v });
  }
  for (const list of answers?.links.get(code) ?? [])
    properties.push({ code: 'answer-list', valueCoding: { system: 'http://loinc.org', code: list } });
  const definition = get('DefinitionDescription').trim();
  return {
    code,
    display,
    definition: definition || null,
    inactive: get('STATUS').trim() === 'DEPRECATED',
    designations: designations.length > 0 ? designations : null,
    properties,
  };
}

/** The LOINC release format (see the file comment). */
export const loincFormat: ReleaseFormat = {
  name: 'loinc',
  async detect(files) {
    const table = findFile(files, 'Loinc.csv');
    return table !== undefined && /^"?LOINC_NUM"?,/.test(await firstLine(files, table));
  },
  async read(files): Promise<ReleaseContent> {
    const table = findFile(files, 'Loinc.csv');
    if (!table) throw new Error(`${files.source}: no LoincTable/Loinc.csv`);
    const { terms, version } = await scanTable(files, table);
    const isTerm = (c: string) => terms.has(c);
    const listPath = findFile(files, 'AnswerList.csv');
    const answers = listPath
      ? await readAnswerLists(files, listPath, findFile(files, 'LoincAnswerListLink.csv'), isTerm)
      : undefined;
    const variantList = findFile(files, 'LinguisticVariants.csv');
    const variants = variantList ? await readVariants(files, variantList, isTerm) : new Map();
    const extra = answers ? answers.lists.size + answers.answers.size : 0;
    return {
      codeSystems: [
        {
          head: head(version, terms.size + extra, answers !== undefined),
          async *concepts() {
            let batch: ConceptInput[] = [];
            for await (const row of csvRows(files, table, LOINC_REQUIRED)) {
              batch.push(termConcept(row.get, answers, variants));
              if (batch.length >= BATCH) {
                yield batch;
                batch = [];
              }
            }
            for (const [code, list] of answers?.lists ?? [])
              batch.push({ code, display: list.name, properties: [] });
            for (const [code, display] of answers?.answers ?? []) batch.push({ code, display });
            if (batch.length > 0) yield batch;
          },
        },
      ],
      async *valueSets() {
        for (const [id, list] of answers?.lists ?? [])
          if (list.answers.length > 0) yield answerListValueSet(id, list, version);
      },
    };
  },
};
