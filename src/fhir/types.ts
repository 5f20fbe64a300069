// FHIR resource shapes shared by the features, and the store each resource type implements.
import type { Caller } from '../core/caller.js';

export interface FhirResource {
  resourceType: string;
  id?: string;
  meta?: { versionId?: string; lastUpdated?: string; [k: string]: unknown };
  [key: string]: unknown;
}

export interface Bundle extends FhirResource {
  resourceType: 'Bundle';
  type: 'searchset';
  total: number;
  entry: Array<{ fullUrl?: string; resource: FhirResource; search?: { mode: 'match' } }>;
}

/** `_summary` values (FHIR R4). `count` is for searches only. */
export type SummaryMode = 'true' | 'text' | 'data' | 'count' | 'false';

/** What a client asked to get of each resource (`_summary`, `_elements`; see src/fhir/subsetting.ts). */
export interface Subsetting {
  summary?: SummaryMode;
  /** Top-level element names (`_elements`). */
  elements?: string[];
}

/** How a resource may be handed back: `stream` when the caller (REST) writes the response piece by piece, so a
 * store may return big parts lazily (src/fhir/lazy-json.ts) instead of whole. */
export interface ReturnOptions {
  stream?: boolean;
}

/** Search parameters every store understands (others are refused with 400). */
export interface SearchParams extends ReturnOptions {
  url?: string;
  version?: string;
  /** `system|value`, `|value`, `system|` or `value`. */
  identifier?: string;
  name?: string;
  count: number;
  offset: number;
  /** `_summary` / `_elements`: stores may leave out what will not be returned (the caller subsets the rest). */
  subsetting?: Subsetting;
}

/** Create/read/update/delete/search of one resource type, scoped to the caller's project. */
export interface ResourceStore {
  create(caller: Caller, resource: FhirResource, ret?: ReturnOptions): Promise<FhirResource>;
  /** `subsetting`: the elements the caller will return; a store may leave out the others. */
  read(caller: Caller, id: string, subsetting?: Subsetting, ret?: ReturnOptions): Promise<FhirResource>;
  update(caller: Caller, id: string, resource: FhirResource, ret?: ReturnOptions): Promise<FhirResource>;
  delete(caller: Caller, id: string): Promise<void>;
  search(caller: Caller, params: SearchParams): Promise<{ resources: FhirResource[]; total: number }>;
  /** The store's size limits a body can be judged on from array lengths alone (work bounded by the limits, not
   * by the body), checked before anything walks it: an oversized body is refused at once. */
  checkBounds?(resource: FhirResource): void;
}

/** Splits an identifier search value into system and value (FHIR token syntax). */
export function parseIdentifierToken(token: string): { system?: string; value?: string } {
  const bar = token.indexOf('|');
  if (bar < 0) return { value: token };
  const system = token.slice(0, bar);
  const value = token.slice(bar + 1);
  return { system, value: value || undefined };
}
