// The encoding characters of an HL7 v2 message and its escaping (part of the message model: see message.ts; runs
// on the host and inside the bot isolate, plain ECMAScript only).
import { decodeBytes } from './text.js';

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

/** What makes `text` unreadable as an MSH segment (its MSH-1 and MSH-2), or undefined when it reads. */
export function describeMshProblem(text: string): string | undefined {
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

/** The context an MSH segment declares, or undefined when it declares none that is valid. */
export function tryContextFromMsh(text: string): Hl7Context | undefined {
  if (describeMshProblem(text) !== undefined) return undefined;
  const fs = text[3];
  const encoding = text.slice(4, text.indexOf(fs, 4));
  return new Hl7Context('\r', fs, encoding[0], encoding[1] ?? '', encoding[2] ?? '', encoding[3] ?? '');
}
