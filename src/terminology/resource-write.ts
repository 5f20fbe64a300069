// Writing a CodeSystem or ValueSet so that no write holds the event loop or the database for long, and no reader
// ever sees half of one (docs/terminology.md, Large CodeSystems). A ValueSet, or a CodeSystem whose concepts fit in one
// statement, is one transaction. A bigger CodeSystem's concepts go first into a generation readers do not see, a
// batch per statement (each committed alone: other requests' statements run in between), then one short
// transaction writes the resource row and makes the generation live, retiring the one it replaces.
import crypto from 'node:crypto';
import type { Database } from '../db/database.js';
import { ApiError } from '../core/errors.js';
import { yieldIfHeld } from '../core/turns.js';
import { flattenSteps, type CodeSystemResource, type ConceptInput } from './engine/index.js';
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
  EXCLUSIVE_BATCH_ROWS,
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
  /** Nothing else uses the database during this write (the import CLI): bigger statements, and on the embedded
   * database the WAL is not synced after each batch (the commit that makes the generation live syncs it all, and
   * until then nothing of it is visible, so a crash in between loses only an invisible generation). */
  exclusive?: boolean;
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

/** Refuses an update of a row the project cannot write (run before the concepts are written, and again in the
 * transaction that publishes them). */
async function checkTarget(
  sql: Database['sql'],
  type: TerminologyType,
  opts: Pick<WriteOptions, 'id' | 'projectId'>,
): Promise<void> {
  if (opts.id && opts.projectId)
    assertWritable(type, opts.id, await selectVisible(sql, type, opts.id, opts.projectId));
}

/** Concept rows per INSERT statement. */
function batchRows(db: Database, opts: Pick<WriteOptions, 'exclusive'>): number {
  return opts.exclusive ? EXCLUSIVE_BATCH_ROWS : insertBatchSize(db);
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
  const batch = batchRows(db, opts);
  if (type === 'ValueSet' || rows.length <= batch) {
    let replaced = false;
    const saved = await db.transaction(async (sql) => {
      await checkTarget(sql, type, opts);
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

  return writeCodeSystemInParts(db, generations, resource, oneBatch(rows), opts);
}

async function* oneBatch(rows: ConceptInput[]): AsyncGenerator<ConceptInput[]> {
  yield rows;
}

/** Writes a CodeSystem whose concepts come in parts (the streamed import: parts of any size, in document order)
 * into a new generation, made live with the resource row (see the file comment). */
export async function writeCodeSystemInParts(
  db: Database,
  generations: ConceptGenerations,
  resource: Record<string, unknown>,
  parts: AsyncIterable<ConceptInput[]>,
  opts: Omit<WriteOptions, 'concepts'>,
): Promise<Saved & { concepts: number }> {
  const type = 'CodeSystem';
  const batch = batchRows(db, opts);
  // Refused before the concepts are written, not after.
  await checkTarget(db.sql, type, opts);
  const target =
    opts.id ??
    (opts.replaceSame ? await sameUrlVersion(db.sql, type, opts.projectId, resource, false) : undefined);
  const codeSystemId = target ?? crypto.randomUUID();
  const generationId = await beginGeneration(db.sql, codeSystemId, 'writing');
  const relaxed = opts.exclusive === true && db.kind === 'pglite';
  try {
    const heartbeat = generations.heartbeats(generationId);
    let count = 0;
    if (relaxed) {
      await db.sql('SET synchronous_commit = off');
      // No per-row foreign-key trigger on Concept.generationId (a lookup of the generation row for each of a
      // million rows: ~20% of a 1M import): the generation was created just above and nothing else runs. Only
      // these inserts and the heartbeat run before it is switched back; the clean-up of a failure runs after.
      await db.sql('SET session_replication_role = replica');
    }
    try {
      for await (const rows of parts) {
        await insertConceptRows(
          db.backgroundSql,
          generationId,
          codeSystemId,
          rows,
          batch,
          (done) => {
            opts.onProgress?.(done);
            return heartbeat();
          },
          count,
        );
        count += rows.length;
      }
    } finally {
      // Before the commit that publishes: that commit then syncs every WAL record written before it.
      if (relaxed) {
        await db.sql('SET session_replication_role = origin');
        await db.sql('SET synchronous_commit = on');
      }
    }
    const saved = await db.transaction(async (sql) => {
      await checkTarget(sql, type, opts);
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
        generation: { id: generationId, count },
      });
    });
    if (target) generations.kick();
    return { ...saved, concepts: count };
  } catch (err) {
    await generations.abandon(generationId).catch(() => undefined);
    throw err;
  }
}
