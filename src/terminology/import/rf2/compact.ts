// Growable typed arrays and a grouping by owner (CSR), so a release's millions of rows are held as numbers, not
// as an object per row.

type Typed = Int32Array | Uint8Array | Uint16Array;

/** An append-only typed array. */
export class Grow<T extends Typed> {
  private a: T;
  length = 0;

  constructor(private readonly make: (n: number) => T) {
    this.a = make(1024);
  }

  push(v: number): void {
    if (this.length === this.a.length) {
      const b = this.make(this.a.length * 2);
      b.set(this.a as never);
      this.a = b;
    }
    this.a[this.length++] = v;
  }

  /** The values (a copy of exactly `length` values). */
  done(): T {
    return this.a.slice(0, this.length) as T;
  }
}

export const int32s = () => new Grow((n) => new Int32Array(n));
export const uint8s = () => new Grow((n) => new Uint8Array(n));
export const uint16s = () => new Grow((n) => new Uint16Array(n));

/** Rows grouped by owner: the rows of owner `o` are `order[offsets[o]] .. order[offsets[o + 1] - 1]`, in row
 * order. */
export interface Grouped {
  offsets: Int32Array;
  order: Int32Array;
}

/** Groups rows (their owners in `owner`) by owner ordinal (0 .. owners - 1), a counting sort. */
export function groupBy(owner: Int32Array, owners: number): Grouped {
  const offsets = new Int32Array(owners + 1);
  for (let i = 0; i < owner.length; i++) offsets[owner[i] + 1]++;
  for (let o = 0; o < owners; o++) offsets[o + 1] += offsets[o];
  const fill = offsets.slice(0, owners);
  const order = new Int32Array(owner.length);
  for (let i = 0; i < owner.length; i++) order[fill[owner[i]]++] = i;
  return { offsets, order };
}

/** Interns strings as small numbers. */
export class Interned {
  readonly values: string[] = [];
  private readonly index = new Map<string, number>();

  of(value: string): number {
    let i = this.index.get(value);
    if (i === undefined) {
      i = this.values.length;
      this.values.push(value);
      this.index.set(value, i);
    }
    return i;
  }
}
