// Which resource types are served, and by which store. Features register their stores at start.
import { ApiError, badRequest } from '../core/errors.js';
import type { FhirResource, ResourceStore } from './types.js';
import { LargeRequests } from './large-requests.js';
import { checkResourceStrings, type ResourceBudget } from './resource-strings.js';
import { checkAgainstDefinition } from './definition-check.js';

/** Resource stores by resource type, and the budget of large requests they share. */
export class ResourceRegistry {
  private stores = new Map<string, ResourceStore>();
  /** Large requests in progress (docs/operations.md, Large requests). */
  readonly large: LargeRequests;

  constructor(large: LargeRequests = new LargeRequests({ perProject: 2, max: 4 })) {
    this.large = large;
  }

  register(resourceType: string, store: ResourceStore): void {
    this.stores.set(resourceType, store);
  }

  /** The store for a type; 404 OperationOutcome for a type this server does not serve. */
  get(resourceType: string): ResourceStore {
    const store = this.stores.get(resourceType);
    if (!store)
      throw new ApiError(
        404,
        'not-supported',
        `Resource type ${resourceType} is not supported by this server`,
      );
    return store;
  }

  types(): string[] {
    return [...this.stores.keys()].sort();
  }
}

const ID_RE = /^[A-Za-z0-9\-.]{1,64}$/;

/** Checks a request body is a FHIR resource of the expected type (and id, for updates) within its store's bounds,
 * whose strings can be stored, and that matches FHIR R4's definition of its type. */
export async function validateResourceBody(
  body: unknown,
  resourceType: string,
  id?: string,
  budget?: ResourceBudget,
  store?: Pick<ResourceStore, 'checkBounds'>,
): Promise<FhirResource> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw badRequest('Request body must be a FHIR resource (a JSON object)');
  }
  const r = body as FhirResource;
  if (typeof r.resourceType !== 'string') throw badRequest('Resource has no resourceType', ['resourceType']);
  if (r.resourceType !== resourceType) {
    throw badRequest(`Expected a ${resourceType} resource but got ${r.resourceType}`, ['resourceType']);
  }
  if (id !== undefined) {
    if (r.id !== undefined && r.id !== id)
      throw badRequest(`Resource id ${String(r.id)} does not match the URL id ${id}`, ['id']);
  }
  // The cheap bounds first: the walks below cost what the body holds.
  store?.checkBounds?.(r);
  await checkResourceStrings(r, resourceType, budget);
  await checkAgainstDefinition(r, resourceType);
  return r;
}

/** True for a syntactically valid FHIR id. */
export function isFhirId(id: string): boolean {
  return ID_RE.test(id);
}
