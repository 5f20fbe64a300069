// Applies the committed migrations (prisma/migrations/*/migration.sql) in order, once each, at start.
// Our own runner because Prisma's CLI cannot migrate through the PostgreSQL driver adapter offline.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';

/** What the runner needs of a database (database.ts's Database has it; declared here so that database.ts, which
 * runs the migrations at open, and this file do not import each other). */
export interface MigrationTarget {
  kind: 'pglite' | 'postgres';
  transaction<T>(
    fn: (
      sql: <R extends Record<string, unknown>>(text: string, params?: unknown[]) => Promise<R[]>,
    ) => Promise<T>,
  ): Promise<T>;
}

const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../prisma/migrations');
// Arbitrary constant: serialises concurrent starts of several instances on one PostgreSQL database.
const LOCK_KEY = 81030001;

/** The migrations shipped with this build, in order. */
export function listMigrations(): Array<{ name: string; sql: string }> {
  return fs
    .readdirSync(MIGRATIONS_DIR, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort()
    .map((name) => ({
      name,
      sql: fs.readFileSync(path.join(MIGRATIONS_DIR, name, 'migration.sql'), 'utf8'),
    }));
}

/** Applies every migration not yet recorded in _app_migrations, each in its own transaction. */
export async function runMigrations(db: MigrationTarget, logger?: Logger): Promise<void> {
  await db.transaction(async (sql) => {
    if (db.kind === 'postgres') await sql('SELECT pg_advisory_xact_lock($1)', [LOCK_KEY]);
    await sql(
      'CREATE TABLE IF NOT EXISTS "_app_migrations" (name TEXT PRIMARY KEY, "appliedAt" TIMESTAMPTZ NOT NULL DEFAULT now())',
    );
    const applied = new Set(
      (await sql<{ name: string }>('SELECT name FROM "_app_migrations"')).map((r) => r.name),
    );
    for (const m of listMigrations()) {
      if (applied.has(m.name)) continue;
      // Statements are split on the blank-line-separated "-- " headers Prisma writes; each runs alone so that
      // parameterless multi-statement SQL works the same on PGlite and pg.
      for (const stmt of splitStatements(m.sql)) await sql(stmt);
      await sql('INSERT INTO "_app_migrations" (name) VALUES ($1)', [m.name]);
      logger?.info({ migration: m.name }, 'migration applied');
    }
  });
}

/** Splits migration SQL into statements (semicolon at end of line, outside dollar quotes). */
export function splitStatements(sqlText: string): string[] {
  const out: string[] = [];
  let cur = '';
  let inDollar = false;
  for (const line of sqlText.split('\n')) {
    const trimmed = line.trim();
    if (!inDollar && (trimmed.startsWith('--') || trimmed === '')) continue;
    if ((line.match(/\$\$/g) ?? []).length % 2 === 1) inDollar = !inDollar;
    cur += line + '\n';
    if (!inDollar && trimmed.endsWith(';')) {
      out.push(cur.trim());
      cur = '';
    }
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}
