// Reusable scratch buffers for the filter path: typed arrays above 64 bytes live outside the V8 heap, and
// allocating one per query drives full garbage collections. A result built in a slot is valid until the next call
// that uses the same slot; the slots are numbered here, so that two users never share one by accident.

/** CodeSystemIndex: the union of a word range's posting lists. */
export const SLOT_UNION = 0;
/** CodeSystemIndex: the intersection of several ranges' concepts (matchRanges). */
export const SLOT_INTERSECT = 1;
/** Ranking (filterAndRank): the displays starting with the filter. */
export const SLOT_STARTS = 8;
/** Ranking (filterAndRank): the other matches. */
export const SLOT_REST = 9;

const scratch: Int32Array[] = [];
let bitsScratch = new Uint32Array(0);

/** A scratch Int32Array of at least `size` elements for `slot` (contents unspecified). */
export function scratchInt32(slot: number, size: number): Int32Array {
  let b = scratch[slot];
  if (!b || b.length < size) {
    b = new Int32Array(Math.max(1024, 2 ** Math.ceil(Math.log2(size + 1))));
    scratch[slot] = b;
  }
  return b;
}

/** A zeroed bitmap of at least `words` 32-bit words, shared: its user clears the bits it set before returning. */
export function scratchBits(words: number): Uint32Array {
  if (bitsScratch.length < words) bitsScratch = new Uint32Array(words);
  return bitsScratch;
}
