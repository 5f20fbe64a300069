// The synthetic RF2 release of the rf2 tests (scripts/gen-rf2.mjs --size test), generated into a temporary folder,
// and the samples the generator reports (expected.json).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { ROOT } from '../../../helpers/paths.js';

export interface Rf2Samples {
  date: string;
  samples: {
    multiParent: { code: string; parents: string[]; display: string };
    enGb: { code: string; display: string; gbDisplay: string };
    grouped: { code: string; attributes: Array<{ type: string; value: string; group: number }> };
    synonyms: { code: string; display: string; fsn: string; synonyms: string[] };
    nonAscii: { code: string; display: string };
    refset: { code: string; refset: string };
    definition: { code: string; display: string };
    inactive: { code: string; display: string };
  };
  refsets: Record<string, number>;
  counts: { concepts: number; active: number; inactive: number; findingSubtree: number };
}

/** Generates the small release into a new temporary folder: its path and samples. `args`: more generator options
 * (`--date`, `--concepts`). */
export function generateRf2(
  into = fs.mkdtempSync(path.join(os.tmpdir(), 'rf2-')),
  args: string[] = [],
): {
  dir: string;
  expected: Rf2Samples;
} {
  execFileSync(process.execPath, [
    path.join(ROOT, 'scripts/gen-rf2.mjs'),
    '--out',
    into,
    '--size',
    'test',
    ...args,
  ]);
  const expected = JSON.parse(fs.readFileSync(path.join(into, 'expected.json'), 'utf8')) as Rf2Samples;
  fs.rmSync(path.join(into, 'expected.json'));
  return { dir: into, expected };
}

/** A copy of a release folder with one line of one table replaced (1-based line, header = 1). */
export function withLine(dir: string, table: RegExp, line: number, edit: (text: string) => string): string {
  const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'rf2-bad-'));
  fs.cpSync(dir, copy, { recursive: true });
  const file = (fs.readdirSync(copy, { recursive: true }) as string[]).find((f) => table.test(f));
  if (!file) throw new Error(`no file ${table}`);
  const full = path.join(copy, file);
  const lines = fs.readFileSync(full, 'utf8').split('\r\n');
  lines[line - 1] = edit(lines[line - 1]);
  fs.writeFileSync(full, lines.join('\r\n'));
  return copy;
}

/** Zips a folder (deflate, as releases are published) into `file`, its paths under `prefix/` (a release zip's top
 * folder). A minimal writer: local headers, central directory, end record. */
export function zipFolder(dir: string, file: string, prefix: string): void {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  const names = (fs.readdirSync(dir, { recursive: true }) as string[]).filter((f) =>
    fs.statSync(path.join(dir, f)).isFile(),
  );
  for (const rel of names.sort()) {
    const data = fs.readFileSync(path.join(dir, rel));
    const packed = zlib.deflateRawSync(data);
    const name = Buffer.from(`${prefix}/${rel.split(path.sep).join('/')}`, 'utf8');
    const crc = zlib.crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(8, 8); // deflate
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(packed.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(name.length, 26);
    const entry = Buffer.alloc(46);
    entry.writeUInt32LE(0x02014b50, 0);
    entry.writeUInt16LE(20, 4);
    entry.writeUInt16LE(20, 6);
    entry.writeUInt16LE(0x0800, 8);
    entry.writeUInt16LE(8, 10);
    entry.writeUInt32LE(crc, 16);
    entry.writeUInt32LE(packed.length, 20);
    entry.writeUInt32LE(data.length, 24);
    entry.writeUInt16LE(name.length, 28);
    entry.writeUInt32LE(offset, 42);
    parts.push(local, name, packed);
    central.push(entry, name);
    offset += local.length + name.length + packed.length;
  }
  const size = central.reduce((n, b) => n + b.length, 0);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(names.length, 8);
  end.writeUInt16LE(names.length, 10);
  end.writeUInt32LE(size, 12);
  end.writeUInt32LE(offset, 16);
  fs.writeFileSync(file, Buffer.concat([...parts, ...central, end]));
}
