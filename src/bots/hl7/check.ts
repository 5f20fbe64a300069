// The server's check of an HL7 v2 body before it reaches a bot: the same refusals as parseHl7Message (400 on
// Hl7ParseError), but it builds no message. It reads MSH-1 through MSH-9 and the first characters of each segment,
// so its cost is one linear scan with no allocation per field: a body of millions of separators cannot hold the
// event loop (the full parse happens in the bot's isolate, under the bot's time and memory limits).
import { Hl7Message, Hl7ParseError, Hl7Segment } from './message.js';

const SEGMENT_NAME = /^[A-Z][A-Z0-9]{2}$/;

/** Throws Hl7ParseError when `text` is not an HL7 v2 message parseHl7Message (default options) would accept. */
export function checkHl7Message(text: string): void {
  // Same refusals as Hl7Message.parse for a wrong start (from a bounded slice: the text may be huge).
  if (typeof text !== 'string') Hl7Message.parse(text);
  if (!text.startsWith('MSH')) Hl7Message.parse(text.slice(0, 100));
  const lines = new LineEnds(text);
  const header = text.slice(0, lines.next(0));
  // Hl7Message.parse checks the encoding characters; MSH-1..MSH-9 are read from a bounded prefix.
  const context = Hl7Message.parse(mshPrefix(header, 12)).context;
  const msh = Hl7Segment.parse(mshPrefix(header, 10), context);
  if (msh.fields.length < 9) {
    throw new Hl7ParseError(
      `Invalid HL7 message: MSH segment is too short: it has ${msh.fields.length} fields, at least 9 (through MSH-9) are required`,
    );
  }
  if (msh.getComponent(9, 1) === '')
    throw new Hl7ParseError('Invalid HL7 message: MSH-9 (message type) is empty');
  const fs = context.fieldSeparator;
  let start = 0;
  let segment = 0;
  while (start < text.length) {
    const end = lines.next(start);
    if (end > start) {
      segment++;
      // The name is the text before the first field separator; only its first characters matter.
      let name = text.slice(start, Math.min(end, start + 21));
      const cut = name.indexOf(fs);
      if (cut >= 0) name = name.slice(0, cut);
      if (!SEGMENT_NAME.test(name)) {
        throw new Hl7ParseError(
          `Invalid HL7 message: segment ${segment} has an invalid name ${JSON.stringify(name.slice(0, 20))} (expected three upper-case letters or digits)`,
        );
      }
    }
    start = end + (text[end] === '\r' && text[end + 1] === '\n' ? 2 : 1);
  }
}

/** Finds line ends (\r or \n) left to right; each search resumes where the last stopped, so a scan is linear. */
class LineEnds {
  private r = -1;
  private n = -1;
  constructor(private readonly text: string) {}

  /** The index of the next \r or \n at or after `from` (text.length if none); `from` never decreases. */
  next(from: number): number {
    if (this.r !== Infinity && this.r < from) this.r = this.find('\r', from);
    if (this.n !== Infinity && this.n < from) this.n = this.find('\n', from);
    return Math.min(this.r, this.n, this.text.length);
  }

  private find(c: string, from: number): number {
    const i = this.text.indexOf(c, from);
    return i < 0 ? Infinity : i;
  }
}

/** The MSH line up to (not including) its `count`-th field separator. */
function mshPrefix(line: string, count: number): string {
  const fs = line[3];
  if (fs === undefined) return line;
  let at = 3;
  for (let i = 1; i < count; i++) {
    const next = line.indexOf(fs, at + 1);
    if (next < 0) return line;
    at = next;
  }
  return line.slice(0, at);
}
