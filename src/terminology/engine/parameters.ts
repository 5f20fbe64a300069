// The parameters of each terminology operation ($expand, $lookup, $subsumes, ValueSet/$validate-code and
// CodeSystem/$validate-code), one declared table per operation:
// the REST layer parses query strings and Parameters bodies with it, the operation's GraphQL query takes its
// arguments from it, request-check.ts checks every value with it (once), the engine's request types are derived
// from it, and the CapabilityStatement documents it; a value set's `valueset-expansion-parameter` extensions are
// read with the $expand table. A new parameter is one entry here plus its engine logic; a new operation is one
// table and one `declareOperation` here, plus its service method.

/** How a parameter's value is written: a string (`valueString`, `valueCode`, `valueUri`, `valueCanonical`, ...),
 * an integer, a boolean, a Coding (`valueCoding`, POST only), a CodeableConcept (`valueCodeableConcept`, POST
 * only) or a resource (POST only). */
export type ParameterType = 'string' | 'integer' | 'boolean' | 'coding' | 'codeableConcept' | 'resource';

/** One parameter of an operation. */
export interface ParameterDefinition {
  /** The FHIR name (query string, Parameters.parameter.name). */
  readonly name: string;
  /** The GraphQL argument, and the request field (for $expand: ExpandRequest, or ExpandTarget for `target`
   * parameters). */
  readonly key: string;
  readonly type: ParameterType;
  /** Repeatable: the value is a list. */
  readonly repeats?: true;
  /** Identifies what the operation works on (handled by the service), not how. */
  readonly target?: true;
  /** The longest value accepted, in characters (string parameters; default MAX_STRING). */
  readonly maxLength?: number;
  /** One line for the CapabilityStatement and the GraphQL schema. */
  readonly description: string;
}

/** A $expand parameter (the name it had when $expand was the only operation). */
export type ExpandParameterDefinition = ParameterDefinition;

/** The longest string value of a parameter, unless its definition says otherwise. */
export const MAX_STRING = 4096;
/** The most values a repeatable parameter takes in one request (tx-resource has its own limit). */
export const MAX_REPEATS = 100;

/** Parameters several operations declare alike (one definition each, so they cannot drift apart). */
const VALUE_SET_URL = {
  name: 'url',
  key: 'url',
  type: 'string',
  target: true,
  description: 'canonical url of the value set (url|version allowed)',
} as const satisfies ParameterDefinition;
const VALUE_SET_VERSION = {
  name: 'valueSetVersion',
  key: 'valueSetVersion',
  type: 'string',
  target: true,
  description: 'version of the value set',
} as const satisfies ParameterDefinition;
const FORCE_SYSTEM_VERSION = {
  name: 'force-system-version',
  key: 'forceSystemVersion',
  type: 'string',
  repeats: true,
  description: 'system|version: version to use whatever the include says',
} as const satisfies ParameterDefinition;
const DEFAULT_VALUESET_VERSION = {
  name: 'default-valueset-version',
  key: 'defaultValueSetVersion',
  type: 'string',
  repeats: true,
  description: 'url|version: version of an imported value set referenced without one',
} as const satisfies ParameterDefinition;
const USE_SUPPLEMENT = {
  name: 'useSupplement',
  key: 'useSupplement',
  type: 'string',
  repeats: true,
  description: 'canonical of a code system supplement to apply (must exist)',
} as const satisfies ParameterDefinition;

/** Every $expand parameter this server takes (FHIR R4 `ValueSet/$expand` and the HL7 terminology ecosystem IG). */
export const EXPAND_PARAMETERS = [
  VALUE_SET_URL,
  VALUE_SET_VERSION,
  {
    name: 'valueSet',
    key: 'valueSet',
    type: 'resource',
    target: true,
    description: 'the value set to expand, inline (POST)',
  },
  {
    name: 'tx-resource',
    key: 'txResource',
    type: 'resource',
    repeats: true,
    target: true,
    description: 'CodeSystems and ValueSets for this request only, looked up first (POST)',
  },
  {
    name: 'filter',
    key: 'filter',
    type: 'string',
    // Bounded by the engine (EXPAND_FILTER_MAX_CHARS, EXPAND_FILTER_MAX_WORDS), whose 400 names the setting.
    maxLength: Number.POSITIVE_INFINITY,
    description: 'text filter (see the filter rule)',
  },
  { name: 'offset', key: 'offset', type: 'integer', description: 'paging: entries to skip' },
  { name: 'count', key: 'count', type: 'integer', description: 'paging: entries to return (0: total only)' },
  { name: 'activeOnly', key: 'activeOnly', type: 'boolean', description: 'leave out inactive concepts' },
  {
    name: 'includeDesignations',
    key: 'includeDesignations',
    type: 'boolean',
    description: 'list designations',
  },
  {
    name: 'designation',
    key: 'designation',
    type: 'string',
    repeats: true,
    description: 'designations to list: language code or use system|code',
  },
  {
    name: 'includeDefinition',
    key: 'includeDefinition',
    type: 'boolean',
    description: "return the value set's definition (compose) too",
  },
  {
    name: 'displayLanguage',
    key: 'displayLanguage',
    type: 'string',
    maxLength: 200,
    description: 'language of displays (Accept-Language syntax)',
  },
  {
    name: 'excludeNested',
    key: 'excludeNested',
    type: 'boolean',
    description: 'a flat list instead of the hierarchy',
  },
  {
    name: 'excludeNotForUI',
    key: 'excludeNotForUI',
    type: 'boolean',
    description: 'leave out abstract concepts',
  },
  {
    name: 'property',
    key: 'property',
    type: 'string',
    repeats: true,
    description: 'concept properties to return (code or uri)',
  },
  {
    name: 'system-version',
    key: 'systemVersion',
    type: 'string',
    repeats: true,
    description: 'system|version: version to use when an include names none',
  },
  {
    name: 'check-system-version',
    key: 'checkSystemVersion',
    type: 'string',
    repeats: true,
    description:
      'system|version: version (pattern, e.g. 1.0.x) a code system must have; the default when an include names none',
  },
  FORCE_SYSTEM_VERSION,
  DEFAULT_VALUESET_VERSION,
  USE_SUPPLEMENT,
  {
    name: 'versionsMatch',
    key: 'versionsMatch',
    type: 'boolean',
    description: 'several versions of one code system: merge codes across versions',
  },
  {
    // Not a FHIR parameter: the HL7 test suite's X-TOO-COSTLY-THRESHOLD header (REST), which asks the server to
    // treat a lower number as its limit. It can only lower EXPAND_MAX_UNPAGED, never raise it.
    name: 'tooCostlyThreshold',
    key: 'tooCostlyThreshold',
    type: 'integer',
    description:
      'this request only: answer too-costly above this many unpaged entries (also the X-TOO-COSTLY-THRESHOLD ' +
      'header; at most EXPAND_MAX_UNPAGED)',
  },
] as const satisfies readonly ParameterDefinition[];

/** Every $lookup parameter (FHIR R4 `CodeSystem/$lookup` and the HL7 terminology ecosystem IG). */
export const LOOKUP_PARAMETERS = [
  {
    name: 'system',
    key: 'system',
    type: 'string',
    target: true,
    description: 'canonical url of the code system (url|version allowed)',
  },
  { name: 'code', key: 'code', type: 'string', target: true, description: 'the code to look up' },
  {
    name: 'version',
    key: 'version',
    type: 'string',
    target: true,
    description: 'version of the code system (a pattern like 1.x allowed; none: the highest)',
  },
  {
    name: 'coding',
    key: 'coding',
    type: 'coding',
    target: true,
    description: 'system, version and code as one Coding (POST; instead of system/version/code)',
  },
  {
    name: 'tx-resource',
    key: 'txResource',
    type: 'resource',
    repeats: true,
    target: true,
    description: 'CodeSystems for this request only, looked up first (POST)',
  },
  {
    name: 'property',
    key: 'property',
    type: 'string',
    repeats: true,
    description:
      'what to return: property codes or uris, parent, child, inactive, designation, definition, or * for all ' +
      '(none: designations, definition and inactive)',
  },
  {
    name: 'displayLanguage',
    key: 'displayLanguage',
    type: 'string',
    maxLength: 200,
    description: 'language of the display (Accept-Language syntax)',
  },
  {
    name: 'useSupplement',
    key: 'useSupplement',
    type: 'string',
    repeats: true,
    description: 'canonical of a code system supplement to apply (must exist and supplement the code system)',
  },
] as const satisfies readonly ParameterDefinition[];

/** Every $subsumes parameter (FHIR R4 `CodeSystem/$subsumes`). */
export const SUBSUMES_PARAMETERS = [
  {
    name: 'codeA',
    key: 'codeA',
    type: 'string',
    target: true,
    description: 'the code that may subsume codeB',
  },
  { name: 'codeB', key: 'codeB', type: 'string', target: true, description: 'the code that may be subsumed' },
  {
    name: 'system',
    key: 'system',
    type: 'string',
    target: true,
    description: 'canonical url of the code system (url|version allowed)',
  },
  {
    name: 'version',
    key: 'version',
    type: 'string',
    target: true,
    description: 'version of the code system (a pattern like 1.x allowed; none: the highest)',
  },
  {
    name: 'codingA',
    key: 'codingA',
    type: 'coding',
    target: true,
    description: 'codeA as a Coding (POST; its system must be the code system)',
  },
  {
    name: 'codingB',
    key: 'codingB',
    type: 'coding',
    target: true,
    description: 'codeB as a Coding (POST; its system must be the code system)',
  },
  {
    name: 'tx-resource',
    key: 'txResource',
    type: 'resource',
    repeats: true,
    target: true,
    description: 'CodeSystems for this request only, looked up first (POST)',
  },
] as const satisfies readonly ParameterDefinition[];

/** ConceptMap/$translate: R4's parameters and the R5 names the HL7 test suite sends (sourceCode, targetCode, ...).
 * All say what to translate and with which maps (targets: the service folds them into one request). */
export const TRANSLATE_PARAMETERS = [
  {
    name: 'url',
    key: 'url',
    type: 'string',
    target: true,
    description: 'canonical url of the concept map (url|version allowed); none: every map for the systems',
  },
  {
    name: 'conceptMapVersion',
    key: 'conceptMapVersion',
    type: 'string',
    target: true,
    description: 'version of the concept map',
  },
  {
    name: 'conceptMap',
    key: 'conceptMap',
    type: 'resource',
    target: true,
    description: 'the concept map, inline (POST)',
  },
  {
    name: 'code',
    key: 'code',
    type: 'string',
    target: true,
    description: 'the code to translate (R4; with reverse: a target code)',
  },
  { name: 'system', key: 'system', type: 'string', target: true, description: 'the system of code' },
  {
    name: 'version',
    key: 'version',
    type: 'string',
    target: true,
    description: 'the version of system (informative)',
  },
  {
    name: 'coding',
    key: 'coding',
    type: 'coding',
    target: true,
    description: 'the code to translate, as a Coding (POST)',
  },
  {
    name: 'codeableConcept',
    key: 'codeableConcept',
    type: 'codeableConcept',
    target: true,
    description: 'the code to translate: the first coding of the CodeableConcept (POST)',
  },
  {
    name: 'source',
    key: 'source',
    type: 'string',
    target: true,
    description: 'the value set of the source codes (informative)',
  },
  {
    name: 'target',
    key: 'target',
    type: 'string',
    target: true,
    description: 'the value set of the target codes (informative)',
  },
  {
    name: 'targetsystem',
    key: 'targetsystem',
    type: 'string',
    target: true,
    description: 'R4: the system to translate into',
  },
  {
    name: 'reverse',
    key: 'reverse',
    type: 'boolean',
    target: true,
    description: 'R4: code/system are a target; find its sources',
  },
  {
    name: 'sourceCode',
    key: 'sourceCode',
    type: 'string',
    target: true,
    description: 'R5: the code to translate',
  },
  {
    name: 'sourceSystem',
    key: 'sourceSystem',
    type: 'string',
    target: true,
    description: 'R5: the system of sourceCode; reverse: the system to translate into',
  },
  {
    name: 'sourceVersion',
    key: 'sourceVersion',
    type: 'string',
    target: true,
    description: 'R5: the version of sourceSystem (informative)',
  },
  {
    name: 'sourceCoding',
    key: 'sourceCoding',
    type: 'coding',
    target: true,
    description: 'R5: the code to translate, as a Coding (POST)',
  },
  {
    name: 'targetCode',
    key: 'targetCode',
    type: 'string',
    target: true,
    description: 'R5: a target code to translate back (reverse)',
  },
  {
    name: 'targetCoding',
    key: 'targetCoding',
    type: 'coding',
    target: true,
    description: 'R5: a target code to translate back, as a Coding (POST)',
  },
  {
    name: 'targetSystem',
    key: 'targetSystem',
    type: 'string',
    target: true,
    description: 'R5: the system to translate into; reverse: the system of targetCode',
  },
  {
    name: 'sourceScope',
    key: 'sourceScope',
    type: 'string',
    target: true,
    description: 'R5: the source value set (informative)',
  },
  {
    name: 'targetScope',
    key: 'targetScope',
    type: 'string',
    target: true,
    description: 'R5: the target value set (informative)',
  },
  {
    name: 'tx-resource',
    key: 'txResource',
    type: 'resource',
    repeats: true,
    target: true,
    description: 'ConceptMaps for this request only, used first (POST)',
  },
] as const satisfies readonly ParameterDefinition[];

/** The parameters that name the code a $validate-code checks (one way of the three: code+system, coding,
 * codeableConcept), and how it is displayed. */
const CHECKED_CODE = [
  { name: 'code', key: 'code', type: 'string', target: true, description: 'the code to check' },
  {
    name: 'coding',
    key: 'coding',
    type: 'coding',
    target: true,
    description: 'the code to check, as a Coding (POST; instead of code/system)',
  },
  {
    name: 'codeableConcept',
    key: 'codeableConcept',
    type: 'codeableConcept',
    target: true,
    description: 'codings to check, as a CodeableConcept (POST): valid when one of them is',
  },
  {
    name: 'display',
    key: 'display',
    type: 'string',
    description: 'the display to check against the code (with code)',
  },
  {
    name: 'displayLanguage',
    key: 'displayLanguage',
    type: 'string',
    maxLength: 200,
    description: 'language(s) of the display (Accept-Language syntax)',
  },
  {
    name: 'lenient-display-validation',
    key: 'lenientDisplayValidation',
    type: 'boolean',
    description: 'a wrong display is a warning, not an error',
  },
  {
    name: 'tx-resource',
    key: 'txResource',
    type: 'resource',
    repeats: true,
    target: true,
    description: 'CodeSystems and ValueSets for this request only, looked up first (POST)',
  },
  USE_SUPPLEMENT,
] as const satisfies readonly ParameterDefinition[];

/** Every ValueSet/$validate-code parameter (FHIR R4 and the HL7 terminology ecosystem IG). */
export const VALIDATE_CODE_PARAMETERS = [
  VALUE_SET_URL,
  VALUE_SET_VERSION,
  {
    name: 'valueSet',
    key: 'valueSet',
    type: 'resource',
    target: true,
    description: 'the value set, inline (POST)',
  },
  {
    name: 'system',
    key: 'system',
    type: 'string',
    target: true,
    description: 'the code system of code',
  },
  {
    name: 'systemVersion',
    key: 'systemVersion',
    type: 'string',
    target: true,
    description: 'the version of system (none: the one the value set uses)',
  },
  {
    name: 'version',
    key: 'version',
    type: 'string',
    target: true,
    description: 'the version of system (as systemVersion)',
  },
  ...CHECKED_CODE,
  {
    name: 'inferSystem',
    key: 'inferSystem',
    type: 'boolean',
    description: 'code without system: the system is the one of the value set that has the code',
  },
  {
    name: 'abstract',
    key: 'abstract',
    type: 'boolean',
    description: 'abstract (not selectable) codes are valid (default true; false: they are not)',
  },
  { name: 'activeOnly', key: 'activeOnly', type: 'boolean', description: 'inactive codes are not valid' },
  {
    name: 'valueset-membership-only',
    key: 'membershipOnly',
    type: 'boolean',
    description: 'check membership only: no display check',
  },
  {
    name: 'system-version',
    key: 'defaultSystemVersion',
    type: 'string',
    repeats: true,
    description: 'system|version: version to use when an include names none',
  },
  {
    name: 'check-system-version',
    key: 'checkSystemVersion',
    type: 'string',
    repeats: true,
    description: 'system|version: version (pattern) a code system must have',
  },
  FORCE_SYSTEM_VERSION,
  DEFAULT_VALUESET_VERSION,
] as const satisfies readonly ParameterDefinition[];

/** Every CodeSystem/$validate-code parameter (FHIR R4 and the HL7 terminology ecosystem IG). */
export const CS_VALIDATE_CODE_PARAMETERS = [
  {
    name: 'url',
    key: 'url',
    type: 'string',
    target: true,
    description: 'canonical url of the code system (url|version allowed)',
  },
  {
    name: 'version',
    key: 'version',
    type: 'string',
    target: true,
    description: 'version of the code system (a pattern like 1.x allowed; none: the highest)',
  },
  ...CHECKED_CODE,
  {
    name: 'abstract',
    key: 'abstract',
    type: 'boolean',
    description: 'abstract (not selectable) codes are valid (default true; false: they are not)',
  },
  { name: 'activeOnly', key: 'activeOnly', type: 'boolean', description: 'inactive codes are not valid' },
] as const satisfies readonly ParameterDefinition[];

/** Accepted and ignored: formatting is always JSON here; `uuid` is the HL7 test runner's cache-buster (a request
 * id with no effect on the answer). */
export const IGNORED_PARAMETERS: ReadonlySet<string> = new Set(['_format', '_pretty', 'uuid']);

/** A FHIR Coding as a `coding` parameter gives it. */
export interface CodingValue {
  system?: string;
  version?: string;
  code?: string;
  display?: string;
}

/** A FHIR CodeableConcept as a `codeableConcept` parameter gives it. */
export interface CodeableConceptValue {
  coding?: CodingValue[];
  text?: string;
}

type Scalar<T extends ParameterType> = T extends 'integer'
  ? number
  : T extends 'boolean'
    ? boolean
    : T extends 'coding'
      ? CodingValue
      : T extends 'codeableConcept'
        ? CodeableConceptValue
        : T extends 'resource'
          ? unknown
          : string;
type ValueOf<D extends ParameterDefinition> = D extends { repeats: true }
  ? Scalar<D['type']>[]
  : Scalar<D['type']>;

/** The values of a table's parameters, by key: the target parameters (`target: true`) or the others. */
type ValuesOf<T extends readonly ParameterDefinition[], Target extends boolean> = {
  [
    D in T[number] as (D extends { target: true } ? true : false) extends Target ? D['key'] : never
  ]?: ValueOf<D>;
};

/** The expansion options a request gives (every non-target parameter of the table), by key. */
export type ExpandOptions = ValuesOf<typeof EXPAND_PARAMETERS, false>;

/** The value set a request names (the target parameters), by key. */
export type ExpandTargetParameters = ValuesOf<typeof EXPAND_PARAMETERS, true>;

/** What a $lookup names (code system and code). */
export type LookupTargetParameters = ValuesOf<typeof LOOKUP_PARAMETERS, true>;

/** How a $lookup answers (properties, language, supplements). */
export type LookupOptions = ValuesOf<typeof LOOKUP_PARAMETERS, false>;

/** What a $subsumes compares (every parameter names the target). */
export type SubsumesParameters = ValuesOf<typeof SUBSUMES_PARAMETERS, true>;

/** What a $translate translates, and with which maps. */
export type TranslateParameters = ValuesOf<typeof TRANSLATE_PARAMETERS, true>;

/** What a ValueSet/$validate-code checks, and against which value set. */
export type ValidateCodeTargetParameters = ValuesOf<typeof VALIDATE_CODE_PARAMETERS, true>;

/** How a ValueSet/$validate-code checks (display, language, flags, version parameters). */
export type ValidateCodeOptions = ValuesOf<typeof VALIDATE_CODE_PARAMETERS, false>;

/** What a CodeSystem/$validate-code checks, and in which code system. */
export type CsValidateCodeTargetParameters = ValuesOf<typeof CS_VALIDATE_CODE_PARAMETERS, true>;

/** How a CodeSystem/$validate-code checks. */
export type CsValidateCodeOptions = ValuesOf<typeof CS_VALIDATE_CODE_PARAMETERS, false>;

/** One terminology operation, as declared: its parameter table, where it is served, and how it is documented. */
export interface OperationDeclaration {
  /** The FHIR operation code (`expand` for `$expand`). */
  readonly code: string;
  /** The resource type it is served on (type level, and instance level by id). */
  readonly resourceType: 'ValueSet' | 'CodeSystem' | 'ConceptMap';
  /** The GraphQL query field that runs it (REST runs the same field). */
  readonly graphqlField: string;
  /** One line for the GraphQL field and the CapabilityStatement. */
  readonly description: string;
  readonly parameters: readonly ParameterDefinition[];
  /** The definition of a parameter by FHIR name. */
  readonly byName: ReadonlyMap<string, ParameterDefinition>;
  /** The definition of a parameter by key. */
  readonly byKey: ReadonlyMap<string, ParameterDefinition>;
}

function declareOperation(
  code: string,
  resourceType: OperationDeclaration['resourceType'],
  graphqlField: string,
  description: string,
  parameters: readonly ParameterDefinition[],
): OperationDeclaration {
  return Object.freeze({
    code,
    resourceType,
    graphqlField,
    description,
    parameters,
    byName: new Map(parameters.map((p) => [p.name, p])),
    byKey: new Map(parameters.map((p) => [p.key, p])),
  });
}

/** ValueSet/$expand. */
export const EXPAND_OPERATION = declareOperation(
  'expand',
  'ValueSet',
  'expandValueSet',
  'FHIR $expand: expands the value set given by url (optionally url|version), id, or an inline valueSet, ' +
    'visible to the caller (own project first, then the shared core definitions).',
  EXPAND_PARAMETERS,
);

/** CodeSystem/$lookup. */
export const LOOKUP_OPERATION = declareOperation(
  'lookup',
  'CodeSystem',
  'lookupCode',
  'FHIR $lookup: the details of a code (display, designations, properties) in the code system given by system ' +
    '(optionally system|version), a coding, or id, visible to the caller (own project first, then the shared ' +
    'core definitions). Returns a Parameters resource as JSON.',
  LOOKUP_PARAMETERS,
);

/** CodeSystem/$subsumes. */
export const SUBSUMES_OPERATION = declareOperation(
  'subsumes',
  'CodeSystem',
  'subsumes',
  "FHIR $subsumes: whether codeA subsumes codeB in the code system's is-a hierarchy (equivalent, subsumes, " +
    'subsumed-by or not-subsumed). Returns a Parameters resource as JSON.',
  SUBSUMES_PARAMETERS,
);

/** ValueSet/$validate-code. */
export const VALIDATE_CODE_OPERATION = declareOperation(
  'validate-code',
  'ValueSet',
  'validateCode',
  'FHIR ValueSet/$validate-code: whether a code (code+system, coding or codeableConcept) is in the value set ' +
    'given by url (optionally url|version), id, or an inline valueSet, and its display right. Returns a ' +
    'Parameters resource as JSON (result, message, display, code, system, version, issues).',
  VALIDATE_CODE_PARAMETERS,
);

/** CodeSystem/$validate-code. */
export const CS_VALIDATE_CODE_OPERATION = declareOperation(
  'validate-code',
  'CodeSystem',
  'validateCodeInCodeSystem',
  'FHIR CodeSystem/$validate-code: whether a code (code, coding or codeableConcept) is in the code system given ' +
    'by url (optionally url|version) or id, and its display right. Returns a Parameters resource as JSON.',
  CS_VALIDATE_CODE_PARAMETERS,
);

/** ConceptMap/$translate. */
export const TRANSLATE_OPERATION = declareOperation(
  'translate',
  'ConceptMap',
  'translate',
  'FHIR ConceptMap/$translate: the matches of a code (code+system, coding, R5 sourceCode/targetCode) in the ' +
    "concept map given by url or inline, or in every map between the systems the caller sees (own project's, " +
    'shared, tx-resource); reverse finds the sources of a target code. Returns a Parameters resource as JSON ' +
    '(result, message, match with equivalence, relationship, concept, originMap, and source when reversed).',
  TRANSLATE_PARAMETERS,
);

/** Every declared terminology operation. */
export const TERMINOLOGY_OPERATIONS: readonly OperationDeclaration[] = [
  EXPAND_OPERATION,
  LOOKUP_OPERATION,
  SUBSUMES_OPERATION,
  VALIDATE_CODE_OPERATION,
  CS_VALIDATE_CODE_OPERATION,
  TRANSLATE_OPERATION,
];

/** The definition of an $expand parameter by FHIR name. */
export const PARAMETER_BY_NAME: ReadonlyMap<string, ParameterDefinition> = EXPAND_OPERATION.byName;

/** The definition of an $expand parameter by key. */
export const PARAMETER_BY_KEY: ReadonlyMap<string, ParameterDefinition> = EXPAND_OPERATION.byKey;

/** An operation's parameter list, as documentation (its CapabilityStatement entry); $expand by default. */
export function describeParameters(op: OperationDeclaration = EXPAND_OPERATION): string {
  return op.parameters
    .map((p) => `${p.name}${p.repeats ? ' (repeatable)' : ''}: ${p.description}`)
    .join('; ');
}
