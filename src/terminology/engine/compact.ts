// Compact building blocks of the code system index: growable typed arrays, a column of strings in one shared
// UTF-8 buffer, and an open-addressing hash from strings of such a column to their row. At a million concepts a
// JS string per code and display plus a Map entry per code cost ~250 MB of heap; these cost ~60 MB, outside the
// V8 heap (no GC work), and serialise as they are (see index-file.ts).

/** An Int32Array that grows by doubling. */
export class GrowI32 {
  a: Int32Array;
  n = 0;
  constructor(cap = 16) {
    this.a = new Int32Array(cap);
  }
  push(v: number): void {
    if (this.n === this.a.length) {
      const b = new Int32Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.n++] = v;
  }
  /** A trimmed copy. */
  done(): Int32Array {
    return this.a.slice(0, this.n);
  }
}

/** A Uint8Array that grows by doubling. */
export class GrowU8 {
  a: Uint8Array;
  n = 0;
  constructor(cap = 16) {
    this.a = new Uint8Array(cap);
  }
  push(v: number): void {
    if (this.n === this.a.length) this.grow(1);
    this.a[this.n++] = v;
  }
  /** Makes room for `more` bytes. */
  grow(more: number): void {
    if (this.n + more <= this.a.length) return;
    let cap = this.a.length * 2;
    while (cap < this.n + more) cap *= 2;
    const b = new Uint8Array(cap);
    b.set(this.a.subarray(0, this.n));
    this.a = b;
  }
  done(): Uint8Array {
    return this.a.slice(0, this.n);
  }
}

const encoder = new TextEncoder();
// Buffer's own latin1 slicer (what toString('latin1', a, b) calls after checking its arguments): decoding a page's
// codes and displays is on every request's path. Undocumented but present in every Node version we support.
const latin1Slice = ((Buffer.prototype as unknown as { latin1Slice?: (a: number, b: number) => string })
  .latin1Slice ??
  function (this: Buffer, a: number, b: number): string {
    return this.toString('latin1', a, b);
  }) as (this: Buffer, a: number, b: number) => string;
const decoder = new TextDecoder();

/** Appends the UTF-8 bytes of s; returns whether s was pure ASCII. */
function appendUtf8(out: GrowU8, s: string): boolean {
  let ascii = true;
  for (let i = 0; i < s.length; i++) {
    if (s.charCodeAt(i) > 127) {
      ascii = false;
      break;
    }
  }
  if (ascii) {
    out.grow(s.length);
    const a = out.a;
    let n = out.n;
    for (let i = 0; i < s.length; i++) a[n++] = s.charCodeAt(i);
    out.n = n;
    return true;
  }
  const bytes = encoder.encode(s);
  out.grow(bytes.length);
  out.a.set(bytes, out.n);
  out.n += bytes.length;
  return false;
}

/** Builds a StringColumn row by row (undefined = absent, distinct from ''). */
export class StringColumnBuilder {
  private readonly bytes = new GrowU8(1024);
  private readonly off = new GrowI32(64);
  private readonly present = new GrowU8(64);
  private ascii = true;
  constructor() {
    this.off.push(0);
  }
  push(s: string | undefined): void {
    if (s !== undefined && !appendUtf8(this.bytes, s)) this.ascii = false;
    this.off.push(this.bytes.n);
    this.present.push(s === undefined ? 0 : 1);
  }

  /** True when row i (already pushed) holds exactly s. */
  equals(i: number, s: string): boolean {
    if (this.present.a[i] !== 1) return false;
    const a = this.off.a[i];
    const b = this.off.a[i + 1];
    const bytes = this.bytes.a;
    if (this.ascii) {
      if (b - a !== s.length) return false;
      for (let k = 0; k < s.length; k++) if (bytes[a + k] !== s.charCodeAt(k)) return false;
      return true;
    }
    return decoder.decode(bytes.subarray(a, b)) === s;
  }
  done(): StringColumn {
    return new StringColumn(this.bytes.done(), this.off.done(), this.present.done(), this.ascii);
  }
}

/** Strings stored as one UTF-8 buffer plus offsets; rows decode on demand (the page's 20, not a million). */
export class StringColumn {
  private readonly buf: Buffer;
  constructor(
    readonly bytes: Uint8Array,
    readonly off: Int32Array,
    /** 1 when row i has a value (an absent display is not the empty string). */
    readonly present: Uint8Array,
    /** Every value is ASCII: rows decode as latin1 and compare byte by byte. */
    readonly ascii: boolean,
  ) {
    this.buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  get length(): number {
    return this.present.length;
  }

  get(i: number): string | undefined {
    if (this.present[i] !== 1) return undefined;
    const a = this.off[i];
    const b = this.off[i + 1];
    return this.ascii ? latin1Slice.call(this.buf, a, b) : decoder.decode(this.bytes.subarray(a, b));
  }

  /** True when row i holds exactly s (no string is made for ASCII columns). */
  equals(i: number, s: string): boolean {
    if (this.present[i] !== 1) return false;
    const a = this.off[i];
    const b = this.off[i + 1];
    if (!this.ascii) return this.get(i) === s;
    if (b - a !== s.length) return false;
    const bytes = this.bytes;
    for (let k = 0; k < s.length; k++) if (bytes[a + k] !== s.charCodeAt(k)) return false;
    return true;
  }

  /** hashString(get(i).toLowerCase()), without making strings for an ASCII column. */
  hashLower(i: number): number {
    if (!this.ascii) return hashString(this.get(i)!.toLowerCase());
    const bytes = this.bytes;
    let h = 0x811c9dc5;
    for (let k = this.off[i]; k < this.off[i + 1]; k++) {
      const c = bytes[k];
      h ^= c >= 65 && c <= 90 ? c + 32 : c;
      h = Math.imul(h, 0x01000193);
    }
    return h >>> 0;
  }

  /** get(i).toLowerCase() === key, without making strings for an ASCII column. */
  equalsLower(i: number, key: string): boolean {
    if (!this.ascii) return this.get(i)!.toLowerCase() === key;
    const a = this.off[i];
    if (this.off[i + 1] - a !== key.length) return false;
    const bytes = this.bytes;
    for (let k = 0; k < key.length; k++) {
      const c = bytes[a + k];
      if ((c >= 65 && c <= 90 ? c + 32 : c) !== key.charCodeAt(k)) return false;
    }
    return true;
  }

  byteLength(): number {
    return this.bytes.byteLength + this.off.byteLength + this.present.byteLength;
  }

  /** A read-only array view (`col[i]`) for code that indexes a plain array. Each access decodes: hot paths use
   * get(i). */
  asArray(): ReadonlyArray<string | undefined> {
    const n = this.length;
    return new Proxy([] as Array<string | undefined>, {
      get: (target, prop, receiver) => {
        if (typeof prop === 'string') {
          const c = prop.charCodeAt(0);
          if (c >= 48 && c <= 57) {
            const i = Number(prop);
            return i < n ? this.get(i) : undefined;
          }
          if (prop === 'length') return n;
        }
        if (prop === Symbol.iterator) {
          const get = (i: number): string | undefined => this.get(i);
          return function* () {
            for (let i = 0; i < n; i++) yield get(i);
          };
        }
        return Reflect.get(target, prop, receiver) as unknown;
      },
    });
  }
}

/** FNV-1a over the UTF-16 code units of s. */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Slots for n keys at a load factor of at most 1/2 (a power of two). */
export function hashCapacity(n: number): number {
  let cap = 16;
  while (cap < n * 2) cap *= 2;
  return cap;
}

/**
 * Open-addressing (linear probing) table from a key to a row: slots hold row + 1 (0 = empty). `keyOf` gives the key
 * of a row for comparison. Insert keeps the first row of a key.
 */
export class RowHash {
  constructor(public slots: Int32Array) {}

  static withCapacity(n: number): RowHash {
    return new RowHash(new Int32Array(hashCapacity(n)));
  }

  /** Row of key, or -1. */
  find(key: string, matches: (row: number, key: string) => boolean): number {
    const slots = this.slots;
    const mask = slots.length - 1;
    let i = hashString(key) & mask;
    for (;;) {
      const v = slots[i];
      if (v === 0) return -1;
      if (matches(v - 1, key)) return v - 1;
      i = (i + 1) & mask;
    }
  }

  /** Adds row under key (of hash `h`, see hashString) unless the key is present; returns the row it maps to. */
  insertHashed(h: number, row: number, matches: (row: number) => boolean): number {
    const slots = this.slots;
    const mask = slots.length - 1;
    let i = h & mask;
    for (;;) {
      const v = slots[i];
      if (v === 0) {
        slots[i] = row + 1;
        return row;
      }
      if (matches(v - 1)) return v - 1;
      i = (i + 1) & mask;
    }
  }

  /** Adds row under key unless the key is present; returns the row the key maps to. */
  insert(key: string, row: number, matches: (row: number, key: string) => boolean): number {
    const slots = this.slots;
    const mask = slots.length - 1;
    let i = hashString(key) & mask;
    for (;;) {
      const v = slots[i];
      if (v === 0) {
        slots[i] = row + 1;
        return row;
      }
      if (matches(v - 1, key)) return v - 1;
      i = (i + 1) & mask;
    }
  }
}
