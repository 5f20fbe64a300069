// The concepts of a read release (read-release.ts) as ConceptInput batches: code, display (the preferred synonym of
// the chosen language reference set), designations (every active synonym and the FSN, with their language),
// definition, parents (every active is-a destination), inactive, and properties: moduleId, effectiveTime,
// sufficientlyDefined, one per active attribute relationship (its type id as the code, its group when not 0) and
// one `refset` per active simple reference set membership.
import type { ConceptInput, ConceptProperty, Designation } from '../../engine/index.js';
import { FSN, SCT, SYNONYM } from './columns.js';
import { Desc, type Rf2Release } from './read-release.js';

const FSN_USE = { system: SCT, code: FSN, display: 'Fully specified name' };
const SYNONYM_USE = { system: SCT, code: SYNONYM, display: 'Synonym' };

const SUFFICIENTLY_DEFINED: ConceptProperty = { code: 'sufficientlyDefined', valueBoolean: true };
const NOT_SUFFICIENTLY_DEFINED: ConceptProperty = { code: 'sufficientlyDefined', valueBoolean: false };

/** Property objects many concepts have alike (module, effective time, refset membership) are one object each:
 * the writer and the index builder keep them per concept (~1 million fewer objects at the International size). */
const sharedProperties = new Map<string, ConceptProperty>(); // by kind and value: a few hundred at most
function shared(key: string, make: () => ConceptProperty): ConceptProperty {
  let p = sharedProperties.get(key);
  if (!p) sharedProperties.set(key, (p = make()));
  return p;
}

/** A synonym's rank among a concept's designations (lower first): preferred, acceptable, others. */
function rank(flags: number): number {
  if (flags & Desc.Fsn) return 4;
  if (flags & Desc.Preferred) return 0;
  if (flags & Desc.Acceptable) return 1;
  if (flags & Desc.PreferredElsewhere) return 2;
  return 3;
}

/** One concept (see the file comment). */
export function conceptInput(rel: Rf2Release, o: number): ConceptInput {
  const { descriptions: d } = rel;
  const found: number[] = [];
  for (let k = d.offsets[o]; k < d.offsets[o + 1]; k++) found.push(d.order[k]);
  // Stable: file order within a rank.
  found.sort((a, b) => rank(rel.descFlags[a]) - rank(rel.descFlags[b]) || a - b);
  let display: string | undefined;
  let fsn: string | undefined;
  const designations: Designation[] = [];
  for (const i of found) {
    const flags = rel.descFlags[i];
    const term = rel.descTerm[i];
    if (flags & Desc.Fsn) fsn ??= term;
    else if (display === undefined && flags & (Desc.Preferred | Desc.PreferredElsewhere)) display = term;
    designations.push({
      language: rel.languages[rel.descLanguage[i]],
      use: flags & Desc.Fsn ? FSN_USE : SYNONYM_USE,
      value: term,
    });
  }
  display ??= fsn ?? (found.length > 0 ? rel.descTerm[found[0]] : undefined);

  const parents: string[] = [];
  for (let k = rel.isA.offsets[o]; k < rel.isA.offsets[o + 1]; k++)
    parents.push(rel.ids[rel.isADestination[rel.isA.order[k]]]);

  const properties: ConceptProperty[] = [
    shared(`m${rel.modules[rel.module[o]]}`, () => ({
      code: 'moduleId',
      valueCode: rel.modules[rel.module[o]],
    })),
    shared(`t${rel.time[o]}`, () => ({ code: 'effectiveTime', valueString: String(rel.time[o]) })),
    rel.defined[o] === 1 ? SUFFICIENTLY_DEFINED : NOT_SUFFICIENTLY_DEFINED,
  ];
  const a = rel.attributes;
  for (let k = a.offsets[o]; k < a.offsets[o + 1]; k++) {
    const i = a.order[k];
    const group = rel.attributeGroup[i];
    const p: ConceptProperty = {
      code: rel.ids[rel.attributeType[i]],
      valueCode: rel.ids[rel.attributeDestination[i]],
    };
    if (group !== 0) p.group = group;
    properties.push(p);
  }
  const m = rel.members;
  for (let k = m.offsets[o]; k < m.offsets[o + 1]; k++)
    properties.push(
      shared(`r${rel.refsets[rel.memberRefset[m.order[k]]]}`, () => ({
        code: 'refset',
        valueCode: rel.refsets[rel.memberRefset[m.order[k]]],
      })),
    );

  const concept: ConceptInput = { code: rel.ids[o], display: display ?? null, properties };
  const definition = rel.definitions.get(o);
  if (definition !== undefined) concept.definition = definition;
  if (parents.length > 0) concept.parents = parents;
  if (rel.active[o] === 0) concept.inactive = true;
  if (designations.length > 0) concept.designations = designations;
  return concept;
}

/** The concepts in file order, `size` per batch. */
export async function* conceptBatches(rel: Rf2Release, size: number): AsyncGenerator<ConceptInput[]> {
  let batch: ConceptInput[] = [];
  for (let o = 0; o < rel.ids.length; o++) {
    batch.push(conceptInput(rel, o));
    if (batch.length >= size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}
