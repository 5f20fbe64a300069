// `npm run import` of releases (the generated small ones) into a server's database, then what a client sees over
// REST. SNOMED CT RF2: $lookup (display, designations), $expand with a filter, $subsumes across a concept with
// several parents, implicit value sets and ECL, typeahead by code, the en-GB display with --language-refset; a
// malformed release: a non-zero exit naming file:line:column and nothing stored, also when the writer fails after
// some concepts were written. LOINC: terms, answer lists as ValueSets, linguistic variants. ICD-10-CM: the
// hierarchy, 7th-character codes, billable codes only selectable.
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
import { generateRelease } from './release-dir.js';

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

describe('implicit value sets and ECL over the imported SNOMED CT', () => {
  const expandUrl = (url: string, extra = '') =>
    get(`ValueSet/$expand?url=${encodeURIComponent(url)}${extra}`);

  it('?fhir_vs=isa/404684003 gives the clinical findings with their exact total, paged', async () => {
    const isa = await expandUrl(`${SCT}?fhir_vs=isa/404684003`, '&count=5');
    expect(isa.status).toBe(200);
    const viaFilter = await get(
      `ValueSet/$expand?url=${encodeURIComponent('http://example.org/vs/sct-findings')}&count=0`,
    );
    expect(isa.body.expansion.total).toBe(viaFilter.body.expansion.total);
    expect(isa.body.expansion.contains).toHaveLength(5);
    expect(isa.body.expansion.parameter).toContainEqual({
      name: 'used-codesystem',
      valueUri: `${SCT}|${SCT}/900000000000207008/version/${expected.date}`,
    });
  });

  it('ECL with a refinement and MINUS, and a syntax error named by position', async () => {
    const { code, parents } = expected.samples.multiParent;
    const minus = await expandUrl(
      `${SCT}?fhir_vs=ecl/${encodeURIComponent(`<< ${parents[0]} MINUS << ${code}`)}`,
      '&count=1000',
    );
    expect(minus.status).toBe(200);
    const codes = (minus.body.expansion.contains as Array<{ code: string }>).map((c) => c.code);
    expect(codes).toContain(parents[0]);
    expect(codes).not.toContain(code);
    const refined = await expandUrl(
      `${SCT}?fhir_vs=ecl/${encodeURIComponent('< 404684003 : 363698007 = *')}`,
      '&count=0',
    );
    expect(refined.status).toBe(200);
    expect(refined.body.expansion.total).toBeGreaterThan(0);
    const bad = await expandUrl(`${SCT}?fhir_vs=ecl/${encodeURIComponent('<< 404684003 AND')}`);
    expect(bad.status).toBe(400);
    expect(bad.body.issue[0].details.text).toMatch(/character \d+/);
  });

  it('typeahead by the start of a concept id: those codes first, in code order', async () => {
    const { code } = expected.samples.synonyms;
    const prefix = code.slice(0, 6);
    const res = await expandUrl(`${SCT}?fhir_vs`, `&filter=${prefix}&count=50`);
    expect(res.status).toBe(200);
    const codes = (res.body.expansion.contains as Array<{ code: string }>).map((c) => c.code);
    expect(codes).toContain(code);
    const starting = codes.filter((c) => c.startsWith(prefix));
    expect(codes.slice(0, starting.length)).toEqual(starting);
    expect(starting).toEqual([...starting].sort());
  });

  it('a later release beside the first: unversioned urls use the latest, a versioned url the one it names', async () => {
    const date = '20250701';
    const later = generateRf2(path.join(db.dir, 'rf2-later'), ['--date', date, '--concepts', '150']);
    const r = await importCli(later.dir);
    expect(r.code, r.stderr).toBe(0);
    expect(await snomedVersions()).toBe(2);
    const edition = `${SCT}/900000000000207008`;
    const isa = async (url: string) => {
      const res = await expandUrl(`${url}?fhir_vs=isa/404684003`, '&count=0');
      expect(res.status, res.text).toBe(200);
      const used = (res.body.expansion.parameter as Array<{ name: string; valueUri?: string }>).find(
        (p) => p.name === 'used-codesystem',
      );
      return { total: res.body.expansion.total as number, used: used?.valueUri };
    };
    expect(await isa(SCT)).toEqual({
      total: later.expected.counts.findingSubtree,
      used: `${SCT}|${edition}/version/${date}`,
    });
    expect(await isa(`${edition}/version/${expected.date}`)).toEqual({
      total: expected.counts.findingSubtree,
      used: `${SCT}|${edition}/version/${expected.date}`,
    });
    expect(later.expected.counts.findingSubtree).not.toBe(expected.counts.findingSubtree);
  }, 120_000);
});

describe('npm run import of a LOINC release', () => {
  const LOINC = 'http://loinc.org';
  let dir: string;
  beforeAll(() => {
    dir = generateRelease('gen-loinc.mjs', ['--terms', '300', '--version', '2.77']);
  });

  it('imports the terms as http://loinc.org|2.77 and each answer list as a ValueSet', async () => {
    const r = await importCli(dir);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/created CodeSystem\/\S+ http:\/\/loinc\.org\|2\.77 \(314 concepts\)/);
    expect(r.stdout).toMatch(/created ValueSet\/\S+ http:\/\/loinc\.org\/vs\/LL100-8\|2\.77/);
  }, 120_000);

  it('$lookup: the long common name as display, the short name and the German variant as designations', async () => {
    const res = await get(`CodeSystem/$lookup?system=${encodeURIComponent(LOINC)}&code=1000-9&property=*`);
    expect(res.status).toBe(200);
    const display = res.body.parameter.find((p: { name: string }) => p.name === 'display').valueString;
    expect(display).toMatch(/^Glucose \[Mass concentration\] in /);
    const text = JSON.stringify(res.body);
    expect(text).toContain('"SHORTNAME"');
    expect(text).toMatch(/"de-DE"/);
    expect(text).toContain('"COMPONENT"');
  });

  it('an answer list expands to its answers in order; http://loinc.org/vs finds terms by code, word and variant', async () => {
    const ll = await get(`ValueSet/$expand?url=${encodeURIComponent('http://loinc.org/vs/LL100-8')}`);
    expect(ll.status).toBe(200);
    expect((ll.body.expansion.contains as Array<{ display: string }>).map((c) => c.display)).toEqual([
      'Positive',
      'Negative',
      'Indeterminate',
    ]);
    const all = `ValueSet/$expand?url=${encodeURIComponent('http://loinc.org/vs')}`;
    const byCode = await get(`${all}&filter=1000&count=5`);
    expect(byCode.body.expansion.contains[0].code).toBe('1000-9');
    const byVariant = await get(`${all}&filter=glukose&count=50`);
    expect((byVariant.body.expansion.contains as Array<{ code: string }>).map((c) => c.code)).toContain(
      '1000-9',
    );
  });
});

describe('npm run import of an ICD-10-CM tabular list', () => {
  const ICD = 'http://hl7.org/fhir/sid/icd-10-cm';
  let dir: string;
  beforeAll(() => {
    dir = generateRelease('gen-icd10cm.mjs', ['--year', '2025']);
  });

  it('imports it as http://hl7.org/fhir/sid/icd-10-cm|2025', async () => {
    const r = await importCli(dir, '--format', 'icd10cm');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /created CodeSystem\/\S+ http:\/\/hl7\.org\/fhir\/sid\/icd-10-cm\|2025 \(\d+ concepts\)/,
    );
  }, 120_000);

  it('headers are not selectable, 7th-character codes are found by their start, the hierarchy subsumes', async () => {
    const header = await get(`CodeSystem/$lookup?system=${encodeURIComponent(ICD)}&code=A00`);
    expect(header.body.parameter).toContainEqual({ name: 'abstract', valueBoolean: true });
    const billable = await get(`CodeSystem/$lookup?system=${encodeURIComponent(ICD)}&code=B00.0XXA`);
    expect(billable.body.parameter).toContainEqual({ name: 'abstract', valueBoolean: false });
    const vs = {
      resourceType: 'ValueSet',
      url: 'http://example.org/vs/icd-all',
      status: 'active',
      compose: { include: [{ system: ICD }] },
    };
    expect((await call(s!.base, 'POST', 'fhir/R4/ValueSet', { token, body: vs })).status).toBe(201);
    const seventh = await get(`ValueSet/$expand?url=${encodeURIComponent(vs.url)}&filter=b00.0x&count=10`);
    expect((seventh.body.expansion.contains as Array<{ code: string }>).map((c) => c.code)).toEqual([
      'B00.0XXA',
      'B00.0XXD',
      'B00.0XXS',
    ]);
    const sub = await get(
      `CodeSystem/$subsumes?system=${encodeURIComponent(ICD)}&codeA=A00-A99&codeB=A00.11`,
    );
    expect(sub.body.parameter[0]).toEqual({ name: 'outcome', valueCode: 'subsumes' });
  });
});
