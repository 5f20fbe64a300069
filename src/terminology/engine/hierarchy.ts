// Hierarchical expansions: an entry is nested (`contains.contains`) under its code system parent when that parent is
// in the same expansion. Applies to entries of a whole-system include or of a subsumption-filtered (is-a) include,
// as the HL7 reference server nests them; enumerated concepts and other filters stay flat.
import { NEST_BRANCH, type Membership } from './membership.js';
import type { ValueSetContains } from './types.js';

/**
 * Nests the expansion entries (`entries[i]` is the entry of position `positions[i]`, or of position i) under their
 * parents and returns the top level. `searched`: a text filter was given; entries of a whole-system include are
 * then search results and stay flat (only subsumption branches keep their hierarchy).
 */
export function nestEntries(
  m: Membership,
  positions: Int32Array | undefined,
  entries: ValueSetContains[],
  searched: boolean,
): ValueSetContains[] {
  const nest = m.nest;
  if (!nest) return entries;
  const nestable = (pos: number): boolean => {
    const how = pos < nest.length ? nest[pos] : 0;
    return how !== 0 && (!searched || how === NEST_BRANCH);
  };
  // Position -> index in entries, for the positions that may nest.
  const indexOf = new Map<number, number>();
  for (let i = 0; i < entries.length; i++) {
    const pos = positions ? positions[i] : i;
    if (nestable(pos)) indexOf.set(pos, i);
  }
  if (indexOf.size < 2) return entries;
  const parentOf = new Int32Array(entries.length).fill(-1);
  for (let i = 0; i < entries.length; i++) {
    const pos = positions ? positions[i] : i;
    if (indexOf.has(pos)) parentOf[i] = parentIndex(m, pos, indexOf);
  }
  breakCycles(parentOf);
  const top: ValueSetContains[] = [];
  for (let i = 0; i < entries.length; i++) {
    const parent = parentOf[i];
    if (parent < 0) top.push(entries[i]);
    else (entries[parent].contains ??= []).push(entries[i]);
  }
  return top;
}

/** A `parent` property may make a cycle: such an entry goes to the top level instead of vanishing. Linear: each
 * entry is walked once (0 unknown, 1 on the current path, 2 reaches the top level). */
function breakCycles(parentOf: Int32Array): void {
  const state = new Uint8Array(parentOf.length);
  const path: number[] = [];
  for (let i = 0; i < parentOf.length; i++) {
    let j = i;
    while (j >= 0 && state[j] === 0) {
      state[j] = 1;
      path.push(j);
      const next = parentOf[j];
      if (next >= 0 && state[next] === 1) {
        parentOf[j] = -1; // closes a cycle: cut here
        break;
      }
      j = next;
    }
    for (const k of path) state[k] = 2;
    path.length = 0;
  }
}

/** The index (in entries) of the first code system parent of pos that is in the expansion, or -1. */
function parentIndex(m: Membership, pos: number, indexOf: Map<number, number>): number {
  const si = m.entSrc[pos];
  const src = m.sources[si];
  const pm = m.posMaps[si];
  const parents = src.parentsOf(m.entOrd[pos]);
  for (let k = 0; k < parents.length; k++) {
    const ppos = pm[parents[k]];
    if (ppos >= 0 && ppos !== pos) {
      const idx = indexOf.get(ppos);
      if (idx !== undefined) return idx;
    }
  }
  return -1;
}
