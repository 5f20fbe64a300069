// Which files of a release are which RF2 tables: the International Edition's names (and an extension's, which
// follow the same pattern), Snapshot files only. The concept file's name gives the edition's country/namespace code
// (`INT`) and the release date.
import type { ReleaseFiles } from '../release/types.js';

export interface Rf2Layout {
  concepts: string[];
  descriptions: string[];
  definitions: string[];
  relationships: string[];
  language: string[];
  simple: string[];
  /** `INT` for the International Edition, else the extension's code (`US1000124`, ...). */
  edition: string;
  /** The release date from the concept file's name (YYYYMMDD), when it has one. */
  date?: string;
}

const PATTERNS = {
  concepts: /(^|\/)sct2_Concept_[^/]*Snapshot[^/]*\.txt$/,
  descriptions: /(^|\/)sct2_Description_[^/]*Snapshot[^/]*\.txt$/,
  definitions: /(^|\/)sct2_TextDefinition_[^/]*Snapshot[^/]*\.txt$/,
  // Not sct2_RelationshipConcreteValues_ nor sct2_StatedRelationship_ (the inferred relationships are the ones used).
  relationships: /(^|\/)sct2_Relationship_[^/]*Snapshot[^/]*\.txt$/,
  language: /(^|\/)der2_cRefset_Language[^/]*Snapshot[^/]*\.txt$/,
  simple: /(^|\/)der2_Refset_Simple[^/]*Snapshot[^/]*\.txt$/,
} as const;

/** The RF2 Snapshot files among a release's files (undefined: no Snapshot concept file). */
export function rf2Layout(files: ReleaseFiles): Rf2Layout | undefined {
  const all = files.list().sort();
  const of = (re: RegExp) => all.filter((f) => re.test(f) && !/(^|\/)(__MACOSX|\.)/.test(f));
  const concepts = of(PATTERNS.concepts);
  if (concepts.length === 0) return undefined;
  const m = /_([A-Za-z0-9]+)_(\d{8})\.txt$/.exec(concepts[0]);
  return {
    concepts,
    descriptions: of(PATTERNS.descriptions),
    definitions: of(PATTERNS.definitions),
    relationships: of(PATTERNS.relationships),
    language: of(PATTERNS.language),
    simple: of(PATTERNS.simple),
    edition: m?.[1] ?? 'INT',
    date: m?.[2],
  };
}

/** Whether the files hold RF2 Full or Delta files but no Snapshot (the message says what to give instead). */
export function onlyFullOrDelta(files: ReleaseFiles): boolean {
  return files.list().some((f) => /(^|\/)sct2_Concept_[^/]*(Full|Delta)[^/]*\.txt$/.test(f));
}
