// The contract between `npm run import`'s release formats (SNOMED CT RF2, LOINC, ICD-10-CM) and the writer that
// stores what they read: a format looks at a release's files, then hands over code systems (a head without concepts,
// then the concepts in batches, parents named by code) and value sets (stored after the code systems).
import type { Readable } from 'node:stream';
import type { CodeSystemResource, ConceptInput } from '../../engine/index.js';

/** A release's files, from a folder or a zip: paths relative to its root, with `/` separators. */
export interface ReleaseFiles {
  /** Where they come from (the folder or zip path), for messages. */
  readonly source: string;
  /** Every file's relative path. */
  list(): string[];
  /** A file's bytes as a stream. */
  open(path: string): Readable;
}

/** One code system of a release. */
export interface ReleaseCodeSystem {
  /** The CodeSystem resource without `concept` (url, version, name, property declarations, count when known). */
  head: CodeSystemResource;
  /** Its concepts in batches (any size), each concept once; read once. */
  concepts(): AsyncIterable<ConceptInput[]>;
}

/** What a release format reads out of a release. */
export interface ReleaseContent {
  codeSystems: ReleaseCodeSystem[];
  /** ValueSet resources to store once the code systems are written (LOINC answer lists). */
  valueSets?(): AsyncIterable<Record<string, unknown>>;
}

/** Settings a format may read (the CLI's flags and their environment defaults). */
export interface ReleaseOptions {
  /** SNOMED CT: the language reference set whose preferred synonym is the display (default en-US). */
  languageRefset?: string;
}

/** One release format. */
export interface ReleaseFormat {
  readonly name: 'rf2' | 'loinc' | 'icd10cm';
  /** Whether these files are a release of this format (by their names and first lines, not the whole files). */
  detect(files: ReleaseFiles): Promise<boolean>;
  read(files: ReleaseFiles, options: ReleaseOptions): Promise<ReleaseContent>;
}

/** How a release file is named in messages: the release (folder or zip) and the file's path in it; a release of
 * one file is named by that file. */
export function releaseFileName(files: ReleaseFiles, file: string): string {
  const source = files.source.replace(/\/+$/, '');
  return source === file || source.endsWith(`/${file}`) ? source : `${source}/${file}`;
}

/** A release file that is not as its format says: names the file, line and column (1-based). */
export class ReleaseFormatError extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly column: number,
    detail: string,
  ) {
    super(`${file}:${line}:${column}: ${detail}`);
    this.name = 'ReleaseFormatError';
  }
}
