// What ECL refinements and memberOf read from a code system index, built once per index on first use and kept
// with it (a WeakMap: gone with the index): the relationships (attribute properties whose code is a concept of the
// code system, and the is-a edges when the system has 116680003 |Is a|) as a CSR by source ordinal, the same by
// destination for reverse attributes (built when first asked for), and the members of each reference set (the
// `refset` property). Typed arrays only: 12 bytes a relationship (+ 4 for the reverse), no object per relationship.
import type { CodeSystemIndex } from '../code-system-index.js';

/** The SNOMED CT is-a relationship type: the index's parents, seen as attributes. */
export const IS_A = '116680003';
/** The concept property that names a reference set a concept is a member of. */
export const REFSET_PROPERTY = 'refset';

export class Relations {
  /** Relationships of concept o: relOff[o]..relOff[o+1) in relType/relDest/relGroup. */
  readonly relOff: Int32Array;
  readonly relType: Int32Array;
  readonly relDest: Int32Array;
  readonly relGroup: Int32Array;
  /** Members (ascending ordinals) of each reference set, by the refset's ordinal. */
  readonly refsetMembers: Map<number, Int32Array>;
  private reverse?: { off: Int32Array; rel: Int32Array; src: Int32Array };

  constructor(private readonly index: CodeSystemIndex) {
    const n = index.size;
    const typeOrd = new Map<string, number>();
    const ordOfType = (code: string): number => {
      let t = typeOrd.get(code);
      if (t === undefined) typeOrd.set(code, (t = index.ordinalOf(code)));
      return t;
    };
    const { parentOff, parentIdx } = index.parts;
    const isA = index.ordinalOf(IS_A);
    const counts = new Int32Array(n + 1);
    const members = new Map<number, number[]>();
    // Pass 1: count (and collect refset members).
    for (const [ord, props] of index.properties) {
      for (const p of props) {
        if (p.code === REFSET_PROPERTY) {
          const r = index.ordinalOf(p.valueCode ?? p.valueCoding?.code ?? '');
          if (r < 0) continue;
          let list = members.get(r);
          if (!list) members.set(r, (list = []));
          list.push(ord);
          continue;
        }
        if ((p.valueCode ?? p.valueCoding?.code) !== undefined && ordOfType(p.code) >= 0) counts[ord + 1]++;
      }
    }
    if (isA >= 0) for (let o = 0; o < n; o++) counts[o + 1] += parentOff[o + 1] - parentOff[o];
    for (let o = 0; o < n; o++) counts[o + 1] += counts[o];
    const total = counts[n];
    this.relOff = counts;
    this.relType = new Int32Array(total);
    this.relDest = new Int32Array(total);
    this.relGroup = new Int32Array(total);
    const fill = Int32Array.from(counts.subarray(0, n));
    if (isA >= 0)
      for (let o = 0; o < n; o++)
        for (let k = parentOff[o]; k < parentOff[o + 1]; k++) {
          const at = fill[o]++;
          this.relType[at] = isA;
          this.relDest[at] = parentIdx[k];
        }
    // Pass 2: fill. A relationship whose destination the code system lacks is kept with destination -1: it is
    // in no value set (so it matches `!=` and never `=`).
    for (const [ord, props] of index.properties) {
      for (const p of props) {
        if (p.code === REFSET_PROPERTY) continue;
        const value = p.valueCode ?? p.valueCoding?.code;
        if (value === undefined) continue;
        const t = ordOfType(p.code);
        if (t < 0) continue;
        const at = fill[ord]++;
        this.relType[at] = t;
        this.relDest[at] = index.ordinalOf(value);
        this.relGroup[at] = p.group ?? 0;
      }
    }
    this.refsetMembers = new Map();
    for (const [r, list] of members) {
      const a = Int32Array.from(list);
      a.sort();
      this.refsetMembers.set(r, a);
    }
  }

  /** Relationships by destination: off[d]..off[d+1) in rel (relationship numbers) and src (their sources). */
  byDestination(): { off: Int32Array; rel: Int32Array; src: Int32Array } {
    if (this.reverse) return this.reverse;
    const n = this.index.size;
    const off = new Int32Array(n + 1);
    const dest = this.relDest;
    for (let k = 0; k < dest.length; k++) if (dest[k] >= 0) off[dest[k] + 1]++;
    for (let o = 0; o < n; o++) off[o + 1] += off[o];
    const fill = Int32Array.from(off.subarray(0, n));
    const rel = new Int32Array(off[n]);
    const src = new Int32Array(off[n]);
    for (let o = 0; o < n; o++)
      for (let k = this.relOff[o]; k < this.relOff[o + 1]; k++) {
        const d = dest[k];
        if (d < 0) continue;
        const at = fill[d]++;
        rel[at] = k;
        src[at] = o;
      }
    return (this.reverse = { off, rel, src });
  }

  /** Approximate bytes held. */
  memoryBytes(): number {
    let b = this.relOff.byteLength + this.relType.byteLength * 3;
    for (const m of this.refsetMembers.values()) b += m.byteLength + 64;
    if (this.reverse) b += this.reverse.off.byteLength + this.reverse.rel.byteLength * 2;
    return b;
  }
}

const RELATIONS = new WeakMap<CodeSystemIndex, Relations>();

/** The relations of an index (built on first use). */
export function relationsOf(index: CodeSystemIndex): Relations {
  let r = RELATIONS.get(index);
  if (!r) RELATIONS.set(index, (r = new Relations(index)));
  return r;
}
