// The $expand parameters, in one table: the REST layer parses query strings and Parameters bodies with it, the
// GraphQL expandValueSet field takes its arguments from it, request-check.ts checks every value with it (once),
// the engine's ExpandRequest type is derived from it, the CapabilityStatement documents it, and a value set's
// `valueset-expansion-parameter` extensions are read with it. A new parameter is one entry here plus its engine
// logic.

/** How a parameter's value is written: a string (`valueString`, `valueCode`, `valueUri`, `valueCanonical`, ...),
 * an integer, a boolean, or a resource (POST only). */
export type ParameterType = 'string' | 'integer' | 'boolean' | 'resource';

/** One $expand parameter. */
export interface ExpandParameterDefinition {
  /** The FHIR name (query string, Parameters.parameter.name). */
  readonly name: string;
  /** The GraphQL argument, and the ExpandRequest field (or ExpandTarget field for `target` parameters). */
  readonly key: string;
  readonly type: ParameterType;
  /** Repeatable: the value is a list. */
  readonly repeats?: true;
  /** Identifies what to expand (handled by the service), not how. */
  readonly target?: true;
  /** The longest value accepted, in characters (string parameters; default MAX_STRING). */
  readonly maxLength?: number;
  /** One line for the CapabilityStatement and the GraphQL schema. */
  readonly description: string;
}

/** The longest string value of a parameter, unless its definition says otherwise. */
export const MAX_STRING = 4096;
/** The most values a repeatable parameter takes in one request (tx-resource has its own limit). */
export const MAX_REPEATS = 100;

/** Every $expand parameter this server takes (FHIR R4 `ValueSet/$expand` and the HL7 terminology ecosystem IG). */
export const EXPAND_PARAMETERS = [
  {
    name: 'url',
    key: 'url',
    type: 'string',
    target: true,
    description: 'canonical url of the value set (url|version allowed)',
  },
  {
    name: 'valueSetVersion',
    key: 'valueSetVersion',
    type: 'string',
    target: true,
    description: 'version of the value set',
  },
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
  {
    name: 'force-system-version',
    key: 'forceSystemVersion',
    type: 'string',
    repeats: true,
    description: 'system|version: version to use whatever the include says',
  },
  {
    name: 'default-valueset-version',
    key: 'defaultValueSetVersion',
    type: 'string',
    repeats: true,
    description: 'url|version: version of an imported value set referenced without one',
  },
  {
    name: 'useSupplement',
    key: 'useSupplement',
    type: 'string',
    repeats: true,
    description: 'canonical of a code system supplement to apply (must exist)',
  },
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
] as const satisfies readonly ExpandParameterDefinition[];

/** Accepted and ignored: formatting is always JSON here; `uuid` is the HL7 test runner's cache-buster (a request
 * id with no effect on the answer). */
export const IGNORED_PARAMETERS: ReadonlySet<string> = new Set(['_format', '_pretty', 'uuid']);

type Definition = (typeof EXPAND_PARAMETERS)[number];
type Scalar<T extends ParameterType> = T extends 'integer'
  ? number
  : T extends 'boolean'
    ? boolean
    : T extends 'resource'
      ? unknown
      : string;
type ValueOf<D extends Definition> = D extends { repeats: true } ? Scalar<D['type']>[] : Scalar<D['type']>;

/** The expansion options a request gives (every non-target parameter of the table), by key. */
export type ExpandOptions = {
  [D in Definition as D extends { target: true } ? never : D['key']]?: ValueOf<D>;
};

/** The value set a request names (the target parameters), by key. */
export type ExpandTargetParameters = {
  [D in Definition as D extends { target: true } ? D['key'] : never]?: ValueOf<D>;
};

/** The definition of a parameter by FHIR name. */
export const PARAMETER_BY_NAME: ReadonlyMap<string, ExpandParameterDefinition> = new Map(
  EXPAND_PARAMETERS.map((p) => [p.name, p]),
);

/** The definition of a parameter by key. */
export const PARAMETER_BY_KEY: ReadonlyMap<string, ExpandParameterDefinition> = new Map(
  EXPAND_PARAMETERS.map((p) => [p.key, p]),
);

/** The parameter list, as documentation (the CapabilityStatement's $expand entry). */
export function describeParameters(): string {
  const all: readonly ExpandParameterDefinition[] = EXPAND_PARAMETERS;
  return all.map((p) => `${p.name}${p.repeats ? ' (repeatable)' : ''}: ${p.description}`).join('; ');
}
