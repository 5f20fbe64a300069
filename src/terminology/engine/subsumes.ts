// CodeSystem/$subsumes on a code system index: the relation of two concepts in its is-a hierarchy, a DAG (a concept
// may have several parents). Only ancestors are walked, upwards from each concept: the cost is the number of
// their ancestors, never the size of the code system.
import type { CodeSystemIndex } from './code-system-index.js';
import { TerminologyError } from './errors.js';

/** The answer of $subsumes: how codeA relates to codeB. */
export type SubsumptionOutcome = 'equivalent' | 'subsumes' | 'subsumed-by' | 'not-subsumed';

/** Is `ancestor` among the (transitive) parents of `ord`? A breadth-first walk up, each concept visited once (a
 * cycle written into a code system ends it too). */
export function hasAncestor(index: CodeSystemIndex, ord: number, ancestor: number): boolean {
  const seen = new Set<number>([ord]);
  let frontier: number[] = [ord];
  while (frontier.length > 0) {
    const next: number[] = [];
    for (const cur of frontier) {
      for (const p of index.parentsOf(cur)) {
        if (p === ancestor) return true;
        if (!seen.has(p)) {
          seen.add(p);
          next.push(p);
        }
      }
    }
    frontier = next;
  }
  return false;
}

/** How concept `a` relates to concept `b` (ordinals of one index). A code system whose hierarchy means something
 * other than is-a (part-of, grouped-by, classified-with) defines no subsumption: 422. */
export function subsumption(index: CodeSystemIndex, a: number, b: number): SubsumptionOutcome {
  const meaning = index.meta.hierarchyMeaning;
  if (meaning !== undefined && meaning !== 'is-a') {
    throw new TerminologyError(
      422,
      'business-rule',
      `CodeSystem ${index.url} has hierarchyMeaning '${meaning}': subsumption is only defined for is-a hierarchies`,
      ['system'],
    );
  }
  if (a === b) return 'equivalent';
  if (hasAncestor(index, b, a)) return 'subsumes';
  if (hasAncestor(index, a, b)) return 'subsumed-by';
  return 'not-subsumed';
}
