// Sets of concept ordinals as bitsets (one bit per concept of an index, in a Uint32Array).

export type Bitset = Uint32Array;

export function emptySet(size: number): Bitset {
  return new Uint32Array((size + 31) >>> 5);
}

export function fullSet(size: number): Bitset {
  const b = emptySet(size);
  b.fill(0xffffffff);
  const rest = size & 31;
  if (rest !== 0) b[b.length - 1] = (1 << rest) - 1;
  return b;
}

export function has(b: Bitset, i: number): boolean {
  return (b[i >>> 5] & (1 << (i & 31))) !== 0;
}

export function add(b: Bitset, i: number): void {
  b[i >>> 5] |= 1 << (i & 31);
}

export function and(a: Bitset, b: Bitset): Bitset {
  const out = new Uint32Array(a.length);
  for (let k = 0; k < a.length; k++) out[k] = a[k] & b[k];
  return out;
}

export function or(a: Bitset, b: Bitset): Bitset {
  const out = new Uint32Array(a.length);
  for (let k = 0; k < a.length; k++) out[k] = a[k] | b[k];
  return out;
}

export function andNot(a: Bitset, b: Bitset): Bitset {
  const out = new Uint32Array(a.length);
  for (let k = 0; k < a.length; k++) out[k] = a[k] & ~b[k];
  return out;
}

export function count(b: Bitset): number {
  let n = 0;
  for (let k = 0; k < b.length; k++) {
    let v = b[k];
    v = v - ((v >>> 1) & 0x55555555);
    v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
    n += (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
  }
  return n;
}

/** Calls fn with each member, ascending. */
export function forEach(b: Bitset, fn: (i: number) => void): void {
  for (let k = 0; k < b.length; k++) {
    let v = b[k];
    while (v !== 0) {
      const low = v & -v;
      fn((k << 5) + 31 - Math.clz32(low));
      v ^= low;
    }
  }
}

/** The members, ascending. */
export function toOrdinals(b: Bitset): Int32Array {
  const out = new Int32Array(count(b));
  let n = 0;
  forEach(b, (i) => (out[n++] = i));
  return out;
}

/** A byte per concept (1: member), the form compose filters give. */
export function toMask(b: Bitset, size: number): Uint8Array {
  const out = new Uint8Array(size);
  forEach(b, (i) => (out[i] = 1));
  return out;
}
