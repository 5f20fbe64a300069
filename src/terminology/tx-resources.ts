// `tx-resource` (HL7 terminology ecosystem IG): CodeSystems and ValueSets given with one $expand request, used for
// that request only, before the project's own and the shared ones. Other resource types are ignored (a ConceptMap
// plays no part in an expansion).
import crypto from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { ApiError, badRequest } from '../core/errors.js';
import {
  type CodeSystemIndex,
  indexCodeSystemResource,
  type CodeSystemResource,
  type ValueSetResource,
  type Resolver,
} from './engine/index.js';
import { checkValueSetEntries, countNested, DEFAULT_VALUESET_MAX_ENTRIES } from './repository.js';

/** The most tx-resource entries one request may carry. */
export const MAX_TX_RESOURCES = 100;

/** The most concepts all of a request's tx-resource CodeSystems may hold, unless configured. */
export const DEFAULT_TX_RESOURCE_MAX_CONCEPTS = 20_000;

type Canonical = { url?: string; version?: string };

/** Indexes of tx-resource CodeSystems by the request's own object: built once for every use of that object (the
 * checks of one $batch-validate-code share their parameters), gone with the request. */
const TX_INDEXES = new WeakMap<CodeSystemResource, CodeSystemIndex>();

/** Memory the indexes of recent tx-resource CodeSystems may keep between requests. */
const BY_CONTENT_BYTES = 32 * 1024 * 1024;

/**
 * Indexes of tx-resource CodeSystems by project and content (SHA-256 of the resource's JSON): a validator sends the
 * same CodeSystem with every request. Building its index once, and handing out the same index object, also lets
 * the membership and filter caches recognise it (their keys follow the index's identity), so a repeated inline
 * request costs a hash of its CodeSystem instead of an index build and a compose evaluation. Per project: one
 * project never learns from timing what another sent.
 */
const BY_CONTENT = new LRUCache<string, CodeSystemIndex>({
  maxSize: BY_CONTENT_BYTES,
  sizeCalculation: (index) => Math.max(1, index.memoryEstimateBytes()),
});

/** The index of a tx-resource CodeSystem (cached by project and content). */
function indexOf(cs: CodeSystemResource, scope: string | undefined): CodeSystemIndex {
  const key = `${scope ?? ''}\u0000${crypto.createHash('sha256').update(JSON.stringify(cs)).digest('base64')}`;
  let index = BY_CONTENT.get(key);
  if (!index) {
    index = indexCodeSystemResource(cs);
    BY_CONTENT.set(key, index);
  }
  return index;
}

/** Newest first: a version compared part by part, numerically where both parts are numbers. */
function compareVersions(a: string | undefined, b: string | undefined): number {
  return (b ?? '').localeCompare(a ?? '', 'en', { numeric: true });
}

function pick<T extends Canonical>(list: T[], url: string, version?: string): T | undefined {
  const found = list.filter((r) => r.url === url && (version === undefined || r.version === version));
  // Without a version the highest one wins, as for stored resources.
  return found.sort((x, y) => compareVersions(x.version, y.version))[0];
}

/** Checks the request's tx-resource entries and returns a resolver that looks there first, then in `base`. */
export function txResourceResolver(
  base: Resolver,
  resources: unknown[],
  limits: { maxConcepts?: number; valueSetMaxEntries?: number } = {},
): Resolver {
  const maxConcepts = limits.maxConcepts ?? DEFAULT_TX_RESOURCE_MAX_CONCEPTS;
  if (resources.length > MAX_TX_RESOURCES)
    throw badRequest(`At most ${MAX_TX_RESOURCES} tx-resource parameters are accepted`, ['tx-resource']);
  let concepts = 0;
  const codeSystems: CodeSystemResource[] = [];
  const valueSets: ValueSetResource[] = [];
  // Each entry is an object (the service checked the request's values before this).
  resources.forEach((r, i) => {
    const res = r as { resourceType?: unknown; url?: unknown; version?: unknown };
    if (res.url !== undefined && typeof res.url !== 'string')
      throw badRequest(`tx-resource[${i}].url must be a string`, ['tx-resource']);
    if (res.version !== undefined && typeof res.version !== 'string')
      throw badRequest(`tx-resource[${i}].version must be a string`, ['tx-resource']);
    if (res.resourceType === 'CodeSystem' && res.url) {
      // Indexed in memory on this request's time (about 3 us a concept, on the event loop): a big code system is
      // stored once (POST CodeSystem) and indexed in the background, not sent with every request.
      concepts += countNested((r as { concept?: unknown }).concept, 'concept', maxConcepts - concepts);
      if (concepts > maxConcepts)
        throw new ApiError(
          422,
          'too-costly',
          `The tx-resource CodeSystems hold more than ${maxConcepts} concepts (TX_RESOURCE_MAX_CONCEPTS); ` +
            'store a large code system (POST CodeSystem) and expand against it',
          { expression: ['tx-resource'] },
        );
      codeSystems.push(r as CodeSystemResource);
    } else if (res.resourceType === 'ValueSet' && res.url) {
      checkValueSetEntries(
        r as Record<string, unknown>,
        limits.valueSetMaxEntries ?? DEFAULT_VALUESET_MAX_ENTRIES,
        `tx-resource[${i}]`,
      );
      valueSets.push(r as ValueSetResource);
    }
  });
  const indexes = TX_INDEXES;
  return {
    // The project's: memberships drawn from this request's resources are cached for the project only.
    scope: base.scope,
    async codeSystem(url, version) {
      const cs = pick(codeSystems, url, version);
      if (!cs) return base.codeSystem(url, version);
      let index = indexes.get(cs);
      if (!index) {
        try {
          index = indexOf(cs, base.scope);
        } catch (err) {
          throw badRequest(`tx-resource CodeSystem ${url}: ${(err as Error).message}`, ['tx-resource']);
        }
        indexes.set(cs, index);
      }
      return index;
    },
    async codeSystemVersions(url) {
      const own = codeSystems.filter((c) => c.url === url && c.version).map((c) => c.version!);
      const stored = (await base.codeSystemVersions?.(url)) ?? [];
      return [...new Set([...own, ...stored])];
    },
    async valueSet(url, version) {
      return pick(valueSets, url, version) ?? base.valueSet(url, version);
    },
    // Request code systems keep their details in memory; stored ones are asked for.
    conceptDetails: base.conceptDetails?.bind(base),
    // No generation: nothing of this request may be taken for current in a later one.
  };
}
