// Storage of CodeSystem, ValueSet and ConceptMap resources: one row per resource (JSON without concepts), Concept rows for
// code system content (in generations: src/terminology/generations.ts), TerminologyIdentifier rows for search.
import type { Database } from '../db/database.js';
import { ApiError, badRequest, notFound } from '../core/errors.js';
import type { FhirResource } from '../fhir/types.js';
import { indexLimitMessage, overIndexLimit } from '../fhir/resource-strings.js';
import {
  checkComposeShape,
  countComposeClauses,
  countMapEntries,
  TerminologyError,
  type CodeSystemConcept,
  type CodeSystemResource,
} from './engine/index.js';
import { publishGeneration, retireLive } from './generations.js';

export type Sql = Database['sql'];
export type TerminologyType = 'CodeSystem' | 'ValueSet' | 'ConceptMap';

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
  /** The stored JSON: an object, or its text when selected by ROW_COLUMNS_TEXT. */
  resource: Record<string, unknown> | string;
  versionId: number;
  lastUpdated: string;
}

/** ROW_COLUMNS with the resource as JSON text, for readers that parse it themselves (stored-json.ts). */
export const ROW_COLUMNS_TEXT = `id, "projectId", url, version, name, status, resource::text AS resource, "versionId",
  to_char("updatedAt", 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "lastUpdated"`;

/** Columns selected for a resource row (lastUpdated rendered in UTC by the database, whatever the driver). */
export const ROW_COLUMNS = `id, "projectId", url, version, name, status, resource, "versionId",
  to_char("updatedAt", 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "lastUpdated"`;

/** The FHIR resource of a row (concepts not included), from its stored JSON (`parsed` when already parsed). */
export function rowToResource(
  type: TerminologyType,
  row: ResourceRow,
  parsed?: Record<string, unknown>,
): FhirResource {
  const stored =
    parsed ??
    ((typeof row.resource === 'string' ? JSON.parse(row.resource) : row.resource) as Record<string, unknown>);
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
  for (const _ of validateCodeSystemSteps(cs));
}

/** Concepts checked between two steps of validateCodeSystemSteps. */
const VALIDATE_STEP = 5000;

/** validateCodeSystem in steps (yields after every VALIDATE_STEP concepts), for callers that give the event loop a
 * turn in between. */
export function* validateCodeSystemSteps(cs: CodeSystemResource): Generator<void, void, void> {
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
  let checked = 0;
  while (stack.length > 0) {
    if (++checked % VALIDATE_STEP === 0) yield;
    const top = stack[stack.length - 1];
    top.i++;
    if (top.i >= top.list.length) {
      stack.pop();
      continue;
    }
    const c = top.list[top.i] as CodeSystemConcept;
    if (!c || typeof c !== 'object' || typeof c.code !== 'string' || c.code === '')
      throw badRequest(`${pathOf('.code')} is required (a non-empty string)`, [pathOf('.code')]);
    if (overIndexLimit(c.code)) throw badRequest(indexLimitMessage(pathOf('.code')), [pathOf('.code')]);
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

/** Checks the parts of a ValueSet the server relies on, and its enumerated entries and compose clauses against the
 * limits given (a stored ValueSet over either could never be expanded). */
export function validateValueSet(
  vs: Record<string, unknown>,
  maxEntries?: number,
  maxComposeClauses?: number,
): void {
  if (vs.url !== undefined && typeof vs.url !== 'string')
    throw badRequest('ValueSet.url must be a string', ['ValueSet.url']);
  // The bounds first (they read lengths only), then the shape (a walk of every clause).
  checkValueSetBounds(vs, maxEntries, maxComposeClauses);
  if (vs.compose !== undefined) {
    try {
      checkComposeShape(vs.compose);
    } catch (err) {
      if (err instanceof TerminologyError) throw badRequest(err.message, err.expression);
      throw err;
    }
  }
}

/** Checks the parts of a ConceptMap $translate relies on (url a string, group an array of objects), and its
 * elements and targets against VALUESET_MAX_ENTRIES. */
export function validateConceptMap(resource: FhirResource, maxEntries: number): void {
  const cm = resource as Record<string, unknown>;
  if (cm.url !== undefined && typeof cm.url !== 'string')
    throw badRequest('ConceptMap.url must be a string', ['ConceptMap.url']);
  if (cm.group !== undefined && !Array.isArray(cm.group))
    throw badRequest('ConceptMap.group must be an array', ['ConceptMap.group']);
  (Array.isArray(cm.group) ? (cm.group as unknown[]) : []).forEach((g, i) => {
    const group = g as { element?: unknown } | null;
    if (!group || typeof group !== 'object' || (group.element !== undefined && !Array.isArray(group.element)))
      throw badRequest(`ConceptMap.group[${i}] must be an object with an element array`, [
        `ConceptMap.group[${i}]`,
      ]);
  });
  checkConceptMapBounds(resource, maxEntries);
}

/** 422 when a ConceptMap has more elements and targets than VALUESET_MAX_ENTRIES (each $translate without a url
 * may walk them all). */
export function checkConceptMapBounds(resource: FhirResource, maxEntries: number): void {
  if (countMapEntries(resource as Record<string, unknown>, maxEntries) > maxEntries)
    throw new ApiError(
      422,
      'too-costly',
      `The ConceptMap has more than ${maxEntries} elements and targets (VALUESET_MAX_ENTRIES)`,
      { expression: ['ConceptMap.group'] },
    );
}

/** 422 when a ValueSet enumerates more than `maxEntries` entries or has more than `maxComposeClauses` compose
 * clauses (each limit checked when given); the work is bounded by the limits, whatever the resource holds. */
export function checkValueSetBounds(
  vs: Record<string, unknown>,
  maxEntries?: number,
  maxComposeClauses?: number,
): void {
  if (maxComposeClauses !== undefined) checkComposeClauses(vs, maxComposeClauses);
  if (maxEntries !== undefined) checkValueSetEntries(vs, maxEntries, 'ValueSet');
}

/** 422 when a ValueSet's compose has more clauses (include, exclude, filter and valueSet entries together) than
 * one expansion may evaluate (EXPAND_MAX_COMPOSE_CLAUSES), counted as the engine counts them. */
function checkComposeClauses(vs: Record<string, unknown>, max: number): void {
  if (countComposeClauses(vs.compose, max) > max)
    throw new ApiError(
      422,
      'too-costly',
      `The ValueSet has more compose clauses than one expansion may evaluate (${max}; include, exclude, ` +
        'filter and valueSet entries together; EXPAND_MAX_COMPOSE_CLAUSES)',
      { expression: ['ValueSet.compose'] },
    );
}

/** The most enumerated concepts and expansion entries of a ValueSet, unless configured. */
export const DEFAULT_VALUESET_MAX_ENTRIES = 50_000;

/** The entries of a nested list (`list`, and under each entry its own `key` list, and so on), counted up to
 * just over `max`: a bound checked before the list is walked for real. */
export function countNested(list: unknown, key: string, max: number): number {
  let n = 0;
  const stack: unknown[] = [list];
  while (stack.length > 0 && n <= max) {
    const next = stack.pop();
    if (!Array.isArray(next)) continue;
    n += next.length;
    for (const e of next)
      if (e && typeof e === 'object' && key in e) stack.push((e as Record<string, unknown>)[key]);
  }
  return n;
}

/** The enumerated concepts (compose include/exclude) and expansion entries of a ValueSet, nested ones included,
 * counted up to just over `max`. */
function valueSetEntries(vs: Record<string, unknown>, max: number): number {
  let n = 0;
  const compose = vs.compose as { include?: unknown; exclude?: unknown } | undefined;
  for (const list of [compose?.include, compose?.exclude])
    if (Array.isArray(list))
      for (const inc of list) {
        const concepts = (inc as { concept?: unknown } | null)?.concept;
        if (Array.isArray(concepts)) n += concepts.length;
      }
  const contains = (vs.expansion as { contains?: unknown } | undefined)?.contains;
  return n > max ? n : n + countNested(contains, 'contains', max - n);
}

/** 422 when a ValueSet enumerates more than `max` entries: each $expand of it walks them all on the request's
 * time (400,000 held the event loop 1.7 s). `where` names the ValueSet in the message. */
export function checkValueSetEntries(vs: Record<string, unknown>, max: number, where: string): void {
  if (valueSetEntries(vs, max) > max)
    throw new ApiError(
      422,
      'too-costly',
      `${where} enumerates more than ${max} concepts and expansion entries (VALUESET_MAX_ENTRIES); define a ` +
        'value set this large by filters, or as a code system',
      { expression: [where] },
    );
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
  return `"${type}"`;
}

export interface SaveOptions {
  projectId: string | null;
  /** Update this row (must belong to projectId); otherwise create (as `newId`, or a fresh id). */
  id?: string;
  newId?: string;
  /** Import semantics: an existing resource with the same url and version in the project is replaced. */
  replaceSame?: boolean;
  /** CodeSystem: the generation holding its concepts, made live with the row. */
  generation?: { id: string; count: number };
}

/** What saveResource wrote. */
export interface Saved {
  id: string;
  versionId: number;
  created: boolean;
  lastUpdated: string;
}

/** The row with the same url and version in the project (import's replace target), locked when in a transaction. */
export async function sameUrlVersion(
  sql: Sql,
  type: TerminologyType,
  projectId: string | null,
  resource: Record<string, unknown>,
  lock: boolean,
): Promise<string | undefined> {
  const url = str(resource.url);
  if (!url) return undefined;
  const [same] = await sql<{ id: string }>(
    `SELECT id FROM ${table(type)} WHERE "projectId" IS NOT DISTINCT FROM $1::uuid AND url = $2
       AND version IS NOT DISTINCT FROM $3 ORDER BY "createdAt" LIMIT 1${lock ? ' FOR UPDATE' : ''}`,
    [projectId, url, str(resource.version)],
  );
  return same?.id;
}

/** Creates or replaces a CodeSystem/ValueSet row (and makes a CodeSystem's concept generation live) inside the
 * caller's transaction. */
export async function saveResource(
  sql: Sql,
  type: TerminologyType,
  resource: Record<string, unknown>,
  opts: SaveOptions,
): Promise<Saved> {
  const stored = stripForStorage(resource);
  const url = str(resource.url);
  const version = str(resource.version);
  let targetId = opts.id;
  if (!targetId && opts.replaceSame)
    targetId = await sameUrlVersion(sql, type, opts.projectId, resource, true);
  const now = new Date().toISOString();
  const returning = `RETURNING id, "versionId", to_char("updatedAt", 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "lastUpdated"`;
  let row: { id: string; versionId: number; lastUpdated: string } | undefined;
  let created = false;
  if (targetId) {
    [row] = await sql<{ id: string; versionId: number; lastUpdated: string }>(
      `UPDATE ${table(type)} SET url = $3, version = $4, name = $5, status = $6, resource = $7::jsonb,
         "versionId" = "versionId" + 1, "updatedAt" = $8::timestamp, source = NULL
       WHERE id = $1::uuid AND "projectId" IS NOT DISTINCT FROM $2::uuid ${returning}`,
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
  } else {
    [row] = await sql<{ id: string; versionId: number; lastUpdated: string }>(
      `INSERT INTO ${table(type)} (id, "projectId", url, version, name, status, resource, "versionId", "updatedAt")
       VALUES (COALESCE($8::uuid, gen_random_uuid()), $1::uuid, $2, $3, $4, $5, $6::jsonb, 1, $7::timestamp) ${returning}`,
      [
        opts.projectId,
        url,
        version,
        str(resource.name),
        str(resource.status),
        JSON.stringify(stored),
        now,
        opts.newId ?? null,
      ],
    );
    created = true;
  }
  if (type === 'CodeSystem' && opts.generation) {
    if (!(await publishGeneration(sql, row.id, opts.generation.id, opts.generation.count))) {
      throw new ApiError(
        503,
        'exception',
        `The concepts of ${type}/${row.id} were removed while being written: retry`,
      );
    }
  }
  await writeIdentifiers(sql, type, row.id, opts.projectId, resource);
  return { id: row.id, versionId: row.versionId, created, lastUpdated: row.lastUpdated };
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

/** Deletes a resource row and its identifiers, and retires its concepts. */
export async function deleteResource(sql: Sql, type: TerminologyType, id: string): Promise<void> {
  await sql(`DELETE FROM "TerminologyIdentifier" WHERE "resourceId" = $1::uuid`, [id]);
  await sql(`DELETE FROM ${table(type)} WHERE id = $1::uuid`, [id]);
  // The concepts go afterwards, in small steps (ConceptGenerations.sweep): not in this transaction.
  if (type === 'CodeSystem') await retireLive(sql, id);
}
