// `npm run import` of a SNOMED CT RF2 release (the generated small one) into a server's database, then what a
// client sees over REST: $lookup (display, designations), $expand with a filter, $subsumes across a concept with
// several parents, the en-GB display with --language-refset; a malformed release: a non-zero exit naming
// file:line:column and nothing stored, also when the writer fails after some concepts were written.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../src/db/database.js';
import type { ConceptInput } from '../../../src/terminology/engine/index.js';
import { importRelease } from '../../../src/terminology/import/release/write.js';
import { ReleaseFormatError, type ReleaseFormat } from '../../../src/terminology/import/release/types.js';
import { useTestDatabase } from '../../helpers/database.js';
import { entryArgs } from '../../helpers/processes.js';
import { call, onPostgres, signIn, type TestServer } from '../../helpers/server.js';
import { ROOT } from '../../helpers/paths.js';
import { generateRf2, withLine, type Rf2Samples } from './rf2/rf2-release.js';

const run = promisify(execFile);
const SCT = 'http://snomed.info/sct';
const EN_GB = '900000000000508004';

const db = useTestDatabase({ onDisk: true });
let s: TestServer | undefined;
let token: string;
let release: string;
let expected: Rf2Samples;

function env(): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: db.dataDir, LOG_LEVEL: 'silent' };
  if (onPostgres)
    Object.assign(e, { DATABASE_URL: process.env.TEST_DATABASE_URL, DATABASE_SCHEMA: db.schema });
  return e;
}

/** Runs with the server stopped (the embedded database is one process's at a time), then starts it again. */
async function serverStopped<T>(fn: () => Promise<T>): Promise<T> {
  if (s) {
    await s.close();
    s = undefined;
  }
  try {
    return await fn();
  } finally {
    s = await db.start();
    token = (await signIn(s.base)).access_token;
  }
}

/** The import CLI as a user runs it: stdout, stderr and exit code. */
function importCli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return serverStopped(() =>
    run(process.execPath, [...entryArgs('terminology/import/cli'), ...args], {
      cwd: ROOT,
      env: env(),
      maxBuffer: 16 * 1024 * 1024,
    }).then(
      (r) => ({ code: 0, ...r }),
      (e: { code: number; stdout: string; stderr: string }) => ({
        code: e.code,
        stdout: e.stdout,
        stderr: e.stderr,
      }),
    ),
  );
}

const get = (p: string) => call(s!.base, 'GET', `fhir/R4/${p}`, { token });

async function snomedVersions(): Promise<number> {
  return (await get(`CodeSystem?url=${encodeURIComponent(SCT)}&_count=0`)).body.total as number;
}

beforeAll(async () => {
  ({ dir: release, expected } = generateRf2(path.join(db.dir, 'rf2')));
  // The first start creates the test accounts (before any CLI run, which would create its own).
  s = await db.start();
  token = (await signIn(s.base)).access_token;
});

describe('npm run import of an RF2 release', () => {
  it('refuses a malformed release with a non-zero exit naming file:line:column, storing nothing', async () => {
    const bad = withLine(release, /sct2_Relationship_Snapshot/, 9, (l) =>
      l.replace(/^(\d+\t)\d{8}/, '$12025-01-01'),
    );
    const r = await importCli(bad);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /import failed: .*Snapshot\/Terminology\/sct2_Relationship_Snapshot_INT_\d{8}\.txt:9:\d+: effectiveTime "2025-01-01" is not a date YYYYMMDD/,
    );
    expect(await snomedVersions()).toBe(0);
  }, 120_000);

  it('stores nothing when the writer fails after some concepts were written', async () => {
    const failing: ReleaseFormat = {
      name: 'rf2',
      detect: () => Promise.resolve(true),
      read: () =>
        Promise.resolve({
          codeSystems: [
            {
              head: {
                resourceType: 'CodeSystem',
                url: SCT,
                version: 'broken',
                content: 'complete',
                status: 'active',
              },
              async *concepts(): AsyncGenerator<ConceptInput[]> {
                yield Array.from({ length: 6000 }, (_, i) => ({
                  code: String(100000 + i),
                  display: `c${i}`,
                }));
                throw new ReleaseFormatError('x.txt', 6001, 1, 'broken on purpose');
              },
            },
          ],
        }),
    };
    await serverStopped(async () => {
      const d = await openDatabase({
        databaseUrl: onPostgres ? process.env.TEST_DATABASE_URL : undefined,
        schema: db.schema,
        dataDir: db.dataDir,
      });
      try {
        const count = async () =>
          Number((await d.sql<{ n: string }>('SELECT count(*) AS n FROM "Concept"'))[0].n);
        const before = await count();
        const [{ id: projectId }] = await d.sql<{ id: string }>('SELECT id FROM "Project" LIMIT 1');
        await expect(
          importRelease(
            d,
            {
              source: 'x',
              list: () => [],
              open: () => {
                throw new Error('unused');
              },
            },
            failing,
            {},
            projectId,
            {},
            { exclusive: true },
          ),
        ).rejects.toThrow('x.txt:6001:1: broken on purpose');
        expect(await count()).toBe(before);
      } finally {
        await d.close();
      }
    });
    expect(await snomedVersions()).toBe(0);
  }, 120_000);

  it('imports the release as one CodeSystem version', async () => {
    const r = await importCli(release);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      new RegExp(
        `created CodeSystem/\\S+ http://snomed.info/sct\\|http://snomed.info/sct/900000000000207008/version/${expected.date} \\(${expected.counts.concepts} concepts\\)`,
      ),
    );
    expect(await snomedVersions()).toBe(1);
  }, 120_000);

  it('$lookup gives the en-US display, the FSN and synonyms as designations', async () => {
    const sample = expected.samples.synonyms;
    const res = await get(`CodeSystem/$lookup?system=${encodeURIComponent(SCT)}&code=${sample.code}`);
    expect(res.status).toBe(200);
    const param = (name: string) => res.body.parameter.filter((p: { name: string }) => p.name === name);
    expect(param('display')[0].valueString).toBe(sample.display);
    expect(param('version')[0].valueString).toBe(`${SCT}/900000000000207008/version/${expected.date}`);
    const designations = param('designation').map(
      (p: {
        part: Array<{
          name: string;
          valueString?: string;
          valueCode?: string;
          valueCoding?: { code: string };
        }>;
      }) =>
        Object.fromEntries(p.part.map((x) => [x.name, x.valueString ?? x.valueCode ?? x.valueCoding?.code])),
    );
    expect(designations).toContainEqual({ language: 'en', use: '900000000000003001', value: sample.fsn });
    for (const syn of sample.synonyms)
      expect(designations).toContainEqual({ language: 'en', use: '900000000000013009', value: syn });
  });

  it('$expand of a value set of clinical findings with a text filter', async () => {
    const vs = {
      resourceType: 'ValueSet',
      url: 'http://example.org/vs/sct-findings',
      status: 'active',
      compose: {
        include: [{ system: SCT, filter: [{ property: 'concept', op: 'is-a', value: '404684003' }] }],
      },
    };
    expect((await call(s!.base, 'POST', 'fhir/R4/ValueSet', { token, body: vs })).status).toBe(201);
    const word = expected.samples.enGb.display.split(' ')[2];
    const res = await get(
      `ValueSet/$expand?url=${encodeURIComponent(vs.url)}&filter=${encodeURIComponent(word)}&count=100`,
    );
    expect(res.status).toBe(200);
    expect(res.body.expansion.total).toBeGreaterThan(0);
    const contains = res.body.expansion.contains as Array<{ code: string; display: string; system: string }>;
    expect(contains).toContainEqual(
      expect.objectContaining({
        system: SCT,
        code: expected.samples.enGb.code,
        display: expected.samples.enGb.display,
      }),
    );
    // Procedures are not clinical findings.
    const all = await get(`ValueSet/$expand?url=${encodeURIComponent(vs.url)}&count=0`);
    expect(all.body.expansion.total).toBeGreaterThan(50);
    const proc = await get(
      `ValueSet/$expand?url=${encodeURIComponent(vs.url)}&filter=${encodeURIComponent('Procedure')}&count=10`,
    );
    expect(proc.body.expansion.contains ?? []).not.toContainEqual(
      expect.objectContaining({ code: '71388002' }),
    );
  });

  it('$subsumes follows each of several parents', async () => {
    const { code, parents } = expected.samples.multiParent;
    for (const parent of parents) {
      const res = await get(
        `CodeSystem/$subsumes?system=${encodeURIComponent(SCT)}&codeA=${parent}&codeB=${code}`,
      );
      expect(res.body.parameter[0]).toEqual({ name: 'outcome', valueCode: 'subsumes' });
    }
    const up = await get(
      `CodeSystem/$subsumes?system=${encodeURIComponent(SCT)}&codeA=${code}&codeB=404684003`,
    );
    expect(up.body.parameter[0]).toEqual({ name: 'outcome', valueCode: 'subsumed-by' });
    const none = await get(
      `CodeSystem/$subsumes?system=${encodeURIComponent(SCT)}&codeA=71388002&codeB=${code}`,
    );
    expect(none.body.parameter[0]).toEqual({ name: 'outcome', valueCode: 'not-subsumed' });
  });

  it('re-imported with --language-refset en-GB: the same version replaced, en-GB displays', async () => {
    const r = await importCli(release, '--language-refset', EN_GB);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/replaced CodeSystem\//);
    expect(await snomedVersions()).toBe(1);
    const { code, gbDisplay } = expected.samples.enGb;
    const res = await get(`CodeSystem/$lookup?system=${encodeURIComponent(SCT)}&code=${code}`);
    expect(res.body.parameter.find((p: { name: string }) => p.name === 'display').valueString).toBe(
      gbDisplay,
    );
  }, 120_000);
});
