// FHIR CRUD and search for CodeSystem, ValueSet and ConceptMap, scoped to the caller's project; shared core rows
// (projectId NULL) are readable and searchable by every project and writable by none. Large CodeSystems are
// written in steps and read page by page (docs/terminology.md, Large CodeSystems).
import type { Caller } from '../core/caller.js';
import { ApiError, notFound } from '../core/errors.js';
import {
  parseIdentifierToken,
  type FhirResource,
  type ResourceStore,
  type ReturnOptions,
  type SearchParams,
} from '../fhir/types.js';
import { closeLazy, holdingLazy, releaseAfter } from '../fhir/lazy-json.js';
import type { LargeRequests } from '../fhir/large-requests.js';
import { includesElement, type Subsetting } from '../fhir/subsetting.js';
import type { CodeSystemResource, ConceptInput } from './engine/index.js';
import {
  assertWritable,
  deleteResource,
  isRowId,
  ROW_COLUMNS_TEXT,
  rowToResource,
  selectVisible,
  checkConceptMapBounds,
  checkValueSetBounds,
  validateConceptMap,
  validateValueSet,
  type ResourceRow,
  type Saved,
  type TerminologyType,
} from './repository.js';
import { LIVE_GENERATION_COLUMNS } from './generations.js';
import { prepareCodeSystem, writeTerminologyResource } from './resource-write.js';
import {
  loadConceptTree,
  streamConceptTree,
  streamRows,
  STREAM_MIN_CONCEPTS,
  treeOfRows,
} from './concept-read.js';
import type { TerminologyService } from './service.js';
import { markForStreaming, parseStoredRows } from './stored-json.js';

/** A row with its live concept generation (CodeSystem; null for a ValueSet or a CodeSystem without one). */
type StoredRow = ResourceRow & { generationId: string | null; conceptCount: number | null };

/** What a store needs to bound what it returns: resources returned whole are capped, streamed ones take a slot. */
export interface ReturnLimits {
  /** INLINE_MAX_CONCEPTS: most concepts returned whole (GraphQL, bots). */
  inlineMaxConcepts: number;
  /** The server's budget of large requests (a streamed read takes a slot). */
  large: LargeRequests;
}

/** The store for one terminology resource type. */
export class TerminologyStore implements ResourceStore {
  constructor(
    private readonly type: TerminologyType,
    private readonly terminology: TerminologyService,
    private readonly limits: ReturnLimits,
  ) {}

  private get columns(): string {
    return this.type === 'CodeSystem'
      ? `${ROW_COLUMNS_TEXT}, ${LIVE_GENERATION_COLUMNS}`
      : `${ROW_COLUMNS_TEXT}, NULL AS "generationId", NULL AS "conceptCount"`;
  }

  /** A ValueSet's enumerated entries and compose clauses against their limits, counted from lengths alone. */
  checkBounds(resource: FhirResource): void {
    if (this.type === 'ValueSet')
      checkValueSetBounds(resource, this.terminology.valueSetMaxEntries, this.terminology.maxComposeClauses);
    if (this.type === 'ConceptMap') checkConceptMapBounds(resource, this.terminology.valueSetMaxEntries);
  }

  /** Validates the body; for a CodeSystem also flattens its concepts into rows and drops the tree (the response is
   * rebuilt from the rows, as a read would return it), so a big body's tree is not kept during the write. */
  private async prepare(resource: FhirResource): Promise<ConceptInput[] | undefined> {
    if (this.type === 'ConceptMap') {
      validateConceptMap(resource, this.terminology.valueSetMaxEntries);
      return undefined;
    }
    if (this.type !== 'CodeSystem') {
      validateValueSet(resource, this.terminology.valueSetMaxEntries, this.terminology.maxComposeClauses);
      return undefined;
    }
    const rows = await prepareCodeSystem(resource as unknown as CodeSystemResource);
    delete resource.concept;
    return rows;
  }

  /** The resource as written, with the server's id and meta (from the rows in hand: nothing is read back). */
  private written(
    ret: ReturnOptions | undefined,
    resource: FhirResource,
    saved: Saved,
    rows: ConceptInput[] | undefined,
  ): FhirResource {
    const meta = {
      ...(resource.meta ?? {}),
      versionId: String(saved.versionId),
      lastUpdated: saved.lastUpdated,
    };
    const out: FhirResource = { ...resource, id: saved.id, meta };
    out.id = saved.id;
    out.meta = meta;
    if (rows && rows.length > 0) {
      if (ret?.stream && rows.length >= STREAM_MIN_CONCEPTS) {
        out.concept = streamRows(rows);
        holdingLazy(out);
      } else out.concept = treeOfRows(rows);
    }
    return out;
  }

  async create(caller: Caller, resource: FhirResource, ret?: ReturnOptions): Promise<FhirResource> {
    const rows = await this.prepare(resource);
    const t = this.terminology;
    const saved = await writeTerminologyResource(t.db, t.generations, this.type, resource, {
      projectId: caller.projectId,
      concepts: rows,
    });
    await t.changed(this.type, saved.id);
    return this.written(ret, resource, saved, rows);
  }

  async read(
    caller: Caller,
    id: string,
    subsetting?: Subsetting,
    ret?: ReturnOptions,
  ): Promise<FhirResource> {
    if (!isRowId(id)) throw notFound(`${this.type}/${id} not found`);
    const [row] = await this.terminology.db.sql<StoredRow & Record<string, unknown>>(
      `SELECT ${this.columns} FROM "${this.type}" t WHERE id = $1::uuid AND ("projectId" = $2::uuid OR "projectId" IS NULL)`,
      [id, caller.projectId],
    );
    if (!row) throw notFound(`${this.type}/${id} not found`);
    const [resource] = await this.withConcepts(caller, ret, [row], subsetting);
    return resource;
  }

  /**
   * The resources of rows, with their concepts when the caller returns them. REST streams them all when together
   * they have 10,000 concepts or more (a large request, counted against LARGE_REQUESTS_*: a search page of many
   * mid-sized CodeSystems is as big as one large one); otherwise, and for GraphQL and bots, they come whole, at
   * most INLINE_MAX_CONCEPTS together (422 over it).
   */
  private async withConcepts(
    caller: Caller,
    ret: ReturnOptions | undefined,
    rows: StoredRow[],
    subsetting: Subsetting | undefined,
  ): Promise<FhirResource[]> {
    const parsed = await parseStoredRows(
      rows.map((r) => r.resource),
      {
        large: this.limits.large,
        projectId: caller.projectId,
        what:
          rows.length === 1 ? `reading ${this.type}/${rows[0].id}` : `a search of ${rows.length} resources`,
      },
    );
    const resources = rows.map((r, i) => rowToResource(this.type, r, parsed.values[i]));
    if (parsed.large && ret?.stream) for (const r of resources) markForStreaming(r);
    if (this.type !== 'CodeSystem' || !includesElement('CodeSystem', subsetting, 'concept')) return resources;
    const t = this.terminology;
    const total = rows.reduce((n, r) => n + (r.generationId ? (r.conceptCount ?? 0) : 0), 0);
    const stream = ret?.stream === true && total >= STREAM_MIN_CONCEPTS;
    const inlineMax = this.limits.inlineMaxConcepts;
    if (!ret?.stream && total > inlineMax) {
      const what =
        rows.length === 1 ? `CodeSystem/${rows[0].id} has` : `These ${rows.length} CodeSystems have`;
      throw new ApiError(
        422,
        'too-costly',
        `${what} ${total} concepts, more than the ${inlineMax} (INLINE_MAX_CONCEPTS) returned whole to GraphQL ` +
          'or a bot: read them over REST (streamed), or leave the concepts out (_elements or _summary=true)',
      );
    }
    const withRows = rows.filter((r) => r.generationId && r.conceptCount);
    const done = stream
      ? this.limits.large.acquire(
          caller.projectId,
          rows.length === 1 ? `reading CodeSystem/${rows[0].id}` : `a search returning ${total} concepts`,
        )
      : undefined;
    const release = done ? releaseAfter(withRows.length, done) : undefined;
    try {
      for (let i = 0; i < rows.length; i++) {
        const r = rows[i];
        if (!r.generationId || !r.conceptCount) continue;
        const gen = { id: r.generationId, count: r.conceptCount };
        if (stream) {
          resources[i].concept = streamConceptTree(t.db, t.generations, gen, release);
          holdingLazy(resources[i]);
        } else {
          resources[i].concept = await loadConceptTree(t.db, t.generations, gen);
        }
      }
    } catch (err) {
      for (const r of resources) closeLazy(r);
      done?.();
      throw err;
    }
    return resources;
  }

  async update(
    caller: Caller,
    id: string,
    resource: FhirResource,
    ret?: ReturnOptions,
  ): Promise<FhirResource> {
    const t = this.terminology;
    // Refused before the body's concepts are even flattened.
    assertWritable(this.type, id, await selectVisible(t.db.sql, this.type, id, caller.projectId));
    const rows = await this.prepare(resource);
    const saved = await writeTerminologyResource(t.db, t.generations, this.type, resource, {
      projectId: caller.projectId,
      id,
      concepts: rows,
    });
    await t.changed(this.type, saved.id);
    return this.written(ret, resource, saved, rows);
  }

  async delete(caller: Caller, id: string): Promise<void> {
    const t = this.terminology;
    await t.db.transaction(async (sql) => {
      assertWritable(this.type, id, await selectVisible(sql, this.type, id, caller.projectId));
      await deleteResource(sql, this.type, id);
    });
    if (this.type === 'CodeSystem') t.generations.kick();
    await t.changed(this.type, id);
  }

  async search(caller: Caller, params: SearchParams): Promise<{ resources: FhirResource[]; total: number }> {
    const where = [`("projectId" = $1::uuid OR "projectId" IS NULL)`];
    const args: unknown[] = [caller.projectId];
    if (params.url !== undefined) {
      args.push(params.url);
      where.push(`url = $${args.length}`);
    }
    if (params.version !== undefined) {
      args.push(params.version);
      where.push(`version = $${args.length}`);
    }
    if (params.name !== undefined) {
      // FHIR string search: case-insensitive starts-with.
      args.push(params.name.toLowerCase().replace(/[\\%_]/g, (c) => '\\' + c) + '%');
      where.push(`lower(name) LIKE $${args.length}`);
    }
    if (params.identifier !== undefined) {
      const { system, value } = parseIdentifierToken(params.identifier);
      const conds = [`i."resourceId" = t.id`, `i."resourceType" = '${this.type}'`];
      if (value !== undefined) {
        args.push(value);
        conds.push(`i.value = $${args.length}`);
      }
      if (system !== undefined) {
        if (system === '') conds.push(`i.system IS NULL`);
        else {
          args.push(system);
          conds.push(`i.system = $${args.length}`);
        }
      }
      where.push(`EXISTS (SELECT 1 FROM "TerminologyIdentifier" i WHERE ${conds.join(' AND ')})`);
    }
    const sql = this.terminology.db.sql;
    const w = where.join(' AND ');
    const [{ count }] = await sql<{ count: string | number }>(
      `SELECT count(*) AS count FROM "${this.type}" t WHERE ${w}`,
      args,
    );
    const total = Number(count);
    if (params.count === 0) return { resources: [], total };
    const rows = await sql<StoredRow & Record<string, unknown>>(
      `SELECT ${this.columns} FROM "${this.type}" t WHERE ${w}
       ORDER BY ("projectId" IS NULL), url NULLS LAST, version NULLS LAST, id
       LIMIT ${params.count} OFFSET ${params.offset}`,
      args,
    );
    return { resources: await this.withConcepts(caller, params, rows, params.subsetting), total };
  }
}
