// ECL (SNOMED CT Expression Constraint Language 2.x) over a code system index: parse (bounded), evaluate (bitsets),
// cache the results per index and canonical expression.
import { LRUCache } from 'lru-cache';
import type { CodeSystemIndex } from '../code-system-index.js';
import type { EclExpr } from './ast.js';
import { toMask, type Bitset } from './bitset.js';
import { evaluateEclExpression } from './evaluate.js';
import { formatEcl } from './format.js';
import { DEFAULT_ECL_LIMITS, type EclLimits } from './limits.js';
import { parseEcl } from './parser.js';
import { hasRelations, relationsReady } from './relations.js';

export type { EclExpr, EclRefinement, Cardinality, HierarchyOp } from './ast.js';
export { parseEcl } from './parser.js';
export { formatEcl } from './format.js';
export { evaluateEclExpression } from './evaluate.js';
export { DEFAULT_ECL_LIMITS, type EclLimits } from './limits.js';
export { relationsOf, relationsReady, IS_A, REFSET_PROPERTY } from './relations.js';
export * as bitset from './bitset.js';

/** ECL results, least recently used out: per index (its cacheKey) and canonical expression text; at most 128 of
 * them and 32 MB (a bigger one is not kept). */
const RESULTS = new LRUCache<string, Bitset>({
  max: 128,
  maxSize: 32 * 1024 * 1024,
  sizeCalculation: (bits) => Math.max(1, bits.byteLength),
});

/** The concepts of an index an ECL expression selects, as a bitset (shared with the cache: do not modify). `path`
 * locates the expression in the request for errors. */
export function evaluateEcl(
  index: CodeSystemIndex,
  text: string,
  path = 'ecl',
  limits: Readonly<EclLimits> = DEFAULT_ECL_LIMITS,
): Bitset {
  const expr: EclExpr = parseEcl(text, path, limits);
  const key = `${index.cacheKey}\u0000${formatEcl(expr)}`;
  let hit = RESULTS.get(key);
  if (!hit) {
    hit = evaluateEclExpression(index, expr, path);
    RESULTS.set(key, hit);
  }
  return hit;
}

/** evaluateEcl as a byte per concept (the form of compose filter results). */
export function eclMask(index: CodeSystemIndex, text: string, path = 'ecl'): Uint8Array {
  return toMask(evaluateEcl(index, text, path), index.size);
}

/** eclMask, but when the expression needs the index's relations (refinements, memberOf, dotted attributes) and
 * they are not built yet, a promise: they are built in slices that yield the event loop. A syntax error is thrown
 * at once. */
export function eclMaskReady(
  index: CodeSystemIndex,
  text: string,
  path = 'ecl',
): Uint8Array | Promise<Uint8Array> {
  const expr = parseEcl(text, path);
  if (hasRelations(index) || !needsRelations(expr)) return eclMask(index, text, path);
  return Promise.resolve(relationsReady(index)).then(() => eclMask(index, text, path));
}

function needsRelations(e: EclExpr): boolean {
  switch (e.kind) {
    case 'concept':
    case 'any':
      return false;
    case 'hierarchy':
      return needsRelations(e.expr);
    case 'and':
    case 'or':
    case 'minus':
      return needsRelations(e.left) || needsRelations(e.right);
    default:
      return true;
  }
}

/** Drops every cached result (tests; a released index's entries age out). */
export function clearEclCache(): void {
  RESULTS.clear();
}
