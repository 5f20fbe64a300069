// What the import's parts share: progress callbacks, options, results, and writing an imported index file.
import type { Database } from '../../db/database.js';
import {
  CodeSystemIndexBuilder,
  codeSystemMetaOf,
  writeIndexFile,
  type CodeSystemResource,
  type ConceptInput,
} from '../engine/index.js';
import type { TerminologyType } from '../repository.js';
import { indexFileOf, indexStamp } from '../index-cache.js';

export interface ImportProgress {
  /** A resource is about to be written (concepts: its concept count, 0 for a ValueSet). */
  onResourceStart?(type: TerminologyType, url: string | undefined, concepts: number): void;
  /** Concepts of the current resource written so far. */
  onConcepts?(done: number): void;
  onResourceDone?(result: ImportedResource): void;
}

export interface ImportOptions {
  /** Where the server keeps index files (the CLI passes DATA_DIR/terminology-index; none: no file is written): a CodeSystem
   * of 10,000 concepts or more gets its index written there, so the server's first request after the import does
   * not build it. */
  indexDir?: string;
  /** Nothing else uses the database meanwhile (the CLI): bigger statements, WAL synced at each publish only. */
  exclusive?: boolean;
}

export interface ImportedResource {
  type: TerminologyType;
  id: string;
  url?: string;
  version?: string;
  concepts: number;
  created: boolean;
}

/** Builds the index of an imported CodeSystem from the concepts in hand (or its builder, fed while they were
 * written) and writes the server's index file. */
export async function writeImportedIndex(
  db: Database,
  dir: string,
  id: string,
  resource: CodeSystemResource,
  concepts: ConceptInput[] | CodeSystemIndexBuilder,
): Promise<void> {
  const [row] = await db.sql<{ versionId: number; lastUpdated: string }>(
    `SELECT "versionId", to_char("updatedAt", 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "lastUpdated"
     FROM "CodeSystem" WHERE id = $1::uuid`,
    [id],
  );
  if (!row) return;
  const meta = codeSystemMetaOf(resource, id, row.versionId);
  const index =
    concepts instanceof CodeSystemIndexBuilder
      ? concepts.finish(meta)
      : CodeSystemIndexBuilder.build(meta, concepts);
  await writeIndexFile(indexFileOf(dir, id), index, indexStamp(id, row.versionId, row.lastUpdated));
}
