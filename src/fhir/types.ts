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

/** Search parameters every store understands (others are refused with 400). */
export interface SearchParams {
  url?: string;
  version?: string;
  /** `system|value`, `|value`, `system|` or `value`. */
  identifier?: string;
  name?: string;
  count: number;
  offset: number;
}

/** Create/read/update/delete/search of one resource type, scoped to the caller's project. */
export interface ResourceStore {
  create(caller: Caller, resource: FhirResource): Promise<FhirResource>;
  read(caller: Caller, id: string): Promise<FhirResource>;
  update(caller: Caller, id: string, resource: FhirResource): Promise<FhirResource>;
  delete(caller: Caller, id: string): Promise<void>;
  search(caller: Caller, params: SearchParams): Promise<{ resources: FhirResource[]; total: number }>;
}

/** Splits an identifier search value into system and value (FHIR token syntax). */
export function parseIdentifierToken(token: string): { system?: string; value?: string } {
  const bar = token.indexOf('|');
  if (bar < 0) return { value: token };
  const system = token.slice(0, bar);
  const value = token.slice(bar + 1);
  return { system, value: value || undefined };
}
