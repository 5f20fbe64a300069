#!/usr/bin/env node
// Writes a made-up LOINC release in the layout of LOINC 2.7x (no licensed content: every term is generated):
//   LoincTable/Loinc.csv, AccessoryFiles/AnswerFile/{AnswerList,LoincAnswerListLink}.csv,
//   AccessoryFiles/LinguisticVariants/{LinguisticVariants.csv, deDE15LinguisticVariant.csv}
// RFC 4180 CSV with every field quoted, CRLF line ends, as the release. Deterministic for a seed.
// Usage: node scripts/gen-loinc.mjs --out DIR [--terms 300] [--version 2.77] [--seed 1]
import fs from 'node:fs';
import path from 'node:path';

const args = Object.fromEntries(
  process.argv
    .slice(2)
    .reduce((acc, a, i, all) => (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc), []),
);
const out = args.out ?? usage();
const terms = Number(args.terms ?? 300);
const version = args.version ?? '2.77';
let seed = Number(args.seed ?? 1) >>> 0 || 1;

function usage() {
  process.stderr.write(
    'Usage: node scripts/gen-loinc.mjs --out DIR [--terms N] [--version 2.77] [--seed N]\n',
  );
  process.exit(2);
}
/** xorshift32: the same release for the same seed. */
function rand() {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) / 4294967296;
}
const pick = (list) => list[Math.floor(rand() * list.length)];

/** LOINC's mod-10 check digit (Luhn) of the number part. */
export function loincCheckDigit(num) {
  let sum = 0;
  const digits = String(num);
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return (10 - (sum % 10)) % 10;
}
const loinc = (prefix, n) => `${prefix}${n}-${loincCheckDigit(n)}`;

const HEADER = [
  'LOINC_NUM',
  'COMPONENT',
  'PROPERTY',
  'TIME_ASPCT',
  'SYSTEM',
  'SCALE_TYP',
  'METHOD_TYP',
  'CLASS',
  'VersionLastChanged',
  'CHNG_TYPE',
  'DefinitionDescription',
  'STATUS',
  'CONSUMER_NAME',
  'CLASSTYPE',
  'FORMULA',
  'EXMPL_ANSWERS',
  'SURVEY_QUEST_TEXT',
  'SURVEY_QUEST_SRC',
  'UNITSREQUIRED',
  'RELATEDNAMES2',
  'SHORTNAME',
  'ORDER_OBS',
  'HL7_FIELD_SUBFIELD_ID',
  'EXTERNAL_COPYRIGHT_NOTICE',
  'EXAMPLE_UNITS',
  'LONG_COMMON_NAME',
  'EXAMPLE_UCUM_UNITS',
  'STATUS_REASON',
  'STATUS_TEXT',
  'CHANGE_REASON_PUBLIC',
  'COMMON_TEST_RANK',
  'COMMON_ORDER_RANK',
  'HL7_ATTACHMENT_STRUCTURE',
  'EXTERNAL_COPYRIGHT_LINK',
  'PanelType',
  'AskAtOrderEntry',
  'AssociatedObservations',
  'VersionFirstReleased',
  'ValidHL7AttachmentRequest',
  'DisplayName',
];
const COMPONENTS = [
  'Glucose',
  'Hemoglobin',
  'Sodium',
  'Potassium',
  'Creatinine',
  'Cholesterol',
  'Bilirubin',
  'Albumin',
  'Ferritin',
  'Thyrotropin',
  'Troponin I.cardiac',
  'Leukocytes',
  'Platelets',
  'Calcium',
  'Urea nitrogen',
];
const PROPS = [
  ['MCnc', 'Mass concentration', 'mg/dL'],
  ['SCnc', 'Moles/volume', 'mmol/L'],
  ['NCnc', 'Number concentration', '10*3/uL'],
  ['PrThr', 'Presence', ''],
];
const SYSTEMS = [
  ['Ser/Plas', 'Serum or Plasma', 'SerPl'],
  ['Bld', 'Blood', 'Bld'],
  ['Urine', 'Urine', 'Ur'],
  ['CSF', 'Cerebral spinal fluid', 'CSF'],
];
const METHODS = ['', '', 'Test strip', 'Automated count', 'Immunoassay'];
const CLASSES = ['CHEM', 'HEM/BC', 'SERO', 'UA', 'DRUG/TOX'];
const STATUS = [
  'ACTIVE',
  'ACTIVE',
  'ACTIVE',
  'ACTIVE',
  'ACTIVE',
  'ACTIVE',
  'TRIAL',
  'DISCOURAGED',
  'DEPRECATED',
];
const VERSIONS = ['2.44', '2.61', '2.73', '2.76', version];
const GERMAN = { Glucose: 'Glukose', Hemoglobin: 'Hämoglobin', Sodium: 'Natrium', Potassium: 'Kalium' };

const csv = (fields) => fields.map((f) => `"${String(f).replace(/"/g, '""')}"`).join(',') + '\r\n';
function writer(rel) {
  const file = path.join(out, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const fd = fs.openSync(file, 'w');
  let buf = '';
  return {
    row(fields) {
      buf += csv(fields);
      if (buf.length > 1 << 20) this.flush();
    },
    flush() {
      fs.writeSync(fd, buf);
      buf = '';
    },
    close() {
      this.flush();
      fs.closeSync(fd);
    },
  };
}

const table = writer('LoincTable/Loinc.csv');
const german = writer('AccessoryFiles/LinguisticVariants/deDE15LinguisticVariant.csv');
table.row(HEADER);
german.row([
  'LOINC_NUM',
  'COMPONENT',
  'PROPERTY',
  'TIME_ASPCT',
  'SYSTEM',
  'SCALE_TYP',
  'METHOD_TYP',
  'CLASS',
  'SHORTNAME',
  'LONG_COMMON_NAME',
  'RELATEDNAMES2',
  'LinguisticVariantDisplayName',
]);
const ordinal = [];
for (let i = 0; i < terms; i++) {
  const num = 1000 + i * 7;
  const code = loinc('', num);
  const component =
    COMPONENTS[i % COMPONENTS.length] + (i >= COMPONENTS.length * 4 ? ` variant ${Math.floor(i / 60)}` : '');
  const [prop, propName, unit] = PROPS[Math.floor(i / COMPONENTS.length) % PROPS.length];
  const [system, systemName, systemShort] = pick(SYSTEMS);
  const method = pick(METHODS);
  const scale = prop === 'PrThr' ? 'Ord' : 'Qn';
  const long = `${component} [${propName}] in ${systemName}${method ? ` by ${method}` : ''}`;
  const short = `${component.split(' ')[0]} ${systemShort} ${scale === 'Ord' ? 'Ql' : `${prop}`}`;
  const status = i < 5 ? 'ACTIVE' : pick(STATUS);
  const row = Object.fromEntries(HEADER.map((h) => [h, '']));
  Object.assign(row, {
    LOINC_NUM: code,
    COMPONENT: component,
    PROPERTY: prop,
    TIME_ASPCT: 'Pt',
    SYSTEM: system,
    SCALE_TYP: scale,
    METHOD_TYP: method,
    CLASS: pick(CLASSES),
    VersionLastChanged: i === 0 ? version : pick(VERSIONS),
    CHNG_TYPE: 'MIN',
    STATUS: status,
    CLASSTYPE: '1',
    SHORTNAME: short,
    ORDER_OBS: pick(['Both', 'Observation']),
    LONG_COMMON_NAME: long,
    EXAMPLE_UCUM_UNITS: unit,
    VersionFirstReleased: '2.44',
    DisplayName: `${component} (${systemShort})`,
    // One definition with a quote and a line break inside its quoted field, as real ones have.
    DefinitionDescription: i === 2 ? 'A "quoted" definition\nover two lines' : '',
    STATUS_REASON: status === 'DEPRECATED' ? 'DUPLICATE' : '',
  });
  if (scale === 'Ord') ordinal.push(code);
  table.row(HEADER.map((h) => row[h]));
  if (GERMAN[component] && i % 2 === 0)
    german.row([
      code,
      GERMAN[component],
      prop,
      'Pt',
      system,
      scale,
      method,
      row.CLASS,
      '',
      `${GERMAN[component]} [${propName}] in ${systemName}`,
      '',
      '',
    ]);
}
table.close();
german.close();

const variants = writer('AccessoryFiles/LinguisticVariants/LinguisticVariants.csv');
variants.row(['ID', 'ISO_LANGUAGE', 'ISO_COUNTRY', 'LANGUAGE_NAME', 'PRODUCER']);
variants.row(['15', 'de', 'DE', 'German (GERMANY)', 'Made-up producer']);
variants.row(['8', 'fr', 'FR', 'French (FRANCE)', 'Not shipped in this release']);
variants.close();

const ANSWERS = [
  ['Positive', 'Negative', 'Indeterminate'],
  ['Never', 'Rarely', 'Sometimes', 'Often', 'Always'],
  ['Yes', 'No'],
];
const lists = writer('AccessoryFiles/AnswerFile/AnswerList.csv');
lists.row([
  'AnswerListId',
  'AnswerListName',
  'AnswerListOID',
  'ExtDefinedYN',
  'ExtDefinedAnswerListCodeSystem',
  'ExtDefinedAnswerListLink',
  'AnswerStringId',
  'LocalAnswerCode',
  'LocalAnswerCodeSystem',
  'SequenceNumber',
  'DisplayText',
  'ExtCodeId',
  'ExtCodeDisplayName',
  'ExtCodeSystem',
  'ExtCodeSystemVersion',
  'ExtCodeSystemCopyrightNotice',
  'SubsequentTextPrompt',
  'Description',
  'Score',
]);
const answerCode = new Map();
let nextAnswer = 10000;
const listIds = [];
ANSWERS.forEach((answers, li) => {
  const id = loinc('LL', 100 + li);
  listIds.push(id);
  // Written last answer first: the list's order is its SequenceNumber, not the file's.
  [...answers].reverse().forEach((text, ri) => {
    if (!answerCode.has(text)) answerCode.set(text, loinc('LA', nextAnswer++));
    const seq = answers.length - ri;
    lists.row([
      id,
      `${answers.join('|')}`,
      `1.3.6.1.4.1.12009.10.1.${100 + li}`,
      'N',
      '',
      '',
      answerCode.get(text),
      String(seq),
      '',
      String(seq),
      text,
      '',
      '',
      '',
      '',
      '',
      '',
      '',
      '',
    ]);
  });
});
// A list defined outside LOINC: one row, no answers.
const external = loinc('LL', 199);
lists.row([
  external,
  'Externally defined list',
  '1.3.6.1.4.1.12009.10.1.199',
  'Y',
  '2.16.840.1.113883.6.96',
  'http://snomed.info/sct',
  '',
  '',
  '',
  '',
  '',
  '',
  '',
  '',
  '',
  '',
  '',
  '',
  '',
]);
lists.close();
const links = writer('AccessoryFiles/AnswerFile/LoincAnswerListLink.csv');
links.row([
  'LoincNumber',
  'LongCommonName',
  'AnswerListId',
  'AnswerListName',
  'AnswerListLinkType',
  'ApplicableContext',
]);
ordinal.forEach((code, i) => links.row([code, '', listIds[i % listIds.length], '', 'NORMATIVE', '']));
links.close();
process.stdout.write(
  `wrote ${terms} terms, ${listIds.length + 1} answer lists, ${answerCode.size} answers to ${out}\n`,
);
