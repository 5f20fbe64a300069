// A small SNOMED CT-like code system in the form the RF2 importer writes (parents = active is-a destinations,
// attribute relationships as properties with their group, refset membership as `refset` properties), and a
// generator of bigger random ones (seeded) for the property-based test and the performance script.
import {
  CodeSystemIndexBuilder,
  type CodeSystemIndex,
  type CodeSystemResource,
  type ConceptInput,
  type ConceptProperty,
} from '../../../../src/terminology/engine/index.js';

export const SCT = 'http://snomed.info/sct';
export const SCT_VERSION = 'http://snomed.info/sct/900000000000207008/version/20250101';

const FS = '363698007'; // Finding site
const AM = '116676008'; // Associated morphology
const CA = '246075003'; // Causative agent

type Row = [code: string, display: string, parents: string[], props?: Array<[string, string, number?]>];

/** [code, display, parents, [attribute, value, group][]]. */
const ROWS: Row[] = [
  ['138875005', 'SNOMED CT Concept', []],
  ['404684003', 'Clinical finding', ['138875005']],
  ['64572001', 'Disease', ['404684003']],
  ['56265001', 'Heart disease', ['64572001'], [[FS, '80891009', 1]]],
  [
    '22298006',
    'Myocardial infarction',
    ['56265001'],
    [
      [FS, '80891009', 1],
      [AM, '55641003', 1],
    ],
  ],
  [
    '56786000',
    'Pulmonic valve stenosis',
    ['56265001', '368009'],
    [
      [FS, '39057004', 1],
      [AM, '415582006', 1],
    ],
  ],
  ['368009', 'Heart valve disorder', ['56265001'], [[FS, '17401000', 1]]],
  ['40733004', 'Infectious disease', ['64572001'], [[CA, '409822003', 0]]],
  [
    '233604007',
    'Pneumonia',
    ['64572001'],
    [
      [FS, '39607008', 1],
      [AM, '409774005', 1],
      [FS, '39607008', 2],
      [AM, '23583003', 2],
    ],
  ],
  ['123037004', 'Body structure', ['138875005']],
  ['80891009', 'Heart structure', ['123037004']],
  ['17401000', 'Cardiac valve structure', ['80891009']],
  ['39057004', 'Pulmonary valve structure', ['17401000']],
  ['39607008', 'Lung structure', ['123037004']],
  ['49755003', 'Morphologically abnormal structure', ['123037004']],
  ['55641003', 'Infarct', ['49755003']],
  ['415582006', 'Stenosis', ['49755003']],
  ['409774005', 'Inflammatory morphology', ['49755003']],
  ['23583003', 'Inflammation', ['409774005']],
  ['410607006', 'Organism', ['138875005']],
  ['409822003', 'Bacteria', ['410607006']],
  ['410662002', 'Concept model attribute', ['138875005']],
  ['762705008', 'Concept model object attribute', ['410662002']],
  [FS, 'Finding site', ['762705008']],
  [AM, 'Associated morphology', ['762705008']],
  [CA, 'Causative agent', ['762705008']],
  ['116680003', 'Is a', ['410662002']],
  ['900000000000455006', 'Reference set', ['138875005']],
  ['723264001', 'Lateralizable body structure reference set', ['900000000000455006']],
  ['733073007', 'Empty reference set', ['900000000000455006']],
];

/** Refset id -> members. */
const REFSETS: Record<string, string[]> = {
  '723264001': ['80891009', '39057004', '39607008'],
};

export const INACTIVE_CODE = '198999008';

/** The fixture's concepts as importer rows. */
export function fixtureConcepts(): ConceptInput[] {
  const memberOf = new Map<string, string[]>();
  for (const [r, ms] of Object.entries(REFSETS))
    for (const m of ms) memberOf.set(m, [...(memberOf.get(m) ?? []), r]);
  const out: ConceptInput[] = ROWS.map(([code, display, parents, props]) => {
    const properties: ConceptProperty[] = [
      { code: 'moduleId', valueCode: '900000000000207008' },
      { code: 'effectiveTime', valueString: '20250101' },
    ];
    for (const [attr, value, group] of props ?? [])
      properties.push(group ? { code: attr, valueCode: value, group } : { code: attr, valueCode: value });
    for (const r of memberOf.get(code) ?? []) properties.push({ code: 'refset', valueCode: r });
    return { code, display, parents, properties };
  });
  out.push({ code: INACTIVE_CODE, display: 'Old heart thing (inactive)', inactive: true, parents: [] });
  return out;
}

export function fixtureIndex(version = SCT_VERSION): CodeSystemIndex {
  return CodeSystemIndexBuilder.build({ url: SCT, version }, fixtureConcepts());
}

/** The fixture as a CodeSystem resource (for the REST tests: parents as `parent` properties). */
export function fixtureCodeSystem(version = SCT_VERSION): CodeSystemResource {
  return {
    resourceType: 'CodeSystem',
    url: SCT,
    version,
    name: 'SNOMEDCTFixture',
    status: 'active',
    content: 'complete',
    hierarchyMeaning: 'is-a',
    property: [
      { code: 'parent', type: 'code' },
      { code: 'inactive', type: 'boolean' },
      { code: 'refset', type: 'code' },
      { code: 'moduleId', type: 'code' },
      { code: FS, type: 'code' },
      { code: AM, type: 'code' },
      { code: CA, type: 'code' },
    ],
    concept: fixtureConcepts().map((c) => ({
      code: c.code,
      display: c.display ?? undefined,
      property: [
        ...(c.parents ?? []).map((p) => ({ code: 'parent', valueCode: p })),
        ...(c.inactive ? [{ code: 'inactive', valueBoolean: true }] : []),
        // A CodeSystem resource has no relationship groups: the attributes are kept ungrouped.
        ...(c.properties ?? []).map(({ group: _group, ...p }) => p),
      ],
    })),
  };
}

/** A small seeded PRNG (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface GeneratedSnomed {
  concepts: ConceptInput[];
  codes: string[];
  attributes: string[];
  refsets: string[];
}

/**
 * A random SNOMED-like DAG of n concepts (codes `1000000 + i`, 7 digits): concept 0 is the root, each concept
 * has 1-3 parents among the earlier ones (the first within `subtreeOf` when given: a big subtree under concept 1),
 * attributes (the last `attributeCount` concepts before the refsets are attribute types, themselves in a small
 * hierarchy) in groups 0-3, and membership in a few refsets.
 */
export function generateSnomed(
  n: number,
  seed: number,
  opts: {
    attributeCount?: number;
    refsetCount?: number;
    subtreeShare?: number;
    inactiveShare?: number;
    /** Attribute relationships per concept: 0 to this many (about half of it on average). */
    maxRelationships?: number;
  } = {},
): GeneratedSnomed {
  const rand = rng(seed);
  const attributeCount = opts.attributeCount ?? 6;
  const refsetCount = opts.refsetCount ?? 4;
  const code = (i: number): string => String(1_000_000 + i);
  const codes = Array.from({ length: n }, (_, i) => code(i));
  const attrStart = n - refsetCount - attributeCount;
  const attributes = codes.slice(attrStart, attrStart + attributeCount);
  const refsets = codes.slice(n - refsetCount);
  const subtreeEnd = Math.floor(2 + (attrStart - 2) * (opts.subtreeShare ?? 0.3));
  const concepts: ConceptInput[] = [];
  const pick = (lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo));
  for (let i = 0; i < n; i++) {
    const c: ConceptInput = { code: codes[i], display: `Concept ${i}` };
    if (i === 0) c.parents = [];
    else if (i === 1) c.parents = [codes[0]];
    else if (i >= attrStart)
      c.parents = [i === attrStart || i >= n - refsetCount ? codes[0] : codes[pick(attrStart, i)]];
    else if (i < subtreeEnd && i > 1) {
      const ps = new Set([codes[pick(1, i)]]);
      if (rand() < 0.3) ps.add(codes[pick(1, i)]);
      c.parents = [...ps];
    } else {
      // Outside the subtree: parents outside it too (the root or a later concept), so the subtree stays its size.
      const outside = (): string =>
        i === subtreeEnd || rand() < 0.02 ? codes[0] : codes[pick(subtreeEnd, i)];
      const ps = new Set([outside()]);
      if (rand() < 0.3) ps.add(outside());
      if (rand() < 0.1) ps.add(outside());
      c.parents = [...ps];
    }
    if (i > 0 && i < attrStart && rand() < (opts.inactiveShare ?? 0)) {
      c.inactive = true;
      c.parents = [];
    }
    const props: ConceptProperty[] = [];
    if (i > 1 && i < attrStart && !c.inactive) {
      const k = Math.floor(rand() * (opts.maxRelationships ?? 3) + rand());
      for (let j = 0; j < k; j++) {
        const g = Math.floor(rand() * 4);
        const p: ConceptProperty = {
          code: attributes[pick(0, attributeCount)],
          valueCode: codes[pick(0, attrStart)],
        };
        if (g > 0) p.group = g;
        props.push(p);
      }
      for (const r of refsets) if (rand() < 0.05) props.push({ code: 'refset', valueCode: r });
    }
    if (props.length > 0) c.properties = props;
    concepts.push(c);
  }
  return { concepts, codes, attributes, refsets };
}
