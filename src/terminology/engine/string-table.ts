// Interned strings of a code system index (property codes and values, designation kinds' JSON): each distinct
// string once in a StringColumn, found again through an open-addressing hash. SNOMED CT's ~2.7 million property
// values are a few hundred thousand distinct strings; an id per value (4 bytes) replaces a JS string or object each.
import { GrowI32, hashCapacity, hashString, RowHash, StringColumn, StringColumnBuilder } from './compact.js';

/** Builds a StringTable: intern() gives each distinct string one id, in first-seen order. */
export class StringTableBuilder {
  private readonly col = new StringColumnBuilder();
  private readonly hashes = new GrowI32(256);
  private slots = new Int32Array(256);
  private n = 0;

  /** The id of s, added when new. */
  intern(s: string): number {
    const h = hashString(s);
    const slots = this.slots;
    const mask = slots.length - 1;
    let i = h & mask;
    for (;;) {
      const v = slots[i];
      if (v === 0) break;
      if (this.hashes.a[v - 1] === (h | 0) && this.col.equals(v - 1, s)) return v - 1;
      i = (i + 1) & mask;
    }
    const id = this.n++;
    this.col.push(s);
    this.hashes.push(h | 0);
    if (this.n * 2 > slots.length) this.rehash(slots.length * 2);
    else slots[i] = id + 1;
    return id;
  }

  private rehash(cap: number): void {
    const slots = new Int32Array(cap);
    const mask = cap - 1;
    for (let r = 0; r < this.n; r++) {
      let i = this.hashes.a[r] & mask;
      while (slots[i] !== 0) i = (i + 1) & mask;
      slots[i] = r + 1;
    }
    this.slots = slots;
  }

  /** The table (the builder must not be used afterwards). */
  done(): StringTable {
    // A table sized for its strings (hashCapacity), so that a file holds no empty half of a doubled one.
    const slots = new RowHash(new Int32Array(hashCapacity(this.n)));
    const col = this.col.done();
    for (let r = 0; r < this.n; r++) slots.insertHashed(this.hashes.a[r] >>> 0, r, () => false);
    return new StringTable(col, slots.slots);
  }
}

/** Interned strings by id, and the id of a string. */
export class StringTable {
  private readonly hash: RowHash;
  constructor(
    readonly strings: StringColumn,
    /** RowHash slots: string -> id. */
    readonly slots: Int32Array,
  ) {
    this.hash = new RowHash(slots);
  }

  /** Distinct strings held. */
  get size(): number {
    return this.strings.length;
  }

  /** The string of an id. */
  get(id: number): string {
    return this.strings.get(id)!;
  }

  /** The id of s, or -1 when the table lacks it. */
  idOf(s: string): number {
    return this.hash.find(s, this.matches);
  }

  private readonly matches = (row: number, key: string): boolean => this.strings.equals(row, key);

  /** Bytes held (typed arrays). */
  byteLength(): number {
    return this.strings.byteLength() + this.slots.byteLength;
  }
}
