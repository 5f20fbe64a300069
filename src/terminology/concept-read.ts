// A CodeSystem's concepts for a response: whole (objects, for GraphQL and bots, and small code systems) or streamed
// (JSON text paged from the database, for REST), both rebuilt as the same nested tree (concept-tree.ts). The
// concepts of a write just made come from the rows in memory, the same way.
import type { Database } from '../db/database.js';
import { yieldIfHeld } from '../core/turns.js';
import { LazyJson } from '../fhir/lazy-json.js';
import type { CodeSystemConcept, ConceptInput } from './engine/index.js';
import { conceptPageStream, readConceptPages } from './concept-pages.js';
import { ConceptTreeBuilder, ConceptTreeText, TREE_ROW_COLUMNS, type TreeRow } from './concept-tree.js';
import type { ConceptGenerations } from './generations.js';

/** A CodeSystem with at least this many concepts is streamed by REST (and is a large request); smaller ones are
 * returned whole (a few pages). */
export const STREAM_MIN_CONCEPTS = 10_000;

/** A live generation to read. */
export interface GenerationRef {
  id: string;
  count: number;
}

type PagedRow = TreeRow & { ordinal: number };

/** The concept tree of a generation as objects. */
export async function loadConceptTree(
  db: Database,
  generations: ConceptGenerations,
  gen: GenerationRef,
): Promise<CodeSystemConcept[]> {
  const tree = new ConceptTreeBuilder();
  await readConceptPages<PagedRow>(db, generations, gen.id, TREE_ROW_COLUMNS, gen.count, (rows) => {
    for (const r of rows) tree.push(r);
  });
  return tree.roots;
}

/** The concept tree of a generation as JSON text, paged from the database as it is written; `onClose` runs once
 * the value has been written or abandoned. */
export function streamConceptTree(
  db: Database,
  generations: ConceptGenerations,
  gen: GenerationRef,
  onClose?: () => void,
): LazyJson {
  return new LazyJson(async function* () {
    const tree = new ConceptTreeText();
    for await (const rows of conceptPageStream<PagedRow>(
      db,
      generations,
      gen.id,
      TREE_ROW_COLUMNS,
      gen.count,
    )) {
      let text = '';
      for (const r of rows) text += tree.push(r);
      yield text;
    }
    yield tree.end();
  }, onClose);
}

/** A write's concept row as the tree wants it. */
function treeRowOf(r: ConceptInput): TreeRow {
  return {
    code: r.code,
    display: r.display ?? null,
    definition: r.definition ?? null,
    parent: r.parents?.[0] ?? null,
    designations: r.designations ? JSON.stringify(r.designations) : null,
    properties: r.properties ? JSON.stringify(r.properties) : null,
    extensions: r.extensions ? JSON.stringify(r.extensions) : null,
  };
}

/** The concept tree of rows in memory (a write's), as objects. */
export function treeOfRows(rows: readonly ConceptInput[]): CodeSystemConcept[] {
  const tree = new ConceptTreeBuilder();
  for (const r of rows) tree.push(treeRowOf(r));
  return tree.roots;
}

/** Rows serialised per piece of a streamed in-memory tree. */
const ROWS_PER_PIECE = 1000;

/** The concept tree of rows in memory (a write's) as JSON text, a piece at a time. */
export function streamRows(rows: readonly ConceptInput[]): LazyJson {
  return new LazyJson(async function* () {
    const tree = new ConceptTreeText();
    for (let start = 0; start < rows.length; start += ROWS_PER_PIECE) {
      let text = '';
      const end = Math.min(rows.length, start + ROWS_PER_PIECE);
      for (let i = start; i < end; i++) text += tree.push(treeRowOf(rows[i]));
      yield text;
      const t = yieldIfHeld();
      if (t) await t;
    }
    yield tree.end();
  });
}
