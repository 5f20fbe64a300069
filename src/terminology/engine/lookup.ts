// CodeSystem/$lookup on a code system index: one concept's name, version, display (in the requested language),
// abstract flag, definition, designations and properties, as a FHIR Parameters resource (FHIR R4 and the HL7
// terminology ecosystem IG). Everything comes from the concept's ordinal (its hash lookup), its own parents and
// children, and the per-concept maps of the index: the cost does not grow with the size of the code system.
import type { CodeSystemIndex } from './code-system-index.js';
import { FLAG_ABSTRACT, FLAG_INACTIVE } from './code-system-index.js';
import { inMemoryDetails } from './concept-details.js';
import { displayOf, DISPLAY_USE } from './entries.js';
import { TerminologyError, withTxIssueType } from './errors.js';
import { parseLanguageList } from './languages.js';
import type { Resolver } from './resolver.js';
import type { SupplementSet } from './supplements.js';
import type { Coding, ConceptProperty, Designation } from './types.js';

/** One `Parameters.parameter` (or part). */
export interface ParametersParameter {
  name: string;
  part?: ParametersParameter[];
  [value: string]: unknown;
}

/** A FHIR Parameters resource, as the operations answer. */
export interface ParametersResource {
  resourceType: 'Parameters';
  parameter: ParametersParameter[];
}

/** How a lookup answers. */
export interface LookupSettings {
  /** `property` values (none: designations, definition and inactive). */
  properties?: readonly string[];
  displayLanguage?: string;
  /** Supplements asked for (already resolved; the lookup marks those it used). */
  supplements: SupplementSet;
}

/** The most `child` properties one lookup lists, in document order (a concept may have a million children; the
 * answer stays small, and those past the limit are left out). */
export const LOOKUP_MAX_CHILDREN = 1000;

const CONCEPT_PROPERTY = 'http://hl7.org/fhir/concept-properties#';
/** Properties whose value the index holds in its own form (hierarchy, flags): a concept's own property of this
 * meaning is shown from there, once. */
const DERIVED: ReadonlySet<string> = new Set(['parent', 'child', 'inactive']);
const DEFAULT_PROPERTIES: ReadonlySet<string> = new Set(['designation', 'definition', 'inactive']);

/** The 404 for a code a code system does not have (the message the IG's servers give). */
export function unknownCode(index: CodeSystemIndex, code: string, param: string): TerminologyError {
  const version = index.version !== undefined ? ` version ${index.version}` : '';
  return new TerminologyError(404, 'not-found', `Unable to find code '${code}' in ${index.url}${version}`, [
    param,
  ]);
}

/** The 404 for a code system the caller cannot see. */
export function unknownCodeSystem(url: string, version: string | undefined, param: string): TerminologyError {
  const v = version !== undefined ? ` version '${version}'` : '';
  return withTxIssueType(
    'not-found',
    new TerminologyError(404, 'not-found', `A definition for CodeSystem '${url}'${v} could not be found`, [
      param,
    ]),
  );
}

/** The concept's ordinal, or a 404 naming the code (case-insensitive when the code system says so). */
export function conceptOrdinal(index: CodeSystemIndex, code: string, param: string): number {
  const ord = index.lookupCode(code);
  if (ord < 0) throw unknownCode(index, code, param);
  return ord;
}

/** The $lookup answer for one concept of an index. */
export async function lookupConcept(
  index: CodeSystemIndex,
  ord: number,
  settings: LookupSettings,
  resolver: Resolver,
): Promise<ParametersResource> {
  const wanted =
    settings.properties && settings.properties.length > 0 ? new Set(settings.properties) : undefined;
  const all = wanted?.has('*') === true;
  const wants = (code: string, uri?: string): boolean =>
    all ||
    (wanted ? wanted.has(code) || (uri !== undefined && wanted.has(uri)) : DEFAULT_PROPERTIES.has(code));
  const code = index.code(ord);
  const sups = settings.supplements.size > 0 ? settings.supplements.of(index.url) : [];
  settings.supplements.settle([index.url]);
  const langs = settings.displayLanguage
    ? parseLanguageList(settings.displayLanguage, 'displayLanguage')
    : undefined;

  const out: ParametersParameter[] = [];
  out.push({ name: 'name', valueString: index.meta.name ?? index.url });
  if (index.version !== undefined) out.push({ name: 'version', valueString: index.version });
  const display =
    langs || sups.length > 0
      ? displayOf(index, ord, undefined, {
          langs,
          includeDesignations: false,
          properties: [],
          supplements: settings.supplements,
        })
      : index.display(ord);
  out.push({ name: 'display', valueString: display ?? code });
  out.push({ name: 'system', valueUri: index.url });
  out.push({ name: 'code', valueCode: code });
  const flags = index.flags[ord];
  out.push({ name: 'abstract', valueBoolean: (flags & FLAG_ABSTRACT) !== 0 });

  if (wants('definition')) {
    const held = inMemoryDetails(index);
    const details = held ? held.get(ord) : (await resolver.conceptDetails?.(index, [ord]))?.get(ord);
    if (details?.definition !== undefined) out.push({ name: 'definition', valueString: details.definition });
  }

  if (wants('designation')) {
    const own = index.display(ord);
    if (own && index.meta.language)
      out.push(designation({ language: index.meta.language, use: DISPLAY_USE, value: own }));
    for (const d of index.designationsOf(ord)) out.push(designation(d));
    for (const sup of sups) {
      const o = sup.ordinalOf(code);
      if (o < 0) continue;
      const source = sup.version !== undefined ? `${sup.url}|${sup.version}` : sup.url;
      const supDisplay = sup.display(o);
      if (supDisplay)
        out.push(designation({ language: sup.meta.language, use: DISPLAY_USE, value: supDisplay }, source));
      for (const d of sup.designationsOf(o)) out.push(designation(d, source));
    }
  }

  if (wants('parent', `${CONCEPT_PROPERTY}parent`)) {
    for (const p of index.parentsOf(ord)) out.push(codeProperty(index, 'parent', p));
  }
  if (wants('child', `${CONCEPT_PROPERTY}child`)) {
    const children = index.childrenOf(ord);
    const n = Math.min(children.length, LOOKUP_MAX_CHILDREN);
    for (let i = 0; i < n; i++) out.push(codeProperty(index, 'child', children[i]));
  }
  if (wants('inactive', `${CONCEPT_PROPERTY}inactive`)) {
    out.push(property('inactive', { valueBoolean: (flags & FLAG_INACTIVE) !== 0 }));
  }
  // The concept's own properties, and those its supplements give it, by code or uri (or `*`).
  const lists: Array<{ index: CodeSystemIndex; props: readonly ConceptProperty[] }> = [
    { index, props: index.propertiesOf(ord) },
  ];
  for (const sup of sups) {
    const o = sup.ordinalOf(code);
    const props = o >= 0 ? sup.propertiesOf(o) : [];
    if (props.length > 0) lists.push({ index: sup, props });
  }
  const seen = new Set<string>();
  for (const { index: from, props } of lists) {
    for (const p of props) {
      const uri = from.meta.properties?.find((d) => d.code === p.code)?.uri;
      const meaning = uri?.startsWith(CONCEPT_PROPERTY) ? uri.slice(CONCEPT_PROPERTY.length) : p.code;
      if (DERIVED.has(meaning) || !wanted || !wants(p.code, uri)) continue;
      const part = property(p.code, valueOf(p));
      const key = JSON.stringify(part);
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(part);
    }
  }

  for (const used of settings.supplements.used) out.push({ name: 'used-supplement', valueCanonical: used });
  return { resourceType: 'Parameters', parameter: out };
}

function designation(d: Designation, source?: string): ParametersParameter {
  const part: ParametersParameter[] = [];
  if (d.language) part.push({ name: 'language', valueCode: d.language });
  if (d.use) part.push({ name: 'use', valueCoding: d.use satisfies Coding });
  part.push({ name: 'value', valueString: d.value });
  if (source) part.push({ name: 'source', valueCanonical: source });
  return { name: 'designation', part };
}

function property(code: string, value: Record<string, unknown>, description?: string): ParametersParameter {
  const part: ParametersParameter[] = [
    { name: 'code', valueCode: code },
    { name: 'value', ...value },
  ];
  if (description !== undefined) part.push({ name: 'description', valueString: description });
  return { name: 'property', part };
}

function codeProperty(index: CodeSystemIndex, code: string, ord: number): ParametersParameter {
  return property(code, { valueCode: index.code(ord) }, index.display(ord));
}

/** A concept property's value[x], as it is. */
function valueOf(p: ConceptProperty): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(p))
    if (k.startsWith('value')) out[k] = (p as unknown as Record<string, unknown>)[k];
  return out;
}
