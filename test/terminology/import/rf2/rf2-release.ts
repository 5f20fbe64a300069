// The synthetic RF2 release of the rf2 tests (scripts/gen-rf2.mjs --size test), generated into a temporary folder,
// and the samples the generator reports (expected.json).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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
  counts: { concepts: number; active: number; inactive: number };
}

/** Generates the small release into a new temporary folder: its path and samples. */
export function generateRf2(into = fs.mkdtempSync(path.join(os.tmpdir(), 'rf2-'))): {
  dir: string;
  expected: Rf2Samples;
} {
  execFileSync(process.execPath, [path.join(ROOT, 'scripts/gen-rf2.mjs'), '--out', into, '--size', 'test']);
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
