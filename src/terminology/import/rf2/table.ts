// Reads one RF2 file line by line, on its bytes: tab-separated, CRLF (a bare LF is taken too), UTF-8, a header line
// naming the columns. A `Row` gives a line's fields, decoded only when asked, and checks them (SCTID, effective
// time, active flag); anything not as RF2 says is a ReleaseFormatError naming the file, line and column.
import { ReleaseFormatError, releaseFileName, type ReleaseFiles } from '../release/types.js';
import { sctidProblem, type Partition } from './sctid.js';

/** One line of an RF2 file (reused for the next line: take what you need before returning). */
export class Row {
  buf: Buffer = Buffer.alloc(0);
  /** 1-based line number. */
  line = 0;
  readonly starts: Int32Array;
  readonly ends: Int32Array;
  lineStart = 0;

  constructor(
    readonly file: string,
    readonly columns: readonly string[],
  ) {
    this.starts = new Int32Array(columns.length);
    this.ends = new Int32Array(columns.length);
  }

  /** A field as text (ASCII/Latin-1: identifiers, codes). */
  text(i: number): string {
    return this.buf.toString('latin1', this.starts[i], this.ends[i]);
  }

  /** A field as UTF-8 text (terms). */
  utf8(i: number): string {
    return this.buf.toString('utf8', this.starts[i], this.ends[i]);
  }

  /** A field's SCTID, checked (partition when given). */
  sctid(i: number, partition?: Partition): string {
    const problem = sctidProblem(this.buf, this.starts[i], this.ends[i], partition);
    if (problem) this.fail(i, `${this.columns[i]} "${this.text(i)}" ${problem}`);
    return this.text(i);
  }

  /** Whether a field holds exactly these ASCII bytes (no string made). */
  is(i: number, ascii: string): boolean {
    const s = this.starts[i];
    if (this.ends[i] - s !== ascii.length) return false;
    for (let k = 0; k < ascii.length; k++) if (this.buf[s + k] !== ascii.charCodeAt(k)) return false;
    return true;
  }

  /** The `active` field (column 3 of every RF2 file): 1 or 0. */
  active(i = 2): boolean {
    if (this.is(i, '1')) return true;
    if (this.is(i, '0')) return false;
    return this.fail(i, `active "${this.text(i)}" is not 0 or 1`);
  }

  /** An effective time (YYYYMMDD) as a number. */
  time(i = 1): number {
    const s = this.starts[i];
    let n = 0;
    if (this.ends[i] - s === 8) {
      for (let k = 0; k < 8; k++) {
        const d = this.buf[s + k] - 48;
        if (d < 0 || d > 9) {
          n = -1;
          break;
        }
        n = n * 10 + d;
      }
    } else n = -1;
    const month = Math.floor(n / 100) % 100;
    const day = n % 100;
    if (n < 19000101 || month < 1 || month > 12 || day < 1 || day > 31)
      this.fail(i, `${this.columns[i]} "${this.text(i)}" is not a date YYYYMMDD`);
    return n;
  }

  /** An integer field (relationshipGroup). */
  int(i: number): number {
    const s = this.starts[i];
    const len = this.ends[i] - s;
    let n = 0;
    for (let k = 0; k < len; k++) {
      const d = this.buf[s + k] - 48;
      if (d < 0 || d > 9) n = NaN;
      n = n * 10 + d;
    }
    if (len === 0 || len > 9 || Number.isNaN(n))
      this.fail(i, `${this.columns[i]} "${this.text(i)}" is not a whole number`);
    return n;
  }

  /** Throws the ReleaseFormatError of a field (column: its 1-based character position in the line). */
  fail(i: number, detail: string): never {
    const column = this.buf.toString('utf8', this.lineStart, this.starts[i]).length + 1;
    throw new ReleaseFormatError(this.file, this.line, column, detail);
  }
}

/** Calls `each` with every line after the header; returns the number of lines read. */
export async function readTable(
  files: ReleaseFiles,
  file: string,
  columns: readonly string[],
  each: (row: Row) => void,
): Promise<number> {
  // Messages name the file as the user knows it: inside the folder or zip given.
  const where = releaseFileName(files, file);
  const row = new Row(where, columns);
  const header = columns.join('\t');
  let rest: Buffer | undefined;
  let lineNo = 0;
  let rows = 0;
  const take = (buf: Buffer, start: number, end: number) => {
    lineNo++;
    if (end > start && buf[end - 1] === 13) end--;
    if (lineNo === 1) {
      let text = buf.toString('utf8', start, end);
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      if (text !== header) {
        const got = text.split('\t');
        const k = columns.findIndex((c, j) => got[j] !== c);
        const at = k < 0 ? columns.length : k;
        const column = got.slice(0, at).join('\t').length + (at > 0 ? 2 : 1);
        throw new ReleaseFormatError(
          where,
          1,
          column,
          `header is not RF2's: expected "${header.replaceAll('\t', ' ')}", got "${got.join(' ')}"`,
        );
      }
      return;
    }
    if (end === start) return;
    row.buf = buf;
    row.line = lineNo;
    row.lineStart = start;
    let s = start;
    const n = columns.length;
    for (let i = 0; i < n; i++) {
      const tab = i < n - 1 ? buf.indexOf(9, s) : -1;
      if (i < n - 1 && (tab < 0 || tab >= end)) {
        row.starts[i] = s;
        row.ends[i] = end;
        const column = buf.toString('utf8', start, end).length + 1;
        throw new ReleaseFormatError(where, lineNo, column, `${i + 1} columns, expected ${n}`);
      }
      row.starts[i] = s;
      row.ends[i] = i < n - 1 ? tab : end;
      s = tab + 1;
    }
    const extra = buf.indexOf(9, row.starts[n - 1]);
    if (extra >= 0 && extra < end) {
      let count = n;
      for (let k = extra; k >= 0 && k < end; k = buf.indexOf(9, k + 1)) count++;
      row.fail(n - 1, `${count} columns, expected ${n}`);
    }
    rows++;
    each(row);
  };
  for await (const chunk of files.open(file) as AsyncIterable<Buffer>) {
    const buf = rest ? Buffer.concat([rest, chunk]) : chunk;
    let start = 0;
    for (let nl = buf.indexOf(10, start); nl >= 0; nl = buf.indexOf(10, start)) {
      take(buf, start, nl);
      start = nl + 1;
    }
    rest = start < buf.length ? buf.subarray(start) : undefined;
  }
  if (rest) take(rest, 0, rest.length);
  if (lineNo === 0) throw new ReleaseFormatError(where, 1, 1, 'the file is empty (no header line)');
  return rows;
}
