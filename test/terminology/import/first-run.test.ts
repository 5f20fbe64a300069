// `npm run import` before the server ever started: the CLI creates what the first start creates (migrations, first
// project, admin user, client application) instead of asking to start the server first, and shows progress on
// stderr for a large code system even when stderr is not a terminal. The server then starts on that database, and
// the admin signs in and expands the imported code system.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../../helpers/database.js';
import { entryArgs } from '../../helpers/processes.js';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  CLIENT_ID,
  CLIENT_SECRET,
  call,
  onPostgres,
  signIn,
} from '../../helpers/server.js';
import { ROOT } from '../../helpers/paths.js';

const run = promisify(execFile);
const db = useTestDatabase({ onDisk: true });

/** A CodeSystem with `n` concepts and a ValueSet of all of it. */
function writeFixture(n: number): string {
  const concept = Array.from({ length: n }, (_, i) => ({ code: `c${i}`, display: `Concept number ${i}` }));
  const bundle = {
    resourceType: 'Bundle',
    type: 'collection',
    entry: [
      {
        resource: {
          resourceType: 'CodeSystem',
          url: 'http://example.org/cs/first-run',
          status: 'active',
          content: 'complete',
          concept,
        },
      },
      {
        resource: {
          resourceType: 'ValueSet',
          url: 'http://example.org/vs/first-run',
          status: 'active',
          compose: { include: [{ system: 'http://example.org/cs/first-run' }] },
        },
      },
    ],
  };
  const file = path.join(db.dir, 'first-run.json');
  fs.writeFileSync(file, JSON.stringify(bundle));
  return file;
}

describe('import CLI on a database the server never started on', () => {
  it('creates the first project itself, shows progress off a terminal, and the server then serves the import', async () => {
    const file = writeFixture(5000);
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      LOG_LEVEL: 'silent',
      ADMIN_EMAIL,
      ADMIN_PASSWORD,
      CLIENT_ID,
      CLIENT_SECRET,
      ...(process.env.PASSWORD_HASH_COST ? { PASSWORD_HASH_COST: process.env.PASSWORD_HASH_COST } : {}),
      ...(process.env.PASSWORD_HASH_PARALLELISM
        ? { PASSWORD_HASH_PARALLELISM: process.env.PASSWORD_HASH_PARALLELISM }
        : {}),
      ...(onPostgres
        ? { DATABASE_URL: process.env.TEST_DATABASE_URL, DATABASE_SCHEMA: db.schema }
        : { DATA_DIR: db.dataDir }),
    };
    // execFile: stderr is a pipe, not a terminal (as in CI logs).
    const { stdout, stderr } = await run(process.execPath, [...entryArgs('terminology/import/cli'), file], {
      cwd: ROOT,
      env,
    });
    expect(stdout).toMatch(/created CodeSystem\/\S+ http:\/\/example\.org\/cs\/first-run \(5000 concepts\)/);
    expect(stdout).toMatch(/created ValueSet\/\S+ http:\/\/example\.org\/vs\/first-run/);
    expect(stdout).toMatch(/imported 2 resource\(s\), 5000 concept\(s\) into project [0-9a-f-]{36}/);
    // Progress: a line at the start and one at the end, no terminal control sequences.
    expect(stderr).toMatch(/CodeSystem http:\/\/example\.org\/cs\/first-run: 0\/5000 concepts \(0%\)/);
    expect(stderr).toMatch(/CodeSystem http:\/\/example\.org\/cs\/first-run: 5000\/5000 concepts \(100%\)/);
    expect(stderr).not.toContain('\u001b[');

    const server = await db.start();
    const token = (await signIn(server.base)).access_token;
    const res = await call(
      server.base,
      'GET',
      `fhir/R4/ValueSet/$expand?url=${encodeURIComponent('http://example.org/vs/first-run')}&filter=4999&count=5`,
      { token },
    );
    expect(res.status).toBe(200);
    expect(res.body.expansion.contains).toEqual([
      expect.objectContaining({ code: 'c4999', display: 'Concept number 4999' }),
    ]);
  }, 180_000);
});
