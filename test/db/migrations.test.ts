// Migrations: applied at start on PGlite and PostgreSQL, once each, and the statement splitter they rely on.
import { describe, expect, it } from 'vitest';
import { listMigrations, runMigrations, splitStatements } from '../../src/db/migrate.js';
import { useTestServer } from '../helpers/server.js';

const s = useTestServer();

describe('migrations', () => {
  it('are all recorded after start', async () => {
    const rows = await s.services.db.sql<{ name: string }>(
      'SELECT name FROM "_app_migrations" ORDER BY name',
    );
    expect(rows.map((r) => r.name)).toEqual(listMigrations().map((m) => m.name));
  });

  it('are not applied twice', async () => {
    await runMigrations(s.services.db);
    const rows = await s.services.db.sql<{ n: number }>('SELECT count(*)::int AS n FROM "_app_migrations"');
    expect(rows[0].n).toBe(listMigrations().length);
  });

  it('created the tables Prisma uses', async () => {
    expect(await s.services.db.prisma.project.count()).toBe(1);
    expect(await s.services.db.prisma.user.count()).toBe(1);
    expect(await s.services.db.prisma.clientApplication.count()).toBe(1);
  });

  it('runs on the configured database (PGlite, or PostgreSQL with TEST_DATABASE_URL)', () => {
    expect(s.services.db.kind).toBe(process.env.TEST_DATABASE_URL ? 'postgres' : 'pglite');
  });
});

describe('splitStatements', () => {
  it('splits on statement ends, keeps dollar-quoted bodies whole and drops comments', () => {
    const sql = `-- a comment\nCREATE TABLE a (x int);\n\nCREATE FUNCTION f() RETURNS int AS $$\nSELECT 1;\n$$ LANGUAGE sql;\nINSERT INTO a VALUES (1);`;
    expect(splitStatements(sql)).toEqual([
      'CREATE TABLE a (x int);',
      'CREATE FUNCTION f() RETURNS int AS $$\nSELECT 1;\n$$ LANGUAGE sql;',
      'INSERT INTO a VALUES (1);',
    ]);
  });
});
