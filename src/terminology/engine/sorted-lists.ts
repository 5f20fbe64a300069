// Searches over sorted data the code system index keeps: binary search in the sorted word dictionary, and the
// k smallest values of several sorted posting lists.

/** The first index of `arr` (sorted) at or after `from` whose value is not below `key`. */
export function lowerBound(arr: string[], key: string, from = 0): number {
  let lo = from;
  let hi = arr.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (arr[mid] < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The end of the run of words from `from` that start with `prefix` (for a prefix whose successor has no char). */
export function upperByScan(arr: string[], from: number, prefix: string): number {
  let i = from;
  while (i < arr.length && arr[i].startsWith(prefix)) i++;
  return i;
}

/** The k smallest values (ascending, without `skip`) of the sorted, pairwise disjoint lists off[r.lo..r.hi) (r: a
 * word range of the index). */
export function smallestOfLists(
  off: Int32Array,
  vals: Int32Array,
  r: { readonly lo: number; readonly hi: number },
  k: number,
  skip: number,
): Int32Array {
  const out: number[] = [];
  const nl = r.hi - r.lo;
  if (nl <= 0 || k <= 0) return new Int32Array(0);
  if (nl === 1) {
    for (let i = off[r.lo]; i < off[r.lo + 1] && out.length < k; i++) if (vals[i] !== skip) out.push(vals[i]);
    return Int32Array.from(out);
  }
  // A binary heap of list cursors keyed by their current value.
  const cur: number[] = [];
  const end: number[] = [];
  for (let w = r.lo; w < r.hi; w++) {
    if (off[w] < off[w + 1]) {
      cur.push(off[w]);
      end.push(off[w + 1]);
    }
  }
  const heap = cur.map((_, i) => i);
  const key = (h: number): number => vals[cur[heap[h]]];
  const down = (i: number): void => {
    const n = heap.length;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) return;
      const m = l + 1 < n && key(l + 1) < key(l) ? l + 1 : l;
      if (key(m) >= key(i)) return;
      const t = heap[m];
      heap[m] = heap[i];
      heap[i] = t;
      i = m;
    }
  };
  for (let i = (heap.length >> 1) - 1; i >= 0; i--) down(i);
  while (heap.length > 0 && out.length < k) {
    const li = heap[0];
    const v = vals[cur[li]];
    if (v !== skip) out.push(v);
    if (++cur[li] >= end[li]) {
      heap[0] = heap[heap.length - 1];
      heap.pop();
    }
    down(0);
  }
  return Int32Array.from(out);
}
