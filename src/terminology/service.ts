// The terminology service: resolves value sets and code systems visible to a project (its own first, then the
// shared core), with their indexes from the index cache (index-cache.ts), and runs $expand through the engine.
// Every change is announced with NOTIFY terminology_changed so every instance drops what it cached.
import { TerminologyCapabilitiesSource } from './capabilities.js';
import { toApiError } from './api-errors.js';
import { translate as translateWith } from './translate-service.js';
import type { Logger } from 'pino';
import type { TranslateParameters } from './engine/index.js';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { badRequest, notFound } from '../core/errors.js';
import {
  checkOperationValues,
  checkParameter,
  checkRequest,
  compareVersionsDesc,
  conceptOrdinal,
  CS_VALIDATE_CODE_OPERATION,
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
  VALIDATE_CODE_OPERATION,
  implicitValueSet,
  importedValueSets,
  isImplicitValueSetUrl,
  unresolvedValueSetAnswer,
  validateCodings,
  valueSetWarnings,
  withTxIssueType,
  type CheckedForm,
  type CheckedRequest,
  type CodeableConceptValue,
  type CsValidateCodeOptions,
  type CsValidateCodeTargetParameters,
  type ValidateCodeOptions,
  type ValidateCodeTargetParameters,
  type VersionSpec,
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
  /** metadata?mode=terminology: the shared code systems, cached until one changes. */
  readonly capabilities: TerminologyCapabilitiesSource;

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
    this.capabilities = new TerminologyCapabilitiesSource(db);
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

  /** The generation answers are computed in (bumped by every change), or undefined while changes made by other
   * instances may go unseen (the database's notifications are not being received): nothing may be kept then. */
  answerGeneration(): number | undefined {
    return this.db.listening ? this.generation : undefined;
  }

  /** Drops resolution caches, and the index of a changed CodeSystem ('*' or unknown payload: everything). */
  invalidate(payload: string): void {
    this.generation++;
    this.valueSets.clear();
    this.valueSetsById.clear();
    this.codeSystems.clear();
    this.capabilities.clear();
    const [type, id] = payload.split('/');
    if (type === 'CodeSystem' && id) this.indexes.delete(id);
    // A ConceptMap is read from the database by every $translate: nothing of it is cached.
    else if (type !== 'ValueSet' && type !== 'ConceptMap') this.clearAll();
  }

  /** Drops every cache (notifications may have been missed). */
  clearAll(): void {
    this.generation++;
    this.valueSets.clear();
    this.valueSetsById.clear();
    this.codeSystems.clear();
    this.capabilities.clear();
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
    const inline = target.valueSet !== undefined && target.valueSet !== null;
    const vs = await this.findValueSet(
      projectId,
      target,
      resolver,
      txResources !== undefined,
      (url, version) => notFound(`ValueSet ${url}${version ? ` version ${version}` : ''} not found`),
    );
    try {
      // Request-supplied resources get an engine of their own: their memberships must not be cached for others.
      const engine = txResources ? new ExpansionEngine({ maxCachedValueSets: 16 }) : this.engine;
      return await engine.expandChecked(vs, checked, resolver, limits, { inline });
    } catch (err) {
      throw toApiError(err);
    }
  }

  /** The value set a request names: inline, by id, or by url (`url|version` allowed; valueSetVersion, when also
   * given, must agree). `missing` makes the error for a url nobody has. */
  private async findValueSet(
    projectId: string,
    target: ExpandTarget,
    resolver: Resolver,
    hasTxResources: boolean,
    missing: (url: string, version: string | undefined) => Error,
  ): Promise<ValueSetResource> {
    if (target.valueSet !== undefined && target.valueSet !== null) {
      const vs = inlineValueSet(target.valueSet);
      checkValueSetEntries(vs as unknown as Record<string, unknown>, this.valueSetMaxEntries, 'valueSet');
      return vs;
    }
    if (target.id !== undefined) {
      const vs = (await this.valueSetById(projectId, target.id)) ?? undefined;
      if (!vs) throw notFound(`ValueSet/${target.id} not found`);
      return vs;
    }
    if (target.url === undefined)
      throw badRequest('Give the url of a value set (or an id, or an inline valueSet)', ['url']);
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
    const hit = hasTxResources ? undefined : this.valueSets.get(valueSetKey(projectId, url, version));
    const vs = hit !== undefined ? (hit ?? undefined) : await resolver.valueSet(url, version);
    if (!vs) throw missing(url, version);
    return vs;
  }

  /** ValueSet/$validate-code for a project: is a code in a value set it sees (own first, then the shared core; a
   * request's tx-resource before both), and is its display right? Membership is the value set's cached Membership
   * (a position lookup): a hot value set of a million concepts costs what a $lookup costs. */
  async validateCode(
    projectId: string,
    target: ValidateCodeTargetParameters & { id?: string },
    options: ValidateCodeOptions,
  ): Promise<ParametersResource> {
    checkValuesOf(VALIDATE_CODE_OPERATION, target, options);
    if (!this.db.listening) this.clearAll();
    if (target.id !== undefined && (target.url !== undefined || target.valueSet !== undefined))
      throw badRequest('Instance $validate-code takes no url or valueSet parameter', ['url']);
    if (
      target.systemVersion !== undefined &&
      target.version !== undefined &&
      target.systemVersion !== target.version
    )
      throw badRequest('systemVersion and version differ', ['systemVersion']);
    const checked = checkedCode(target, options.display, target.systemVersion ?? target.version);
    const txResources = target.txResource && target.txResource.length > 0 ? target.txResource : undefined;
    const resolver = this.requestResolver(projectId, txResources);
    const inline = target.valueSet !== undefined && target.valueSet !== null;
    let vs: ValueSetResource;
    try {
      vs = await this.findValueSet(
        projectId,
        {
          url: target.url,
          valueSetVersion: target.valueSetVersion,
          id: target.id,
          valueSet: target.valueSet,
        },
        resolver,
        txResources !== undefined,
        (url, version) =>
          withTxIssueType(
            'not-found',
            new TerminologyError(
              404,
              'not-found',
              `A definition for the value Set '${url}${version !== undefined ? `|${version}` : ''}' could not be found`,
            ),
          ),
      );
    } catch (err) {
      throw toApiError(err);
    }
    // The version parameters, valueSetVersion and supplements as an expansion takes them: the membership is the
    // one $expand would use.
    const request: ExpandRequest = {};
    if (options.defaultSystemVersion) request.systemVersion = options.defaultSystemVersion;
    if (options.checkSystemVersion) request.checkSystemVersion = options.checkSystemVersion;
    if (options.forceSystemVersion) request.forceSystemVersion = options.forceSystemVersion;
    if (options.defaultValueSetVersion) request.defaultValueSetVersion = options.defaultValueSetVersion;
    if (options.useSupplement) request.useSupplement = options.useSupplement;
    if (target.valueSetVersion !== undefined) request.valueSetVersion = target.valueSetVersion;
    try {
      const engine = txResources ? new ExpansionEngine({ maxCachedValueSets: 16 }) : this.engine;
      let found: Awaited<ReturnType<ExpansionEngine['membershipFor']>>;
      const versionCheckFailures = new Map<string, { text: string; required: string }>();
      try {
        found = await engine.membershipFor(vs, checkRequest(request, this.limits), resolver, this.limits, {
          inline,
        });
      } catch (err) {
        if (!(err instanceof TerminologyError)) throw err;
        // A code system version check-system-version refuses: the Codings of that system are not valid (an
        // answer); the value set is evaluated without the check for the rest.
        const [, url, required] = /for system '([^']*)': required to be '([^']*)'/.exec(err.message) ?? [];
        if (err.txIssueType === 'version-error' && url !== undefined && required !== undefined) {
          versionCheckFailures.set(url, { text: err.message, required });
          const unchecked = { ...request, checkSystemVersion: undefined };
          found = await engine.membershipFor(
            vs,
            checkRequest(unchecked, this.limits),
            resolver,
            this.limits,
            {
              inline,
            },
          );
        } else {
          // Something the value set names is missing: the code cannot be in it (an answer, not an error).
          const answer =
            err.status === 422 && err.issueCode === 'not-found'
              ? await unresolvedValueSetAnswer(
                  checked.form,
                  checked.codings,
                  err.message,
                  resolver,
                  target.codeableConcept,
                  fallbackVersionsOf(options),
                  { url: vs.url, version: vs.version },
                )
              : undefined;
          if (answer) return answer;
          throw err;
        }
      }
      const { membership, supplements } = found;
      const statusNotes: string[] = [];
      const imported =
        membership.usedValueSets.length > 0 ? await importedValueSets(membership, resolver) : [];
      for (const v of [vs, ...imported])
        for (const w of valueSetWarnings(v))
          statusNotes.push(
            `Reference to ${w} ValueSet ${v.url ?? ''}${v.version !== undefined ? `|${v.version}` : ''}`,
          );
      return await validateCodings(
        checked.form,
        checked.codings,
        {
          valueSet: {
            membership,
            canonical: vs.url
              ? `${vs.url}${vs.version !== undefined ? `|${vs.version}` : ''}`
              : '(unidentified)',
            statusNotes,
            versionSpecs: versionSpecsOf(vs, options),
            excludesInactive: vs.compose?.inactive === false,
          },
          displayLanguage: options.displayLanguage ?? valueSetLanguage(vs),
          lenientDisplay: options.lenientDisplayValidation,
          abstract: options.abstract,
          activeOnly: options.activeOnly,
          membershipOnly: options.membershipOnly,
          inferSystem: options.inferSystem,
          versionCheckFailures,
          supplements,
        },
        resolver,
        target.codeableConcept,
      );
    } catch (err) {
      throw toApiError(err);
    }
  }

  /** CodeSystem/$validate-code for a project: is a code in a code system it sees (by url, a Coding's system, or
   * id), and is its display right? A code system nobody has is a `false` answer naming it, as the IG asks. */
  async validateCodeInCodeSystem(
    projectId: string,
    target: CsValidateCodeTargetParameters & { id?: string },
    options: CsValidateCodeOptions,
  ): Promise<ParametersResource> {
    checkValuesOf(CS_VALIDATE_CODE_OPERATION, target, options);
    if (!this.db.listening) this.clearAll();
    const checked = checkedCode(target, options.display, target.version);
    const txResources = target.txResource && target.txResource.length > 0 ? target.txResource : undefined;
    const resolver = this.requestResolver(projectId, txResources);
    const first = checked.codings[0];
    const split = splitSystem(target.url ?? first?.system, target.version ?? first?.version);
    let index: CodeSystemIndex | undefined;
    try {
      if (target.id !== undefined) {
        index = (await this.codeSystemById(projectId, target.id)) ?? undefined;
        if (!index) throw notFound(`CodeSystem/${target.id} not found`);
        if (target.url !== undefined && split.system !== index.url)
          throw badRequest(`url ${split.system?.slice(0, 100)} is not the url of CodeSystem/${target.id}`, [
            'url',
          ]);
      } else if (split.system === undefined) {
        throw badRequest('Give the url of the code system (or a coding with a system, or a CodeSystem id)', [
          'url',
        ]);
      } else {
        index = await resolveCodeSystem(resolver, split.system, split.version);
      }
      const codings = checked.codings.map((c) => ({ ...c, system: c.system ?? index?.url ?? split.system }));
      const supplements =
        options.useSupplement && options.useSupplement.length > 0
          ? await resolveSupplements(options.useSupplement, resolver)
          : NO_SUPPLEMENTS;
      if (index) supplements.settle([index.url]);
      return await validateCodings(
        checked.form,
        codings,
        {
          codeSystem: index,
          displayLanguage: options.displayLanguage,
          lenientDisplay: options.lenientDisplayValidation,
          abstract: options.abstract,
          activeOnly: options.activeOnly,
          supplements,
        },
        resolver,
        target.codeableConcept,
      );
    } catch (err) {
      throw toApiError(err);
    }
  }

  /** The resolver of a request: the project's, or one that looks in its tx-resources first. */
  private requestResolver(projectId: string, txResources: unknown[] | undefined): Resolver {
    return txResources
      ? txResourceResolver(this.resolverFor(projectId), txResources, {
          maxConcepts: this.opts.txResourceMaxConcepts,
          valueSetMaxEntries: this.valueSetMaxEntries,
        })
      : this.resolverFor(projectId);
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

  /** ConceptMap/$translate for a project (translate-service.ts). */
  translate(
    projectId: string,
    params: TranslateParameters & { id?: string },
  ): Promise<Record<string, unknown>> {
    return translateWith(
      {
        db: this.db,
        maxEntries: this.valueSetMaxEntries,
        selectByUrl: (url, version) => this.selectByUrl('ConceptMap', projectId, url, version),
      },
      projectId,
      params,
    );
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
    // Without concept extensions in the code system, only concepts with a definition have details: the others
    // cost no query ($lookup asks for the definition of every concept it answers).
    const wanted =
      this.conceptExtensions.get(index.cacheKey) === false
        ? ordinals.filter((o) => index.mayHaveDefinition(o))
        : ordinals;
    if (!index.meta.id || !isRowId(index.meta.id) || wanted.length === 0) return out;
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
      [index.meta.id, wanted],
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
    remember(this.conceptExtensions, index.cacheKey, row?.has === true);
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
    let vs = row ? (rowToResource('ValueSet', row) as ValueSetResource) : NONE;
    // No stored one: an implicit value set (SNOMED CT `?fhir_vs`, LOINC `/vs`) is defined by its url, over the
    // code systems this project sees.
    if (!vs && isImplicitValueSetUrl(url)) {
      try {
        vs = (await implicitValueSet(url, this.resolverFor(projectId))) ?? NONE;
      } catch (err) {
        throw toApiError(err);
      }
    }
    if (gen === this.generation) remember(this.valueSets, key, vs);
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
    if (gen === this.generation) remember(this.valueSetsById, key, vs);
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
      if (gen === this.generation) remember(this.codeSystems, key, ref);
    }
    if (!ref) return undefined;
    const index = await this.indexes.indexOf(ref);
    await this.noteConceptExtensions(index);
    return index;
  }
}

/** The most entries a resolution cache keeps between changes: its keys are request urls (an ECL expression can
 * make one 64 KB long), and a miss is cached too, so without a bound distinct made-up urls would grow it until the
 * next terminology write. */
const MAX_RESOLUTIONS = 10_000;

/** Caches a resolution; a full cache starts over (rare: it takes 10,000 distinct urls between two changes). */
function remember<V>(cache: Map<string, V>, key: string, value: V): void {
  if (cache.size >= MAX_RESOLUTIONS) cache.clear();
  cache.set(key, value);
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

/** The display language a value set asks for when the request names none: its `displayLanguage` expansion
 * parameter, else its language. */
function valueSetLanguage(vs: ValueSetResource): string | undefined {
  for (const e of vs.compose?.extension ?? []) {
    if (e.url !== 'http://hl7.org/fhir/StructureDefinition/valueset-expansion-parameter') continue;
    const parts = e.extension ?? [];
    const name = parts.find((x) => x.url === 'name');
    const value = parts.find((x) => x.url === 'value');
    const v = value?.valueCode ?? value?.valueString;
    if ((name?.valueCode ?? name?.valueString) === 'displayLanguage' && typeof v === 'string') return v;
  }
  return typeof vs.language === 'string' ? vs.language : undefined;
}

/** The version (pattern) the request's version parameters give each code system: force-system-version, else
 * system-version, else check-system-version. */
function fallbackVersionsOf(options: ValidateCodeOptions): Map<string, string> {
  const out = new Map<string, string>();
  for (const list of [options.checkSystemVersion, options.defaultSystemVersion, options.forceSystemVersion])
    for (const c of list ?? []) {
      const bar = c.indexOf('|');
      if (bar > 0) out.set(c.slice(0, bar), c.slice(bar + 1));
    }
  return out;
}

/** How a value set (and the request's version parameters) name the version of each code system it includes. */
function versionSpecsOf(vs: ValueSetResource, options: ValidateCodeOptions): Map<string, VersionSpec> {
  const byUrl = (list: readonly string[] | undefined): Map<string, string> => {
    const out = new Map<string, string>();
    for (const c of list ?? []) {
      const bar = c.indexOf('|');
      if (bar > 0) out.set(c.slice(0, bar), c.slice(bar + 1));
    }
    return out;
  };
  const force = byUrl(options.forceSystemVersion);
  const fallback = byUrl(options.defaultSystemVersion);
  const check = byUrl(options.checkSystemVersion);
  const out = new Map<string, VersionSpec>();
  for (const inc of vs.compose?.include ?? []) {
    if (!inc.system) continue;
    const include = inc.version;
    const forced = force.get(inc.system);
    const param =
      forced ?? (include === undefined ? (fallback.get(inc.system) ?? check.get(inc.system)) : undefined);
    const effective = param ?? include;
    const seen = out.get(inc.system);
    if (!seen) {
      out.set(inc.system, {
        include,
        effective: effective === undefined ? undefined : [effective],
        viaParameter: param !== undefined,
      });
    } else if (seen.effective !== undefined) {
      // Another include of the system: a versionless one makes any version the value set's.
      seen.effective = effective === undefined ? undefined : [...seen.effective, effective];
    }
  }
  return out;
}

/** The code a $validate-code checks, in the one form the request gives it: code (+system), coding or
 * codeableConcept (a 400 for none, or more than one). */
function checkedCode(
  target: {
    code?: string;
    system?: string;
    coding?: CodingValue;
    codeableConcept?: CodeableConceptValue;
  },
  display: string | undefined,
  version: string | undefined,
): { form: CheckedForm; codings: CodingValue[] } {
  const forms = [
    target.code !== undefined ? 'code' : undefined,
    target.coding !== undefined ? 'coding' : undefined,
    target.codeableConcept !== undefined ? 'codeableConcept' : undefined,
  ].filter((f): f is CheckedForm => f !== undefined);
  if (forms.length === 0)
    throw badRequest('Give the code to check: code (with system), coding or codeableConcept', ['code']);
  if (forms.length > 1)
    throw badRequest(`Give one of code, coding and codeableConcept, not ${forms.join(' and ')}`, forms);
  const form = forms[0];
  if (form === 'code') {
    const split = splitSystem(target.system, version);
    const coding: CodingValue = { code: target.code };
    if (split.system !== undefined) coding.system = split.system;
    if (split.version !== undefined) coding.version = split.version;
    if (display !== undefined) coding.display = display;
    return { form, codings: [coding] };
  }
  if (form === 'coding') {
    const coding = { ...target.coding };
    if (coding.display === undefined && display !== undefined) coding.display = display;
    return { form, codings: [coding] };
  }
  const codings = target.codeableConcept?.coding ?? [];
  if (codings.length === 0) throw badRequest('codeableConcept has no coding to check', ['codeableConcept']);
  return { form, codings };
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
