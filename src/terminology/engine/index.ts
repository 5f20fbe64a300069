// The in-memory $expand engine's one entrance: code outside src/terminology/engine/ imports this file only (a
// dependency rule checks it). What is here is the engine's contract: code system indexes (built, flattened, kept in
// files), the $expand parameter table, expansion, and typed errors that know no transport.

// Code system indexes: building one, reading its concepts from a CodeSystem resource, its file form.
export { CodeSystemIndex, FLAG_ABSTRACT, FLAG_INACTIVE, type WordRange } from './code-system-index.js';
export { CodeSystemIndexBuilder } from './index-builder.js';
export {
  codeSystemMetaOf,
  flattenCodeSystemConcepts,
  flattenSteps,
  indexCodeSystemResource,
} from './flatten.js';
export { readIndexFile, writeIndexFile } from './index-file.js';

// The $expand parameters, in one table (REST, GraphQL and the CapabilityStatement read them from it).
export {
  describeParameters,
  EXPAND_PARAMETERS,
  IGNORED_PARAMETERS,
  MAX_REPEATS,
  MAX_STRING,
  PARAMETER_BY_KEY,
  PARAMETER_BY_NAME,
  type ExpandOptions,
  type ExpandParameterDefinition,
  type ExpandTargetParameters,
} from './parameters.js';
export { parseLanguageList } from './languages.js';

// Expansion.
export { ExpansionEngine, defaultEngine, expandValueSet, type ExpansionEngineOptions } from './expand.js';
export { checkParameter, checkRequest, describeValue, type CheckedRequest } from './request-check.js';
export { warmFilterPaths } from './ranking.js';
export { countComposeClauses, valueSetIdentity } from './compose.js';
export { checkComposeShape } from './compose-shape.js';
export { Membership } from './membership.js';
export { TerminologyError, type TerminologyIssueCode } from './errors.js';
export { normalizeText, tokenize } from './normalize.js';
export type * from './types.js';
export { DEFAULT_EXPAND_LIMITS } from './types.js';
export { compareVersionsDesc } from './versions.js';
export type { Resolver } from './resolver.js';
