// The terminology service: resolves value sets and code systems visible to a project (its own first, then the
// shared core), with their indexes from the index cache (index-cache.ts), and runs $expand through the engine.
// Every change is announced with NOTIFY terminology_changed so every instance drops what it cached.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { ApiError, badRequest, notFound, type IssueCode } from '../core/errors.js';
import {
  checkOperationValues,
  checkParameter,
  checkRequest,
  compareVersionsDesc,
  conceptOrdinal,
  DEFAULT_EXPAND_LIMITS,
  ExpansionEngine,
  LOOKUP_OPERATION,
  lookupConcept,
  NO_SUPPLEMENTS,
  resolveCodeSystem,
  resolveSupplements,
  SUBSUMES_OPERATION,
  subsumption,
  TerminologyError,
  unknownCodeSystem,
  type CheckedRequest,
  type CodeSystemIndex,
  type CodingValue,
  type ConceptDetails,
  type ExpandLimits,
  type ExpandRequest,
  type LookupOptions,
  type LookupTargetParameters,
  type OperationDeclaration,
  type ParametersResource,
  type Resolver,
  type SubsumesParameters,
  type ValueSetResource,
  type ValueSetResourceWithExpansion,
} from './engine/index.js';
import { IndexCache, parseJson, refOf, type CodeSystemRef, type IndexCacheOptions } from './index-cache.js';
import { txResourceResolver } from './tx-resources.js';
import {
  checkValueSetEntries,
  DEFAULT_VALUESET_MAX_ENTRIES,
  isRowId,
  ROW_COLUMNS,
  rowToResource,
  type ResourceRow,
  type TerminologyType,
} from './repository.js';
import { ConceptGenerations } from './generations.js';

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

/** Where indexes are kept, how much memory they may take, and the bounds of what a request may bring. */
export interface TerminologyServiceOptions extends IndexCacheOptions {
  /** The most concepts a request's tx-resource CodeSystems may hold in all (indexed in memory, on the request's
   * time). Default 20,000. */
  txResourceMaxConcepts?: number;
  /** The most enumerated concepts and expansion entries a ValueSet may hold (written, inline or tx-resource).
   * Default 50,000. */
  valueSetMaxEntries?: number;
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
  private readonly indexes: IndexCache;
  private resolvers = new Map<string, Resolver>();
  /** Bumped on every invalidation: a lookup that started before one must not fill the cache after it. */
  private generation = 0;
  /** Concept generations: their removal, and the pins of readers. */
  readonly generations: ConceptGenerations;
  /** VALUESET_MAX_ENTRIES: what a ValueSet may enumerate, written (the store checks it), inline or tx-resource. */
  readonly valueSetMaxEntries: number;
  /** EXPAND_MAX_COMPOSE_CLAUSES: one stored ValueSet over it could never be expanded, so it is refused on write. */
  readonly maxComposeClauses: number;

  constructor(
    readonly db: Database,
    private readonly logger: Logger,
    private readonly limits: ExpandLimits,
    private readonly opts: TerminologyServiceOptions = {},
  ) {
    this.generations = new ConceptGenerations(db, logger);
    this.indexes = new IndexCache(
      db,
      this.generations,
      logger,
      opts,
      () => this.generation,
      (index) => this.engine.dropSource(index),
    );
    this.valueSetMaxEntries = opts.valueSetMaxEntries ?? DEFAULT_VALUESET_MAX_ENTRIES;
    this.maxComposeClauses = limits.maxComposeClauses ?? DEFAULT_EXPAND_LIMITS.maxComposeClauses;
  }

  /** Subscribes to change notifications (call once at start), then indexes large code systems in the background. */
  async start(): Promise<void> {
    await this.generations.start();
    await this.db.listen(CHANGED_CHANNEL, (payload) => this.invalidate(payload));
    this.db.onReset(() => this.clearAll());
    this.warming = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.indexes.warm())
      .catch((err: unknown) => this.logger.warn({ err }, 'could not index code systems at start'));
  }

  /** Stops background work on the database (before it is closed). */
  async close(): Promise<void> {
    await this.generations.close();
  }

  /** The background indexing started by start() (tests wait for it). */
  warming: Promise<void> = Promise.resolve();

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
    // Every value is checked here, once, before anything is looked up: the edges (REST, GraphQL, a bot's call)
    // only gave them their types.
    // A request may lower its own limit of unpaged entries (tooCostlyThreshold), never raise it.
    const { tooCostlyThreshold, ...options } = req;
    const limits =
      tooCostlyThreshold === undefined
        ? this.limits
        : { ...this.limits, maxUnpaged: Math.min(this.limits.maxUnpaged, tooCostlyThreshold) };
    const checked = checkValues(target, options, limits);
    if (!this.db.listening) this.clearAll();
    const txResources = target.txResources && target.txResources.length > 0 ? target.txResources : undefined;
    const resolver = txResources
      ? txResourceResolver(this.resolverFor(projectId), txResources, {
          maxConcepts: this.opts.txResourceMaxConcepts,
          valueSetMaxEntries: this.valueSetMaxEntries,
        })
      : this.resolverFor(projectId);
    let vs: ValueSetResource | undefined;
    const inline = target.valueSet !== undefined && target.valueSet !== null;
    if (inline) {
      vs = inlineValueSet(target.valueSet);
      checkValueSetEntries(vs as unknown as Record<string, unknown>, this.valueSetMaxEntries, 'valueSet');
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
      return await engine.expandChecked(vs, checked, resolver, limits, { inline });
    } catch (err) {
      throw toApiError(err);
    }
  }

  /** CodeSystem/$lookup for a project: the details of one code of a code system it sees (its own first, then the
   * shared core; a request's tx-resource before both). Client mistakes come back as ApiError. */
  async lookup(
    projectId: string,
    target: LookupTargetParameters & { id?: string },
    options: LookupOptions,
  ): Promise<ParametersResource> {
    checkValuesOf(LOOKUP_OPERATION, target, options);
    if (!this.db.listening) this.clearAll();
    const named = withCoding(
      { ...splitSystem(target.system, target.version), code: target.code },
      target.coding,
      'coding',
      'code',
    );
    if (named.code === undefined || named.code === '')
      throw badRequest('Give the code to look up (code, or coding with a code)', ['code']);
    const { index, resolver } = await this.codeSystemFor(projectId, named.system, named.version, target);
    try {
      const ord = conceptOrdinal(index, named.code, target.code !== undefined ? 'code' : 'coding');
      const supplements =
        options.useSupplement && options.useSupplement.length > 0
          ? await resolveSupplements(options.useSupplement, resolver)
          : NO_SUPPLEMENTS;
      return await lookupConcept(
        index,
        ord,
        { properties: options.property, displayLanguage: options.displayLanguage, supplements },
        resolver,
      );
    } catch (err) {
      throw toApiError(err);
    }
  }

  /** CodeSystem/$subsumes for a project: how codeA relates to codeB in a code system it sees. */
  async subsumes(
    projectId: string,
    params: SubsumesParameters & { id?: string },
  ): Promise<ParametersResource> {
    checkValuesOf(SUBSUMES_OPERATION, params, {});
    if (!this.db.listening) this.clearAll();
    const a = withCoding(
      { ...splitSystem(params.system, params.version), code: params.codeA },
      params.codingA,
      'codingA',
      'codeA',
    );
    const b = withCoding(
      { system: a.system, version: a.version, code: params.codeB },
      params.codingB,
      'codingB',
      'codeB',
    );
    if (!a.code) throw badRequest('Give codeA (or codingA)', ['codeA']);
    if (!b.code) throw badRequest('Give codeB (or codingB)', ['codeB']);
    const { index } = await this.codeSystemFor(projectId, b.system, b.version, params);
    try {
      const ordA = index.lookupCode(a.code);
      const ordB = index.lookupCode(b.code);
      if (ordA < 0 || ordB < 0) {
        const missing = [ordA < 0 ? a.code : undefined, ordB < 0 ? b.code : undefined].filter(
          (c): c is string => c !== undefined,
        );
        const version = index.version !== undefined ? ` version ${index.version}` : '';
        throw new TerminologyError(
          404,
          'not-found',
          `Unable to find code${missing.length > 1 ? 's' : ''} ${missing.map((c) => `'${c}'`).join(' and ')} in ` +
            `${index.url}${version}`,
          [...(ordA < 0 ? ['codeA'] : []), ...(ordB < 0 ? ['codeB'] : [])],
        );
      }
      return {
        resourceType: 'Parameters',
        parameter: [{ name: 'outcome', valueCode: subsumption(index, ordA, ordB) }],
      };
    } catch (err) {
      throw toApiError(err);
    }
  }

  /** The code system of a $lookup or $subsumes: by id (instance level; a system given too must be its url), else
   * by url (`url|version` allowed; a version pattern takes the highest match; none: the highest version). */
  private async codeSystemFor(
    projectId: string,
    system: string | undefined,
    version: string | undefined,
    target: { id?: string; txResource?: unknown[] },
  ): Promise<{ index: CodeSystemIndex; resolver: Resolver }> {
    const txResources = target.txResource && target.txResource.length > 0 ? target.txResource : undefined;
    const resolver = txResources
      ? txResourceResolver(this.resolverFor(projectId), txResources, {
          maxConcepts: this.opts.txResourceMaxConcepts,
          valueSetMaxEntries: this.valueSetMaxEntries,
        })
      : this.resolverFor(projectId);
    const split = splitSystem(system, version);
    const url = split.system;
    version = split.version;
    if (target.id !== undefined) {
      const index = await this.codeSystemById(projectId, target.id);
      if (!index) throw notFound(`CodeSystem/${target.id} not found`);
      if (url !== undefined && url !== index.url)
        throw badRequest(`system ${url} is not the url of CodeSystem/${target.id}`, ['system']);
      if (version !== undefined && version !== index.version)
        throw badRequest(`version ${version} is not the version of CodeSystem/${target.id}`, ['version']);
      return { index, resolver };
    }
    if (url === undefined)
      throw badRequest('Give the system of the code (or a coding with a system, or a CodeSystem id)', [
        'system',
      ]);
    let index: CodeSystemIndex | undefined;
    try {
      index = await resolveCodeSystem(resolver, url, version);
      if (!index) throw unknownCodeSystem(url, version, 'system');
    } catch (err) {
      throw toApiError(err);
    }
    return { index, resolver };
  }

  /** The index of a stored CodeSystem by id, if the project sees it (its own, or a shared one). */
  private async codeSystemById(projectId: string, id: string): Promise<CodeSystemIndex | undefined> {
    if (!isRowId(id)) return undefined;
    const [row] = await this.db.sql<ResourceRow & Record<string, unknown>>(
      `SELECT ${ROW_COLUMNS} FROM "CodeSystem" WHERE id = $1::uuid AND ("projectId" = $2::uuid OR "projectId" IS NULL)`,
      [id, projectId],
    );
    if (!row) return undefined;
    const index = await this.indexes.indexOf(refOf(row));
    await this.noteConceptExtensions(index);
    return index;
  }

  /** The resolver of a project (reused: it only closes over the project id). */
  resolverFor(projectId: string): Resolver {
    let r = this.resolvers.get(projectId);
    if (!r) {
      r = {
        scope: projectId,
        codeSystem: (url, version) => this.codeSystemIndex(projectId, url, version),
        codeSystemVersions: (url) => this.codeSystemVersions(projectId, url),
        valueSet: async (url, version) => (await this.valueSet(projectId, url, version)) ?? undefined,
        generation: () => this.generation,
        conceptDetails: (index, ordinals) => this.conceptDetails(index, ordinals),
        hasConceptExtensions: (index) => this.conceptExtensions.get(index.cacheKey) === true,
      };
      this.resolvers.set(projectId, r);
    }
    return r;
  }

  /** Definitions and extensions of some concepts of a stored code system (the index does not keep them): one
   * query, only when a request asks for properties or the code system has concept extensions. */
  private async conceptDetails(
    index: CodeSystemIndex,
    ordinals: number[],
  ): Promise<Map<number, ConceptDetails>> {
    const out = new Map<number, ConceptDetails>();
    if (!index.meta.id || !isRowId(index.meta.id) || ordinals.length === 0) return out;
    // The live generation's rows, by ordinal (the index was built from them in ordinal order); a row whose code
    // differs belongs to a newer generation than the index (a write in between): skipped, not misattributed.
    const rows = await this.db.sql<{
      ordinal: number;
      code: string;
      definition: string | null;
      extensions: unknown;
    }>(
      `SELECT ordinal, code, definition, extensions FROM "Concept"
       WHERE "generationId" = (SELECT id FROM "ConceptGeneration" WHERE "codeSystemId" = $1::uuid AND state = 'live')
         AND ordinal = ANY($2::int[])`,
      [index.meta.id, ordinals],
    );
    for (const r of rows) {
      const ord = r.ordinal;
      if (ord >= index.size || index.code(ord) !== r.code) continue;
      const d: ConceptDetails = {};
      if (r.definition !== null) d.definition = r.definition;
      const ext = parseJson(r.extensions);
      if (Array.isArray(ext) && ext.length > 0) d.extension = ext as ConceptDetails['extension'];
      if (d.definition !== undefined || d.extension) out.set(ord, d);
    }
    return out;
  }

  /** Whether some concept of a stored code system (by index cacheKey) has extensions; looked up once per stored
   * version (a code system without any, the usual case, then costs nothing per expansion). */
  private readonly conceptExtensions = new Map<string, boolean>();

  private async noteConceptExtensions(index: CodeSystemIndex): Promise<void> {
    if (this.conceptExtensions.has(index.cacheKey) || !index.meta.id || !isRowId(index.meta.id)) return;
    const [row] = await this.db.sql<{ has: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM "Concept" WHERE extensions IS NOT NULL AND "generationId" =
         (SELECT id FROM "ConceptGeneration" WHERE "codeSystemId" = $1::uuid AND state = 'live')) AS has`,
      [index.meta.id],
    );
    if (this.conceptExtensions.size > 10_000) this.conceptExtensions.clear();
    this.conceptExtensions.set(index.cacheKey, row?.has === true);
  }

  /** Every version of a code system the project sees (only for wildcard versions and error messages: a query). */
  private async codeSystemVersions(projectId: string, url: string): Promise<string[]> {
    const rows = await this.db.sql<{ version: string | null }>(
      `SELECT DISTINCT version FROM "CodeSystem" WHERE url = $1 AND ("projectId" = $2::uuid OR "projectId" IS NULL)`,
      [url, projectId],
    );
    return rows.flatMap((r) => (r.version ? [r.version] : []));
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

  /** The project's own resource first, then the shared one; without a version the highest (compared part by part,
   * numerically where both parts are numbers; the most recently updated among equals), whatever the order in which
   * they were written, as for tx-resource and the versions of a compose. */
  private async selectByUrl(
    type: TerminologyType,
    projectId: string,
    url: string,
    version?: string,
  ): Promise<ResourceRow | undefined> {
    if (version !== undefined) {
      const [row] = await this.db.sql<ResourceRow & Record<string, unknown>>(
        `SELECT ${ROW_COLUMNS} FROM "${type}" WHERE url = $1 AND ("projectId" = $2::uuid OR "projectId" IS NULL)
         AND version = $3 ORDER BY ("projectId" IS NULL), "updatedAt" DESC, id LIMIT 1`,
        [url, projectId, version],
      );
      return row;
    }
    const candidates = await this.db.sql<{ id: string; version: string | null; shared: boolean }>(
      `SELECT id, version, ("projectId" IS NULL) AS shared FROM "${type}"
       WHERE url = $1 AND ("projectId" = $2::uuid OR "projectId" IS NULL)
       ORDER BY ("projectId" IS NULL), "updatedAt" DESC, id LIMIT ${MAX_VERSIONS_COMPARED}`,
      [url, projectId],
    );
    if (candidates.length === 0) return undefined;
    const own = candidates.filter((c) => c.shared === candidates[0].shared);
    // A stable sort keeps the most recently updated first among equal versions.
    const best = own.sort((a, b) => compareVersionsDesc(a.version ?? '', b.version ?? ''))[0];
    const [row] = await this.db.sql<ResourceRow & Record<string, unknown>>(
      `SELECT ${ROW_COLUMNS} FROM "${type}" WHERE id = $1::uuid`,
      [best.id],
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
      ref = row ? refOf(row) : NONE;
      if (gen === this.generation) this.codeSystems.set(key, ref);
    }
    if (!ref) return undefined;
    const index = await this.indexes.indexOf(ref);
    await this.noteConceptExtensions(index);
    return index;
  }
}

/** The most versions of one url compared when a request names none (the most recently updated ones). */
const MAX_VERSIONS_COMPARED = 1000;

function valueSetKey(projectId: string, url: string, version: string | undefined): string {
  return `${projectId}\u0000${url}\u0000${version ?? ''}`;
}

/** The values of a request checked (engine checkRequest), the target's first; engine errors as API errors.
 * valueSetVersion is in the request as well as in the target (the engine compares it): checked there. */
function checkValues(target: ExpandTarget, req: ExpandRequest, limits: ExpandLimits): CheckedRequest {
  try {
    checkParameter('url', target.url);
    checkParameter('valueSet', target.valueSet);
    checkParameter('txResource', target.txResources);
    return checkRequest(req, limits);
  } catch (err) {
    throw toApiError(err);
  }
}

/** The values of a $lookup or $subsumes request checked against the operation's table (engine errors as API
 * errors). */
function checkValuesOf(
  op: OperationDeclaration,
  target: Readonly<Record<string, unknown>>,
  options: Readonly<Record<string, unknown>>,
): void {
  try {
    checkOperationValues(op, target);
    checkOperationValues(op, options);
  } catch (err) {
    throw toApiError(err);
  }
}

/** A system given as `url|version` split (the version, when also given, must agree); an empty url is a 400. */
function splitSystem(
  system: string | undefined,
  version: string | undefined,
): { system?: string; version?: string } {
  if (system === undefined) return { system, version };
  const bar = system.indexOf('|');
  let url = system;
  if (bar >= 0) {
    const v = system.slice(bar + 1);
    url = system.slice(0, bar);
    if (version !== undefined && v !== '' && v !== version)
      throw badRequest(`system version ${v.slice(0, 100)} and version ${version.slice(0, 100)} differ`, [
        'version',
      ]);
    if (v !== '') version = v;
  }
  if (url === '') throw badRequest('system must not be empty', ['system']);
  return { system: url, version };
}

/** A code named by separate parameters and/or a Coding: the Coding fills in what they leave out, and may not
 * contradict them (a 400 naming the Coding). */
function withCoding(
  given: { system?: string; version?: string; code?: string },
  coding: CodingValue | undefined,
  codingName: string,
  codeName: string,
): { system?: string; version?: string; code?: string } {
  if (!coding) return given;
  const out = { ...given };
  for (const [k, name] of [
    ['system', 'system'],
    ['version', 'version'],
    ['code', codeName],
  ] as const) {
    const v = coding[k];
    if (v === undefined) continue;
    if (out[k] !== undefined && out[k] !== v)
      throw badRequest(
        `${codingName}.${k} (${v.slice(0, 100)}) differs from ${name} (${out[k]!.slice(0, 100)})`,
        [codingName],
      );
    out[k] = v;
  }
  return out;
}

/** The inline value set of a request (an object: checkValues checked that it is a resource). */
function inlineValueSet(v: unknown): ValueSetResource {
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
    maxComposeClauses: config.expandMaxComposeClauses,
  };
}

/** Engine errors become API errors with the engine's status and issue code; others pass through. */
export function toApiError(err: unknown): unknown {
  if (err instanceof TerminologyError) {
    // The engine's issue codes are FHIR IssueType codes ('code-invalid' included), valid in an OperationOutcome.
    return new ApiError(err.status, err.issueCode as IssueCode, err.message, {
      expression: err.expression,
      txIssueType: err.txIssueType,
    });
  }
  return err;
}
