// Concept properties of a code system index as columns instead of an object array per concept: per concept a range
// of rows (CSR offsets), per row the code (an interned string id), the value's type, the value (an interned string
// id, the integer, or 0/1) and the SNOMED CT relationship group. At SNOMED CT's size (~2.7 million properties:
// module, effective time, definition status, ~1 million attribute relationships, refset members) 13 bytes a row
// instead of an object each. A property of another shape (more keys, another order, a value of the wrong type) is
// kept whole, as its JSON (kind RAW), so every property reads back as it was given.
import { GrowI32, GrowU8 } from './compact.js';
import type { StringTable, StringTableBuilder } from './string-table.js';
import type { Coding, ConceptProperty } from './types.js';

/** Value types (the low bits of a row's kind). */
export const enum PropKind {
  /** value: string id of the property's JSON. */
  Raw = 0,
  Code = 1,
  String = 2,
  Boolean = 3,
  Integer = 4,
  /** value: string id of String(valueDecimal) (which reads back as the same number). */
  Decimal = 5,
  DateTime = 6,
  /** value: string id of the Coding's JSON. */
  Coding = 7,
}
/** The row has a `group` (in the group column). */
export const HAS_GROUP = 0x80;

const VALUE_KEYS: Record<string, PropKind> = {
  valueCode: PropKind.Code,
  valueString: PropKind.String,
  valueBoolean: PropKind.Boolean,
  valueInteger: PropKind.Integer,
  valueDecimal: PropKind.Decimal,
  valueDateTime: PropKind.DateTime,
  valueCoding: PropKind.Coding,
};
const KEY_OF: string[] = [];
for (const [k, v] of Object.entries(VALUE_KEYS)) KEY_OF[v] = k;

/** The columns (see the file comment). */
export interface PropertyColumns {
  /** Rows of concept `ord`: off[ord]..off[ord+1]; empty when no concept has a property (4 MB less at a million
   * concepts). */
  off: Int32Array;
  /** String id of the code (-1: the code is not a string; only in a RAW row). */
  code: Int32Array;
  kind: Uint8Array;
  value: Int32Array;
  /** 8-bit while every group is 0-255 (SNOMED CT's are small), else 32-bit. */
  group: Uint8Array | Int32Array;
}

/** The kind of a property when it has the regular shape `{code, value[x], group?}`, else RAW. */
function kindOf(p: ConceptProperty): number {
  const keys = Object.keys(p);
  if (keys.length < 2 || keys.length > 3 || keys[0] !== 'code' || typeof p.code !== 'string')
    return PropKind.Raw;
  const kind = VALUE_KEYS[keys[1]] ?? PropKind.Raw;
  const v = (p as unknown as Record<string, unknown>)[keys[1]];
  let ok: boolean;
  switch (kind) {
    case PropKind.Code:
    case PropKind.String:
    case PropKind.DateTime:
      ok = typeof v === 'string';
      break;
    case PropKind.Boolean:
      ok = typeof v === 'boolean';
      break;
    case PropKind.Integer:
      ok = typeof v === 'number' && (v | 0) === v && !Object.is(v, -0);
      break;
    case PropKind.Decimal:
      ok = typeof v === 'number' && Number.isFinite(v) && !Object.is(v, -0);
      break;
    case PropKind.Coding:
      ok = typeof v === 'object' && v !== null && !Array.isArray(v);
      break;
    default:
      ok = false;
  }
  if (!ok) return PropKind.Raw;
  if (keys.length === 2) return kind;
  const g = p.group;
  return keys[2] === 'group' && typeof g === 'number' && (g | 0) === g ? kind | HAS_GROUP : PropKind.Raw;
}

/** Builds PropertyColumns concept by concept, its strings into a shared StringTableBuilder. */
export class PropertyColumnsBuilder {
  private readonly off = new GrowI32(1024);
  private readonly code = new GrowI32(1024);
  private readonly kind = new GrowU8(1024);
  private readonly value = new GrowI32(1024);
  private readonly group = new GrowI32(1024);
  private smallGroups = true;

  constructor(private readonly strings: StringTableBuilder) {
    this.off.push(0);
  }

  /** Adds the properties of the next concept (none: an empty range). */
  add(list: readonly ConceptProperty[] | null | undefined): void {
    const s = this.strings;
    for (const p of list ?? []) {
      const kind = kindOf(p);
      this.code.push(typeof p.code === 'string' ? s.intern(p.code) : -1);
      this.kind.push(kind);
      const group = kind & HAS_GROUP ? p.group! : 0;
      if (group < 0 || group > 255) this.smallGroups = false;
      this.group.push(group);
      switch (kind & ~HAS_GROUP) {
        case PropKind.Raw:
          this.value.push(s.intern(JSON.stringify(p)));
          break;
        case PropKind.Code:
          this.value.push(s.intern(p.valueCode!));
          break;
        case PropKind.String:
          this.value.push(s.intern(p.valueString!));
          break;
        case PropKind.DateTime:
          this.value.push(s.intern(p.valueDateTime!));
          break;
        case PropKind.Boolean:
          this.value.push(p.valueBoolean ? 1 : 0);
          break;
        case PropKind.Integer:
          this.value.push(p.valueInteger!);
          break;
        case PropKind.Decimal:
          this.value.push(s.intern(String(p.valueDecimal)));
          break;
        case PropKind.Coding:
          this.value.push(s.intern(JSON.stringify(p.valueCoding)));
          break;
      }
    }
    this.off.push(this.code.n);
  }

  /** The columns (the builder must not be used afterwards). */
  done(): PropertyColumns {
    return {
      off: this.code.n > 0 ? this.off.done() : new Int32Array(0),
      code: this.code.done(),
      kind: this.kind.done(),
      value: this.value.done(),
      group: this.smallGroups ? Uint8Array.from(this.group.a.subarray(0, this.group.n)) : this.group.done(),
    };
  }
}

/** Reads property rows back (objects on demand, or single fields without making any). */
export class PropertyReader {
  constructor(
    readonly cols: PropertyColumns,
    readonly strings: StringTable,
  ) {}

  /** Property `r` as a new object, as it was given. */
  property(r: number): ConceptProperty {
    const kind = this.cols.kind[r];
    const v = this.cols.value[r];
    const base = kind & ~HAS_GROUP;
    if (base === PropKind.Raw) return JSON.parse(this.strings.get(v)) as ConceptProperty;
    const p = { code: this.strings.get(this.cols.code[r]) } as Record<string, unknown>;
    p[KEY_OF[base]] = this.value(base, v);
    if (kind & HAS_GROUP) p.group = this.cols.group[r];
    return p as unknown as ConceptProperty;
  }

  private value(base: number, v: number): unknown {
    switch (base) {
      case PropKind.Boolean:
        return v === 1;
      case PropKind.Integer:
        return v;
      case PropKind.Decimal:
        return Number(this.strings.get(v));
      case PropKind.Coding:
        return JSON.parse(this.strings.get(v)) as Coding;
      default:
        return this.strings.get(v);
    }
  }

  /** The properties of concept `ord` (empty when it has none). */
  propertiesOf(ord: number): ConceptProperty[] {
    const out: ConceptProperty[] = [];
    if (this.cols.off.length === 0) return out;
    const from = this.cols.off[ord];
    const to = this.cols.off[ord + 1];
    for (let r = from; r < to; r++) out.push(this.property(r));
    return out;
  }

  /** The string values of property `code` on a concept, for many concepts (the code is looked up once). */
  valueReader(code: string): (ord: number) => string[] {
    const id = this.strings.idOf(code);
    const { off, code: codes } = this.cols;
    return (ord) => {
      const out: string[] = [];
      if (id < 0 || off.length === 0) return out;
      for (let r = off[ord]; r < off[ord + 1]; r++) {
        if (codes[r] !== id) continue;
        const v = this.valueText(r);
        if (v !== undefined) out.push(v);
      }
      return out;
    };
  }

  /** Row r's value as a string, as a filter compares it (code, string, coding's code, dateTime, boolean, number),
   * or undefined when it has none of them. */
  valueText(r: number): string | undefined {
    const base = this.cols.kind[r] & ~HAS_GROUP;
    const v = this.cols.value[r];
    switch (base) {
      case PropKind.Code:
      case PropKind.String:
      case PropKind.DateTime:
      case PropKind.Decimal:
        return this.strings.get(v);
      case PropKind.Boolean:
        return v === 1 ? 'true' : 'false';
      case PropKind.Integer:
        return String(v);
      default:
        return textOf(this.property(r));
    }
  }

  /** Row r's `valueCode ?? valueCoding?.code` (what a relationship's destination is), without objects for a code. */
  codedValue(r: number): string | undefined {
    const base = this.cols.kind[r] & ~HAS_GROUP;
    if (base === PropKind.Code) return this.strings.get(this.cols.value[r]);
    if (base !== PropKind.Coding && base !== PropKind.Raw) return undefined;
    const p = this.property(r);
    return p.valueCode ?? p.valueCoding?.code;
  }

  /** Row r's relationship group (`group ?? 0`). */
  groupOf(r: number): number {
    const kind = this.cols.kind[r];
    if (kind & HAS_GROUP) return this.cols.group[r];
    return (kind & ~HAS_GROUP) === PropKind.Raw ? (this.property(r).group ?? 0) : 0;
  }

  /** Bytes the columns hold. */
  byteLength(): number {
    const c = this.cols;
    return c.off.byteLength + c.code.byteLength + c.kind.byteLength + c.value.byteLength + c.group.byteLength;
  }
}

/** A property's value as a filter compares it (see CodeSystemIndex.propertyValues). */
export function textOf(p: ConceptProperty): string | undefined {
  return (
    p.valueCode ??
    p.valueString ??
    p.valueCoding?.code ??
    p.valueDateTime ??
    (p.valueBoolean !== undefined ? String(p.valueBoolean) : undefined) ??
    (p.valueInteger !== undefined ? String(p.valueInteger) : undefined) ??
    (p.valueDecimal !== undefined ? String(p.valueDecimal) : undefined)
  );
}
