// HL7 v2 (ER7, "pipe and hat") message model, API-compatible with @medplum/core's Hl7Message / Hl7Segment /
// Hl7Field / Hl7Context so Medplum HL7 bots run unmodified.
//
// This file runs both on the host (Node) and inside the bot isolate (isolated-vm), which only has plain
// ECMAScript: no imports, no Node globals (Buffer, process), no Web APIs (TextDecoder). Keep it that way.
//
// Index conventions (identical to Medplum):
//   message.getSegment(i)                  0-based; segment 0 is MSH. A string argument finds the first by name.
//   segment.getField(i)                    1-based (field 0 is the segment name). On MSH, getField(1) is the
//                                          field separator and getField(2) the encoding characters (MSH-2).
//   field.getComponent(c, sub?, rep = 0)   component 1-based, subcomponent 0-based, repetition 0-based.
//   segment.getComponent(f, c, sub?, rep)  shortcut for getField(f).getComponent(c, sub, rep).
// Getters return raw (still escaped) text like Medplum; the *Decoded variants resolve escape sequences.

export const AckCode = {
  /** AA - Application Accept */
  AA: 'AA',
  /** AE - Application Error */
  AE: 'AE',
  /** AR - Application Reject */
  AR: 'AR',
  /** CA - Commit Accept */
  CA: 'CA',
  /** CE - Commit Error */
  CE: 'CE',
  /** CR - Commit Reject */
  CR: 'CR',
} as const;
export type AckCode = keyof typeof AckCode;

export function isAckCode(value: string | undefined): value is AckCode {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(AckCode, value);
}

const ACK_TEXT: Record<AckCode, string> = {
  AA: 'OK',
  AE: 'Application Error',
  AR: 'Application Reject',
  CA: 'Commit Accept',
  CE: 'Commit Error',
  CR: 'Commit Reject',
};

export interface Hl7AckOptions {
  /** MSA-1. Defaults to AA. (Required in Medplum's type, optional here.) */
  ackCode?: AckCode;
  /** Optional ERR segment appended after MSA. */
  errSegment?: Hl7Segment;
  /** MSA-3 as plain text (escaped for you). Defaults to Medplum's text for the code, e.g. "OK" for AA. */
  text?: string;
  /** MSH-10 of the ACK (raw). Defaults to a new unique numeric id. */
  controlId?: string;
  /** Timestamp for MSH-7. Defaults to now. */
  now?: Date;
}

export interface Hl7DateParseOptions {
  /** Default timezone offset when the value has none, e.g. "-0500". */
  tzOffset?: string;
}

export interface Hl7ParseOptions {
  /** Minimum number of MSH fields (MSH-1 is the field separator). Default 9: MSH-9, the message type. */
  minMshFields?: number;
  /** Reject segments whose name is not three upper-case letters/digits. Default true. */
  validateSegmentNames?: boolean;
}

/** Thrown for text that is not an HL7 v2 message. `type` matches Medplum's parse error marker. */
export class Hl7ParseError extends Error {
  readonly type = 'entity.parse.failed';

  constructor(message: string) {
    super(message);
    this.name = 'Hl7ParseError';
  }
}

function splitOn(text: string, separator: string): string[] {
  return separator === '' ? [text] : text.split(separator);
}

function isIndex(value: number): boolean {
  return Number.isInteger(value) && value >= 0;
}

function latin1(bytes: number[]): string {
  let out = '';
  for (const b of bytes) out += String.fromCharCode(b);
  return out;
}

/** Decodes bytes as UTF-8 when they are valid UTF-8, otherwise as ISO-8859-1 (no TextDecoder in the isolate). */
function decodeBytes(bytes: number[]): string {
  let out = '';
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i];
    if (lead < 0x80) {
      out += String.fromCharCode(lead);
      i++;
      continue;
    }
    let extra: number;
    let cp: number;
    if (lead >= 0xc2 && lead <= 0xdf) {
      extra = 1;
      cp = lead & 0x1f;
    } else if (lead >= 0xe0 && lead <= 0xef) {
      extra = 2;
      cp = lead & 0x0f;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      extra = 3;
      cp = lead & 0x07;
    } else {
      return latin1(bytes);
    }
    if (i + extra >= bytes.length) return latin1(bytes);
    for (let k = 1; k <= extra; k++) {
      const next = bytes[i + k];
      if ((next & 0xc0) !== 0x80) return latin1(bytes);
      cp = (cp << 6) | (next & 0x3f);
    }
    const overlong = (extra === 2 && cp < 0x800) || (extra === 3 && cp < 0x10000);
    if (overlong || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return latin1(bytes);
    out += String.fromCodePoint(cp);
    i += extra + 1;
  }
  return out;
}

/**
 * The encoding characters of a message (MSH-1 and MSH-2). A character missing from a short MSH-2 is ''
 * (nothing is split on it).
 */
export class Hl7Context {
  readonly segmentSeparator: string;
  readonly fieldSeparator: string;
  readonly componentSeparator: string;
  readonly repetitionSeparator: string;
  readonly escapeCharacter: string;
  readonly subcomponentSeparator: string;

  constructor(
    segmentSeparator = '\r',
    fieldSeparator = '|',
    componentSeparator = '^',
    repetitionSeparator = '~',
    escapeCharacter = '\\',
    subcomponentSeparator = '&',
  ) {
    this.segmentSeparator = segmentSeparator;
    this.fieldSeparator = fieldSeparator;
    this.componentSeparator = componentSeparator;
    this.repetitionSeparator = repetitionSeparator;
    this.escapeCharacter = escapeCharacter;
    this.subcomponentSeparator = subcomponentSeparator;
  }

  /** The MSH-1 value (field separator). */
  getMsh1(): string {
    return this.fieldSeparator;
  }

  /** The MSH-2 value (component, repetition, escape and subcomponent characters). */
  getMsh2(): string {
    return (
      this.componentSeparator + this.repetitionSeparator + this.escapeCharacter + this.subcomponentSeparator
    );
  }

  /**
   * Resolves escape sequences: \F\ \S\ \T\ \R\ \E\ become the literal separators, \Xhh..\ becomes the
   * characters of those bytes (UTF-8 if valid, else ISO-8859-1). Formatting and charset sequences
   * (\.br\, \H\, \N\, \Cxxyy\, \Mxxyyzz\, \Zxx\) and unterminated escapes are left as they are.
   */
  unescape(value: string): string {
    const esc = this.escapeCharacter;
    if (esc === '' || !value.includes(esc)) return value;
    let out = '';
    let pos = 0;
    while (pos < value.length) {
      const start = value.indexOf(esc, pos);
      if (start < 0) {
        out += value.slice(pos);
        break;
      }
      out += value.slice(pos, start);
      const end = value.indexOf(esc, start + 1);
      if (end < 0) {
        out += value.slice(start);
        break;
      }
      const decoded = this.decodeSequence(value.slice(start + 1, end));
      out += decoded ?? value.slice(start, end + 1);
      pos = end + 1;
    }
    return out;
  }

  /**
   * Escapes plain text for use as a component or subcomponent value: separators and the escape character
   * become \F\ \S\ \T\ \R\ \E\, and CR / LF become \X0D\ / \X0A\.
   */
  escape(value: string): string {
    const esc = this.escapeCharacter;
    if (esc === '') return value;
    const table: Record<string, string> = {};
    const add = (char: string, code: string): void => {
      if (char !== '') table[char] = esc + code + esc;
    };
    add(this.subcomponentSeparator, 'T');
    add(this.repetitionSeparator, 'R');
    add(this.componentSeparator, 'S');
    add(this.fieldSeparator, 'F');
    add('\r', 'X0D');
    add('\n', 'X0A');
    add(esc, 'E');
    let out = '';
    for (const char of value) out += Object.prototype.hasOwnProperty.call(table, char) ? table[char] : char;
    return out;
  }

  private decodeSequence(sequence: string): string | undefined {
    const simple: Record<string, string> = {
      F: this.fieldSeparator,
      S: this.componentSeparator,
      T: this.subcomponentSeparator,
      R: this.repetitionSeparator,
      E: this.escapeCharacter,
    };
    if (sequence.length === 1 && Object.prototype.hasOwnProperty.call(simple, sequence)) {
      return simple[sequence] === '' ? undefined : simple[sequence];
    }
    if (/^X(?:[0-9A-Fa-f]{2})+$/.test(sequence)) {
      const bytes: number[] = [];
      for (let i = 1; i < sequence.length; i += 2) bytes.push(parseInt(sequence.slice(i, i + 2), 16));
      return decodeBytes(bytes);
    }
    return undefined;
  }
}

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

let controlIdCounter = 0;

function newControlId(now: Date): string {
  controlIdCounter = (controlIdCounter + 1) % 1000;
  return now.getTime().toString() + controlIdCounter.toString().padStart(3, '0');
}

/** One HL7 message: a list of segments sharing a context. */
export class Hl7Message {
  readonly context: Hl7Context;
  private readonly _segments: Hl7Segment[];
  /** For parsed messages: the normalised source text and its segments joined, to return it verbatim. */
  private source?: { text: string; joined: string; trailingSeparator: boolean };

  constructor(segments: (Hl7Segment | string)[], context: Hl7Context = new Hl7Context()) {
    this.context = context;
    this._segments = segments.map((s) => (typeof s === 'string' ? Hl7Segment.parse(s, context) : s));
  }

  get segments(): Hl7Segment[] {
    return this._segments;
  }

  /** The first segment (MSH). */
  get header(): Hl7Segment {
    const header = this._segments[0];
    if (!header) throw new Error("Can't get header before first segment added");
    return header;
  }

  /** @deprecated Use getSegment. */
  get(index: number | string): Hl7Segment | undefined {
    return this.getSegment(index);
  }

  /** @deprecated Use getAllSegments. */
  getAll(name: string): Hl7Segment[] {
    return this.getAllSegments(name);
  }

  /** Segment by 0-based position (0 is MSH), or the first segment with that name. */
  getSegment(index: number | string): Hl7Segment | undefined {
    if (typeof index === 'number') return this._segments[index];
    return this._segments.find((s) => s.name === index);
  }

  getAllSegments(name: string): Hl7Segment[] {
    return this._segments.filter((s) => s.name === name);
  }

  /**
   * The message text, segments separated by `\r`. An unmodified parsed message returns its source exactly
   * (with `\n` and `\r\n` separators normalised to `\r`).
   */
  toString(): string {
    const sep = this.context.segmentSeparator;
    const joined = this._segments.map((s) => s.toString()).join(sep);
    if (this.source) {
      if (joined === this.source.joined) return this.source.text;
      if (this.source.trailingSeparator) return joined + sep;
    }
    return joined;
  }

  /** MSA-1 upper-cased when it is a known ACK code, else undefined. */
  getAckType(): AckCode | undefined {
    const code = this.getSegment('MSA')?.getField(1)?.toString().toUpperCase();
    return isAckCode(code) ? code : undefined;
  }

  /**
   * An ACK for this message: MSH with sending/receiving application and facility swapped, MSH-7 now,
   * MSH-9 ACK^<trigger>[^ACK] mirroring this message, a new MSH-10, MSH-11/MSH-12 copied (defaults P and 2.5.1);
   * MSA with the code, this message's control id and a text; then options.errSegment if given.
   */
  buildAck(options?: Hl7AckOptions): Hl7Message {
    const ackCode = options?.ackCode ?? 'AA';
    if (!isAckCode(ackCode)) throw new Error(`Invalid HL7 ACK code: ${String(ackCode)}`);
    const ctx = this.context;
    const now = options?.now ?? new Date();
    const msh = this.getSegment('MSH');
    const field = (index: number): string => msh?.getField(index)?.toString() ?? '';
    const trigger = msh?.getComponent(9, 2) ?? '';
    const structure = msh?.getComponent(9, 3) ?? '';
    const comp = ctx.componentSeparator;
    let messageType = 'ACK';
    if (trigger && structure) messageType = `ACK${comp}${trigger}${comp}ACK`;
    else if (trigger) messageType = `ACK${comp}${trigger}`;

    const header = new Hl7Segment(
      [
        'MSH',
        msh ? field(2) : ctx.getMsh2(),
        field(5),
        field(6),
        field(3),
        field(4),
        formatHl7DateTime(now),
        '',
        messageType,
        options?.controlId ?? newControlId(now),
        field(11) || 'P',
        field(12) || '2.5.1',
      ],
      ctx,
    );
    const text = options?.text !== undefined ? ctx.escape(options.text) : ACK_TEXT[ackCode];
    const msa = new Hl7Segment(['MSA', ackCode, field(10), text], ctx);
    return new Hl7Message(options?.errSegment ? [header, msa, options.errSegment] : [header, msa], ctx);
  }

  /** Replaces a segment by position or first name match, or appends past the end. MSH only at position 0. */
  setSegment(index: number | string, segment: Hl7Segment): boolean {
    let position: number;
    if (typeof index === 'number') {
      if (!isIndex(index)) return false;
      position = Math.min(index, this._segments.length);
    } else {
      position = this._segments.findIndex((s) => s.name === index);
      if (position < 0) return false;
    }
    if ((position === 0) !== (segment.name === 'MSH')) return false;
    this._segments[position] = segment;
    return true;
  }

  /**
   * Parses ER7 text. Segments may be separated by `\r`, `\n` or `\r\n`; encoding characters come from MSH-1
   * and MSH-2. Throws Hl7ParseError unless the text starts with an MSH segment with valid encoding characters.
   */
  static parse(text: string): Hl7Message {
    const input: unknown = text;
    if (typeof input !== 'string') {
      throw new Hl7ParseError(
        `Invalid HL7 message: expected a string, got ${input === null ? 'null' : typeof input}`,
      );
    }
    if (!text.startsWith('MSH')) {
      throw new Hl7ParseError(
        text.trim() === ''
          ? 'Invalid HL7 message: the message is empty'
          : `Invalid HL7 message: it must start with an MSH segment, but starts with ${JSON.stringify(text.slice(0, 20))}`,
      );
    }
    const context = contextFromMsh(text);
    const lines = text.split(/\r\n|\r|\n/);
    const segments = lines.filter((line) => line !== '');
    const message = new Hl7Message(segments, context);
    message.source = {
      text: lines.join('\r'),
      joined: segments.join('\r'),
      trailingSeparator: lines.length > 1 && lines[lines.length - 1] === '',
    };
    return message;
  }

  /** True for an Hl7Message of this library, or any object shaped like one (e.g. a bot's bundled Medplum copy). */
  static isHl7Message(value: unknown): value is Hl7Message {
    if (value instanceof Hl7Message) return true;
    if (typeof value !== 'object' || value === null) return false;
    const v = value as Record<string, unknown>;
    const context = v.context as Record<string, unknown> | undefined;
    return (
      typeof v.getSegment === 'function' &&
      typeof v.buildAck === 'function' &&
      typeof v.toString === 'function' &&
      typeof context === 'object' &&
      context !== null &&
      typeof context.fieldSeparator === 'string'
    );
  }
}

function describeMshProblem(text: string): string | undefined {
  const lineEnd = text.search(/[\r\n]/);
  const line = lineEnd < 0 ? text : text.slice(0, lineEnd);
  if (line.length < 4) return 'MSH segment is too short: missing the field separator (MSH-1)';
  const fs = line[3];
  const end = line.indexOf(fs, 4);
  if (end < 0) {
    return 'MSH segment is too short: the encoding characters (MSH-2) must be followed by a field separator';
  }
  const encoding = line.slice(4, end);
  if (encoding.length === 0) return 'MSH-2 (encoding characters) is empty';
  if (encoding.length > 5) {
    return `MSH-2 (encoding characters) must be 1 to 5 characters, got ${JSON.stringify(encoding)}`;
  }
  const chars = [fs, ...encoding];
  if (new Set(chars).size !== chars.length) {
    return `MSH-1 and MSH-2 encoding characters must all be different, got ${JSON.stringify(fs + encoding)}`;
  }
  return undefined;
}

function tryContextFromMsh(text: string): Hl7Context | undefined {
  if (describeMshProblem(text) !== undefined) return undefined;
  const fs = text[3];
  const encoding = text.slice(4, text.indexOf(fs, 4));
  return new Hl7Context('\r', fs, encoding[0], encoding[1] ?? '', encoding[2] ?? '', encoding[3] ?? '');
}

function contextFromMsh(text: string): Hl7Context {
  const problem = describeMshProblem(text);
  if (problem !== undefined) throw new Hl7ParseError(`Invalid HL7 message: ${problem}`);
  return tryContextFromMsh(text) as Hl7Context;
}

/**
 * Validating parse for untrusted input (the server answers 400 on Hl7ParseError): Hl7Message.parse, plus an
 * MSH with at least `minMshFields` fields and a message type (MSH-9), and well-formed segment names.
 */
export function parseHl7Message(text: string, options?: Hl7ParseOptions): Hl7Message {
  const message = Hl7Message.parse(text);
  const header = message.header;
  const minFields = options?.minMshFields ?? 9;
  // fields[0] is "MSH" and fields[k] is MSH-(k+1), so the last MSH field number is fields.length.
  if (header.fields.length < minFields) {
    throw new Hl7ParseError(
      `Invalid HL7 message: MSH segment is too short: it has ${header.fields.length} fields, at least ${minFields} (through MSH-${minFields}) are required`,
    );
  }
  if (minFields >= 9 && header.getComponent(9, 1) === '') {
    throw new Hl7ParseError('Invalid HL7 message: MSH-9 (message type) is empty');
  }
  if (options?.validateSegmentNames ?? true) {
    message.segments.forEach((segment, i) => {
      if (!/^[A-Z][A-Z0-9]{2}$/.test(segment.name)) {
        throw new Hl7ParseError(
          `Invalid HL7 message: segment ${i + 1} has an invalid name ${JSON.stringify(segment.name.slice(0, 20))} (expected three upper-case letters or digits)`,
        );
      }
    });
  }
  return message;
}

/** See Hl7Message.isHl7Message. */
export function isHl7Message(value: unknown): value is Hl7Message {
  return Hl7Message.isHl7Message(value);
}

/**
 * HL7 date/time (YYYY[MM[DD[HH[MM[SS[.S[S[S[S]]]]]]]]][+/-ZZZZ]) to an ISO-8601 UTC string; undefined for an
 * empty or malformed value. Without an offset in the value, options.tzOffset (else UTC) is assumed.
 */
export function parseHl7DateTime(
  hl7DateTime: string | undefined,
  options?: Hl7DateParseOptions,
): string | undefined {
  if (!hl7DateTime) return undefined;
  const m = /^(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?(?:\.(\d{1,4}))?([+-]\d{2}:?\d{2})?$/.exec(
    hl7DateTime.trim(),
  );
  if (!m) return undefined;
  const num = (s: string | undefined, fallback: number): number => (s === undefined ? fallback : Number(s));
  const date = new Date(0);
  date.setUTCFullYear(num(m[1], 0), num(m[2], 1) - 1, num(m[3], 1));
  const ms = m[7] === undefined ? 0 : Math.round(Number('0.' + m[7]) * 1000);
  date.setUTCHours(num(m[4], 0), num(m[5], 0), num(m[6], 0), ms);
  const offset = m[8] ?? options?.tzOffset;
  let offsetMs = 0;
  if (offset) {
    const o = /^([+-])(\d{2}):?(\d{2})$/.exec(offset);
    if (o) offsetMs = (o[1] === '-' ? -1 : 1) * (Number(o[2]) * 60 + Number(o[3])) * 60_000;
  }
  return new Date(date.getTime() - offsetMs).toISOString();
}

/** A Date or ISO string to HL7 YYYYMMDDHHMMSS[.SSS] in UTC (no offset), as Medplum does. */
export function formatHl7DateTime(isoDate: Date | string): string {
  const date = isoDate instanceof Date ? isoDate : new Date(isoDate);
  if (Number.isNaN(date.getTime())) throw new RangeError('Invalid time value');
  const pad = (n: number, width = 2): string => n.toString().padStart(width, '0');
  let result =
    pad(date.getUTCFullYear(), 4) +
    pad(date.getUTCMonth() + 1) +
    pad(date.getUTCDate()) +
    pad(date.getUTCHours()) +
    pad(date.getUTCMinutes()) +
    pad(date.getUTCSeconds());
  const ms = date.getUTCMilliseconds();
  if (ms > 0) result += '.' + pad(ms, 3);
  return result;
}
