// The engine's view of storage: where it finds code systems (as indexes) and value sets. Its own file: the index
// module imports the shared shapes of types.ts, and this interface names the index.
import type { CodeSystemIndex } from './code-system-index.js';
import type { ConceptDetails, ValueSetResource } from './types.js';

/** Where the engine finds code systems and imported value sets (the service layer caches both). */
export interface Resolver {
  /** The index of a code system; without version, the current one. */
  codeSystem(url: string, version?: string): Promise<CodeSystemIndex | undefined>;
  /** Optional: every version of a code system this resolver knows (for wildcard versions like `1.0.x` and the
   * message of an unknown version). */
  codeSystemVersions?(url: string): Promise<string[]>;
  /** A value set by canonical url; without version, the current one. */
  valueSet(url: string, version?: string): Promise<ValueSetResource | undefined>;
  /** Optional: the partition of the engine's caches this resolver's answers go to (e.g. the project id). Two
   * resolvers that may answer the same url differently must have different scopes: a membership evaluated
   * through one is never served to the other. */
  readonly scope?: string;
  /** Optional: a number that changes whenever any answer of this resolver may have changed. While it stays the
   * same, a cached expansion's dependencies need no re-check. */
  generation?(): number;
  /** Optional: the definitions (and extensions, where kept) of some concepts of a code system whose index does
   * not hold them in memory (a stored one), by ordinal. Only called when a request asks for properties. */
  conceptDetails?(index: CodeSystemIndex, ordinals: number[]): Promise<Map<number, ConceptDetails>>;
  /** Optional: does some concept of this (stored) code system have extensions? Then every expansion loads the
   * details of the concepts it shows (conceptDetails). Unknown: no. */
  hasConceptExtensions?(index: CodeSystemIndex): boolean;
}
