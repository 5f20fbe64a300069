// Codes in sorted order, for typeahead by code prefix (`filter=4046` finds 404684003): the index keeps its ordinals
// sorted by code (lowercased when the system is not case-sensitive), so the codes starting with a prefix are one
// range, found by two binary searches. Built with the index, in steps that yield, since a million codes take about
// a second to sort.

/** The sort key of a code: as it is, or lowercased for a case-insensitive system. */
export function codeKey(code: string, caseSensitive: boolean): string {
  return caseSensitive ? code : code.toLowerCase();
}

/** Ordinals 0..n-1 sorted by key (ties by ordinal), a bottom-up merge sort yielding every ~64k steps. */
export function* sortCodeOrder(keys: readonly string[]): Generator<void, Int32Array> {
  const n = keys.length;
  let src = new Int32Array(n);
  // Codes often come in order (a release sorted by id, a generated system): then nothing is to sort.
  let sorted = true;
  for (let i = 1; i < n && sorted; i++) sorted = keys[i - 1] <= keys[i];
  if (sorted) {
    for (let i = 0; i < n; i++) src[i] = i;
    return src;
  }
  let dst = new Int32Array(n);
  const before = (a: number, b: number): boolean => {
    const ka = keys[a];
    const kb = keys[b];
    return ka < kb || (ka === kb && a < b);
  };
  // Runs of 16 by insertion sort, then merges of doubling width.
  const RUN = 16;
  for (let lo = 0; lo < n; lo += RUN) {
    const hi = Math.min(n, lo + RUN);
    for (let i = lo; i < hi; i++) {
      let j = i - 1;
      while (j >= lo && before(i, src[j])) {
        src[j + 1] = src[j];
        j--;
      }
      src[j + 1] = i;
    }
    if ((lo & 0xffff) === 0 && lo > 0) yield;
  }
  let steps = 0;
  for (let width = RUN; width < n; width *= 2) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(n, lo + width);
      const hi = Math.min(n, lo + 2 * width);
      let i = lo;
      let j = mid;
      let k = lo;
      while (i < mid && j < hi) dst[k++] = before(src[j], src[i]) ? src[j++] : src[i++];
      while (i < mid) dst[k++] = src[i++];
      while (j < hi) dst[k++] = src[j++];
      steps += hi - lo;
      if (steps >= 0x10000) {
        steps = 0;
        yield;
      }
    }
    [src, dst] = [dst, src];
  }
  return src;
}

/** The part of `order` whose keys start with `prefix` (a key as codeKey makes it). */
export function prefixSlice(order: Int32Array, keyOf: (ord: number) => string, prefix: string): Int32Array {
  const lowerBound = (target: string): number => {
    let lo = 0;
    let hi = order.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (keyOf(order[mid]) < target) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const from = lowerBound(prefix);
  // Every key starting with the prefix sorts before prefix + U+FFFF.
  const to = lowerBound(prefix + '\uffff');
  return order.subarray(from, to);
}
