// Test helpers for release formats: a folder as ReleaseFiles, and a release written by a generator script.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import type { ReleaseFiles } from '../../../src/terminology/import/release/types.js';

/** The files of a folder, as a format reads them. */
export function folderFiles(root: string): ReleaseFiles {
  const list: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else list.push(path.relative(root, p).split(path.sep).join('/'));
    }
  };
  walk(root);
  return { source: root, list: () => list, open: (p) => fs.createReadStream(path.join(root, p)) };
}

/** Runs `scripts/<script>` with `--out <new temp dir>` and the arguments; returns the folder. */
export function generateRelease(script: string, args: string[] = []): string {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), `${script.replace(/\W/g, '')}-`));
  execFileSync(process.execPath, [path.resolve('scripts', script), '--out', out, ...args], { stdio: 'pipe' });
  return out;
}
