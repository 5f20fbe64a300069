// Designations of a code system index as columns instead of an object array per concept: per concept a range of
// rows (CSR offsets), per row a kind (language + use, a small vocabulary: SNOMED CT has four) and the value in one
// StringColumn. SNOMED CT's ~1.6 million designations cost ~350 MB of heap as objects and ~70 MB as columns. A
// designation of another shape (extensions, keys in another order, values that are not strings) is kept whole, as
// its JSON in the value column (kind RAW), so every designation reads back as it was given.
import { GrowI32, StringColumnBuilder, type StringColumn } from './compact.js';
import type { Coding, Designation } from './types.js';

/** The kind of a designation kept as its JSON. */
export const RAW_KIND = 0;

/** A designation's language and use, shared by every designation of that kind. */
export interface DesignationKind {
  language?: string;
  use?: Coding;
}

/** The columns (see the file comment); `kinds[0]` is the RAW kind's placeholder. */
export interface DesignationColumns {
  /** Rows of concept `ord`: off[ord]..off[ord+1]; empty when no concept has a designation (4 MB less at a
   * million concepts). */
  off: Int32Array;
  /** Index into `kinds` per row: 16-bit while there are at most 65,536 kinds. */
  kind: Uint16Array | Int32Array;
  value: StringColumn;
  kinds: DesignationKind[];
}

/** True when a value is a plain object of strings, numbers and booleans only (a Coding copied by a spread). */
function flatObject(v: unknown): v is Record<string, string | number | boolean> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  for (const x of Object.values(v as object)) {
    const t = typeof x;
    if (t !== 'string' && t !== 'number' && t !== 'boolean') return false;
  }
  return true;
}

/** The key order a kind's designation is made with (materialise() writes them so). */
const ORDER = ['language', 'use', 'value'];

/** True when the designation is `{language?, use?, value}` in that order, with a flat `use`. */
function regular(d: Designation): boolean {
  if (typeof d.value !== 'string') return false;
  if (d.language !== undefined && typeof d.language !== 'string') return false;
  if (d.use !== undefined && !flatObject(d.use)) return false;
  let at = 0;
  for (const k of Object.keys(d)) {
    const i = ORDER.indexOf(k, at);
    if (i < 0) return false;
    at = i + 1;
  }
  return true;
}

/** Builds DesignationColumns concept by concept. */
export class DesignationColumnsBuilder {
  private readonly off = new GrowI32(1024);
  private readonly kind = new GrowI32(1024);
  private readonly value = new StringColumnBuilder();
  private readonly kinds: DesignationKind[] = [{}];
  private readonly kindIds = new Map<string, number>();

  constructor() {
    this.off.push(0);
  }

  /** Adds the designations of the next concept (none: an empty range). */
  add(list: readonly Designation[] | null | undefined): void {
    for (const d of list ?? []) {
      if (!regular(d)) {
        this.kind.push(RAW_KIND);
        this.value.push(JSON.stringify(d));
        continue;
      }
      const key = JSON.stringify([d.language, d.use]);
      let k = this.kindIds.get(key);
      if (k === undefined) {
        k = this.kinds.length;
        const kind: DesignationKind = {};
        if (d.language !== undefined) kind.language = d.language;
        if (d.use !== undefined) kind.use = { ...d.use };
        this.kinds.push(kind);
        this.kindIds.set(key, k);
      }
      this.kind.push(k);
      this.value.push(d.value);
    }
    this.off.push(this.kind.n);
  }

  /** The columns (the builder must not be used afterwards). */
  done(): DesignationColumns {
    const kind32 = this.kind.done();
    return {
      off: this.kind.n > 0 ? this.off.done() : new Int32Array(0),
      kind: this.kinds.length <= 0x10000 ? Uint16Array.from(kind32) : kind32,
      value: this.value.done(),
      kinds: this.kinds,
    };
  }
}

/** The designations of concept `ord`, as new objects (empty when it has none). */
export function designationsAt(c: DesignationColumns, ord: number): Designation[] {
  if (c.off.length === 0) return [];
  const from = c.off[ord];
  const to = c.off[ord + 1];
  if (from === to) return [];
  const out: Designation[] = [];
  for (let r = from; r < to; r++) {
    const k = c.kind[r];
    if (k === RAW_KIND) {
      out.push(JSON.parse(c.value.get(r)!) as Designation);
      continue;
    }
    const kind = c.kinds[k];
    const d = {} as Designation;
    if (kind.language !== undefined) d.language = kind.language;
    // A copy: a caller may keep or change what it is given, as it could the objects indexes held before.
    if (kind.use !== undefined) d.use = { ...kind.use };
    d.value = c.value.get(r)!;
    out.push(d);
  }
  return out;
}

/** Bytes the columns hold. */
export function designationBytes(c: DesignationColumns): number {
  return c.off.byteLength + c.kind.byteLength + c.value.byteLength() + c.kinds.length * 200;
}
