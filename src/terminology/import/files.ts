// Bulk import of CodeSystems and ValueSets from files: a FHIR JSON resource, a Bundle (collection/transaction/
// batch/searchset) or NDJSON (one resource per line). Each resource is written in its own transaction; the same
// url+version in the target project is replaced (re-running an import does not duplicate). Concepts go in through
// batched unnest() inserts. Memory: files are read by a small scanner (scan.ts) that hands over one resource
// at a time, and a CodeSystem's concepts one top-level concept (with its children) at a time: those are validated,
// flattened, written into the CodeSystem's new generation and added to its index builder as they come, so a
// 1,000,000-concept CodeSystem is never held as a tree or as a million row objects. A CodeSystem the stream cannot
// take exactly (members after `concept`, or `child` properties naming a concept under another top-level concept)
// is read again whole and written as before.
import fs from 'node:fs';
import type { Database } from '../../db/database.js';
import { ApiError } from '../../core/errors.js';
import { flattenCodeSystemConcepts, type CodeSystemResource, type ConceptInput } from '../engine/index.js';
import { validateCodeSystem, validateValueSet, type TerminologyType } from '../repository.js';
import { MIN_FILE_CONCEPTS } from '../index-cache.js';
import { CHANGED_CHANNEL } from '../service.js';
import { ConceptGenerations } from '../generations.js';
import { writeTerminologyResource } from '../resource-write.js';
import { readImportItems, readResources } from './scan.js';
import { importStreamedCodeSystem, StreamFallback } from './stream.js';
import {
  writeImportedIndex,
  type ImportedResource,
  type ImportOptions,
  type ImportProgress,
} from './common.js';

export { readResources };
export type { ImportedResource, ImportOptions, ImportProgress };

export interface ImportResult {
  resources: ImportedResource[];
  skipped: Array<{ where: string; reason: string }>;
}

/** A CodeSystem without `count` in a file smaller than this is read whole (see importFiles). */
const STREAM_WITHOUT_COUNT_MIN_BYTES = 16 * 1024 * 1024;

/** The project an import goes to: the given one, the shared core (null), or the first project. */
export async function resolveImportProject(
  db: Database,
  opts: { project?: string; shared?: boolean },
): Promise<string | null> {
  if (opts.shared) return null;
  if (opts.project) {
    const rows = await db.sql(`SELECT id FROM "Project" WHERE id::text = $1`, [opts.project]);
    if (rows.length === 0) throw new Error(`Project ${opts.project} does not exist`);
    return opts.project;
  }
  const [first] = await db.sql<{ id: string }>(`SELECT id FROM "Project" ORDER BY "createdAt", id LIMIT 1`);
  if (!first)
    throw new Error('There is no project yet: start the server once (it creates one), or use --shared');
  return first.id;
}

/** Imports every CodeSystem/ValueSet of the files into a project (null = shared); other types are skipped. */
export async function importFiles(
  db: Database,
  files: string[],
  projectId: string | null,
  progress: ImportProgress = {},
  options: ImportOptions = {},
): Promise<ImportResult> {
  const result: ImportResult = { resources: [], skipped: [] };
  // Concepts are written as complete generations, as the server writes them (docs/terminology.md, Large CodeSystems).
  const generations = new ConceptGenerations(db, undefined, options.exclusive === true);
  try {
    for (const file of files) {
      let itemNo = -1;
      for await (const item of readImportItems(file)) {
        itemNo++;
        let { where } = item;
        let resource: unknown;
        if ('resource' in item) resource = item.resource;
        else if (
          typeof item.head.count !== 'number' &&
          fs.statSync(file).size < STREAM_WITHOUT_COUNT_MIN_BYTES
        ) {
          // Without CodeSystem.count a streamed import cannot show its progress as a share of the whole: a small
          // one is taken whole, as before (its progress then has its total).
          const concept: unknown[] = [];
          for await (const c of item.concepts) concept.push(c);
          resource = { ...item.head, concept, ...item.tail() };
        } else {
          try {
            result.resources.push(
              await importStreamedCodeSystem(db, generations, item, projectId, progress, options),
            );
            continue;
          } catch (err) {
            if (err instanceof ApiError) {
              result.skipped.push({ where, reason: err.message });
              continue;
            }
            if (!(err instanceof StreamFallback)) throw err;
            ({ where, resource } = await nthResource(file, itemNo));
          }
        }
        const r = resource as Record<string, unknown> | undefined;
        const type = r?.resourceType;
        if (type !== 'CodeSystem' && type !== 'ValueSet') {
          result.skipped.push({ where, reason: `not a CodeSystem or ValueSet (${String(type)})` });
          continue;
        }
        try {
          result.resources.push(await importOne(db, generations, type, r!, projectId, progress, options));
        } catch (err) {
          if (!(err instanceof ApiError)) throw err;
          result.skipped.push({ where, reason: err.message });
        }
      }
    }
  } finally {
    // Running servers (PostgreSQL) drop what they cached; a PGlite server is not running during an import.
    if (result.resources.length > 0) await db.notify(CHANGED_CHANNEL, '*').catch(() => undefined);
    // The generations the import replaced are removed before it ends.
    await generations.sweepNow();
  }
  return result;
}

/** The n-th resource of a file, parsed whole (a streamed CodeSystem the stream could not take). */
async function nthResource(file: string, n: number): Promise<{ where: string; resource: unknown }> {
  let i = 0;
  for await (const r of readResources(file)) if (i++ === n) return r;
  throw new Error(`${file}: resource ${n} is gone (was the file changed during the import?)`);
}

async function importOne(
  db: Database,
  generations: ConceptGenerations,
  type: TerminologyType,
  resource: Record<string, unknown>,
  projectId: string | null,
  progress: ImportProgress,
  options: ImportOptions,
): Promise<ImportedResource> {
  let concepts: ConceptInput[] | undefined;
  if (type === 'CodeSystem') {
    validateCodeSystem(resource as unknown as CodeSystemResource);
    concepts = flattenCodeSystemConcepts(resource as unknown as CodeSystemResource);
    // The tree is no longer needed: let it be collected while the rows are written.
    delete resource.concept;
  } else validateValueSet(resource);
  const url = typeof resource.url === 'string' ? resource.url : undefined;
  const version = typeof resource.version === 'string' ? resource.version : undefined;
  progress.onResourceStart?.(type, url, concepts?.length ?? 0);
  const saved = await writeTerminologyResource(db, generations, type, resource, {
    projectId,
    replaceSame: true,
    concepts,
    onProgress: progress.onConcepts,
    exclusive: options.exclusive,
  });
  if (concepts && concepts.length >= MIN_FILE_CONCEPTS && options.indexDir) {
    await writeImportedIndex(
      db,
      options.indexDir,
      saved.id,
      resource as unknown as CodeSystemResource,
      concepts,
    );
  }
  const done: ImportedResource = {
    type,
    id: saved.id,
    url,
    version,
    concepts: concepts?.length ?? 0,
    created: saved.created,
  };
  progress.onResourceDone?.(done);
  return done;
}
