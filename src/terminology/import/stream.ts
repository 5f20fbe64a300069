// The streamed import of one CodeSystem (scan.ts hands over its head, then its top-level concepts one at a
// time): each top-level concept is validated and flattened with its children, its rows are written into the
// CodeSystem's new generation in batches and added to the index builder, then the generation is made live with
// the resource row, as every CodeSystem write does (nothing is visible before; a failure leaves nothing). Memory:
// one batch of rows and the index builder's typed arrays, not the concept tree nor a row object per concept.
import type { Database } from '../../db/database.js';
import { ApiError, badRequest } from '../../core/errors.js';
import {
  CodeSystemIndexBuilder,
  codeSystemMetaOf,
  flattenSteps,
  type CodeSystemConcept,
  type CodeSystemResource,
  type ConceptInput,
} from '../engine/index.js';
import { EXCLUSIVE_BATCH_ROWS, insertBatchSize, type ConceptGenerations } from '../generations.js';
import { validateCodeSystem, validateCodeSystemSteps } from '../repository.js';
import { writeCodeSystemInParts } from '../resource-write.js';
import { MIN_FILE_CONCEPTS } from '../index-cache.js';
import type { ImportItem } from './scan.js';
import {
  writeImportedIndex,
  type ImportedResource,
  type ImportOptions,
  type ImportProgress,
} from './common.js';

/** Thrown when a CodeSystem cannot be taken from the stream exactly: the caller reads it again whole. */
export class StreamFallback extends Error {}

type StreamedItem = Extract<ImportItem, { head: unknown }>;

/** Imports one streamed CodeSystem (see the file comment). Throws ApiError when it is refused (nothing written),
 * StreamFallback when it must be read whole. */
export async function importStreamedCodeSystem(
  db: Database,
  generations: ConceptGenerations,
  item: StreamedItem,
  projectId: string | null,
  progress: ImportProgress,
  options: ImportOptions,
): Promise<ImportedResource> {
  const head = item.head;
  if (head.resourceType !== 'CodeSystem') throw new StreamFallback();
  validateCodeSystem(head as unknown as CodeSystemResource);
  const cs = head as unknown as CodeSystemResource;
  const url = typeof head.url === 'string' ? head.url : undefined;
  const version = typeof head.version === 'string' ? head.version : undefined;
  // The index builder also finds codes repeated under another top-level concept (the validation of one top-level
  // concept sees only its own subtree).
  const builder = new CodeSystemIndexBuilder(url ? codeSystemMetaOf(cs) : { url: '' });
  const total = typeof head.count === 'number' && head.count > 0 ? head.count : -1;
  progress.onResourceStart?.('CodeSystem', url, total);
  const batch = options.exclusive ? EXCLUSIVE_BATCH_ROWS : insertBatchSize(db);

  async function* parts(): AsyncGenerator<ConceptInput[]> {
    let rows: ConceptInput[] = [];
    let index = 0;
    const missingChild = () => {
      throw new StreamFallback();
    };
    for await (const element of item.concepts) {
      const at = index++;
      const one = { url: cs.url, concept: [element as CodeSystemConcept] } as CodeSystemResource;
      try {
        for (const _ of validateCodeSystemSteps(one));
      } catch (err) {
        // Its paths say concept[0]: the top-level concept's own index.
        if (err instanceof ApiError)
          throw badRequest(err.message.replace('CodeSystem.concept[0]', `CodeSystem.concept[${at}]`));
        throw err;
      }
      const start = rows.length;
      for (const _ of flattenSteps({ concept: one.concept, property: cs.property }, rows, missingChild));
      for (let i = start; i < rows.length; i++) {
        const code = rows[i].code;
        if (builder.has(code))
          throw badRequest(`Duplicate code "${code}" in CodeSystem`, [`CodeSystem.concept[${at}]`]);
        builder.add(rows[i]);
      }
      if (rows.length >= batch) {
        yield rows;
        rows = [];
      }
    }
    // Members after `concept` may change how the concepts read (`property`) or which CodeSystem this is.
    const tail = item.tail();
    if (tail && Object.keys(tail).length > 0) throw new StreamFallback();
    if (rows.length > 0) yield rows;
  }

  const saved = await writeCodeSystemInParts(db, generations, head, parts(), {
    projectId,
    replaceSame: true,
    onProgress: progress.onConcepts,
    exclusive: options.exclusive,
  });
  if (url && saved.concepts >= MIN_FILE_CONCEPTS && options.indexDir)
    await writeImportedIndex(db, options.indexDir, saved.id, cs, builder);
  const done: ImportedResource = {
    type: 'CodeSystem',
    id: saved.id,
    url,
    version,
    concepts: saved.concepts,
    created: saved.created,
  };
  progress.onResourceDone?.(done);
  return done;
}
