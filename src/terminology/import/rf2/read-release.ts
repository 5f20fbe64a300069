// Reads an RF2 Snapshot release into compact tables (see compact.ts): the concepts (SCTID -> ordinal), the chosen
// language reference set's acceptabilities, the active descriptions grouped by concept, the active relationships
// (is-a as parents, others as attributes with their group), text definitions and simple reference set members.
// Every line is checked as it is read (columns, SCTIDs, effective times, active flags, references to concepts),
// before anything is written: a release that is not as RF2 says fails with a ReleaseFormatError and stores nothing.
// Memory at the International Edition's size (~400,000 concepts, ~1.6 million descriptions, ~3 million language
// reference set members): the id map, the description terms and typed arrays.
import { ReleaseFormatError, type ReleaseFiles } from '../release/types.js';
import { groupBy, int32s, Interned, uint16s, uint8s, type Grouped } from './compact.js';
import {
  CONCEPT_COLUMNS,
  DEFINED,
  DESCRIPTION_COLUMNS,
  FSN,
  IS_A,
  LANGUAGE_COLUMNS,
  PREFERRED,
  ACCEPTABLE,
  RELATIONSHIP_COLUMNS,
  SIMPLE_COLUMNS,
  SYNONYM,
} from './columns.js';
import type { Rf2Layout } from './layout.js';
import { Partition } from './sctid.js';
import { readTable, type Row } from './table.js';

/** Description flags. */
export const enum Desc {
  Fsn = 1,
  Synonym = 2,
  /** Preferred in the chosen language reference set. */
  Preferred = 4,
  /** Acceptable in the chosen language reference set. */
  Acceptable = 8,
  /** Preferred in another language reference set. */
  PreferredElsewhere = 16,
}

export interface Rf2Release {
  /** Concept SCTIDs by ordinal (file order). */
  ids: string[];
  active: Uint8Array;
  defined: Uint8Array;
  /** Index into `modules`. */
  module: Uint16Array;
  modules: string[];
  /** Effective time as YYYYMMDD. */
  time: Int32Array;
  /** Active FSNs and synonyms by concept. */
  descriptions: Grouped;
  descFlags: Uint8Array;
  descTerm: string[];
  /** Index into `languages`. */
  descLanguage: Uint8Array;
  languages: string[];
  /** Active is-a destinations by concept. */
  isA: Grouped;
  isADestination: Int32Array;
  /** Active other relationships by concept. */
  attributes: Grouped;
  attributeDestination: Int32Array;
  attributeType: Int32Array;
  attributeGroup: Int32Array;
  /** Active simple reference set memberships by concept (refset SCTIDs in `refsets`). */
  members: Grouped;
  memberRefset: Uint16Array;
  refsets: string[];
  /** An active text definition by concept (preferred in the chosen language reference set first). */
  definitions: Map<number, string>;
  /** Line counts read, by table. */
  lines: Record<string, number>;
}

/** Reads the release (see the file comment). `languageRefset`: the refset whose acceptabilities count. */
export async function readRf2Release(
  files: ReleaseFiles,
  layout: Rf2Layout,
  languageRefset: string,
): Promise<Rf2Release> {
  const lines: Record<string, number> = {};

  // Concepts.
  const ids: string[] = [];
  const index = new Map<string, number>();
  const active = uint8s();
  const defined = uint8s();
  const module = uint16s();
  const modules = new Interned();
  const time = int32s();
  for (const file of layout.concepts) {
    lines.concepts =
      (lines.concepts ?? 0) +
      (await readTable(files, file, CONCEPT_COLUMNS, (r) => {
        const id = r.sctid(0, Partition.Concept);
        time.push(r.time());
        active.push(r.active() ? 1 : 0);
        module.push(modules.of(r.sctid(3)));
        defined.push(r.sctid(4) === DEFINED ? 1 : 0);
        if (index.has(id)) r.fail(0, `concept ${id} is on two lines`);
        index.set(id, ids.length);
        ids.push(id);
      }));
  }
  const n = ids.length;
  const conceptOf = (r: Row, i: number): number => {
    const id = r.sctid(i, Partition.Concept);
    const o = index.get(id);
    if (o === undefined) r.fail(i, `${r.columns[i]} ${id} is not a concept of the release`);
    return o;
  };

  // The language reference sets: the chosen one's acceptability of each description, and "preferred elsewhere".
  const acceptability = new Map<string, number>();
  const refsetsSeen = new Set<string>();
  let chosenMembers = 0;
  for (const file of layout.language) {
    lines.language =
      (lines.language ?? 0) +
      (await readTable(files, file, LANGUAGE_COLUMNS, (r) => {
        checkUuid(r);
        r.time();
        const on = r.active();
        r.sctid(3);
        const refset = r.sctid(4);
        const description = r.sctid(5, Partition.Description);
        const accept = r.sctid(6);
        if (!on) return;
        if (refsetsSeen.size < 100) refsetsSeen.add(refset);
        const was = acceptability.get(description) ?? 0;
        if (refset === languageRefset) {
          chosenMembers++;
          const flag = accept === PREFERRED ? Desc.Preferred : accept === ACCEPTABLE ? Desc.Acceptable : 0;
          acceptability.set(description, was | flag);
        } else if (accept === PREFERRED) acceptability.set(description, was | Desc.PreferredElsewhere);
      }));
  }
  if (chosenMembers === 0 && layout.language.length > 0) {
    throw new ReleaseFormatError(
      `${files.source.replace(/\/+$/, '')}/${layout.language[0]}`,
      1,
      1,
      `the language reference set ${languageRefset} has no active members in this release ` +
        `(it has: ${[...refsetsSeen].join(', ') || 'none'}); choose one with --language-refset`,
    );
  }

  // Descriptions (active FSNs and synonyms are kept).
  const descOwner = int32s();
  const descFlags = uint8s();
  const descLanguage = uint8s();
  const languages = new Interned();
  const descTerm: string[] = [];
  for (const file of layout.descriptions) {
    lines.descriptions =
      (lines.descriptions ?? 0) +
      (await readTable(files, file, DESCRIPTION_COLUMNS, (r) => {
        const id = r.sctid(0, Partition.Description);
        r.time();
        const on = r.active();
        r.sctid(3);
        const concept = conceptOf(r, 4);
        const type = r.sctid(6);
        r.sctid(8);
        if (!on) return;
        const kind = type === FSN ? Desc.Fsn : type === SYNONYM ? Desc.Synonym : 0;
        if (kind === 0) return;
        descOwner.push(concept);
        descFlags.push(kind | (acceptability.get(id) ?? 0));
        descLanguage.push(languages.of(r.text(5)));
        descTerm.push(r.utf8(7));
      }));
  }

  // Text definitions.
  const definitions = new Map<number, string>();
  const preferredDefinition = new Set<number>();
  for (const file of layout.definitions) {
    lines.definitions =
      (lines.definitions ?? 0) +
      (await readTable(files, file, DESCRIPTION_COLUMNS, (r) => {
        const id = r.sctid(0, Partition.Description);
        r.time();
        const on = r.active();
        r.sctid(3);
        const concept = conceptOf(r, 4);
        r.sctid(6);
        r.sctid(8);
        if (!on || preferredDefinition.has(concept)) return;
        const flags = acceptability.get(id) ?? 0;
        if (flags & Desc.Preferred) {
          preferredDefinition.add(concept);
          definitions.set(concept, r.utf8(7));
        } else if (!definitions.has(concept)) definitions.set(concept, r.utf8(7));
      }));
  }
  acceptability.clear();

  // Relationships.
  const isAOwner = int32s();
  const isADestination = int32s();
  const attrOwner = int32s();
  const attrDestination = int32s();
  const attrType = int32s();
  const attrGroup = int32s();
  for (const file of layout.relationships) {
    lines.relationships =
      (lines.relationships ?? 0) +
      (await readTable(files, file, RELATIONSHIP_COLUMNS, (r) => {
        r.sctid(0, Partition.Relationship);
        r.time();
        const on = r.active();
        r.sctid(3);
        const source = conceptOf(r, 4);
        const destination = conceptOf(r, 5);
        const group = r.int(6);
        const type = conceptOf(r, 7);
        r.sctid(8);
        r.sctid(9);
        if (!on) return;
        if (ids[type] === IS_A) {
          isAOwner.push(source);
          isADestination.push(destination);
        } else {
          attrOwner.push(source);
          attrDestination.push(destination);
          attrType.push(type);
          attrGroup.push(group);
        }
      }));
  }

  // Simple reference sets: active members that are concepts.
  const memberOwner = int32s();
  const memberRefset = uint16s();
  const refsets = new Interned();
  for (const file of layout.simple) {
    lines.simple =
      (lines.simple ?? 0) +
      (await readTable(files, file, SIMPLE_COLUMNS, (r) => {
        checkUuid(r);
        r.time();
        const on = r.active();
        r.sctid(3);
        const refset = r.sctid(4);
        const component = r.sctid(5);
        if (!on || !isConceptId(component)) return;
        const o = index.get(component);
        if (o === undefined)
          return r.fail(5, `referencedComponentId ${component} is not a concept of the release`);
        memberOwner.push(o);
        memberRefset.push(refsets.of(refset));
      }));
  }
  if (refsets.values.length > 0xffff) throw new Error('more than 65,535 simple reference sets');

  return {
    ids,
    active: active.done(),
    defined: defined.done(),
    module: module.done(),
    modules: modules.values,
    time: time.done(),
    descriptions: groupBy(descOwner.done(), n),
    descFlags: descFlags.done(),
    descTerm,
    descLanguage: descLanguage.done(),
    languages: languages.values,
    isA: groupBy(isAOwner.done(), n),
    isADestination: isADestination.done(),
    attributes: groupBy(attrOwner.done(), n),
    attributeDestination: attrDestination.done(),
    attributeType: attrType.done(),
    attributeGroup: attrGroup.done(),
    members: groupBy(memberOwner.done(), n),
    memberRefset: memberRefset.done(),
    refsets: refsets.values,
    definitions,
    lines,
  };
}

/** A concept SCTID (partition digit 0), known to be a valid SCTID. */
function isConceptId(id: string): boolean {
  return id.charCodeAt(id.length - 2) === 48;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A reference set member's id is a UUID. */
function checkUuid(r: Row): void {
  if (r.ends[0] - r.starts[0] !== 36 || !UUID.test(r.text(0))) r.fail(0, `id "${r.text(0)}" is not a UUID`);
}
