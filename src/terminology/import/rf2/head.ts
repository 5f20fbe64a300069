// The CodeSystem resource of an RF2 release without its concepts: url http://snomed.info/sct, the edition's
// version URI (http://snomed.info/sct/<edition module>/version/<YYYYMMDD>), the property declarations and count.
import type { CodeSystemResource } from '../../engine/index.js';
import { INTERNATIONAL_MODULE, MODEL_MODULE, SCT } from './columns.js';
import { conceptInput } from './concepts.js';
import type { Rf2Layout } from './layout.js';
import type { Rf2Release } from './read-release.js';

const FHIR_PROPERTY = 'http://hl7.org/fhir/concept-properties#';
const FIELD = 'http://snomed.info/field/';

/** The edition's module: the International Edition's core module for `INT` files, else the module most of the
 * release's concepts are in besides the International ones. */
export function editionModule(rel: Rf2Release, layout: Rf2Layout): string {
  if (layout.edition === 'INT') return INTERNATIONAL_MODULE;
  const counts = new Map<number, number>();
  for (const m of rel.module) counts.set(m, (counts.get(m) ?? 0) + 1);
  let best: string | undefined;
  let most = 0;
  for (const [m, c] of counts) {
    const id = rel.modules[m];
    if (id === INTERNATIONAL_MODULE || id === MODEL_MODULE || c <= most) continue;
    best = id;
    most = c;
  }
  return best ?? INTERNATIONAL_MODULE;
}

/** The release's date: from the file names, else the latest effective time. */
export function releaseDate(rel: Rf2Release, layout: Rf2Layout): string {
  if (layout.date) return layout.date;
  let max = 0;
  for (const t of rel.time) if (t > max) max = t;
  return String(max);
}

export function codeSystemHead(rel: Rf2Release, layout: Rf2Layout): CodeSystemResource {
  const module = editionModule(rel, layout);
  const date = releaseDate(rel, layout);
  const types = new Set<number>();
  for (const t of rel.attributeType) types.add(t);
  const attributes = [...types]
    .sort((a, b) => (rel.ids[a] < rel.ids[b] ? -1 : rel.ids[a] > rel.ids[b] ? 1 : 0))
    .map((t) => ({
      code: rel.ids[t],
      uri: `http://snomed.info/id/${rel.ids[t]}`,
      description: conceptInput(rel, t).display ?? rel.ids[t],
      type: 'code',
    }));
  const international = layout.edition === 'INT';
  return {
    resourceType: 'CodeSystem',
    url: SCT,
    version: `${SCT}/${module}/version/${date}`,
    name: 'SNOMED_CT',
    title: international ? 'SNOMED CT International Edition' : `SNOMED CT (${layout.edition} edition)`,
    status: 'active',
    experimental: false,
    date: `${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}`,
    publisher: international ? 'SNOMED International' : undefined,
    copyright:
      'This value set includes content from SNOMED CT, which is copyright © 2002+ International Health ' +
      'Terminology Standards Development Organisation (SNOMED International), and distributed by agreement ' +
      'between SNOMED International and HL7. Implementer use of SNOMED CT is not covered by this agreement.',
    caseSensitive: false,
    hierarchyMeaning: 'is-a',
    compositional: true,
    content: 'complete',
    count: rel.ids.length,
    property: [
      {
        code: 'inactive',
        uri: `${FHIR_PROPERTY}inactive`,
        description: 'Whether the concept is inactive',
        type: 'boolean',
      },
      {
        code: 'parent',
        uri: `${FHIR_PROPERTY}parent`,
        description: 'An is-a parent of the concept',
        type: 'code',
      },
      {
        code: 'child',
        uri: `${FHIR_PROPERTY}child`,
        description: 'An is-a child of the concept',
        type: 'code',
      },
      {
        code: 'sufficientlyDefined',
        uri: `${FIELD}Concept.definitionStatusId`,
        description: 'Whether the concept is sufficiently defined (definition status 900000000000073002)',
        type: 'boolean',
      },
      {
        code: 'moduleId',
        uri: `${FIELD}Concept.moduleId`,
        description: 'The module of the concept',
        type: 'code',
      },
      {
        code: 'effectiveTime',
        uri: `${FIELD}Concept.effectiveTime`,
        description: 'The effective time of the concept (YYYYMMDD)',
        type: 'string',
      },
      {
        code: 'refset',
        description: 'A simple reference set the concept is an active member of',
        type: 'code',
      },
      ...attributes,
    ],
  } as CodeSystemResource;
}
