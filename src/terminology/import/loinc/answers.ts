// LOINC answer lists (`AnswerFile/AnswerList.csv`) and their links to LOINC terms (`LoincAnswerListLink.csv`):
// each list becomes a ValueSet `http://loinc.org/vs/<LL id>` of its answers in their order, each answer (`LA`) and
// list (`LL`) a concept of `http://loinc.org`, and each linked term gets an `answer-list` property.
import { csvRows, type CsvRow } from '../release/csv.js';
import type { ReleaseFiles } from '../release/types.js';
import { ANSWER_LINK_REQUIRED, ANSWER_LIST_REQUIRED, LOINC_CODE } from './columns.js';

export interface AnswerList {
  name: string;
  /** Its answers in sequence order (a list defined outside LOINC has none). */
  answers: Array<{ code: string; display: string; sequence: number }>;
}

export interface AnswerLists {
  lists: Map<string, AnswerList>;
  /** Answer code -> its display (the first list's text). */
  answers: Map<string, string>;
  /** LOINC term -> the answer lists linked to it. */
  links: Map<string, string[]>;
}

function code(row: CsvRow, column: string, prefix: string): string {
  const value = row.get(column).trim();
  if (!LOINC_CODE.test(value) || !value.startsWith(prefix))
    throw row.error(column, `"${value.slice(0, 40)}" is not a LOINC ${prefix} code`);
  return value;
}

/** Reads the answer lists and their links (`linkPath` may be absent: no `answer-list` properties). */
export async function readAnswerLists(
  files: ReleaseFiles,
  listPath: string,
  linkPath: string | undefined,
  isTerm: (code: string) => boolean,
): Promise<AnswerLists> {
  const lists = new Map<string, AnswerList>();
  const answers = new Map<string, string>();
  for await (const row of csvRows(files, listPath, ANSWER_LIST_REQUIRED)) {
    const id = code(row, 'AnswerListId', 'LL');
    let list = lists.get(id);
    if (!list) lists.set(id, (list = { name: row.get('AnswerListName').trim() || id, answers: [] }));
    const answerId = row.get('AnswerStringId').trim();
    // Externally defined lists have a row without answers.
    if (answerId === '') continue;
    const answer = code(row, 'AnswerStringId', 'LA');
    const display = row.get('DisplayText').trim();
    const seqText = row.get('SequenceNumber').trim();
    const sequence = seqText === '' ? list.answers.length + 1 : Number(seqText);
    if (!Number.isInteger(sequence)) throw row.error('SequenceNumber', `"${seqText}" is not a whole number`);
    list.answers.push({ code: answer, display, sequence });
    if (!answers.has(answer)) answers.set(answer, display);
  }
  for (const list of lists.values()) list.answers.sort((a, b) => a.sequence - b.sequence);

  const links = new Map<string, string[]>();
  if (linkPath) {
    for await (const row of csvRows(files, linkPath, ANSWER_LINK_REQUIRED)) {
      const term = row.get('LoincNumber').trim();
      if (!isTerm(term)) throw row.error('LoincNumber', `"${term.slice(0, 40)}" is not a term of Loinc.csv`);
      const list = code(row, 'AnswerListId', 'LL');
      if (!lists.has(list)) throw row.error('AnswerListId', `"${list}" is not a list of AnswerList.csv`);
      const linked = links.get(term);
      if (!linked) links.set(term, [list]);
      else if (!linked.includes(list)) linked.push(list);
    }
  }
  return { lists, answers, links };
}

/** The ValueSet of one answer list. */
export function answerListValueSet(id: string, list: AnswerList, version: string): Record<string, unknown> {
  return {
    resourceType: 'ValueSet',
    url: `http://loinc.org/vs/${id}`,
    version,
    name: id.replace(/-/g, '_'),
    title: list.name,
    status: 'active',
    publisher: 'Regenstrief Institute, Inc.',
    copyright:
      'This content from LOINC(R) is copyright (C) Regenstrief Institute, Inc. and the LOINC Committee, and available at no cost under the license at http://loinc.org/license',
    compose: {
      include: [
        {
          system: 'http://loinc.org',
          version,
          concept: list.answers.map((a) => ({ code: a.code, display: a.display })),
        },
      ],
    },
  };
}
