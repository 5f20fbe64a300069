// FHIR R4 shapes the expansion engine reads and writes (only the elements it uses; others pass through).
import type { ExpandOptions } from './parameters.js';
import type { RegexLimits } from './safe-regex.js';

export interface Coding {
  system?: string;
  version?: string;
  code?: string;
  display?: string;
}

/** A FHIR extension (its value[x] and nested extensions pass through as they are). */
export interface Extension {
  url: string;
  extension?: Extension[];
  [value: string]: unknown;
}

/** What an expansion may show of a concept beyond its index: its definition and extensions (`concept-details.ts`). */
export interface ConceptDetails {
  definition?: string;
  extension?: Extension[];
}

export interface Designation {
  language?: string;
  use?: Coding;
  value: string;
  extension?: Extension[];
}

export interface ConceptProperty {
  code: string;
  valueCode?: string;
  valueString?: string;
  valueBoolean?: boolean;
  valueInteger?: number;
  valueDecimal?: number;
  valueDateTime?: string;
  valueCoding?: Coding;
  /** SNOMED CT relationship group of an attribute property (0 or absent: ungrouped). Internal: ECL refinements
   * read it; it is not a FHIR element and never appears in an answer. */
  group?: number;
}

/** One concept row, as stored in the `Concept` table (parents = codes from nesting and the `parent` property). */
export interface ConceptInput {
  code: string;
  display?: string | null;
  definition?: string | null;
  parents?: string[];
  notSelectable?: boolean;
  inactive?: boolean;
  status?: string | null;
  designations?: Designation[] | null;
  properties?: ConceptProperty[] | null;
  /** The concept has a definition, when `definition` itself is left out (the server's index loads: the text stays
   * in the database, the index only knows whether to look there). */
  hasDefinition?: boolean;
  /** The concept's extensions (kept with it; not indexed). */
  extensions?: Extension[] | null;
}

/** The code-system-level facts an index needs. */
export interface CodeSystemMeta {
  url: string;
  version?: string;
  /** The code system a supplement (content `supplement`) adds to (canonical, maybe with |version). */
  supplements?: string;
  id?: string;
  versionId?: string | number;
  name?: string;
  content?: string;
  hierarchyMeaning?: string;
  caseSensitive?: boolean;
  language?: string;
  /** Why an expansion using it carries a `warning-*` parameter: `draft`, `experimental`, or the standards-status
   * extension's `deprecated`/`withdrawn`. */
  warnings?: string[];
  /** CodeSystem.property declarations (codes usable in filters). */
  properties?: Array<{ code: string; type?: string; uri?: string }>;
}

export interface CodeSystemConcept {
  code: string;
  display?: string;
  definition?: string;
  extension?: Extension[];
  designation?: Designation[];
  property?: ConceptProperty[];
  concept?: CodeSystemConcept[];
}

export interface CodeSystemResource {
  resourceType: 'CodeSystem';
  id?: string;
  meta?: { versionId?: string; lastUpdated?: string };
  url?: string;
  version?: string;
  name?: string;
  status?: string;
  content?: string;
  caseSensitive?: boolean;
  hierarchyMeaning?: string;
  language?: string;
  property?: Array<{ code: string; type?: string; uri?: string; description?: string }>;
  concept?: CodeSystemConcept[];
  [key: string]: unknown;
}

export interface ValueSetFilter {
  property?: string;
  op?: string;
  /** R4 carries R5's operators (child-of, descendent-leaf) as an extension of `op`. */
  _op?: { extension?: Extension[] };
  value?: string;
}

export interface ValueSetConceptReference {
  code: string;
  display?: string;
  designation?: Designation[];
  extension?: Extension[];
}

export interface ValueSetInclude {
  system?: string;
  version?: string;
  concept?: ValueSetConceptReference[];
  filter?: ValueSetFilter[];
  valueSet?: string[];
}

export interface ValueSetCompose {
  lockedDate?: string;
  inactive?: boolean;
  extension?: Extension[];
  include?: ValueSetInclude[];
  exclude?: ValueSetInclude[];
}

export interface ValueSetContains {
  /** Echoed concept extensions, and (R4) the concept's properties as cross-version extensions. */
  extension?: Extension[];
  system?: string;
  version?: string;
  code?: string;
  display?: string;
  abstract?: boolean;
  inactive?: boolean;
  designation?: Designation[];
  contains?: ValueSetContains[];
}

export interface ExpansionParameter {
  name: string;
  valueString?: string;
  valueBoolean?: boolean;
  valueInteger?: number;
  valueCode?: string;
  valueUri?: string;
}

export interface ValueSetExpansion {
  /** valueset-unclosed, and (R4) the property declarations as cross-version extensions. */
  extension?: Extension[];
  identifier?: string;
  timestamp: string;
  total?: number;
  offset?: number;
  parameter?: ExpansionParameter[];
  contains?: ValueSetContains[];
}

export interface ValueSetResource {
  resourceType: 'ValueSet';
  id?: string;
  meta?: { versionId?: string; lastUpdated?: string };
  url?: string;
  version?: string;
  name?: string;
  title?: string;
  status?: string;
  compose?: ValueSetCompose;
  expansion?: ValueSetExpansion;
  contained?: unknown[];
  extension?: Extension[];
  [key: string]: unknown;
}

export type ValueSetResourceWithExpansion = ValueSetResource & { expansion: ValueSetExpansion };

/** The $expand options the engine understands: every expansion parameter of the table (parameters.ts), and the
 * value set version asked for (checked against the value set's). */
export type ExpandRequest = ExpandOptions & {
  /** Echoed; when given it must equal the value set's version. */
  valueSetVersion?: string;
};

export interface ExpandLimits {
  /** The most entries an expansion without `count` may return (counted after the filter). */
  maxUnpaged: number;
  /** The largest `count` accepted (default: DEFAULT_EXPAND_LIMITS.maxCount). */
  maxCount?: number;
  /** The longest `filter` accepted, in characters (default: DEFAULT_EXPAND_LIMITS.maxFilterLength). */
  maxFilterLength?: number;
  /** The most distinct words a `filter` may have (default: DEFAULT_EXPAND_LIMITS.maxFilterWords). */
  maxFilterWords?: number;
  /** Limits of compose filters with op `regex` (default: DEFAULT_REGEX_LIMITS). */
  regex?: RegexLimits;
  /** The most compose clauses (include, exclude, filter and valueSet entries) the value sets one expansion
   * evaluates may have together (default: DEFAULT_EXPAND_LIMITS.maxComposeClauses). */
  maxComposeClauses?: number;
}

/** Defaults of the optional limits (the server's come from src/config.ts). */
export const DEFAULT_EXPAND_LIMITS = {
  maxCount: 10_000,
  maxFilterLength: 1000,
  maxFilterWords: 20,
  maxComposeClauses: 1000,
} as const;

/** The largest `offset` accepted (offset + count stays a small integer). */
export const MAX_OFFSET = 2_147_483_647;
