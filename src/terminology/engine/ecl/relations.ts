// What ECL refinements and memberOf read from a code system index, built once per index on first use and kept
// with it (a WeakMap: gone with the index): the relationships (attribute properties whose code is a concept of the
// code system, and the is-a edges when the system has 116680003 |Is a|) as a CSR by source ordinal, the same by
// destination for reverse attributes (built when first asked for), and the members of each reference set (the
// `refset` property). Typed arrays only: 12 bytes a relationship (+ 8 for the reverse), no object per relationship.
// Building reads every property row of the index (~0.3-0.4 s for a million relationships; ~1 s when they were
// objects): `relationsReady` does it in slices that yield the event loop; `relationsOf` at once.
import type { CodeSystemIndex } from '../code-system-index.js';
import { HAS_GROUP, PropKind } from '../property-columns.js';

/** The SNOMED CT is-a relationship type: the index's parents, seen as attributes. */
export const IS_A = '116680003';
/** The concept property that names a reference set a concept is a member of. */
export const REFSET_PROPERTY = 'refset';

/** Milliseconds of building between two yields of the event loop. */
const SLICE_MS = 10;

export class Relations {
  /** Relationships of concept o: relOff[o]..relOff[o+1) in relType/relDest/relGroup. */
  readonly relOff: Int32Array;
  readonly relType: Int32Array;
  readonly relDest: Int32Array;
  readonly relGroup: Int32Array;
  /** Members (ascending ordinals) of each reference set, by the refset's ordinal. */
  readonly refsetMembers: Map<number, Int32Array>;
  private reverse?: { off: Int32Array; rel: Int32Array; src: Int32Array };

  constructor(
    private readonly index: CodeSystemIndex,
    parts: Pick<Relations, 'relOff' | 'relType' | 'relDest' | 'relGroup' | 'refsetMembers'>,
  ) {
    this.relOff = parts.relOff;
    this.relType = parts.relType;
    this.relDest = parts.relDest;
    this.relGroup = parts.relGroup;
    this.refsetMembers = parts.refsetMembers;
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

/** The building of an index's relations, as steps: it yields (undefined) whenever `due()` says a slice is over,
 * and returns the relations. */
function* build(index: CodeSystemIndex, due: () => boolean): Generator<undefined, Relations> {
  const n = index.size;
  // The property columns, read row by row: no object per property.
  const rows = index.propertyRows;
  const { off, code: codeId, kind } = rows.cols;
  const strings = rows.strings;
  // Ordinal of an interned string (property code or value) as a code of the system: -2 until looked up.
  const ordOfString = new Int32Array(strings.size).fill(-2);
  const ordOf = (id: number): number => {
    let o = ordOfString[id];
    if (o === -2) ordOfString[id] = o = index.ordinalOf(strings.get(id));
    return o;
  };
  // The destination of row r: its valueCode's string through the memo, else valueCoding.code (rare) at once.
  const destOf = (r: number): number | undefined => {
    if ((kind[r] & ~HAS_GROUP) === PropKind.Code) return ordOf(rows.cols.value[r]);
    const v = rows.codedValue(r);
    return v === undefined ? undefined : index.ordinalOf(v);
  };
  const refset = strings.idOf(REFSET_PROPERTY);
  const { parentOff, parentIdx } = index.parts;
  const isA = index.ordinalOf(IS_A);
  const counts = new Int32Array(n + 1);
  const members = new Map<number, number[]>();
  // Concepts whose property rows are read: none when the offsets are empty (no concept has a property).
  const withRows = off.length > 0 ? n : 0;
  // Pass 1: count (and collect refset members).
  for (let ord = 0; ord < withRows; ord++) {
    if ((ord & 1023) === 1023 && due()) yield;
    for (let r = off[ord]; r < off[ord + 1]; r++) {
      const c = codeId[r];
      if (c < 0) continue;
      if (c === refset) {
        const m = destOf(r) ?? index.ordinalOf('');
        if (m < 0) continue;
        let list = members.get(m);
        if (!list) members.set(m, (list = []));
        list.push(ord);
        continue;
      }
      if (ordOf(c) >= 0 && destOf(r) !== undefined) counts[ord + 1]++;
    }
  }
  if (isA >= 0) for (let o = 0; o < n; o++) counts[o + 1] += parentOff[o + 1] - parentOff[o];
  for (let o = 0; o < n; o++) counts[o + 1] += counts[o];
  const total = counts[n];
  const relType = new Int32Array(total);
  const relDest = new Int32Array(total);
  const relGroup = new Int32Array(total);
  const fill = Int32Array.from(counts.subarray(0, n));
  if (isA >= 0)
    for (let o = 0; o < n; o++)
      for (let k = parentOff[o]; k < parentOff[o + 1]; k++) {
        const at = fill[o]++;
        relType[at] = isA;
        relDest[at] = parentIdx[k];
      }
  // Pass 2: fill. A relationship whose destination the code system lacks is kept with destination -1: it is in no
  // value set (so it matches `!=` and never `=`).
  for (let ord = 0; ord < withRows; ord++) {
    if ((ord & 1023) === 1023 && due()) yield;
    for (let r = off[ord]; r < off[ord + 1]; r++) {
      const c = codeId[r];
      if (c < 0 || c === refset) continue;
      const t = ordOf(c);
      if (t < 0) continue;
      const d = destOf(r);
      if (d === undefined) continue;
      const at = fill[ord]++;
      relType[at] = t;
      relDest[at] = d;
      relGroup[at] = rows.groupOf(r);
    }
  }
  const refsetMembers = new Map<number, Int32Array>();
  for (const [r, list] of members) refsetMembers.set(r, Int32Array.from(list).sort());
  return new Relations(index, { relOff: counts, relType, relDest, relGroup, refsetMembers });
}

const RELATIONS = new WeakMap<CodeSystemIndex, Relations>();
const PENDING = new WeakMap<CodeSystemIndex, Promise<Relations>>();

/** The relations of an index, built now if they are not yet (synchronously: the event loop waits). */
export function relationsOf(index: CodeSystemIndex): Relations {
  let r = RELATIONS.get(index);
  if (!r) {
    const steps = build(index, () => false);
    let s = steps.next();
    while (!s.done) s = steps.next();
    RELATIONS.set(index, (r = s.value));
  }
  return r;
}

/** Are the relations of an index built? */
export function hasRelations(index: CodeSystemIndex): boolean {
  return RELATIONS.has(index);
}

/** The relations of an index: at once when built, else built in slices of ~10 ms that yield the event loop (one
 * building per index, shared by every caller meanwhile). */
export function relationsReady(index: CodeSystemIndex): Relations | Promise<Relations> {
  const done = RELATIONS.get(index);
  if (done) return done;
  let pending = PENDING.get(index);
  if (!pending) {
    pending = new Promise<Relations>((resolve, reject) => {
      let until = 0;
      const steps = build(index, () => performance.now() > until);
      const slice = (): void => {
        try {
          until = performance.now() + SLICE_MS;
          const s = steps.next();
          if (!s.done) {
            setImmediate(slice);
            return;
          }
          RELATIONS.set(index, s.value);
          PENDING.delete(index);
          resolve(s.value);
        } catch (err) {
          PENDING.delete(index);
          reject(err as Error);
        }
      };
      slice();
    });
    PENDING.set(index, pending);
  }
  return pending;
}
