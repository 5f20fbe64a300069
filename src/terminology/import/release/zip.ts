// A release's files from a zip (as SNOMED International, Regenstrief and CMS publish them), read in place: the
// central directory once, then each file as a stream inflated on the fly (yauzl: random access, nothing unpacked
// to disk, nothing held whole in memory).
import { PassThrough, type Readable } from 'node:stream';
import yauzl from 'yauzl';
import type { ReleaseFiles } from './types.js';

/** The files of a zip; `close()` when done. A release zipped with its top folder keeps it in the paths. */
export async function zipFiles(file: string): Promise<ReleaseFiles & { close(): void }> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.open(file, { lazyEntries: true, autoClose: false }, (err, z) => (err ? reject(err) : resolve(z))),
  );
  const entries = new Map<string, yauzl.Entry>();
  await new Promise<void>((resolve, reject) => {
    zip.on('entry', (e: yauzl.Entry) => {
      if (!e.fileName.endsWith('/')) entries.set(e.fileName, e);
      zip.readEntry();
    });
    zip.on('end', () => resolve());
    zip.on('error', reject);
    zip.readEntry();
  });
  return {
    source: file,
    list: () => [...entries.keys()].sort(),
    open(p: string): Readable {
      const entry = entries.get(p);
      if (!entry) throw new Error(`${file}: no file ${p}`);
      const out = new PassThrough({ highWaterMark: 1 << 20 });
      zip.openReadStream(entry, (err, stream) => {
        if (err) out.destroy(err);
        else {
          stream.on('error', (e) => out.destroy(e));
          // A reader that stops early (detection reads one line) ends the inflating too.
          out.on('close', () => stream.destroy());
          stream.pipe(out);
        }
      });
      return out;
    },
    close: () => zip.close(),
  };
}
