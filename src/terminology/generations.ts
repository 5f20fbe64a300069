// Concept generations (docs/terminology.md, Large CodeSystems): the concepts of a CodeSystem write go into a generation
// that readers do not see ('writing'), in small statements each committed on its own, so neither the event loop
// nor the embedded database's one connection is held for the length of a big write. One short transaction then
// makes the generation 'live' with the CodeSystem row; the generation it replaces (or a deleted CodeSystem's) is
// 'retired', and its rows are removed here in small steps, once no reader of this process is paging through it.
// A write that failed half-way, or a crash between the two steps, leaves a 'writing' generation: removed at the
// next start (embedded database: one process owns it) or once its writer has not touched it for
// ABANDONED_AFTER_MS (PostgreSQL: other instances may be writing).
import type { Logger } from 'pino';
import type { Database } from '../db/database.js';
import { yieldIfHeld } from '../core/turns.js';
import type { ConceptInput } from './engine/index.js';

type Sql = Database['sql'];

/** Rows per concept INSERT. PGlite runs each statement on the event loop, so its batches stay a few ms long;
 * PostgreSQL runs them in its own process, where fewer, bigger statements are cheaper. */
export function insertBatchSize(db: Pick<Database, 'kind'>): number {
  return db.kind === 'pglite' ? 250 : 5000;
}

/** Rows per DELETE while a retired generation is removed; `exclusive`: nothing else uses the database meanwhile
 * (the import CLI), where removing a replaced 1,000,000-concept generation 250 rows at a time took ~11 s. */
function deleteBatchSize(db: Pick<Database, 'kind'>, exclusive = false): number {
  return db.kind === 'pglite' && !exclusive ? 250 : 10_000;
}

/** A write in progress touches its generation at least this often (ms)... */
const HEARTBEAT_MS = 10_000;
/** ...and one untouched for this long is abandoned (its writer crashed, on whichever instance). */
export const ABANDONED_AFTER_MS = 10 * 60_000;
/** Retired and abandoned generations are looked for this often (ms) besides after each write and at start. */
const SWEEP_INTERVAL_MS = 5 * 60_000;

/** Rows per concept INSERT when nothing else uses the database meanwhile (the import CLI): one statement per
 * 5,000 rows cost 15 s for 1,000,000 concepts on PGlite, against 23 s with 250. */
export const EXCLUSIVE_BATCH_ROWS = 5000;

/** Inserts concept rows into a generation, `batch` rows per statement (one unnest() statement per batch);
 * `firstOrdinal`: the ordinal of rows[0] (a write that comes in several parts). */
export async function insertConceptRows(
  sql: Sql,
  generationId: string,
  codeSystemId: string,
  rows: ConceptInput[],
  batch: number,
  onBatch?: (done: number) => Promise<void> | void,
  firstOrdinal = 0,
): Promise<void> {
  for (let start = 0; start < rows.length; start += batch) {
    const end = Math.min(rows.length, start + batch);
    const n = end - start;
    const ordinals = new Array<number>(n);
    const codes = new Array<string>(n);
    const displays = new Array<string | null>(n);
    const definitions = new Array<string | null>(n);
    // Parents travel as one string per row joined by U+001F (unit separator): unnest cannot take ragged 2-D arrays.
    const parents = new Array<string>(n);
    const notSelectable = new Array<boolean>(n);
    const inactive = new Array<boolean>(n);
    const statuses = new Array<string | null>(n);
    const designations = new Array<string | null>(n);
    const properties = new Array<string | null>(n);
    const extensions = new Array<string | null>(n);
    for (let i = 0; i < n; i++) {
      const r = rows[start + i];
      ordinals[i] = firstOrdinal + start + i;
      codes[i] = r.code;
      displays[i] = r.display ?? null;
      definitions[i] = r.definition ?? null;
      parents[i] = (r.parents ?? []).join('\u001f');
      notSelectable[i] = r.notSelectable === true;
      inactive[i] = r.inactive === true;
      statuses[i] = r.status ?? null;
      designations[i] = r.designations ? JSON.stringify(r.designations) : null;
      properties[i] = r.properties ? JSON.stringify(r.properties) : null;
      extensions[i] = r.extensions ? JSON.stringify(r.extensions) : null;
    }
    await sql(
      `INSERT INTO "Concept" ("generationId", "codeSystemId", ordinal, code, display, definition, parents,
         "notSelectable", inactive, status, designations, properties, extensions)
       SELECT $1::bigint, $2::uuid, o, c, d, df, CASE WHEN p = '' THEN '{}'::text[] ELSE string_to_array(p, chr(31)) END,
         ns, ia, st, ds::jsonb, pr::jsonb, ex::jsonb
       FROM unnest($3::int[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bool[], $9::bool[], $10::text[],
         $11::text[], $12::text[], $13::text[]) AS t(o, c, d, df, p, ns, ia, st, ds, pr, ex)`,
      [
        generationId,
        codeSystemId,
        ordinals,
        codes,
        displays,
        definitions,
        parents,
        notSelectable,
        inactive,
        statuses,
        designations,
        properties,
        extensions,
      ],
    );
    await onBatch?.(firstOrdinal + end);
  }
}

/** Starts a generation for a CodeSystem row (which may not exist yet): 'writing', invisible to readers. */
export async function beginGeneration(
  sql: Sql,
  codeSystemId: string,
  state: 'writing' | 'live',
): Promise<string> {
  const [row] = await sql<{ id: string }>(
    `INSERT INTO "ConceptGeneration" ("codeSystemId", state, "updatedAt")
     VALUES ($1::uuid, $2, now() AT TIME ZONE 'UTC') RETURNING id::text AS id`,
    [codeSystemId, state],
  );
  return row.id;
}

/** Inside the transaction that writes the CodeSystem row: retires its live generation and makes `generationId`
 * live with `count` concepts. False when the generation is no longer being written (swept as abandoned). */
export async function publishGeneration(
  sql: Sql,
  codeSystemId: string,
  generationId: string,
  count: number,
): Promise<boolean> {
  await retireLive(sql, codeSystemId);
  const done = await sql(
    `UPDATE "ConceptGeneration" SET state = 'live', "conceptCount" = $3, "updatedAt" = now() AT TIME ZONE 'UTC'
     WHERE id = $1::bigint AND "codeSystemId" = $2::uuid AND state IN ('writing', 'live') RETURNING id`,
    [generationId, codeSystemId, count],
  );
  return done.length === 1;
}

/** Retires the live generation of a CodeSystem (replaced or deleted; call inside that transaction). */
export async function retireLive(sql: Sql, codeSystemId: string): Promise<void> {
  await sql(
    `UPDATE "ConceptGeneration" SET state = 'retired', "updatedAt" = now() AT TIME ZONE 'UTC'
     WHERE "codeSystemId" = $1::uuid AND state = 'live'`,
    [codeSystemId],
  );
}

/** The live generation of a CodeSystem and its concept count (none: no concepts were ever written). */
export interface LiveGeneration {
  id: string;
  count: number;
}

/** Column expressions giving a CodeSystem row's live generation (`t` is the CodeSystem table's alias): selected
 * with the row in one statement, so the row and its concepts are of the same write. */
export const LIVE_GENERATION_COLUMNS = `(SELECT g.id::text FROM "ConceptGeneration" g
    WHERE g."codeSystemId" = t.id AND g.state = 'live') AS "generationId",
  (SELECT g."conceptCount" FROM "ConceptGeneration" g
    WHERE g."codeSystemId" = t.id AND g.state = 'live') AS "conceptCount"`;

/** Owns the removal of retired and abandoned generations, and the pins of readers paging through one. */
export class ConceptGenerations {
  private pins = new Map<string, number>();
  private sweeping: Promise<void> | undefined;
  private again = false;
  private fullPending = false;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly db: Database,
    private readonly logger?: Logger,
    /** Nothing else uses the database meanwhile (the import CLI): bigger removal steps. */
    private readonly exclusive = false,
  ) {}

  /** Removes what a crash left (embedded database: every generation still 'writing'), then sweeps now and then. */
  async start(): Promise<void> {
    if (this.db.kind === 'pglite') {
      // One process owns the data directory (the lock): nobody else can be writing.
      await this.db.sql(
        `UPDATE "ConceptGeneration" SET state = 'retired', "updatedAt" = now() AT TIME ZONE 'UTC'
         WHERE state = 'writing'`,
      );
    }
    this.timer = setInterval(() => this.kick(true), SWEEP_INTERVAL_MS);
    this.timer.unref();
    this.kick(true);
  }

  /** Stops sweeping (waits for the step in progress). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    await this.sweeping?.catch(() => undefined);
  }

  /** Keeps a generation's rows while a reader of this process pages through them; returns the release. */
  pin(generationId: string): () => void {
    this.pins.set(generationId, (this.pins.get(generationId) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const n = (this.pins.get(generationId) ?? 1) - 1;
      if (n > 0) this.pins.set(generationId, n);
      else {
        this.pins.delete(generationId);
        this.kick();
      }
    };
  }

  /** Marks a generation whose write failed as retired (its rows go with the next sweep). */
  async abandon(generationId: string): Promise<void> {
    await this.db.sql(
      `UPDATE "ConceptGeneration" SET state = 'retired', "updatedAt" = now() AT TIME ZONE 'UTC'
       WHERE id = $1::bigint AND state = 'writing'`,
      [generationId],
    );
    this.kick();
  }

  /** Records that a write is still alive (an abandoned-looking generation would be removed under it). */
  async heartbeat(generationId: string): Promise<void> {
    await this.db.sql(
      `UPDATE "ConceptGeneration" SET "updatedAt" = now() AT TIME ZONE 'UTC' WHERE id = $1::bigint AND state = 'writing'`,
      [generationId],
    );
  }

  /** A function to call between a write's batches: touches the generation every HEARTBEAT_MS. */
  heartbeats(generationId: string): () => Promise<void> | undefined {
    let last = Date.now();
    return () => {
      if (Date.now() - last < HEARTBEAT_MS) return undefined;
      last = Date.now();
      return this.heartbeat(generationId);
    };
  }

  /** Starts a sweep in the background (or another one after the current, if one is running). `full`: also look
   * for abandoned generations and ones whose CodeSystem row is gone (at start and now and then, not after every
   * write: those queries look at every live generation). */
  kick(full = false): void {
    if (this.closed) return;
    this.fullPending ||= full;
    if (this.sweeping) {
      this.again = true;
      return;
    }
    const fullNow = this.fullPending;
    this.fullPending = false;
    this.sweeping = this.sweep(fullNow)
      .catch((err: unknown) => this.logger?.warn({ err }, 'could not remove old concept generations'))
      .finally(() => {
        this.sweeping = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  /** Waits for a sweep in progress, then sweeps once more (the import CLI, before it exits). */
  async sweepNow(): Promise<void> {
    await this.sweeping?.catch(() => undefined);
    await this.sweep(true);
  }

  /** Removes every retired generation no reader here is using (and, when `full`, abandoned ones), in small steps. */
  async sweep(full: boolean): Promise<void> {
    const sql = this.db.sql;
    if (full) await this.retireLost();
    const batch = deleteBatchSize(this.db, this.exclusive);
    const gone: string[] = [];
    for (;;) {
      const retired = await sql<{ id: string }>(
        `SELECT id::text AS id FROM "ConceptGeneration" WHERE state = 'retired' ORDER BY id LIMIT 100`,
      );
      const todo = retired.filter((r) => !this.pins.has(r.id) && !gone.includes(r.id));
      if (todo.length === 0) return;
      for (const { id } of todo) {
        // By ordinal ranges (0..max without gaps), from the top: each step costs its rows, whatever the planner
        // knows (a `LIMIT n` subquery on a generation without statistics read all of its rows every time).
        const [{ max }] = await sql<{ max: number | null }>(
          `SELECT max(ordinal) AS max FROM "Concept" WHERE "generationId" = $1::bigint`,
          [id],
        );
        for (let to = (max ?? -1) + 1; to > 0; to -= batch) {
          // A reader can pin only a live generation; checked again anyway before every step.
          if (this.closed || this.pins.has(id)) return;
          // Committed without waiting for the disk (synchronous_commit off for this statement's transaction): a
          // removal lost in a crash is done again by the next sweep, and on the embedded database each waited
          // commit is an fdatasync on the event loop (in CI, a bystander waited 190 ms behind them).
          await this.db.backgroundSql(
            `WITH async AS MATERIALIZED (SELECT set_config('synchronous_commit', 'off', true) AS v)
             DELETE FROM "Concept" WHERE "generationId" = $1::bigint AND ordinal >= $2 AND ordinal < $3
               AND (SELECT count(*) FROM async) = 1`,
            [id, Math.max(0, to - batch), to],
          );
          const t = yieldIfHeld();
          if (t) await t;
        }
        await sql(`DELETE FROM "ConceptGeneration" WHERE id = $1::bigint AND state = 'retired'`, [id]);
        gone.push(id);
      }
    }
  }

  /** Retires live generations whose CodeSystem row is gone (removed by other means than this server) and, on
   * any database, writes nobody has touched for ABANDONED_AFTER_MS (their writer crashed). */
  private async retireLost(): Promise<void> {
    await this.db.sql(
      `UPDATE "ConceptGeneration" g SET state = 'retired', "updatedAt" = now() AT TIME ZONE 'UTC'
       WHERE state = 'live' AND NOT EXISTS (SELECT 1 FROM "CodeSystem" cs WHERE cs.id = g."codeSystemId")`,
    );
    await this.db.sql(
      `UPDATE "ConceptGeneration" SET state = 'retired', "updatedAt" = now() AT TIME ZONE 'UTC'
       WHERE state = 'writing' AND "updatedAt" < (now() AT TIME ZONE 'UTC') - ($1::int * interval '1 millisecond')`,
      [ABANDONED_AFTER_MS],
    );
  }
}
