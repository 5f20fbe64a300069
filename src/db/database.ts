// The database: PGlite (embedded, default) or PostgreSQL (DATABASE_URL), behind one Prisma client, plus raw SQL
// for bulk paths and LISTEN/NOTIFY for cross-instance cache invalidation.
import fs from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import type { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { PrismaClient } from '../generated/prisma/client.js';
import { runMigrations } from './migrate.js';
import { lockDataDir } from './data-dir-lock.js';
import { durableStartParams, SyncingNodeFS, type SyncStats } from './fsync.js';
import { backgroundQuery, giveTurns } from './pglite-turns.js';
import { takePreloadedPGlite } from './pglite-preload.js';
import {
  copyTemplate,
  findTemplate,
  isEmptyDataDir,
  syncTree,
  type TemplateChoice,
} from './pglite-template.js';
import type { Logger } from 'pino';

export type Row = Record<string, unknown>;

/** application_name of the LISTEN connection (followed by `:<schema>` when a schema is set). */
export const LISTENER_APP_NAME = 'fhir-listener';
export type NotifyHandler = (payload: string) => void;

/** An open database with its Prisma client, raw SQL and notifications. */
export interface Database {
  kind: 'pglite' | 'postgres';
  prisma: PrismaClient;
  /** Runs one parameterised statement and returns its rows. */
  sql<T extends Row = Row>(text: string, params?: unknown[]): Promise<T[]>;
  /** `sql` for one statement of bulk work (a big write's batches, a big read's pages, removals): on the embedded
   * database it lets other requests' statements go first (src/db/pglite-turns.ts); on PostgreSQL it is `sql`. */
  backgroundSql<T extends Row = Row>(text: string, params?: unknown[]): Promise<T[]>;
  /** Runs fn in a transaction on one connection; `sql` inside it is that connection's. */
  transaction<T>(fn: (sql: Database['sql']) => Promise<T>): Promise<T>;
  /** Sends a notification to every instance listening on channel (this one included), after commit. */
  notify(channel: string, payload: string): Promise<void>;
  /** Subscribes to a channel; resolves once the subscription is active. */
  listen(channel: string, handler: NotifyHandler): Promise<void>;
  /** False while the notification connection is down: caches must not be trusted then. */
  readonly listening: boolean;
  /** Called whenever notifications may have been missed (listener reconnected): drop every cache. */
  onReset(cb: () => void): void;
  /** Embedded database on disk: the syncs made so far (docs/operations.md, Durability). */
  readonly syncStats?: SyncStats;
  close(): Promise<void>;
}

export interface OpenOptions {
  databaseUrl?: string;
  schema?: string;
  /** PGlite data directory; undefined = in memory. */
  dataDir?: string;
  /** Serve the embedded PGlite database over the PostgreSQL wire protocol on this local port (for Prisma Studio
   * and psql while the server runs). */
  pgliteSocketPort?: number;
  /** PGlite: sync commits to disk (default true). PGlite itself starts PostgreSQL with -F (fsync off). */
  fsync?: boolean;
  logger?: Logger;
  migrate?: boolean;
  /** PGlite on disk: an empty data directory starts as a copy of this prebuilt template when one matches
   * (src/db/pglite-template.ts), instead of initdb and the migrations. */
  template?: TemplateChoice;
  /** PGlite: PostgreSQL's shared_buffers in MiB (undefined: PGlite's default, 128 MiB). */
  sharedBuffersMb?: number;
}

/** Whether the embedded database in dataDir has yet to be created (its first start). */
export function isNewEmbeddedDatabase(dataDir: string): boolean {
  return isEmptyDataDir(path.join(dataDir, 'pglite'));
}

/** Opens the database the configuration names and applies pending migrations. */
export async function openDatabase(opts: OpenOptions): Promise<Database> {
  // Artifacts preloaded for an embedded database that is not the one opened are dropped.
  if (opts.databaseUrl) void takePreloadedPGlite();
  const db = opts.databaseUrl ? await openPostgres(opts) : await openPGlite(opts);
  if (opts.migrate !== false) {
    await runMigrations(db, opts.logger);
  }
  return db;
}

function channelName(schema: string | undefined, channel: string): string {
  return schema ? `${schema}:${channel}` : channel;
}

function quoteIdent(s: string): string {
  return '"' + s.replace(/"/g, '""') + '"';
}

/** PostgreSQL start parameters with the memory settings (docs/performance.md, Start and memory): shared_buffers
 * is most of what the embedded database keeps resident. */
function memoryParams(params: readonly string[], opts: OpenOptions): string[] {
  return opts.sharedBuffersMb === undefined
    ? [...params]
    : [...params, '-c', `shared_buffers=${opts.sharedBuffersMb}MB`];
}

async function openPGlite(opts: OpenOptions): Promise<Database> {
  let client: PGlite;
  let unlock = () => {};
  let syncStats: SyncStats | undefined;
  let templateSynced: Promise<void> | undefined;
  if (opts.dataDir) {
    // Before anything in the directory is opened: a second process must not touch a live database.
    unlock = lockDataDir(opts.dataDir);
    const dir = path.join(opts.dataDir, 'pglite');
    const template =
      opts.template && isNewEmbeddedDatabase(opts.dataDir) ? findTemplate(opts.template) : undefined;
    if (template) {
      const t0 = performance.now();
      copyTemplate(template, dir);
      opts.logger?.info(
        { template, ms: Math.round(performance.now() - t0) },
        'embedded database created from its prebuilt template',
      );
      // The copy reaches the disk in the background: PostgreSQL syncs its own writes (the WAL at each commit).
      if (opts.fsync !== false)
        templateSynced = syncTree(dir).then(
          (files) => opts.logger?.debug({ files }, 'embedded database template synced to disk'),
          (err: unknown) => opts.logger?.warn({ err }, 'could not sync the copied template to disk'),
        );
    }
    fs.mkdirSync(dir, { recursive: true });
    const artifacts = await takePreloadedPGlite();
    if (opts.fsync === false) {
      syncStats = { enabled: false, calls: 0, totalMs: 0 };
      client = new PGlite({
        ...artifacts,
        dataDir: dir,
        startParams: memoryParams(PGlite.defaultStartParams, opts),
      });
    } else {
      const syncing = new SyncingNodeFS(dir);
      syncStats = syncing.stats;
      client = new PGlite({
        ...artifacts,
        fs: syncing,
        startParams: memoryParams(durableStartParams(PGlite.defaultStartParams), opts),
      });
    }
  } else {
    client = new PGlite({ startParams: memoryParams(PGlite.defaultStartParams, opts) });
  }
  try {
    await client.waitReady;
  } catch (err) {
    unlock();
    throw err;
  }
  giveTurns(client);
  const prisma = new PrismaClient({ adapter: new PrismaPGlite(client) });
  let socket: PGLiteSocketServer | undefined;
  if (opts.pgliteSocketPort) {
    // Loaded only when asked for, as PostgreSQL's driver below: modules a start never needs cost time and memory.
    const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
    socket = new PGLiteSocketServer({
      db: client,
      port: opts.pgliteSocketPort,
      host: '127.0.0.1',
      maxConnections: 8,
    });
    await socket.start();
    opts.logger?.info(
      { port: opts.pgliteSocketPort },
      'embedded database served on 127.0.0.1 (PostgreSQL protocol)',
    );
  }
  const sql = async <T extends Row>(text: string, params?: unknown[]) =>
    (await client.query<T>(text, params as unknown[])).rows;
  return {
    kind: 'pglite',
    prisma,
    sql,
    backgroundSql: (text, params) => backgroundQuery(text, (marked) => sql(marked, params)),
    transaction: (fn) =>
      client.transaction(async (tx) =>
        fn(async <T extends Row>(text: string, params?: unknown[]) => {
          return (await tx.query<T>(text, params as unknown[])).rows;
        }),
      ),
    async notify(channel, payload) {
      await client.query('SELECT pg_notify($1, $2)', [channel, payload]);
    },
    async listen(channel, handler) {
      await client.listen(quoteIdent(channel), handler);
    },
    listening: true,
    onReset() {
      // One process owns the data directory: nothing can be missed.
    },
    syncStats,
    async close() {
      await socket?.stop();
      await prisma.$disconnect();
      await client.close();
      await templateSynced;
      unlock();
    },
  };
}

async function openPostgres(opts: OpenOptions): Promise<Database> {
  const [{ default: pg }, { PrismaPg }] = await Promise.all([import('pg'), import('@prisma/adapter-pg')]);
  const schema = opts.schema;
  const poolConfig: pg.PoolConfig = {
    connectionString: opts.databaseUrl,
    max: 10,
    options: schema ? `-c search_path=${quoteIdent(schema)}` : undefined,
  };
  if (schema) {
    const c = new pg.Client({ connectionString: opts.databaseUrl });
    await c.connect();
    await c.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
    await c.end();
  }
  const pool = new pg.Pool(poolConfig);
  pool.on('error', (err) => opts.logger?.warn({ err: err.message }, 'idle database connection failed'));
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool, schema ? { schema } : undefined) });

  const handlers = new Map<string, NotifyHandler[]>();
  const resetCallbacks: Array<() => void> = [];
  let listener: pg.Client | undefined;
  let listening = false;
  let closed = false;

  const connectListener = async (): Promise<void> => {
    // Named, so operators (and the tests) can tell the notification connection apart in pg_stat_activity.
    const c = new pg.Client({
      connectionString: opts.databaseUrl,
      application_name: `${LISTENER_APP_NAME}${schema ? ':' + schema : ''}`.slice(0, 63),
    });
    c.on('notification', (msg) => {
      for (const h of handlers.get(msg.channel) ?? []) h(msg.payload ?? '');
    });
    c.on('error', (err) => {
      opts.logger?.warn({ err: err.message }, 'notification connection failed; reconnecting');
      onLost();
    });
    c.on('end', () => onLost());
    await c.connect();
    for (const ch of handlers.keys()) await c.query(`LISTEN ${quoteIdent(ch)}`);
    listener = c;
    listening = true;
  };
  const onLost = () => {
    if (!listening || closed) return;
    listening = false;
    listener = undefined;
    for (const cb of resetCallbacks) cb();
    const retry = async () => {
      while (!closed && !listening) {
        try {
          await connectListener();
          // Anything cached between the loss and now may be stale.
          for (const cb of resetCallbacks) cb();
        } catch {
          await new Promise((r) => setTimeout(r, 500));
        }
      }
    };
    void retry();
  };
  await connectListener();

  const sql = async <T extends Row>(text: string, params?: unknown[]) =>
    (await pool.query<T>(text, params as unknown[])).rows;
  return {
    kind: 'postgres',
    prisma,
    sql,
    backgroundSql: sql,
    async transaction(fn) {
      const c = await pool.connect();
      try {
        await c.query('BEGIN');
        const result = await fn(async <T extends Row>(text: string, params?: unknown[]) => {
          return (await c.query<T>(text, params as unknown[])).rows;
        });
        await c.query('COMMIT');
        return result;
      } catch (err) {
        await c.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        c.release();
      }
    },
    async notify(channel, payload) {
      // Sent on the listener's own connection when it is up: notifications (revocation acknowledgements above
      // all) must not queue behind a busy pool under load.
      const args = [channelName(schema, channel), payload];
      if (listener && listening) {
        try {
          await listener.query('SELECT pg_notify($1, $2)', args);
          return;
        } catch {
          // Fall through to the pool: the listener is reconnecting.
        }
      }
      await pool.query('SELECT pg_notify($1, $2)', args);
    },
    async listen(channel, handler) {
      const ch = channelName(schema, channel);
      const list = handlers.get(ch);
      if (list) {
        list.push(handler);
        return;
      }
      handlers.set(ch, [handler]);
      if (listener) await listener.query(`LISTEN ${quoteIdent(ch)}`);
    },
    get listening() {
      return listening;
    },
    onReset(cb) {
      resetCallbacks.push(cb);
    },
    async close() {
      closed = true;
      await prisma.$disconnect();
      await listener?.end().catch(() => undefined);
      await pool.end().catch(() => undefined);
    },
  };
}

/** A cheap readiness check of the database (see probeDatabase). */
export interface DatabaseProbe {
  /** The last result while it is younger than the cache time; undefined when a probe is due. */
  cached(): boolean | undefined;
  /** The cached result, or the result of a new `SELECT 1` (concurrent callers share it). */
  check(): Promise<boolean>;
  /** The last result whatever its age (undefined before the first), starting a probe when one is due. */
  latest(): boolean | undefined;
}

/** Checks that the database answers `SELECT 1`, for readiness: a result is kept `cacheMs`, callers in the meantime
 * share the probe in flight, and a probe unanswered after `timeoutMs` counts as unreachable. A probe still
 * unanswered when the next is due is not repeated (the result is false until it settles): probes never pile up on
 * a hung database or an exhausted pool. */
export function probeDatabase(
  db: Pick<Database, 'sql'>,
  opts: { cacheMs?: number; timeoutMs?: number } = {},
): DatabaseProbe {
  const cacheMs = opts.cacheMs ?? 1_000;
  const timeoutMs = opts.timeoutMs ?? 2_000;
  let last: { ok: boolean; at: number } | undefined;
  let waiting: Promise<boolean> | undefined;
  let query: Promise<boolean> | undefined;
  const cached = (): boolean | undefined => (last && Date.now() - last.at < cacheMs ? last.ok : undefined);
  const probe = async (): Promise<boolean> => {
    // The statement of an earlier probe is still out: the database is not answering.
    if (query) return false;
    const q = db.sql('SELECT 1').then(
      () => true,
      () => false,
    );
    query = q;
    void q.then(() => {
      if (query === q) query = undefined;
    });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    try {
      return await Promise.race([q, late]);
    } finally {
      clearTimeout(timer);
    }
  };
  const check = (): Promise<boolean> => {
    const known = cached();
    if (known !== undefined) return Promise.resolve(known);
    waiting ??= probe().then((ok) => {
      last = { ok, at: Date.now() };
      waiting = undefined;
      return ok;
    });
    return waiting;
  };
  return {
    cached,
    check,
    latest() {
      if (cached() === undefined) void check();
      return last?.ok;
    },
  };
}
