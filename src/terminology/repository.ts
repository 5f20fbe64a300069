// Storage of CodeSystem and ValueSet resources: one row per resource (JSON without concepts), Concept rows for
// code system content, TerminologyIdentifier rows for search. Bulk paths use raw SQL with unnest() arrays, so a
// batch of thousands of concepts is one statement with a handful of bind parameters (PostgreSQL allows 65,535).
import type { Database } from '../db/database.js';
import { ApiError, badRequest, notFound } from '../core/errors.js';
import type { FhirResource } from '../fhir/types.js';
import { flattenCodeSystemConcepts } from './engine/flatten.js';
import type { CodeSystemConcept, CodeSystemResource, ConceptInput, ConceptProperty } from './engine/types.js';

export type Sql = Database['sql'];
export type TerminologyType = 'CodeSystem' | 'ValueSet';

/** Rows per INSERT statement: big enough to amortise the round trip, small enough to keep memory flat. */
export const CONCEPT_BATCH = 5000;

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True when s can be a row id (ids are UUIDs). */
export function isRowId(s: string): boolean {
  return UUID_RE.test(s);
}

/** A stored resource row (CodeSystem or ValueSet) as selected by ROW_COLUMNS. */
export interface ResourceRow {
  id: string;
  projectId: string | null;
  url: string | null;
  version: string | null;
  name: string | null;
  status: string | null;
  resource: Record<string, unknown>;
  versionId: number;
  lastUpdated: string;
}

/** Columns selected for a resource row (lastUpdated rendered in UTC by the database, whatever the driver). */
export const ROW_COLUMNS = `id, "projectId", url, version, name, status, resource, "versionId",
  to_char("updatedAt", 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "lastUpdated"`;

/** The FHIR resource of a row (concepts not included). */
export function rowToResource(type: TerminologyType, row: ResourceRow): FhirResource {
  const stored = (typeof row.resource === 'string' ? JSON.parse(row.resource) : row.resource) as Record<
    string,
    unknown
  >;
  const body = stripForStorage(stored);
  const meta = {
    ...((body.meta as object | undefined) ?? {}),
    versionId: String(row.versionId),
    lastUpdated: row.lastUpdated,
  };
  const out: FhirResource = { resourceType: type, id: row.id, meta, ...body };
  out.meta = meta;
  return out;
}

/** The resource as stored: without id, concepts and server-managed meta (those live in columns and rows). */
function stripForStorage(resource: Record<string, unknown>): Record<string, unknown> {
  const { id: _id, concept: _concept, meta, resourceType: _t, ...rest } = resource;
  const out: Record<string, unknown> = { resourceType: resource.resourceType, ...rest };
  if (meta && typeof meta === 'object') {
    const { versionId: _v, lastUpdated: _l, ...m } = meta as Record<string, unknown>;
    if (Object.keys(m).length > 0) out.meta = m;
  }
  return out;
}

function str(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}

/** Checks the parts of a CodeSystem the server relies on; duplicate codes are a 400. */
export function validateCodeSystem(cs: CodeSystemResource): void {
  if (cs.url !== undefined && typeof cs.url !== 'string')
    throw badRequest('CodeSystem.url must be a string', ['CodeSystem.url']);
  if (cs.concept !== undefined && !Array.isArray(cs.concept))
    throw badRequest('CodeSystem.concept must be an array', ['CodeSystem.concept']);
  const seen = new Set<string>();
  // Iterative (an explicit stack of lists): a deep tree must be a 400 naming the limit, never a stack overflow.
  const stack: Array<{ list: unknown[]; i: number }> = [];
  const pathOf = (extra: string): string => {
    const parts = stack.map((f, k) => `${k === 0 ? 'CodeSystem' : ''}.concept[${f.i}]`);
    const p = parts.join('');
    // A path thousands of levels deep is unreadable: keep its start and end.
    return (p.length > 300 ? `${p.slice(0, 120)}...${p.slice(-120)}` : p) + extra;
  };
  if (cs.concept !== undefined) stack.push({ list: cs.concept, i: -1 });
  while (stack.length > 0) {
    const top = stack[stack.length - 1];
    top.i++;
    if (top.i >= top.list.length) {
      stack.pop();
      continue;
    }
    const c = top.list[top.i] as CodeSystemConcept;
    if (!c || typeof c !== 'object' || typeof c.code !== 'string' || c.code === '')
      throw badRequest(`${pathOf('.code')} is required (a non-empty string)`, [pathOf('.code')]);
    if (seen.has(c.code)) throw badRequest(`Duplicate code "${c.code}" in CodeSystem`, [pathOf('.code')]);
    seen.add(c.code);
    if (c.concept === undefined) continue;
    if (!Array.isArray(c.concept))
      throw badRequest(`${pathOf('.concept')} must be an array`, [pathOf('.concept')]);
    if (c.concept.length === 0) continue;
    if (stack.length >= MAX_CONCEPT_DEPTH) {
      throw badRequest(
        `CodeSystem.concept is nested more than ${MAX_CONCEPT_DEPTH} levels deep (at ${pathOf('.concept')}): ` +
          `flatten the hierarchy with the parent property`,
        [pathOf('.concept')],
      );
    }
    stack.push({ list: c.concept, i: -1 });
  }
}

/** Deepest accepted nesting of CodeSystem.concept (a tree deeper than this could not even be serialised back). */
export const MAX_CONCEPT_DEPTH = 100;

/** Checks the parts of a ValueSet the server relies on. */
export function validateValueSet(vs: Record<string, unknown>): void {
  if (vs.url !== undefined && typeof vs.url !== 'string')
    throw badRequest('ValueSet.url must be a string', ['ValueSet.url']);
  if (
    vs.compose !== undefined &&
    (typeof vs.compose !== 'object' || vs.compose === null || Array.isArray(vs.compose))
  )
    throw badRequest('ValueSet.compose must be an object', ['ValueSet.compose']);
}

/** Inserts concept rows in batches of CONCEPT_BATCH, one unnest() statement per batch (12 bind parameters). */
export async function insertConcepts(
  sql: Sql,
  codeSystemId: string,
  rows: ConceptInput[],
  onProgress?: (done: number) => void,
): Promise<void> {
  for (let start = 0; start < rows.length; start += CONCEPT_BATCH) {
    const end = Math.min(rows.length, start + CONCEPT_BATCH);
    const n = end - start;
    const ordinals = new Array<number>(n);
    const codes = new Array<string>(n);
    const displays = new Array<string | null>(n);
    const definitions = new Array<string | null>(n);
    // Parents travel as one string per row joined by U+001F (unit separator): unnest cannot take ragged 2-D arrays.
    const parents = new Array<string>(n);
    const notSelectable = new Array<boolean>(n);
    const inactive = new Array<boolean>(n);
    const statuses = new Array<string | null>(n);
    const designations = new Array<string | null>(n);
    const properties = new Array<string | null>(n);
    const extensions = new Array<string | null>(n);
    for (let i = 0; i < n; i++) {
      const r = rows[start + i];
      ordinals[i] = start + i;
      codes[i] = r.code;
      displays[i] = r.display ?? null;
      definitions[i] = r.definition ?? null;
      parents[i] = (r.parents ?? []).join('\u001f');
      notSelectable[i] = r.notSelectable === true;
      inactive[i] = r.inactive === true;
      statuses[i] = r.status ?? null;
      designations[i] = r.designations ? JSON.stringify(r.designations) : null;
      properties[i] = r.properties ? JSON.stringify(r.properties) : null;
      extensions[i] = r.extensions ? JSON.stringify(r.extensions) : null;
    }
    await sql(
      `INSERT INTO "Concept" ("codeSystemId", ordinal, code, display, definition, parents, "notSelectable", inactive,
         status, designations, properties, extensions)
       SELECT $1::uuid, o, c, d, df, CASE WHEN p = '' THEN '{}'::text[] ELSE string_to_array(p, chr(31)) END,
         ns, ia, st, ds::jsonb, pr::jsonb, ex::jsonb
       FROM unnest($2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bool[], $8::bool[], $9::text[],
         $10::text[], $11::text[], $12::text[]) AS t(o, c, d, df, p, ns, ia, st, ds, pr, ex)`,
      [
        codeSystemId,
        ordinals,
        codes,
        displays,
        definitions,
        parents,
        notSelectable,
        inactive,
        statuses,
        designations,
        properties,
        extensions,
      ],
    );
    onProgress?.(end);
  }
}

async function writeIdentifiers(
  sql: Sql,
  type: TerminologyType,
  resourceId: string,
  projectId: string | null,
  resource: Record<string, unknown>,
): Promise<void> {
  await sql(`DELETE FROM "TerminologyIdentifier" WHERE "resourceId" = $1`, [resourceId]);
  const ids = Array.isArray(resource.identifier)
    ? (resource.identifier as Array<Record<string, unknown>>)
    : [];
  const systems: Array<string | null> = [];
  const values: string[] = [];
  for (const i of ids) {
    if (i && typeof i.value === 'string') {
      systems.push(str(i.system));
      values.push(i.value);
    }
  }
  if (values.length === 0) return;
  await sql(
    `INSERT INTO "TerminologyIdentifier" ("projectId", "resourceType", "resourceId", system, value)
     SELECT $1::uuid, $2, $3::uuid, s, v FROM unnest($4::text[], $5::text[]) AS t(s, v)`,
    [projectId, type, resourceId, systems, values],
  );
}

function table(type: TerminologyType): string {
  return type === 'CodeSystem' ? '"CodeSystem"' : '"ValueSet"';
}

export interface SaveOptions {
  projectId: string | null;
  /** Update this row (must belong to projectId); otherwise create, or replace the same url+version (replaceSame). */
  id?: string;
  /** Import semantics: an existing resource with the same url and version in the project is replaced. */
  replaceSame?: boolean;
  /** Concept rows (CodeSystem only); computed from resource.concept when absent. */
  concepts?: ConceptInput[];
  onProgress?: (done: number) => void;
}

/** Creates or replaces a CodeSystem/ValueSet inside the caller's transaction. Returns the row id and versionId. */
export async function saveResource(
  sql: Sql,
  type: TerminologyType,
  resource: Record<string, unknown>,
  opts: SaveOptions,
): Promise<{ id: string; versionId: number; created: boolean }> {
  const stored = stripForStorage(resource);
  const url = str(resource.url);
  const version = str(resource.version);
  let targetId = opts.id;
  if (!targetId && opts.replaceSame && url) {
    const [same] = await sql<{ id: string }>(
      `SELECT id FROM ${table(type)} WHERE "projectId" IS NOT DISTINCT FROM $1::uuid AND url = $2
         AND version IS NOT DISTINCT FROM $3 ORDER BY "createdAt" LIMIT 1 FOR UPDATE`,
      [opts.projectId, url, version],
    );
    targetId = same?.id;
  }
  const now = new Date().toISOString();
  let id: string;
  let versionId: number;
  let created = false;
  if (targetId) {
    const [row] = await sql<{ id: string; versionId: number; projectId: string | null }>(
      `UPDATE ${table(type)} SET url = $3, version = $4, name = $5, status = $6, resource = $7::jsonb,
         "versionId" = "versionId" + 1, "updatedAt" = $8::timestamp, source = NULL
       WHERE id = $1::uuid AND "projectId" IS NOT DISTINCT FROM $2::uuid RETURNING id, "versionId"`,
      [
        targetId,
        opts.projectId,
        url,
        version,
        str(resource.name),
        str(resource.status),
        JSON.stringify(stored),
        now,
      ],
    );
    if (!row) throw notFound(`${type}/${targetId} not found`);
    id = row.id;
    versionId = row.versionId;
    if (type === 'CodeSystem') await sql(`DELETE FROM "Concept" WHERE "codeSystemId" = $1::uuid`, [id]);
  } else {
    const [row] = await sql<{ id: string; versionId: number }>(
      `INSERT INTO ${table(type)} (id, "projectId", url, version, name, status, resource, "versionId", "updatedAt")
       VALUES (gen_random_uuid(), $1::uuid, $2, $3, $4, $5, $6::jsonb, 1, $7::timestamp) RETURNING id, "versionId"`,
      [opts.projectId, url, version, str(resource.name), str(resource.status), JSON.stringify(stored), now],
    );
    id = row.id;
    versionId = row.versionId;
    created = true;
  }
  if (type === 'CodeSystem') {
    const rows = opts.concepts ?? flattenCodeSystemConcepts(resource as unknown as CodeSystemResource);
    await insertConcepts(sql, id, rows, opts.onProgress);
  }
  await writeIdentifiers(sql, type, id, opts.projectId, resource);
  return { id, versionId, created };
}

/** The row of a resource visible to a project (its own or shared), or undefined. */
export async function selectVisible(
  sql: Sql,
  type: TerminologyType,
  id: string,
  projectId: string,
): Promise<ResourceRow | undefined> {
  if (!isRowId(id)) return undefined;
  const [row] = await sql<ResourceRow & Record<string, unknown>>(
    `SELECT ${ROW_COLUMNS} FROM ${table(type)} WHERE id = $1::uuid AND ("projectId" = $2::uuid OR "projectId" IS NULL)`,
    [id, projectId],
  );
  return row;
}

/** 403 for shared core rows (read-only), 404 when another project's or absent. */
export function assertWritable(type: TerminologyType, id: string, row: ResourceRow | undefined): ResourceRow {
  if (!row) throw notFound(`${type}/${id} not found`);
  if (row.projectId === null)
    throw new ApiError(403, 'forbidden', `${type}/${id} is a shared core definition and cannot be changed`);
  return row;
}

interface ConceptRow {
  code: string;
  display: string | null;
  definition: string | null;
  parents: string[] | null;
  designations: unknown;
  properties: unknown;
  extensions?: unknown;
}

/** The concepts of a CodeSystem as the nested tree they were written as (nesting from the first parent). */
export async function loadConceptTree(sql: Sql, codeSystemId: string): Promise<CodeSystemConcept[]> {
  const rows = await sql<ConceptRow & Record<string, unknown>>(
    `SELECT code, display, definition, parents, designations, properties, extensions FROM "Concept"
     WHERE "codeSystemId" = $1::uuid ORDER BY ordinal`,
    [codeSystemId],
  );
  return buildConceptTree(rows);
}

/** Rebuilds nesting: a concept is nested under its first parent when that parent came before it and the link is
 * not (only) a `parent` property, which stays a property. */
export function buildConceptTree(rows: ConceptRow[]): CodeSystemConcept[] {
  const roots: CodeSystemConcept[] = [];
  const byCode = new Map<string, CodeSystemConcept>();
  for (const r of rows) {
    const c: CodeSystemConcept = { code: r.code };
    const extensions = (typeof r.extensions === 'string' ? JSON.parse(r.extensions) : r.extensions) as
      CodeSystemConcept['extension'] | null | undefined;
    if (extensions) c.extension = extensions;
    if (r.display !== null) c.display = r.display;
    if (r.definition !== null) c.definition = r.definition;
    const designations = typeof r.designations === 'string' ? JSON.parse(r.designations) : r.designations;
    const properties = (typeof r.properties === 'string' ? JSON.parse(r.properties) : r.properties) as
      ConceptProperty[] | null;
    if (designations) c.designation = designations;
    if (properties) c.property = properties;
    const first = r.parents?.[0];
    const viaProperty =
      first !== undefined &&
      (properties ?? []).some(
        (p) => p.code === 'parent' && (p.valueCode ?? p.valueCoding?.code ?? p.valueString) === first,
      );
    const parent = first !== undefined && !viaProperty ? byCode.get(first) : undefined;
    if (parent) (parent.concept ??= []).push(c);
    else roots.push(c);
    byCode.set(r.code, c);
  }
  return roots;
}

/** Deletes a resource row (concepts and identifiers with it). */
export async function deleteResource(sql: Sql, type: TerminologyType, id: string): Promise<void> {
  await sql(`DELETE FROM "TerminologyIdentifier" WHERE "resourceId" = $1::uuid`, [id]);
  await sql(`DELETE FROM ${table(type)} WHERE id = $1::uuid`, [id]);
}
