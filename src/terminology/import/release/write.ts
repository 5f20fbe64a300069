// Stores what a release format reads (types.ts): each code system through writeCodeSystemInParts (a new generation,
// made live with the resource row; a failure at any batch leaves nothing), its index built from the same batches
// and written as the server's index file, then the release's value sets; then running servers are told.
import type { Database } from '../../../db/database.js';
import { badRequest } from '../../../core/errors.js';
import { CodeSystemIndexBuilder, codeSystemMetaOf, type ConceptInput } from '../../engine/index.js';
import { ConceptGenerations } from '../../generations.js';
import { MIN_FILE_CONCEPTS } from '../../index-cache.js';
import { validateCodeSystem, validateValueSet } from '../../repository.js';
import { writeCodeSystemInParts, writeTerminologyResource } from '../../resource-write.js';
import { CHANGED_CHANNEL } from '../../service.js';
import {
  writeImportedIndex,
  type ImportedResource,
  type ImportOptions,
  type ImportProgress,
} from '../common.js';
import type { ReleaseCodeSystem, ReleaseFiles, ReleaseFormat, ReleaseOptions } from './types.js';

/** Reads a release with its format and stores it into a project (null: the shared definitions). */
export async function importRelease(
  db: Database,
  files: ReleaseFiles,
  format: ReleaseFormat,
  releaseOptions: ReleaseOptions,
  projectId: string | null,
  progress: ImportProgress = {},
  options: ImportOptions = {},
): Promise<ImportedResource[]> {
  const done: ImportedResource[] = [];
  const generations = new ConceptGenerations(db, undefined, options.exclusive === true);
  try {
    const content = await format.read(files, releaseOptions);
    for (const cs of content.codeSystems)
      done.push(await writeReleaseCodeSystem(db, generations, cs, projectId, progress, options));
    if (content.valueSets) {
      for await (const vs of content.valueSets()) {
        validateValueSet(vs);
        const url = typeof vs.url === 'string' ? vs.url : undefined;
        progress.onResourceStart?.('ValueSet', url, 0);
        const saved = await writeTerminologyResource(db, generations, 'ValueSet', vs, {
          projectId,
          replaceSame: true,
        });
        const r: ImportedResource = {
          type: 'ValueSet',
          id: saved.id,
          url,
          version: typeof vs.version === 'string' ? vs.version : undefined,
          concepts: 0,
          created: saved.created,
        };
        progress.onResourceDone?.(r);
        done.push(r);
      }
    }
  } finally {
    // Running servers (PostgreSQL) drop what they cached; a PGlite server is not running during an import.
    if (done.length > 0) await db.notify(CHANGED_CHANNEL, '*').catch(() => undefined);
    await generations.sweepNow();
  }
  return done;
}

async function writeReleaseCodeSystem(
  db: Database,
  generations: ConceptGenerations,
  cs: ReleaseCodeSystem,
  projectId: string | null,
  progress: ImportProgress,
  options: ImportOptions,
): Promise<ImportedResource> {
  const { head } = cs;
  validateCodeSystem(head);
  const builder = new CodeSystemIndexBuilder(codeSystemMetaOf(head));
  progress.onResourceStart?.('CodeSystem', head.url, typeof head.count === 'number' ? head.count : -1);
  async function* parts(): AsyncGenerator<ConceptInput[]> {
    for await (const batch of cs.concepts()) {
      for (const c of batch) {
        if (builder.has(c.code)) throw badRequest(`Duplicate code "${c.code}" in CodeSystem ${head.url}`);
        builder.add(c);
      }
      yield batch;
    }
  }
  const saved = await writeCodeSystemInParts(db, generations, head, parts(), {
    projectId,
    replaceSame: true,
    onProgress: progress.onConcepts,
    exclusive: options.exclusive,
  });
  if (saved.concepts >= MIN_FILE_CONCEPTS && options.indexDir)
    await writeImportedIndex(db, options.indexDir, saved.id, head, builder);
  const r: ImportedResource = {
    type: 'CodeSystem',
    id: saved.id,
    url: head.url,
    version: head.version,
    concepts: saved.concepts,
    created: saved.created,
  };
  progress.onResourceDone?.(r);
  return r;
}
