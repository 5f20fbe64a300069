// The streamed import (src/terminology/import/scan.ts, import/stream.ts): a CodeSystem read from a plain JSON file,
// a Bundle or NDJSON, one top-level concept at a time, is stored exactly as the same CodeSystem written whole (as
// before, and as REST writes it); one the stream cannot take exactly is read again whole; an import that fails
// half-way leaves nothing visible and nothing behind.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flattenCodeSystemConcepts, type CodeSystemResource } from '../../../src/terminology/engine/index.js';
import { importFiles } from '../../../src/terminology/import/files.js';
import { writeTerminologyResource } from '../../../src/terminology/resource-write.js';
import { call, useTestServer } from '../../helpers/server.js';

const s = useTestServer({ signIn: true });
let token: string;
let projectId: string;
let tmp: string;

beforeAll(async () => {
  token = s.token;
  projectId = (await call(s.base, 'GET', 'auth/me', { token })).body.project.id;
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'fhir-import-stream-'));
});

afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** A CodeSystem with what flattening reads: nesting, parent/child/status/inactive/notSelectable properties (some
 * declared with a standard uri under another code), designations, extensions, a definition; `n` top-level concepts
 * with 3 children each. */
function codeSystem(url: string, n: number): Record<string, unknown> {
  const concept = Array.from({ length: n }, (_, i) => ({
    code: `t${i}`,
    display: `Top "${i}" \\ héllo`,
    ...(i % 7 === 0 ? { definition: `Definition of t${i}` } : {}),
    ...(i % 5 === 0
      ? {
          designation: [{ language: 'de', value: `Oben ${i}` }],
          extension: [{ url: 'http://x/e', valueInteger: i }],
        }
      : {}),
    property: [
      ...(i > 0 ? [{ code: 'parent', valueCode: `t${i - 1}` }] : []),
      ...(i % 3 === 0 ? [{ code: 'abstract', valueBoolean: true }] : []),
      ...(i % 4 === 0 ? [{ code: 'status', valueCode: 'retired' }] : []),
      // A child link inside its own top-level concept.
      { code: 'child', valueCode: `t${i}-2` },
    ],
    concept: [0, 1, 2].map((j) => ({
      code: `t${i}-${j}`,
      display: `Child ${j} of ${i}`,
      ...(j === 1 ? { concept: [{ code: `t${i}-1-x`, display: 'Grandchild' }] } : {}),
    })),
  }));
  return {
    resourceType: 'CodeSystem',
    url,
    version: '1',
    status: 'active',
    content: 'complete',
    count: n * 5,
    property: [
      { code: 'parent', type: 'code' },
      { code: 'child', type: 'code' },
      { code: 'status', type: 'code' },
      { code: 'abstract', type: 'boolean', uri: 'http://hl7.org/fhir/concept-properties#notSelectable' },
    ],
    concept,
  };
}

/** The live generation's rows of a CodeSystem, without ids. */
async function rowsOf(url: string): Promise<unknown[]> {
  return s.services.db.sql(
    `SELECT c.ordinal, c.code, c.display, c.definition, c.parents, c."notSelectable", c.inactive, c.status,
       c.designations, c.properties, c.extensions
     FROM "Concept" c JOIN "ConceptGeneration" g ON g.id = c."generationId" AND g.state = 'live'
     JOIN "CodeSystem" cs ON cs.id = g."codeSystemId" WHERE cs.url = $1 ORDER BY c.ordinal`,
    [url],
  );
}

/** The CodeSystem as REST reads it back (its concept tree rebuilt from the rows), without what differs per write. */
async function readBack(url: string): Promise<Record<string, unknown>> {
  const found = await call(s.base, 'GET', `fhir/R4/CodeSystem?url=${encodeURIComponent(url)}`, { token });
  expect(found.body.total).toBe(1);
  const read = await call(s.base, 'GET', `fhir/R4/CodeSystem/${found.body.entry[0].resource.id}`, { token });
  const { id: _id, meta: _meta, url: _url, ...rest } = read.body as Record<string, unknown>;
  return rest;
}

/** The same CodeSystem written whole, as before the streamed import (and as REST writes one). */
async function writeWhole(cs: Record<string, unknown>): Promise<void> {
  const concepts = flattenCodeSystemConcepts(cs as unknown as CodeSystemResource);
  const { concept: _c, ...resource } = cs;
  await writeTerminologyResource(s.services.db, s.services.terminology.generations, 'CodeSystem', resource, {
    projectId,
    replaceSame: true,
    concepts,
  });
}

function file(name: string, text: string): string {
  const f = path.join(tmp, name);
  fs.writeFileSync(f, text);
  return f;
}

async function leftovers(): Promise<number> {
  await s.services.terminology.generations.sweepNow();
  const [r] = await s.services.db.sql<{ n: number }>(
    `SELECT count(*)::int AS n FROM "Concept" c WHERE NOT EXISTS
       (SELECT 1 FROM "ConceptGeneration" g WHERE g.id = c."generationId" AND g.state = 'live')`,
  );
  return r.n;
}

describe('streamed import', () => {
  it('stores a CodeSystem from a JSON file, a Bundle and NDJSON exactly as the same CodeSystem written whole', async () => {
    const n = 400; // 2,000 concepts: several statements of 250 rows on PGlite
    await writeWhole(codeSystem('http://example.org/stream/whole', n));
    const expected = await rowsOf('http://example.org/stream/whole');
    expect(expected).toHaveLength(n * 5);
    const expectedRead = await readBack('http://example.org/stream/whole');

    const plain = file(
      'plain.json',
      JSON.stringify(codeSystem('http://example.org/stream/plain', n), null, 2),
    );
    const bundle = file(
      'bundle.json',
      JSON.stringify({
        resourceType: 'Bundle',
        type: 'collection',
        entry: [
          { fullUrl: 'urn:uuid:1', resource: codeSystem('http://example.org/stream/bundle', n) },
          { fullUrl: 'urn:uuid:2' },
          {
            resource: {
              resourceType: 'ValueSet',
              url: 'http://example.org/stream/vs',
              status: 'active',
              compose: { include: [{ system: 'http://example.org/stream/bundle' }] },
            },
          },
        ],
      }),
    );
    const ndjson = file(
      'lines.ndjson',
      [
        JSON.stringify({ resourceType: 'Patient', id: 'p' }),
        '',
        JSON.stringify(codeSystem('http://example.org/stream/ndjson', n)),
      ].join('\n') + '\n',
    );
    // A Bundle whose resourceType comes after its entries is parsed whole (the scanner cannot know it earlier).
    const lateBundle = file(
      'late-bundle.json',
      JSON.stringify({
        entry: [{ resource: codeSystem('http://example.org/stream/late-bundle', n) }],
        resourceType: 'Bundle',
      }),
    );
    const result = await importFiles(
      s.services.db,
      [plain, bundle, ndjson, lateBundle],
      projectId,
      {},
      { exclusive: true },
    );
    expect(result.resources.map((r) => [r.type, r.url, r.concepts])).toEqual([
      ['CodeSystem', 'http://example.org/stream/plain', n * 5],
      ['CodeSystem', 'http://example.org/stream/bundle', n * 5],
      ['ValueSet', 'http://example.org/stream/vs', 0],
      ['CodeSystem', 'http://example.org/stream/ndjson', n * 5],
      ['CodeSystem', 'http://example.org/stream/late-bundle', n * 5],
    ]);
    expect(result.skipped.map((k) => k.where)).toEqual([`${bundle} entry[1]`, `${ndjson}:1`]);
    for (const url of ['plain', 'bundle', 'ndjson', 'late-bundle'].map(
      (k) => `http://example.org/stream/${k}`,
    )) {
      expect(await rowsOf(url)).toEqual(expected);
      expect(await readBack(url)).toEqual(expectedRead);
    }
    const expand = await call(
      s.base,
      'GET',
      `fhir/R4/ValueSet/$expand?url=${encodeURIComponent('http://example.org/stream/vs')}&filter=grandchild&count=1`,
      { token },
    );
    expect(expand.body.expansion.total).toBe(n);
  });

  it('reads again whole a CodeSystem with members after its concepts or a child link across top-level concepts', async () => {
    const late = codeSystem('http://example.org/stream/late', 20);
    const { property, ...rest } = late;
    // `property` after `concept`: its uri makes `abstract` mean notSelectable, which the rows must show.
    const lateFile = file('late.json', JSON.stringify({ ...rest, property }));
    const cross = codeSystem('http://example.org/stream/cross', 20);
    ((cross.concept as Array<{ property: unknown[] }>)[0].property as unknown[]).push({
      code: 'child',
      valueCode: 't5-0',
    });
    const crossFile = file('cross.json', JSON.stringify(cross));
    const result = await importFiles(s.services.db, [lateFile, crossFile], projectId);
    expect(result.skipped).toEqual([]);
    await writeWhole({ ...late, url: 'http://example.org/stream/late-whole' });
    await writeWhole({ ...cross, url: 'http://example.org/stream/cross-whole' });
    expect(await rowsOf('http://example.org/stream/late')).toEqual(
      await rowsOf('http://example.org/stream/late-whole'),
    );
    const crossRows = await rowsOf('http://example.org/stream/cross');
    expect(crossRows).toEqual(await rowsOf('http://example.org/stream/cross-whole'));
    expect(
      (crossRows as Array<{ code: string; parents: string[] }>).find((r) => r.code === 't5-0')!.parents,
    ).toEqual(['t5', 't0']);
    expect(await leftovers()).toBe(0);
  });

  it('an import that fails half-way (a repeated code, a truncated file) leaves nothing visible and nothing behind', async () => {
    const dup = codeSystem('http://example.org/stream/dup', 1500);
    (dup.concept as Array<{ code: string }>)[1400].code = 't3';
    const dupFile = file('dup.json', JSON.stringify(dup));
    const result = await importFiles(s.services.db, [dupFile], projectId, {}, { exclusive: true });
    expect(result.resources).toEqual([]);
    expect(result.skipped).toEqual([
      { where: dupFile, reason: expect.stringContaining('Duplicate code "t3"') as unknown as string },
    ]);

    const text = JSON.stringify(codeSystem('http://example.org/stream/truncated', 1500));
    const truncated = file('truncated.json', text.slice(0, Math.floor(text.length * 0.8)));
    await expect(importFiles(s.services.db, [truncated], projectId)).rejects.toThrow(/not valid JSON/);

    for (const url of ['dup', 'truncated'].map((k) => `http://example.org/stream/${k}`)) {
      const found = await call(s.base, 'GET', `fhir/R4/CodeSystem?url=${encodeURIComponent(url)}`, { token });
      expect(found.body.total).toBe(0);
    }
    expect(await leftovers()).toBe(0);
  });
});
