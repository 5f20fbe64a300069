// The terminology service: resolves value sets and code systems visible to a project (its own first, then the
// shared core), keeps CodeSystemIndexes in memory per CodeSystem id+versionId, and runs $expand through the
// engine. Every change is announced with NOTIFY terminology_changed so every instance drops what it cached.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { ApiError, badRequest, notFound, type IssueCode } from '../core/errors.js';
import { CodeSystemIndex } from './engine/code-system-index.js';
import { TerminologyError } from './engine/errors.js';
import { ExpansionEngine } from './engine/expand.js';
import { codeSystemMetaOf } from './engine/flatten.js';
import type {
  CodeSystemResource,
  ConceptInput,
  ExpandLimits,
  ExpandRequest,
  Resolver,
  ValueSetResource,
  ValueSetResourceWithExpansion,
} from './engine/types.js';
import { txResourceResolver } from './tx-resources.js';
import { isRowId, ROW_COLUMNS, rowToResource, type ResourceRow, type TerminologyType } from './repository.js';

export const CHANGED_CHANNEL = 'terminology_changed';

/** What to expand: a stored value set by url (and version) or id, or an inline one. */
export interface ExpandTarget {
  url?: string;
  valueSetVersion?: string;
  id?: string;
  valueSet?: unknown;
  /** `tx-resource`: CodeSystems/ValueSets for this request only, looked up before stored ones. */
  txResources?: unknown[];
}

interface CodeSystemRef {
  id: string;
  versionId: number;
  resource: CodeSystemResource;
}

const NONE = null;

/** Expansion and resolution for one server instance. */
export class TerminologyService {
  readonly engine = new ExpansionEngine();
  /** `projectId \0 url \0 version` -> value set (or null: known absent). Dropped on every change. */
  private valueSets = new Map<string, ValueSetResource | null>();
  private valueSetsById = new Map<string, ValueSetResource | null>();
  private codeSystems = new Map<string, CodeSystemRef | null>();
  /** CodeSystem row id -> index of one versionId (built once, shared by every project that sees it). */
  private indexes = new Map<string, { versionId: number; index: Promise<CodeSystemIndex> }>();
  private resolvers = new Map<string, Resolver>();
  /** Bumped on every invalidation: a lookup that started before one must not fill the cache after it. */
  private generation = 0;

  constructor(
    readonly db: Database,
    private readonly logger: Logger,
    private readonly limits: ExpandLimits,
  ) {}

  /** Subscribes to change notifications (call once at start). */
  async start(): Promise<void> {
    await this.db.listen(CHANGED_CHANNEL, (payload) => this.invalidate(payload));
    this.db.onReset(() => this.clearAll());
  }

  /** Announces a change of a CodeSystem/ValueSet to every instance (this one included, synchronously first). */
  async changed(type: TerminologyType, id: string): Promise<void> {
    const payload = `${type}/${id}`;
    this.invalidate(payload);
    await this.db.notify(CHANGED_CHANNEL, payload);
  }

  /** Drops resolution caches, and the index of a changed CodeSystem ('*' or unknown payload: everything). */
  invalidate(payload: string): void {
    this.generation++;
    this.valueSets.clear();
    this.valueSetsById.clear();
    this.codeSystems.clear();
    const [type, id] = payload.split('/');
    if (type === 'CodeSystem' && id) this.indexes.delete(id);
    else if (type !== 'ValueSet') this.clearAll();
  }

  /** Drops every cache (notifications may have been missed). */
  clearAll(): void {
    this.generation++;
    this.valueSets.clear();
    this.valueSetsById.clear();
    this.codeSystems.clear();
    this.indexes.clear();
    this.engine.clear();
  }

  /** Expands a value set for a project; client mistakes come back as ApiError with the right status. */
  async expand(
    projectId: string,
    target: ExpandTarget,
    req: ExpandRequest,
  ): Promise<ValueSetResourceWithExpansion> {
    if (!this.db.listening) this.clearAll();
    const txResources = target.txResources && target.txResources.length > 0 ? target.txResources : undefined;
    const resolver = txResources
      ? txResourceResolver(this.resolverFor(projectId), txResources)
      : this.resolverFor(projectId);
    let vs: ValueSetResource | undefined;
    const inline = target.valueSet !== undefined && target.valueSet !== null;
    if (inline) {
      vs = inlineValueSet(target.valueSet);
    } else if (target.id !== undefined) {
      vs = (await this.valueSetById(projectId, target.id)) ?? undefined;
      if (!vs) throw notFound(`ValueSet/${target.id} not found`);
    } else if (target.url !== undefined) {
      let url = target.url;
      let version = target.valueSetVersion;
      const bar = url.indexOf('|');
      if (bar >= 0) {
        // Canonical with version (url|version); valueSetVersion, when also given, must agree.
        const v = url.slice(bar + 1);
        url = url.slice(0, bar);
        if (version !== undefined && v !== '' && version !== v)
          throw badRequest(`url version ${v} and valueSetVersion ${version} differ`, ['valueSetVersion']);
        if (v !== '') version = v;
      }
      if (url === '') throw badRequest('url must not be empty', ['url']);
      // A cached answer is used without a promise: this is every request of a hot value set.
      const hit = txResources ? undefined : this.valueSets.get(valueSetKey(projectId, url, version));
      vs = hit !== undefined ? (hit ?? undefined) : await resolver.valueSet(url, version);
      if (!vs) throw notFound(`ValueSet ${url}${version ? ` version ${version}` : ''} not found`);
    } else {
      throw badRequest('Give the url of a value set (or an id, or an inline valueSet) to expand', ['url']);
    }
    try {
      // Request-supplied resources get an engine of their own: their memberships must not be cached for others.
      const engine = txResources ? new ExpansionEngine({ maxCachedValueSets: 16 }) : this.engine;
      return await engine.expand(vs, req, resolver, this.limits, { inline });
    } catch (err) {
      throw toApiError(err);
    }
  }

  /** The resolver of a project (reused: it only closes over the project id). */
  resolverFor(projectId: string): Resolver {
    let r = this.resolvers.get(projectId);
    if (!r) {
      r = {
        scope: projectId,
        codeSystem: (url, version) => this.codeSystemIndex(projectId, url, version),
        valueSet: async (url, version) => (await this.valueSet(projectId, url, version)) ?? undefined,
        generation: () => this.generation,
      };
      this.resolvers.set(projectId, r);
    }
    return r;
  }

  private async valueSet(projectId: string, url: string, version?: string): Promise<ValueSetResource | null> {
    const key = valueSetKey(projectId, url, version);
    const hit = this.valueSets.get(key);
    if (hit !== undefined) return hit;
    const gen = this.generation;
    const row = await this.selectByUrl('ValueSet', projectId, url, version);
    const vs = row ? (rowToResource('ValueSet', row) as ValueSetResource) : NONE;
    if (gen === this.generation) this.valueSets.set(key, vs);
    return vs;
  }

  private async valueSetById(projectId: string, id: string): Promise<ValueSetResource | null> {
    if (!isRowId(id)) return NONE;
    const key = `${projectId}\u0000${id}`;
    const hit = this.valueSetsById.get(key);
    if (hit !== undefined) return hit;
    const gen = this.generation;
    const [row] = await this.db.sql<ResourceRow & Record<string, unknown>>(
      `SELECT ${ROW_COLUMNS} FROM "ValueSet" WHERE id = $1::uuid AND ("projectId" = $2::uuid OR "projectId" IS NULL)`,
      [id, projectId],
    );
    const vs = row ? (rowToResource('ValueSet', row) as ValueSetResource) : NONE;
    if (gen === this.generation) this.valueSetsById.set(key, vs);
    return vs;
  }

  /** The project's own resource first, then the shared one; without version the most recently updated. */
  private async selectByUrl(
    type: TerminologyType,
    projectId: string,
    url: string,
    version?: string,
  ): Promise<ResourceRow | undefined> {
    const [row] = await this.db.sql<ResourceRow & Record<string, unknown>>(
      `SELECT ${ROW_COLUMNS} FROM "${type}" WHERE url = $1 AND ("projectId" = $2::uuid OR "projectId" IS NULL)
       ${version !== undefined ? 'AND version = $3' : ''}
       ORDER BY ("projectId" IS NULL), "updatedAt" DESC, id LIMIT 1`,
      version !== undefined ? [url, projectId, version] : [url, projectId],
    );
    return row;
  }

  private async codeSystemIndex(
    projectId: string,
    url: string,
    version?: string,
  ): Promise<CodeSystemIndex | undefined> {
    const key = `${projectId}\u0000${url}\u0000${version ?? ''}`;
    let ref = this.codeSystems.get(key);
    if (ref === undefined) {
      const gen = this.generation;
      const row = await this.selectByUrl('CodeSystem', projectId, url, version);
      ref = row
        ? {
            id: row.id,
            versionId: row.versionId,
            resource: rowToResource('CodeSystem', row) as unknown as CodeSystemResource,
          }
        : NONE;
      if (gen === this.generation) this.codeSystems.set(key, ref);
    }
    if (!ref) return undefined;
    return this.indexOf(ref);
  }

  private indexOf(ref: CodeSystemRef): Promise<CodeSystemIndex> {
    const cached = this.indexes.get(ref.id);
    if (cached && cached.versionId === ref.versionId) return cached.index;
    const gen = this.generation;
    const index = this.buildIndex(ref);
    const entry = { versionId: ref.versionId, index };
    this.indexes.set(ref.id, entry);
    index.then(
      () => {
        // Built from rows that may predate a change seen meanwhile: keep it only for this call.
        if (gen !== this.generation && this.indexes.get(ref.id) === entry) this.indexes.delete(ref.id);
      },
      () => {
        if (this.indexes.get(ref.id) === entry) this.indexes.delete(ref.id);
      },
    );
    return index;
  }

  private async buildIndex(ref: CodeSystemRef): Promise<CodeSystemIndex> {
    const started = Date.now();
    const rows = await this.db.sql<ConceptRowDb & Record<string, unknown>>(
      // definition is not indexed: leaving it out makes the load of a big code system cheaper.
      `SELECT code, display, parents, "notSelectable", inactive, status, designations, properties
       FROM "Concept" WHERE "codeSystemId" = $1::uuid ORDER BY ordinal`,
      [ref.id],
    );
    const concepts: ConceptInput[] = rows.map((r) => ({
      code: r.code,
      display: r.display,
      parents: r.parents ?? [],
      notSelectable: r.notSelectable,
      inactive: r.inactive,
      status: r.status,
      designations: parseJson(r.designations) as ConceptInput['designations'],
      properties: parseJson(r.properties) as ConceptInput['properties'],
    }));
    const index = CodeSystemIndex.build(codeSystemMetaOf(ref.resource, ref.id, ref.versionId), concepts);
    if (rows.length >= 10_000) {
      this.logger.info(
        { codeSystem: ref.resource.url, concepts: rows.length, ms: Date.now() - started },
        'built code system index',
      );
    }
    return index;
  }
}

function valueSetKey(projectId: string, url: string, version: string | undefined): string {
  return `${projectId}\u0000${url}\u0000${version ?? ''}`;
}

interface ConceptRowDb {
  code: string;
  display: string | null;
  parents: string[] | null;
  notSelectable: boolean;
  inactive: boolean;
  status: string | null;
  designations: unknown;
  properties: unknown;
}

function parseJson(v: unknown): unknown {
  return typeof v === 'string' ? JSON.parse(v) : (v ?? null);
}

function inlineValueSet(v: unknown): ValueSetResource {
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw badRequest('valueSet must be a ValueSet resource', ['valueSet']);
  const vs = v as Record<string, unknown>;
  if (vs.resourceType !== 'ValueSet')
    throw badRequest(`valueSet must be a ValueSet resource, got ${String(vs.resourceType)}`, ['valueSet']);
  if (vs.compose === undefined && vs.expansion === undefined)
    throw badRequest('The inline valueSet has neither compose nor expansion', ['valueSet']);
  return vs as unknown as ValueSetResource;
}

/** The $expand limits of a configuration. */
export function expandLimitsOf(config: Config): ExpandLimits {
  return {
    maxUnpaged: config.expandMaxUnpaged,
    maxCount: config.expandMaxCount,
    maxFilterLength: config.expandFilterMaxLength,
    maxFilterWords: config.expandFilterMaxWords,
    regex: { maxPatternLength: config.expandRegexMaxLength, budgetMs: config.expandRegexBudgetMs },
  };
}

/** Engine errors become API errors with the engine's status and issue code; others pass through. */
export function toApiError(err: unknown): unknown {
  if (err instanceof TerminologyError) {
    // The engine's issue codes are FHIR IssueType codes ('code-invalid' included), valid in an OperationOutcome.
    return new ApiError(err.status, err.issueCode as IssueCode, err.message, { expression: err.expression });
  }
  return err;
}
