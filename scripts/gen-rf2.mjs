#!/usr/bin/env node
// Synthetic SNOMED CT RF2 Snapshot release generator (tests and import measurements; no dependencies).
//
// Writes, deterministically for a given --seed, a release folder in the International Edition's layout:
//   <out>/Snapshot/Terminology/sct2_Concept_Snapshot_INT_<date>.txt
//   <out>/Snapshot/Terminology/sct2_Description_Snapshot-en_INT_<date>.txt
//   <out>/Snapshot/Terminology/sct2_TextDefinition_Snapshot-en_INT_<date>.txt
//   <out>/Snapshot/Terminology/sct2_Relationship_Snapshot_INT_<date>.txt
//   <out>/Snapshot/Refset/Language/der2_cRefset_LanguageSnapshot-en_INT_<date>.txt
//   <out>/Snapshot/Refset/Content/der2_Refset_SimpleSnapshot_INT_<date>.txt
//   <out>/expected.json   sample concepts (multiple parents, inactive, en-GB term, grouped attributes, ...) and counts
// Tab-separated, CRLF, UTF-8, RF2 header lines; SCTIDs with partition identifiers and Verhoeff check digits; the
// real top-level hierarchies and metadata concepts with synthetic content below them (a DAG: ~18% of concepts
// have 2+ parents), inactive concepts, FSNs with semantic tags, 1-4 synonyms, en-US/en-GB language refsets (some
// en-GB preferred terms differ), attribute relationships in groups 0..2, simple refsets and text definitions.
// Lines are written as they are made (buffers of ~1 MB), never as one string per file.
//
// Usage: node scripts/gen-rf2.mjs --out DIR [--seed N] [--size test|international] [--concepts N] [--date YYYYMMDD]

import fs from 'node:fs';
import path from 'node:path';

const argv = process.argv.slice(2);
const args = {};
for (let i = 0; i < argv.length; i++) if (argv[i].startsWith('--')) args[argv[i].slice(2)] = argv[++i];
if (!args.out) {
  process.stderr.write(
    'Usage: node scripts/gen-rf2.mjs --out DIR [--seed N] [--size test|international] [--concepts N] [--date YYYYMMDD]\n',
  );
  process.exit(2);
}
const SIZES = { test: 300, international: 370_000 };
const ACTIVE = Number(args.concepts ?? SIZES[args.size ?? 'test'] ?? NaN);
if (!Number.isInteger(ACTIVE) || ACTIVE < 120) throw new Error('--concepts must be an integer >= 120');
const SEED = Number(args.seed ?? 20250101);
const DATE = args.date ?? '20250101';
if (!/^\d{8}$/.test(DATE)) throw new Error('--date must be YYYYMMDD');
const INACTIVE = Math.round(ACTIVE * 0.0676); // ~25,000 at the International size

// --- PRNG (mulberry32) -----------------------------------------------------------------
let st = SEED | 0;
function rnd() {
  st = (st + 0x6d2b79f5) | 0;
  let t = Math.imul(st ^ (st >>> 15), 1 | st);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const ri = (n) => Math.floor(rnd() * n);
const pick = (a) => a[ri(a.length)];

// --- SCTIDs --------------------------------------------------------------------------------
const VD = [
  [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
  [1, 2, 3, 4, 0, 6, 7, 8, 9, 5],
  [2, 3, 4, 0, 1, 7, 8, 9, 5, 6],
  [3, 4, 0, 1, 2, 8, 9, 5, 6, 7],
  [4, 0, 1, 2, 3, 9, 5, 6, 7, 8],
  [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
  [6, 5, 9, 8, 7, 1, 0, 4, 3, 2],
  [7, 6, 5, 9, 8, 2, 1, 0, 4, 3],
  [8, 7, 6, 5, 9, 3, 2, 1, 0, 4],
  [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
];
const VP = [
  [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
  [1, 5, 7, 6, 2, 8, 3, 0, 9, 4],
  [5, 8, 0, 3, 7, 9, 6, 1, 4, 2],
  [8, 9, 1, 6, 0, 4, 3, 5, 2, 7],
  [9, 4, 5, 3, 1, 2, 6, 8, 7, 0],
  [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
  [2, 7, 9, 3, 8, 0, 6, 4, 1, 5],
  [7, 0, 4, 6, 9, 1, 3, 2, 5, 8],
];
const VINV = [0, 4, 3, 2, 1, 5, 6, 7, 8, 9];
function verhoeff(digits) {
  let c = 0;
  for (let i = 0; i < digits.length; i++)
    c = VD[c][VP[(i + 1) % 8][digits.charCodeAt(digits.length - 1 - i) - 48]];
  return VINV[c];
}
function validSctid(id) {
  let c = 0;
  for (let i = 0; i < id.length; i++) c = VD[c][VP[i % 8][id.charCodeAt(id.length - 1 - i) - 48]];
  return c === 0;
}
/** Short-format SCTID: item identifier, partition (00 concept, 01 description, 02 relationship), check digit. */
function sctid(item, partition) {
  const body = `${item}${partition}`;
  return body + verhoeff(body);
}
let descItem = 1_000_000;
let relItem = 1_000_000;
const newDescId = () => sctid(descItem++, '01');
const newRelId = () => sctid(relItem++, '02');
let uuidN = 0;
const seedHex = ((SEED >>> 0) ^ 0x5eed5eed).toString(16).padStart(8, '0').slice(-8);
function uuid() {
  const n = (uuidN++).toString(16).padStart(12, '0');
  return `${seedHex}-${n.slice(0, 4)}-4${n.slice(4, 7)}-8${n.slice(7, 10)}-${n.slice(10)}${seedHex}00`;
}

// --- Well-known concepts ---------------------------------------------------------------------
const ROOT = '138875005';
const ISA = '116680003';
const CORE = '900000000000207008';
const MODEL = '900000000000012004';
const FSN = '900000000000003001';
const SYN = '900000000000013009';
const DEF = '900000000000550004';
const PRIMITIVE = '900000000000074008';
const DEFINED = '900000000000073002';
const CI = '900000000000448009';
const CS = '900000000000017005';
const INFERRED = '900000000000011006';
const EXISTENTIAL = '900000000000451002';
const EN_US = '900000000000509007';
const EN_GB = '900000000000508004';
const PREFERRED = '900000000000548007';
const ACCEPTABLE = '900000000000549004';
const FINDING_SITE = '363698007';
const MORPHOLOGY = '116676008';
const CAUSATIVE = '246075003';
const PROC_SITE = '363704007';
const METHOD = '260686004';
const COURSE = '263502005';

/** Fixed concepts: [id, parent, term, semantic tag, module]. */
const FIXED = [
  [ROOT, null, 'SNOMED CT Concept', 'SNOMED RT+CTV3', CORE],
  ['404684003', ROOT, 'Clinical finding', 'finding', CORE],
  ['64572001', '404684003', 'Disease', 'disorder', CORE],
  ['71388002', ROOT, 'Procedure', 'procedure', CORE],
  ['123037004', ROOT, 'Body structure', 'body structure', CORE],
  ['49755003', '123037004', 'Morphologically abnormal structure', 'morphologic abnormality', CORE],
  ['105590001', ROOT, 'Substance', 'substance', CORE],
  ['373873005', ROOT, 'Pharmaceutical / biologic product', 'product', CORE],
  ['410607006', ROOT, 'Organism', 'organism', CORE],
  ['363787002', ROOT, 'Observable entity', 'observable entity', CORE],
  ['362981000', ROOT, 'Qualifier value', 'qualifier value', CORE],
  ['243796009', ROOT, 'Situation with explicit context', 'situation', CORE],
  ['272379006', ROOT, 'Event', 'event', CORE],
  ['260787004', ROOT, 'Physical object', 'physical object', CORE],
  ['123038009', ROOT, 'Specimen', 'specimen', CORE],
  ['308916002', ROOT, 'Environment or geographical location', 'environment / location', CORE],
  ['48176007', ROOT, 'Social context', 'social concept', CORE],
  ['254291000', ROOT, 'Staging and scales', 'staging scale', CORE],
  ['419891008', ROOT, 'Record artifact', 'record artifact', CORE],
  ['78621006', ROOT, 'Physical force', 'physical force', CORE],
  ['370115009', ROOT, 'Special concept', 'special concept', CORE],
  ['900000000000441003', ROOT, 'SNOMED CT Model Component', 'metadata', MODEL],
  ['410662002', '900000000000441003', 'Concept model attribute', 'attribute', MODEL],
  [ISA, '410662002', 'Is a', 'attribute', MODEL],
  [FINDING_SITE, '410662002', 'Finding site', 'attribute', CORE],
  [MORPHOLOGY, '410662002', 'Associated morphology', 'attribute', CORE],
  [CAUSATIVE, '410662002', 'Causative agent', 'attribute', CORE],
  [PROC_SITE, '410662002', 'Procedure site', 'attribute', CORE],
  [METHOD, '410662002', 'Method', 'attribute', CORE],
  [COURSE, '410662002', 'Clinical course', 'attribute', CORE],
  ['900000000000449001', '900000000000441003', 'Core metadata concept', 'core metadata concept', MODEL],
  ['900000000000443000', '900000000000449001', 'Module', 'core metadata concept', MODEL],
  [CORE, '900000000000443000', 'SNOMED CT core module', 'core metadata concept', CORE],
  [MODEL, '900000000000443000', 'SNOMED CT model component module', 'core metadata concept', MODEL],
  [
    PRIMITIVE,
    '900000000000449001',
    'Not sufficiently defined by necessary conditions definition status',
    'core metadata concept',
    MODEL,
  ],
  [
    DEFINED,
    '900000000000449001',
    'Sufficiently defined by necessary conditions definition status',
    'core metadata concept',
    MODEL,
  ],
  [FSN, '900000000000449001', 'Fully specified name', 'core metadata concept', MODEL],
  [SYN, '900000000000449001', 'Synonym', 'core metadata concept', MODEL],
  [DEF, '900000000000449001', 'Definition', 'core metadata concept', MODEL],
  [CI, '900000000000449001', 'Entire term case insensitive', 'core metadata concept', MODEL],
  [CS, '900000000000449001', 'Entire term case sensitive', 'core metadata concept', MODEL],
  [INFERRED, '900000000000449001', 'Inferred relationship', 'core metadata concept', MODEL],
  [EXISTENTIAL, '900000000000449001', 'Existential restriction modifier', 'core metadata concept', MODEL],
  [
    '900000000000442005',
    '900000000000441003',
    'Foundation metadata concept',
    'foundation metadata concept',
    MODEL,
  ],
  [PREFERRED, '900000000000442005', 'Preferred', 'foundation metadata concept', MODEL],
  [ACCEPTABLE, '900000000000442005', 'Acceptable', 'foundation metadata concept', MODEL],
  ['900000000000455006', '900000000000442005', 'Reference set', 'foundation metadata concept', MODEL],
  [
    '900000000000506000',
    '900000000000455006',
    'Language type reference set',
    'foundation metadata concept',
    MODEL,
  ],
  [
    EN_US,
    '900000000000506000',
    'United States of America English language reference set',
    'foundation metadata concept',
    MODEL,
  ],
  [
    EN_GB,
    '900000000000506000',
    'Great Britain English language reference set',
    'foundation metadata concept',
    MODEL,
  ],
  ['446609009', '900000000000455006', 'Simple type reference set', 'foundation metadata concept', MODEL],
];
for (const [id] of FIXED) if (!validSctid(id)) throw new Error(`bad check digit in fixed SCTID ${id}`);

/** Synthetic content under these roots: [root, share of the active concepts, semantic tag, kind]. */
const SEGMENTS = [
  ['64572001', 0.22, 'disorder', 'disorder'],
  ['404684003', 0.105, 'finding', 'finding'],
  ['71388002', 0.15, 'procedure', 'procedure'],
  ['123037004', 0.07, 'body structure', 'body'],
  ['49755003', 0.03, 'morphologic abnormality', 'morph'],
  ['105590001', 0.07, 'substance', 'substance'],
  ['373873005', 0.06, 'product', 'other'],
  ['410607006', 0.09, 'organism', 'other'],
  ['363787002', 0.035, 'observable entity', 'other'],
  ['362981000', 0.03, 'qualifier value', 'qualifier'],
  ['243796009', 0.015, 'situation', 'other'],
  ['272379006', 0.01, 'event', 'other'],
  ['260787004', 0.02, 'physical object', 'other'],
  ['123038009', 0.005, 'specimen', 'other'],
  ['308916002', 0.005, 'environment / location', 'other'],
  ['48176007', 0.015, 'social concept', 'other'],
  ['254291000', 0.003, 'staging scale', 'other'],
  ['419891008', 0.001, 'record artifact', 'other'],
  ['78621006', 0.001, 'physical force', 'other'],
];

// --- Words ---------------------------------------------------------------------------------------
const SITES = [
  'heart',
  'lung',
  'liver',
  'kidney',
  'esophagus',
  'stomach',
  'colon',
  'skin',
  'brain',
  'spine',
  'knee',
  'hip',
  'shoulder',
  'eye',
  'ear',
  'thyroid',
  'pancreas',
  'bladder',
  'prostate',
  'uterus',
  'ovary',
  'breast',
  'bone',
  'artery',
  'vein',
  'nerve',
  'muscle',
  'tendon',
  'joint',
  'retina',
  'cornea',
  'larynx',
  'trachea',
  'bronchus',
  'spleen',
  'gallbladder',
  'duodenum',
  'rectum',
  'anus',
  'tongue',
  'tooth',
  'gum',
  'jaw',
  'wrist',
  'ankle',
  'foot',
  'hand',
  'elbow',
];
const SIDES = [
  'left',
  'right',
  'upper',
  'lower',
  'anterior',
  'posterior',
  'medial',
  'lateral',
  'proximal',
  'distal',
];
const MORPHS = [
  'inflammation',
  'ulcer',
  'hemorrhage',
  'tumor',
  'cyst',
  'fibrosis',
  'necrosis',
  'stenosis',
  'edema',
  'abscess',
  'fracture',
  'hyperplasia',
  'atrophy',
  'calcification',
  'erosion',
  'dilatation',
  'lesion',
  'polyp',
];
const ADJ = [
  'acute',
  'chronic',
  'recurrent',
  'congenital',
  'primary',
  'secondary',
  'benign',
  'malignant',
  'severe',
  'mild',
  'traumatic',
  'infective',
  'idiopathic',
  'hereditary',
  'allergic',
  'diabetic',
  'neonatal',
  'senile',
];
const EPONYMS = [
  'Sjögren',
  'Ménière',
  'Guillain-Barré',
  'Behçet',
  'Crohn',
  'Addison',
  'Graves',
  'Hashimoto',
  'Parkinson',
  'Raynaud',
  'Kawasaki',
  'Wilson',
  'Cushing',
  'Bell',
  'Hodgkin',
  'Pagét',
];
const PROCS = [
  'excision',
  'biopsy',
  'repair',
  'reconstruction',
  'drainage',
  'incision',
  'transplantation',
  'replacement',
  'fixation',
  'injection',
  'imaging',
  'endoscopy',
  'ligation',
  'resection',
  'suture',
];
const SUBST = [
  'sodium',
  'potassium',
  'amoxicillin',
  'paracetamol',
  'ibuprofen',
  'insulin',
  'heparin',
  'warfarin',
  'morphine',
  'glucose',
  'calcium',
  'iron',
  'lactose',
  'gluten',
  'penicillin',
  'aspirin',
  'caffeine',
  'ethanol',
];
const NOUNS = [
  'index',
  'level',
  'measurement',
  'pattern',
  'status',
  'score',
  'type',
  'device',
  'system',
  'unit',
  'agent',
  'form',
  'class',
  'group',
  'stage',
  'grade',
  'sample',
  'record',
  'context',
  'species',
];
/** US -> GB spellings (a concept whose term has one gets an en-GB preferred term that differs). */
const GB = [
  ['hemorrhage', 'haemorrhage'],
  ['tumor', 'tumour'],
  ['esophagus', 'oesophagus'],
  ['edema', 'oedema'],
  ['anemia', 'anaemia'],
  ['hematoma', 'haematoma'],
  ['pediatric', 'paediatric'],
  ['color', 'colour'],
];
const cap = (s) => s[0].toUpperCase() + s.slice(1);

function termFor(kind, n) {
  switch (kind) {
    case 'disorder': {
      // Eponyms (some non-ASCII: "Sjögren") at fixed places, so every size has them.
      if (n % 50 === 4) return `${EPONYMS[Math.floor(n / 50) % EPONYMS.length]} syndrome ${n}`;
      const r = rnd();
      if (r < 0.04) return `${pick(EPONYMS)} disease ${pick(['type', 'variant'])} ${n}`;
      if (r < 0.5) return `${cap(pick(ADJ))} ${pick(MORPHS)} of ${pick(SIDES)} ${pick(SITES)} ${n}`;
      return `${cap(pick(ADJ))} ${pick(SITES)} ${pick(['disorder', 'disease', 'syndrome', 'anemia', 'hematoma'])} ${n}`;
    }
    case 'finding':
      return `${cap(pick(['abnormal', 'increased', 'decreased', 'absent', 'normal']))} ${pick(SITES)} ${pick(['function', 'sound', 'reflex', 'color', 'size'])} ${n}`;
    case 'procedure':
      return `${cap(pick(PROCS))} of ${pick(SIDES)} ${pick(SITES)} ${n}`;
    case 'body':
      return `${cap(pick(['structure of', 'entire', 'part of', 'surface of']))} ${pick(SIDES)} ${pick(SITES)} ${n}`;
    case 'morph':
      return `${cap(pick(ADJ))} ${pick(MORPHS)} ${n}`;
    case 'substance':
      return `${cap(pick(SUBST))} ${pick(['compound', 'salt', 'derivative', 'hydrochloride', 'sulfate'])} ${n}`;
    case 'qualifier':
      return `${cap(pick(['action', 'technique', 'approach', 'route', 'severity']))} ${pick(PROCS)} ${n}`;
    default:
      return `${cap(pick(ADJ))} ${pick(NOUNS)} ${pick(NOUNS)} ${n}`;
  }
}

// --- Output ----------------------------------------------------------------------------------------
const T = path.join(args.out, 'Snapshot', 'Terminology');
const L = path.join(args.out, 'Snapshot', 'Refset', 'Language');
const C = path.join(args.out, 'Snapshot', 'Refset', 'Content');
for (const d of [T, L, C]) fs.mkdirSync(d, { recursive: true });
class Out {
  constructor(file, header) {
    this.fd = fs.openSync(file, 'w');
    this.buf = '';
    this.lines = 0;
    this.line(header);
    this.lines = 0;
  }
  line(cols) {
    this.buf += cols + '\r\n';
    this.lines++;
    if (this.buf.length > 1 << 20) this.flush();
  }
  flush() {
    fs.writeSync(this.fd, this.buf);
    this.buf = '';
  }
  close() {
    this.flush();
    fs.closeSync(this.fd);
  }
}
const conceptOut = new Out(
  path.join(T, `sct2_Concept_Snapshot_INT_${DATE}.txt`),
  'id\teffectiveTime\tactive\tmoduleId\tdefinitionStatusId',
);
const DESC_HEADER =
  'id\teffectiveTime\tactive\tmoduleId\tconceptId\tlanguageCode\ttypeId\tterm\tcaseSignificanceId';
const descOut = new Out(path.join(T, `sct2_Description_Snapshot-en_INT_${DATE}.txt`), DESC_HEADER);
const defOut = new Out(path.join(T, `sct2_TextDefinition_Snapshot-en_INT_${DATE}.txt`), DESC_HEADER);
const relOut = new Out(
  path.join(T, `sct2_Relationship_Snapshot_INT_${DATE}.txt`),
  'id\teffectiveTime\tactive\tmoduleId\tsourceId\tdestinationId\trelationshipGroup\ttypeId\tcharacteristicTypeId\tmodifierId',
);
const langOut = new Out(
  path.join(L, `der2_cRefset_LanguageSnapshot-en_INT_${DATE}.txt`),
  'id\teffectiveTime\tactive\tmoduleId\trefsetId\treferencedComponentId\tacceptabilityId',
);
const simpleOut = new Out(
  path.join(C, `der2_Refset_SimpleSnapshot_INT_${DATE}.txt`),
  'id\teffectiveTime\tactive\tmoduleId\trefsetId\treferencedComponentId',
);

/** An effective time at or before the release date (the release's own date for ~30%). */
const YEARS = ['2002', '2005', '2010', '2015', '2018', '2020', '2022', '2023', '2024'];
const effTime = () => (rnd() < 0.3 ? DATE : `${pick(YEARS)}${pick(['0131', '0731', '0301', '0901'])}`);

function lang(descId, refset, acceptability, active = 1) {
  langOut.line(`${uuid()}\t${effTime()}\t${active}\t${CORE}\t${refset}\t${descId}\t${acceptability}`);
}
function description(conceptId, term, type, module, active = 1, caseSig = CI) {
  const id = newDescId();
  (type === DEF ? defOut : descOut).line(
    `${id}\t${effTime()}\t${active}\t${module}\t${conceptId}\ten\t${type}\t${term}\t${caseSig}`,
  );
  return id;
}
function relationship(src, dst, group, type, module, active = 1) {
  relOut.line(
    `${newRelId()}\t${effTime()}\t${active}\t${module}\t${src}\t${dst}\t${group}\t${type}\t${INFERRED}\t${EXISTENTIAL}`,
  );
}

const stats = {
  concepts: 0,
  active: 0,
  inactive: 0,
  descriptions: 0,
  activeIsA: 0,
  multiParent: 0,
  findingSubtree: 0,
};
const expected = { date: DATE, seed: SEED, samples: {}, refsets: {}, counts: stats };

/** Writes one active concept with its descriptions, language refset rows and is-a relationships. */
function writeConcept(id, parents, term, tag, module, defined) {
  conceptOut.line(`${id}\t${effTime()}\t1\t${module}\t${defined ? DEFINED : PRIMITIVE}`);
  stats.concepts++;
  stats.active++;
  const fsnId = description(id, `${term} (${tag})`, FSN, module);
  lang(fsnId, EN_US, PREFERRED);
  lang(fsnId, EN_GB, PREFERRED);
  let gbTerm;
  for (const [us, gb] of GB) if (term.includes(us)) gbTerm = term.replace(us, gb);
  const prefId = description(id, term, SYN, module);
  lang(prefId, EN_US, PREFERRED);
  if (gbTerm) {
    const gbId = description(id, gbTerm, SYN, module);
    lang(gbId, EN_GB, PREFERRED);
  } else lang(prefId, EN_GB, PREFERRED);
  const r = rnd();
  const synonyms = r < 0.1 ? 0 : r < 0.3 ? 1 : r < 0.6 ? 2 : 3;
  const synTerms = [];
  for (let i = 0; i < synonyms; i++) {
    const s =
      i === 0 ? `${term.replace(/ \d+$/, '')} NOS ${id}` : `${cap(pick(ADJ))} ${term.toLowerCase()} syn ${i}`;
    const sid = description(id, s, SYN, module);
    lang(sid, EN_US, ACCEPTABLE);
    lang(sid, EN_GB, ACCEPTABLE);
    synTerms.push(s);
  }
  if (rnd() < 0.06) {
    // A retired synonym: the description and its language refset rows inactive.
    const sid = description(id, `${term} (retired term)`, SYN, module, 0);
    lang(sid, EN_US, ACCEPTABLE, 0);
  }
  for (const p of parents) relationship(id, p, 0, ISA, module);
  stats.activeIsA += parents.length;
  if (parents.length > 1) stats.multiParent++;
  return { fsn: `${term} (${tag})`, display: term, gbDisplay: gbTerm, synonyms: synTerms };
}

// Fixed concepts.
for (const [id, parent, term, tag, module] of FIXED)
  writeConcept(id, parent ? [parent] : [], term, tag, module, false);
stats.findingSubtree = 2; // 404684003 and 64572001

// Synthetic concepts: ordinals per segment, parents among earlier concepts of the same segment (or its root).
const remaining = ACTIVE - FIXED.length;
const segIds = [];
let assigned = 0;
for (let s = 0; s < SEGMENTS.length; s++) {
  const n = s === SEGMENTS.length - 1 ? remaining - assigned : Math.round(remaining * SEGMENTS[s][1]);
  assigned += n;
  segIds.push(new Array(n));
}
let conceptItem = 1_000_000;
const byKind = {};
for (let s = 0; s < SEGMENTS.length; s++) (byKind[SEGMENTS[s][3]] ??= []).push(s);
const randomOf = (kind) => {
  const s = pick(byKind[kind]);
  const ids = segIds[s];
  return ids[ri(ids.length)] ?? SEGMENTS[s][0];
};
const REFSETS = [];
for (let i = 0; i < 3; i++) {
  const id = sctid(conceptItem++, '00');
  REFSETS.push(id);
  expected.refsets[id] = 0;
  writeConcept(
    id,
    ['446609009'],
    `Synthetic simple reference set ${i + 1}`,
    'foundation metadata concept',
    MODEL,
    false,
  );
}
// Ids first (attributes name concepts of other segments, which may come later in the file).
for (let s = 0; s < SEGMENTS.length; s++)
  for (let i = 0; i < segIds[s].length; i++) segIds[s][i] = sctid(conceptItem++, '00');
let defs = 0;
for (let s = 0; s < SEGMENTS.length; s++) {
  const [root, , tag, kind] = SEGMENTS[s];
  const ids = segIds[s];
  const finding = root === '404684003' || root === '64572001';
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i];
    // Parent: an earlier concept of the segment, biased to recent ones (deeper trees), or the root.
    const candidate = () => (i === 0 ? root : rnd() < 0.05 ? root : ids[i - 1 - Math.floor(rnd() ** 3 * i)]);
    const parents = [candidate()];
    if (i > 10 && rnd() < 0.18) {
      const extra = 1 + ri(5);
      for (let k = 0; k < extra; k++) {
        const p = candidate();
        if (!parents.includes(p)) parents.push(p);
      }
    }
    const term = termFor(kind, i + 1);
    const defined = parents.length > 1 && rnd() < 0.5;
    const module = CORE;
    const w = writeConcept(id, parents, term, tag, module, defined);
    if (finding) stats.findingSubtree++;
    // Attribute relationships.
    const attrs = [];
    if (kind === 'disorder') {
      const groups = rnd() < 0.2 ? 2 : 1;
      for (let g = 1; g <= groups; g++) {
        attrs.push([FINDING_SITE, randomOf('body'), g]);
        attrs.push([MORPHOLOGY, randomOf('morph'), g]);
      }
      if (rnd() < 0.15) attrs.push([CAUSATIVE, randomOf('substance'), 0]);
      if (rnd() < 0.1) attrs.push([COURSE, randomOf('qualifier'), 0]);
    } else if (kind === 'finding' && rnd() < 0.6) attrs.push([FINDING_SITE, randomOf('body'), 0]);
    else if (kind === 'procedure') {
      attrs.push([PROC_SITE, randomOf('body'), 1]);
      attrs.push([METHOD, randomOf('qualifier'), 1]);
    }
    for (const [type, dst, g] of attrs) relationship(id, dst, g, type, module);
    // A historic is-a, now inactive.
    if (rnd() < 0.05) relationship(id, root, 0, ISA, module, 0);
    if (rnd() < 0.03) {
      defs++;
      description(id, `A synthetic ${tag} defined for testing: ${w.display.toLowerCase()}.`, DEF, module);
    }
    if (i % 97 === 5) {
      simpleOut.line(`${uuid()}\t${effTime()}\t1\t${CORE}\t${REFSETS[i % 3]}\t${id}`);
      expected.refsets[REFSETS[i % 3]]++;
    }
    if (i % 389 === 7) simpleOut.line(`${uuid()}\t${effTime()}\t0\t${CORE}\t${REFSETS[0]}\t${id}`);
    // Samples for tests.
    const samples = expected.samples;
    if (kind === 'disorder') {
      if (!samples.multiParent && parents.length >= 2 && parents.every((p) => p !== root))
        samples.multiParent = { code: id, parents, display: w.display };
      if (!samples.enGb && w.gbDisplay)
        samples.enGb = { code: id, display: w.display, gbDisplay: w.gbDisplay };
      if (!samples.grouped && attrs.filter((a) => a[2] === 2).length >= 2)
        samples.grouped = {
          code: id,
          attributes: attrs.map(([type, value, group]) => ({ type, value, group })),
        };
      if (!samples.synonyms && w.synonyms.length >= 2)
        samples.synonyms = { code: id, display: w.display, fsn: w.fsn, synonyms: w.synonyms };
      if (!samples.nonAscii && /[^ -~]/.test(w.display)) samples.nonAscii = { code: id, display: w.display };
      if (!samples.refset && i % 97 === 5) samples.refset = { code: id, refset: REFSETS[i % 3] };
    }
    if (!samples.definition && defs === 1) samples.definition = { code: id, display: w.display };
  }
}

// Inactive concepts: descriptions active (as in real releases), relationships inactive, no active children.
for (let i = 0; i < INACTIVE; i++) {
  const id = sctid(conceptItem++, '00');
  const s = ri(SEGMENTS.length);
  const [root, , tag, kind] = SEGMENTS[s];
  conceptOut.line(`${id}\t${effTime()}\t0\t${CORE}\t${PRIMITIVE}`);
  stats.concepts++;
  stats.inactive++;
  const term = `${termFor(kind, i + 1)} (obsolete)`;
  const fsnId = description(id, `${term} (${tag})`, FSN, CORE);
  lang(fsnId, EN_US, PREFERRED);
  lang(fsnId, EN_GB, PREFERRED);
  const pid = description(id, term, SYN, CORE);
  lang(pid, EN_US, PREFERRED);
  lang(pid, EN_GB, PREFERRED);
  const ids = segIds[s];
  relationship(id, ids.length ? ids[ri(ids.length)] : root, 0, ISA, CORE, 0);
  if (!expected.samples.inactive) expected.samples.inactive = { code: id, display: term };
}

for (const o of [conceptOut, descOut, defOut, relOut, langOut, simpleOut]) o.close();
stats.descriptions = descOut.lines;
stats.textDefinitions = defOut.lines;
stats.relationships = relOut.lines;
stats.languageMembers = langOut.lines;
stats.simpleMembers = simpleOut.lines;
fs.writeFileSync(path.join(args.out, 'expected.json'), JSON.stringify(expected, null, 2) + '\n');
process.stdout.write(`${JSON.stringify(stats)}\n`);
