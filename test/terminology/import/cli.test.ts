// The import CLI (`npm run import`) on the 100,000-concept benchmark data into a server's database, re-run
// idempotently; Bundle and NDJSON inputs; then $expand over HTTP sees what was imported.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestDatabase } from '../../helpers/database.js';
import { entryArgs } from '../../helpers/processes.js';
import { call, onPostgres, signIn, type TestServer } from '../../helpers/server.js';
import { GENERATOR } from '../../helpers/shared.js';
import { ROOT } from '../../helpers/paths.js';

const run = promisify(execFile);
const CS_URL = 'http://example.org/fhir/CodeSystem/synthetic-bench';
const VS_URL = 'http://example.org/fhir/ValueSet/synthetic-bench-all';

/** A database the CLI can open too: a PGlite data directory, or a PostgreSQL schema. */
const db = useTestDatabase({ onDisk: true });
let s: TestServer | undefined;
let token: string;

/** Runs the import CLI as a user would (PGlite: with the server stopped; PostgreSQL: while it runs). */
async function importCli(...args: string[]): Promise<string> {
  const restart = !onPostgres && s !== undefined;
  if (restart) {
    await s!.close();
    s = undefined;
  }
  try {
    const env = { ...process.env, DATA_DIR: db.dataDir, LOG_LEVEL: 'silent' };
    if (onPostgres)
      Object.assign(env, { DATABASE_URL: process.env.TEST_DATABASE_URL, DATABASE_SCHEMA: db.schema });
    const { stdout } = await run(process.execPath, [...entryArgs('terminology/import/cli'), ...args], {
      cwd: ROOT,
      env,
      maxBuffer: 16 * 1024 * 1024,
    });
    return stdout;
  } finally {
    if (restart) {
      s = await db.start();
      token = (await signIn(s.base)).access_token;
    }
  }
}

beforeAll(async () => {
  await run(process.execPath, [GENERATOR, '--out', path.join(db.dir, 'bench')]);
  s = await db.start();
  token = (await signIn(s.base)).access_token;
});

describe('import CLI', () => {
  it('imports the 100,000-concept code system and its value set in under a minute', async () => {
    const started = Date.now();
    const out = await importCli(
      path.join(db.dir, 'bench', 'CodeSystem-synthetic-bench.json'),
      path.join(db.dir, 'bench', 'ValueSet-synthetic-bench-all.json'),
    );
    const ms = Date.now() - started;
    console.log(`import of 100,000 concepts (CLI process, including startup): ${ms} ms\n${out}`);
    expect(ms).toBeLessThan(60_000);
    expect(out).toMatch(/created CodeSystem\/\S+ .*\(100000 concepts\)/);
    const res = await call(
      s!.base,
      'GET',
      `fhir/R4/ValueSet/$expand?url=${encodeURIComponent(VS_URL)}&count=0`,
      {
        token,
      },
    );
    expect(res.status).toBe(200);
    expect(res.body.expansion.total).toBe(100000);
    const expected = JSON.parse(fs.readFileSync(path.join(db.dir, 'bench', 'expected.json'), 'utf8'));
    const sample = expected.sampleConcepts[2] as { code: string; display: string };
    const f = await call(
      s!.base,
      'GET',
      `fhir/R4/ValueSet/$expand?url=${encodeURIComponent(VS_URL)}&filter=${encodeURIComponent(sample.code)}&count=5`,
      { token },
    );
    expect(f.body.expansion.contains[0]).toMatchObject({ code: sample.code, display: sample.display });
  }, 180_000);

  it('re-running replaces instead of duplicating', async () => {
    const out = await importCli(path.join(db.dir, 'bench', 'CodeSystem-synthetic-bench.json'));
    expect(out).toMatch(/replaced CodeSystem\//);
    const search = await call(
      s!.base,
      'GET',
      `fhir/R4/CodeSystem?url=${encodeURIComponent(CS_URL)}&_count=0`,
      {
        token,
      },
    );
    expect(search.body.total).toBe(1);
    const res = await call(
      s!.base,
      'GET',
      `fhir/R4/ValueSet/$expand?url=${encodeURIComponent(VS_URL)}&count=0`,
      {
        token,
      },
    );
    expect(res.body.expansion.total).toBe(100000);
  }, 180_000);

  it('imports a Bundle and NDJSON; skips other resource types and invalid ones, saying why', async () => {
    const cs = {
      resourceType: 'CodeSystem',
      url: 'http://example.org/cs/imported',
      version: '1',
      status: 'active',
      content: 'complete',
      concept: [
        { code: 'x', display: 'Ex' },
        { code: 'y', display: 'Why' },
      ],
    };
    const vs = {
      resourceType: 'ValueSet',
      url: 'http://example.org/vs/imported',
      status: 'active',
      compose: { include: [{ system: 'http://example.org/cs/imported' }] },
    };
    const bundle = {
      resourceType: 'Bundle',
      type: 'collection',
      entry: [{ resource: cs }, { resource: vs }, { resource: { resourceType: 'Patient' } }],
    };
    const bundleFile = path.join(db.dir, 'bundle.json');
    fs.writeFileSync(bundleFile, JSON.stringify(bundle));
    const ndjsonFile = path.join(db.dir, 'more.ndjson');
    const cs2 = { ...cs, url: 'http://example.org/cs/imported2', concept: [{ code: 'z', display: 'Zed' }] };
    const dup = { ...cs, url: 'http://example.org/cs/dup', concept: [{ code: 'a' }, { code: 'a' }] };
    fs.writeFileSync(ndjsonFile, [cs2, vs, dup].map((r) => JSON.stringify(r)).join('\n') + '\n');

    const out = await importCli(bundleFile, ndjsonFile).catch((err: { stdout?: string }) => err.stdout ?? '');
    expect(out).toContain('created CodeSystem/');
    expect(out).toMatch(/skipped .*bundle\.json entry\[2\]: not a CodeSystem or ValueSet \(Patient\)/);
    expect(out).toMatch(/skipped .*more\.ndjson:3: Duplicate code "a"/);
    // The ValueSet appears in both files with the same url and no version: imported once, then replaced.
    expect(out).toMatch(/replaced ValueSet\//);
    const search = await call(s!.base, 'GET', `fhir/R4/ValueSet?url=${encodeURIComponent(vs.url)}`, {
      token,
    });
    expect(search.body.total).toBe(1);
    const exp = await call(s!.base, 'GET', `fhir/R4/ValueSet/$expand?url=${encodeURIComponent(vs.url)}`, {
      token,
    });
    expect(exp.status).toBe(200);
    expect(exp.body.expansion.contains.map((c: { code: string }) => c.code)).toEqual(['x', 'y']);
    const cs2Search = await call(s!.base, 'GET', `fhir/R4/CodeSystem?url=${encodeURIComponent(cs2.url)}`, {
      token,
    });
    expect(cs2Search.body.total).toBe(1);
    expect(cs2Search.body.entry[0].resource.concept).toEqual([{ code: 'z', display: 'Zed' }]);
  }, 180_000);

  it('refuses an unknown project and bad usage with a non-zero exit', async () => {
    const err = await importCli(
      path.join(db.dir, 'bundle.json'),
      '--project',
      '00000000-0000-4000-8000-000000000000',
    ).then(
      () => undefined,
      (e: { code?: number; stderr?: string }) => e,
    );
    expect(err?.code).toBe(1);
    expect(err?.stderr).toContain('does not exist');
  }, 120_000);
});
