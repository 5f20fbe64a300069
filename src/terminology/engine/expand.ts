// $expand: membership (cached per value set identity + code system versions) -> filter + rank (cached per
// filter) -> page by array indexing -> FHIR ValueSet.expansion.
import { randomUUID } from 'node:crypto';
import { FLAG_ABSTRACT, FLAG_INACTIVE, type CodeSystemIndex, type WordRange } from './code-system-index.js';
import { scratchInt32, SLOT_REST, SLOT_STARTS } from './scratch.js';
import { evaluateValueSet, valueSetIdentity } from './compose.js';
import { EngineComposeContext, type ComposeContext } from './compose-context.js';
import { EXT, inMemoryDetails, type ConceptDetails } from './concept-details.js';
import {
  buildEntry,
  plainEntry,
  plainSettings,
  displayOf,
  prepareSources,
  PropertyDeclarations,
  type OutputSettings,
} from './entries.js';
import { statusWarnings } from './flatten.js';
import { nestEntries } from './hierarchy.js';
import { echoLanguageList, parseLanguageList } from './languages.js';
import { resolveCodeSystem } from './versions.js';
import { TerminologyError, invalid } from './errors.js';
import { FLAG_SHOW_VERSION, Membership, type EntryOverride, type FilterResult } from './membership.js';
import { tokenize } from './normalize.js';
import { MAX_REPEATS, MAX_STRING, PARAMETER_BY_NAME } from './parameters.js';
import { NO_SUPPLEMENTS, resolveSupplements } from './supplements.js';
import type {
  ExpandLimits,
  ExpandRequest,
  ExpansionParameter,
  Extension,
  ValueSetContains,
  ValueSetResource,
  ValueSetResourceWithExpansion,
} from './types.js';
import type { Resolver } from './resolver.js';
import { DEFAULT_EXPAND_LIMITS, MAX_OFFSET } from './types.js';
import { DEFAULT_REGEX_LIMITS } from './safe-regex.js';

export interface ExpansionEngineOptions {
  /** How many value set memberships to keep (LRU). Default 256. */
  maxCachedValueSets?: number;
}

export interface PreparedFilter {
  raw: string;
  /** The normalised words in order (for "display starts with the filter"). */
  words: string[];
  /** The distinct words (for matching: a repeated word costs nothing more). */
  distinct: string[];
  joined: string;
}

/** A cached membership: the evaluation, its result once settled, and when its dependencies were last checked. */
interface CachedMembership {
  promise: Promise<Membership>;
  value?: Membership;
  /** The resolver generation at which the dependencies were last found current. */
  validatedAt?: number;
  /** For LRU eviction (a counter, not a time). */
  lastUse: number;
}

export class ExpansionEngine {
  private readonly memberships = new Map<string, CachedMembership>();
  private readonly maxCached: number;
  private useCounter = 0;

  constructor(opts: ExpansionEngineOptions = {}) {
    this.maxCached = opts.maxCachedValueSets ?? 256;
  }

  /** Drops every cached membership (e.g. on a database reset notification). */
  clear(): void {
    this.memberships.clear();
  }

  /** Drops the cached memberships drawn from an index (it is being released). */
  dropSource(index: CodeSystemIndex): void {
    for (const [k, c] of this.memberships) if (c.value?.sources.includes(index)) this.memberships.delete(k);
  }

  /** Approximate bytes held by cached memberships (settled ones). */
  async memoryEstimateBytes(): Promise<number> {
    let b = 0;
    for (const c of this.memberships.values())
      b += (await c.promise.catch(() => undefined))?.memoryEstimateBytes() ?? 0;
    return b;
  }

  async expand(
    vs: ValueSetResource,
    request: ExpandRequest,
    resolver: Resolver,
    limits: ExpandLimits,
    opts: { inline?: boolean } = {},
  ): Promise<ValueSetResourceWithExpansion> {
    validateRequest(request, limits);
    // Parameters the value set itself declares (valueset-expansion-parameter) apply where the request is silent.
    const req = withComposeParameters(request, vs);
    const filter = prepareFilter(req.filter, limits);
    if (req.valueSetVersion !== undefined && vs.version !== undefined && req.valueSetVersion !== vs.version) {
      throw new TerminologyError(
        404,
        'not-found',
        `ValueSet ${vs.url ?? ''} version ${req.valueSetVersion} not found (this one is version ${vs.version})`,
      );
    }
    const systemVersion = canonicalMap(req.systemVersion, 'system-version');
    const forceSystemVersion = canonicalMap(req.forceSystemVersion, 'force-system-version');
    const checkSystemVersion = canonicalMap(req.checkSystemVersion, 'check-system-version');
    const defaultValueSetVersion = canonicalMap(req.defaultValueSetVersion, 'default-valueset-version');
    const langs =
      req.displayLanguage !== undefined
        ? parseLanguageList(req.displayLanguage, 'displayLanguage')
        : undefined;
    const vsSupplements = valueSetSupplements(vs);
    const supplementCanonicals =
      req.useSupplement === undefined && vsSupplements.length === 0
        ? NO_STRINGS
        : [...(req.useSupplement ?? []), ...vsSupplements];
    const supplements =
      supplementCanonicals.length > 0
        ? await resolveSupplements(supplementCanonicals, resolver)
        : NO_SUPPLEMENTS;
    const versionKey =
      systemVersion.size + forceSystemVersion.size + checkSystemVersion.size + defaultValueSetVersion.size ===
        0 && req.versionsMatch === undefined
        ? ''
        : JSON.stringify([
            [...systemVersion],
            [...forceSystemVersion],
            [...checkSystemVersion],
            [...defaultValueSetVersion],
            req.versionsMatch,
          ]);

    const ctx = new EngineComposeContext(this, resolver, systemVersion, forceSystemVersion, versionKey, [
      vs.url ?? '#',
    ]);
    ctx.regexLimits = limits.regex ?? DEFAULT_REGEX_LIMITS;
    ctx.regexSpent = { ms: 0 };
    ctx.composeClauses = {
      used: 0,
      max: limits.maxComposeClauses ?? DEFAULT_EXPAND_LIMITS.maxComposeClauses,
    };
    if (checkSystemVersion.size > 0) ctx.checkSystemVersion = checkSystemVersion;
    if (defaultValueSetVersion.size > 0) ctx.defaultValueSetVersion = defaultValueSetVersion;
    if (req.versionsMatch !== undefined) ctx.versionsMatch = req.versionsMatch;
    if (vs.contained) ctx.contained = vs.contained;
    const found = this.membership(vs, ctx, versionKey, valueSetIdentity(vs, opts.inline !== true));
    const m = found instanceof Membership ? found : await found;
    supplements.settle(m.usedCodeSystems());

    const settings: OutputSettings = {
      langs,
      includeDesignations: req.includeDesignations === true,
      designations: req.designation,
      properties: req.property ?? NO_STRINGS,
      supplements,
      vsLanguage: typeof vs.language === 'string' ? vs.language : undefined,
    };
    const chooser = langs !== undefined || supplements.size > 0 ? settings : undefined;
    const excludeMask = (req.activeOnly ? FLAG_INACTIVE : 0) | (req.excludeNotForUI ? FLAG_ABSTRACT : 0);
    let positions: Int32Array | undefined;
    let filteredTotal = -1;
    if (filter) {
      // Only the entries up to the page's end are ranked (the total is exact either way).
      const need = req.count === undefined ? Infinity : (req.offset ?? 0) + req.count;
      const key =
        supplementCanonicals.length === 0 && req.displayLanguage === undefined
          ? `${excludeMask}\u0000${filter.raw}`
          : `${excludeMask}\u0000${req.displayLanguage ?? ''}\u0000${supplementCanonicals.join(' ')}\u0000${filter.raw}`;
      let found = m.cachedFilter(key);
      if (!found || (!found.complete && found.positions.length < need)) {
        found = filterPage(m, filter, excludeMask, chooser, need);
        m.storeFilter(key, found);
      }
      positions = found.positions;
      filteredTotal = found.total;
    } else if (excludeMask !== 0) {
      positions = m.positionsWithout(excludeMask);
    }
    const total = filteredTotal >= 0 ? filteredTotal : positions ? positions.length : m.size;
    if (req.count === undefined && total > limits.maxUnpaged) {
      throw new TerminologyError(
        422,
        'too-costly',
        `The value set '${canonicalOf(vs)}' expansion has too many codes to produce (>${limits.maxUnpaged}): ` +
          `use the count and offset parameters (or a filter) to page through its ${total} entries`,
      );
    }
    const offset = req.offset ?? 0;
    const end = Math.min(
      req.count === undefined ? total : Math.min(total, offset + req.count),
      positions ? (filteredTotal >= 0 ? positions.length : total) : total,
    );
    // The page is positions[offset..end) (or offset..end when unfiltered): indexed in place, no array of it.
    const page: PageRange = { positions, offset, end };
    const wanted = resolver.conceptDetails ? detailsWanted(m, page, resolver, settings) : undefined;
    if (wanted) settings.loaded = await loadDetails(wanted, resolver.conceptDetails!.bind(resolver));
    prepareSources(m, settings);

    const decl = new PropertyDeclarations();
    let contains: ValueSetContains[] = [];
    const plain = plainSettings(settings);
    for (let i = offset; i < end; i++) {
      const pos = positions ? positions[i] : i;
      const showVersion = (m.entFlags[pos] & FLAG_SHOW_VERSION) !== 0;
      contains.push(
        (plain ? plainEntry(m, pos, showVersion) : undefined) ??
          buildEntry(m, pos, settings, decl, showVersion),
      );
    }
    // Hierarchical unless excludeNested, and only for a whole (unpaged) expansion: a page of a tree is undefined.
    if (
      m.nest &&
      !m.flat &&
      req.excludeNested !== true &&
      req.count === undefined &&
      req.offset === undefined
    ) {
      contains = nestEntries(m, positions, contains, filter !== undefined);
    }

    const parameter = echoedParameters(req, m);
    for (const u of supplements.used) parameter.push({ name: 'used-supplement', valueUri: u });
    // warning-* for a draft/experimental/deprecated/withdrawn code system or value set used (only looked up
    // when the expansion imports value sets; code system facts are in their index).
    for (const src of m.sources) {
      for (const w of src.meta.warnings ?? []) pushWarning(parameter, w, src.url, src.version);
    }
    // For value sets only the standards-status counts (the IG's draft value sets expand without a warning).
    for (const w of valueSetWarnings(vs)) pushWarning(parameter, w, vs.url ?? '', vs.version);
    for (const u of m.usedValueSets) {
      const bar = u.indexOf('|');
      const used = await resolver.valueSet(
        bar < 0 ? u : u.slice(0, bar),
        bar < 0 ? undefined : u.slice(bar + 1),
      );
      if (used)
        for (const w of valueSetWarnings(used)) pushWarning(parameter, w, used.url ?? '', used.version);
    }

    const expansion: ValueSetResourceWithExpansion['expansion'] = {
      identifier: `urn:uuid:${randomUUID()}`,
      timestamp: new Date().toISOString(),
      total,
    };
    // An expansion drawn from fragments may be incomplete (valueset-unclosed), and R4 declares the properties of
    // its entries as extensions.
    const extension: Extension[] = m.fragments.length > 0 || decl.size > 0 ? [] : NO_EXTENSIONS;
    for (const f of m.fragments) {
      if (extension.length === 0) extension.push({ url: EXT.unclosed, valueBoolean: true });
      extension.push({
        url: EXT.unclosedReason,
        valueString: `This extension is based on a fragment of the code system ${f.split('|')[0]}`,
      });
    }
    if (decl.size > 0) extension.push(...decl.toExtensions());
    if (extension.length > 0) expansion.extension = extension;
    if (req.offset !== undefined) expansion.offset = offset;
    if (parameter.length > 0) expansion.parameter = parameter;
    if (contains.length > 0) expansion.contains = contains;
    // The definition (compose, contained resources, the value set's extensions) only when asked
    // (includeDefinition), and not the descriptive metadata: the expansion identifies its value set, as the HL7
    // reference server answers.
    const {
      compose,
      contained,
      extension: vsExtension,
      text: _t,
      publisher: _p,
      description: _d,
      purpose: _pu,
      copyright: _c,
      contact: _co,
      ...rest
    } = vs;
    return req.includeDefinition
      ? {
          ...rest,
          ...(vsExtension ? { extension: vsExtension } : {}),
          ...(contained ? { contained } : {}),
          compose,
          expansion,
        }
      : { ...rest, expansion };
  }

  /** The (cached, re-validated) membership of a value set. Synchronous when the cached one is known current
   * (the resolver's generation has not moved since its dependencies were checked): the common case of a hot
   * value set costs no promise. */
  membership(
    vs: ValueSetResource,
    ctx: ComposeContext,
    versionKey: string,
    identity: string = valueSetIdentity(vs),
  ): Membership | Promise<Membership> {
    // Partitioned by the resolver's scope (the project): what one project's definitions resolve to is never
    // served to another, even for the same shared value set.
    const key = `${ctx.resolver.scope ?? ''}\u0000${identity}\u0000${versionKey}`;
    const cached = this.memberships.get(key);
    if (cached) {
      cached.lastUse = ++this.useCounter;
      const gen = ctx.resolver.generation?.();
      if (cached.value && gen !== undefined && cached.validatedAt === gen) return cached.value;
      return this.revalidate(key, cached, vs, ctx, gen);
    }
    return this.evaluate(key, vs, ctx);
  }

  private async revalidate(
    key: string,
    cached: CachedMembership,
    vs: ValueSetResource,
    ctx: ComposeContext,
    gen: number | undefined,
  ): Promise<Membership> {
    const m = await cached.promise.catch(() => undefined);
    if (m && (await depsValid(m, ctx.resolver))) {
      // Checked against answers of generation `gen` (read before the check): current until it moves.
      cached.validatedAt = gen;
      return m;
    }
    if (this.memberships.get(key) === cached) this.memberships.delete(key);
    return this.evaluate(key, vs, ctx);
  }

  private evaluate(key: string, vs: ValueSetResource, ctx: ComposeContext): Promise<Membership> {
    const gen = ctx.resolver.generation?.();
    const entry: CachedMembership = { promise: evaluateValueSet(vs, ctx), lastUse: ++this.useCounter };
    this.memberships.set(key, entry);
    entry.promise.then(
      (m) => {
        entry.value = m;
        entry.validatedAt = gen;
      },
      () => {
        if (this.memberships.get(key) === entry) this.memberships.delete(key);
      },
    );
    if (this.memberships.size > this.maxCached) this.evictLeastRecentlyUsed();
    return entry.promise;
  }

  /** Drops the least recently used entries beyond the limit (a scan: only when a new value set is evaluated). */
  private evictLeastRecentlyUsed(): void {
    while (this.memberships.size > this.maxCached) {
      let oldestKey: string | undefined;
      let oldest = Infinity;
      for (const [k, c] of this.memberships) {
        if (c.lastUse < oldest) {
          oldest = c.lastUse;
          oldestKey = k;
        }
      }
      if (oldestKey === undefined) return;
      this.memberships.delete(oldestKey);
    }
  }
}

async function depsValid(m: Membership, resolver: Resolver): Promise<boolean> {
  for (const d of m.deps) {
    if (d.kind === 'cs') {
      const cur = await resolveCodeSystem(resolver, d.url, d.version);
      if (!cur || cur.cacheKey !== d.key) return false;
    } else {
      const cur = await resolver.valueSet(d.url, d.version);
      if (!cur || valueSetIdentity(cur) !== d.key) return false;
    }
  }
  return true;
}

function nonNegInt(v: unknown, name: string): void {
  if (v !== undefined && !(typeof v === 'number' && Number.isInteger(v) && v >= 0)) {
    throw invalid(`Parameter ${name} must be a non-negative integer (got ${String(v)})`, [name]);
  }
}

function validateRequest(req: ExpandRequest, limits: ExpandLimits): void {
  nonNegInt(req.offset, 'offset');
  nonNegInt(req.count, 'count');
  const maxCount = limits.maxCount ?? DEFAULT_EXPAND_LIMITS.maxCount;
  if (req.count !== undefined && req.count > maxCount) {
    throw invalid(
      `Parameter count is ${req.count}, more than the limit of ${maxCount} (EXPAND_MAX_COUNT): page with offset`,
      ['count'],
    );
  }
  if (req.offset !== undefined && req.offset > MAX_OFFSET) {
    throw invalid(`Parameter offset is ${req.offset}, more than the limit of ${MAX_OFFSET}`, ['offset']);
  }
  if (req.filter !== undefined && typeof req.filter !== 'string')
    throw invalid('Parameter filter must be a string');
  const maxLen = limits.maxFilterLength ?? DEFAULT_EXPAND_LIMITS.maxFilterLength;
  if (req.filter !== undefined && req.filter.length > maxLen) {
    throw invalid(
      `Parameter filter is ${req.filter.length} characters long, more than the limit of ${maxLen} ` +
        `(EXPAND_FILTER_MAX_CHARS)`,
      ['filter'],
    );
  }
  if (!(limits.maxUnpaged >= 0)) throw new Error('limits.maxUnpaged must be a non-negative number');
}

/** Shared by requests without system-version parameters; never written to. */
const NO_VERSIONS: ReadonlyMap<string, string> = new Map();

function canonicalMap(v: string | string[] | undefined, name: string): Map<string, string> {
  if (v === undefined) return NO_VERSIONS as Map<string, string>;
  const out = new Map<string, string>();
  for (const c of Array.isArray(v) ? v : [v]) {
    const bar = c.indexOf('|');
    if (bar <= 0 || bar === c.length - 1) {
      throw invalid(`Parameter ${name} must be a canonical 'system|version' (got '${c}')`, [name]);
    }
    out.set(c.slice(0, bar), c.slice(bar + 1));
  }
  return out;
}

/** The normalised form of a `filter` parameter (undefined when blank); 400 past the word limit. */
export function prepareFilter(filter: string | undefined, limits: ExpandLimits): PreparedFilter | undefined {
  const raw = filter?.trim() ?? '';
  if (raw === '') return undefined;
  const words = tokenize(raw);
  const distinct = [...new Set(words)];
  const maxWords = limits.maxFilterWords ?? DEFAULT_EXPAND_LIMITS.maxFilterWords;
  if (distinct.length > maxWords) {
    throw invalid(
      `Parameter filter has ${distinct.length} distinct words, more than the limit of ${maxWords} ` +
        `(EXPAND_FILTER_MAX_WORDS)`,
      ['filter'],
    );
  }
  return { raw, words, distinct, joined: words.join(' ') };
}

/**
 * The filter's exact total and its ranked positions up to `need` (the page's end). A value set that is a whole code
 * system in its own order (the typeahead case: SNOMED, LOINC) takes a path whose cost does not grow with the
 * number of matches: totals come from per-prefix counts or one pass over the rarest word's postings, the
 * "display starts with the filter" class from postings by first display word, and only the page is ranked.
 * Anything else (several systems, subsets, compose display overrides, flags to exclude, a display language with
 * designations) ranks every match (filterAndRank). Both give the same order.
 */
export function filterPage(
  m: Membership,
  f: PreparedFilter,
  excludeMask: number,
  chooser: OutputSettings | undefined,
  need: number,
): FilterResult {
  const src = m.sources[0];
  if (
    m.sources.length === 1 &&
    m.overrides.size === 0 &&
    f.distinct.length > 0 &&
    (excludeMask & src.flagsUnion) === 0 &&
    (chooser === undefined ||
      (src.designations.size === 0 && chooser.supplements.of(src.url).length === 0 && !chooser.langs)) &&
    m.isWholeSystemInOrder()
  ) {
    return wholeSystemPage(src, f, need);
  }
  const positions = filterAndRank(m, f, excludeMask, chooser);
  return { total: positions.length, positions, complete: true };
}

/** Limits for warmFilterPaths's filters (only the page of each is computed). */
const WARM_LIMITS = { ...DEFAULT_EXPAND_LIMITS, maxUnpaged: 0 };

/**
 * Runs the whole-system filter paths over a freshly loaded index a few dozen times, one pair of filters per
 * event-loop turn, so that V8 has optimised them before users' first filters arrive: on 1,000,000 concepts a new
 * two-word filter cost ~1 ms for the first ~30 calls of a process and 0.2-0.3 ms once optimised (in process).
 * 64 rounds were not enough (the first real filters still deoptimised and re-optimised matchRanges); 256 take
 * ~100 ms of CPU in ~1 ms turns. The filters are words of the index's own dictionary; nothing is cached by this.
 */
export async function warmFilterPaths(src: CodeSystemIndex, rounds = 256): Promise<void> {
  const words = src.words;
  if (words.length < 2) return;
  for (let i = 0; i < rounds; i++) {
    const a = words[(i * 7919) % words.length];
    const b = words[(i * 104_729 + 13) % words.length];
    const one = prepareFilter(a.slice(0, Math.max(1, a.length - 1)), WARM_LIMITS);
    const two = prepareFilter(`${a} ${b.slice(0, Math.max(1, b.length - 2))}`, WARM_LIMITS);
    if (one) wholeSystemPage(src, one, 20);
    if (two) wholeSystemPage(src, two, 20);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

const NO_ORDINALS = new Int32Array(0);

/** filterPage for a membership whose positions are the ordinals of one code system (see there). */
function wholeSystemPage(src: CodeSystemIndex, f: PreparedFilter, need: number): FilterResult {
  const codeOrd = src.lookupCode(f.raw);
  const head = codeOrd >= 0 ? 1 : 0;
  const ranges = f.distinct.map((w) => src.prefixRange(w));
  if (ranges.some((r) => r.lo >= r.hi)) {
    const positions = head ? Int32Array.of(codeOrd) : NO_ORDINALS;
    return { total: head, positions, complete: true };
  }
  // "Starts with the filter": the display's first words equal the filter's words (in order, repeats included),
  // and its next word starts with the filter's last word.
  const nOrdered = f.words.length;
  const lastRange = src.prefixRange(f.words[nOrdered - 1]);
  const exactIds = new Int32Array(nOrdered - 1);
  let rankable = true;
  for (let i = 0; i < nOrdered - 1; i++) if ((exactIds[i] = src.wordId(f.words[i])) < 0) rankable = false;
  const isStart = (ord: number): boolean =>
    nOrdered === 1
      ? src.firstWordIn(ord, lastRange)
      : rankable && src.displayStartsWith(ord, exactIds, lastRange);

  let startsTotal: number;
  let starts: Int32Array;
  // The concepts matching every word (several distinct words), computed once: a scratch view, consumed below.
  const matches = f.distinct.length > 1 ? src.matchRanges(ranges) : undefined;
  if (nOrdered === 1) {
    startsTotal = src.firstWordCount(lastRange) - (codeOrd >= 0 && isStart(codeOrd) ? 1 : 0);
    starts = src.firstWordSmallest(lastRange, Math.min(need, startsTotal), codeOrd);
  } else if (!rankable) {
    startsTotal = 0;
    starts = NO_ORDINALS;
  } else {
    // A display that starts with the filter matches every filter word, so the starts are among the matches as
    // much as among the displays beginning with the first word: test the shorter list (each test reads the
    // concept's words, a cache miss or two at a million concepts; the matches of two words are usually fewer).
    const byFirst = src.firstWordPostings(exactIds[0]);
    const cands = matches && matches.length < byFirst.length ? matches : byFirst;
    const keep: number[] = [];
    startsTotal = 0;
    for (let j = 0; j < cands.length; j++) {
      const ord = cands[j];
      if (ord === codeOrd || !src.displayStartsWith(ord, exactIds, lastRange)) continue;
      startsTotal++;
      if (keep.length < need) keep.push(ord);
    }
    starts = Int32Array.from(keep);
  }

  const restNeeded = need - head - startsTotal;
  const rest: number[] = [];
  let total: number;
  if (f.distinct.length === 1) {
    const codeMatches = codeOrd >= 0 && src.conceptHasAll(codeOrd, ranges);
    total = src.prefixTotal(f.distinct[0]) + (codeOrd >= 0 && !codeMatches ? 1 : 0);
    if (restNeeded > 0) {
      const cands = src.rangeOrdinals(ranges[0]);
      for (let j = 0; j < cands.length && rest.length < restNeeded; j++) {
        const ord = cands[j];
        if (ord !== codeOrd && !isStart(ord)) rest.push(ord);
      }
    }
  } else {
    const cands = matches!;
    let matched = 0;
    for (let j = 0; j < cands.length; j++) {
      const ord = cands[j];
      if (ord === codeOrd) continue;
      matched++;
      if (rest.length < restNeeded && !isStart(ord)) rest.push(ord);
    }
    total = matched + head;
  }

  const len = Math.min(need, head + starts.length + rest.length);
  const positions = new Int32Array(len);
  let k = 0;
  if (head && k < len) positions[k++] = codeOrd;
  for (let j = 0; j < starts.length && k < len; j++) positions[k++] = starts[j];
  for (let j = 0; j < rest.length && k < len; j++) positions[k++] = rest[j];
  return { total, positions, complete: len === total };
}

/**
 * Positions of the entries matching the filter, ranked: exact code first, then displays starting with the
 * whole normalised filter, then the rest; each class in membership order.
 */
export function filterAndRank(
  m: Membership,
  f: PreparedFilter,
  excludeMask: number,
  chooser?: OutputSettings,
): Int32Array {
  const nSrc = m.sources.length;
  const nw = f.distinct.length;
  const codeHits = new Int32Array(nSrc).fill(-1);
  const rangesBySource: WordRange[][] = [];
  let cap = m.overrides.size + 1024;
  let starts = scratchInt32(SLOT_STARTS, cap);
  let rest = scratchInt32(SLOT_REST, cap);
  const exact: number[] = [];
  let nStarts = 0;
  let nRest = 0;
  let sortStarts = false;
  let sortRest = false;
  const hasOverrides = m.overrides.size > 0;
  const entFlags = m.entFlags;

  for (let si = 0; si < nSrc; si++) {
    const src = m.sources[si];
    const pm = m.posMaps[si];
    const codeOrd = src.lookupCode(f.raw);
    if (codeOrd >= 0) {
      const pos = pm[codeOrd];
      if (pos >= 0 && (entFlags[pos] & excludeMask) === 0) {
        exact.push(pos);
        codeHits[si] = codeOrd;
      }
    }
    const ranges = nw > 0 ? f.distinct.map((w) => src.prefixRange(w)) : [];
    rangesBySource.push(ranges);
    if (nw === 0) continue;
    const cands = src.matchRanges(ranges); // scratch: consumed before the next source
    if (cands.length === 0) continue;
    if (nStarts + nRest + cands.length > cap) {
      cap = nStarts + nRest + cands.length + m.overrides.size;
      starts = growScratch(SLOT_STARTS, starts, nStarts, cap);
      rest = growScratch(SLOT_REST, rest, nRest, cap);
    }
    // "Starts with the filter" compares the words in order, repeats included.
    const nOrdered = f.words.length;
    const exactIds = new Int32Array(nOrdered - 1);
    let rankable = true;
    for (let i = 0; i < nOrdered - 1; i++) if ((exactIds[i] = src.wordId(f.words[i])) < 0) rankable = false;
    const lastRange = src.prefixRange(f.words[nOrdered - 1]);
    // A display chosen by language or from supplements may differ from the index's display.
    const langMode = chooser !== undefined;
    let lastS = -1;
    let lastR = -1;
    for (let j = 0; j < cands.length; j++) {
      const ord = cands[j];
      const pos = pm[ord];
      if (pos < 0 || ord === codeOrd || (entFlags[pos] & excludeMask) !== 0) continue;
      if (hasOverrides && m.overrides.has(pos)) continue; // handled below
      let isStart: boolean;
      if (langMode) {
        const shown = displayOf(src, ord, undefined, chooser) ?? '';
        isStart = tokenize(shown).join(' ').startsWith(f.joined);
      } else {
        isStart = rankable && src.displayStartsWith(ord, exactIds, lastRange);
      }
      if (isStart) {
        if (pos < lastS) sortStarts = true;
        starts[nStarts++] = lastS = pos;
      } else {
        if (pos < lastR) sortRest = true;
        rest[nRest++] = lastR = pos;
      }
    }
    if (si > 0) sortStarts = sortRest = true;
  }

  if (hasOverrides && nw > 0) {
    for (const [pos, ov] of m.overrides) {
      if ((entFlags[pos] & excludeMask) !== 0) continue;
      const si = m.entSrc[pos];
      const src = m.sources[si];
      const ord = m.entOrd[pos];
      if (codeHits[si] === ord) continue;
      if (!overrideMatches(ov, f.distinct) && !src.conceptHasAll(ord, rangesBySource[si])) continue;
      const shownJoined =
        chooser !== undefined
          ? tokenize(displayOf(src, ord, ov, chooser) ?? '').join(' ')
          : ov.display !== undefined
            ? ov.joined
            : tokenize(src.display(ord) ?? '').join(' ');
      if (shownJoined.startsWith(f.joined)) starts[nStarts++] = pos;
      else rest[nRest++] = pos;
      sortStarts = sortRest = true;
    }
  }

  const nExact = exact.length;
  const out = new Int32Array(nExact + nStarts + nRest);
  if (nExact > 1) exact.sort((a, b) => a - b);
  for (let i = 0; i < nExact; i++) out[i] = exact[i];
  out.set(starts.subarray(0, nStarts), nExact);
  out.set(rest.subarray(0, nRest), nExact + nStarts);
  if (sortStarts) out.subarray(nExact, nExact + nStarts).sort();
  if (sortRest) out.subarray(nExact + nStarts).sort();
  return out;
}

function growScratch(slot: number, cur: Int32Array, used: number, size: number): Int32Array {
  const keep = cur.slice(0, used);
  const b = scratchInt32(slot, size);
  b.set(keep);
  return b;
}

function overrideMatches(ov: EntryOverride, words: string[]): boolean {
  for (const w of words) {
    let hit = false;
    for (const x of ov.words) {
      if (x.startsWith(w)) {
        hit = true;
        break;
      }
    }
    if (!hit) return false;
  }
  return true;
}

const NO_WARNINGS: readonly string[] = [];

/** A value set's deprecated/withdrawn standards-status (none for most: no extension, no allocation). */
function valueSetWarnings(vs: ValueSetResource): readonly string[] {
  if (vs.extension === undefined) return NO_WARNINGS;
  const w = statusWarnings({ extension: vs.extension });
  return w ? w.filter((x) => x === 'deprecated' || x === 'withdrawn') : NO_WARNINGS;
}

/** Adds a `warning-<reason>` parameter for a canonical once. */
function pushWarning(
  parameter: ExpansionParameter[],
  reason: string,
  url: string,
  version: string | undefined,
): void {
  const valueUri = version ? `${url}|${version}` : url;
  const name = `warning-${reason}`;
  if (!parameter.some((p) => p.name === name && p.valueUri === valueUri)) parameter.push({ name, valueUri });
}

const NO_STRINGS: readonly string[] = [];
/** Shared by expansions without extensions; never written to. */
const NO_EXTENSIONS = [] as Extension[];

/** The canonical of a value set (url|version) for messages. */
function canonicalOf(vs: ValueSetResource): string {
  return vs.version ? `${vs.url ?? ''}|${vs.version}` : (vs.url ?? '');
}

/** The supplements a value set asks for (valueset-supplement extensions). */
function valueSetSupplements(vs: ValueSetResource): readonly string[] {
  if (!vs.extension) return NO_STRINGS;
  const out: string[] = [];
  for (const e of vs.extension) {
    if (e.url !== EXT.vsSupplement) continue;
    const v = e.valueCanonical ?? e.valueUri ?? e.valueString;
    if (typeof v === 'string' && v !== '') out.push(v);
  }
  return out;
}

/**
 * The request with the parameters the value set declares on its compose (valueset-expansion-parameter
 * extensions; R5's compose.property, as R4 carries it): a value the request gives wins, a repeatable parameter
 * adds. Names this server does not know are ignored (the value set is not the client's request); a bad value for
 * one it knows is a 400.
 */
function withComposeParameters(req: ExpandRequest, vs: ValueSetResource): ExpandRequest {
  const ext = vs.compose?.extension;
  if (!ext || ext.length === 0) return req;
  let out: Record<string, unknown> | undefined;
  const set = (name: string, raw: unknown): void => {
    const p = PARAMETER_BY_NAME.get(name);
    if (!p || p.target) return;
    let v: unknown = raw;
    if (p.type === 'boolean' && typeof raw === 'string')
      v = raw === 'true' ? true : raw === 'false' ? false : raw;
    if (p.type === 'integer' && typeof raw === 'string' && /^\d{1,9}$/.test(raw)) v = Number(raw);
    const ok =
      p.type === 'boolean'
        ? typeof v === 'boolean'
        : p.type === 'integer'
          ? Number.isInteger(v)
          : typeof v === 'string' && v.length <= (p.maxLength ?? MAX_STRING);
    if (!ok) {
      throw invalid(
        `The value set's expansion parameter ${name} has an invalid value (${String(raw).slice(0, 60)})`,
        ['ValueSet.compose.extension'],
      );
    }
    out ??= { ...req };
    if (p.repeats) {
      const list = (out[p.key] as unknown[] | undefined) ?? [];
      if (list.length >= MAX_REPEATS) {
        throw invalid(`The value set gives expansion parameter ${name} more than ${MAX_REPEATS} times`, [
          'ValueSet.compose.extension',
        ]);
      }
      if (!list.includes(v)) out[p.key] = [...list, v];
    } else if (out[p.key] === undefined) {
      out[p.key] = v;
    }
  };
  for (const e of ext) {
    if (e.url === EXT.vsExpansionParameter) {
      const parts = e.extension ?? [];
      const name = parts.find((x) => x.url === 'name');
      const value = parts.find((x) => x.url === 'value');
      const n = name?.valueCode ?? name?.valueString;
      if (typeof n !== 'string' || !value) continue;
      const vk = Object.keys(value).find((k) => k.startsWith('value'));
      if (vk) set(n, value[vk]);
    } else if (e.url === EXT.composeProperty) {
      const v = e.valueString ?? e.valueCode;
      if (typeof v === 'string') set('property', v);
    }
  }
  return (out as ExpandRequest | undefined) ?? req;
}

/** The parameters an expansion echoes: those given (and those the value set declared), then what was used. */
function echoedParameters(req: ExpandRequest, m: Membership): ExpansionParameter[] {
  const parameter: ExpansionParameter[] = [];
  if (req.filter !== undefined) parameter.push({ name: 'filter', valueString: req.filter });
  if (req.offset !== undefined) parameter.push({ name: 'offset', valueInteger: req.offset });
  if (req.count !== undefined) parameter.push({ name: 'count', valueInteger: req.count });
  if (req.activeOnly !== undefined) parameter.push({ name: 'activeOnly', valueBoolean: req.activeOnly });
  if (req.includeDesignations !== undefined) {
    parameter.push({ name: 'includeDesignations', valueBoolean: req.includeDesignations });
  }
  if (req.includeDefinition !== undefined) {
    parameter.push({ name: 'includeDefinition', valueBoolean: req.includeDefinition });
  }
  for (const d of req.designation ?? []) parameter.push({ name: 'designation', valueString: d });
  if (req.displayLanguage !== undefined) {
    parameter.push({ name: 'displayLanguage', valueCode: echoLanguageList(req.displayLanguage) });
  }
  if (req.excludeNested !== undefined)
    parameter.push({ name: 'excludeNested', valueBoolean: req.excludeNested });
  if (req.excludeNotForUI !== undefined) {
    parameter.push({ name: 'excludeNotForUI', valueBoolean: req.excludeNotForUI });
  }
  if (req.versionsMatch === true || (req.versionsMatch === undefined && m.versionsMatched)) {
    parameter.push({ name: 'versionsMatch', valueBoolean: true });
  }
  // valueSetVersion is not echoed (the value set's own version says it); the version parameters are echoed when
  // they chose a version (as the IG's expansions show).
  for (const p of m.versionParams) {
    const bar = p.indexOf('|');
    parameter.push({ name: p.slice(0, bar), valueUri: p.slice(bar + 1) });
  }
  for (const u of m.usedCodeSystems()) parameter.push({ name: 'used-codesystem', valueUri: u });
  for (const u of m.usedValueSets) parameter.push({ name: 'used-valueset', valueUri: u });
  for (const f of m.fragments) parameter.push({ name: 'used-fragment', valueUri: f });
  return parameter;
}

/** The entries of a page: positions[offset..end), or the positions offset..end themselves when unfiltered. */
interface PageRange {
  positions: Int32Array | undefined;
  offset: number;
  end: number;
}

/** The details (definitions, extensions) of the page's concepts whose code systems do not hold them in memory
 * (stored ones), and of their supplements' concepts, from the resolver: when the request asks for properties, or
 * the code system has concept extensions. */
function detailsWanted(
  m: Membership,
  page: PageRange,
  resolver: Resolver,
  s: OutputSettings,
): Map<CodeSystemIndex, number[]> | undefined {
  const anyProperty = s.properties.length > 0;
  // Usually nothing to load: no property asked for, no supplement, no source with concept extensions.
  if (!anyProperty && s.supplements.size === 0) {
    let ext = false;
    for (const src of m.sources)
      if (!inMemoryDetails(src) && resolver.hasConceptExtensions?.(src)) ext = true;
    if (!ext) return undefined;
  }
  const wanted = new Map<CodeSystemIndex, number[]>();
  const want = (index: CodeSystemIndex, ord: number, always: boolean): void => {
    if (inMemoryDetails(index) || !(always || resolver.hasConceptExtensions?.(index))) return;
    const list = wanted.get(index) ?? [];
    list.push(ord);
    wanted.set(index, list);
  };
  for (let i = page.offset; i < page.end; i++) {
    const pos = page.positions ? page.positions[i] : i;
    const src = m.sources[m.entSrc[pos]];
    want(src, m.entOrd[pos], anyProperty);
    if (s.supplements.size === 0) continue;
    for (const sup of s.supplements.of(src.url)) {
      const o = sup.ordinalOf(src.code(m.entOrd[pos]));
      if (o >= 0) want(sup, o, false);
    }
  }
  return wanted.size > 0 ? wanted : undefined;
}

async function loadDetails(
  wanted: Map<CodeSystemIndex, number[]>,
  load: NonNullable<Resolver['conceptDetails']>,
): Promise<Map<CodeSystemIndex, Map<number, ConceptDetails>>> {
  const out = new Map<CodeSystemIndex, Map<number, ConceptDetails>>();
  for (const [src, ords] of wanted) out.set(src, await load(src, ords));
  return out;
}

/** The process-wide engine. */
export const defaultEngine = new ExpansionEngine();

/** Expands a value set with the process-wide engine (see ExpansionEngine.expand). */
export function expandValueSet(
  vs: ValueSetResource,
  req: ExpandRequest,
  resolver: Resolver,
  limits: ExpandLimits,
): Promise<ValueSetResourceWithExpansion> {
  return defaultEngine.expand(vs, req, resolver, limits);
}
