// SNOMED CT RF2 Snapshot releases as a release format (release/types.ts): detected by the concept file's name and
// header line; read into compact tables (read-release.ts), then one CodeSystem per release (head.ts) whose concepts
// are made batch by batch (concepts.ts).
import type { ReleaseFiles, ReleaseFormat, ReleaseOptions, ReleaseContent } from '../release/types.js';
import { CONCEPT_COLUMNS, EN_US } from './columns.js';
import { codeSystemHead } from './head.js';
import { conceptBatches } from './concepts.js';
import { onlyFullOrDelta, rf2Layout } from './layout.js';
import { readRf2Release, type Rf2Release } from './read-release.js';
import { firstLine } from '../release/first-line.js';
import { isSctid } from './sctid.js';

/** Concepts per batch handed to the writer, and so per INSERT statement: RF2 concepts are big rows (~1 KB of
 * designations and properties), and on the embedded database statements of 5,000 of them took more time and
 * memory than of 1,000 (100,000 concepts: 48 s and 1.32 GB peak RSS against 42 s and 1.21 GB). */
const BATCH = 1000;

export const rf2Format: ReleaseFormat = {
  name: 'rf2',

  async detect(files: ReleaseFiles): Promise<boolean> {
    const layout = rf2Layout(files);
    if (!layout) return onlyFullOrDelta(files);
    const header = await firstLine(files, layout.concepts[0]);
    return header === CONCEPT_COLUMNS.join('\t');
  },

  async read(files: ReleaseFiles, options: ReleaseOptions): Promise<ReleaseContent> {
    const layout = rf2Layout(files);
    if (!layout) {
      throw new Error(
        onlyFullOrDelta(files)
          ? `${files.source}: only RF2 Full/Delta files; the import reads the Snapshot files (Snapshot/Terminology/sct2_Concept_Snapshot_*.txt)`
          : `${files.source}: no RF2 Snapshot concept file (Snapshot/Terminology/sct2_Concept_Snapshot_*.txt)`,
      );
    }
    const languageRefset = options.languageRefset ?? EN_US;
    if (!isSctid(languageRefset))
      throw new Error(`language reference set "${languageRefset}" is not an SCTID`);
    let release: Rf2Release | undefined = await readRf2Release(files, layout, languageRefset);
    const head = codeSystemHead(release, layout);
    return {
      codeSystems: [
        {
          head,
          async *concepts() {
            if (!release) throw new Error('the concepts of a release are read once');
            const r = release;
            // Its tables go once the concepts are made (the index is built and written after them).
            release = undefined;
            yield* conceptBatches(r, BATCH);
          },
        },
      ],
    };
  },
};
