// A release's files from a folder (an unpacked release) or a single file: ReleaseFiles (types.ts).
import fs from 'node:fs';
import path from 'node:path';
import type { ReleaseFiles } from './types.js';

/** Read in 1 MiB chunks (RF2 files are hundreds of MB). */
const CHUNK = 1 << 20;

/** The files under a folder, recursively. */
export function folderFiles(root: string): ReleaseFiles {
  let listed: string[] | undefined;
  return {
    source: root,
    list() {
      listed ??= fs
        .readdirSync(root, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => path.relative(root, path.join(e.parentPath, e.name)).split(path.sep).join('/'))
        .sort();
      return [...listed];
    },
    open(p) {
      return fs.createReadStream(path.join(root, ...p.split('/')), { highWaterMark: CHUNK });
    },
  };
}

/** One file as a release of one file (its name as the path). */
export function singleFile(file: string): ReleaseFiles {
  const name = path.basename(file);
  return {
    source: file,
    list: () => [name],
    open(p) {
      if (p !== name) throw new Error(`${file}: no file ${p}`);
      return fs.createReadStream(file, { highWaterMark: CHUNK });
    },
  };
}
