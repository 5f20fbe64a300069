// Writing a CodeSystem or ValueSet so that no write holds the event loop or the database for long, and no reader
// ever sees half of one (README "Terminology", Storage). A ValueSet, or a CodeSystem whose concepts fit in one
// statement, is one transaction. A bigger CodeSystem's concepts go first into a generation readers do not see, a
// batch per statement (each committed alone: other requests' statements run in between), then one short
// transaction writes the resource row and makes the generation live, retiring the one it replaces.
import crypto from 'node:crypto';
import type { Database } from '../db/database.js';
import { ApiError } from '../core/errors.js';
import { yieldIfHeld } from '../core/turns.js';
import { flattenSteps } from './engine/flatten.js';
import type { CodeSystemResource, ConceptInput } from './engine/types.js';
import {
  assertWritable,
  sameUrlVersion,
  saveResource,
  selectVisible,
  validateCodeSystemSteps,
  type Saved,
  type TerminologyType,
} from './repository.js';
import {
  beginGeneration,
  insertBatchSize,
  insertConceptRows,
  type ConceptGenerations,
} from './generations.js';

export interface WriteOptions {
  projectId: string | null;
  /** Update this row: 404 when the project cannot see it, 403 when it is a shared core row. */
  id?: string;
  /** Import semantics: an existing resource with the same url and version in the project is replaced. */
  replaceSame?: boolean;
  /** CodeSystem concept rows, in document order. */
  concepts?: ConceptInput[];
  /** Concepts written so far (import progress). */
  onProgress?: (done: number) => void;
}

/** Validates a CodeSystem and flattens its concept tree into rows, giving the event loop turns on the way (a tree
 * of 600,000 concepts took several hundred ms each). */
export async function prepareCodeSystem(cs: CodeSystemResource): Promise<ConceptInput[]> {
  for (const _ of validateCodeSystemSteps(cs)) {
    const t = yieldIfHeld();
    if (t) await t;
  }
  const rows: ConceptInput[] = [];
  for (const _ of flattenSteps(cs, rows)) {
    const t = yieldIfHeld();
    if (t) await t;
  }
  return rows;
}

/** Creates or replaces a CodeSystem/ValueSet (see the file comment). */
export async function writeTerminologyResource(
  db: Database,
  generations: ConceptGenerations,
  type: TerminologyType,
  resource: Record<string, unknown>,
  opts: WriteOptions,
): Promise<Saved> {
  const rows = type === 'CodeSystem' ? (opts.concepts ?? []) : [];
  const checkTarget = async (sql: Database['sql']) => {
    if (opts.id && opts.projectId)
      assertWritable(type, opts.id, await selectVisible(sql, type, opts.id, opts.projectId));
  };
  const batch = insertBatchSize(db);
  if (type === 'ValueSet' || rows.length <= batch) {
    let replaced = false;
    const saved = await db.transaction(async (sql) => {
      await checkTarget(sql);
      let generation: { id: string; count: number } | undefined;
      if (type === 'CodeSystem') {
        const target =
          opts.id ??
          (opts.replaceSame ? await sameUrlVersion(sql, type, opts.projectId, resource, true) : undefined);
        replaced = target !== undefined;
        const codeSystemId = target ?? crypto.randomUUID();
        generation = { id: await beginGeneration(sql, codeSystemId, 'writing'), count: rows.length };
        await insertConceptRows(sql, generation.id, codeSystemId, rows, batch);
        const saved = await saveResource(sql, type, resource, {
          projectId: opts.projectId,
          id: target,
          newId: target ? undefined : codeSystemId,
          generation,
        });
        opts.onProgress?.(rows.length);
        return saved;
      }
      return saveResource(sql, type, resource, {
        projectId: opts.projectId,
        id: opts.id,
        replaceSame: opts.replaceSame,
      });
    });
    // The generation a CodeSystem write replaced goes now, in small steps.
    if (replaced) generations.kick();
    return saved;
  }

  // Refused before the concepts are written, not after.
  await checkTarget(db.sql);
  const target =
    opts.id ??
    (opts.replaceSame ? await sameUrlVersion(db.sql, type, opts.projectId, resource, false) : undefined);
  const codeSystemId = target ?? crypto.randomUUID();
  const generationId = await beginGeneration(db.sql, codeSystemId, 'writing');
  try {
    const heartbeat = generations.heartbeats(generationId);
    await insertConceptRows(db.backgroundSql, generationId, codeSystemId, rows, batch, (done) => {
      opts.onProgress?.(done);
      return heartbeat();
    });
    const saved = await db.transaction(async (sql) => {
      await checkTarget(sql);
      if (opts.replaceSame && !opts.id) {
        const now = await sameUrlVersion(sql, type, opts.projectId, resource, true);
        if (now !== target) {
          throw new ApiError(
            409,
            'conflict',
            `${type} ${String(resource.url)} was written by another request meanwhile: retry`,
          );
        }
      }
      return saveResource(sql, type, resource, {
        projectId: opts.projectId,
        id: target,
        newId: target ? undefined : codeSystemId,
        generation: { id: generationId, count: rows.length },
      });
    });
    if (target) generations.kick();
    return saved;
  } catch (err) {
    await generations.abandon(generationId).catch(() => undefined);
    throw err;
  }
}
