// The ICD-10-CM release format: the tabular list becomes `http://hl7.org/fhir/sid/icd-10-cm` at the list's version,
// chapters (coded by their range, `A00-B99`), sections (by their id, `A00-A09`), categories and subcategories as the
// hierarchy, and the 7th-character codes a `sevenChrDef` implies (`S02.0XXA`: the code padded with the placeholder X
// to six characters, then the 7th). Only codes that can be billed are selectable: chapters, sections, codes with
// sub-codes and codes that take a 7th character are marked notSelectable.
import type { CodeSystemResource, ConceptInput } from '../../engine/index.js';
import { fileStart } from '../release/first-line.js';
import type { ReleaseFiles, ReleaseFormat } from '../release/types.js';
import { readTabular, type TabularNode } from './tabular.js';

const BATCH = 2000;

/** The tabular lists among a release's files: the XML files (`icd10cm_tabular*.xml` when there are such) whose
 * root is `<ICD10CM.tabular>`; `first`: stop at the first one found. */
async function tabularLists(files: ReleaseFiles, first = false): Promise<string[]> {
  const xml = files.list().filter((p) => p.toLowerCase().endsWith('.xml'));
  const named = xml.filter((p) => /(^|\/)icd10cm[-_]tabular[^/]*\.xml$/i.test(p));
  const found: string[] = [];
  for (const f of named.length > 0 ? named : xml) {
    if (!(await fileStart(files, f, 2048)).includes('<ICD10CM.tabular')) continue;
    found.push(f);
    if (first) break;
  }
  return found;
}

/** The 7th-character code of a code (`S02.0` + `A` -> `S02.0XXA`). */
export function seventhCharacterCode(code: string, char: string): string {
  const plain = code.replace('.', '').padEnd(6, 'X');
  return `${plain.slice(0, 3)}.${plain.slice(3)}${char}`;
}

function head(version: string, count: number): CodeSystemResource {
  return {
    resourceType: 'CodeSystem',
    url: 'http://hl7.org/fhir/sid/icd-10-cm',
    version,
    name: 'ICD10CM',
    title: 'International Classification of Diseases, 10th Revision, Clinical Modification (ICD-10-CM)',
    status: 'active',
    publisher: 'National Center for Health Statistics (NCHS)',
    caseSensitive: false,
    hierarchyMeaning: 'is-a',
    content: 'complete',
    count,
    property: [
      { code: 'notSelectable', uri: 'http://hl7.org/fhir/concept-properties#notSelectable', type: 'boolean' },
      { code: 'kind', type: 'code', description: 'chapter, section, category or code' },
    ],
  } as CodeSystemResource;
}

function* concepts(nodes: TabularNode[]): Generator<ConceptInput> {
  for (const n of nodes) {
    const leaf = n.children === 0;
    const parents = n.parent >= 0 ? [nodes[n.parent].code] : [];
    const kind = n.kind === 'code' ? (n.code.includes('.') ? 'code' : 'category') : n.kind;
    const billable = n.kind === 'code' && leaf && !n.seventh;
    yield {
      code: n.code,
      display: n.display,
      parents,
      notSelectable: !billable,
      properties: [
        { code: 'kind', valueCode: kind },
        { code: 'notSelectable', valueBoolean: !billable },
      ],
    };
    if (n.kind === 'code' && leaf && n.seventh)
      for (const [char, meaning] of n.seventh)
        yield {
          code: seventhCharacterCode(n.code, char),
          display: `${n.display}, ${meaning}`,
          parents: [n.code],
          properties: [
            { code: 'kind', valueCode: 'code' },
            { code: 'notSelectable', valueBoolean: false },
          ],
        };
  }
}

/** The ICD-10-CM release format (see the file comment). */
export const icd10cmFormat: ReleaseFormat = {
  name: 'icd10cm',
  async detect(files) {
    return (await tabularLists(files, true)).length > 0;
  },
  async read(files) {
    const candidates = await tabularLists(files);
    if (candidates.length !== 1)
      throw new Error(
        `${files.source}: ${candidates.length === 0 ? 'no' : 'more than one'} ICD-10-CM tabular list (<ICD10CM.tabular>)`,
      );
    const { version, nodes } = await readTabular(files, candidates[0]);
    let count = 0;
    for (const _ of concepts(nodes)) count++;
    return {
      codeSystems: [
        {
          head: head(version, count),
          async *concepts() {
            let batch: ConceptInput[] = [];
            for (const c of concepts(nodes)) {
              batch.push(c);
              if (batch.length >= BATCH) {
                yield batch;
                batch = [];
              }
            }
            if (batch.length > 0) yield batch;
          },
        },
      ],
    };
  },
};
