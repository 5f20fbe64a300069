// Test helpers for release formats: a release written by a generator script, read as a folder.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
export { folderFiles } from '../../../src/terminology/import/release/folder.js';

/** Runs `scripts/<script>` with `--out <new temp dir>` and the arguments; returns the folder. */
export function generateRelease(script: string, args: string[] = []): string {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), `${script.replace(/\W/g, '')}-`));
  execFileSync(process.execPath, [path.resolve('scripts', script), '--out', out, ...args], { stdio: 'pipe' });
  return out;
}
