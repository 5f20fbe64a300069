// The start of a release file, read without reading the file: what format detection looks at.

import type { ReleaseFiles } from './types.js';

/** The first line of a file (without BOM and line end), at most `max` characters: read from its first bytes. */
export async function firstLine(files: ReleaseFiles, path: string, max = 4096): Promise<string> {
  const start = await fileStart(files, path, max);
  return start
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/, 1)[0]
    .slice(0, max);
}

/** The first `bytes` bytes of a file, as text (a partial character at the end is dropped). */
export async function fileStart(files: ReleaseFiles, path: string, bytes = 1024): Promise<string> {
  const stream = files.open(path);
  const chunks: Buffer[] = [];
  let length = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer | string>) {
      const b = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      chunks.push(b);
      length += b.length;
      if (length >= bytes) break;
    }
  } finally {
    stream.destroy();
  }
  return Buffer.concat(chunks)
    .subarray(0, bytes)
    .toString('utf8')
    .replace(/\uFFFD$/, '');
}
