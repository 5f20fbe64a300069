// The release formats `npm run import` knows, in the order detection tries them. A new format implements
// ReleaseFormat (types.ts) and is added to RELEASE_FORMATS.
import { icd10cmFormat } from '../icd10cm/format.js';
import { loincFormat } from '../loinc/format.js';
import { rf2Format } from '../rf2/format.js';
import type { ReleaseFiles, ReleaseFormat } from './types.js';

export const RELEASE_FORMATS: readonly ReleaseFormat[] = [rf2Format, loincFormat, icd10cmFormat];

/** The release format of `--format <name>` (undefined: none by that name). */
export function releaseFormatNamed(name: string): ReleaseFormat | undefined {
  return RELEASE_FORMATS.find((f) => f.name === name);
}

/** The first format that recognises the files (by their names and first lines). */
export async function detectReleaseFormat(files: ReleaseFiles): Promise<ReleaseFormat | undefined> {
  for (const f of RELEASE_FORMATS) if (await f.detect(files)) return f;
  return undefined;
}
