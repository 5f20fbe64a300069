// SNOMED CT RF2 Snapshot releases as a release format (release/types.ts): detected by the concept file's name and
// header line; read into compact tables (read-release.ts), then one CodeSystem per release (head.ts) whose concepts
// are made batch by batch (concepts.ts).
import type { ReleaseFiles, ReleaseFormat, ReleaseOptions, ReleaseContent } from '../release/types.js';
import { CONCEPT_COLUMNS, EN_US } from './columns.js';
import { codeSystemHead } from './head.js';
import { conceptBatches } from './concepts.js';
import { onlyFullOrDelta, rf2Layout } from './layout.js';
import { readRf2Release } from './read-release.js';
import { firstLine } from './table.js';
import { isSctid } from './sctid.js';

/** Concepts per batch handed to the writer. */
const BATCH = 5000;

export const rf2Format: ReleaseFormat = {
  name: 'rf2',

  async detect(files: ReleaseFiles): Promise<boolean> {
    const layout = rf2Layout(files);
    if (!layout) return onlyFullOrDelta(files);
    const header = (await firstLine(files, layout.concepts[0])).replace(/^\uFEFF/, '');
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
    const release = await readRf2Release(files, layout, languageRefset);
    const head = codeSystemHead(release, layout);
    let read = false;
    return {
      codeSystems: [
        {
          head,
          concepts() {
            if (read) throw new Error('the concepts of a release are read once');
            read = true;
            return conceptBatches(release, BATCH);
          },
        },
      ],
    };
  },
};
