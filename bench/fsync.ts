// Cost of durable commits on the embedded database: single-row INSERT commits per second with PGLITE_FSYNC on
// (real fdatasync of the WAL at every commit) and off (PGlite's -F). Usage: npx tsx bench/fsync.ts [inserts] [rounds]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../src/db/database.js';

const inserts = Number(process.argv[2] ?? 500);
const rounds = Number(process.argv[3] ?? 3);

async function once(fsync: boolean): Promise<{ perSec: number; syncs: number }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fsync-bench-'));
  const db = await openDatabase({ dataDir, fsync, migrate: false });
  try {
    await db.sql('CREATE TABLE bench (id serial PRIMARY KEY, v text)');
    const before = db.syncStats?.calls ?? 0;
    const t0 = performance.now();
    for (let i = 0; i < inserts; i++) await db.sql('INSERT INTO bench (v) VALUES ($1)', [`row ${i}`]);
    const ms = performance.now() - t0;
    return { perSec: Math.round((inserts / ms) * 1000), syncs: (db.syncStats?.calls ?? 0) - before };
  } finally {
    await db.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

for (let r = 0; r < rounds; r++) {
  for (const fsync of [true, false]) {
    const { perSec, syncs } = await once(fsync);
    console.log(`fsync=${fsync ? 'on ' : 'off'} ${inserts} inserts: ${perSec}/s, ${syncs} syncs`);
  }
}
