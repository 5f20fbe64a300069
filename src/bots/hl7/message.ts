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

import { describeMshProblem, Hl7Context, tryContextFromMsh } from './context.js';
import { Hl7Segment } from './segment.js';
import { isIndex } from './text.js';

// The whole model is published from this file (the bot isolate's globals: isolate-entry.ts).
export { Hl7Context } from './context.js';
export { Hl7Field, Hl7Segment } from './segment.js';

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
