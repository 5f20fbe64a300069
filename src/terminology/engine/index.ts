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

// The operations ($expand, $lookup, $subsumes, $validate-code), each one declared table of parameters (REST, GraphQL and the
// CapabilityStatement read them from it).
export {
  describeParameters,
  EXPAND_OPERATION,
  EXPAND_PARAMETERS,
  IGNORED_PARAMETERS,
  LOOKUP_OPERATION,
  LOOKUP_PARAMETERS,
  MAX_REPEATS,
  MAX_STRING,
  PARAMETER_BY_KEY,
  PARAMETER_BY_NAME,
  SUBSUMES_OPERATION,
  SUBSUMES_PARAMETERS,
  TERMINOLOGY_OPERATIONS,
  TRANSLATE_OPERATION,
  TRANSLATE_PARAMETERS,
  VALIDATE_CODE_OPERATION,
  VALIDATE_CODE_PARAMETERS,
  CS_VALIDATE_CODE_OPERATION,
  CS_VALIDATE_CODE_PARAMETERS,
  type CodeableConceptValue,
  type CodingValue,
  type CsValidateCodeOptions,
  type CsValidateCodeTargetParameters,
  type ValidateCodeOptions,
  type ValidateCodeTargetParameters,
  type ExpandOptions,
  type ExpandParameterDefinition,
  type ExpandTargetParameters,
  type LookupOptions,
  type LookupTargetParameters,
  type OperationDeclaration,
  type ParameterDefinition,
  type SubsumesParameters,
  type TranslateParameters,
} from './parameters.js';
export {
  countMapEntries,
  translateCode,
  type ConceptMapResource,
  type TranslateRequest,
} from './translate.js';
export { parseLanguageList } from './languages.js';

// Expansion.
export { ExpansionEngine, defaultEngine, expandValueSet, type ExpansionEngineOptions } from './expand.js';
export {
  checkOperationValues,
  checkParameter,
  checkRequest,
  describeValue,
  type CheckedRequest,
} from './request-check.js';

// $lookup and $subsumes (one concept's details; the relation of two in the is-a hierarchy).
export {
  conceptOrdinal,
  LOOKUP_MAX_CHILDREN,
  lookupConcept,
  unknownCodeSystem,
  type LookupSettings,
  type ParametersParameter,
  type ParametersResource,
} from './lookup.js';
export { subsumption, type SubsumptionOutcome } from './subsumes.js';
// $validate-code (a code in a value set's membership, or in a code system).
export { importedValueSets, valueSetWarnings } from './expand-describe.js';
export { validateCodings, type ValidateSettings } from './validate-code.js';
export { type CheckedForm, type ValidationIssue, type VersionSpec } from './validate-issues.js';
export { unresolvedValueSetAnswer } from './validate-unresolved.js';
export { NO_SUPPLEMENTS, resolveSupplements, type SupplementSet } from './supplements.js';
export { warmFilterPaths } from './ranking.js';
export { countComposeClauses, valueSetIdentity } from './compose.js';
export { checkComposeShape } from './compose-shape.js';
export { Membership } from './membership.js';
export { TerminologyError, withTxIssueType, type TerminologyIssueCode } from './errors.js';
export { normalizeText, tokenize } from './normalize.js';
export type * from './types.js';
export { DEFAULT_EXPAND_LIMITS } from './types.js';
export { compareVersionsDesc, resolveCodeSystem } from './versions.js';
export type { Resolver } from './resolver.js';
// Implicit value sets (SNOMED CT `?fhir_vs` forms, LOINC `/vs`) and ECL.
export { implicitValueSet, isImplicitValueSetUrl, SNOMED_CT } from './implicit-value-sets.js';
export { clearEclCache, evaluateEcl, parseEcl, formatEcl } from './ecl/index.js';
