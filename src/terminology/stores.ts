// FHIR CRUD and search for CodeSystem and ValueSet, scoped to the caller's project; shared core rows
// (projectId NULL) are readable and searchable by every project and writable by none.
import type { Caller } from '../core/caller.js';
import { notFound } from '../core/errors.js';
import {
  parseIdentifierToken,
  type FhirResource,
  type ResourceStore,
  type SearchParams,
} from '../fhir/types.js';
import type { CodeSystemResource } from './engine/types.js';
import {
  assertWritable,
  deleteResource,
  loadConceptTree,
  ROW_COLUMNS,
  rowToResource,
  saveResource,
  selectVisible,
  validateCodeSystem,
  validateValueSet,
  type ResourceRow,
  type Sql,
  type TerminologyType,
} from './repository.js';
import type { TerminologyService } from './service.js';

/** The store for one terminology resource type. */
export class TerminologyStore implements ResourceStore {
  constructor(
    private readonly type: TerminologyType,
    private readonly terminology: TerminologyService,
  ) {}

  private validate(resource: FhirResource): void {
    if (this.type === 'CodeSystem') validateCodeSystem(resource as unknown as CodeSystemResource);
    else validateValueSet(resource);
  }

  /** The resource as written, with the server's id and meta (no re-read: a big CodeSystem is not loaded back). */
  private written(resource: FhirResource, id: string, versionId: number, lastUpdated: string): FhirResource {
    const meta = { ...(resource.meta ?? {}), versionId: String(versionId), lastUpdated };
    const out: FhirResource = { ...resource, id, meta };
    out.id = id;
    out.meta = meta;
    return out;
  }

  private async lastUpdated(id: string): Promise<string> {
    const [r] = await this.terminology.db.sql<{ lastUpdated: string }>(
      `SELECT to_char("updatedAt", 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "lastUpdated" FROM "${this.type}" WHERE id = $1::uuid`,
      [id],
    );
    return r?.lastUpdated ?? new Date().toISOString();
  }

  async create(caller: Caller, resource: FhirResource): Promise<FhirResource> {
    this.validate(resource);
    const saved = await this.terminology.db.transaction((sql) =>
      saveResource(sql, this.type, resource, { projectId: caller.projectId }),
    );
    await this.terminology.changed(this.type, saved.id);
    return this.written(resource, saved.id, saved.versionId, await this.lastUpdated(saved.id));
  }

  async read(caller: Caller, id: string): Promise<FhirResource> {
    const row = await selectVisible(this.terminology.db.sql, this.type, id, caller.projectId);
    if (!row) throw notFound(`${this.type}/${id} not found`);
    return this.full(this.terminology.db.sql, row);
  }

  private async full(sql: Sql, row: ResourceRow): Promise<FhirResource> {
    const resource = rowToResource(this.type, row);
    if (this.type === 'CodeSystem') {
      const concept = await loadConceptTree(sql, row.id);
      if (concept.length > 0) resource.concept = concept;
    }
    return resource;
  }

  async update(caller: Caller, id: string, resource: FhirResource): Promise<FhirResource> {
    this.validate(resource);
    const db = this.terminology.db;
    const saved = await db.transaction(async (sql) => {
      assertWritable(this.type, id, await selectVisible(sql, this.type, id, caller.projectId));
      return saveResource(sql, this.type, resource, { projectId: caller.projectId, id });
    });
    await this.terminology.changed(this.type, saved.id);
    return this.written(resource, saved.id, saved.versionId, await this.lastUpdated(saved.id));
  }

  async delete(caller: Caller, id: string): Promise<void> {
    await this.terminology.db.transaction(async (sql) => {
      assertWritable(this.type, id, await selectVisible(sql, this.type, id, caller.projectId));
      await deleteResource(sql, this.type, id);
    });
    await this.terminology.changed(this.type, id);
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
    const rows = await sql<ResourceRow & Record<string, unknown>>(
      `SELECT ${ROW_COLUMNS} FROM "${this.type}" t WHERE ${w}
       ORDER BY ("projectId" IS NULL), url NULLS LAST, version NULLS LAST, id
       LIMIT ${params.count} OFFSET ${params.offset}`,
      args,
    );
    const resources: FhirResource[] = [];
    for (const row of rows) resources.push(await this.full(sql, row));
    return { resources, total };
  }
}
