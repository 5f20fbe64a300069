// The embedded database's prebuilt template (issue 27): an empty data directory starts as a copy of a migrated one
// instead of initdb + migrations; the copy has the schema the migrations make, keeps its data across a restart, is
// never used when it was made by other migrations, another PGlite or with other facts, and never lands on a
// directory that holds anything. The memory setting reaches PostgreSQL.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.js';
import { listMigrations } from '../../src/db/migrate.js';
import {
  currentManifest,
  findTemplate,
  isEmptyDataDir,
  writeManifest,
  type TemplateManifest,
} from '../../src/db/pglite-template.js';

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'template-test-'));
const root = path.join(work, 'templates');
const migrated = path.join(work, 'migrated');

/** A logger whose lines the test reads. */
function capturingLogger(): { logger: pino.Logger; lines: () => string[] } {
  const out: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      out.push(...chunk.toString().split('\n').filter(Boolean));
      cb();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines: () => out };
}

/** The schema as PostgreSQL describes it: columns with their types, and indexes with their definitions. */
async function schemaOf(db: Database): Promise<string[]> {
  const cols = await db.sql<{ d: string }>(
    `SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' ||
            coalesce(column_default, '') AS d
       FROM information_schema.columns WHERE table_schema = 'public' ORDER BY 1`,
  );
  const idx = await db.sql<{ d: string }>(
    `SELECT indexdef AS d FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1`,
  );
  return [...cols.map((r) => r.d), ...idx.map((r) => r.d)];
}

let reference: Database;

beforeAll(async () => {
  // The template is what a build makes (`npm run build`'s own when it matches: CI builds first; else made here
  // the same way): a migrated data directory, cleanly closed, beside its manifest.
  fs.mkdirSync(root, { recursive: true });
  const built = findTemplate({ name: 'schema' });
  if (built) fs.cpSync(built, path.join(root, 'schema'), { recursive: true });
  else {
    const made = await openDatabase({ dataDir: migrated, fsync: false });
    await made.close();
    fs.cpSync(path.join(migrated, 'pglite'), path.join(root, 'schema'), { recursive: true });
  }
  writeManifest(root, currentManifest({ schema: { facts: { made: 'by the test' } } }));
  // What the migrations make, the way a server without a template makes it (in memory: quicker than on disk).
  reference = await openDatabase({});
}, 120_000);

afterAll(async () => {
  await reference?.close();
  fs.rmSync(work, { recursive: true, force: true });
});

describe('the prebuilt template', () => {
  it('starts an empty data directory with the schema the migrations make, and its data survives a restart', async () => {
    const dataDir = path.join(work, 'fresh');
    const { logger, lines } = capturingLogger();
    const db = await openDatabase({
      dataDir,
      logger,
      template: { name: 'schema', root },
      sharedBuffersMb: 24,
    });
    try {
      expect(lines().some((l) => l.includes('created from its prebuilt template'))).toBe(true);
      expect(fs.existsSync(path.join(dataDir, 'pglite.template-copy'))).toBe(false);
      expect(await schemaOf(db)).toEqual(await schemaOf(reference));
      const applied = await db.sql<{ name: string }>('SELECT name FROM "_app_migrations" ORDER BY name');
      expect(applied.map((r) => r.name)).toEqual(listMigrations().map((m) => m.name));
      expect(await db.sql('SHOW shared_buffers')).toEqual([{ shared_buffers: '24MB' }]);
      await db.sql(`INSERT INTO "TerminologyMarker" (name, value, "updatedAt") VALUES ('t', 'kept', now())`);
    } finally {
      await db.close();
    }
    // A restart opens the directory as it is: no second copy over the data.
    const second = capturingLogger();
    const again = await openDatabase({ dataDir, logger: second.logger, template: { name: 'schema', root } });
    try {
      expect(second.lines().some((l) => l.includes('prebuilt template'))).toBe(false);
      const rows = await again.sql<{ value: string }>(
        `SELECT value FROM "TerminologyMarker" WHERE name = 't'`,
      );
      expect(rows).toEqual([{ value: 'kept' }]);
    } finally {
      await again.close();
    }
  }, 120_000);

  it('is used only when it matches the installed PGlite, these migrations and the facts asked for', () => {
    const good = currentManifest({ schema: { facts: { made: 'by the test' } } });
    const variant = (name: string, change: (m: TemplateManifest) => void): string => {
      const dir = path.join(work, name);
      fs.mkdirSync(path.join(dir, 'schema'), { recursive: true });
      fs.cpSync(path.join(root, 'schema', 'PG_VERSION'), path.join(dir, 'schema', 'PG_VERSION'));
      const m = structuredClone(good);
      change(m);
      writeManifest(dir, m);
      return dir;
    };
    expect(findTemplate({ name: 'schema', root })).toBe(path.join(root, 'schema'));
    expect(findTemplate({ name: 'schema', root, facts: { made: 'by the test' } })).toBeDefined();
    expect(findTemplate({ name: 'schema', root, facts: { made: 'elsewhere' } })).toBeUndefined();
    expect(findTemplate({ name: 'core', root })).toBeUndefined();
    const fewer = variant('fewer-migrations', (m) => m.migrations.pop());
    expect(findTemplate({ name: 'schema', root: fewer })).toBeUndefined();
    const older = variant('other-pglite', (m) => (m.pglite = '0.0.1'));
    expect(findTemplate({ name: 'schema', root: older })).toBeUndefined();
    expect(findTemplate({ name: 'schema', root: path.join(work, 'nothing-here') })).toBeUndefined();
  });

  it('never lands on a data directory that holds anything', () => {
    const dir = path.join(work, 'occupied', 'pglite');
    expect(isEmptyDataDir(dir)).toBe(true);
    fs.mkdirSync(dir, { recursive: true });
    expect(isEmptyDataDir(dir)).toBe(true);
    fs.writeFileSync(path.join(dir, 'base'), '');
    expect(isEmptyDataDir(dir)).toBe(false);
  });
});
