// The in-memory $expand engine: code system indexes, compose evaluation, filter/rank/page, typed errors.
export { CodeSystemIndex, FLAG_ABSTRACT, FLAG_INACTIVE, type WordRange } from './code-system-index.js';
export { flattenCodeSystemConcepts, codeSystemMetaOf, indexCodeSystemResource } from './flatten.js';
export { ExpansionEngine, defaultEngine, expandValueSet, type ExpansionEngineOptions } from './expand.js';
export { valueSetIdentity } from './compose.js';
export { Membership } from './membership.js';
export { TerminologyError, type TerminologyIssueCode } from './errors.js';
export { normalizeText, tokenize } from './normalize.js';
export type * from './types.js';
export type { Resolver } from './resolver.js';
