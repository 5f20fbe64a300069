// HL7 v2 fields and segments (part of the message model: see message.ts for the index conventions; runs on the
// host and inside the bot isolate, plain ECMAScript only).
import { Hl7Context, tryContextFromMsh } from './context.js';
import { isIndex, splitOn } from './text.js';

/** One HL7 field: `components[repetition][component - 1]`, each value raw (escaped, subcomponents joined). */
export class Hl7Field {
  readonly context: Hl7Context;
  readonly components: string[][];

  constructor(components: string[][], context: Hl7Context = new Hl7Context()) {
    this.context = context;
    this.components = components;
  }

  /** @deprecated Medplum's 0-based variant: get(c) is getComponent(c + 1). */
  get(component: number, subcomponent?: number, repetition = 0): string {
    return this.getComponent(component + 1, subcomponent, repetition);
  }

  /**
   * Raw value of a component (1-based), optionally one subcomponent (0-based) of a repetition (0-based).
   * Missing positions give ''. Without `subcomponent` the whole component is returned, subcomponent
   * separators included.
   */
  getComponent(component: number, subcomponent?: number, repetition = 0): string {
    const value = this.components[repetition]?.[component - 1] ?? '';
    if (subcomponent === undefined) return value;
    return splitOn(value, this.context.subcomponentSeparator)[subcomponent] ?? '';
  }

  /** Like getComponent, with escape sequences resolved (see Hl7Context.unescape). */
  getComponentDecoded(component: number, subcomponent?: number, repetition = 0): string {
    return this.context.unescape(this.getComponent(component, subcomponent, repetition));
  }

  toString(): string {
    return this.components
      .map((r) => r.join(this.context.componentSeparator))
      .join(this.context.repetitionSeparator);
  }

  /** Sets a raw component value (use context.escape for plain text), adding repetitions/components as needed. */
  setComponent(component: number, value: string, subcomponent?: number, repetition = 0): boolean {
    if (!isIndex(component) || component < 1 || !isIndex(repetition)) return false;
    if (subcomponent !== undefined && !isIndex(subcomponent)) return false;
    const sub = this.context.subcomponentSeparator;
    if (subcomponent !== undefined && subcomponent > 0 && sub === '') return false;
    while (this.components.length <= repetition) this.components.push(['']);
    const rep = this.components[repetition];
    while (rep.length < component) rep.push('');
    if (subcomponent === undefined) {
      rep[component - 1] = value;
    } else {
      const parts = splitOn(rep[component - 1], sub);
      while (parts.length <= subcomponent) parts.push('');
      parts[subcomponent] = value;
      rep[component - 1] = parts.join(sub);
    }
    return true;
  }

  static parse(text: string, context: Hl7Context = new Hl7Context()): Hl7Field {
    return new Hl7Field(
      splitOn(text, context.repetitionSeparator).map((r) => splitOn(r, context.componentSeparator)),
      context,
    );
  }
}

/** One HL7 segment. `fields[0]` is the name; on MSH `fields[1]` is MSH-2 (see getField for numbering). */
export class Hl7Segment {
  readonly context: Hl7Context;
  readonly name: string;
  private readonly _fields: Hl7Field[];

  constructor(fields: (Hl7Field | string)[], context: Hl7Context = new Hl7Context()) {
    this.context = context;
    const first = fields[0];
    this.name =
      first === undefined ? '' : typeof first === 'string' ? first : (first.components[0]?.[0] ?? '');
    this._fields = fields.map((f, i) => {
      if (typeof f !== 'string') return f;
      // MSH-2 holds the encoding characters themselves: never split it.
      if (i === 1 && this.name === 'MSH') return new Hl7Field([[f]], context);
      return Hl7Field.parse(f, context);
    });
  }

  /** All fields, index 0 being the segment name (no MSH renumbering). */
  get fields(): Hl7Field[] {
    return this._fields;
  }

  /** @deprecated Medplum's raw-index variant: get(i) is fields[i], without MSH renumbering. */
  get(index: number): Hl7Field | undefined {
    return this._fields[index];
  }

  /**
   * Field by 1-based HL7 number (PID-5 is getField(5)); 0 is the segment name. On MSH, getField(1) is the
   * field separator, getField(2) the encoding characters (both copies) and getField(n) is MSH-n. Returns
   * undefined past the last field (as Medplum does at runtime).
   */
  getField(index: number): Hl7Field | undefined {
    if (this.name === 'MSH') {
      if (index === 1) return new Hl7Field([[this.context.fieldSeparator]], this.context);
      if (index === 2) {
        const raw = this._fields[1]?.toString() ?? this.context.getMsh2();
        return new Hl7Field([[raw]], this.context);
      }
      if (index > 2) return this._fields[index - 1];
    }
    return this._fields[index];
  }

  /** Raw value: getField(fieldIndex).getComponent(component, subcomponent, repetition), '' when missing. */
  getComponent(fieldIndex: number, component: number, subcomponent?: number, repetition = 0): string {
    return this.getField(fieldIndex)?.getComponent(component, subcomponent, repetition) ?? '';
  }

  /** Like getComponent, with escape sequences resolved. */
  getComponentDecoded(fieldIndex: number, component: number, subcomponent?: number, repetition = 0): string {
    return this.context.unescape(this.getComponent(fieldIndex, component, subcomponent, repetition));
  }

  toString(): string {
    return this._fields.map((f) => f.toString()).join(this.context.fieldSeparator);
  }

  /** Sets field `index` (same numbering as getField), padding with empty fields. MSH-1/MSH-2 are read-only. */
  setField(index: number, field: Hl7Field | string): boolean {
    if (!isIndex(index)) return false;
    let position = index;
    if (this.name === 'MSH') {
      if (index === 1 || index === 2) return false;
      if (index > 2) position = index - 1;
    }
    while (this._fields.length <= position) this._fields.push(new Hl7Field([['']], this.context));
    this._fields[position] = typeof field === 'string' ? Hl7Field.parse(field, this.context) : field;
    return true;
  }

  /** Sets a raw component value; creates the field if the segment is shorter. */
  setComponent(
    fieldIndex: number,
    component: number,
    value: string,
    subcomponent?: number,
    repetition = 0,
  ): boolean {
    if (this.name === 'MSH' && (fieldIndex === 1 || fieldIndex === 2)) return false;
    let field = this.getField(fieldIndex);
    if (!field) {
      if (!this.setField(fieldIndex, new Hl7Field([['']], this.context))) return false;
      field = this.getField(fieldIndex) as Hl7Field;
    }
    return field.setComponent(component, value, subcomponent, repetition);
  }

  /** Splits segment text on the context's field separator. Without a context, an MSH reads its own MSH-1/2. */
  static parse(text: string, context?: Hl7Context): Hl7Segment {
    const ctx = context ?? (text.startsWith('MSH') ? tryContextFromMsh(text) : undefined) ?? new Hl7Context();
    return new Hl7Segment(splitOn(text, ctx.fieldSeparator), ctx);
  }
}
