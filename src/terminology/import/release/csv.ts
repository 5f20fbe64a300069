// CSV files of a release (LOINC's tables): RFC 4180 by csv-parse, read as a stream, the header's names checked
// once and each record handed over as a row that reads fields by name.
import { parse, CsvError } from 'csv-parse';
import { ReleaseFormatError, releaseFileName, type ReleaseFiles } from './types.js';

/** One record of a CSV file: its fields by column name ('' when the column is absent), and its line. */
export interface CsvRow {
  readonly line: number;
  get(column: string): string;
  /** A ReleaseFormatError at this record's field. */
  error(column: string, detail: string): ReleaseFormatError;
}

/** The records of a CSV file with a header line; `required` columns must be in the header. */
export async function* csvRows(
  files: ReleaseFiles,
  path: string,
  required: readonly string[],
): AsyncGenerator<CsvRow> {
  const where = releaseFileName(files, path);
  const parser = files.open(path).pipe(parse({ bom: true, info: true, skip_empty_lines: true }));
  let index: Map<string, number> | undefined;
  try {
    for await (const item of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      const { record, info } = item;
      if (!index) {
        index = new Map(record.map((name, i) => [name.trim(), i]));
        const missing = required.filter((c) => !index!.has(c));
        if (missing.length > 0)
          throw new ReleaseFormatError(where, info.lines, 1, `the header lacks ${missing.join(', ')}`);
        continue;
      }
      const columns = index;
      const line = info.lines;
      yield {
        line,
        get: (column) => {
          const i = columns.get(column);
          return i === undefined ? '' : (record[i] ?? '');
        },
        error: (column, detail) =>
          new ReleaseFormatError(where, line, (columns.get(column) ?? 0) + 1, `${column}: ${detail}`),
      };
    }
  } catch (err) {
    if (err instanceof CsvError) {
      const e = err as CsvError & { lines?: number; index?: number };
      throw new ReleaseFormatError(where, e.lines ?? 0, (e.index ?? 0) + 1, err.message);
    }
    throw err;
  } finally {
    parser.destroy();
  }
  if (!index) throw new ReleaseFormatError(where, 1, 1, 'the file is empty (no header line)');
}

/** The file of a release whose path ends with `name` (case-insensitive; at a folder boundary), if any. */
export function findFile(files: ReleaseFiles, name: string): string | undefined {
  const want = name.toLowerCase();
  return files
    .list()
    .filter((p) => {
      const l = p.toLowerCase();
      return l === want || l.endsWith(`/${want}`);
    })
    .sort((a, b) => a.length - b.length)[0];
}
