// SNOMED CT implicit value sets (`?fhir_vs` forms) and ECL over HTTP and GraphQL: a small SNOMED CT-like code system
// stored by a project through REST; $expand of every implicit url form (filter, count, offset, total,
// used-codesystem), $validate-code, an include.valueSet naming one, ECL errors as 400 OperationOutcomes naming the
// position, and another project not seeing the first one's SNOMED CT.
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES } from '../helpers/paths.js';
import { createProject } from '../helpers/projects.js';
import { call, useTestServer } from '../helpers/server.js';
import { fixtureCodeSystem, SCT, SCT_VERSION } from './engine/ecl/fixture.js';

const s = useTestServer({ signIn: true });
const OLD_VERSION = 'http://snomed.info/sct/900000000000207008/version/20240101';

interface Expansion {
  expansion: {
    total?: number;
    offset?: number;
    parameter?: Array<{ name: string; valueUri?: string; valueString?: string }>;
    contains?: Array<{ code: string; contains?: unknown[] }>;
  };
}

const expand = (query: string, token = s.token) =>
  call(s.base, 'GET', `fhir/R4/ValueSet/$expand?${query}`, { token });
const url = (u: string): string => `url=${encodeURIComponent(u)}`;
/** POST $expand of a ValueSet with this compose, given inline. */
const expandInline = (compose: Record<string, unknown>) =>
  call(s.base, 'POST', 'fhir/R4/ValueSet/$expand', {
    token: s.token,
    body: {
      resourceType: 'Parameters',
      parameter: [{ name: 'valueSet', resource: { resourceType: 'ValueSet', status: 'active', compose } }],
    },
  });
const codes = (b: Expansion): string[] => (b.expansion.contains ?? []).map((c) => c.code).sort();

beforeAll(async () => {
  for (const cs of [
    fixtureCodeSystem(),
    { ...fixtureCodeSystem(OLD_VERSION), concept: fixtureCodeSystem().concept!.slice(0, 5) },
  ]) {
    const res = await call(s.base, 'POST', 'fhir/R4/CodeSystem', { token: s.token, body: cs });
    if (res.status !== 201) throw new Error(`create CodeSystem: ${res.status} ${res.text}`);
  }
});

describe('SNOMED CT implicit value sets: $expand', () => {
  it('?fhir_vs: every concept of the latest version', async () => {
    const res = await expand(`${url(`${SCT}?fhir_vs`)}&count=5`);
    expect(res.status).toBe(200);
    const b = res.body as Expansion;
    expect(b.expansion.total).toBe(fixtureCodeSystem().concept!.length);
    expect(b.expansion.contains).toHaveLength(5);
    const used = b.expansion.parameter?.find((p) => p.name === 'used-codesystem');
    expect(used?.valueUri).toBe(`${SCT}|${SCT_VERSION}`);
    expect((res.body as { url: string }).url).toBe(`${SCT}?fhir_vs`);
  });

  it('?fhir_vs=isa/<id>: the concept and its descendants (a DAG), with filter, count and offset', async () => {
    const all = await expand(`${url(`${SCT}?fhir_vs=isa/56265001`)}&excludeNested=true`);
    expect(codes(all.body as Expansion)).toEqual(['22298006', '368009', '56265001', '56786000']);
    const page = await expand(`${url(`${SCT}?fhir_vs=isa/56265001`)}&count=2&offset=1`);
    expect((page.body as Expansion).expansion.total).toBe(4);
    expect((page.body as Expansion).expansion.offset).toBe(1);
    expect((page.body as Expansion).expansion.contains).toHaveLength(2);
    const filtered = await expand(`${url(`${SCT}?fhir_vs=isa/56265001`)}&filter=valve&excludeNested=true`);
    expect(codes(filtered.body as Expansion)).toEqual(['368009', '56786000']);
  });

  it('?fhir_vs=refset and refset/<id>', async () => {
    const refsets = await expand(url(`${SCT}?fhir_vs=refset`));
    expect(codes(refsets.body as Expansion)).toEqual(['723264001']);
    const members = await expand(url(`${SCT}?fhir_vs=refset/723264001`));
    expect(codes(members.body as Expansion)).toEqual(['39057004', '39607008', '80891009']);
  });

  it('?fhir_vs=ecl/<url-encoded ECL>, refinements included', async () => {
    const ecl = '< 404684003 |Clinical finding| : 363698007 |Finding site| = << 80891009 |Heart|';
    const res = await expand(`${url(`${SCT}?fhir_vs=ecl/${encodeURIComponent(ecl)}`)}&count=10`);
    expect(res.status).toBe(200);
    expect(codes(res.body as Expansion)).toEqual(['22298006', '368009', '56265001', '56786000']);
    expect((res.body as Expansion).expansion.total).toBe(4);
    const minus = await expand(
      url(`${SCT}?fhir_vs=ecl/${encodeURIComponent('<< 56265001 MINUS << 368009')}`),
    );
    expect(codes(minus.body as Expansion)).toEqual(['22298006', '56265001']);
  });

  it('the edition/version form picks that version; an unknown one is a 422', async () => {
    const old = await expand(url(`${OLD_VERSION}?fhir_vs`));
    expect(old.status).toBe(200);
    expect((old.body as Expansion).expansion.total).toBe(5);
    const used = (old.body as Expansion).expansion.parameter?.find((p) => p.name === 'used-codesystem');
    expect(used?.valueUri).toBe(`${SCT}|${OLD_VERSION}`);
    const edition = await expand(url(`${SCT}/900000000000207008?fhir_vs=isa/56265001`));
    expect((edition.body as Expansion).expansion.total).toBe(4);
    const missing = await expand(url(`${SCT}/900000000000207008/version/19990101?fhir_vs`));
    expect(missing.status).toBe(422);
    expect(missing.body.issue[0].code).toBe('not-found');
  });

  it('an ECL syntax error is a 400 OperationOutcome naming the position', async () => {
    const res = await expand(url(`${SCT}?fhir_vs=ecl/${encodeURIComponent('<< 56265001 AND')}`));
    expect(res.status).toBe(400);
    expect(res.body.resourceType).toBe('OperationOutcome');
    expect(res.body.issue[0].code).toBe('invalid');
    expect(res.body.issue[0].details.text).toMatch(
      /^ECL of the implicit value set url: ECL syntax error at character 16: expected a concept id/,
    );
    expect(res.body.issue[0].expression).toEqual(['url']);
    const bad = await expand(url(`${SCT}?fhir_vs=foo`));
    expect(bad.status).toBe(400);
  });

  it('a nesting bomb in a compose filter is a 400 naming the filter', async () => {
    const bomb = '('.repeat(10_000) + '1' + ')'.repeat(10_000);
    const res = await expandInline({
      include: [{ system: SCT, filter: [{ property: 'constraint', op: '=', value: bomb }] }],
    });
    expect(res.status).toBe(400);
    expect(res.body.issue[0].details.text).toContain('nested too deeply');
    expect(res.body.issue[0].expression[0]).toMatch(/include\[0\]\.filter\[0\]/);
  });

  it('a compose include.valueSet naming an implicit value set', async () => {
    const res = await expandInline({
      include: [{ valueSet: [`${SCT}?fhir_vs=isa/56265001`, `${SCT}?fhir_vs=refset/723264001`] }],
      exclude: [{ system: SCT, concept: [{ code: '56265001' }] }],
    });
    expect(res.status).toBe(200);
    expect(codes(res.body as Expansion)).toEqual([]);
    const union = await expandInline({
      include: [
        { valueSet: [`${SCT}?fhir_vs=isa/56265001`] },
        { valueSet: [`${SCT}?fhir_vs=refset/723264001`] },
      ],
    });
    expect((union.body as Expansion).expansion.total).toBe(7);
  });

  it('GraphQL expandValueSet takes an implicit url', async () => {
    const res = await call(s.base, 'POST', 'graphql', {
      token: s.token,
      body: { query: `{ expandValueSet(url: "${SCT}?fhir_vs=isa/368009", count: 10) }` },
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(200);
    expect((res.body.data.expandValueSet as Expansion).expansion.total).toBe(2);
  });
});

describe('SNOMED CT implicit value sets: $validate-code and tenancy', () => {
  it('$validate-code with an implicit url', async () => {
    const vsUrl = encodeURIComponent(`${SCT}?fhir_vs=ecl/${encodeURIComponent('<< 56265001')}`);
    const yes = await call(
      s.base,
      'GET',
      `fhir/R4/ValueSet/$validate-code?url=${vsUrl}&system=${SCT}&code=56786000`,
      {
        token: s.token,
      },
    );
    expect(yes.status).toBe(200);
    expect(yes.body.parameter.find((p: { name: string }) => p.name === 'result').valueBoolean).toBe(true);
    const no = await call(
      s.base,
      'GET',
      `fhir/R4/ValueSet/$validate-code?url=${vsUrl}&system=${SCT}&code=39057004`,
      {
        token: s.token,
      },
    );
    expect(no.body.parameter.find((p: { name: string }) => p.name === 'result').valueBoolean).toBe(false);
  });

  it("another project cannot expand a project's own SNOMED CT", async () => {
    const other = await createProject(s.base, s.token, 'No SNOMED');
    const res = await expand(url(`${SCT}?fhir_vs=isa/56265001`), other.token);
    expect(res.status).toBe(422);
    expect(res.body.issue[0].code).toBe('not-found');
    const all = await expand(url(`${SCT}?fhir_vs`), other.token);
    expect(all.status).toBe(422);
  });

  it('LOINC http://loinc.org/vs is every LOINC code (none loaded: 422)', async () => {
    const none = await expand(url('http://loinc.org/vs'));
    expect(none.status).toBe(422);
    expect(none.body.issue[0].details.text).toContain('http://loinc.org');
    const loinc = JSON.parse(
      fs.readFileSync(path.join(FIXTURES, 'CodeSystem-loinc-fragment.json'), 'utf8'),
    ) as {
      concept: unknown[];
    };
    const other = await createProject(s.base, s.token, 'LOINC');
    const created = await call(s.base, 'POST', 'fhir/R4/CodeSystem', {
      token: other.token,
      body: { ...loinc, id: undefined },
    });
    expect(created.status).toBe(201);
    const all = await expand(`${url('http://loinc.org/vs')}&count=3`, other.token);
    expect(all.status).toBe(200);
    expect((all.body as Expansion).expansion.total).toBe(loinc.concept.length);
  });
});
