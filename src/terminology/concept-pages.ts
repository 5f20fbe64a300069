// Reading a generation's concept rows page by page (keyset on ordinal): never all rows at once (one SELECT of
// 600,000 rows held the event loop 8.9 s in PGlite's result parser), and a turn for other requests between pages.
// The generation must not disappear under the reader: on PostgreSQL the pages are read in one REPEATABLE READ
// snapshot (another instance may remove a retired generation meanwhile); on the embedded database, which this
// process alone uses, a pin keeps this process's sweeper off it (a transaction there would hold the only
// connection for the whole read).
import type { Database, Row } from '../db/database.js';
import { yieldIfHeld } from '../core/turns.js';
import { ApiError } from '../core/errors.js';
import type { ConceptGenerations } from './generations.js';

/** Rows per page: PGlite parses a page on the event loop, so its pages stay a few milliseconds long. */
export function pageSize(db: Pick<Database, 'kind'>): number {
  return db.kind === 'pglite' ? 500 : 5000;
}

/** Thrown when a generation had fewer rows than its recorded count: it was removed while being read (another
 * instance's sweep between the reader's look at the CodeSystem row and its snapshot). A 503: retrying reads the
 * new one. */
export class GenerationGoneError extends ApiError {
  constructor(readonly detail: string) {
    super(503, 'exception', 'The CodeSystem changed while it was read: retry', {
      headers: { 'Retry-After': '1' },
    });
  }
}

/**
 * Calls `onPage` with the rows of a generation in document order, `columns` selected (must include `ordinal`), a
 * page at a time; awaits it before reading the next page. `expected`: the generation's concept count; fewer rows
 * is a GenerationGoneError (a truncated resource must never pass for a whole one).
 */
export async function readConceptPages<T extends { ordinal: number }>(
  db: Database,
  generations: ConceptGenerations,
  generationId: string,
  columns: string,
  expected: number,
  onPage: (rows: T[]) => Promise<void> | void,
  size = pageSize(db),
): Promise<void> {
  const release = generations.pin(generationId);
  try {
    const run = async (sql: Database['sql']) => {
      // Ordinals of a generation run 0..count-1 without gaps (every writer numbers its rows so): a page is an
      // ordinal range, which costs one page whatever the planner knows about the table (a keyset `ordinal > x
      // LIMIT n` on a generation the statistics have not seen yet was planned as a scan of all its remaining rows
      // and a sort, per page).
      let seen = 0;
      for (let from = 0; from < expected; from += size) {
        const rows = (await sql<T & Row>(
          `SELECT ${columns} FROM "Concept" WHERE "generationId" = $1::bigint AND ordinal >= $2 AND ordinal < $3
           ORDER BY ordinal`,
          [generationId, from, from + size],
        )) as T[];
        seen += rows.length;
        if (rows.length > 0) await onPage(rows);
        const t = yieldIfHeld();
        if (t) await t;
      }
      if (seen < expected) {
        throw new GenerationGoneError(
          `concept generation ${generationId} ended after ${seen} of ${expected} rows`,
        );
      }
    };
    if (db.kind === 'postgres' && expected > size) {
      await db.transaction(async (sql) => {
        await sql('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
        await run(sql);
      });
    } else {
      await run(db.backgroundSql);
    }
  } finally {
    release();
  }
}

/** Thrown into a page reader whose consumer stopped (the client went away): unwinds it and releases the pin. */
class ReadAbandoned extends Error {}

/**
 * The pages of readConceptPages as an async generator: the reader fetches the next page while the consumer works
 * on this one (at most two pages in memory). Stopping early (return/throw) unwinds the reader.
 */
export async function* conceptPageStream<T extends { ordinal: number }>(
  db: Database,
  generations: ConceptGenerations,
  generationId: string,
  columns: string,
  expected: number,
): AsyncGenerator<T[]> {
  let ready: T[] | undefined;
  let taken: (() => void) | undefined;
  let wake: (() => void) | undefined;
  let finished = false;
  let failure: unknown;
  let stopped = false;
  const reading = readConceptPages<T>(db, generations, generationId, columns, expected, async (rows) => {
    if (stopped) throw new ReadAbandoned();
    // Hand the page over, then wait until the consumer has taken it before reading the one after next.
    await new Promise<void>((resolve) => {
      ready = rows;
      taken = resolve;
      wake?.();
    });
    if (stopped) throw new ReadAbandoned();
  }).then(
    () => {
      finished = true;
      wake?.();
    },
    (err: unknown) => {
      failure = err;
      finished = true;
      wake?.();
    },
  );
  try {
    for (;;) {
      if (ready === undefined && !finished) await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
      if (ready !== undefined) {
        const rows = ready;
        ready = undefined;
        taken?.();
        taken = undefined;
        yield rows;
        continue;
      }
      if (failure !== undefined && !(failure instanceof ReadAbandoned)) throw failure;
      return;
    }
  } finally {
    stopped = true;
    taken?.();
    await reading;
  }
}
