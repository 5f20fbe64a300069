// Reads CDC's ICD-10-CM tabular list (`icd10cm_tabular_<year>.xml`) with a streaming XML parser into the list of
// its chapters, sections (blocks) and codes, each with its parent and the 7th-character extensions in force
// (`sevenChrDef` applies to the code that declares it and every code below, the nearest one winning).
import { SaxesParser } from 'saxes';
import { ReleaseFormatError, releaseFileName, type ReleaseFiles } from '../release/types.js';

export type TabularKind = 'chapter' | 'section' | 'code';

export interface TabularNode {
  code: string;
  display: string;
  kind: TabularKind;
  /** Index of the parent node (-1: none). */
  parent: number;
  children: number;
  /** The 7th characters in force here: char -> its meaning. */
  seventh?: Map<string, string>;
}

/** A code of the tabular list: a category (`A00`) or a subcategory (`A00.1`, `S02.11`). */
const CODE = /^[A-Z]\d[0-9A-Z](?:\.[0-9A-Z]{1,3})?$/;

/** Parses the tabular list; throws ReleaseFormatError naming the file, line and column of a fault. */
export async function readTabular(
  files: ReleaseFiles,
  path: string,
): Promise<{ version: string; nodes: TabularNode[] }> {
  const where = releaseFileName(files, path);
  const parser = new SaxesParser({ position: true });
  const nodes: TabularNode[] = [];
  const seen = new Set<string>();
  const stack: string[] = [];
  /** Open chapter/section/diag nodes (their index; -1 while a node's code is not known yet). */
  const open: Array<{
    index: number;
    tag: string;
    line: number;
    column: number;
    id?: string;
    name?: string;
    /** Where the name's text starts. */
    nameLine?: number;
    nameColumn?: number;
    desc?: string;
    seventh?: Map<string, string>;
  }> = [];
  let version = '';
  let text = '';
  let extChar: string | undefined;
  const fail = (detail: string, line = parser.line, column = parser.column + 1) =>
    new ReleaseFormatError(where, line, column, detail);
  let fault: ReleaseFormatError | undefined;

  /** Makes the innermost open element a node once its name and description are known. */
  const materialise = () => {
    const top = open[open.length - 1];
    if (!top || top.index >= 0) return;
    const parentEntry = open.length > 1 ? open[open.length - 2] : undefined;
    const parent = parentEntry ? parentEntry.index : -1;
    let code: string;
    const display = (top.desc ?? '').trim();
    if (top.tag === 'chapter') {
      const range = /\(([A-Z]\d\d-[A-Z]\d\d)\)\s*$/.exec(display);
      code = range ? range[1] : `chapter-${(top.name ?? '').trim()}`;
    } else if (top.tag === 'section') code = (top.id ?? '').trim();
    else {
      code = (top.name ?? '').trim();
      if (!CODE.test(code))
        throw fail(
          `diag name "${code.slice(0, 40)}" is not an ICD-10-CM code`,
          top.nameLine ?? top.line,
          top.nameColumn ?? top.column,
        );
    }
    if (code === '')
      throw fail(`a ${top.tag} without ${top.tag === 'section' ? 'an id' : 'a name'}`, top.line, top.column);
    if (seen.has(code)) throw fail(`${code} is listed twice`, top.line, top.column);
    seen.add(code);
    const inherited =
      parentEntry?.index !== undefined && parentEntry.index >= 0
        ? nodes[parentEntry.index].seventh
        : undefined;
    top.index = nodes.length;
    nodes.push({
      code,
      display: display.replace(/\s*\([A-Z]\d\d-[A-Z]\d\d\)\s*$/, '') || code,
      kind: top.tag === 'chapter' ? 'chapter' : top.tag === 'section' ? 'section' : 'code',
      parent,
      children: 0,
      seventh: top.seventh ?? inherited,
    });
    if (parent >= 0) nodes[parent].children++;
  };

  parser.on('opentag', (tag) => {
    if (fault) return;
    const name = tag.name;
    if (stack.length === 0 && name !== 'ICD10CM.tabular') {
      fault = fail(`the root element is <${name}>, not <ICD10CM.tabular>`);
      return;
    }
    const inside = stack[stack.length - 1];
    if (name === 'chapter' || name === 'section' || name === 'diag') {
      try {
        materialise();
      } catch (err) {
        fault = err as ReleaseFormatError;
        return;
      }
      const id = typeof tag.attributes.id === 'string' ? tag.attributes.id : undefined;
      open.push({ index: -1, tag: name, line: parser.line, column: parser.column + 1, id });
    } else if (name === 'name' && open.length > 0 && inside === open[open.length - 1].tag) {
      open[open.length - 1].nameLine = parser.line;
      open[open.length - 1].nameColumn = parser.column + 1;
    } else if (name === 'extension' && inside === 'sevenChrDef') {
      const c = tag.attributes.char;
      extChar = typeof c === 'string' ? c : undefined;
      if (!extChar || !/^[0-9A-Z]$/.test(extChar))
        fault = fail('a 7th-character extension without a char of one letter or digit');
    }
    stack.push(name);
    text = '';
  });
  parser.on('text', (t) => {
    text += t;
  });
  parser.on('closetag', (tag) => {
    if (fault) return;
    const name = tag.name;
    stack.pop();
    const parentTag = stack[stack.length - 1];
    const top = open[open.length - 1];
    try {
      if (name === 'version' && parentTag === 'ICD10CM.tabular') version = text.trim();
      else if (top && parentTag === top.tag && top.index < 0) {
        if (name === 'name') top.name = text;
        else if (name === 'desc') top.desc = text;
      }
      if (name === 'extension' && parentTag === 'sevenChrDef' && top && extChar) {
        // A definition belongs to the open diag; it comes after the diag's name and description.
        if (top.index >= 0) throw fail('sevenChrDef after a sub-code');
        (top.seventh ??= new Map()).set(extChar, text.trim());
      }
      if (name === 'chapter' || name === 'section' || name === 'diag') {
        materialise();
        open.pop();
      }
    } catch (err) {
      fault = err as ReleaseFormatError;
    }
    text = '';
  });
  parser.on('error', (err) => {
    fault ??= fail(err.message.replace(/^[^:]*:\d+:\d+: /, ''));
  });

  // Decoded by the stream: a character split between two chunks stays whole.
  const stream = files.open(path).setEncoding('utf8');
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      parser.write(chunk);
      if (fault) throw fault;
    }
    parser.close();
    if (fault) throw fault;
  } finally {
    stream.destroy();
  }
  if (version === '') throw new ReleaseFormatError(where, 1, 1, 'no <version> under <ICD10CM.tabular>');
  if (nodes.length === 0) throw new ReleaseFormatError(where, 1, 1, 'no chapters');
  return { version, nodes };
}
