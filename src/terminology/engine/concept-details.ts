// What an expansion may show of a concept beyond code, display, designations and properties (those are in the
// code system index): its definition and its extensions. Code systems held in memory (request resources, tests)
// keep them here, by index; for stored code systems the resolver loads definitions when a request asks for them.
import type { CodeSystemIndex } from './code-system-index.js';
import type { ConceptDetails, Extension } from './types.js';

export type { ConceptDetails };

const byIndex = new WeakMap<CodeSystemIndex, Map<number, ConceptDetails>>();

/** Keeps the details of an index's concepts (ordinal -> details; concepts without any are left out). */
export function attachConceptDetails(index: CodeSystemIndex, details: Map<number, ConceptDetails>): void {
  if (details.size > 0) byIndex.set(index, details);
}

/** The details held in memory for an index, if any. */
export function inMemoryDetails(index: CodeSystemIndex): Map<number, ConceptDetails> | undefined {
  return byIndex.get(index);
}

/** Extensions the terminology ecosystem IG gives a meaning in expansions. */
export const EXT = {
  label: 'http://hl7.org/fhir/StructureDefinition/codesystem-label',
  conceptOrder: 'http://hl7.org/fhir/StructureDefinition/codesystem-conceptOrder',
  itemWeight: 'http://hl7.org/fhir/StructureDefinition/itemWeight',
  standardsStatus: 'http://hl7.org/fhir/StructureDefinition/structuredefinition-standards-status',
  vsLabel: 'http://hl7.org/fhir/StructureDefinition/valueset-label',
  vsConceptOrder: 'http://hl7.org/fhir/StructureDefinition/valueset-conceptOrder',
  vsDeprecated: 'http://hl7.org/fhir/StructureDefinition/valueset-deprecated',
  vsConceptDefinition: 'http://hl7.org/fhir/StructureDefinition/valueset-concept-definition',
  vsSupplement: 'http://hl7.org/fhir/StructureDefinition/valueset-supplement',
  vsExpansionParameter: 'http://hl7.org/fhir/StructureDefinition/valueset-expansion-parameter',
  sctDescId: 'http://hl7.org/fhir/StructureDefinition/coding-sctdescid',
  renderingStyle: 'http://hl7.org/fhir/StructureDefinition/rendering-style',
  renderingXhtml: 'http://hl7.org/fhir/StructureDefinition/rendering-xhtml',
  alternate: 'http://hl7.org/fhir/StructureDefinition/codesystem-alternate',
  unclosed: 'http://hl7.org/fhir/StructureDefinition/valueset-unclosed',
  unclosedReason: 'http://hl7.org/fhir/StructureDefinition/valueset-unclosed-reason',
  /** R5's ValueSet.expansion.property and .contains.property, as R4 carries them. */
  expansionProperty: 'http://hl7.org/fhir/5.0/StructureDefinition/extension-ValueSet.expansion.property',
  containsProperty:
    'http://hl7.org/fhir/5.0/StructureDefinition/extension-ValueSet.expansion.contains.property',
  /** R5's filter operators (child-of, descendent-leaf) and compose.property, as R4 carries them. */
  filterOp: 'http://hl7.org/fhir/5.0/StructureDefinition/extension-ValueSet.compose.include.filter.op',
  composeProperty: 'http://hl7.org/fhir/5.0/StructureDefinition/extension-ValueSet.compose.property',
} as const;

/** Code system concept extensions an expansion entry carries over as they are. */
export const ECHOED_CS_EXTENSIONS: ReadonlySet<string> = new Set([
  EXT.sctDescId,
  EXT.renderingStyle,
  EXT.renderingXhtml,
  EXT.alternate,
]);

/** Value set concept extensions an expansion entry carries over as they are. */
export const ECHOED_VS_EXTENSIONS: ReadonlySet<string> = new Set([
  EXT.vsSupplement,
  EXT.vsDeprecated,
  EXT.standardsStatus,
  EXT.vsConceptDefinition,
  EXT.sctDescId,
  EXT.renderingStyle,
  EXT.renderingXhtml,
]);

/** Designation extensions kept on the designations of an expansion. */
export const ECHOED_DESIGNATION_EXTENSIONS: ReadonlySet<string> = new Set([
  EXT.sctDescId,
  EXT.renderingStyle,
  EXT.renderingXhtml,
  EXT.standardsStatus,
  EXT.alternate,
]);

/** The first value of an extension in a list (any value[x]). */
export function extensionValue(list: readonly Extension[] | undefined, url: string): unknown {
  const e = list?.find((x) => x.url === url);
  if (!e) return undefined;
  for (const k of Object.keys(e)) if (k.startsWith('value')) return e[k];
  return undefined;
}
